/* fuzz_httpd.c - libFuzzer harness for the server's request reading:
 * src/serve/httpd.c (heads, the admission checks on Host, Origin and
 * Content-Type, bodies by length or chunked, 100-continue, pipelining,
 * keep-alive, timeouts) over src/net/http.c's request parser.
 *
 * httpd.c is included, so its static functions are called as the poll
 * loop calls them; the router is a stub that checks what it is handed
 * and echoes the body. Byte 0 picks the limits (head_max, body_max),
 * whether a token is configured and an out-of-memory rerun (bit 7);
 * byte 1 seeds the sizes of the pieces the client's bytes come in; the
 * rest is what the client sends. Each response must be well formed; the
 * whole input is fed twice, in one piece and in small ones, and both
 * must route the same requests (bodies alike) and send the same bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The access log would print a line a request. */
#define fprintf(...)	((void)0)
#include "serve/httpd.c"
#undef fprintf

#define CHECK(c) do {							\
	if (!(c))							\
		abort();						\
} while (0)

volatile sig_atomic_t got_term, got_hup;

struct run {
	unsigned	 nreq;		/* requests routed */
	uint64_t	 req, out;	/* hashes of what was routed, sent */
};

static struct run *cur;

static void
mix(uint64_t *h, const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		*h = (*h ^ b[i]) * 1099511628211ULL;
}

/* --- stubs of what httpd.c calls in the other files of serve/ */

int
api_token(const struct srv *s, const struct conn *c)
{
	const char *h = http_header(&c->h, "Authorization");

	(void)s;
	return h != NULL && strcmp(h, "Bearer fuzz") == 0 ? 0 : -1;
}

/* The router: what it is handed must be a whole request. */
int
api_route(struct srv *s, struct conn *c)
{
	CHECK(c->h.method != NULL && c->h.target != NULL);
	CHECK(c->st == C_HEAD || c->st == C_BODY);
	if (!c->h.chunked && c->h.content_length >= 0)
		CHECK(c->body_len == (size_t)c->h.content_length);
	CHECK(c->body_len <= s->cfg->serve.body_max);
	CHECK(c->body == NULL || c->body[c->body_len] == '\0');
	cur->nreq++;
	mix(&cur->req, c->h.method, strlen(c->h.method) + 1);
	mix(&cur->req, c->h.target, strlen(c->h.target) + 1);
	mix(&cur->req, c->body ? c->body : "", c->body_len);
	c->head = strcmp(c->h.method, "HEAD") == 0;
	return httpd_respond(s, c, 200, "text/plain", c->body ? c->body : "",
	    c->body_len, NULL);
}

int
worker_relay_head(struct srv *s, struct conn *c)
{
	(void)s;
	(void)c;
	abort();	/* no worker in this harness */
}

void
worker_relay_died(struct srv *s, struct conn *c, int wst)
{
	(void)s;
	(void)c;
	(void)wst;
	abort();
}

void
worker_run_queue(struct srv *s)
{
	(void)s;
}

/* --- driving a connection */

/* What the server has to send is well formed; then it is sent. */
static void
drain(struct conn *c)
{
	size_t n = c->out_len - c->out_off;
	const char *o;

	if (n == 0)
		return;
	o = c->out + c->out_off;
	CHECK(n >= 17 && memcmp(o, "HTTP/1.1 ", 9) == 0);
	CHECK(memmem(o, n, "\r\n\r\n", 4) != NULL);
	mix(&cur->out, o, n);
	c->out_off = c->out_len = 0;
}

/* What httpd_step does after input: finished responses go, and the next
 * pipelined request is read. 0, or -1 when the connection closed. */
static int
settle(struct srv *s, struct conn *c)
{
	while (c->st == C_WRITE) {
		drain(c);
		conn_next(s, c);
		if (c->st == C_FREE)
			return -1;
		if (c->st == C_HEAD && c->in_len > 0)
			(void)head_feed(s, c);
		if (c->st == C_BODY && c->in_len > 0)
			(void)body_feed(s, c);
	}
	drain(c);	/* 100 Continue */
	return 0;
}

