/* test_http.c - the HTTP/1.1 client protocol over an in-memory transport. */
#include <stdio.h>
#include <string.h>

#include "net/http.h"
#include "unit.h"

/* A canned peer: serves `data` in reads of at most `piece` bytes (the
 * first read at most `first`; 0 = no limit) and records what is written.
 * With gates, the bytes past gates[i] stay back until request i + 2 was
 * written, as a real server answers only what it was asked. At the end a
 * read returns `end`: 0 (EOF) or an error. */
struct mio {
	const char	*data;
	size_t		 len, pos, first, piece;
	size_t		 gates[4];
	unsigned	 ngates, nreads, nwrites;
	long		 end;
	struct sbuf	 out;
};

struct tc {
	struct mio	 m;
	struct http_io	 io;
	struct http_conn c;
	char		 buf[4096];
};

static long
mio_read(void *ctx, void *buf, size_t n)
{
	struct mio *m = ctx;
	size_t lim = m->len, k;

	if (m->ngates > 0 && m->nwrites <= m->ngates)
		lim = m->nwrites == 0 ? 0 : m->gates[m->nwrites - 1];
	if ((k = lim - m->pos) == 0)
		return m->end;
	if (m->nreads++ == 0 && m->first != 0)
		k = MIN(k, m->first);
	else if (m->piece != 0)
		k = MIN(k, m->piece);
	k = MIN(k, n);
	memcpy(buf, m->data + m->pos, k);
	m->pos += k;
	return (long)k;
}

static int
mio_write(void *ctx, const void *buf, size_t n)
{
	struct mio *m = ctx;

	m->nwrites++;
	sbuf_add(&m->out, buf, n);
	return m->out.err;
}

static void
tc_init(struct tc *t, const char *data, size_t len, size_t piece)
{
	memset(t, 0, sizeof(*t));
	t->m.data = data;
	t->m.len = len;
	t->m.piece = piece;
	sbuf_init(&t->m.out, &t_arena, 0);
	t->io.read = mio_read;
	t->io.write = mio_write;
	t->io.ctx = &t->m;
	http_conn_init(&t->c, &t->io, t->buf, sizeof(t->buf));
}

#define GET_X	"GET /x HTTP/1.1\r\nHost: example.com\r\n\r\n"

/* Send a bodiless request for http://example.com/x. */
static int
tc_send(struct tc *t, const char *method)
{
	struct http_url u;
	struct sbuf sb;
	int e;

	sbuf_init(&sb, &t_arena, 0);
	if ((e = http_url_parse(&t_arena, "http://example.com/x", &u)) != 0 ||
	    (e = http_write_request(&sb, method, &u, 0, NULL, 0,
	    (size_t)-1)) != 0)
		return e;
	return http_send(&t->c, &sb, NULL, 0);
}

/* The rest of the body in reads of n bytes: 0 or the error. */
static int
tc_body(struct tc *t, size_t n, struct sbuf *out)
{
	char b[256];
	long k;

	sbuf_init(out, &t_arena, 0);
	while ((k = http_read_body(&t->c, b, MIN(n, sizeof(b)))) > 0)
		sbuf_add(out, b, (size_t)k);
	return (int)k;
}

/* One GET against the canned reply raw[len]: 0 or the first error. */
static int
fetchn(struct tc *t, const char *raw, size_t len, size_t piece,
    struct http_head *r, struct sbuf *body)
{
	int e;

	tc_init(t, raw, len, piece);
	sbuf_init(body, &t_arena, 0);
	if ((e = tc_send(t, "GET")) != 0 ||
	    (e = http_read_head(&t->c, &t_arena, r)) != 0)
		return e;
	return tc_body(t, piece != 0 ? piece * 2 + 1 : 256, body);
}

static int
fetch(struct tc *t, const char *raw, size_t piece, struct http_head *r,
    struct sbuf *body)
{
	return fetchn(t, raw, strlen(raw), piece, r, body);
}

static const size_t pieces[] = { 1, 3, 0 };

static void
t_url_good(void)
{
	static const struct {
		const char	*url, *host, *path;
		unsigned	 port;
		int		 https, v6;
	} ok[] = {
		{ "http://example.com", "example.com", "/", 80, 0, 0 },
		{ "https://Example.COM:8443/a/b?c=d#frag", "example.com",
		    "/a/b?c=d", 8443, 1, 0 },
		{ "HTTP://h?q=1", "h", "/?q=1", 80, 0, 0 },
		{ "HtTpS://h#f", "h", "/", 443, 1, 0 },
		{ "http://[::1]:8080/x", "::1", "/x", 8080, 0, 1 },
		{ "https://[2001:DB8::1]", "2001:db8::1", "/", 443, 1, 1 },
		{ "http://[::ffff:10.0.0.1]/", "::ffff:10.0.0.1", "/", 80, 0,
		    1 },
		{ "http://10.0.0.1:65535/", "10.0.0.1", "/", 65535, 0, 0 },
		{ "http://a_b-c.d:1#x", "a_b-c.d", "/", 1, 0, 0 },
		{ "http://h:080/p/", "h", "/p/", 80, 0, 0 },
		{ "http://h/a%20b?x=%7C", "h", "/a%20b?x=%7C", 80, 0, 0 },
	};
	struct http_url u;
	size_t i;

	for (i = 0; i < ARRAY_LEN(ok); i++) {
		if (http_url_parse(&t_arena, ok[i].url, &u) != 0) {
			t_fail(__FILE__, __LINE__, "rejected %s", ok[i].url);
			continue;
		}
		T_EQS(u.host, ok[i].host);
		T_EQS(u.path, ok[i].path);
		T_EQI(u.port, ok[i].port);
		T_EQI(u.https, ok[i].https);
		T_EQI(u.is_ipv6, ok[i].v6);
	}
}

static void
t_url_bad(void)
{
	static const char *const bad[] = {
		"", "ftp://h/", "http:/h", "http//h", "http:h", "http://",
		"https://", "http:///x", "http://?x", "http://#x",
		"http://user:pw@h/", "http://user@h", "http://@h",
		"http://h:0/", "http://h:00000/", "http://h:65536/",
		"http://h:/",
		"http://h:99999999/", "http://h:8a/", "http://h:-1/",
		"http://h /", "http://h/a b", "http://h/\x01", "http://h/\x7f",
		"http://h/caf\xc3\xa9", "http://h\t/", "http://h\r\n/",
		" http://h/", "http://[::1/", "http://[]/", "http://[::g]/",
		"http://[1.2.3.4]/", "http://[::1]x/", "http://[::1]:/",
		"http://[::1%25eth0]/", "http://h%41/", "http://a:b:c/",
		"http://h!/", "http://ex*ample.com/", "mailto:x@y", "//h/",
	};
	struct http_url u;
	char host[300];
	size_t i;

	for (i = 0; i < ARRAY_LEN(bad); i++)
		if (http_url_parse(&t_arena, bad[i], &u) != -E_INVAL)
			t_fail(__FILE__, __LINE__, "accepted \"%s\"", bad[i]);
	/* Host names up to 255 bytes. */
	memcpy(host, "http://", 7);
	memset(host + 7, 'a', 255);
	host[262] = '\0';
	T_EQI(http_url_parse(&t_arena, host, &u), 0);
	T_EQI(strlen(u.host), 255);
	memcpy(host + 262, "a", 2);
	T_EQI(http_url_parse(&t_arena, host, &u), -E_INVAL);
}

