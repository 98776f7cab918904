/* test_fm.c - YAML trees and front-matter splitting. */
#include <string.h>
#include <stdio.h>

#include "fmt/fm.h"
#include "unit.h"

static int
parse(const char *y, struct fm_node **root, struct fm_error *err)
{
	return fm_parse(&t_arena, y, strlen(y), 1, root, err);
}

static void
scalars_and_lines(void)
{
	struct fm_node *r, *n;
	struct fm_error e;

	T(parse("name: x\ndescription: >\n  two\n  lines\nlist: [a, b]\n"
	    "map:\n  k: v\nempty:\nq: \"null\"\n", &r, &e) == 0);
	T(r->kind == FM_MAP);
	T_EQI(r->nkids, 6);
	T_EQS(fm_get(r, "name")->s, "x");
	T_EQI(fm_get(r, "name")->line, 1);
	T_EQS(fm_get(r, "description")->s, "two lines\n");
	n = fm_get(r, "list");
	T(n->kind == FM_SEQ && n->nkids == 2);
	T_EQS(n->kids->next->s, "b");
	T_EQI(fm_get(r, "map")->line, 7);
	T_EQS(fm_get(fm_get(r, "map"), "k")->s, "v");
	T(fm_get(r, "empty")->kind == FM_NULL);
	T_EQI(fm_get(r, "empty")->line, 8);	/* its key's line */
	T(fm_get(r, "q")->kind == FM_SCALAR);	/* quoted "null" is a string */
	T(fm_get(r, "nope") == NULL);
}

static void
line_offset(void)
{
	struct fm_node *r;
	struct fm_error e;

	T(fm_parse(&t_arena, "a: 1\nb: [\n", 10, 2, &r, &e) == -E_PARSE);
	T(e.line >= 3);
	T(e.msg[0] != '\0');
}

/* libfyaml's own diagnostics carry 1-based lines: the error must land on
 * the line that holds it, not the next one. */
static void
error_line(void)
{
	const char *y = "name: my-skill\n"
	    "description: Use this skill when: the user asks about PDFs\n"
	    "license: MIT\n";
	struct fm_node *r;
	struct fm_error e;

	T(fm_parse(&t_arena, y, strlen(y), 2, &r, &e) == -E_PARSE);
	T_EQI(e.line, 3);
	T(e.col >= 1 && e.col <= 60);
	y = "a: 1\nb:\n\tc: 3\n";
	T(fm_parse(&t_arena, y, strlen(y), 1, &r, &e) == -E_PARSE);
	T_EQI(e.line, 3);
	y = "name: [invalid\n";
	T(fm_parse(&t_arena, y, strlen(y), 2, &r, &e) == -E_PARSE);
	T(e.line == 2 || e.line == 3);
}

static void
refusals(void)
{
	struct fm_node *r;
	struct fm_error e;

	T(parse("a: 1\na: 2\n", &r, &e) == -E_PARSE);
	T(strstr(e.msg, "duplicate") != NULL);
	T_EQI(e.line, 2);
	T(parse("a: &x 1\nb: *x\n", &r, &e) == -E_PARSE);
	T(strstr(e.msg, "anchor") != NULL || strstr(e.msg, "alias") != NULL);
	/* built without tags and directives: refused by name, with the line */
	T(parse("a: 1\nb: !!str 2\n", &r, &e) == -E_PARSE);
	T(strstr(e.msg, "tags") != NULL);
	T_EQI(e.line, 2);
	T(parse("%YAML 1.2\n---\na: 1\n", &r, &e) == -E_PARSE);
	T(strstr(e.msg, "directives") != NULL);
	T(parse("a: [!x 1]\n", &r, &e) == -E_PARSE);
	/* a '!' or '%' inside a scalar is text */
	T(parse("a: wow! 100% done\nb: '!x'\n", &r, &e) == 0);
	T(parse("? [a]\n: 1\n", &r, &e) == -E_PARSE);
	T(parse("a: 1\n---\nb: 2\n", &r, &e) == -E_PARSE);
	T(parse("a: [[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]\n", &r, &e) ==
	    -E_LIMIT);
	T(parse("\tbad: tab\n", &r, &e) == -E_PARSE);
}

