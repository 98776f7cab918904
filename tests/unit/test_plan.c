/* test_plan.c - LightSOPLang plans: parsing, checks, ready steps, canonical
 * text. */
#include <stdio.h>
#include <string.h>

#include "fmt/plan.h"
#include "base/str.h"
#include "unit.h"

static int
known(void *ctx, const char *cmd, size_t n)
{
	static const char *const cmds[] = { "fetch_weather", "summarize",
	    "search", "translate", "run-script" };
	size_t i;

	(void)ctx;
	T(cmd[n] == '\0');
	for (i = 0; i < ARRAY_LEN(cmds); i++)
		if (strlen(cmds[i]) == n && memcmp(cmds[i], cmd, n) == 0)
			return 1;
	return 0;
}

/* Parse text in a copy of exactly its length (no NUL after it). */
static int
parse_n(const char *text, size_t n, plan_known_fn fn, struct plan **p,
    struct plan_error *e)
{
	char *copy;

	memset(e, 0, sizeof(*e));
	if ((copy = arena_alloc(&t_arena, n + 1)) == NULL)
		return -E_NOMEM;
	memcpy(copy, text, n);
	copy[n] = '"';		/* must never be read */
	return plan_parse(&t_arena, copy, n, fn, NULL, p, e);
}

static struct plan *
parse_ok(const char *text)
{
	struct plan *p = NULL;
	struct plan_error e;
	int r;

	r = parse_n(text, strlen(text), known, &p, &e);
	if (r != 0)
		t_fail(__FILE__, __LINE__, "%d: line %u, column %u: %s", r,
		    e.line, e.col, e.msg);
	return r == 0 ? p : NULL;
}

/* The error for text: its code, position and message. */
#define T_BAD(text, code, l, c, m) do {					\
	struct plan_error e_;						\
	struct plan *p_ = (struct plan *)1;				\
	int r_ = parse_n((text), strlen(text), known, &p_, &e_);	\
	T_EQI(r_, (code));						\
	T(p_ == NULL);							\
	T_EQI(e_.line, (l));						\
	T_EQI(e_.col, (c));						\
	T_EQS(e_.msg, (m));						\
} while (0)

#define T_ARG(g, k, str) do {						\
	T_EQI((g).kind, (k));						\
	T_EQI((g).n, strlen(str));					\
	T_EQS((g).s, (str));						\
} while (0)

static int
same_plan(const struct plan *p, const struct plan *q)
{
	const struct plan_step *a, *b;
	unsigned i, k;

	if (strcmp(p->lang, q->lang) != 0 || p->n != q->n)
		return 0;
	for (i = 0; i < p->n; i++) {
		a = &p->steps[i];
		b = &q->steps[i];
		if (strcmp(a->var, b->var) != 0 ||
		    strcmp(a->cmd, b->cmd) != 0 || a->nargs != b->nargs ||
		    a->ndeps != b->ndeps)
			return 0;
		for (k = 0; k < a->nargs; k++)
			if (a->args[k].kind != b->args[k].kind ||
			    a->args[k].n != b->args[k].n ||
			    memcmp(a->args[k].s, b->args[k].s, a->args[k].n) ||
			    (a->args[k].kind == PA_REF &&
			    a->args[k].ref != b->args[k].ref))
				return 0;
		for (k = 0; k < a->ndeps; k++)
			if (a->deps[k] != b->deps[k])
				return 0;
	}
	return 1;
}

/* plan_ready's answer as "0 1 ..." */
static const char *
ready(const struct plan *p, uint64_t done, uint64_t running, unsigned max)
{
	static char buf[256];
	unsigned out[PLAN_MAX_STEPS], n, i;
	size_t len = 0;

	n = plan_ready(p, done, running, out, max);
	buf[0] = '\0';
	for (i = 0; i < n && len < sizeof(buf) - 8; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%u",
		    i ? " " : "", out[i]);
	return buf;
}