/* conn_read without the socket: up to n bytes into c->in; -1 when out
 * of memory (the server answers 503 then). */
static long
take(struct srv *s, struct conn *c, const uint8_t *p, size_t n)
{
	size_t cap = s->cfg->serve.head_max + 1024;

	if (c->in_cap < cap) {
		char *q = mem_realloc(c->in, cap);

		if (q == NULL)
			return -1;
		c->in = q;
		c->in_cap = cap;
	}
	n = MIN(n, c->in_cap - c->in_len);
	memcpy(c->in + c->in_len, p, n);
	c->in_len += n;
	return (long)n;
}

static uint32_t
next_rand(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

static void
one(struct srv *s, const uint8_t *d, size_t n, uint32_t seed)
{
	struct conn *c = &s->c[0];
	size_t k, stuck = 0;
	long got;

	memset(c, 0, sizeof(*c));
	c->fd = c->src = -1;
	c->tok = -1;
	arena_init(&c->a, "request");
	memcpy(c->peer, "127.0.0.1", 10);
	s->open = 1;
	c->st = C_HEAD;
	http_req_init(&c->h);
	while (n > 0 && c->st != C_FREE) {
		k = seed ? 1 + next_rand(&seed) % 64 : n;
		if ((got = take(s, c, d, MIN(k, n))) < 0)
			break;
		d += got;
		n -= (size_t)got;
		if (c->st == C_HEAD && c->in_len > 0)
			(void)head_feed(s, c);
		if (c->st == C_BODY && c->in_len > 0)
			(void)body_feed(s, c);
		if (settle(s, c) != 0)
			break;
		CHECK(c->in_len <= c->in_cap);
		/* a full buffer the parser did not take from is an error */
		stuck = got == 0 ? stuck + 1 : 0;
		CHECK(stuck < 2);
	}
	if (c->st == C_HEAD || c->st == C_BODY) {
		timeouts(s, c->deadline + 1);
		(void)settle(s, c);
	}
	if (c->st != C_FREE)
		httpd_close(s, c);
}

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cfg cfg;
	static struct conn conns[1];
	static int ready;
	static const char *hosts[] = { "router.lan" };
	struct run whole, bits;
	struct srv s;

	if (!ready) {
		if (mem_init(64u << 20) != 0)
			abort();
		ready = 1;
	}
	if (size < 2)
		return 0;
	memset(&cfg, 0, sizeof(cfg));
	cfg.serve.listen = "127.0.0.1:8080";
	cfg.serve.head_max = data[0] & 1 ? 1024 : 8192;
	cfg.serve.body_max = data[0] & 2 ? 1024 : 65536;
	cfg.serve.header_s = cfg.serve.idle_s = 10;
	cfg.serve.cors_origin = data[0] & 8 ? "http://app.example" : NULL;
	cfg.serve.hosts[0] = hosts[0];
	cfg.serve.nhosts = 1;
	memset(&s, 0, sizeof(s));
	s.cfg = &cfg;
	s.ntok = data[0] & 4 ? 1 : 0;
	s.c = conns;
	s.nc = 1;

	memset(&whole, 0, sizeof(whole));
	cur = &whole;
	one(&s, data + 2, size - 2, 0);
	memset(&bits, 0, sizeof(bits));
	cur = &bits;
	one(&s, data + 2, size - 2, data[1] | 0x100);
	CHECK(whole.nreq == bits.nreq && whole.req == bits.req &&
	    whole.out == bits.out);
	if (data[0] & 0x80) {	/* short of memory: no crash, no leak */
		mem_set_limit(mem_used() + (size_t)data[1] * 32);
		cur = &bits;
		one(&s, data + 2, size - 2, 0);
		mem_set_limit(0);
	}
	return 0;
}
