/* test_sse.c - the text/event-stream and NDJSON push parsers. */
#include <string.h>

#include "fmt/json.h"
#include "fmt/sse.h"
#include "base/str.h"
#include "unit.h"

#define CAP	4096

/* What the callbacks saw: SSE events as "[event|id|data]", NDJSON lines
 * as "[line]". */
struct rec {
	struct sbuf	sb;
	unsigned	n;
	unsigned	fail_at;	/* return -E_IO at this call; 0 never */
};

static int
rec_event(void *ctx, const struct sse_event *ev)
{
	struct rec *r = ctx;

	T(ev->event != NULL && ev->data != NULL && ev->id != NULL);
	T(ev->event_len > 0);
	T(ev->event[ev->event_len] == '\0');
	T(ev->data[ev->data_len] == '\0');
	T(ev->id[ev->id_len] == '\0');
	T(memchr(ev->id, '\0', ev->id_len) == NULL);
	sbuf_addc(&r->sb, '[');
	sbuf_add(&r->sb, ev->event, ev->event_len);
	sbuf_addc(&r->sb, '|');
	sbuf_add(&r->sb, ev->id, ev->id_len);
	sbuf_addc(&r->sb, '|');
	sbuf_add(&r->sb, ev->data, ev->data_len);
	sbuf_addc(&r->sb, ']');
	return ++r->n == r->fail_at ? -E_IO : 0;
}

static int
rec_line(void *ctx, const char *line, size_t len)
{
	struct rec *r = ctx;

	T(len > 0);
	T(line[len] == '\0');
	T(memchr(line, '\n', len) == NULL);
	sbuf_addc(&r->sb, '[');
	sbuf_add(&r->sb, line, len);
	sbuf_addc(&r->sb, ']');
	return ++r->n == r->fail_at ? -E_IO : 0;
}

/* Set while the cases run again with the parsers' own, growing buffers. */
static int own_buf;

/* Feed in[0..n) to a fresh parser (NDJSON if nd): first `first` bytes,
 * then pieces of `step` bytes (0: the rest at once), then finish. Every
 * piece is a copy, wiped once fed, and the buffer starts dirty, so the
 * parser can keep nothing of the caller's. Returns the first error. */
static int
run(int nd, const char *in, size_t n, size_t cap, size_t first,
    size_t step, struct rec *r)
{
	struct sse p;
	struct ndjson q;
	char *buf, *piece;
	size_t off = 0, k;
	int e = 0;

	buf = arena_alloc(&t_arena, cap + 1);
	piece = arena_alloc(&t_arena, n + 1);
	if (buf == NULL || piece == NULL)
		return -E_NOMEM;
	memset(buf, '#', cap + 1);
	sbuf_init(&r->sb, &t_arena, 0);
	r->n = 0;
	sse_init(&p, own_buf ? NULL : buf, cap);
	ndjson_init(&q, own_buf ? NULL : buf, cap);
	while (off < n && e == 0) {
		k = off == 0 ? first : step;
		if (k == 0 || k > n - off)
			k = n - off;
		memcpy(piece, in + off, k);
		e = nd ? ndjson_feed(&q, piece, k, rec_line, r) :
		    sse_feed(&p, piece, k, rec_event, r);
		memset(piece, '@', k);
		off += k;
	}
	if (e == 0)
		e = nd ? ndjson_finish(&q, rec_line, r) :
		    sse_finish(&p, rec_event, r);
	T(buf[cap] == '#');
	if (own_buf) {
		T(nd ? p.buf == NULL : q.buf == NULL);	/* the other is idle */
		T((nd ? q.cap : p.cap) <= cap);
		sse_free(&p);
		ndjson_free(&q);
		T(p.buf == NULL && q.buf == NULL);
	}
	if (e == 0)
		T_EQI(nd ? q.bytes : p.bytes, n);
	return e;
}

/* Run a NUL-terminated input whole; the record, or "(nomem)". */
static const char *
sse_z(const char *in, int *err)
{
	struct rec r = { .fail_at = 0 };

	*err = run(0, in, strlen(in), CAP, 0, 0, &r);
	return r.sb.err == 0 ? r.sb.p : "(nomem)";
}

static const char *
nd_z(const char *in, int *err)
{
	struct rec r = { .fail_at = 0 };

	*err = run(1, in, strlen(in), CAP, 0, 0, &r);
	return r.sb.err == 0 ? r.sb.p : "(nomem)";
}

/* The same events and result whole, split at every point, and in pieces
 * of 1, 2, 3 and 7 bytes. */
static void
same_split(int nd, const char *in, size_t n, size_t cap, unsigned fail_at)
{
	static const size_t steps[] = { 1, 2, 3, 7 };
	struct rec w = { .fail_at = fail_at }, s = { .fail_at = fail_at };
	struct arena_mark m;
	size_t i;
	int ew, es;

	ew = run(nd, in, n, cap, 0, 0, &w);
	T_EQI(w.sb.err, 0);
	m = arena_mark(&t_arena);
	for (i = 0; i <= n + ARRAY_LEN(steps); i++) {
		arena_reset_to(&t_arena, m);
		if (i <= n)
			es = run(nd, in, n, cap, i, 0, &s);
		else
			es = run(nd, in, n, cap, steps[i - n - 1],
			    steps[i - n - 1], &s);
		if (es != ew || s.n != w.n || s.sb.len != w.sb.len ||
		    memcmp(s.sb.p, w.sb.p, w.sb.len) != 0)
			t_fail(__FILE__, __LINE__, "%s split %zu of \"%.40s\": "
			    "%d \"%s\" != %d \"%s\"", nd ? "ndjson" : "sse", i,
			    in, es, s.sb.p, ew, w.sb.p);
	}
}