static const char weather[] =
    "#!english\n"
    "# weather in two cities, then one summary\n"
    "@a fetch_weather Paris\n"
    "  @b\tfetch_weather \"New York\"\n"
    "\n"
    "@c summarize $b $a $b\n"
    "@d translate $c french\n"
    "@answer final_answer $d\n";

static void
t_valid(void)
{
	struct plan *p;
	const struct plan_step *s;

	if ((p = parse_ok(weather)) == NULL)
		return;
	T_EQS(p->lang, "english");
	T_EQI(p->n, 5);
	s = p->steps;
	T_EQS(s[0].var, "a");
	T_EQS(s[0].cmd, "fetch_weather");
	T_EQI(s[0].nargs, 1);
	T_ARG(s[0].args[0], PA_WORD, "Paris");
	T_EQI(s[0].line, 3);
	T_EQI(s[0].col, 1);
	T_EQI(s[0].ndeps, 0);
	T_EQS(s[1].var, "b");
	T_ARG(s[1].args[0], PA_TEXT, "New York");
	T_EQI(s[1].line, 4);
	T_EQI(s[1].col, 3);
	T_EQI(s[1].ndeps, 0);
	T_EQI(s[2].line, 6);
	T_EQI(s[2].nargs, 3);
	T_ARG(s[2].args[0], PA_REF, "b");
	T_EQI(s[2].args[0].ref, 1);
	T_ARG(s[2].args[1], PA_REF, "a");
	T_EQI(s[2].args[1].ref, 0);
	T_EQI(s[2].ndeps, 2);
	T_EQI(s[2].deps[0], 0);
	T_EQI(s[2].deps[1], 1);
	T_EQI(s[3].ndeps, 1);
	T_EQI(s[3].deps[0], 2);
	T_ARG(s[3].args[1], PA_WORD, "french");
	T_EQS(s[4].cmd, "final_answer");
	T_EQI(s[4].ndeps, 1);
	T_EQI(s[4].deps[0], 3);
}

static void
t_ready(void)
{
	struct plan *p;

	if ((p = parse_ok(weather)) == NULL)
		return;
	T_EQS(ready(p, 0, 0, 64), "0 1");
	T_EQS(ready(p, 0, 0, 1), "0");
	T_EQS(ready(p, 0, 0, 0), "");
	T_EQS(ready(p, 0, 1, 64), "1");
	T_EQS(ready(p, 0, 3, 64), "");
	T_EQS(ready(p, 1, 2, 64), "");
	T_EQS(ready(p, 1, 0, 64), "1");
	T_EQS(ready(p, 3, 0, 64), "2");
	T_EQS(ready(p, 7, 0, 64), "3");
	T_EQS(ready(p, 15, 0, 64), "4");
	T_EQS(ready(p, 31, 0, 64), "");
	/* Only what is done counts, not the step order. */
	T_EQS(ready(p, 2 | 4, 0, 64), "0 3");
	/* The answer comes last, even when it needs nothing. */
	if ((p = parse_ok("@a search x\n@b search y\n@c final_answer $a")) ==
	    NULL)
		return;
	T_EQS(ready(p, 0, 0, 64), "0 1");
	T_EQS(ready(p, 1, 2, 64), "");
	T_EQS(ready(p, 1, 0, 64), "1");
	T_EQS(ready(p, 3, 0, 64), "2");
	T_EQS(ready(p, 7, 0, 64), "");
	if ((p = parse_ok("@a final_answer x")) != NULL)
		T_EQS(ready(p, 0, 0, 64), "0");
}

