/* fuzz_ere.c - libFuzzer harness for the regular expression matcher,
 * differential against musl's regcomp/regexec: the C library the binary
 * links, built from its sources beside glibc (tools/fuzz.mk renames
 * them musl_regcomp ...), in musl's C locale, where both work on bytes.
 *
 * The input is the pattern, a NUL, then the text (NULs in the text end
 * it, as for regexec). A pattern ours refuses must say why. When both
 * take the pattern, both must agree whether it matches; a pattern only
 * one side takes is not compared (POSIX leaves such patterns undefined,
 * and ours refuses the GNU extensions on purpose). What is left out is
 * left out for time and memory, not for meaning: a pattern with many
 * repetition operators (a+++++++++ takes a backtracking matcher seconds;
 * ours is linear); one whose counted repetitions multiply past a thousand
 * copies (regcomp builds every copy of (){164}{164}); one that stacks
 * repetitions (a+{3}, (x)+{164}: POSIX leaves them undefined, and they
 * multiply the work); one with an empty alternative or more than 4
 * ((3|x|||||||){7,}$ took glibc over 10 s). One exclusion is musl's: ^
 * or $ inside a group or beside alternatives (grouped_anchor). Newlines,
 * and ^ or $ elsewhere inside a pattern, are compared: glibc differed
 * from POSIX there, musl does not.
 */
#include <regex.h>
#include <stdlib.h>
#include <wchar.h>
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

/* ^ or $ inside a group, or in a pattern with alternatives (a guess
 * that errs towards not comparing: [^x] counts too). musl's matcher loses
 * the ways through them: (^)*$ does not match "l" there, nor x(^|$) "x",
 * nor $^|$x$|$|^ a text that is not empty, where POSIX, glibc and ours
 * match all three. */
static int
grouped_anchor(const char *p)
{
	unsigned depth = 0, bar = 0, anchor = 0;

	for (; *p != '\0'; p++) {
		if (*p == '\\' && p[1] != '\0')
			p++;
		else if (*p == '(')
			depth++;
		else if (*p == ')' && depth > 0)
			depth--;
		else if (*p == '|')
			bar = 1;
		else if ((*p == '^' || *p == '$') && depth > 0)
			return 1;
		else if (*p == '^' || *p == '$')
			anchor = 1;
	}
	return bar && anchor;
}

/* mbtowc for musl's regex, as musl's C locale has it: a byte is a
 * character, and one past 0x7f the code unit 0xdf80 + its low 7 bits
 * (glibc's C locale refuses those). */
int	musl_mbtowc(wchar_t *wc, const char *s, size_t n);

int
musl_mbtowc(wchar_t *wc, const char *s, size_t n)
{
	if (s == NULL)
		return 0;
	if (n == 0)
		return -1;
	if (wc != NULL)
		*wc = 0xdfff & (wchar_t)(signed char)*s;
	return *s != '\0';
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
	if (plen > 200)		/* a{255} is slow to build, not wrong */
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
		    alternatives(pat) <= 4 && !grouped_anchor(pat) &&
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