static void
t_basic(void)
{
	int e;

	T_EQS(sse_z("data: hello\n\n", &e), "[message||hello]");
	T_EQI(e, 0);
	T_EQS(sse_z("data:hello\n\ndata:  two\n\n", &e),
	    "[message||hello][message|| two]");
	T_EQS(sse_z("data: a:b: c\n\n", &e), "[message||a:b: c]");
	/* A data line with no value still makes an event, with no data. */
	T_EQS(sse_z("data\n\n", &e), "[message||]");
	T_EQS(sse_z("data:\n\n", &e), "[message||]");
	T_EQS(sse_z("data: \n\n", &e), "[message||]");
	T_EQS(sse_z("data\ndata\n\n", &e), "[message||\n]");
	/* No data, no event. */
	T_EQS(sse_z("\n\n\n", &e), "");
	T_EQS(sse_z("", &e), "");
	T_EQI(e, 0);
	T_EQS(sse_z("foo: bar\nDATA: x\ndata : y\n\n", &e), "");
	T_EQS(sse_z(" data: x\n\n", &e), "");
}

static void
t_multiline(void)
{
	int e;

	T_EQS(sse_z("data: a\ndata: b\n\n", &e), "[message||a\nb]");
	T_EQS(sse_z("data: a\ndata:\ndata: b\n\n", &e), "[message||a\n\nb]");
	T_EQS(sse_z("data: a\n\ndata: b\ndata: c\n\n", &e),
	    "[message||a][message||b\nc]");
	T_EQS(sse_z("data: {\ndata:   \"k\": 1\ndata: }\n\n", &e),
	    "[message||{\n  \"k\": 1\n}]");
	T_EQI(e, 0);
}

static void
t_comments(void)
{
	int e;

	T_EQS(sse_z(": ping\n\n", &e), "");
	T_EQS(sse_z(":\n:\n\n", &e), "");
	T_EQS(sse_z("data: x\n: comment\ndata: y\n:data: z\n\n", &e),
	    "[message||x\ny]");
	T_EQS(sse_z(": keepalive\n\ndata: 1\n\n: bye\n", &e),
	    "[message||1]");
	T_EQI(e, 0);
}

static void
t_fields(void)
{
	struct sse p;
	struct rec r = { .fail_at = 0 };
	char buf[256];
	const char *in;
	int e;

	T_EQS(sse_z("event: add\ndata: 1\n\n", &e), "[add||1]");
	/* The type lasts one event; the ID stays until changed. */
	T_EQS(sse_z("event: a\nid: 7\ndata: 1\n\ndata: 2\n\nid\ndata: 3\n\n",
	    &e), "[a|7|1][message|7|2][message||3]");
	T_EQS(sse_z("event\ndata: x\n\nevent:\ndata: y\n\n", &e),
	    "[message||x][message||y]");
	/* An event with no data resets the type but keeps the ID. */
	T_EQS(sse_z("event: e\nid: 9\n\ndata: z\n\n", &e), "[message|9|z]");
	/* The last field wins; order does not matter. */
	T_EQS(sse_z("data: d\nevent: x\nid: 1\nevent: y\nid: 2\n\n", &e),
	    "[y|2|d]");
	T_EQS(sse_z("id: a b \ndata: x\n\n", &e), "[message|a b |x]");
	T_EQI(e, 0);

	/* An ID holding NUL is ignored; data passes NUL through. */
	{
		static const char nul[] =
		    "id: 1\n\nid: 2\0x\ndata: a\0b\n\n";

		T_EQI(run(0, nul, sizeof(nul) - 1, CAP, 0, 0, &r), 0);
		T_EQI(r.sb.len, 15);
		T(memcmp(r.sb.p, "[message|1|a\0b]", 15) == 0);
		same_split(0, nul, sizeof(nul) - 1, CAP, 0);
	}

	sse_init(&p, buf, sizeof(buf));
	sbuf_init(&r.sb, &t_arena, 0);
	T_EQI(p.retry_ms, -1);
	T_EQI(sse_feed(&p, "retry: 3000\n", 12, rec_event, &r), 0);
	T_EQI(p.retry_ms, 3000);
	T_EQI(sse_feed(&p, "retry:250\n", 10, rec_event, &r), 0);
	T_EQI(p.retry_ms, 250);
	T_EQI(sse_feed(&p, "retry: 0\n", 9, rec_event, &r), 0);
	T_EQI(p.retry_ms, 0);
	T_EQI(sse_feed(&p, "retry: 00100\n", 13, rec_event, &r), 0);
	T_EQI(p.retry_ms, 100);
	/* Not only digits: ignored. */
	in = "retry: 10a\nretry: -5\nretry:  7\nretry: 1.5\nretry:\nretry\n"
	    "retry: 1 \nretry: \xd9\xa1\n";
	T_EQI(sse_feed(&p, in, strlen(in), rec_event, &r), 0);
	T_EQI(p.retry_ms, 100);
	in = "retry: 99999999999999999999999\n";
	T_EQI(sse_feed(&p, in, strlen(in), rec_event, &r), 0);
	T_EQI(p.retry_ms, SSE_RETRY_MAX);
	r.n = 0;
	T_EQI(sse_feed(&p, "id: abc\nevent: x\n\n", 18, rec_event, &r), 0);
	T_EQS(p.id, "abc");
	T_EQI(p.events, 0);
	T_EQI(r.n, 0);
}

