/* test_skill.c - registry scans, change detection and path confinement. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "skill/skill.h"
#include "unit.h"

static char tmpl[64];

static const char *
tmpdir(void)
{
	const char *t = getenv("TMPDIR");

	snprintf(tmpl, sizeof(tmpl), "%s/skillbox-unit.XXXXXX",
	    t != NULL && strlen(t) < 32 ? t : "/tmp");
	return mkdtemp(tmpl);
}

static void
rm_rf(const char *dir)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	(void)!system(cmd);
}

static void
skill_text(char *buf, size_t n, const char *name, const char *desc)
{
	snprintf(buf, n, "---\nname: %s\ndescription: %s\n---\nBody of %s.\n",
	    name, desc, name);
}

static void
name_rules(void)
{
	T(skill_name_rule("pdf", 3) == NULL);
	T(skill_name_rule("a-b-c9", 6) == NULL);
	T_EQS(skill_name_rule("", 0), "name-length");
	T_EQS(skill_name_rule("Abc", 3), "name-chars");
	T_EQS(skill_name_rule("a_b", 3), "name-chars");
	T_EQS(skill_name_rule("-ab", 3), "name-hyphen");
	T_EQS(skill_name_rule("ab-", 3), "name-hyphen");
	T_EQS(skill_name_rule("a--b", 4), "name-hyphen");
	T_EQS(skill_name_rule("a-b--", 5), "name-hyphen");
	T_EQS(skill_name_rule("ab--c", 5), "name-hyphen");
	T_EQS(skill_name_rule("-", 1), "name-hyphen");
	T_EQS(skill_name_rule("a---b", 5), "name-hyphen");
	T(skill_name_rule("a-b", 3) == NULL);
	T(skill_name_rule("a-b-c-d-e", 9) == NULL);
	T_EQS(skill_name_rule("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaa", 65), "name-length");
	T_EQS(skill_name_rule("my-skill ", 9), "name-chars");
	/* Letters of other scripts, as the reference validator takes them;
	 * lengths in characters, not bytes. */
	T(skill_name_rule("навык", strlen("навык")) == NULL);
	T(skill_name_rule("мой-навык", strlen("мой-навык")) == NULL);
	T(skill_name_rule("技能", strlen("技能")) == NULL);
	T(skill_name_rule("café", strlen("café")) == NULL);
	T_EQS(skill_name_rule("a\xe2\x80\x94" "b", 5), "name-chars"); /* dash */
	T_EQS(skill_name_rule("a\xc2\xa0" "b", 4), "name-chars");	/* nbsp */
	T_EQS(skill_name_rule("\xf0\x9f\x98\x80", 4), "name-chars"); /* emoji */
	T_EQS(skill_name_rule("a\xff", 2), "name-chars");	/* not UTF-8 */
	T_EQS(skill_name_rule("-навык", strlen("-навык")), "name-hyphen");
	{
		char n[4 * 65 + 1] = "";
		int i;

		for (i = 0; i < 64; i++)
			strcat(n, "я");		/* 64 characters, 128 bytes */
		T(skill_name_rule(n, strlen(n)) == NULL);
		strcat(n, "я");
		T_EQS(skill_name_rule(n, strlen(n)), "name-length");
	}
	T(skill_name_is_ascii("a-b9"));
	T(!skill_name_is_ascii("навык"));
}

