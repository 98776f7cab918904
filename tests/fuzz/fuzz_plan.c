/* fuzz_plan.c - libFuzzer harness for the LightSOPLang plan parser.
 *
 * Byte 0 is a switch: bit 0 gives a command callback that refuses
 * commands starting with 'x', bit 7 asks for an out-of-memory rerun with
 * byte 1 as the limit. The rest is the plan text, parsed in place (so
 * ASan catches a read past its end). A refused plan must say where, with
 * a message; an accepted one must keep the invariants plan.h promises,
 * run to the end under plan_ready, and come back the same from its
 * canonical text.
 */
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "fmt/plan.h"
#include "base/str.h"

#define CHECK(c) do {							\
	if (!(c))							\
		abort();						\
} while (0)

static struct arena a;

static int
no_x(void *ctx, const char *cmd, size_t n)
{
	(void)ctx;
	CHECK(n > 0 && n <= PLAN_MAX_NAME && cmd[n] == '\0');
	return cmd[0] != 'x';
}

static int
is_name(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > PLAN_MAX_NAME)
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' &&
		    s[i] <= 'Z') || s[i] == '_' || (i > 0 && ((s[i] >= '0' &&
		    s[i] <= '9') || s[i] == '-'))))
			return 0;
	return 1;
}

static void
check_step(const struct plan *p, unsigned i)
{
	const struct plan_step *st = &p->steps[i];
	const struct plan_arg *g;
	unsigned k, j;

	CHECK(is_name(st->var) && is_name(st->cmd));
	CHECK(st->line >= 1 && st->col >= 1);
	CHECK(i == 0 || st->line > p->steps[i - 1].line);
	CHECK(plan_is_terminal(st->cmd) == (i == p->n - 1));
	CHECK(st->nargs <= PLAN_MAX_ARGS);
	CHECK(!plan_is_terminal(st->cmd) || st->nargs > 0);
	for (k = 0; k < i; k++)
		CHECK(strcmp(p->steps[k].var, st->var) != 0);
	for (k = 0; k < st->nargs; k++) {
		g = &st->args[k];
		CHECK(g->s != NULL && g->s[g->n] == '\0');
		CHECK(g->n <= PLAN_MAX_LITERAL);
		CHECK(memchr(g->s, '\r', g->n) == NULL);
		if (g->kind == PA_REF) {
			CHECK(g->ref < i);
			CHECK(strcmp(g->s, p->steps[g->ref].var) == 0);
			for (j = 0; j < st->ndeps && st->deps[j] != g->ref; j++)
				;
			CHECK(j < st->ndeps);
		} else if (g->kind == PA_WORD) {
			CHECK(g->n > 0 && g->s[0] != '"' && g->s[0] != '$');
			CHECK(strpbrk(g->s, " \t\n") == NULL);
		} else
			CHECK(g->kind == PA_TEXT);
	}
	for (j = 0; j < st->ndeps; j++) {
		CHECK(st->deps[j] < i);
		CHECK(j == 0 || st->deps[j - 1] < st->deps[j]);
		for (k = 0; k < st->nargs && !(st->args[k].kind == PA_REF &&
		    st->args[k].ref == st->deps[j]); k++)
			;
		CHECK(k < st->nargs);
	}
}

/* Run the plan: the ready steps start and finish round after round; all
 * of them are done within n rounds, the terminal step last. */
static void
check_ready(const struct plan *p)
{
	unsigned out[PLAN_MAX_STEPS], n, k, rounds = 0;
	uint64_t done = 0, all;

	all = p->n == 64 ? ~(uint64_t)0 : ((uint64_t)1 << p->n) - 1;
	CHECK(plan_ready(p, 0, 0, out, PLAN_MAX_STEPS) >= 1);
	CHECK(out[0] == 0);
	while (done != all) {
		CHECK(rounds++ < p->n);
		n = plan_ready(p, done, 0, out, PLAN_MAX_STEPS);
		CHECK(n > 0);
		CHECK(plan_ready(p, done, (uint64_t)1 << out[0], out + n,
		    PLAN_MAX_STEPS - n) == n - 1);
		for (k = 0; k < n; k++) {
			CHECK(!(done >> out[k] & 1));
			CHECK(k == 0 || out[k - 1] < out[k]);
			CHECK(out[k] != p->n - 1 || n == 1);
			done |= (uint64_t)1 << out[k];
		}
	}
	CHECK(plan_ready(p, done, 0, out, PLAN_MAX_STEPS) == 0);
}