static void
t_line_ends(void)
{
	static const char *const in[] = {
		"event: e\ndata: a\ndata: b\n\ndata: c\n\n",
		"event: e\rdata: a\rdata: b\r\rdata: c\r\r",
		"event: e\r\ndata: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n",
		"event: e\r\ndata: a\rdata: b\n\r\ndata: c\r\r",
	};
	size_t i;
	int e;

	for (i = 0; i < ARRAY_LEN(in); i++) {
		T_EQS(sse_z(in[i], &e), "[e||a\nb][message||c]");
		T_EQI(e, 0);
		same_split(0, in[i], strlen(in[i]), CAP, 0);
	}
	/* LF then CR is two line ends, CR CR too. */
	T_EQS(sse_z("data: a\n\rdata: b\r\r", &e), "[message||a][message||b]");
	T_EQS(sse_z("data: a\r\n\r\n\r\ndata: b\n\r\n", &e),
	    "[message||a][message||b]");
}

static void
t_crlf_split(void)
{
	struct sse p;
	struct rec r = { .fail_at = 0 };
	char buf[64];

	sse_init(&p, buf, sizeof(buf));
	sbuf_init(&r.sb, &t_arena, 0);
	T_EQI(sse_feed(&p, "data: a\r", 8, rec_event, &r), 0);
	T_EQI(sse_feed(&p, "\n", 1, rec_event, &r), 0);
	T_EQI(r.n, 0);		/* one line end, not a blank line */
	T_EQI(sse_feed(&p, "\r", 1, rec_event, &r), 0);
	T_EQI(r.n, 1);
	T_EQI(sse_feed(&p, "\ndata: b\r", 9, rec_event, &r), 0);
	T_EQI(sse_feed(&p, "\r", 1, rec_event, &r), 0);
	T_EQI(r.n, 2);
	T_EQI(sse_feed(&p, "\n", 1, rec_event, &r), 0);	/* ends "\r" */
	T_EQI(sse_feed(&p, "data: c\r\n", 9, rec_event, &r), 0);
	T_EQI(sse_feed(&p, "", 0, rec_event, &r), 0);
	T_EQI(sse_feed(&p, "\r", 1, rec_event, &r), 0);
	T_EQI(sse_feed(&p, "", 0, rec_event, &r), 0);
	T_EQI(sse_feed(&p, "\n", 1, rec_event, &r), 0);
	T_EQI(sse_finish(&p, rec_event, &r), 0);
	T_EQS(r.sb.p, "[message||a][message||b][message||c]");
	T_EQI(p.events, 3);
}

static void
t_bom(void)
{
	static const char bom[] = "\xef\xbb\xbf" "data: x\n\n";
	struct sse p;
	struct rec r = { .fail_at = 0 };
	char buf[64];
	int e;
	size_t i;

	T_EQS(sse_z(bom, &e), "[message||x]");
	T_EQS(sse_z("\xef\xbb\xbf\xef\xbb\xbf" "data: x\n\n", &e), "");
	T_EQS(sse_z("\xef\xbb\xbf\n" "data: x\n\n", &e), "[message||x]");
	T_EQS(sse_z("\xef\xbb\xbf: c\n" "data: x\n\n", &e), "[message||x]");
	T_EQS(sse_z("\xef\xbb" "data: x\n\n", &e), "");
	/* Only at the very start of the stream. */
	T_EQS(sse_z("\n\xef\xbb\xbf" "data: x\n\n", &e), "");
	T_EQS(sse_z("data: \xef\xbb\xbf\n\n", &e), "[message||\xef\xbb\xbf]");
	same_split(0, bom, strlen(bom), CAP, 0);
	sse_init(&p, buf, sizeof(buf));
	sbuf_init(&r.sb, &t_arena, 0);
	for (i = 0; i < strlen(bom); i++)
		T_EQI(sse_feed(&p, bom + i, 1, rec_event, &r), 0);
	T_EQS(r.sb.p, "[message||x]");
}

static void
t_finish(void)
{
	int e;

	/* The server closed without the last blank line. */
	T_EQS(sse_z("data: a\n\ndata: b\n", &e), "[message||a][message||b]");
	T_EQI(e, 0);
	T_EQS(sse_z("event: end\ndata: b\r", &e), "[end||b]");
	T_EQI(e, 0);
	T_EQS(sse_z("data: a\n\nevent: x\n", &e), "[message||a]");
	T_EQI(e, 0);
	/* Cut mid-line: the event is not taken as complete. */
	T_EQS(sse_z("data: a\n\ndata: b\ndata: c", &e), "[message||a]");
	T_EQI(e, -E_PART);
	T_EQS(sse_z("data: a\n\n:", &e), "[message||a]");
	T_EQI(e, -E_PART);
	T_EQS(sse_z("\xef\xbb", &e), "");
	T_EQI(e, -E_PART);

	T_EQS(nd_z("{\"a\":1}\n{\"b\":2}", &e), "[{\"a\":1}][{\"b\":2}]");
	T_EQI(e, 0);
	T_EQS(nd_z("{\"a\":1}\n\r", &e), "[{\"a\":1}]");
	T_EQI(e, 0);
	T_EQS(nd_z("x\r\n", &e), "[x]");
	T_EQI(e, 0);

	/* finish twice: nothing more happens. */
	{
		struct sse p;
		struct ndjson q;
		struct rec r = { .fail_at = 0 };
		char buf[64];

		sbuf_init(&r.sb, &t_arena, 0);
		sse_init(&p, buf, sizeof(buf));
		T_EQI(sse_feed(&p, "data: a\n", 8, rec_event, &r), 0);
		T_EQI(sse_finish(&p, rec_event, &r), 0);
		T_EQI(sse_finish(&p, rec_event, &r), 0);
		T_EQI(r.n, 1);
		ndjson_init(&q, buf, sizeof(buf));
		T_EQI(ndjson_feed(&q, "1", 1, rec_line, &r), 0);
		T_EQI(ndjson_finish(&q, rec_line, &r), 0);
		T_EQI(ndjson_finish(&q, rec_line, &r), 0);
		T_EQI(r.n, 2);
		T_EQS(r.sb.p, "[message||a][1]");
	}
}