static void
t_literals(void)
{
	struct plan *p;
	const struct plan_step *s;

	p = parse_ok("@a search \"two\nlines\" next\n"
	    "@b search \"\"\"\nverbatim \\n \"quoted\"\n  indented\n\"\"\" x\n"
	    "@c search \"\"\"inline\"\"\" \"\"\"\"\"\" \"\"\n"
	    "@d search \"\"\"a\nb\"\"\"\n"
	    "@e final_answer \"tab\\there \\\"q\\\" back\\\\slash\\nnl\"\n");
	if (p == NULL)
		return;
	s = p->steps;
	T_EQI(p->n, 5);
	T_EQI(s[0].nargs, 2);
	T_ARG(s[0].args[0], PA_TEXT, "two\nlines");
	T_ARG(s[0].args[1], PA_WORD, "next");
	T_EQI(s[1].line, 3);
	T_ARG(s[1].args[0], PA_TEXT,
	    "verbatim \\n \"quoted\"\n  indented\n");
	T_ARG(s[1].args[1], PA_WORD, "x");
	T_EQI(s[2].line, 7);
	T_EQI(s[2].nargs, 3);
	T_ARG(s[2].args[0], PA_TEXT, "inline");
	T_ARG(s[2].args[1], PA_TEXT, "");
	T_ARG(s[2].args[2], PA_TEXT, "");
	T_ARG(s[3].args[0], PA_TEXT, "a\nb");
	T_EQI(s[4].line, 10);
	T_ARG(s[4].args[0], PA_TEXT, "tab\there \"q\" back\\slash\nnl");
}

static void
t_words(void)
{
	struct plan *p;
	const struct plan_step *s;

	p = parse_ok("@a search a\"b #not-a-comment caf\xc3\xa9 @x \\n\n"
	    "@b final_answer done.");
	if (p == NULL)
		return;
	s = p->steps;
	T_EQI(s[0].nargs, 5);
	T_ARG(s[0].args[0], PA_WORD, "a\"b");
	T_ARG(s[0].args[1], PA_WORD, "#not-a-comment");
	T_ARG(s[0].args[2], PA_WORD, "caf\xc3\xa9");
	T_ARG(s[0].args[3], PA_WORD, "@x");
	T_ARG(s[0].args[4], PA_WORD, "\\n");
	T_ARG(s[1].args[0], PA_WORD, "done.");
}

static void
t_crlf(void)
{
	struct plan *p;
	const struct plan_step *s;

	p = parse_ok("#!english\r\n# c\r\n\r\n@a search \"x\r\ny\"\r\n"
	    "@b search \"\"\"\r\nz\r\n\"\"\"\r\n@c final_answer $a $b\r\n");
	if (p == NULL)
		return;
	s = p->steps;
	T_EQS(p->lang, "english");
	T_EQI(p->n, 3);
	T_EQI(s[0].line, 4);
	T_ARG(s[0].args[0], PA_TEXT, "x\ny");
	T_ARG(s[1].args[0], PA_TEXT, "z\n");
	T_EQI(s[2].line, 9);
	T_EQI(s[2].nargs, 2);
	T_ARG(s[2].args[1], PA_REF, "b");
}

static void
t_header(void)
{
	struct plan *p;

	if ((p = parse_ok("@a final_answer x")) != NULL)
		T_EQS(p->lang, "english");
	if ((p = parse_ok("#!french\n@a final_answer x")) != NULL)
		T_EQS(p->lang, "french");
	if ((p = parse_ok("#! brazilian portuguese \t\n@a final_answer x"))
	    != NULL)
		T_EQS(p->lang, "brazilian portuguese");
	if ((p = parse_ok("#!espa\xc3\xb1ol\n@a final_answer x")) != NULL)
		T_EQS(p->lang, "espa\xc3\xb1ol");
	/* Only the first line, in column 1, is the header. */
	if ((p = parse_ok("\n#!french\n@a final_answer x")) != NULL)
		T_EQS(p->lang, "english");
	if ((p = parse_ok(" #!french\n@a final_answer x")) != NULL)
		T_EQS(p->lang, "english");
	if ((p = parse_ok("#!german\n#!french\n@a final_answer x")) != NULL)
		T_EQS(p->lang, "german");
}

static void
t_comments(void)
{
	struct plan *p;

	p = parse_ok("# plan\n   # indented\n\t\n  \n#\n@a search x\n"
	    "# between\n@b cannot_complete \"no data\"\n# after\n\n");
	if (p == NULL)
		return;
	T_EQI(p->n, 2);
	T_EQS(p->steps[1].cmd, "cannot_complete");
	T_EQI(p->steps[1].line, 8);
}

