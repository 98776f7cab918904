/* fuzz_sse.c - libFuzzer harness for the SSE and NDJSON push parsers.
 *
 * Each input goes to both parsers three ways: whole, in pieces at split
 * points drawn from the input itself, and one byte at a time. All three
 * must see the same events (a hash of every field, in order), the same
 * counts and the same result. The buffer size and a callback that fails
 * at some event also come from the input, so -E_LIMIT and sticky errors
 * are exercised; every event is checked against the parsers' promises.
 */
#include <stdlib.h>
#include <string.h>

#include "fmt/sse.h"

#define CHECK(c) do {							\
	if (!(c))							\
		abort();						\
} while (0)

#define MAXCAP	4096

struct seen {
	uint64_t	hash;
	unsigned long	n;
	unsigned long	fail_at;	/* fail with -E_IO at this call */
	unsigned long	mark_n;		/* keep the hash after mark_n calls */
	uint64_t	mark_hash;
	size_t		cap;
	int		err;		/* the result */
	uint64_t	bytes;
	unsigned long	count;		/* the parser's own count */
	long		retry;
	char		id[SSE_ID_MAX];
};

static void
mix(struct seen *s, const char *p, size_t n)
{
	size_t i;

	s->hash = (s->hash ^ n) * 1099511628211u;
	for (i = 0; i < n; i++)
		s->hash = (s->hash ^ (unsigned char)p[i]) * 1099511628211u;
}

static int
counted(struct seen *s)
{
	if (++s->n == s->mark_n)
		s->mark_hash = s->hash;
	return s->n == s->fail_at ? -E_IO : 0;
}

static int
on_event(void *ctx, const struct sse_event *ev)
{
	struct seen *s = ctx;

	CHECK(ev->event_len > 0 && ev->event[ev->event_len] == '\0');
	CHECK(ev->data[ev->data_len] == '\0');
	CHECK(ev->id[ev->id_len] == '\0');
	CHECK(ev->data_len < s->cap);
	CHECK(ev->event_len < SSE_EVENT_MAX && ev->id_len < SSE_ID_MAX);
	CHECK(memchr(ev->id, '\0', ev->id_len) == NULL);
	CHECK(memchr(ev->data, '\r', ev->data_len) == NULL);
	CHECK(memchr(ev->event, '\n', ev->event_len) == NULL);
	CHECK(memchr(ev->event, '\r', ev->event_len) == NULL);
	CHECK(memchr(ev->id, '\n', ev->id_len) == NULL);
	CHECK(memchr(ev->id, '\r', ev->id_len) == NULL);
	mix(s, ev->event, ev->event_len);
	mix(s, ev->data, ev->data_len);
	mix(s, ev->id, ev->id_len);
	return counted(s);
}

static int
on_line(void *ctx, const char *line, size_t len)
{
	struct seen *s = ctx;

	CHECK(len > 0 && len < s->cap && line[len] == '\0');
	CHECK(memchr(line, '\n', len) == NULL);
	mix(s, line, len);
	return counted(s);
}

static uint32_t
next_rand(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

/* Set for runs with the parsers' own, growing buffers (sse_init(NULL)). */
static int own;

/* Feed in[0..n) in pieces: mode 0 whole, 1 random, 2 one byte. Each piece
 * is a copy, wiped after the call, so nothing may point into it. */
static void
run(int nd, const char *in, size_t n, int mode, struct seen *s)
{
	static char buf[MAXCAP + 1], piece[8192];
	struct sse p;
	struct ndjson q;
	uint32_t x = 2166136261u;
	size_t i, off = 0, k;
	unsigned long calls;
	int e = 0, e2;

	for (i = 0; i < n && i < 16; i++)
		x = (x ^ (unsigned char)in[i]) * 16777619u;
	x |= 1;
	s->hash = s->mark_hash = 14695981039346656037u;
	s->n = 0;
	buf[s->cap] = '#';
	sse_init(&p, own ? NULL : buf, s->cap);
	ndjson_init(&q, own ? NULL : buf, s->cap);
	while (off < n && e == 0) {
		if (mode == 0)
			k = n - off;
		else if (mode == 2)
			k = 1;
		else
			k = next_rand(&x) % 4 == 0 ? next_rand(&x) % 3 :
			    1 + next_rand(&x) % 97;
		k = MIN(k, MIN(n - off, sizeof(piece)));
		memcpy(piece, in + off, k);
		e = nd ? ndjson_feed(&q, piece, k, on_line, s) :
		    sse_feed(&p, piece, k, on_event, s);
		memset(piece, 0xa5, k);
		off += k;
	}
	if (e == 0)
		e = nd ? ndjson_finish(&q, on_line, s) :
		    sse_finish(&p, on_event, s);
	CHECK(buf[s->cap] == '#');
	if (own) {
		CHECK(p.cap <= s->cap && q.cap <= s->cap);
		sse_free(&p);
		ndjson_free(&q);
	}
	CHECK(e == 0 || e == -E_LIMIT || e == -E_PART || e == -E_IO);
	CHECK(e != -E_PART || !nd);
	CHECK((e == -E_IO) == (s->fail_at != 0 && s->n == s->fail_at));
	/* Errors stick, but -E_PART is no error of the parser's. */
	if (e != 0 && e != -E_PART) {
		calls = s->n;
		e2 = nd ? ndjson_feed(&q, "\n\n", 2, on_line, s) :
		    sse_feed(&p, "\n\n", 2, on_event, s);
		CHECK(e2 == e);
		e2 = nd ? ndjson_finish(&q, on_line, s) :
		    sse_finish(&p, on_event, s);
		CHECK(e2 == e && s->n == calls);
	}
	s->err = e;
	s->bytes = nd ? q.bytes : p.bytes;
	s->count = nd ? q.lines : p.events;
	s->retry = nd ? 0 : p.retry_ms;
	memcpy(s->id, nd ? "" : p.id, nd ? 1 : sizeof(s->id));
	CHECK(s->count == s->n);
	if (e == 0)
		CHECK(s->bytes == n);
}

static void
same(const struct seen *a, const struct seen *b)
{
	CHECK(a->hash == b->hash && a->n == b->n && a->err == b->err &&
	    a->count == b->count && a->retry == b->retry &&
	    strcmp(a->id, b->id) == 0);
	/* After an error, the whole feed counted bytes it did not parse. */
	if (a->err == 0)
		CHECK(a->bytes == b->bytes);
}

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data;
	struct seen w, r, b;
	int nd, mode;

	memset(&w, 0, sizeof(w));
	/* The first byte picks the buffer size, the last the failing call. */
	w.cap = size > 0 && data[0] < 0x20 ? 8 + data[0] * 4u : MAXCAP;
	w.fail_at = size > 0 && data[size - 1] % 16 == 0 ?
	    1 + data[size - 1] / 16 % 8 : 0;
	for (nd = 0; nd < 2; nd++) {
		run(nd, in, size, 0, &w);
		for (mode = 1; mode < 3; mode++) {
			r = w;
			run(nd, in, size, mode, &r);
			same(&w, &r);
		}
		/* Own buffers that grow: the same events and result. */
		r = w;
		own = 1;
		run(nd, in, size, 1, &r);
		own = 0;
		same(&w, &r);
		/* With room to spare, -E_LIMIT goes away and nothing else
		 * changes before the point it was hit. */
		if (w.err == -E_LIMIT && w.cap < MAXCAP) {
			b = w;
			b.cap = MAXCAP;
			b.mark_n = w.n;
			run(nd, in, size, 0, &b);
			CHECK(b.n >= w.n && b.mark_hash == w.hash);
		}
	}
	return 0;
}