static const struct str sse_inputs[] = {
	STR("data: hello\n\n"),
	STR("\xef\xbb\xbf" "event: e\r\nid: 1\r\ndata: a\r\ndata: b\r\n\r\n"),
	STR("data: a\rdata: b\r\rdata: c\n\r\n: c\r\n\rid\n\n"),
	STR("retry: 10\nid: x\0y\ndata: \0\n\n"),
	STR("event: ping\ndata: {\"type\": \"ping\"}\n\ndata: tail\n"),
	STR("data: h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80\n\n"),
	STR("data: cut\n\ndata: mid"),
	STR("\r\n\r\n\n\r\rdata\r\ndata\n\n:\r"),
	STR("id: 1\ndata: a\n\nid\nevent: x\ndata: b\n\ndata: c\n\n"),
	STR("\xef\xbb"),
	STR(""),
};

static void
t_splits(void)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(sse_inputs); i++) {
		same_split(0, sse_inputs[i].p, sse_inputs[i].n, CAP, 0);
		same_split(0, sse_inputs[i].p, sse_inputs[i].n, 16, 0);
		same_split(0, sse_inputs[i].p, sse_inputs[i].n, CAP, 1);
		same_split(0, sse_inputs[i].p, sse_inputs[i].n, CAP, 2);
	}
}

static void
t_utf8(void)
{
	static const char text[] = "h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80"
	    " \xe4\xb8\xad\xe6\x96\x87";
	const size_t L = sizeof(text) - 1;
	struct sbuf in;
	struct rec r = { .fail_at = 0 };
	size_t i;

	sbuf_init(&in, &t_arena, 0);
	sbuf_printf(&in, "event: d\xc3\xa9lta\ndata: %s\ndata: %s\n\n", text,
	    text);
	T_EQI(in.err, 0);
	for (i = 0; i <= in.len; i++) {
		T_EQI(run(0, in.p, in.len, CAP, i, 0, &r), 0);
		T_EQI(r.n, 1);
		T_EQI(r.sb.len, 9 + L + 1 + L + 1);
		T(memcmp(r.sb.p, "[d\xc3\xa9lta||", 9) == 0);
		T(memcmp(r.sb.p + 9, text, L) == 0);
		T(r.sb.p[9 + L] == '\n');
		T(memcmp(r.sb.p + 10 + L, text, L) == 0);
		T(str_is_utf8(r.sb.p, r.sb.len));
	}
	same_split(0, in.p, in.len, CAP, 0);

	sbuf_init(&in, &t_arena, 0);
	sbuf_printf(&in, "{\"c\":\"%s\"}\n{\"c\":\"%s\"}", text, text);
	for (i = 0; i <= in.len; i++) {
		T_EQI(run(1, in.p, in.len, CAP, i, 0, &r), 0);
		T_EQI(r.n, 2);
		T_EQI(r.sb.len, 2 * (L + 10));
		T(memcmp(r.sb.p + 7, text, L) == 0);
		T(memcmp(r.sb.p + L + 17, text, L) == 0);
		T(str_is_utf8(r.sb.p, r.sb.len));
	}
	same_split(1, in.p, in.len, CAP, 0);
}