static int
same_plan(const struct plan *p, const struct plan *q)
{
	const struct plan_step *x, *y;
	unsigned i, k;

	if (strcmp(p->lang, q->lang) != 0 || p->n != q->n)
		return 0;
	for (i = 0; i < p->n; i++) {
		x = &p->steps[i];
		y = &q->steps[i];
		if (strcmp(x->var, y->var) != 0 ||
		    strcmp(x->cmd, y->cmd) != 0 || x->nargs != y->nargs ||
		    x->ndeps != y->ndeps)
			return 0;
		for (k = 0; k < x->nargs; k++)
			if (x->args[k].kind != y->args[k].kind ||
			    x->args[k].n != y->args[k].n ||
			    memcmp(x->args[k].s, y->args[k].s, x->args[k].n) ||
			    x->args[k].ref != y->args[k].ref)
				return 0;
		for (k = 0; k < x->ndeps; k++)
			if (x->deps[k] != y->deps[k])
				return 0;
	}
	return 1;
}

static void
check_plan(const struct plan *p, plan_known_fn fn)
{
	struct plan_error e;
	struct plan *q;
	struct sbuf s1, s2;
	unsigned i;

	CHECK(p->n >= 1 && p->n <= PLAN_MAX_STEPS);
	CHECK(p->lang != NULL && p->lang[0] != '\0');
	for (i = 0; i < p->n; i++)
		check_step(p, i);
	check_ready(p);
	sbuf_init(&s1, &a, 0);
	CHECK(plan_write(&s1, p) == 0);
	CHECK(plan_parse(&a, s1.p, s1.len, fn, NULL, &q, &e) == 0);
	CHECK(same_plan(p, q));
	sbuf_init(&s2, &a, 0);
	CHECK(plan_write(&s2, q) == 0);
	CHECK(s1.len == s2.len && memcmp(s1.p, s2.p, s1.len) == 0);
}

static void
check_error(int r, const struct plan_error *e, const char *text, size_t n)
{
	size_t i;
	unsigned lines = 1;

	CHECK(r == -E_PARSE || r == -E_LIMIT || r == -E_NOMEM);
	for (i = 0; i < n; i++)
		lines += text[i] == '\n';
	CHECK(e->line >= 1 && e->line <= lines);
	CHECK(e->col >= 1 && e->col <= n + 1);
	CHECK(e->msg[0] != '\0' && strlen(e->msg) < sizeof(e->msg));
}

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int inited;
	struct plan_error e, e2;
	struct plan *p, *q;
	plan_known_fn fn;
	const char *text;
	size_t n;
	int r, r2;

	if (!inited) {
		r = mem_init(64u << 20);
		CHECK(r == 0 || r == -E_INVAL);
		arena_init(&a, "fuzz");
		inited = 1;
	}
	if (size < 2)
		return 0;
	fn = data[0] & 1 ? no_x : NULL;
	text = (const char *)data + 2;
	n = size - 2;
	memset(&e, 0, sizeof(e));
	r = plan_parse(&a, text, n, fn, NULL, &p, &e);
	if (r == 0)
		check_plan(p, fn);
	else {
		CHECK(p == NULL);
		check_error(r, &e, text, n);
	}
	arena_reset(&a);

	if (data[0] & 0x80) {
		memset(&e2, 0, sizeof(e2));
		mem_set_limit(mem_used() + (size_t)data[1] * 64);
		r2 = plan_parse(&a, text, n, fn, NULL, &q, &e2);
		mem_set_limit(0);
		CHECK(r2 == -E_NOMEM || r2 == r);
		if (r2 == r && r != 0)
			CHECK(memcmp(&e, &e2, sizeof(e)) == 0);
		arena_reset(&a);
	}
	return 0;
}