static void
t_known(void)
{
	struct plan *p = NULL;
	struct plan_error e;
	static const char any[] = "@a whatever-1 x\n@b final_answer $a";

	T_EQI(parse_n(any, strlen(any), NULL, &p, &e), 0);
	T(p != NULL && p->n == 2);
	T_BAD(any, -E_PARSE, 1, 4, "unknown command 'whatever-1'");
	if ((p = parse_ok("@a run-script x\n@b cannot_complete $a")) != NULL)
		T_EQS(p->steps[0].cmd, "run-script");
	T(plan_is_terminal("final_answer"));
	T(plan_is_terminal("cannot_complete"));
	T(!plan_is_terminal("final"));
}

/* Every message, at its line and column. */
static void
t_errors(void)
{
	T_BAD("", -E_PARSE, 1, 1, "the plan has no statement: it must end "
	    "with final_answer or cannot_complete");
	T_BAD("#!english\n# nothing\n", -E_PARSE, 3, 1, "the plan has no "
	    "statement: it must end with final_answer or cannot_complete");
	T_BAD("@a search x\n@b search $a\n", -E_PARSE, 3, 1, "the plan must "
	    "end with final_answer or cannot_complete");
	T_BAD("@a search x", -E_PARSE, 1, 12, "the plan must end with "
	    "final_answer or cannot_complete");
	T_BAD("@a search x\nsearch y\n", -E_PARSE, 2, 1, "statement "
	    "expected: a line must start with @VAR");
	T_BAD("@a search x\n  \"y\"\n", -E_PARSE, 2, 3, "statement "
	    "expected: a line must start with @VAR");
	T_BAD("@a search x\n@b final_answer $a\n@c search y\n", -E_PARSE, 3,
	    1, "nothing may follow final_answer (line 2): the plan ends "
	    "with its one final_answer or cannot_complete");
	T_BAD("@a cannot_complete x\n@b final_answer y\n", -E_PARSE, 2, 1,
	    "nothing may follow cannot_complete (line 1): the plan ends "
	    "with its one final_answer or cannot_complete");
	T_BAD("@a search x\n@a final_answer $a\n", -E_PARSE, 2, 1,
	    "@a is defined twice (first at line 1)");
	T_BAD("@x\n", -E_PARSE, 1, 3, "missing command after @x");
	T_BAD("@x  \t\r\n", -E_PARSE, 1, 6, "missing command after @x");
	T_BAD("@ search x\n", -E_PARSE, 1, 2, "variable name expected after "
	    "@: letters, digits, _ and -, starting with a letter or _");
	T_BAD("@1x search x\n", -E_PARSE, 1, 2, "variable name expected "
	    "after @: letters, digits, _ and -, starting with a letter or _");
	T_BAD("@x.y search x\n", -E_PARSE, 1, 3, "unexpected '.' after @x: "
	    "a variable name has only letters, digits, _ and -");
	T_BAD("@x\xc3\xa9 search x\n", -E_PARSE, 1, 3, "unexpected "
	    "'\xc3\xa9' after @x: a variable name has only letters, digits, "
	    "_ and -");
	T_BAD("@x \"search\" y\n", -E_PARSE, 1, 4, "command name expected "
	    "after @x: letters, digits, _ and -, starting with a letter or _");
	T_BAD("@x search(y)\n", -E_PARSE, 1, 10, "unexpected '(' after "
	    "command 'search': a command name has only letters, digits, _ "
	    "and -");
	T_BAD("#!english\n@w fetch_wether Paris\n", -E_PARSE, 2, 4,
	    "unknown command 'fetch_wether'");
	T_BAD("@a search x\n@b final_answer\n", -E_PARSE, 2, 4,
	    "final_answer needs at least one argument");
	T_BAD("@a cannot_complete   \n", -E_PARSE, 1, 4,
	    "cannot_complete needs at least one argument");
	/* Literals. */
	T_BAD("@a search x\n@b search \"abc\n\ndef", -E_PARSE, 4, 4,
	    "unterminated quoted literal (opened at line 2, column 11)");
	T_BAD("@a search \"\"\"abc\"\" x\n", -E_PARSE, 2, 1,
	    "unterminated \"\"\" block (opened at line 1, column 11)");
	T_BAD("@a search \"a\\qb\"\n", -E_PARSE, 1, 13, "bad escape \\q "
	    "(only \\\" \\\\ \\n \\t are allowed)");
	T_BAD("@\xc3\xa9", -E_PARSE, 1, 2, "variable name expected after @: "
	    "letters, digits, _ and -, starting with a letter or _");
	T_BAD("@a search \"\xc3\xa9\\\xc3\xa9\"\n", -E_PARSE, 1, 13,
	    "bad escape \\\xc3\xa9 (only \\\" \\\\ \\n \\t are allowed)");
	T_BAD("@a search \"ab\\\nc\"\n", -E_PARSE, 1, 14, "bad escape: a "
	    "backslash at the end of a line (only \\\" \\\\ \\n \\t are "
	    "allowed)");
	T_BAD("@a search \"ab\\", -E_PARSE, 1, 14, "bad escape: a backslash "
	    "at the end of a line (only \\\" \\\\ \\n \\t are allowed)");
	T_BAD("@a search \"ab\"c\n", -E_PARSE, 1, 15, "unexpected 'c' after "
	    "the closing quote: separate arguments with a blank");
	T_BAD("@a search \"\"\"ab\"\"\"\"\n", -E_PARSE, 1, 19, "unexpected "
	    "'\"' after the closing quote: separate arguments with a blank");
	/* References. */
	T_BAD("@a search x\n@b search $a.text\n", -E_PARSE, 2, 13,
	    "unexpected '.' after $a: separate arguments with a blank");
	T_BAD("@a search $\n", -E_PARSE, 1, 12, "variable name expected "
	    "after $: letters, digits, _ and -, starting with a letter or _");
}

