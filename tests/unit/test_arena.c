/* test_arena.c - the budget heap and arenas. */
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "unit.h"

static void
heap_basic(void)
{
	size_t used = mem_used();
	char *a = mem_alloc(100), *b = mem_alloc(200), *c;

	T(a != NULL && b != NULL);
	T(((uintptr_t)a & (2 * sizeof(size_t) - 1)) == 0);
	memset(a, 1, 100);
	memset(b, 2, 200);
	T(mem_used() > used);
	mem_free(a);
	c = mem_alloc(50);		/* reuses the hole left by a */
	T(c == a);
	mem_free(b);
	mem_free(c);
	T_EQI(mem_used(), used);
}

static void
heap_coalesce(void)
{
	size_t used = mem_used();
	void *p[64], *big;
	int i;

	for (i = 0; i < 64; i++)
		T((p[i] = mem_alloc(1000)) != NULL);
	for (i = 0; i < 64; i += 2)
		mem_free(p[i]);
	for (i = 1; i < 64; i += 2)
		mem_free(p[i]);
	T_EQI(mem_used(), used);
	/* all 64 holes merged: one block of 60 KiB fits where they were */
	big = mem_alloc(60000);
	T(big != NULL && (char *)big <= (char *)p[0] + 64);
	mem_free(big);
}

static void
heap_realloc(void)
{
	char *p = mem_alloc(10), *q;
	int i;

	memcpy(p, "0123456789", 10);
	for (i = 0; i < 12; i++) {
		q = mem_realloc(p, (size_t)(16 << i));
		T(q != NULL);
		T(memcmp(q, "0123456789", 10) == 0);
		p = q;
	}
	p = mem_realloc(p, 5);		/* shrink keeps the head */
	T(p != NULL && memcmp(p, "01234", 5) == 0);
	mem_free(p);
	T(mem_realloc(NULL, 8) != NULL);
}

static void
heap_limit(void)
{
	unsigned long fails = mem_fail_count();
	void *p;

	mem_set_limit(mem_used() + 4096);
	T(mem_alloc(8192) == NULL);
	T(mem_fail_count() == fails + 1);
	T(mem_failed_request() == 8192);
	T((p = mem_alloc(1000)) != NULL);
	mem_free(p);
	mem_set_limit(0);
	T((p = mem_alloc(8192)) != NULL);
	mem_free(p);
	T(mem_alloc((size_t)-1 / 2) == NULL);
	T(mem_alloc(mem_budget() + 1) == NULL);
}

static void
libc_malloc(void)
{
	size_t used = mem_used();
	char *p = malloc(1000);
	char *z = calloc(10, 100);
	volatile size_t huge = (size_t)-1 / 2;
	int i, zero = 1;

	T(p != NULL && z != NULL);
	T(mem_used() >= used + 2000);	/* libc's malloc is ours */
	for (i = 0; i < 1000; i++)
		zero &= z[i] == 0;
	T(zero);
	T(calloc(huge, 4) == NULL);
	free(p);
	free(z);
	T_EQI(mem_used(), used);
}

static void
arena_marks(void)
{
	struct arena a;
	struct arena_mark m;
	size_t used = mem_used();
	char *s, *t;
	int i;

	arena_init(&a, "t");
	s = arena_strdup(&a, "hello");
	T_EQS(s, "hello");
	m = arena_mark(&a);
	for (i = 0; i < 1000; i++)
		T(arena_alloc(&a, 100) != NULL);
	T(arena_size(&a) > 100000);
	arena_reset_to(&a, m);
	T(arena_size(&a) < 8192);
	t = arena_strdup(&a, "world");
	T_EQS(s, "hello");
	T_EQS(t, "world");
	T(arena_alloc(&a, 100000) != NULL);	/* bigger than a chunk */
	T_EQS(arena_printf(&a, "%d-%s", 42, "x"), "42-x");
	T(((uintptr_t)arena_alloc(&a, 3) & 7) == 0);
	arena_reset(&a);
	T_EQI(mem_used(), used);
}

static void
arena_oom(void)
{
	struct arena a;

	arena_init(&a, "t");
	mem_set_limit(mem_used() + 16384);
	T(arena_alloc(&a, 100000) == NULL);
	T(arena_strndup(&a, "x", 1) != NULL);
	mem_set_limit(0);
	arena_reset(&a);
}

static void
parse_size(void)
{
	size_t n;

	T(mem_parse_size("1024", &n) == 0 && n == 1024);
	T(mem_parse_size("512k", &n) == 0 && n == 512 << 10);
	T(mem_parse_size("4M", &n) == 0 && n == 4 << 20);
	T(mem_parse_size("2MiB", &n) == 0 && n == 2 << 20);
	T(mem_parse_size("1KB", &n) == 0 && n == 1024);
	T(mem_parse_size("", &n) == -E_INVAL);
	T(mem_parse_size("k", &n) == -E_INVAL);
	T(mem_parse_size("12q", &n) == -E_INVAL);
	T(mem_parse_size("-1", &n) == -E_INVAL);
	T(mem_parse_size("99999999999999999999", &n) == -E_INVAL);
}

static void
init_twice(void)
{
	T(mem_init(1 << 20) == -E_INVAL);	/* already reserved */
}

static const struct unit_case cases[] = {
	{ "heap_basic", heap_basic },
	{ "heap_coalesce", heap_coalesce },
	{ "heap_realloc", heap_realloc },
	{ "heap_limit", heap_limit },
	{ "libc_malloc", libc_malloc },
	{ "arena_marks", arena_marks },
	{ "arena_oom", arena_oom },
	{ "parse_size", parse_size },
	{ "init_twice", init_twice },
};

const struct unit_suite suite_arena = { "arena", cases, ARRAY_LEN(cases) };
