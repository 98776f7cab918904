/* fuzz_skill.c - libFuzzer harness for the skills registry.
 *
 * Each input becomes the definition file of one skill folder,
 * /tmp/skillbox-fuzz-PID/s/fz, made once per process. The input is
 * SKILL.md, except that a first byte of 1 or 2 makes the rest skill.md or
 * oskill.md. The folder is then checked with skill_validate_dir (strict)
 * and loaded by a registry scan of /tmp/skillbox-fuzz-PID/s (lenient),
 * and the two must agree: no strict error means the skill loads, a skill
 * that does not load was given a fatal finding. Every finding must carry
 * a file, a rule id and a message; the memory in use must come back to
 * where it was after each run.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/arena.h"
#include "skill/skill.h"

#define CHECK(c) do {							\
	if (!(c))							\
		abort();						\
} while (0)

static const char *const files[] = { "SKILL.md", "skill.md", "oskill.md" };

static char top[64], root[80], dir[96];
static struct arena a;

struct count {
	unsigned	n[3];		/* by severity */
	unsigned	max_line;
};

static void
diag(void *ctx, enum skill_sev sev, const char *file, unsigned line,
    const char *rule, const char *msg)
{
	struct count *c = ctx;

	CHECK(sev == SKILL_WARN || sev == SKILL_ERROR || sev == SKILL_FATAL);
	CHECK(file != NULL && file[0] != '\0');
	CHECK(rule != NULL && rule[0] != '\0');
	CHECK(msg != NULL && strlen(msg) < 256);
	CHECK(line <= c->max_line);
	c->n[sev]++;
}

static void
cleanup(void)
{
	char path[PATH_MAX];
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
	rmdir(root);
	rmdir(top);
}

static void
setup(void)
{
	int r = mem_init(64u << 20);

	CHECK(r == 0 || r == -E_INVAL);
	arena_init(&a, "fuzz");
	snprintf(top, sizeof(top), "/tmp/skillbox-fuzz-%ld", (long)getpid());
	snprintf(root, sizeof(root), "%s/s", top);
	snprintf(dir, sizeof(dir), "%s/fz", root);
	CHECK(mkdir(top, 0700) == 0 || access(top, W_OK) == 0);
	CHECK(mkdir(root, 0700) == 0 || access(root, W_OK) == 0);
	CHECK(mkdir(dir, 0700) == 0 || access(dir, W_OK) == 0);
	atexit(cleanup);
}

/* Leave exactly one definition file in the folder: files[which]. */
static void
put(int which, const uint8_t *p, size_t n)
{
	char path[PATH_MAX];
	ssize_t w;
	size_t i;
	int fd;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		if (unlink(path) != 0)
			CHECK(access(path, F_OK) != 0);
	}
	snprintf(path, sizeof(path), "%s/%s", dir, files[which]);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	while (n > 0) {
		w = write(fd, p, n);
		CHECK(w > 0);
		p += w;
		n -= (size_t)w;
	}
	CHECK(close(fd) == 0);
}

/* The lines a finding may name: the file's lines, and one past them. */
static unsigned
max_line(const uint8_t *p, size_t n)
{
	unsigned k = 2;
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] == '\n' || p[i] == '\r' || p[i] == 0xc2 || p[i] == 0xe2)
			k++;
	return k;
}

/* The loaded skill: what the catalog and later calls rely on. */
static void
check_skill(const struct skill_reg *reg, const struct skill *sk, int which)
{
	struct skill_res *res;
	char *fm, *body;
	unsigned bl, n;
	int more;

	CHECK(sk->name != NULL && sk->description != NULL);
	CHECK(skill_find(reg, sk->name) == sk);
	CHECK(strcmp(sk->dir, dir) == 0);
	CHECK(!(sk->flags & SKILL_LOWERCASE) == (which != 1));
	CHECK(!(sk->flags & SKILL_OSKILL) == (which != 2));
	/* A SKILL.md name that breaks the rules is replaced by the folder's.
	 * (oskill.md front-matter names are not checked: see the report.) */
	if (which != 2)
		CHECK(skill_name_rule(sk->name, strlen(sk->name)) == NULL);
	CHECK(skill_load(sk, &a, &fm, &body, &bl) == 0);
	CHECK(body != NULL && bl >= 1);
	if (fm != NULL)
		CHECK(fm < body);
	CHECK(skill_resources(sk, &a, &res, &n, &more) == 0);
	CHECK(n == 0 && !more);
}

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int inited;
	static size_t base;
	const char *roots[1];
	struct count strict, lenient;
	struct skill_reg reg;
	int which = 0, verr, changed;

	if (!inited) {
		setup();
		base = mem_used();
		inited = 1;
	}
	if (size > 0 && (data[0] == 1 || data[0] == 2)) {
		which = data[0];
		data++;
		size--;
	}
	put(which, data, size);
	memset(&strict, 0, sizeof(strict));
	memset(&lenient, 0, sizeof(lenient));
	strict.max_line = lenient.max_line = max_line(data, size);

	verr = skill_validate_dir(&a, dir, diag, &strict);
	CHECK(verr >= 0);
	CHECK((unsigned)verr == strict.n[SKILL_ERROR]);
	CHECK(strict.n[SKILL_FATAL] == 0);
	arena_reset(&a);

	roots[0] = root;
	CHECK(skill_reg_init(&reg, roots, 1, diag, &lenient) == 0);
	CHECK(skill_reg_scan(&reg) == 0);
	CHECK(lenient.n[SKILL_ERROR] == 0);
	CHECK(reg.n <= 1);
	CHECK((reg.n == 1) == (lenient.n[SKILL_FATAL] == 0));
	if (verr == 0)
		CHECK(reg.n == 1);
	if (reg.n == 1)
		check_skill(&reg, reg.v[0], which);
	CHECK(skill_reg_refresh(&reg, &changed) == 0 && !changed);

	arena_reset(&a);
	skill_reg_free(&reg);
	CHECK(mem_used() == base);
	return 0;
}
