/* test_ere.c - the POSIX extended regular expression matcher: what it
 * takes, what it refuses and why, and that no pattern makes it slow. */
#include <string.h>

#include "base/ere.h"
#include "unit.h"

/* 1 match, 0 none, -1 the pattern was refused */
static int
m(const char *pat, const char *text)
{
	struct ere re;
	const char *why;

	if (ere_comp(&re, &t_arena, pat, &why) != 0)
		return -1;
	return ere_match(&re, &t_arena, text, strlen(text));
}

static void
literals(void)
{
	T(m("abc", "xxabcxx") == 1);
	T(m("abc", "ab") == 0);
	T(m("", "") == 1);
	T(m("", "anything") == 1);
	T(m("a.c", "a\nc") == 1);		/* . takes a newline too */
	T(m("a\\.c", "abc") == 0);
	T(m("a\\.c", "a.c") == 1);
	T(m("\\(\\)\\*\\+\\?\\{\\}\\|\\^\\$\\[\\\\", "()*+?{}|^$[\\") == 1);
	T(m("\xc3\xa9", "caf\xc3\xa9") == 1);	/* bytes, as in the C locale */
}

static void
anchors(void)
{
	T(m("^abc$", "abc") == 1);
	T(m("^abc$", "abc\n") == 0);
	T(m("^b", "ab") == 0);
	T(m("a$", "ba") == 1);
	T(m("^\\{.*\\}$", "{\"ok\": true}") == 1);
	T(m("^\\{.*\\}$", "x{}") == 0);
	T(m("a^b", "a^b") == 0);		/* ^ inside: never at the start */
	T(m("(^a|b)c", "xbc") == 1);
	T(m("(^a|b)c", "xac") == 0);
	T(m("^$", "") == 1);
	/* an alternative that is only $ matches any text, at its end */
	T(m("$^|$x$|$|^", "ab") == 1);
	T(m("$^|b^", "ab") == 0);
	T(m("$\n", "0\n") == 0);		/* $ is the end, not a newline */
	T(m(".+^", "\nz") == 0);		/* ^ is the start, not after one */
	T(m("x(y|(z|/)|^v)+u", "xyzvzvu") == 0);	/* ^v only at the start */
	T(m("(){164}{164}x", "x") == 1);	/* 26,896 empty copies */
}

static void
repeats(void)
{
	T(m("ab*c", "ac") == 1);
	T(m("ab*c", "abbbc") == 1);
	T(m("ab+c", "ac") == 0);
	T(m("ab+c", "abbc") == 1);
	T(m("^ab?c$", "abbc") == 0);
	T(m("^ab?c$", "ac") == 1);
	T(m("^a{3}$", "aaa") == 1);
	T(m("^a{3}$", "aa") == 0);
	T(m("^a{3}$", "aaaa") == 0);
	T(m("^a{2,}$", "a") == 0);
	T(m("^a{2,}$", "aaaaa") == 1);
	T(m("^a{0,2}$", "") == 1);
	T(m("^a{0,2}$", "aa") == 1);
	T(m("^a{0,2}$", "aaa") == 0);
	T(m("^a{1,3}b$", "aaab") == 1);
	T(m("^x(ab){2}y$", "xababy") == 1);
	T(m("^x(ab){2}y$", "xaby") == 0);
	T(m("^x(a|bc){2,3}y$", "xabcay") == 1);
	T(m("^x(a|bc){2,3}y$", "xay") == 0);
	T(m("^a{0}b$", "b") == 1);
	T(m("^(a*)*$", "aaa") == 1);		/* a loop that can match empty */
	T(m("^(a*)+b$", "b") == 1);
	T(m("^(a|)+$", "aa") == 1);
	T(m("^a**$", "aa") == 1);
	T(m("^(ab*)*?c$", "ababbc") == 1);
}

static void
alternatives(void)
{
	T(m("cat|dog", "hotdog") == 1);
	T(m("^(cat|dog)s?$", "cats") == 1);
	T(m("^(cat|dog)s?$", "cow") == 0);
	T(m("^(a|b|c|d)+$", "abcdcba") == 1);
	T(m("^(a|b|c|d)+$", "abcde") == 0);
	T(m("^(|a)b$", "b") == 1);
	T(m("x(y|(z|w)v)+u", "xyzvwvu") == 1);
}

