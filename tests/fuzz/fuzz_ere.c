/* fuzz_ere.c - libFuzzer harness for the regular expression matcher,
 * differential against the C library's regcomp/regexec (glibc here, in
 * the C locale, where both work on bytes).
 *
 * The input is the pattern, a NUL, then the text (NULs in the text end
 * it, as for regexec). A pattern ours refuses must say why. When both
 * take the pattern, both must agree whether it matches; a pattern only
 * one side takes is not compared (POSIX leaves such patterns undefined,
 * and ours refuses the GNU extensions on purpose). Nor is one with many
 * repetition operators: glibc's matcher takes seconds on a+++++++++, which
 * is glibc's time, not a finding (ours is linear). Nor one whose counted
 * repetitions multiply past a thousand copies: glibc builds every copy of
 * (){164}{164} and runs out of memory. Nor one that stacks repetitions
 * (a+{3}, (x)+{164}: POSIX leaves them undefined, and glibc's matcher took
 * over 10 s on the second). Nor one with a newline in the pattern or
 * the text: glibc lets $ match before a newline and ^ after one without
 * REG_NEWLINE ($\n finds "0\n", .+^ finds "\nz"), where POSIX, musl and
 * ours match them at the ends only. Nor one with ^ or $ anywhere but
 * first and last: glibc found x(y|(z|/)|^v)+u in "xyzvzvu", where musl and
 * ours do not (test_ere checks such anchors against what POSIX says).
 * Nor one with an empty alternative or more than 4: glibc took over 10 s
 * on (3|x|||||||){7,}$ and on a group of 50 empty ones repeated {4,},
 * ours 0 ms.
 */
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/ere.h"

#define CHECK(c) do {							\
	if (!(c))							\
		abort();						\
} while (0)

static struct arena a;

static int
repeats(const char *p)
{
	int n = 0;

	for (; *p != '\0'; p++)
		n += strchr("*+?{", *p) != NULL;
	return n;
}

/* How many |, or 99 when one has nothing on a side. */
static int
alternatives(const char *p)
{
	int n = 0;

	if (*p == '|' || strstr(p, "||") || strstr(p, "(|") || strstr(p, "|)"))
		return 99;
	for (; *p != '\0'; p++)
		n += *p == '|';
	return n > 0 && p[-1] == '|' ? 99 : n;
}

/* Two repetition operators in a row, outside brackets or not (a guess
 * that errs towards not comparing). */
static int
stacked(const char *p)
{
	for (; *p != '\0' && p[1] != '\0'; p++)
		if (strchr("*+?}", *p) != NULL && strchr("*+?{", p[1]) != NULL)
			return 1;
	return 0;
}

/* ^ or $ inside the pattern, not as its first or last byte. */
static int
inner_anchor(const char *p)
{
	size_t n = strlen(p);

	return n > 2 && (memchr(p + 1, '^', n - 1) != NULL ||
	    memchr(p, '$', n - 1) != NULL);
}

/* The product of the counts in { } (the larger of m and n), capped. */
static unsigned long
copies(const char *p)
{
	unsigned long n = 1, v, max;

	while ((p = strchr(p, '{')) != NULL) {
		for (v = max = 0, p++; *p != '\0' && *p != '}'; p++) {
			if (*p >= '0' && *p <= '9')
				v = v < 1000 ? v * 10 + (unsigned long)(*p - '0') : v;
			else
				v = 0;
			max = v > max ? v : max;
		}
		if (max > 1)
			n = n * max > 1000000 ? 1000000 : n * max;
	}
	return n;
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	const char *why, *nul;
	char *pat, *text;
	struct ere re;
	regex_t lre;
	size_t plen;
	int ours, theirs, e;

	if ((nul = memchr(data, '\0', size)) == NULL)
		return 0;
	plen = (size_t)(nul - (const char *)data);
	if (plen > 200)		/* a{255} in glibc is slow to build, not wrong */
		return -1;
	if ((pat = malloc(plen + 1)) == NULL ||
	    (text = malloc(size - plen)) == NULL)
		abort();
	memcpy(pat, data, plen + 1);
	memcpy(text, nul + 1, size - plen - 1);
	text[size - plen - 1] = '\0';
	arena_init(&a, "fuzz");
	e = ere_comp(&re, &a, pat, &why);
	CHECK(e == 0 || (e == -E_PARSE && why != NULL && why[0] != '\0'));
	if (e == 0) {
		ours = ere_match(&re, &a, text, strlen(text));
		CHECK(ours == 0 || ours == 1);
		if (repeats(pat) <= 6 && copies(pat) <= 1000 && !stacked(pat) &&
		    !inner_anchor(pat) && alternatives(pat) <= 4 &&
		    strchr(pat, '\n') == NULL && strchr(text, '\n') == NULL &&
		    regcomp(&lre, pat, REG_EXTENDED | REG_NOSUB) == 0) {
			theirs = regexec(&lre, text, 0, NULL, 0) == 0;
			regfree(&lre);
			CHECK(ours == theirs);
		}
	}
	arena_reset(&a);
	free(pat);
	free(text);
	return 0;
}