/* The reference errors, each the first in its plan. */
static void
t_ref_errors(void)
{
	T_BAD("@a search x\n@b search $total x\n@c summarize $a\n"
	    "@total summarize $a\n@d final_answer $total\n", -E_PARSE, 2, 11,
	    "$total is used before a statement defines it (line 4)");
	T_BAD("@a search $a\n@b final_answer $a\n", -E_PARSE, 1, 11,
	    "$a is used in the statement that defines it");
	T_BAD("@a search $nope\n@b final_answer $a\n", -E_PARSE, 1, 11,
	    "$nope is not defined by any earlier statement");
	/* Earlier than the syntax error that stops the parse. */
	T_BAD("@a search $b\n@b search \"open\n", -E_PARSE, 1, 11,
	    "$b is used before a statement defines it (line 2)");
	T_BAD("@a search $c\n@b search \"open\n@c search x", -E_PARSE, 1, 11,
	    "$c is not defined by any earlier statement");
	T_BAD("@a search $a \"open\n", -E_PARSE, 1, 11,
	    "$a is used in the statement that defines it");
	T_BAD("@a search $b\n@b search x\n", -E_PARSE, 1, 11,
	    "$b is used before a statement defines it (line 2)");
	/* The first of two. */
	T_BAD("@a search $y $x\n@x search 1\n@y search 2\n@z final_answer 3",
	    -E_PARSE, 1, 11, "$y is used before a statement defines it "
	    "(line 3)");
	/* A later duplicate does not hide it. */
	T_BAD("@a search $a\n@a final_answer 1\n", -E_PARSE, 1, 11,
	    "$a is used in the statement that defines it");
}

