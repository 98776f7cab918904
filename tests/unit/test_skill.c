/* test_skill.c - registry scans, change detection and path confinement. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "skill.h"
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
put(const char *root, const char *rel, const char *text)
{
	char path[512], *s;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (s = path + strlen(root) + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	if ((f = fopen(path, "w")) == NULL) {
		t_fail(__FILE__, __LINE__, "cannot write %s", path);
		return;
	}
	fputs(text, f);
	fclose(f);
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
	T_EQS(skill_name_rule("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaa", 65), "name-length");
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
	put(d, "alpha/SKILL.md", text);
	skill_text(text, sizeof(text), "beta", "second");
	put(d, "beta/SKILL.md", text);
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
	put(d, "gamma/SKILL.md", text);
	T(skill_reg_refresh(&r, &changed) == 0);
	T(changed);
	T(skill_find(&r, "gamma") != NULL);

	/* An edit of the file alone (the folder's mtime stays) is seen. */
	{
		struct timespec ts = { 0, 50 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	skill_text(text, sizeof(text), "alpha", "edited description");
	put(d, "alpha/SKILL.md", text);
	T(skill_reg_refresh(&r, &changed) == 0);
	T(changed);
	T_EQS(skill_find(&r, "alpha")->description, "edited description");

	/* Removal is seen. */
	rm_rf(tmpl);
	T(skill_reg_refresh(&r, &changed) == 0);
	T(changed);
	T_EQI(r.n, 0);
	arena_reset(&r.a[0]);
	arena_reset(&r.a[1]);
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
	put(d, "box/SKILL.md", text);
	put(d, "box/references/a.md", "A\n");
	put(d, "other/secret.txt", "secret\n");
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
	arena_reset(&r.a[0]);
	arena_reset(&r.a[1]);
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
		put(d, rel, text);
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
	arena_reset(&r.a[0]);
	arena_reset(&r.a[1]);
}

static const struct unit_case cases[] = {
	{ "name_rules", name_rules },
	{ "scan_and_refresh", scan_and_refresh },
	{ "paths_confined", paths_confined },
	{ "scan_out_of_memory", scan_out_of_memory },
};

const struct unit_suite suite_skill = { "skill", cases, ARRAY_LEN(cases) };