static void
empty_doc(void)
{
	struct fm_node *r;
	struct fm_error e;

	T(parse("", &r, &e) == 0 && r->kind == FM_NULL);
	T(parse("# only a comment\n", &r, &e) == 0 && r->kind == FM_NULL);
	T(parse("just text", &r, &e) == 0 && r->kind == FM_SCALAR);
}

static void
node_cap(void)
{
	char *y = arena_alloc(&t_arena, 6 * (FM_MAX_NODES + 10) + 8);
	struct fm_node *r;
	struct fm_error e;
	size_t n = 0;
	int i;

	n += (size_t)sprintf(y, "[");
	for (i = 0; i < FM_MAX_NODES + 10; i++)
		n += (size_t)sprintf(y + n, "1,");
	y[n++] = ']';
	T(fm_parse(&t_arena, y, n, 1, &r, &e) == -E_LIMIT);
}

static void
out_of_memory(void)
{
	const char *y = "name: x\ndescription: a longer text to parse\n"
	    "metadata:\n  a: b\n  c: d\n";
	struct fm_node *r;
	struct fm_error e;
	size_t lim;
	int rc, nomem = 0, ok = 0;

	/* Any budget either parses or says "out of memory": never a crash,
	 * never a bogus parse error. */
	for (lim = 1024; lim < 256 * 1024; lim += lim / 4) {
		arena_reset(&t_arena);
		mem_set_limit(mem_used() + lim);
		rc = parse(y, &r, &e);
		mem_set_limit(0);
		if (rc == -E_NOMEM)
			nomem++;
		else if (rc == 0 && strcmp(fm_get(r, "name")->s, "x") == 0)
			ok++;
		else
			t_fail(__FILE__, __LINE__, "limit %zu: rc %d", lim, rc);
	}
	T(nomem > 0 && ok > 0);
}

static void
split(void)
{
	struct str y, b;
	unsigned yl, bl;
	const char *t = "---\nname: x\n---\nbody\n";

	T(fm_split(t, strlen(t), &y, &yl, &b, &bl) == 0);
	T(y.n == 8 && memcmp(y.p, "name: x\n", 8) == 0);
	T_EQI(yl, 2);
	T_EQI(bl, 4);
	T(b.n == 5);
	t = "---\r\nname: x\r\n---\r\nbody";
	T(fm_split(t, strlen(t), &y, &yl, &b, &bl) == 0);
	T(b.n == 4);
	t = "\xef\xbb\xbf---\nname: x\n---";
	T(fm_split(t, strlen(t), &y, &yl, &b, &bl) == 0 && b.n == 0);
	t = "# no front-matter\n";
	T(fm_split(t, strlen(t), &y, &yl, &b, &bl) == -E_NOENT);
	t = "---\nname: x\n";
	T(fm_split(t, strlen(t), &y, &yl, &b, &bl) == -E_PARSE);
	t = "----\nname: x\n---\n";
	T(fm_split(t, strlen(t), &y, &yl, &b, &bl) == -E_NOENT);
	t = "---\n---\n";
	T(fm_split(t, strlen(t), &y, &yl, &b, &bl) == 0 && y.n == 0);
}

static const struct unit_case cases[] = {
	{ "scalars_and_lines", scalars_and_lines },
	{ "line_offset", line_offset },
	{ "error_line", error_line },
	{ "refusals", refusals },
	{ "empty_doc", empty_doc },
	{ "node_cap", node_cap },
	{ "out_of_memory", out_of_memory },
	{ "split", split },
};

const struct unit_suite suite_fm = { "fm", cases, ARRAY_LEN(cases) };