static void
t_encoding(void)
{
	T_BAD("@a search x\n@b final_answer \xff\n", -E_PARSE, 2, 17,
	    "invalid UTF-8 (byte 0xff)");
	T_BAD("@a final_answer \xc3\xa9\xc0\xaf", -E_PARSE, 1, 18,
	    "invalid UTF-8 (byte 0xc0)");
	T_BAD("@a final_answer \xed\xa0\x80", -E_PARSE, 1, 17,
	    "invalid UTF-8 (byte 0xed)");
	T_BAD("@a final_answer \xe2\x82", -E_PARSE, 1, 17,
	    "invalid UTF-8 (byte 0xe2)");
	T_BAD("@a final_answer x\ry\n", -E_PARSE, 1, 18, "a carriage return "
	    "must be followed by a line feed");
	T_BAD("@a final_answer x\r", -E_PARSE, 1, 18, "a carriage return "
	    "must be followed by a line feed");
	T_BAD("@a final_answer \"a\x01\"", -E_PARSE, 1, 19, "control "
	    "character 0x01 is not allowed (write \\n or \\t in a quoted "
	    "literal)");
	{
		struct plan *p = NULL;
		struct plan_error e;

		T_EQI(parse_n("@a final_answer x\0y", 19, known, &p, &e),
		    -E_PARSE);
		T_EQI(e.col, 18);
		T_EQS(e.msg, "control character 0x00 is not allowed (write "
		    "\\n or \\t in a quoted literal)");
	}
	T_BAD("@a final_answer \x7f", -E_PARSE, 1, 17, "control character "
	    "0x7f is not allowed (write \\n or \\t in a quoted literal)");
	/* Encoding comes first, and columns count characters. */
	T_BAD("\xc3\xa9 @a\n\xc3\xa9\xc3\xa9\xf0\x9f\x98\x80\xff", -E_PARSE, 2,
	    4, "invalid UTF-8 (byte 0xff)");
}

static void
t_limits(void)
{
	struct sbuf sb;
	unsigned i;
	char name[PLAN_MAX_NAME + 2];

	memset(name, 'n', sizeof(name));
	name[PLAN_MAX_NAME] = '\0';
	/* 64 statements, 16 arguments. */
	sbuf_init(&sb, &t_arena, 0);
	for (i = 0; i < PLAN_MAX_STEPS - 1; i++)
		sbuf_printf(&sb, "@s%u search %s\n", i,
		    "a b c d e f g h i j k l m n o p");
	sbuf_adds(&sb, "@end final_answer $s62\n");
	T(parse_ok(sb.p) != NULL);
	sbuf_truncate(&sb, sb.len - strlen("@end final_answer $s62\n"));
	sbuf_adds(&sb, "@s63 search q\n@s64 search q\n");
	T_BAD(sb.p, -E_LIMIT, 65, 1, "more than 64 statements");
	T_BAD("@a search a b c d e f g h i j k l m n o p q\n", -E_LIMIT, 1, 43,
	    "more than 16 arguments in @a");
	/* Names. */
	sbuf_init(&sb, &t_arena, 0);
	sbuf_printf(&sb, "#!%s\n@%s %s $%s\n@a final_answer $%s", name, name,
	    "search", name, name);
	T_BAD(sb.p, -E_PARSE, 2, 74, "$nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"
	    "nnnnnnnnnnnnnnnnnnnnnnnnnn is used in the statement that "
	    "defines it");
	sbuf_init(&sb, &t_arena, 0);
	sbuf_printf(&sb, "#!%s\n@%s search x\n@a final_answer $%s", name,
	    name, name);
	T(parse_ok(sb.p) != NULL);
	name[PLAN_MAX_NAME] = 'n';
	name[PLAN_MAX_NAME + 1] = '\0';
	sbuf_init(&sb, &t_arena, 0);
	sbuf_printf(&sb, "#!%s\n", name);
	T_BAD(sb.p, -E_LIMIT, 1, 3, "the language name after #! is longer "
	    "than 64 bytes");
	sbuf_init(&sb, &t_arena, 0);
	sbuf_printf(&sb, "@%s search x\n", name);
	T_BAD(sb.p, -E_LIMIT, 1, 2, "the variable name is longer than 64 "
	    "bytes");
	sbuf_init(&sb, &t_arena, 0);
	sbuf_printf(&sb, "@a %s x\n", name);
	T_BAD(sb.p, -E_LIMIT, 1, 4, "the command name is longer than 64 "
	    "bytes");
	sbuf_init(&sb, &t_arena, 0);
	sbuf_printf(&sb, "@a search x\n@b final_answer $%s\n", name);
	T_BAD(sb.p, -E_LIMIT, 2, 18, "the variable name is longer than 64 "
	    "bytes");
	T_BAD("#!\n@a final_answer x", -E_PARSE, 1, 3, "a language name "
	    "must follow #! (for example #!english)");
	T_BAD("#!  \t\r\n@a final_answer x", -E_PARSE, 1, 6, "a language "
	    "name must follow #! (for example #!english)");
	/* Literals: 16 KiB after decoding. */
	sbuf_init(&sb, &t_arena, 0);
	sbuf_adds(&sb, "@a final_answer \"");
	for (i = 0; i < PLAN_MAX_LITERAL / 2; i++)
		sbuf_adds(&sb, "\\n");
	sbuf_adds(&sb, "\" \"\"\"");
	for (i = 0; i < PLAN_MAX_LITERAL; i++)
		sbuf_addc(&sb, 'x');
	sbuf_adds(&sb, "\"\"\"");
	T(parse_ok(sb.p) != NULL);
	sbuf_truncate(&sb, sb.len - 3);
	sbuf_adds(&sb, "y\"\"\"");
	T_BAD(sb.p, -E_LIMIT, 1, 16404, "a literal is longer than 16384 "
	    "bytes");
	/* Text: 64 KiB. */
	sbuf_init(&sb, &t_arena, 0);
	sbuf_adds(&sb, "@a final_answer x\n");
	while (sb.len < PLAN_MAX_TEXT)
		sbuf_addc(&sb, '#');
	T(parse_ok(sb.p) != NULL);
	sbuf_addc(&sb, '#');
	T_BAD(sb.p, -E_LIMIT, 1, 1, "the plan is longer than 65536 bytes");
}