static void
t_limit(void)
{
	static const char two[] = "data: aaaa\ndata: bbbb\n\n";
	struct sse p;
	struct rec r = { .fail_at = 0 };
	char buf[16];
	struct sbuf in;
	unsigned i;

	/* A line of n bytes needs n; the data stays, n - 5 per line. */
	T_EQI(run(0, "data: 12345\n\n", 13, 11, 0, 0, &r), 0);
	T_EQS(r.sb.p, "[message||12345]");
	T_EQI(run(0, "data: 12345\n\n", 13, 10, 0, 0, &r), -E_LIMIT);
	T_EQI(r.n, 0);
	T_EQI(run(0, two, sizeof(two) - 1, 15, 0, 0, &r), 0);
	T_EQS(r.sb.p, "[message||aaaa\nbbbb]");
	T_EQI(run(0, two, sizeof(two) - 1, 14, 0, 1, &r), -E_LIMIT);
	same_split(0, two, sizeof(two) - 1, 14, 0);
	/* Events before the long one are delivered. */
	T_EQI(run(0, "data: 1\n\ndata: 1234567890123\n\n", 30, 16, 0, 0, &r),
	    -E_LIMIT);
	T_EQS(r.sb.p, "[message||1]");
	/* Comments and unknown fields count as lines too. */
	T_EQI(run(0, ": 1234567890123456\n\n", 20, 16, 0, 0, &r), -E_LIMIT);

	/* Sticky: everything after returns it, finish too. */
	sse_init(&p, buf, sizeof(buf));
	sbuf_init(&r.sb, &t_arena, 0);
	T_EQI(sse_feed(&p, "data: 0123456789abcdef", 22, rec_event, &r),
	    -E_LIMIT);
	T_EQI(sse_feed(&p, "\n\n", 2, rec_event, &r), -E_LIMIT);
	T_EQI(sse_feed(&p, "", 0, rec_event, &r), -E_LIMIT);
	T_EQI(sse_finish(&p, rec_event, &r), -E_LIMIT);
	T_EQI(r.n, 0);
	sse_init(&p, buf, sizeof(buf));
	T_EQI(sse_feed(&p, "data: x\n\n", 9, rec_event, &r), 0);
	T_EQI(r.n, 1);

	/* Event type and ID have their own limits. */
	sbuf_init(&in, &t_arena, 0);
	sbuf_adds(&in, "event: ");
	for (i = 0; i < SSE_EVENT_MAX - 1; i++)
		sbuf_addc(&in, 'e');
	sbuf_adds(&in, "\ndata: x\n\n");
	T_EQI(run(0, in.p, in.len, CAP, 0, 0, &r), 0);
	T_EQI(r.n, 1);
	sbuf_truncate(&in, 7);
	for (i = 0; i < SSE_EVENT_MAX; i++)
		sbuf_addc(&in, 'e');
	sbuf_adds(&in, "\ndata: x\n\n");
	T_EQI(run(0, in.p, in.len, CAP, 0, 0, &r), -E_LIMIT);
	T_EQI(r.n, 0);
	sbuf_init(&in, &t_arena, 0);
	sbuf_adds(&in, "id:");
	for (i = 0; i < SSE_ID_MAX - 1; i++)
		sbuf_addc(&in, 'i');
	sbuf_adds(&in, "\ndata: x\n\n");
	T_EQI(run(0, in.p, in.len, CAP, 0, 0, &r), 0);
	T_EQI(r.n, 1);
	sbuf_truncate(&in, 3);
	for (i = 0; i < SSE_ID_MAX; i++)
		sbuf_addc(&in, 'i');
	sbuf_adds(&in, "\ndata: x\n\n");
	T_EQI(run(0, in.p, in.len, CAP, 0, 0, &r), -E_LIMIT);

	/* NDJSON: a line and its NUL, a CR counted. */
	T_EQI(run(1, "1234\n", 5, 5, 0, 0, &r), 0);
	T_EQS(r.sb.p, "[1234]");
	T_EQI(run(1, "1234", 4, 5, 0, 0, &r), 0);
	T_EQS(r.sb.p, "[1234]");
	T_EQI(run(1, "1\n12345\n", 8, 5, 0, 0, &r), -E_LIMIT);
	T_EQS(r.sb.p, "[1]");
	T_EQI(run(1, "1234\r\n", 6, 5, 0, 1, &r), -E_LIMIT);
	T_EQI(run(1, "12345", 5, 5, 0, 1, &r), -E_LIMIT);
	T_EQI(run(1, "\n\n\n", 3, 1, 0, 0, &r), 0);
	same_split(1, "1\n1234\n12345\n", 13, 5, 0);
	{
		struct ndjson q;

		ndjson_init(&q, buf, 4);
		T_EQI(ndjson_feed(&q, "abcd", 4, rec_line, &r), -E_LIMIT);
		T_EQI(ndjson_feed(&q, "\n", 1, rec_line, &r), -E_LIMIT);
		T_EQI(ndjson_finish(&q, rec_line, &r), -E_LIMIT);
	}
}

static void
t_callback_error(void)
{
	static const char in[] = "data: 1\n\ndata: 2\n\ndata: 3\n\n";
	static const char nd[] = "1\n2\n3\n";
	struct sse p;
	struct ndjson q;
	struct rec r = { .fail_at = 2 };
	char buf[64];

	sse_init(&p, buf, sizeof(buf));
	sbuf_init(&r.sb, &t_arena, 0);
	T_EQI(sse_feed(&p, in, sizeof(in) - 1, rec_event, &r), -E_IO);
	T_EQS(r.sb.p, "[message||1][message||2]");
	T_EQI(sse_feed(&p, in, sizeof(in) - 1, rec_event, &r), -E_IO);
	T_EQI(sse_finish(&p, rec_event, &r), -E_IO);
	T_EQI(r.n, 2);
	/* From finish as well. */
	r.n = 0;
	r.fail_at = 1;
	sse_init(&p, buf, sizeof(buf));
	T_EQI(sse_feed(&p, "data: x\n", 8, rec_event, &r), 0);
	T_EQI(sse_finish(&p, rec_event, &r), -E_IO);
	T_EQI(sse_feed(&p, "\n", 1, rec_event, &r), -E_IO);
	T_EQI(r.n, 1);

	r.n = 0;
	r.fail_at = 2;
	sbuf_init(&r.sb, &t_arena, 0);
	ndjson_init(&q, buf, sizeof(buf));
	T_EQI(ndjson_feed(&q, nd, sizeof(nd) - 1, rec_line, &r), -E_IO);
	T_EQS(r.sb.p, "[1][2]");
	T_EQI(ndjson_feed(&q, nd, sizeof(nd) - 1, rec_line, &r), -E_IO);
	T_EQI(ndjson_finish(&q, rec_line, &r), -E_IO);
	T_EQI(r.n, 2);
	r.n = 0;
	r.fail_at = 1;
	ndjson_init(&q, buf, sizeof(buf));
	T_EQI(ndjson_feed(&q, "x", 1, rec_line, &r), 0);
	T_EQI(ndjson_finish(&q, rec_line, &r), -E_IO);
	T_EQI(ndjson_feed(&q, "\n", 1, rec_line, &r), -E_IO);

	same_split(0, in, sizeof(in) - 1, CAP, 2);
	same_split(1, nd, sizeof(nd) - 1, CAP, 2);
}

/* A string field under a path of keys and array indexes ("0"), or "". */
static const char *
jpath(const char *js, size_t n, const char *const *path, size_t npath)
{
	struct json_doc d;
	char *s;
	size_t i;
	int t = 0;

	if (json_parse(&t_arena, js, n, 256, &d) != 0)
		return "(bad json)";
	for (i = 0; i < npath && t >= 0; i++)
		t = path[i][0] >= '0' && path[i][0] <= '9' ?
		    json_at(&d, t, path[i][0] - '0') : json_get(&d, t, path[i]);
	if (t < 0 || json_str(&d, &t_arena, t, &s, NULL) != 0)
		return "";
	return s;
}