static void
brackets(void)
{
	T(m("^[abc]+$", "cab") == 1);
	T(m("^[abc]+$", "cad") == 0);
	T(m("^[^abc]+$", "xyz\n") == 1);	/* [^ ] takes a newline */
	T(m("^[a-f0-9]+$", "deadbeef09") == 1);
	T(m("^[a-f]$", "g") == 0);
	T(m("^[]a]+$", "]a]") == 1);		/* ] first is a member */
	T(m("^[^]a]$", "b") == 1);
	T(m("^[a-]+$", "-a") == 1);
	T(m("^[\\]$", "\\") == 1);		/* no escapes inside [ ] */
	T(m("^[[:digit:]]+$", "2026") == 1);
	T(m("^[[:alpha:]_][[:alnum:]_]*$", "_x9") == 1);
	T(m("^[[:alpha:]]$", "9") == 0);
	T(m("^[[:space:]]+$", " \t\r\n\v\f") == 1);
	T(m("^[[:upper:][:digit:]]+$", "AB12") == 1);
	T(m("^[[:upper:][:digit:]]+$", "Ab12") == 0);
	T(m("^[[:xdigit:]]+$", "09afAF") == 1);
	T(m("^[[:xdigit:]]+$", "g") == 0);
	T(m("^[[:punct:]]+$", "!-/@~") == 1);
	T(m("^[[:punct:]]$", "a") == 0);
	T(m("^[^[:cntrl:]]+$", "ok") == 1);
	T(m("^[^[:cntrl:]]+$", "o\x1bk") == 0);
}

static void
refused(void)
{
	static const char *const bad[] = {
		"a(b", "a)b", "[abc", "[z-a]", "*a", "a|*b", "(+a)", "a{2",
		"a{x}", "a{3,2}", "a{256}", "^*", "a$+", "\\d", "\\w", "a\\",
		"[[:nosuch:]]", "[[.a.]]", "[[=a=]]", "[a-[:digit:]]",
	};
	struct ere re;
	const char *why;
	size_t i;

	for (i = 0; i < ARRAY_LEN(bad); i++) {
		why = NULL;
		if (ere_comp(&re, &t_arena, bad[i], &why) != -E_PARSE ||
		    why == NULL || why[0] == '\0')
			t_fail(__FILE__, __LINE__, "'%s' was taken", bad[i]);
	}
	T(ere_comp(&re, &t_arena, "\\d", &why) == -E_PARSE &&
	    strstr(why, "[0-9]") != NULL);
}

/* A pattern that makes a backtracking matcher take 2^n steps runs in
 * time linear in the text here: a{0,30}a{30} against 30 a's and a b. */
static void
no_blowup(void)
{
	char text[64], pat[64];

	memset(text, 'a', 30);
	strcpy(text + 30, "b");
	strcpy(pat, "^(a?){30}a{30}$");
	T(m(pat, text) == 0);
	text[30] = '\0';
	T(m(pat, text) == 1);
	T(m("^((a|a)*)*b$", text) == 0);
	/* a program over ERE_MAX_OPS instructions is refused, not built */
	T(m("(((a{255}){255}){255})", "a") == -1);
}

static void
nomem(void)
{
	struct arena a;
	struct ere re;
	const char *why;

	arena_init(&a, "t");
	mem_set_limit(mem_used() + 4096);	/* less than a program takes */
	T(ere_comp(&re, &a, "abc", &why) == -E_NOMEM);
	mem_set_limit(0);
	arena_reset(&a);
}

static const struct unit_case cases[] = {
	{ "literals", literals },
	{ "anchors", anchors },
	{ "repeats", repeats },
	{ "alternatives", alternatives },
	{ "brackets", brackets },
	{ "refused", refused },
	{ "no_blowup", no_blowup },
	{ "nomem", nomem },
};

const struct unit_suite suite_ere = { "ere", cases, ARRAY_LEN(cases) };
