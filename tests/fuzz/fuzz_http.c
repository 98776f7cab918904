/* fuzz_http.c - libFuzzer harness for the HTTP client protocol.
 *
 * Byte 0 picks the request (GET, HEAD or CONNECT; bit 7 asks for an
 * out-of-memory rerun), byte 1 the receive buffer size, bytes 2-3 seed the
 * read sizes; the rest is the peer's reply. The reply is read twice, head
 * and whole body: once in big reads, once in pseudo-random small pieces
 * with small body reads. Both must give the same result, head and body
 * bytes, and what they give is checked against the framing. With bit 7 a
 * third run under a memory limit must agree or fail with -E_NOMEM.
 * The whole input, as a string, also goes through URL parsing, request
 * writing and NO_PROXY matching.
 */
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "net/http.h"
#include "base/str.h"

#define CHECK(c) do {							\
	if (!(c))							\
		abort();						\
} while (0)

struct peer {
	const char	*data;
	size_t		 len, pos;
	uint32_t	 x;		/* 0: whole reads */
};

struct run {
	int		 e;		/* first error, or 0 */
	int		 status, nhdrs;
	long long	 content_length;
	size_t		 body_len;
	uint64_t	 hash;		/* of the head's strings and the body */
};

static struct arena a;
static char rbuf[64 + 255 * 16];

static uint32_t
next_rand(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

static uint64_t
fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n-- > 0)
		h = (h ^ *c++) * 0x100000001b3ull;
	return h;
}

static long
peer_read(void *ctx, void *buf, size_t n)
{
	struct peer *p = ctx;
	size_t k = p->len - p->pos, piece;

	if (p->x != 0) {
		piece = 1 + next_rand(&p->x) % 23;	/* not inside MIN() */
		k = MIN(k, piece);
	}
	k = MIN(k, n);
	memcpy(buf, p->data + p->pos, k);
	p->pos += k;
	return (long)k;
}

static int
peer_write(void *ctx, const void *buf, size_t n)
{
	return 0;
}

static int
is_tok(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (*s <= ' ' || *s == ':' || (unsigned char)*s >= 0x7f)
			return 0;
	return 1;
}

static int
same(const struct run *x, const struct run *y)
{
	return x->e == y->e && x->status == y->status &&
	    x->nhdrs == y->nhdrs && x->content_length == y->content_length &&
	    x->body_len == y->body_len && x->hash == y->hash;
}

static void
check_head(const struct http_head *r)
{
	unsigned i;
	const char *v;

	CHECK(r->status >= 200 && r->status <= 599);
	CHECK(r->minor >= 0 && r->minor <= 9);
	CHECK(r->nhdrs <= HTTP_MAX_HEADERS);
	CHECK(r->head_len <= HTTP_MAX_HEAD);
	CHECK(r->reason != NULL && strpbrk(r->reason, "\r\n") == NULL);
	CHECK(!r->chunked || r->content_length == -1);
	CHECK(r->retry_after >= -1);
	for (i = 0; i < r->nhdrs; i++) {
		CHECK(is_tok(r->hdrs[i].name));
		v = r->hdrs[i].value;
		CHECK(strpbrk(v, "\r\n") == NULL);
		CHECK(*v != ' ' && *v != '\t');
		CHECK(http_header(r, r->hdrs[i].name) != NULL);
	}
	if (r->content_type != NULL)
		CHECK(r->content_type == http_header(r, "content-type"));
}