/* Replies streamed by the providers: the text deltas joined. */
struct reply {
	struct sbuf	text;
	struct sbuf	types;
	int		done, bad;
};

static int
openai_event(void *ctx, const struct sse_event *ev)
{
	static const char *const path[] = { "choices", "0", "delta",
	    "content" };
	struct reply *rp = ctx;

	T_EQS(ev->event, "message");
	if (strcmp(ev->data, "[DONE]") == 0) {
		rp->done++;
		return 0;
	}
	T(!rp->done);
	sbuf_adds(&rp->text, jpath(ev->data, ev->data_len, path, 4));
	return 0;
}

static void
t_openai(void)
{
	static const char stream[] =
	    "data: {\"id\":\"chatcmpl-9a1\","
	    "\"object\":\"chat.completion.chunk\","
	    "\"created\":1717000000,\"model\":\"gpt-4o-mini\",\"choices\":[{"
	    "\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},"
	    "\"logprobs\":null,\"finish_reason\":null}]}\n\n"
	    "data: {\"id\":\"chatcmpl-9a1\","
	    "\"object\":\"chat.completion.chunk\","
	    "\"created\":1717000000,\"model\":\"gpt-4o-mini\",\"choices\":[{"
	    "\"index\":0,\"delta\":{\"content\":\"Hel\"},\"logprobs\":null,"
	    "\"finish_reason\":null}]}\n\n"
	    ": OPENROUTER PROCESSING\n\n"
	    "data: {\"id\":\"chatcmpl-9a1\","
	    "\"object\":\"chat.completion.chunk\","
	    "\"created\":1717000000,\"model\":\"gpt-4o-mini\",\"choices\":[{"
	    "\"index\":0,\"delta\":{\"content\":\"lo, caf\xc3\xa9 \\u2603\"},"
	    "\"logprobs\":null,\"finish_reason\":null}]}\n\n"
	    "data: {\"id\":\"chatcmpl-9a1\","
	    "\"object\":\"chat.completion.chunk\","
	    "\"created\":1717000000,\"model\":\"gpt-4o-mini\",\"choices\":[{"
	    "\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":"
	    "\"stop\"}]}\n\n"
	    "data: [DONE]\n\n";
	struct reply rp;
	struct sse p;
	char buf[512], *crlf;
	size_t i, k, n = sizeof(stream) - 1;

	memset(&rp, 0, sizeof(rp));
	sbuf_init(&rp.text, &t_arena, 0);
	sse_init(&p, buf, sizeof(buf));
	for (i = 0; i < n; i += k) {
		k = MIN(n - i, 1 + i % 61);
		T_EQI(sse_feed(&p, stream + i, k, openai_event, &rp), 0);
	}
	T_EQI(sse_finish(&p, openai_event, &rp), 0);
	T_EQS(rp.text.p, "Hello, caf\xc3\xa9 \xe2\x98\x83");
	T_EQI(rp.done, 1);
	T_EQI(p.events, 5);
	T_EQI(p.bytes, n);
	same_split(0, stream, n, 512, 0);

	/* The same over CRLF. */
	crlf = arena_alloc(&t_arena, 2 * n);
	for (i = k = 0; i < n; i++) {
		if (stream[i] == '\n')
			crlf[k++] = '\r';
		crlf[k++] = stream[i];
	}
	memset(&rp, 0, sizeof(rp));
	sbuf_init(&rp.text, &t_arena, 0);
	sse_init(&p, buf, sizeof(buf));
	T_EQI(sse_feed(&p, crlf, k, openai_event, &rp), 0);
	T_EQI(sse_finish(&p, openai_event, &rp), 0);
	T_EQS(rp.text.p, "Hello, caf\xc3\xa9 \xe2\x98\x83");
	T_EQI(rp.done, 1);
}

static int
anthropic_event(void *ctx, const struct sse_event *ev)
{
	static const char *const type[] = { "type" };
	static const char *const text[] = { "delta", "text" };
	static const char *const err[] = { "error", "message" };
	struct reply *rp = ctx;

	/* The event type repeats the JSON's "type". */
	T_EQS(jpath(ev->data, ev->data_len, type, 1), ev->event);
	sbuf_add(&rp->types, ev->event, ev->event_len);
	sbuf_addc(&rp->types, ' ');
	if (strcmp(ev->event, "content_block_delta") == 0)
		sbuf_adds(&rp->text, jpath(ev->data, ev->data_len, text, 2));
	else if (strcmp(ev->event, "message_stop") == 0)
		rp->done++;
	else if (strcmp(ev->event, "error") == 0) {
		sbuf_adds(&rp->text, "|error: ");
		sbuf_adds(&rp->text, jpath(ev->data, ev->data_len, err, 2));
		return -E_PROTO;
	}
	return 0;
}