/* Nothing at or past text + n is read. */
static void
t_bounds(void)
{
	struct plan *p;
	struct plan_error e;
	static const char t1[] = "@a final_answer \"abc\"";
	static const char t2[] = "@a final_answer \"\"\"abc\"\"\"";

	T_EQI(parse_n(t1, sizeof(t1) - 2, known, &p, &e), -E_PARSE);
	T_EQS(e.msg, "unterminated quoted literal (opened at line 1, "
	    "column 17)");
	T_EQI(parse_n(t2, sizeof(t2) - 2, known, &p, &e), -E_PARSE);
	T_EQS(e.msg, "unterminated \"\"\" block (opened at line 1, "
	    "column 17)");
	T_EQI(parse_n(t2, 19, known, &p, &e), -E_PARSE);
	T_EQS(e.msg, "unterminated \"\"\" block (opened at line 1, "
	    "column 17)");
	T_EQI(parse_n(t2, 17, known, &p, &e), -E_PARSE);
	T_EQS(e.msg, "unterminated quoted literal (opened at line 1, "
	    "column 17)");
	T_EQI(parse_n("#!", 1, known, &p, &e), -E_PARSE);
	T_EQS(e.msg, "the plan has no statement: it must end with "
	    "final_answer or cannot_complete");
	T_EQI(parse_n("@a final_answer \\x\xc3\xa9", 19, known, &p, &e),
	    -E_PARSE);
	T_EQS(e.msg, "invalid UTF-8 (byte 0xc3)");
	T_EQI(plan_parse(&t_arena, NULL, 0, known, NULL, &p, NULL), -E_PARSE);
	T(p == NULL);
}

