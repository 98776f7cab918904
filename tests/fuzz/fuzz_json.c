/* fuzz_json.c - libFuzzer harness for the JSON reader and writer.
 *
 * Each input is parsed whole, then fed in pieces at split points drawn
 * from the input itself; the two must agree. A document that parses is
 * written out again through the writer and the output must parse to the
 * same shape, with the same strings where they were valid UTF-8. A last
 * run under a memory limit must fail only with -E_NOMEM.
 */
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "fmt/json.h"
#include "base/str.h"

#define MAXTOK	(1u << 14)

#define CHECK(c) do {							\
	if (!(c))							\
		abort();						\
} while (0)

static struct arena a;

static uint32_t
next_rand(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

/* Feed growing prefixes; returns the last result. */
static int
feed_split(const char *js, size_t len, struct json_doc *out)
{
	struct json_parser p;
	uint32_t x = 2166136261u;
	size_t i, k = 0;
	int r = -E_PART, done = 0;

	for (i = 0; i < len && i < 16; i++)
		x = (x ^ (unsigned char)js[i]) * 16777619u;
	x |= 1;
	json_parser_init(&p, &a, MAXTOK);
	while (k < len) {
		k += next_rand(&x) % 4 == 0 ? 1 : 1 + next_rand(&x) % 64;
		if (k > len)
			k = len;
		r = json_parser_feed(&p, js, k);
		if (r == 0)
			done = 1;
		else if (r != -E_PART)
			return r;
		else
			CHECK(!done);
	}
	if (r == 0)
		*out = p.doc;
	return r;
}

/* Write d out again through the writer, without recursion. */
static int
rewrite(const struct json_doc *d, struct sbuf *sb)
{
	struct json_writer w;
	int rem[JSON_MAX_DEPTH + 1], obj[JSON_MAX_DEPTH + 1];
	int depth = 0, key;
	unsigned i;
	char *s;
	size_t n;

	json_writer_init(&w, sb);
	for (i = 0; i < d->n; i++) {
		const struct json_tok *t = &d->t[i];

		while (depth > 0 && rem[depth - 1] == 0) {
			if (obj[--depth])
				json_end_obj(&w);
			else
				json_end_arr(&w);
		}
		key = 0;
		if (depth > 0 && rem[depth - 1]-- % 2 == 0)
			key = obj[depth - 1];
		switch (t->type) {
		case JSON_OBJ:
		case JSON_ARR:
			CHECK(depth < JSON_MAX_DEPTH && !key);
			obj[depth] = t->type == JSON_OBJ;
			rem[depth++] = t->size * (t->type == JSON_OBJ ? 2 : 1);
			if (t->type == JSON_OBJ)
				json_begin_obj(&w);
			else
				json_begin_arr(&w);
			break;
		case JSON_STR:
			if (json_str(d, &a, (int)i, &s, &n) != 0)
				s = "", n = 0;
			if (key)
				json_key(&w, s);
			else
				json_put_strn(&w, s, n);
			break;
		case JSON_PRIM:
			CHECK(!key);
			json_put_raw(&w, d->js + t->start,
			    (size_t)(t->end - t->start));
			break;
		}
	}
	while (depth > 0)
		if (obj[--depth])
			json_end_obj(&w);
		else
			json_end_arr(&w);
	return json_writer_err(&w);
}

/* The output of rewrite() against its source. */
static void
compare(const struct json_doc *d, const struct json_doc *e)
{
	char *s1, *s2;
	size_t n1, n2;
	unsigned i;

	CHECK(e->n == d->n);
	for (i = 0; i < d->n; i++) {
		CHECK(e->t[i].type == d->t[i].type);
		CHECK(e->t[i].size == d->t[i].size);
		if (d->t[i].type != JSON_STR ||
		    json_str(d, &a, (int)i, &s1, &n1) != 0)
			continue;
		CHECK(json_str(e, &a, (int)i, &s2, &n2) == 0);
		if (str_is_utf8(s1, n1) && strlen(s1) == n1)
			CHECK(n1 == n2 && memcmp(s1, s2, n1) == 0);
		CHECK(str_is_utf8(s2, n2));
	}
}

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int inited;
	const char *js = (const char *)data;
	struct json_doc d, f, e;
	struct sbuf sb;
	int r, rf, rl;

	if (!inited) {
		r = mem_init(64u << 20);
		CHECK(r == 0 || r == -E_INVAL);
		arena_init(&a, "fuzz");
		inited = 1;
	}
	arena_reset(&a);

	r = json_parse(&a, js, size, MAXTOK, &d);
	CHECK(r == 0 || r == -E_PARSE || r == -E_LIMIT);
	rf = feed_split(js, size, &f);
	CHECK(rf == 0 || rf == -E_PART || rf == -E_PARSE || rf == -E_LIMIT);
	if (rf == 0)
		CHECK(r == 0 && f.n == d.n &&
		    memcmp(f.t, d.t, d.n * sizeof(*d.t)) == 0);
	if (r == 0)
		CHECK(rf == 0 || (rf == -E_PART && d.n == 1 &&
		    d.t[0].type == JSON_PRIM));
	else
		CHECK(rf != 0);

	if (r == 0) {
		CHECK(json_skip(&d, 0) == (int)d.n);
		sbuf_init(&sb, &a, 0);
		CHECK(rewrite(&d, &sb) == 0);
		CHECK(str_is_utf8(sb.p, sb.len));
		CHECK(json_parse(&a, sb.p, sb.len, MAXTOK, &e) == 0);
		compare(&d, &e);
	}

	/* Out of memory part way: the same answer, or -E_NOMEM. */
	arena_reset(&a);
	mem_set_limit(mem_used() + 4096 + (size ? data[size - 1] * 64 : 0));
	rl = json_parse(&a, js, size, MAXTOK, &d);
	mem_set_limit(0);
	CHECK(rl == r || rl == -E_NOMEM);
	arena_reset(&a);
	return 0;
}