static void
t_anthropic(void)
{
	static const char stream[] =
	    "event: message_start\n"
	    "data: {\"type\":\"message_start\",\"message\":{\"id\":"
	    "\"msg_01XFDUDYJgAACzvnptvVoYEL\",\"type\":\"message\",\"role\":"
	    "\"assistant\",\"content\":[],"
	    "\"model\":\"claude-3-5-haiku-20241022\","
	    "\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{"
	    "\"input_tokens\":25,\"output_tokens\":1}}}\n\n"
	    "event: content_block_start\n"
	    "data: {\"type\":\"content_block_start\",\"index\":0,"
	    "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
	    "event: ping\n"
	    "data: {\"type\": \"ping\"}\n\n"
	    "event: content_block_delta\n"
	    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{"
	    "\"type\":\"text_delta\",\"text\":\"Hello\"}}\n\n"
	    "event: content_block_delta\n"
	    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{"
	    "\"type\":\"text_delta\",\"text\":\" w\xc3\xb6rld\"}}\n\n"
	    "event: content_block_stop\n"
	    "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
	    "event: message_delta\n"
	    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"
	    "\"end_turn\",\"stop_sequence\":null},\"usage\":{"
	    "\"output_tokens\":15}}\n\n"
	    "event: message_stop\n"
	    "data: {\"type\":\"message_stop\"}\n\n";
	static const char failed[] =
	    "event: message_start\n"
	    "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_02\"}}"
	    "\n\n"
	    "event: error\n"
	    "data: {\"type\":\"error\",\"error\":{"
	    "\"type\":\"overloaded_error\","
	    "\"message\":\"Overloaded\"}}\n\n"
	    "event: ping\n"
	    "data: {\"type\": \"ping\"}\n\n";
	struct reply rp;
	struct sse p;
	char buf[512];
	size_t i;

	memset(&rp, 0, sizeof(rp));
	sbuf_init(&rp.text, &t_arena, 0);
	sbuf_init(&rp.types, &t_arena, 0);
	sse_init(&p, buf, sizeof(buf));
	for (i = 0; i < sizeof(stream) - 1; i++)
		T_EQI(sse_feed(&p, stream + i, 1, anthropic_event, &rp), 0);
	T_EQI(sse_finish(&p, anthropic_event, &rp), 0);
	T_EQS(rp.text.p, "Hello w\xc3\xb6rld");
	T_EQS(rp.types.p, "message_start content_block_start ping "
	    "content_block_delta content_block_delta content_block_stop "
	    "message_delta message_stop ");
	T_EQI(rp.done, 1);
	T_EQI(p.events, 8);
	same_split(0, stream, sizeof(stream) - 1, 512, 0);

	/* The callback turns the error event into an error; it sticks. */
	memset(&rp, 0, sizeof(rp));
	sbuf_init(&rp.text, &t_arena, 0);
	sbuf_init(&rp.types, &t_arena, 0);
	sse_init(&p, buf, sizeof(buf));
	T_EQI(sse_feed(&p, failed, sizeof(failed) - 1, anthropic_event, &rp),
	    -E_PROTO);
	T_EQS(rp.text.p, "|error: Overloaded");
	T_EQS(rp.types.p, "message_start error ");
	T_EQI(sse_finish(&p, anthropic_event, &rp), -E_PROTO);
}

static void
t_stats(void)
{
	struct sse p;
	struct ndjson q;
	struct rec r = { .fail_at = 0 };
	char buf[64];

	sbuf_init(&r.sb, &t_arena, 0);
	sse_init(&p, buf, sizeof(buf));
	T_EQI(sse_feed(&p, "data: 1\n\n: x\n\ndata: 2\n", 22, rec_event, &r),
	    0);
	T_EQI(p.bytes, 22);
	T_EQI(p.events, 1);
	T_EQI(sse_finish(&p, rec_event, &r), 0);
	T_EQI(p.events, 2);
	ndjson_init(&q, buf, sizeof(buf));
	T_EQI(ndjson_feed(&q, "1\n\n2\r\n3", 7, rec_line, &r), 0);
	T_EQI(q.bytes, 7);
	T_EQI(q.lines, 2);
	T_EQI(ndjson_finish(&q, rec_line, &r), 0);
	T_EQI(q.lines, 3);
}

static void
t_ndjson(void)
{
	static const char *const in[] = {
		"{\"a\":1}\n{\"b\":2}\n",
		"{\"a\":1}\r\n\r\n\n{\"b\":2}\r\n",
		"\n\n{\"a\":1}\n\r\n{\"b\":2}",
		"{\"a\":1}\n{\"b\":2}\r",
	};
	size_t i;
	int e;

	for (i = 0; i < ARRAY_LEN(in); i++) {
		T_EQS(nd_z(in[i], &e), "[{\"a\":1}][{\"b\":2}]");
		T_EQI(e, 0);
		same_split(1, in[i], strlen(in[i]), CAP, 0);
		same_split(1, in[i], strlen(in[i]), 9, 0);
		same_split(1, in[i], strlen(in[i]), CAP, 1);
	}
	/* A lone CR stays; spaces are the caller's business. */
	T_EQS(nd_z("a\rb\n\r\r\n \n", &e), "[a\rb][\r][ ]");
	T_EQS(nd_z("", &e), "");
	T_EQS(nd_z("\r\n\r\n", &e), "");
	T_EQS(nd_z("\r", &e), "");
	T_EQI(e, 0);
	{
		static const char nul[] = "a\0b\n\0";
		struct rec r = { .fail_at = 0 };

		T_EQI(run(1, nul, 5, CAP, 0, 0, &r), 0);
		T_EQI(r.sb.len, 8);
		T(memcmp(r.sb.p, "[a\0b][\0]", 8) == 0);
		same_split(1, nul, 5, CAP, 0);
	}
}

static int
ollama_line(void *ctx, const char *line, size_t len)
{
	static const char *const content[] = { "message", "content" };
	static const char *const role[] = { "message", "role" };
	struct reply *rp = ctx;
	struct json_doc d;

	T_EQI(json_parse(&t_arena, line, len, 256, &d), 0);
	T_EQS(jpath(line, len, role, 2), "assistant");
	T(!rp->done);
	sbuf_adds(&rp->text, jpath(line, len, content, 2));
	if (strstr(line, "\"done\":true") != NULL)
		rp->done++;
	return 0;
}

static void
t_ollama(void)
{
	static const char stream[] =
	    "{\"model\":\"llama3.2\",\"created_at\":\"2024-11-05T10:00:00.1Z\","
	    "\"message\":{\"role\":\"assistant\",\"content\":\"The\"},"
	    "\"done\":false}\n"
	    "{\"model\":\"llama3.2\",\"created_at\":\"2024-11-05T10:00:00.2Z\","
	    "\"message\":{\"role\":\"assistant\",\"content\":\" sky\"},"
	    "\"done\":false}\n"
	    "{\"model\":\"llama3.2\",\"created_at\":\"2024-11-05T10:00:00.3Z\","
	    "\"message\":{\"role\":\"assistant\",\"content\":\" is \xe2\x98\x81"
	    "\\ufe0f\"},\"done\":false}\n"
	    "{\"model\":\"llama3.2\",\"created_at\":\"2024-11-05T10:00:00.4Z\","
	    "\"message\":{\"role\":\"assistant\",\"content\":\"\"},"
	    "\"done_reason\":\"stop\",\"done\":true,\"total_duration\":"
	    "4883583458,\"load_duration\":1334875,\"prompt_eval_count\":26,"
	    "\"prompt_eval_duration\":342546000,\"eval_count\":4,"
	    "\"eval_duration\":4535599000}";
	struct reply rp;
	struct ndjson q;
	char buf[512];
	size_t i, k, n = sizeof(stream) - 1;
	unsigned pass;

	/* Ending with and without the last newline. */
	for (pass = 0; pass < 2; pass++) {
		memset(&rp, 0, sizeof(rp));
		sbuf_init(&rp.text, &t_arena, 0);
		ndjson_init(&q, buf, sizeof(buf));
		for (i = 0; i < n; i += k) {
			k = MIN(n - i, 1 + i % 37);
			T_EQI(ndjson_feed(&q, stream + i, k, ollama_line, &rp),
			    0);
		}
		if (pass == 1)
			T_EQI(ndjson_feed(&q, "\n", 1, ollama_line, &rp), 0);
		T_EQI(q.lines, 3 + pass);
		T_EQI(ndjson_finish(&q, ollama_line, &rp), 0);
		T_EQI(q.lines, 4);
		T_EQS(rp.text.p, "The sky is \xe2\x98\x81\xef\xb8\x8f");
		T_EQI(rp.done, 1);
	}
	same_split(1, stream, n, 512, 0);
	same_split(1, stream, n, 256, 0);
}

/* Every case that goes through run() again, with buffers of the parsers'
 * own: the same events and the same limits. */
static void
t_own_buffers(void)
{
	own_buf = 1;
	t_basic();
	t_multiline();
	t_comments();
	t_fields();
	t_line_ends();
	t_crlf_split();
	t_bom();
	t_finish();
	t_splits();
	t_utf8();
	t_limit();
	t_callback_error();
	own_buf = 0;
}

/* An own buffer starts empty, grows only as far as an event needs, up to
 * the cap, and says -E_NOMEM when the budget cannot grow it. */
static void
t_own_growth(void)
{
	struct rec r = { .fail_at = 0 };
	struct sbuf in;
	struct sse p;
	struct ndjson q;
	size_t big = 100000, i;

	sbuf_init(&in, &t_arena, 0);
	sbuf_adds(&in, "data: ");
	for (i = 0; i < big; i++)
		sbuf_addc(&in, (char)('a' + i % 26));
	sbuf_adds(&in, "\n\ndata: small\n\n");
	T_EQI(in.err, 0);
	sbuf_init(&r.sb, &t_arena, 0);
	sse_init(&p, NULL, 1 << 20);
	T(p.buf == NULL && p.cap == 0);
	T_EQI(sse_feed(&p, "data: x\n\n", 9, rec_event, &r), 0);
	T_EQI(p.cap, SSE_BUF_START);
	for (i = 0; i < in.len; i += 1000)
		T_EQI(sse_feed(&p, in.p + i, MIN(1000, in.len - i), rec_event,
		    &r), 0);
	T_EQI(r.n, 3);
	T(p.cap >= big && p.cap <= 2 * (big + 6));
	T_EQI(r.sb.len, 12 + (big + 11) + 16);
	sse_free(&p);
	T(p.buf == NULL);

	/* The cap still rules. */
	sse_init(&p, NULL, 50000);
	T_EQI(sse_feed(&p, in.p, in.len, rec_event, &r), -E_LIMIT);
	T(p.cap <= 50000);
	sse_free(&p);

	/* No budget left to grow: -E_NOMEM, sticky, nothing delivered. */
	r.n = 0;
	ndjson_init(&q, NULL, 1 << 20);
	T_EQI(ndjson_feed(&q, "{}\n", 3, rec_line, &r), 0);
	mem_set_limit(mem_used() + 1024);
	T_EQI(ndjson_feed(&q, in.p, 20000, rec_line, &r), -E_NOMEM);
	mem_set_limit(0);
	T_EQI(ndjson_feed(&q, "\n", 1, rec_line, &r), -E_NOMEM);
	T_EQI(r.n, 1);
	ndjson_free(&q);
}

static const struct unit_case cases[] = {
	{ "basic", t_basic },
	{ "multiline", t_multiline },
	{ "comments", t_comments },
	{ "fields", t_fields },
	{ "line_ends", t_line_ends },
	{ "crlf_split", t_crlf_split },
	{ "bom", t_bom },
	{ "finish", t_finish },
	{ "splits", t_splits },
	{ "utf8", t_utf8 },
	{ "limit", t_limit },
	{ "callback_error", t_callback_error },
	{ "openai", t_openai },
	{ "anthropic", t_anthropic },
	{ "stats", t_stats },
	{ "ndjson", t_ndjson },
	{ "ollama", t_ollama },
	{ "own_buffers", t_own_buffers },
	{ "own_growth", t_own_growth },
};

const struct unit_suite suite_sse = { "sse", cases, ARRAY_LEN(cases) };