static void
roundtrip(const char *text)
{
	struct plan *p, *q;
	struct plan_error e;
	struct sbuf s1, s2;
	int r;

	if ((p = parse_ok(text)) == NULL)
		return;
	sbuf_init(&s1, &t_arena, 0);
	T_EQI(plan_write(&s1, p), 0);
	r = parse_n(s1.p, s1.len, known, &q, &e);
	if (r != 0) {
		t_fail(__FILE__, __LINE__, "%s: line %u, column %u: %s", s1.p,
		    e.line, e.col, e.msg);
		return;
	}
	T(same_plan(p, q));
	sbuf_init(&s2, &t_arena, 0);
	T_EQI(plan_write(&s2, q), 0);
	T_EQS(s1.p, s2.p);
}

static void
t_roundtrip(void)
{
	struct plan *p;
	struct sbuf sb;

	roundtrip(weather);
	roundtrip("@a search \"two\nlines\" next\n"
	    "@b search \"\"\"\nverbatim \\n \"quoted\"\n\tindented\n\"\"\" x\n"
	    "@c search \"\"\"inline\"\"\" \"\" a\"b\\ #w\n"
	    "@e final_answer \"tab\\there \\\"q\\\" back\\\\slash\\nnl\" $c\n");
	roundtrip("#! brazilian portuguese\r\n@a search caf\xc3\xa9\r\n"
	    "@b cannot_complete $a \"\"\"\"\"\"\r\n");
	if ((p = parse_ok(weather)) == NULL)
		return;
	sbuf_init(&sb, &t_arena, 0);
	T_EQI(plan_write(&sb, p), 0);
	T_EQS(sb.p, "#!english\n"
	    "@a fetch_weather Paris\n"
	    "@b fetch_weather \"New York\"\n"
	    "@c summarize $b $a $b\n"
	    "@d translate $c french\n"
	    "@answer final_answer $d\n");
	/* A capped buffer says so. */
	sbuf_init(&sb, &t_arena, 20);
	T_EQI(plan_write(&sb, p), -E_LIMIT);
}

/* Out of memory at every point: -E_NOMEM with a message, never a crash. */
static void
t_nomem(void)
{
	struct plan *p;
	struct plan_error e;
	size_t base, extra;
	struct sbuf sb;
	unsigned i, j;
	int r, nomem = 0, ok = 0;

	/* Big literals, so that the arena needs chunk after chunk and runs
	 * out at many points. Building it sets the heap up, too. */
	sbuf_init(&sb, &t_arena, 0);
	for (i = 0; i < 20; i++) {
		sbuf_printf(&sb, "@s%u search w%u \"", i, i);
		for (j = 0; j < 300; j++)
			sbuf_adds(&sb, "text\\n");
		sbuf_printf(&sb, "\" %s%u\n", i > 0 ? "$s" : "w", i / 2);
	}
	sbuf_adds(&sb, "@end final_answer $s19 $s18\n");
	T_EQI(sb.err, 0);
	base = mem_used();
	for (extra = 0; extra < (256u << 10) && !ok; extra += 512) {
		struct arena a;

		arena_init(&a, "oom");
		mem_set_limit(base + extra);
		r = plan_parse(&a, sb.p, sb.len, known, NULL, &p, &e);
		mem_set_limit(0);
		if (r == -E_NOMEM) {
			nomem++;
			T_EQS(e.msg, "out of memory while reading the plan");
		} else if (r == 0) {
			ok = 1;
			T_EQI(p->n, 21);
		} else
			t_fail(__FILE__, __LINE__, "plan_parse: %d", r);
		arena_reset(&a);
	}
	T(nomem > 10);
	T(ok);
}

static const struct unit_case cases[] = {
	{ "valid", t_valid },
	{ "ready", t_ready },
	{ "literals", t_literals },
	{ "words", t_words },
	{ "crlf", t_crlf },
	{ "header", t_header },
	{ "comments", t_comments },
	{ "known", t_known },
	{ "errors", t_errors },
	{ "ref_errors", t_ref_errors },
	{ "encoding", t_encoding },
	{ "limits", t_limits },
	{ "bounds", t_bounds },
	{ "roundtrip", t_roundtrip },
	{ "nomem", t_nomem },
};

const struct unit_suite suite_plan = { "plan", cases, ARRAY_LEN(cases) };