static void
t_no_proxy(void)
{
	static const struct {
		const char	*list, *host;
		int		 want;
	} cases[] = {
		{ NULL, "a", 0 }, { "", "a", 0 }, { ",, ,", "a", 0 },
		{ "*", "anything.example", 1 }, { "foo, *", "bar", 1 },
		{ "*.example.com", "a.example.com", 0 },
		{ "example.com", "example.com", 1 },
		{ "example.com", "a.example.com", 1 },
		{ "example.com", "a.b.EXAMPLE.com", 1 },
		{ ".example.com", "a.example.com", 1 },
		{ ".example.com", "example.com", 1 },
		{ "example.com", "badexample.com", 0 },
		{ "example.com", "example.com.evil", 0 },
		{ "example.com", "com", 0 },
		{ "a.com, Example.COM:443 ,x", "example.com", 1 },
		{ "a.com,example.com", "b.com", 0 },
		{ "localhost,127.0.0.1", "LocalHost", 1 },
		{ "10.0.0.1", "10.0.0.1", 1 },
		{ "10.0.0.1:8080", "10.0.0.1", 1 },
		{ "0.0.1", "10.0.0.1", 0 },
		{ ".0.1", "10.0.0.1", 0 },
		{ "10.0.0.1", "x.10.0.0.1", 0 },
		{ "10.0.0", "10.0.0.1", 0 },
		{ "::1", "::1", 1 },
		{ "::1", "[::1]", 1 },
		{ "[::1]:8080", "::1", 1 },
		{ "[::1]", "[::1]", 1 },
		{ "::1", "1::1", 0 },
		{ "[::1", "::1", 0 },
		{ "fe80::1", "FE80::1", 1 },
	};
	size_t i;

	for (i = 0; i < ARRAY_LEN(cases); i++)
		if (http_no_proxy(cases[i].list, cases[i].host) !=
		    cases[i].want)
			t_fail(__FILE__, __LINE__, "no_proxy \"%s\" host %s",
			    cases[i].list ? cases[i].list : "(null)",
			    cases[i].host);
}

/* http_write_request for url into a fresh buffer: its text, or the error
 * as "E<n>". */
static const char *
req(const char *method, const char *url, int abs,
    const struct http_header *h, unsigned nh, size_t body_len)
{
	struct http_url u;
	struct sbuf sb;
	int e;

	sbuf_init(&sb, &t_arena, 0);
	if ((e = http_url_parse(&t_arena, url, &u)) != 0 ||
	    (e = http_write_request(&sb, method, &u, abs, h, nh,
	    body_len)) != 0)
		return arena_printf(&t_arena, "E%d", -e);
	return sb.p;
}

static void
t_write_request(void)
{
	static const struct http_header h1[] = {
		{ "Accept", "*/*" }, { "X-Empty", "" }, { "X-Tab", "a\tb" },
	};
	static const struct http_header h2[] = {
		{ "Authorization", "Bearer k" },
		{ "Content-Type", "application/json" },
	};
	static const struct http_header bad[][1] = {
		{ { "X", "a\r\nX-Evil: 1" } }, { { "X", "a\n" } },
		{ { "X", "a\rb" } }, { { "X", "\x01" } }, { { "X", "\x7f" } },
		{ { "Bad Name", "v" } }, { { "", "v" } }, { { "X:", "v" } },
		{ { "X\r\nY", "v" } }, { { "host", "evil" } },
		{ { "Content-Length", "5" } },
		{ { "transfer-encoding", "chunked" } },
	};
	struct http_url u;
	struct sbuf sb;
	char e[8];
	size_t i;

	T_EQS(req("GET", "http://example.com/p?q=1#f", 0, h1, 3, (size_t)-1),
	    "GET /p?q=1 HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n"
	    "X-Empty: \r\nX-Tab: a\tb\r\n\r\n");
	T_EQS(req("POST", "https://api.example.com:8443/v1", 0, h2, 2, 12),
	    "POST /v1 HTTP/1.1\r\nHost: api.example.com:8443\r\n"
	    "Authorization: Bearer k\r\nContent-Type: application/json\r\n"
	    "Content-Length: 12\r\n\r\n");
	T_EQS(req("POST", "https://h:443", 0, NULL, 0, 0),
	    "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n");
	T_EQS(req("GET", "http://[::1]:8080/x?y", 1, NULL, 0, (size_t)-1),
	    "GET http://[::1]:8080/x?y HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n");
	T_EQS(req("GET", "http://Proxy.Example:80", 1, NULL, 0, (size_t)-1),
	    "GET http://proxy.example/ HTTP/1.1\r\nHost: proxy.example\r\n"
	    "\r\n");
	T_EQS(req("HEAD", "http://h:8080", 0, NULL, 0, (size_t)-1),
	    "HEAD / HTTP/1.1\r\nHost: h:8080\r\n\r\n");
	T_EQS(req("GET", "https://[2001:db8::1]/", 0, NULL, 0, (size_t)-1),
	    "GET / HTTP/1.1\r\nHost: [2001:db8::1]\r\n\r\n");
	snprintf(e, sizeof(e), "E%d", E_INVAL);
	T_EQS(req("GE T", "http://h/", 0, NULL, 0, (size_t)-1), e);
	T_EQS(req("", "http://h/", 0, NULL, 0, (size_t)-1), e);
	T_EQS(req("GET\r\n", "http://h/", 0, NULL, 0, (size_t)-1), e);

	/* A bad header appends nothing to what the buffer held. */
	T_EQI(http_url_parse(&t_arena, "http://h/", &u), 0);
	for (i = 0; i < ARRAY_LEN(bad); i++) {
		sbuf_init(&sb, &t_arena, 0);
		sbuf_adds(&sb, "keep");
		if (http_write_request(&sb, "GET", &u, 0, bad[i], 1,
		    (size_t)-1) != -E_INVAL)
			t_fail(__FILE__, __LINE__, "header %zu accepted", i);
		T_EQS(sb.p, "keep");
	}
	/* The buffer's cap. */
	sbuf_init(&sb, &t_arena, 20);
	T_EQI(http_write_request(&sb, "GET", &u, 0, NULL, 0, (size_t)-1),
	    -E_LIMIT);
}