static void
scan_and_refresh(void)
{
	const char *d = tmpdir();
	const char *roots[1];
	struct skill_reg r;
	char text[256];
	int changed;

	T(d != NULL);
	if (d == NULL)
		return;
	roots[0] = d;
	skill_text(text, sizeof(text), "alpha", "first");
	t_put(d, "alpha/SKILL.md", text);
	skill_text(text, sizeof(text), "beta", "second");
	t_put(d, "beta/SKILL.md", text);
	T(skill_reg_init(&r, roots, 1, NULL, NULL) == 0);
	T(skill_reg_scan(&r) == 0);
	T_EQI(r.n, 2);
	T_EQS(r.v[0]->name, "alpha");
	T(skill_find(&r, "beta") != NULL);
	T(skill_find(&r, "gamma") == NULL);

	T(skill_reg_refresh(&r, &changed) == 0);
	T(!changed);

	/* A new folder is seen. */
	skill_text(text, sizeof(text), "gamma", "third");
	t_put(d, "gamma/SKILL.md", text);
	T(skill_reg_refresh(&r, &changed) == 0);
	T(changed);
	T(skill_find(&r, "gamma") != NULL);

	/* An edit of the file alone (the folder's mtime stays) is seen. */
	{
		struct timespec ts = { 0, 50 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	skill_text(text, sizeof(text), "alpha", "edited description");
	t_put(d, "alpha/SKILL.md", text);
	T(skill_reg_refresh(&r, &changed) == 0);
	T(changed);
	T_EQS(skill_find(&r, "alpha")->description, "edited description");

	/* Removal is seen. */
	rm_rf(tmpl);
	T(skill_reg_refresh(&r, &changed) == 0);
	T(changed);
	T_EQI(r.n, 0);
	skill_reg_free(&r);
}

static void
paths_confined(void)
{
	const char *d = tmpdir();
	char link[600], text[256], *out = NULL;
	const char *roots[1];
	struct skill_reg r;
	struct skill *sk;

	if (d == NULL) {
		T(d != NULL);
		return;
	}
	roots[0] = d;
	skill_text(text, sizeof(text), "box", "confined");
	t_put(d, "box/SKILL.md", text);
	t_put(d, "box/references/a.md", "A\n");
	t_put(d, "other/secret.txt", "secret\n");
	snprintf(link, sizeof(link), "%s/box/references/out", d);
	T(symlink("/etc", link) == 0);
	snprintf(link, sizeof(link), "%s/box/references/in", d);
	T(symlink("a.md", link) == 0);
	snprintf(link, sizeof(link), "%s/box/sneaky", d);
	T(symlink("../other", link) == 0);
	T(skill_reg_init(&r, roots, 1, NULL, NULL) == 0);
	T(skill_reg_scan(&r) == 0);
	if ((sk = skill_find(&r, "box")) == NULL) {
		T(sk != NULL);
		goto out;
	}
	T(skill_path(sk, &t_arena, "references/a.md", 1, &out) == 0);
	T(out != NULL && strstr(out, "/box/references/a.md") != NULL);
	T(skill_path(sk, &t_arena, "references/in", 1, &out) == 0);
	T(skill_path(sk, &t_arena, "references/../references/a.md", 1,
	    &out) == 0);
	T(skill_path(sk, &t_arena, "../other/secret.txt", 1, &out) ==
	    -E_DENIED);
	T(skill_path(sk, &t_arena, "references/../../other/secret.txt", 1,
	    &out) == -E_DENIED);
	T(skill_path(sk, &t_arena, "/etc/passwd", 1, &out) == -E_DENIED);
	T(skill_path(sk, &t_arena, "references/out/passwd", 1, &out) ==
	    -E_DENIED);
	T(skill_path(sk, &t_arena, "sneaky/secret.txt", 1, &out) ==
	    -E_DENIED);
	T(skill_path(sk, &t_arena, "", 1, &out) == -E_DENIED);
	T(skill_path(sk, &t_arena, "references/missing.md", 1, &out) ==
	    -E_NOENT);
	/* New files: the parent must be inside. */
	T(skill_path(sk, &t_arena, "references/new.md", 0, &out) == 0);
	T(skill_path(sk, &t_arena, "sneaky/new.md", 0, &out) == -E_DENIED);
	T(skill_path(sk, &t_arena, "references/..", 0, &out) == 0);
	T(skill_path(sk, &t_arena, "..", 0, &out) == -E_DENIED);
	T(skill_path(sk, &t_arena, "nodir/x/new.md", 0, &out) == -E_DENIED);
out:
	rm_rf(tmpl);
	skill_reg_free(&r);
}

static void
scan_out_of_memory(void)
{
	const char *d = tmpdir();
	const char *roots[1];
	struct skill_reg r;
	char text[256], rel[64];
	size_t lim;
	int i, rc, nomem = 0, ok = 0;

	if (d == NULL) {
		T(d != NULL);
		return;
	}
	roots[0] = d;
	for (i = 0; i < 20; i++) {
		snprintf(rel, sizeof(rel), "s%02d", i);
		skill_text(text, sizeof(text), rel, "some skill");
		snprintf(rel, sizeof(rel), "s%02d/SKILL.md", i);
		t_put(d, rel, text);
	}
	T(skill_reg_init(&r, roots, 1, NULL, NULL) == 0);
	for (lim = 2048; lim < 512 * 1024; lim += lim / 3) {
		mem_set_limit(mem_used() + lim);
		rc = skill_reg_scan(&r);
		mem_set_limit(0);
		if (rc == -E_NOMEM)
			nomem++;
		else if (rc == 0 && r.n == 20)
			ok++;
		else
			t_fail(__FILE__, __LINE__, "limit %zu: rc %d n %u", lim,
			    rc, r.n);
	}
	T(nomem > 0 && ok > 0);
	rm_rf(tmpl);
	skill_reg_free(&r);
}

/* Make n skills named sNNNN under d, each with a description. */
static void
many(const char *d, int n)
{
	char text[256], rel[64];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(rel, sizeof(rel), "s%04d", i);
		skill_text(text, sizeof(text), rel, "Skill of the memory test.");
		snprintf(rel, sizeof(rel), "s%04d/SKILL.md", i);
		t_put(d, rel, text);
	}
}

/* A fresh folder of n generated skills, or NULL (a failure recorded). */
static const char *
many_tmp(int n)
{
	const char *d = tmpdir();

	T(d != NULL);
	if (d != NULL)
		many(d, n);
	return d;
}

/* What the catalog keeps per skill: the struct, its index slot, the
 * folder path and the description, and little else (the name shares the
 * folder's bytes). Freeing gives everything back. */
static void
catalog_cost(void)
{
	const char *d = many_tmp(SKILL_FULL_MAX);
	const char *roots[1];
	struct skill_reg r;
	size_t base, per, want;

	if (d == NULL)
		return;
	roots[0] = d;
	base = mem_used();
	T(skill_reg_init(&r, roots, 1, NULL, NULL) == 0);
	T(skill_reg_scan(&r) == 0);
	T_EQI(r.n, SKILL_FULL_MAX);
	T(r.v != NULL && r.ix == NULL);
	if (r.v == NULL)
		return;
	per = (mem_used() - base) / SKILL_FULL_MAX;
	want = (sizeof(struct skill) + strlen(r.v[0]->dir) + 1 +
	    strlen(r.v[0]->description) + 1 + 7) / 8 * 8 +
	    sizeof(struct skill *);
	if (per > want + 24)		/* arena chunk headers and tails */
		t_fail(__FILE__, __LINE__, "%zu bytes per skill, want %zu "
		    "(arena %zu)", per, want, arena_size(&r.a[r.cur]));
	T(r.v[0]->name >= r.v[0]->dir &&
	    r.v[0]->name < r.v[0]->dir + strlen(r.v[0]->dir));
	skill_reg_free(&r);
	T_EQI(mem_used(), base);
	rm_rf(tmpl);
}

/* Past SKILL_FULL_MAX skills the registry is an index: the name, flags
 * and folder of each (the folder is the name's bytes in the usual
 * layout), 8 bytes of record and its slot. A skill asked for is read
 * again, once, whole. */
static void
index_cost(void)
{
	const char *d = many_tmp(2000);
	const struct skill *sk;
	const char *roots[1];
	struct skill_reg r;
	struct arena a;
	size_t base, per, want;

	if (d == NULL)
		return;
	roots[0] = d;
	base = mem_used();
	T(skill_reg_init(&r, roots, 1, NULL, NULL) == 0);
	T(skill_reg_scan(&r) == 0);
	T_EQI(r.n, 2000);
	T(r.v == NULL && r.ix != NULL);
	per = (mem_used() - base) / 2000;
	want = (8 + strlen("s0000") + 2 + 7) / 8 * 8 + sizeof(void *);
	if (per > want + 4)
		t_fail(__FILE__, __LINE__, "%zu bytes per skill, want %zu",
		    per, want);
	T_EQS(skill_reg_name(&r, 1999), "s1999");
	sk = skill_find(&r, "s1234");
	T(sk != NULL && sk == skill_find(&r, "s1234"));
	T(sk != NULL && strcmp(sk->description, "Skill of the memory test.")
	    == 0 && strcmp(sk->name, "s1234") == 0);
	T(sk != NULL && strcmp(sk->dir + strlen(d), "/s1234") == 0);
	T(skill_find(&r, "s2000") == NULL);
	arena_init(&a, "test");
	sk = skill_reg_get(&r, 7, &a);
	T(sk != NULL && strcmp(sk->name, "s0007") == 0);
	arena_reset(&a);
	skill_reg_free(&r);
	T_EQI(mem_used(), base);
	rm_rf(tmpl);
}

/* A rescan when the old and the new registry do not fit side by side
 * drops the old one first instead of failing (whole skills: fewer than
 * SKILL_FULL_MAX). */
static void
rescan_tight(void)
{
	const char *d = many_tmp(250);
	const char *roots[1];
	struct skill_reg r;
	char text[256];
	size_t base, one;
	int changed;

	if (d == NULL)
		return;
	roots[0] = d;
	base = mem_used();
	T(skill_reg_init(&r, roots, 1, NULL, NULL) == 0);
	T(skill_reg_scan(&r) == 0);
	one = mem_used() - base;
	skill_text(text, sizeof(text), "s0000", "Edited.");
	t_put(d, "s0000/SKILL.md", text);
	mem_set_limit(base + one + one / 2 + 32 * 1024);
	T(skill_reg_refresh(&r, &changed) == 0);
	mem_set_limit(0);
	T(changed);
	T_EQI(r.n, 250);
	T(skill_find(&r, "s0000") != NULL &&
	    strcmp(skill_find(&r, "s0000")->description, "Edited.") == 0);
	skill_reg_free(&r);
	rm_rf(tmpl);
}

struct each {
	unsigned	 n;
	size_t		 peak;
};

static int
count_one(void *ctx, const struct skill *sk)
{
	struct each *e = ctx;

	e->n += sk->name != NULL && sk->dir != NULL;
	if (mem_used() > e->peak)
		e->peak = mem_used();
	return 0;
}

/* skill_reg_each keeps nothing: its use stays flat as skills go by. */
static void
each_streams(void)
{
	const char *d = many_tmp(300);
	const char *roots[1];
	struct skill_reg r;
	struct each e = { 0, 0 };
	size_t base;

	if (d == NULL)
		return;
	roots[0] = d;
	base = mem_used();
	T(skill_reg_init(&r, roots, 1, NULL, NULL) == 0);
	T(skill_reg_each(&r, count_one, &e) == 0);
	T_EQI(e.n, 300);
	T(e.peak - base < 64 * 1024);
	T_EQI(mem_used(), base);
	rm_rf(tmpl);
}

static const struct unit_case cases[] = {
	{ "name_rules", name_rules },
	{ "scan_and_refresh", scan_and_refresh },
	{ "paths_confined", paths_confined },
	{ "scan_out_of_memory", scan_out_of_memory },
	{ "catalog_cost", catalog_cost },
	{ "index_cost", index_cost },
	{ "rescan_tight", rescan_tight },
	{ "each_streams", each_streams },
};

const struct unit_suite suite_skill = { "skill", cases, ARRAY_LEN(cases) };