/* One request and its whole reply. */
static void
run(const char *reply, size_t len, const char *method, size_t cap,
    uint32_t seed, struct run *out)
{
	struct peer p = { reply, len, 0, seed };
	struct http_io io = { peer_read, peer_write, &p };
	struct http_conn c;
	struct http_head r;
	struct http_url u;
	struct sbuf sb;
	char body[300];
	size_t n;
	unsigned i;
	long k;

	memset(out, 0, sizeof(*out));
	out->hash = 0xcbf29ce484222325ull;
	sbuf_init(&sb, &a, 0);
	if ((out->e = http_url_parse(&a, "http://example.com/", &u)) != 0)
		return;
	if (strcmp(method, "CONNECT") == 0)
		out->e = http_write_connect(&sb, "example.com", 443, NULL);
	else
		out->e = http_write_request(&sb, method, &u, 0, NULL, 0,
		    (size_t)-1);
	if (out->e != 0)
		return;
	http_conn_init(&c, &io, rbuf, cap);
	c.now = 784111777;
	CHECK(http_send(&c, &sb, NULL, 0) == 0);
	if ((out->e = http_read_head(&c, &a, &r)) != 0) {
		CHECK(http_read_head(&c, &a, &r) == out->e);
		CHECK(!http_conn_reusable(&c));
		return;
	}
	check_head(&r);
	out->status = r.status;
	out->nhdrs = (int)r.nhdrs;
	out->content_length = r.content_length;
	out->hash = fnv(out->hash, r.reason, strlen(r.reason) + 1);
	for (i = 0; i < r.nhdrs; i++) {
		out->hash = fnv(out->hash, r.hdrs[i].name,
		    strlen(r.hdrs[i].name) + 1);
		out->hash = fnv(out->hash, r.hdrs[i].value,
		    strlen(r.hdrs[i].value) + 1);
	}
	out->hash = fnv(out->hash, &r.retry_after, sizeof(r.retry_after));
	for (;;) {
		n = seed != 0 ? 1 + next_rand(&seed) % sizeof(body) :
		    sizeof(body);
		if ((k = http_read_body(&c, body, n)) <= 0)
			break;
		CHECK((size_t)k <= n);
		out->body_len += (size_t)k;
		out->hash = fnv(out->hash, body, (size_t)k);
		CHECK(out->body_len <= len);
	}
	out->e = (int)k;
	CHECK(http_read_body(&c, body, sizeof(body)) == k);
	if (k == 0 && c.body.mode == HTTP_BODY_LENGTH)
		CHECK((long long)out->body_len == r.content_length);
	if (k == 0 && c.body.mode == HTTP_BODY_NONE)
		CHECK(out->body_len == 0);
	if (http_conn_reusable(&c))
		CHECK(k == 0 && !r.close && c.body.mode != HTTP_BODY_CLOSE);
	if (k != 0)
		CHECK(!http_conn_reusable(&c));
}

/* The input as a URL, a host and a NO_PROXY list. */
static void
strings(const uint8_t *data, size_t size)
{
	struct http_url u;
	struct sbuf sb;
	char *s;
	int e;

	if ((s = arena_strndup(&a, (const char *)data, size)) == NULL)
		return;
	e = http_url_parse(&a, s, &u);
	CHECK(e == 0 || e == -E_INVAL);
	if (e == 0) {
		CHECK(u.host[0] != '\0' && u.path[0] == '/');
		CHECK(u.port >= 1 && u.port <= 65535);
		CHECK(strpbrk(u.host, "/?#@[] ") == NULL);
		CHECK(strpbrk(u.path, "# \r\n") == NULL);
		CHECK(!u.is_ipv6 || strchr(u.host, ':') != NULL);
		sbuf_init(&sb, &a, 0);
		CHECK(http_write_request(&sb, "GET", &u, u.port & 1, NULL, 0,
		    u.port) == 0);
		CHECK(strlen(sb.p) == sb.len && sb.len > 4);
		CHECK(memcmp(sb.p + sb.len - 4, "\r\n\r\n", 4) == 0);
		CHECK(strstr(sb.p, "\r\n\r\n") == sb.p + sb.len - 4);
		(void)http_no_proxy(u.host, u.host);
	}
	sbuf_init(&sb, &a, 0);
	e = http_write_connect(&sb, s, 443, s);
	CHECK(e == 0 || e == -E_INVAL);
	if (e == 0)
		CHECK(strstr(sb.p, "\r\n\r\n") == sb.p + sb.len - 4);
	(void)http_no_proxy(s, "a.example.com");
	(void)http_no_proxy(s, "10.0.0.1");
	(void)http_no_proxy("example.com, .b.c:80,[::1],*x", s);
}

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const methods[] = { "GET", "HEAD", "CONNECT" };
	static int inited;
	struct run w, s, l;
	const char *method, *reply;
	size_t cap, len;
	uint32_t seed;
	int r;

	if (!inited) {
		r = mem_init(64u << 20);
		CHECK(r == 0 || r == -E_INVAL);
		arena_init(&a, "fuzz");
		inited = 1;
	}
	strings(data, size);
	arena_reset(&a);
	if (size < 4)
		return 0;
	method = methods[(data[0] & 0x7f) % 3];
	cap = 64 + (size_t)data[1] * 16;
	seed = ((uint32_t)data[2] << 8 | data[3]) + 1;
	reply = (const char *)data + 4;
	len = size - 4;

	run(reply, len, method, cap, 0, &w);
	arena_reset(&a);
	run(reply, len, method, cap, seed, &s);
	arena_reset(&a);
	/* A tunnel refuses early bytes only when they were already read. */
	if (strcmp(method, "CONNECT") != 0 || (w.e == 0 && s.e == 0))
		CHECK(same(&w, &s));

	if (data[0] & 0x80) {
		mem_set_limit(mem_used() + (size_t)data[3] * 64);
		run(reply, len, method, cap, 0, &l);
		mem_set_limit(0);
		arena_reset(&a);
		CHECK(l.e == -E_NOMEM || same(&w, &l));
	}
	return 0;
}