static void
t_write_connect(void)
{
	struct sbuf sb;

	sbuf_init(&sb, &t_arena, 0);
	T_EQI(http_write_connect(&sb, "api.example.com", 443, NULL), 0);
	T_EQS(sb.p, "CONNECT api.example.com:443 HTTP/1.1\r\n"
	    "Host: api.example.com:443\r\n\r\n");
	sbuf_init(&sb, &t_arena, 0);
	T_EQI(http_write_connect(&sb, "2001:db8::1", 8443, "Basic dTpw"), 0);
	T_EQS(sb.p, "CONNECT [2001:db8::1]:8443 HTTP/1.1\r\n"
	    "Host: [2001:db8::1]:8443\r\nProxy-Authorization: Basic dTpw\r\n"
	    "\r\n");
	sbuf_init(&sb, &t_arena, 0);
	T_EQI(http_write_connect(&sb, "h", 0, NULL), -E_INVAL);
	T_EQI(http_write_connect(&sb, "h", 65536, NULL), -E_INVAL);
	T_EQI(http_write_connect(&sb, "", 443, NULL), -E_INVAL);
	T_EQI(http_write_connect(&sb, "h x", 443, NULL), -E_INVAL);
	T_EQI(http_write_connect(&sb, "h\r\n", 443, NULL), -E_INVAL);
	T_EQI(http_write_connect(&sb, "h", 443, "Basic x\r\nX: y"),
	    -E_INVAL);
	T_EQI(sb.len, 0);
}

static void
t_head(void)
{
	static const char raw[] = "HTTP/1.1 200 OK\r\n"
	    "Content-Type: application/json; charset=utf-8\r\n"
	    "X-Multi:  a  b \t\r\nContent-Length: 2\r\nx-dup: 1\r\n"
	    "X-Dup: 2\r\nEmpty:\r\nobs: caf\xc3\xa9\r\n\r\n{}";
	struct http_head r;
	struct sbuf body;
	struct tc t;
	size_t i;

	for (i = 0; i < ARRAY_LEN(pieces); i++) {
		T_EQI(fetch(&t, raw, pieces[i], &r, &body), 0);
		T_EQS(t.m.out.p, GET_X);
		T_EQI(r.status, 200);
		T_EQI(r.minor, 1);
		T_EQS(r.reason, "OK");
		T_EQI(r.nhdrs, 7);
		T_EQS(r.hdrs[0].name, "Content-Type");
		T_EQS(r.content_type, "application/json; charset=utf-8");
		T_EQS(http_header(&r, "CONTENT-type"), r.content_type);
		T_EQS(http_header(&r, "x-multi"), "a  b");
		T_EQS(http_header(&r, "X-DUP"), "1");
		T_EQS(r.hdrs[4].value, "2");
		T_EQS(http_header(&r, "empty"), "");
		T_EQS(http_header(&r, "obs"), "caf\xc3\xa9");
		T(http_header(&r, "nope") == NULL);
		T(http_header(&r, "X-Dup ") == NULL);
		T_EQI(r.content_length, 2);
		T_EQI(r.chunked, 0);
		T_EQI(r.close, 0);
		T_EQI(r.retry_after, -1);
		T_EQS(body.p, "{}");
		T(http_conn_reusable(&t.c));
	}
	/* LF alone ends lines too; the reason may be missing. */
	T_EQI(fetch(&t, "HTTP/1.1 404 Not  Found\nContent-Length: 3\n\nabc",
	    1, &r, &body), 0);
	T_EQI(r.status, 404);
	T_EQS(r.reason, "Not  Found");
	T_EQS(body.p, "abc");
	T_EQI(fetch(&t, "HTTP/1.1 500\r\nContent-Length: 0\n\r\n", 0, &r,
	    &body), 0);
	T_EQS(r.reason, "");
	T(r.content_type == NULL);
	T_EQI(fetch(&t, "HTTP/1.1 502 \r\nContent-Length: 0\r\n\n", 2, &r,
	    &body), 0);
	T_EQS(r.reason, "");
	T_EQI(r.nhdrs, 1);
	/* HTTP/1.x, x > 1, is 1.1 to us. */
	T_EQI(fetch(&t, "HTTP/1.2 200 OK\r\nContent-Length: 0\r\n\r\n", 0, &r,
	    &body), 0);
	T_EQI(r.minor, 2);
	T(http_conn_reusable(&t.c));
}

static void
t_resp_feed(void)
{
	static const char raw[] = "HTTP/1.1 200 OK\r\nA: 1\r\n\r\nbody";
	struct http_head r;
	size_t used, i, n = sizeof(raw) - 1, off;

	/* Whole lines only; the rest comes again. */
	http_resp_init(&r, 0);
	T_EQI(http_head_feed(&r, &t_arena, raw, 10, &used), -E_PART);
	T_EQI(used, 0);
	T_EQI(http_head_feed(&r, &t_arena, raw, 20, &used), -E_PART);
	T_EQI(used, 17);
	T_EQI(http_head_feed(&r, &t_arena, raw + 17, n - 17, &used), 0);
	T_EQI(used, n - 17 - 4);
	T_EQI(r.nhdrs, 1);
	T_EQI(http_head_feed(&r, &t_arena, "x", 1, &used), 0);
	T_EQI(used, 0);
	/* Byte by byte. */
	http_resp_init(&r, 0);
	for (i = 1, off = 0; i <= n; i++) {
		int e = http_head_feed(&r, &t_arena, raw + off, i - off,
		    &used);

		off += used;
		if (e == 0)
			break;
		T_EQI(e, -E_PART);
	}
	T_EQI(off, n - 4);
	T_EQS(r.hdrs[0].value, "1");
	/* Errors stick. */
	http_resp_init(&r, 0);
	T_EQI(http_head_feed(&r, &t_arena, "HTTP/1.1 2000\n", 14, &used),
	    -E_PROTO);
	T_EQI(http_head_feed(&r, &t_arena, raw, n, &used), -E_PROTO);
}

static void
t_interim(void)
{
	static const char raw[] = "HTTP/1.1 100 Continue\r\n\r\n"
	    "HTTP/1.1 103 Early Hints\r\nLink: </a>; rel=preload\r\n\r\n"
	    "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n";
	struct http_head r;
	struct sbuf body;
	struct tc t;
	size_t i;

	for (i = 0; i < ARRAY_LEN(pieces); i++) {
		T_EQI(fetch(&t, raw, pieces[i], &r, &body), 0);
		T_EQI(r.status, 201);
		T_EQS(r.reason, "Created");
		T_EQI(r.nhdrs, 1);
		T(http_header(&r, "Link") == NULL);
		T_EQI(body.len, 0);
		T(http_conn_reusable(&t.c));
	}
	/* Only interims, then EOF. */
	T_EQI(fetch(&t, "HTTP/1.1 100 Continue\r\n\r\n", 0, &r, &body),
	    -E_PROTO);
}

static void
t_http10(void)
{
	struct http_head r;
	struct sbuf body;
	struct tc t;

	T_EQI(fetch(&t, "HTTP/1.0 200 OK\r\n\r\nhello", 3, &r, &body), 0);
	T_EQI(r.minor, 0);
	T_EQI(r.close, 1);
	T_EQS(body.p, "hello");
	T(!http_conn_reusable(&t.c));
	T_EQI(fetch(&t, "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi", 0,
	    &r, &body), 0);
	T_EQI(r.close, 1);
	T(!http_conn_reusable(&t.c));
	T_EQI(fetch(&t, "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\n"
	    "Content-Length: 2\r\n\r\nhi", 0, &r, &body), 0);
	T_EQI(r.close, 0);
	T(http_conn_reusable(&t.c));
	T_EQI(fetch(&t, "HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\n"
	    "Content-Length: 0\r\n\r\n", 0, &r, &body), 0);
	T_EQI(r.close, 1);
	T(!http_conn_reusable(&t.c));
	T_EQI(fetch(&t, "HTTP/1.1 200 OK\r\nConnection: closed\r\n"
	    "Connection: upgrade\r\nContent-Length: 0\r\n\r\n", 0, &r, &body),
	    0);
	T_EQI(r.close, 0);
}

static void
t_head_bad(void)
{
	static const char *const proto[] = {
		/* Status lines. */
		"HTTP/1.1 20 OK\r\n\r\n", "HTTP/1.1 2000 OK\r\n\r\n",
		"HTTP/2 200 OK\r\n\r\n", "HTTP/2.0 200 OK\r\n\r\n",
		"HTTP/1.1  200 OK\r\n\r\n", "http/1.1 200 OK\r\n\r\n",
		"HTTP/1.1 099 X\r\n\r\n", "HTTP/1.1 600 X\r\n\r\n",
		"HTTP/1.1 2x0 OK\r\n\r\n", "HTTP/1.1 200OK\r\n\r\n",
		"ICY 200 OK\r\n\r\n", "\r\nHTTP/1.1 200 OK\r\n\r\n",
		"HTTP/1.a 200 OK\r\n\r\n", "HTTP/1.1\t200 OK\r\n\r\n",
		"HTTP/1.1 101 Switching Protocols\r\n\r\n",
		"HTTP/1.1 200 O\x01K\r\n\r\n", "HTTP/1.1 200 OK\r\r\n\r\n",
		"HTTP/1.1 200 OK\rX: y\r\n\r\n", " HTTP/1.1 200 OK\r\n\r\n",
		/* Header lines, folding. */
		"HTTP/1.1 200 OK\r\nX-A: a\r\n b\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX-A: a\r\n\tb\r\n\r\n",
		"HTTP/1.1 200 OK\r\n continued\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX A: b\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX-A : b\r\n\r\n",
		"HTTP/1.1 200 OK\r\n: b\r\n\r\n",
		"HTTP/1.1 200 OK\r\nNoColon\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX: a\x01z\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX: a\r\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX(: a\r\n\r\n",
		"HTTP/1.1 200 OK\r\n\r\r\n",
		/* Framing. */
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked,chunked\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
		    "Transfer-Encoding: chunked\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: \r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: ,\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked;q=1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n"
		    "Content-Length: 2\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 1a\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 0x10\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 1 2\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 9999999999999999999\r\n"
		    "\r\n",
		/* EOF within the head. */
		"HTTP/1.1 200 OK\r\nX: y\r\n", "HTTP/1.1 200", "H",
		"HTTP/1.1 200 OK\r\n\r",
	};
	struct http_head r;
	struct sbuf body;
	struct tc t;
	size_t i;

	for (i = 0; i < ARRAY_LEN(proto); i++)
		if (fetch(&t, proto[i], 0, &r, &body) != -E_PROTO)
			t_fail(__FILE__, __LINE__, "not -E_PROTO: %zu", i);
	/* NUL in a header line. */
	T_EQI(fetchn(&t, "HTTP/1.1 200 OK\r\nX: a\0b\r\n\r\n", 27, 0, &r,
	    &body), -E_PROTO);
	/* Nothing at all: the server dropped the connection. */
	T_EQI(fetch(&t, "", 0, &r, &body), -E_IO);
	/* Accepted variants of the same headers. */
	T_EQI(fetch(&t, "HTTP/1.1 200 OK\r\nContent-Length: 3, 3,\r\n"
	    "content-length: 3\r\n\r\nabc", 1, &r, &body), 0);
	T_EQI(r.content_length, 3);
	T_EQS(body.p, "abc");
	T_EQI(fetch(&t, "HTTP/1.1 200 OK\r\nContent-Length: 007\r\n\r\n"
	    "1234567", 0, &r, &body), 0);
	T_EQS(body.p, "1234567");
	T_EQI(fetch(&t, "HTTP/1.1 200 OK\r\nTransfer-Encoding: , Chunked\r\n"
	    "\r\n0\r\n\r\n", 0, &r, &body), 0);
	T_EQI(r.chunked, 1);
	T(http_conn_reusable(&t.c));
	/* Both framings: chunked wins, and the connection is not reused. */
	T_EQI(fetch(&t, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", 3, &r,
	    &body), 0);
	T_EQI(r.chunked, 1);
	T_EQI(r.content_length, -1);
	T_EQI(r.close, 1);
	T_EQS(body.p, "ok");
	T(!http_conn_reusable(&t.c));
}

static void
t_errors(void)
{
	struct http_head r;
	struct sbuf body;
	struct tc t;
	char b[8];

	/* The transport's error comes through and sticks. */
	tc_init(&t, "HTTP/1.1 200 OK\r\n", 17, 0);
	t.m.end = -E_TIMEOUT;
	T_EQI(tc_send(&t, "GET"), 0);
	T_EQI(http_read_head(&t.c, &t_arena, &r), -E_TIMEOUT);
	T_EQI(http_read_head(&t.c, &t_arena, &r), -E_TIMEOUT);
	T_EQI(http_read_body(&t.c, b, sizeof(b)), -E_TIMEOUT);
	T_EQI(tc_send(&t, "GET"), -E_TIMEOUT);
	T(!http_conn_reusable(&t.c));
	/* A TLS close without close_notify in a body that runs to EOF. */
	tc_init(&t, "HTTP/1.1 200 OK\r\n\r\ndata", 23, 0);
	t.m.end = -E_TLS;
	T_EQI(tc_send(&t, "GET"), 0);
	T_EQI(http_read_head(&t.c, &t_arena, &r), 0);
	T_EQI(tc_body(&t, 100, &body), -E_TLS);
	T_EQS(body.p, "data");
	/* Misuse is refused without breaking the connection. */
	tc_init(&t, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", 39, 0);
	T_EQI(http_read_head(&t.c, &t_arena, &r), -E_INVAL);
	T_EQI(http_read_body(&t.c, b, sizeof(b)), -E_INVAL);
	T_EQI(tc_send(&t, "GET"), 0);
	T_EQI(tc_send(&t, "GET"), -E_INVAL);
	T_EQI(http_read_body(&t.c, b, sizeof(b)), -E_INVAL);
	T_EQI(http_read_head(&t.c, &t_arena, &r), 0);
	T_EQI(http_read_body(&t.c, b, 0), -E_INVAL);
	T_EQI(tc_send(&t, "GET"), -E_INVAL);
	T_EQI(http_read_body(&t.c, b, sizeof(b)), 1);
	T_EQI(http_read_body(&t.c, b, sizeof(b)), 0);
	T_EQI(http_read_body(&t.c, b, sizeof(b)), 0);
	T(http_conn_reusable(&t.c));
	/* A failed write. */
	tc_init(&t, "", 0, 0);
	sbuf_init(&t.m.out, &t_arena, 4);
	T_EQI(tc_send(&t, "GET"), -E_LIMIT);
	T_EQI(t.c.err, -E_LIMIT);
}

/* A head of exactly `size` bytes: 16 filler headers. */
static char *
big_head(size_t size, size_t *len)
{
	struct sbuf sb;
	size_t rest = size - 19, each = rest / 16, i, k;

	sbuf_init(&sb, &t_arena, 0);
	sbuf_adds(&sb, "HTTP/1.1 200 OK\r\n");
	for (i = 0; i < 16; i++) {
		k = i < 15 ? each : rest - 15 * each;
		sbuf_adds(&sb, "X: ");
		while (k-- > 5)
			sbuf_addc(&sb, 'a');
		sbuf_adds(&sb, "\r\n");
	}
	sbuf_adds(&sb, "\r\n");
	*len = sb.len;
	return sb.p;
}

static void
t_limits(void)
{
	struct http_head r;
	struct sbuf sb, body;
	struct tc t;
	const char *raw;
	size_t len, used, i;

	/* HTTP_MAX_HEADERS headers, then one more. */
	sbuf_init(&sb, &t_arena, 0);
	sbuf_adds(&sb, "HTTP/1.1 200 OK\r\n");
	for (i = 0; i < HTTP_MAX_HEADERS - 1; i++)
		sbuf_printf(&sb, "H%zu: %zu\r\n", i, i);
	sbuf_adds(&sb, "Content-Length: 0\r\n");
	len = sb.len;
	sbuf_adds(&sb, "\r\n");
	T_EQI(fetch(&t, sb.p, 3, &r, &body), 0);
	T_EQI(r.nhdrs, HTTP_MAX_HEADERS);
	T_EQS(http_header(&r, "h62"), "62");
	sbuf_truncate(&sb, len);
	sbuf_adds(&sb, "One: more\r\n\r\n");
	T_EQI(fetch(&t, sb.p, 0, &r, &body), -E_LIMIT);

	/* HTTP_MAX_HEAD bytes, then one more. */
	raw = big_head(HTTP_MAX_HEAD, &len);
	T_EQI(len, HTTP_MAX_HEAD);
	http_resp_init(&r, 0);
	T_EQI(http_head_feed(&r, &t_arena, raw, len, &used), 0);
	T_EQI(used, len);
	T_EQI(fetch(&t, raw, 5, &r, &body), 0);
	T_EQI(r.nhdrs, 16);
	raw = big_head(HTTP_MAX_HEAD + 1, &len);
	T_EQI(len, HTTP_MAX_HEAD + 1);
	http_resp_init(&r, 0);
	T_EQI(http_head_feed(&r, &t_arena, raw, len, &used), -E_LIMIT);
	T_EQI(fetch(&t, raw, 0, &r, &body), -E_LIMIT);
	/* A partial line past the cap fails before its end. */
	sbuf_init(&sb, &t_arena, 0);
	sbuf_adds(&sb, "HTTP/1.1 200 OK\r\nX: ");
	while (sb.len <= HTTP_MAX_HEAD)
		sbuf_addc(&sb, 'a');
	http_resp_init(&r, 0);
	T_EQI(http_head_feed(&r, &t_arena, sb.p, sb.len - 1, &used), -E_PART);
	http_resp_init(&r, 0);
	T_EQI(http_head_feed(&r, &t_arena, sb.p, sb.len, &used), -E_LIMIT);

	/* Interim heads count too: no endless 100 Continue. */
	sbuf_init(&sb, &t_arena, 0);
	for (i = 0; i < 1000; i++)
		sbuf_adds(&sb, "HTTP/1.1 100 Continue\r\n\r\n");
	T_EQI(fetch(&t, sb.p, 0, &r, &body), -E_LIMIT);

	/* A line longer than the receive buffer. */
	sbuf_init(&sb, &t_arena, 0);
	sbuf_adds(&sb, "HTTP/1.1 200 OK\r\nX: ");
	for (i = 0; i < sizeof(t.buf); i++)
		sbuf_addc(&sb, 'a');
	sbuf_adds(&sb, "\r\n\r\n");
	T_EQI(fetch(&t, sb.p, 0, &r, &body), -E_LIMIT);
}

static void
t_body_length(void)
{
	static const size_t reads[] = { 1, 7, 256 };
	struct http_head r;
	struct sbuf sb, body;
	struct tc t;
	size_t i, j, hlen;

	sbuf_init(&sb, &t_arena, 0);
	sbuf_adds(&sb, "HTTP/1.1 200 OK\r\nContent-Length: 300\r\n\r\n");
	hlen = sb.len;
	for (i = 0; i < 300; i++)
		sbuf_addc(&sb, (char)('0' + i % 10));
	for (i = 0; i < ARRAY_LEN(pieces); i++)
		for (j = 0; j < ARRAY_LEN(reads); j++) {
			tc_init(&t, sb.p, sb.len, pieces[i]);
			T_EQI(tc_send(&t, "GET"), 0);
			T_EQI(http_read_head(&t.c, &t_arena, &r), 0);
			T_EQI(tc_body(&t, reads[j], &body), 0);
			T_EQI(body.len, 300);
			T(memcmp(body.p, sb.p + hlen, 300) == 0);
			T(http_conn_reusable(&t.c));
		}
}

#define CHUNKED_HEAD	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
static const char chunked_body[] =
	"5;name=val\r\nhello\r\n"
	"1A ; ext=\"q;x\"\r\nabcdefghijklmnopqrstuvwxyz\r\n"
	"0007\n, world\n"
	"1a\r\nABCDEFGHIJKLMNOPQRSTUVWXYZ\r\n"
	"0;last\r\nTrailer-A: 1\r\nTrailer-B: 2\n\r\n";
static const char chunked_text[] = "helloabcdefghijklmnopqrstuvwxyz, world"
	"ABCDEFGHIJKLMNOPQRSTUVWXYZ";

static void
t_chunked(void)
{
	static const char raw[] = CHUNKED_HEAD "5;name=val\r\nhello\r\n"
	    "1A ; ext=\"q;x\"\r\nabcdefghijklmnopqrstuvwxyz\r\n"
	    "0007\n, world\n1a\r\nABCDEFGHIJKLMNOPQRSTUVWXYZ\r\n"
	    "0;last\r\nTrailer-A: 1\r\nTrailer-B: 2\n\r\n";
	struct http_head r;
	struct sbuf body;
	struct tc t;
	size_t i;

	for (i = 0; i < ARRAY_LEN(pieces); i++) {
		T_EQI(fetch(&t, raw, pieces[i], &r, &body), 0);
		T_EQI(r.chunked, 1);
		T_EQI(r.content_length, -1);
		T_EQS(body.p, chunked_text);
		T(http_conn_reusable(&t.c));
	}
	/* An empty body. */
	T_EQI(fetch(&t, CHUNKED_HEAD "0\r\n\r\n", 1, &r, &body), 0);
	T_EQI(body.len, 0);
	T(http_conn_reusable(&t.c));
}

static void
t_chunked_split(void)
{
	static const char raw[] = CHUNKED_HEAD "5;name=val\r\nhello\r\n"
	    "1A ; ext=\"q;x\"\r\nabcdefghijklmnopqrstuvwxyz\r\n"
	    "0007\n, world\n1a\r\nABCDEFGHIJKLMNOPQRSTUVWXYZ\r\n"
	    "0;last\r\nTrailer-A: 1\r\nTrailer-B: 2\n\r\n";
	struct http_body b;
	struct http_head r;
	struct sbuf body;
	struct tc t;
	size_t i, n = sizeof(chunked_body) - 1, off, used;
	long k;

	/* The decoder alone, two calls, split at every position. */
	for (i = 0; i <= n; i++) {
		sbuf_init(&body, &t_arena, 0);
		http_body_init(&b, HTTP_BODY_CHUNKED, -1);
		for (off = 0; off < n; off += used) {
			k = http_body_feed(&b, chunked_body + off,
			    (off < i ? i : n) - off, &used);
			if (k < 0 || (used == 0 && off < i)) {
				t_fail(__FILE__, __LINE__, "split %zu", i);
				break;
			}
			if (used == 0)
				break;
			sbuf_add(&body, chunked_body + off + used - (size_t)k,
			    (size_t)k);
		}
		T(http_body_done(&b));
		T_EQI(off, n);
		T_EQS(body.p, chunked_text);
		T_EQI(http_body_eof(&b), 0);
	}
	/* The connection, with the first read ending at every position. */
	for (i = 1; i < sizeof(raw) - 1; i++) {
		tc_init(&t, raw, sizeof(raw) - 1, 0);
		t.m.first = i;
		T_EQI(tc_send(&t, "GET"), 0);
		T_EQI(http_read_head(&t.c, &t_arena, &r), 0);
		T_EQI(tc_body(&t, 256, &body), 0);
		T_EQS(body.p, chunked_text);
		T(http_conn_reusable(&t.c));
	}
}

static void
t_chunked_bad(void)
{
	static const struct {
		const char	*body;
		int		 e;
	} bad[] = {
		{ "x\r\n", -E_PROTO }, { "\r\n", -E_PROTO },
		{ ";ext\r\n", -E_PROTO }, { " 5\r\n", -E_PROTO },
		{ "-5\r\n", -E_PROTO }, { "0x5\r\n", -E_PROTO },
		{ "5\r\nhelloX\r\n", -E_PROTO }, { "5\rhello", -E_PROTO },
		{ "5\r\nhello\r0\r\n\r\n", -E_PROTO },
		{ "5\r\nhello\n\n0\r\n\r\n", -E_PROTO },
		{ "5;a\x01z\r\nhello\r\n", -E_PROTO },
		{ "5;a\rz\r\nhello\r\n", -E_PROTO },
		{ "0\r\nX: y\r\r\n\r\n", -E_PROTO },
		{ "1000000000000000\r\n", -E_LIMIT },
		{ "10000000000000000\r\n", -E_LIMIT },
		{ "FFFFFFFFFFFFFFFFFFFF\r\n", -E_LIMIT },
		/* Complete to the decoder, cut short to the connection. */
		{ "FFFFFFFFFFFFFFF\r\nabc", -E_PROTO },
	};
	struct http_head r;
	struct sbuf sb, body;
	struct tc t;
	size_t i, ls;

	for (i = 0; i < ARRAY_LEN(bad); i++) {
		sbuf_init(&sb, &t_arena, 0);
		sbuf_adds(&sb, CHUNKED_HEAD);
		sbuf_adds(&sb, bad[i].body);
		if (fetch(&t, sb.p, 0, &r, &body) != bad[i].e)
			t_fail(__FILE__, __LINE__, "chunked \"%s\"",
			    bad[i].body);
	}
	/* Lines over HTTP_MAX_LINE: extensions, zeros, trailers. */
	for (i = 0; i < 3; i++) {
		sbuf_init(&sb, &t_arena, 0);
		sbuf_adds(&sb, CHUNKED_HEAD);
		sbuf_adds(&sb, i == 0 ? "1;" : i == 1 ? "" : "0\r\nX: ");
		ls = sizeof(CHUNKED_HEAD) - 1 + (i == 2 ? 3 : 0);
		while (sb.len < ls + HTTP_MAX_LINE + 1)
			sbuf_addc(&sb, i == 1 ? '0' : 'a');
		sbuf_adds(&sb, i == 1 ? "1\r\nx\r\n0\r\n\r\n" : "\r\nx\r\n");
		T_EQI(fetch(&t, sb.p, 0, &r, &body), -E_LIMIT);
	}
	/* Just under: fine. */
	sbuf_init(&sb, &t_arena, 0);
	sbuf_adds(&sb, CHUNKED_HEAD "1;");
	while (sb.len < sizeof(CHUNKED_HEAD) - 1 + HTTP_MAX_LINE)
		sbuf_addc(&sb, 'a');
	sbuf_adds(&sb, "\r\nx\r\n0\r\n\r\n");
	T_EQI(fetch(&t, sb.p, 0, &r, &body), 0);
	T_EQS(body.p, "x");
	/* Trailers over HTTP_MAX_HEAD in all. */
	sbuf_init(&sb, &t_arena, 0);
	sbuf_adds(&sb, CHUNKED_HEAD "0\r\n");
	for (i = 0; i < HTTP_MAX_HEAD / 500 + 1; i++)
		sbuf_printf(&sb, "X: %0500d\r\n", 0);
	sbuf_adds(&sb, "\r\n");
	T_EQI(fetch(&t, sb.p, 0, &r, &body), -E_LIMIT);
}

static void
t_truncated(void)
{
	static const char raw[] = CHUNKED_HEAD "5;name=val\r\nhello\r\n"
	    "1A ; ext=\"q;x\"\r\nabcdefghijklmnopqrstuvwxyz\r\n"
	    "0007\n, world\n1a\r\nABCDEFGHIJKLMNOPQRSTUVWXYZ\r\n"
	    "0;last\r\nTrailer-A: 1\r\nTrailer-B: 2\n\r\n";
	struct http_head r;
	struct sbuf body;
	struct tc t;
	size_t i, n = sizeof(raw) - 1;
	char b[8];

	T_EQI(fetch(&t, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", 0,
	    &r, &body), -E_PROTO);
	T_EQS(body.p, "abc");
	T_EQI(http_read_body(&t.c, b, sizeof(b)), -E_PROTO);
	T(!http_conn_reusable(&t.c));
	T_EQI(fetch(&t, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n", 0, &r,
	    &body), -E_PROTO);
	/* Chunked, cut anywhere before its very end. */
	for (i = sizeof(CHUNKED_HEAD) - 1; i < n; i++)
		if (fetchn(&t, raw, i, 3, &r, &body) != -E_PROTO)
			t_fail(__FILE__, __LINE__, "cut at %zu", i);
	T_EQI(fetchn(&t, raw, n, 3, &r, &body), 0);
	T_EQI(fetch(&t, CHUNKED_HEAD "5\r\nhello\r\n", 0, &r, &body),
	    -E_PROTO);
	T_EQS(body.p, "hello");
}

static void
t_close_body(void)
{
	struct http_head r;
	struct sbuf body;
	struct tc t;
	size_t i;

	for (i = 0; i < ARRAY_LEN(pieces); i++) {
		T_EQI(fetch(&t, "HTTP/1.1 200 OK\r\n"
		    "Content-Type: text/plain\r\n\r\nall the rest\r\n\r\n0\r\n",
		    pieces[i], &r, &body), 0);
		T_EQI(r.close, 1);
		T_EQI(r.content_length, -1);
		T_EQS(body.p, "all the rest\r\n\r\n0\r\n");
		T(!http_conn_reusable(&t.c));
		T_EQI(tc_send(&t, "GET"), -E_INVAL);
	}
	T_EQI(fetch(&t, "HTTP/1.1 200 OK\r\n\r\n", 0, &r, &body), 0);
	T_EQI(body.len, 0);
}

static void
t_keepalive(void)
{
#define R1	"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst"
#define R2	"HTTP/1.1 201 OK\r\nTransfer-Encoding: chunked\r\n\r\n" \
		"6\r\nsecond\r\n0\r\n\r\n"
	static const char raw[] = R1 R2 "HTTP/1.1 202 OK\r\n"
	    "Connection: close\r\nContent-Length: 5\r\n\r\nthird";
	struct http_head r;
	struct sbuf body;
	struct tc t;
	size_t i;

	for (i = 0; i < ARRAY_LEN(pieces); i++) {
		tc_init(&t, raw, sizeof(raw) - 1, pieces[i]);
		t.m.gates[0] = sizeof(R1) - 1;
		t.m.gates[1] = sizeof(R1 R2) - 1;
		t.m.ngates = 2;
		T_EQI(tc_send(&t, "GET"), 0);
		T_EQI(http_read_head(&t.c, &t_arena, &r), 0);
		T_EQI(r.status, 200);
		T(!http_conn_reusable(&t.c));
		T_EQI(tc_send(&t, "GET"), -E_INVAL);	/* body unread */
		T_EQI(tc_body(&t, 100, &body), 0);
		T_EQS(body.p, "first");
		T(http_conn_reusable(&t.c));
		T_EQI(tc_send(&t, "GET"), 0);
		T_EQI(http_read_head(&t.c, &t_arena, &r), 0);
		T_EQI(r.status, 201);
		T_EQI(tc_body(&t, 100, &body), 0);
		T_EQS(body.p, "second");
		T(http_conn_reusable(&t.c));
		T_EQI(tc_send(&t, "HEAD"), 0);
		T_EQI(http_read_head(&t.c, &t_arena, &r), 0);
		T_EQI(r.status, 202);
		T_EQI(r.content_length, 5);
		T_EQI(tc_body(&t, 100, &body), 0);
		T_EQI(body.len, 0);
		T(!http_conn_reusable(&t.c));	/* close, and "third" */
		T_EQS(t.m.out.p, GET_X GET_X
		    "HEAD /x HTTP/1.1\r\nHost: example.com\r\n\r\n");
	}
	/* Bytes after the body: something is off, do not reuse. */
	T_EQI(fetch(&t, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\naX", 0,
	    &r, &body), 0);
	T_EQS(body.p, "a");
	T(!http_conn_reusable(&t.c));
	/* A reused connection that the server closed meanwhile. */
	tc_init(&t, raw, sizeof(R1) - 1, 0);
	T_EQI(tc_send(&t, "GET"), 0);
	T_EQI(http_read_head(&t.c, &t_arena, &r), 0);
	T_EQI(tc_body(&t, 100, &body), 0);
	T(http_conn_reusable(&t.c));
	T_EQI(tc_send(&t, "GET"), 0);
	T_EQI(http_read_head(&t.c, &t_arena, &r), -E_IO);
}

static void
t_no_body(void)
{
	struct http_head r;
	struct sbuf body;
	struct tc t;
	static const char head_raw[] = "HTTP/1.1 200 OK\r\n"
	    "Content-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n";
	char b[4];

	tc_init(&t, head_raw, sizeof(head_raw) - 1, 0);
	T_EQI(tc_send(&t, "HEAD"), 0);
	T_EQI(http_read_head(&t.c, &t_arena, &r), 0);
	T_EQI(http_read_body(&t.c, b, sizeof(b)), 0);
	T_EQI(fetch(&t, "HTTP/1.1 204 No Content\r\n\r\n", 0, &r, &body), 0);
	T(http_conn_reusable(&t.c));
	T_EQI(fetch(&t, "HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n"
	    "\r\n", 0, &r, &body), 0);
	T_EQI(r.content_length, 50);
	T(http_conn_reusable(&t.c));
}

static void
t_connect(void)
{
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	static const char early[] = "HTTP/1.1 200 OK\r\n\r\n\x16\x03\x01";
	static const char denied[] = "HTTP/1.1 407 Proxy Auth Required\r\n"
	    "Proxy-Authenticate: Basic realm=\"p\"\r\nContent-Length: 4\r\n\r\n"
	    "nope";
	struct http_head r;
	struct sbuf sb, body;
	struct tc t;

	sbuf_init(&sb, &t_arena, 0);
	T_EQI(http_write_connect(&sb, "api.example.com", 443, NULL), 0);
	tc_init(&t, ok, sizeof(ok) - 1, 0);
	T_EQI(http_send(&t.c, &sb, NULL, 0), 0);
	T_EQI(http_read_head(&t.c, &t_arena, &r), 0);
	T_EQI(r.close, 1);
	T_EQI(tc_body(&t, 10, &body), 0);
	T_EQS(t.m.out.p, sb.p);
	tc_init(&t, early, sizeof(early) - 1, 0);
	T_EQI(http_send(&t.c, &sb, NULL, 0), 0);
	T_EQI(http_read_head(&t.c, &t_arena, &r), -E_PROTO);
	tc_init(&t, denied, sizeof(denied) - 1, 0);
	T_EQI(http_send(&t.c, &sb, NULL, 0), 0);
	T_EQI(http_read_head(&t.c, &t_arena, &r), 0);
	T_EQI(r.status, 407);
	T_EQI(tc_body(&t, 10, &body), 0);
	T_EQS(body.p, "nope");
}

static void
t_send_body(void)
{
	static const char raw[] =
	    "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
	struct http_url u;
	struct sbuf sb;
	struct tc t;

	T_EQI(http_url_parse(&t_arena, "https://h/v1", &u), 0);
	sbuf_init(&sb, &t_arena, 0);
	T_EQI(http_write_request(&sb, "POST", &u, 0, NULL, 0, 7), 0);
	tc_init(&t, raw, sizeof(raw) - 1, 0);
	T_EQI(http_send(&t.c, &sb, "{\"a\":1}", 7), 0);
	T_EQS(t.m.out.p, "POST /v1 HTTP/1.1\r\nHost: h\r\nContent-Length: 7\r\n"
	    "\r\n{\"a\":1}");
	/* A head whose builder failed is not sent. */
	sbuf_init(&sb, &t_arena, 8);
	T_EQI(http_write_request(&sb, "POST", &u, 0, NULL, 0, 7), -E_LIMIT);
	tc_init(&t, raw, sizeof(raw) - 1, 0);
	T_EQI(http_send(&t.c, &sb, "x", 1), -E_LIMIT);
	T_EQI(t.m.out.len, 0);
	T_EQI(t.c.err, 0);
}

/* Retry-After of a 503 parsed at `now`. */
static long
retry(const char *v, long long now)
{
	struct http_head r;
	size_t used;
	char *raw = arena_printf(&t_arena, "HTTP/1.1 503 Busy\r\n"
	    "Retry-After: %s\r\n\r\n", v);

	http_resp_init(&r, now);
	if (raw == NULL || http_head_feed(&r, &t_arena, raw, strlen(raw),
	    &used) != 0)
		return -99;
	return r.retry_after;
}

static void
t_retry_after(void)
{
	static const char raw[] = "HTTP/1.1 429 Slow Down\r\n"
	    "Retry-After: Sun, 06 Nov 1994 08:50:37 GMT\r\n"
	    "Retry-After: 5\r\nContent-Length: 0\r\n\r\n";
	struct http_head r;
	struct sbuf body;
	struct tc t;

	T_EQI(retry("120", 0), 120);
	T_EQI(retry(" 0 ", 0), 0);
	T_EQI(retry("999999999", 0), 999999999);
	T_EQI(retry("99999999999", 0), 0x7fffffff);
	T_EQI(retry("Sun, 06 Nov 1994 08:49:37 GMT", 784111777 - 100), 100);
	T_EQI(retry("Sun, 06 Nov 1994 08:49:37 GMT", 784111777 + 5), 0);
	T_EQI(retry("Sun, 06 Nov 1994 08:49:37 GMT", 0), -1);
	T_EQI(retry("Thu, 29 Feb 2024 12:00:00 GMT", 1709208000 - 7), 7);
	T_EQI(retry("Mon, 01 Mar 2100 00:00:00 GMT", 4107542400LL - 1000),
	    1000);
	T_EQI(retry("Sat, 01 Jan 2000 00:00:00 GMT", 946684800 - 86400),
	    86400);
	T_EQI(retry("Wed, 31 Dec 2025 23:59:59 GMT", 1767225599 - 1), 1);
	T_EQI(retry("Sunday, 06-Nov-94 08:49:37 GMT", 1), -1);
	T_EQI(retry("Sun Nov  6 08:49:37 1994", 1), -1);
	T_EQI(retry("Sun, 06 Foo 1994 08:49:37 GMT", 1), -1);
	T_EQI(retry("Xyz, 06 Nov 1994 08:49:37 GMT", 1), -1);
	T_EQI(retry("Sun, 06 Nov 1994 24:49:37 GMT", 1), -1);
	T_EQI(retry("Sun, 32 Nov 1994 08:49:37 GMT", 1), -1);
	T_EQI(retry("Sun, 06 Nov 1994 08:49:37 UTC", 1), -1);
	T_EQI(retry("Sun, 6 Nov 1994 08:49:37 GMT", 1), -1);
	T_EQI(retry("soon", 0), -1);
	T_EQI(retry("-5", 0), -1);
	T_EQI(retry("1.5", 0), -1);
	T_EQI(retry("", 0), -1);
	/* Through a connection, with its clock. */
	tc_init(&t, raw, sizeof(raw) - 1, 1);
	t.c.now = 784111777;
	T_EQI(tc_send(&t, "GET"), 0);
	T_EQI(http_read_head(&t.c, &t_arena, &r), 0);
	T_EQI(r.status, 429);
	T_EQI(r.retry_after, 60);
	T_EQI(fetch(&t, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 0, &r,
	    &body), 0);
	T_EQI(r.retry_after, -1);
}

static void
t_oom(void)
{
	static const char raw[] = "HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\n"
	    "Content-Length: 2\r\n\r\nok";
	struct http_head r;
	struct arena a;
	struct tc t;
	unsigned i, nomem = 0;
	int e;

	for (i = 0; i < 64; i++) {
		arena_init(&a, "oom");
		tc_init(&t, raw, sizeof(raw) - 1, 0);
		T_EQI(tc_send(&t, "GET"), 0);
		mem_set_limit(mem_used() + i * 128);
		e = http_read_head(&t.c, &a, &r);
		mem_set_limit(0);
		T(e == 0 || e == -E_NOMEM);
		nomem += e == -E_NOMEM;
		if (e == 0)
			T_EQS(http_header(&r, "b"), "2");
		arena_reset(&a);
	}
	T(nomem > 0 && nomem < 64);
}

static const struct unit_case cases[] = {
	{ "url_good", t_url_good },
	{ "url_bad", t_url_bad },
	{ "no_proxy", t_no_proxy },
	{ "write_request", t_write_request },
	{ "write_connect", t_write_connect },
	{ "head", t_head },
	{ "resp_feed", t_resp_feed },
	{ "interim", t_interim },
	{ "http10", t_http10 },
	{ "head_bad", t_head_bad },
	{ "errors", t_errors },
	{ "limits", t_limits },
	{ "body_length", t_body_length },
	{ "chunked", t_chunked },
	{ "chunked_split", t_chunked_split },
	{ "chunked_bad", t_chunked_bad },
	{ "truncated", t_truncated },
	{ "close_body", t_close_body },
	{ "keepalive", t_keepalive },
	{ "no_body", t_no_body },
	{ "connect", t_connect },
	{ "send_body", t_send_body },
	{ "retry_after", t_retry_after },
	{ "oom", t_oom },
};

const struct unit_suite suite_http = { "http", cases, ARRAY_LEN(cases) };
