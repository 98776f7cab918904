/* http.c - HTTP/1.1 client protocol: RFC 9110 (semantics), RFC 9112
 * (message syntax and framing), RFC 3986 (URLs).
 *
 * A head is parsed a line at a time as bytes arrive, so only its longest
 * line must fit in the receive buffer; header strings are copied into the
 * caller's arena. The body decoder copies nothing: it walks the chunk
 * framing byte by byte and points at the runs of body bytes between it.
 */
#include "net/http.h"

#include <string.h>
#include <strings.h>

enum { C_IDLE, C_SENT, C_BODY, C_DONE };
enum { B_DATA, B_SIZE, B_EXT, B_DATA_END, B_TRAILER, B_DONE };

static int
is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int
is_alnum(int c)
{
	return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

/* RFC 9110 section 5.6.2 token. */
static int
is_token(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!is_alnum(s[i]) && (s[i] == '\0' ||
		    strchr("!#$%&'*+-.^_`|~", s[i]) == NULL))
			return 0;
	return n > 0;
}

/* No control characters (HTAB allowed when tab is set). */
static int
is_text(const char *s, size_t n, int tab)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; n > 0; n--, p++)
		if ((*p < ' ' && !(tab && *p == '\t')) || *p == 0x7f)
			return 0;
	return 1;
}

/* Visible ASCII only, at least one byte: URL parts. */
static int
is_graph(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p > ' ' && *p < 0x7f)
		p++;
	return *p == '\0' && p != (const unsigned char *)s;
}

/* Cut the next element off a comma-separated list; returns the rest, or
 * NULL after the last one. Elements may be empty (RFC 9110 5.6.1). */
static const char *
next_elem(const char *p, struct str *e)
{
	const char *c = strchr(p, ',');

	e->p = p;
	e->n = c != NULL ? (size_t)(c - p) : strlen(p);
	*e = str_trim(*e);
	return c != NULL ? c + 1 : NULL;
}

static int
str_ieq(struct str s, const char *lit)
{
	return strlen(lit) == s.n && strncasecmp(s.p, lit, s.n) == 0;
}

/* see http.h */
int
http_url_parse(struct arena *a, const char *url, struct http_url *u)
{
	const char *p, *s, *h, *end;
	unsigned long port = 0;
	size_t hn, n, slash, i;
	char *host, *path;

	for (s = url; *s != '\0'; s++)
		if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 0x7f)
			return -E_INVAL;
	memset(u, 0, sizeof(*u));
	if (strncasecmp(url, "http://", 7) == 0)
		p = url + 7;
	else if (strncasecmp(url, "https://", 8) == 0)
		p = url + 8, u->https = 1;
	else
		return -E_INVAL;
	end = p + strcspn(p, "/?#");
	if (memchr(p, '@', (size_t)(end - p)) != NULL)
		return -E_INVAL;
	if (*p == '[') {
		for (h = s = p + 1; s < end && *s != ']'; s++)
			if (str_hex_val(*s) < 0 && *s != ':' && *s != '.')
				return -E_INVAL;
		hn = (size_t)(s - h);
		if (s == end || hn > 45 || memchr(h, ':', hn) == NULL)
			return -E_INVAL;
		s++;
		u->is_ipv6 = 1;
	} else {
		for (h = s = p; s < end && *s != ':'; s++)
			if (!is_alnum(*s) && strchr("-._", *s) == NULL)
				return -E_INVAL;
		hn = (size_t)(s - h);
		if (hn == 0 || hn > 255)
			return -E_INVAL;
	}
	if (s < end) {
		if (*s != ':' || end - s < 2 || end - s > 6)
			return -E_INVAL;
		for (s++; s < end; s++) {
			if (!is_digit(*s))
				return -E_INVAL;
			port = port * 10 + (unsigned long)(*s - '0');
		}
		if (port == 0 || port > 65535)
			return -E_INVAL;
	}
	u->port = port != 0 ? (unsigned)port : u->https ? 443 : 80;
	n = strcspn(end, "#");
	slash = n == 0 || *end != '/';
	if ((host = arena_strndup(a, h, hn)) == NULL ||
	    (path = arena_alloc(a, n + slash + 1)) == NULL)
		return -E_NOMEM;
	for (i = 0; i < hn; i++)
		if (host[i] >= 'A' && host[i] <= 'Z')
			host[i] |= 0x20;
	u->host = host;
	path[0] = '/';
	memcpy(path + slash, end, n);
	path[n + slash] = '\0';
	u->path = path;
	return 0;
}

/* An IP address, as far as NO_PROXY cares: a colon, or digits and dots. */
static int
is_ip(struct str s)
{
	size_t i;

	if (memchr(s.p, ':', s.n) != NULL)
		return 1;
	for (i = 0; i < s.n; i++)
		if (!is_digit(s.p[i]) && s.p[i] != '.')
			return 0;
	return 1;
}

/* see http.h */
int
http_no_proxy(const char *no_proxy, const char *host)
{
	struct str e, h = str_z(host);
	const char *p, *c;

	if (no_proxy == NULL || host == NULL)
		return 0;
	if (h.n >= 2 && h.p[0] == '[' && h.p[h.n - 1] == ']')
		h.p++, h.n -= 2;
	for (p = no_proxy; p != NULL; ) {
		p = next_elem(p, &e);
		if (e.n == 1 && e.p[0] == '*')
			return 1;
		if (e.n > 0 && e.p[0] == '[') {
			if ((c = memchr(e.p, ']', e.n)) == NULL)
				continue;
			e.n = (size_t)(c - e.p) - 1;
			e.p++;
		} else if ((c = memchr(e.p, ':', e.n)) != NULL &&
		    memchr(c + 1, ':', e.n - (size_t)(c + 1 - e.p)) == NULL)
			e.n = (size_t)(c - e.p);	/* name:port */
		if (e.n > 0 && e.p[0] == '.')
			e.p++, e.n--;
		if (e.n == 0 || e.n > h.n ||
		    strncasecmp(h.p + h.n - e.n, e.p, e.n) != 0)
			continue;
		if (e.n == h.n || (h.p[h.n - e.n - 1] == '.' && !is_ip(h) &&
		    !is_ip(e)))
			return 1;
	}
	return 0;
}

static void
put_host(struct sbuf *sb, const char *host, int v6, unsigned port,
    unsigned dflt)
{
	sbuf_printf(sb, v6 ? "[%s]" : "%s", host);
	if (port != dflt)
		sbuf_printf(sb, ":%u", port);
}

/* see http.h */
int
http_write_request(struct sbuf *sb, const char *method,
    const struct http_url *u, int absolute_form,
    const struct http_header *hdrs, unsigned nhdrs, size_t body_len)
{
	static const char *const own[] = {
		"Host", "Content-Length", "Transfer-Encoding"
	};
	unsigned dflt = u->https ? 443 : 80, i, j;
	size_t start = sb->len;
	const char *v;

	if (!is_token(method, strlen(method)) || !is_graph(u->host) ||
	    !is_graph(u->path) || u->path[0] != '/')
		return -E_INVAL;
	sbuf_adds(sb, method);
	sbuf_addc(sb, ' ');
	if (absolute_form) {
		sbuf_adds(sb, u->https ? "https://" : "http://");
		put_host(sb, u->host, u->is_ipv6, u->port, dflt);
	}
	sbuf_printf(sb, "%s HTTP/1.1\r\nHost: ", u->path);
	put_host(sb, u->host, u->is_ipv6, u->port, dflt);
	sbuf_adds(sb, "\r\n");
	for (i = 0; i < nhdrs; i++) {
		v = hdrs[i].value;
		if (!is_token(hdrs[i].name, strlen(hdrs[i].name)) ||
		    !is_text(v, strlen(v), 1))
			goto bad;
		for (j = 0; j < ARRAY_LEN(own); j++)
			if (strcasecmp(hdrs[i].name, own[j]) == 0)
				goto bad;
		sbuf_printf(sb, "%s: %s\r\n", hdrs[i].name, v);
	}
	if (body_len != (size_t)-1)
		sbuf_printf(sb, "Content-Length: %zu\r\n", body_len);
	sbuf_adds(sb, "\r\n");
	return sb->err;
bad:
	sbuf_truncate(sb, start);
	return -E_INVAL;
}

/* see http.h */
int
http_write_connect(struct sbuf *sb, const char *host, unsigned port,
    const char *proxy_auth)
{
	int v6 = strchr(host, ':') != NULL;

	if (!is_graph(host) || port == 0 || port > 65535 ||
	    (proxy_auth != NULL && !is_text(proxy_auth, strlen(proxy_auth), 1)))
		return -E_INVAL;
	sbuf_adds(sb, "CONNECT ");
	put_host(sb, host, v6, port, 0);
	sbuf_adds(sb, " HTTP/1.1\r\nHost: ");
	put_host(sb, host, v6, port, 0);
	if (proxy_auth != NULL)
		sbuf_printf(sb, "\r\nProxy-Authorization: %s", proxy_auth);
	sbuf_adds(sb, "\r\n\r\n");
	return sb->err;
}

/* k decimal digits, or -1. */
static long long
num(const char *s, size_t k)
{
	long long v = 0;

	while (k-- > 0) {
		if (!is_digit(*s))
			return -1;
		v = v * 10 + (*s++ - '0');
	}
	return v;
}

/* Index of the 3-letter name s in list, or -1. */
static int
name3(const char *list, const char *s)
{
	int i;

	for (i = 0; list[i] != '\0'; i += 3)
		if (memcmp(list + i, s, 3) == 0)
			return i / 3;
	return -1;
}

/* RFC 9110 section 10.2.3: delta-seconds, or an IMF-fixdate such as
 * "Sun, 06 Nov 1994 08:49:37 GMT" (the obsolete date forms give -1). */
static long
retry_after(const char *v, long long now)
{
	size_t n = strlen(v);
	long long y, d, hh, mi, ss, t;
	int m;

	if (n > 0 && strspn(v, "0123456789") == n)
		return n > 9 ? 0x7fffffff : (long)num(v, n);
	if (n != 29 || now <= 0 || memcmp(v + 3, ", ", 2) != 0 ||
	    v[7] != ' ' || v[11] != ' ' || v[16] != ' ' || v[19] != ':' ||
	    v[22] != ':' || memcmp(v + 25, " GMT", 4) != 0 ||
	    name3("MonTueWedThuFriSatSun", v) < 0 ||
	    (m = name3("JanFebMarAprMayJunJulAugSepOctNovDec", v + 8)) < 0)
		return -1;
	d = num(v + 5, 2);
	y = num(v + 12, 4);
	hh = num(v + 17, 2);
	mi = num(v + 20, 2);
	ss = num(v + 23, 2);
	if (d < 1 || d > 31 || y < 0 || hh < 0 || hh > 23 || mi < 0 ||
	    mi > 59 || ss < 0 || ss > 60)
		return -1;
	t = utc_days(y, m + 1, (int)d) * 86400 + hh * 3600 + mi * 60 + ss - now;
	return t < 0 ? 0 : t > 0x7fffffff ? 0x7fffffff : (long)t;
}

/* Framing and hints from the complete header list (RFC 9112 6.3). */
static int
framing(struct http_head *r)
{
	const struct http_header *h;
	const char *p;
	struct str e;
	long long v;
	unsigned i, k, hosts = 0;
	int keep = 0;

	for (i = 0; i < r->nhdrs; i++) {
		h = &r->hdrs[i];
		k = 0;
		if (strcasecmp(h->name, "Host") == 0)
			hosts++;
		if (strcasecmp(h->name, "Content-Length") == 0) {
			for (p = h->value; p != NULL; ) {
				p = next_elem(p, &e);
				if (e.n == 0)
					continue;
				v = e.n <= 18 ? num(e.p, e.n) : -1;
				if (v < 0 || (r->content_length >= 0 &&
				    v != r->content_length))
					return -E_PROTO;
				r->content_length = v;
				k++;
			}
			if (k == 0)
				return -E_PROTO;
		} else if (strcasecmp(h->name, "Transfer-Encoding") == 0) {
			for (p = h->value; p != NULL; ) {
				p = next_elem(p, &e);
				if (e.n == 0)
					continue;
				if (!str_ieq(e, "chunked") || r->chunked)
					return -E_PROTO;
				r->chunked = 1;
				k++;
			}
			if (k == 0)
				return -E_PROTO;
		} else if (strcasecmp(h->name, "Connection") == 0) {
			for (p = h->value; p != NULL; ) {
				p = next_elem(p, &e);
				if (str_ieq(e, "close"))
					r->close = 1;
				else if (str_ieq(e, "keep-alive"))
					keep = 1;
			}
		} else if (strcasecmp(h->name, "Retry-After") == 0) {
			if (r->retry_after < 0)
				r->retry_after = retry_after(h->value, r->now);
		} else if (strcasecmp(h->name, "Content-Type") == 0) {
			if (r->content_type == NULL)
				r->content_type = h->value;
		}
	}
	/* Both framings at once smell of smuggling: a server refuses the
	 * request, a client reads chunked and closes. */
	if (r->request && (hosts > 1 || (r->chunked &&
	    r->content_length >= 0)))
		return -E_PROTO;
	if (r->chunked && r->content_length >= 0) {
		r->content_length = -1;
		r->close = 1;
	}
	if (r->minor == 0 && (!keep || r->chunked))
		r->close = 1;
	return 0;
}

/* "HTTP/1.1 200 OK"; the reason may be empty, even without its space. */
static int
status_line(struct http_head *r, struct arena *a, const char *s, size_t n)
{
	long long st;
	size_t k;

	if (n < 12 || memcmp(s, "HTTP/1.", 7) != 0 || !is_digit(s[7]) ||
	    s[8] != ' ' || (n > 12 && s[12] != ' ') || !is_text(s, n, 1))
		return -E_PROTO;
	st = num(s + 9, 3);
	if (st < 100 || st > 599 || st == 101)
		return -E_PROTO;
	r->status = (int)st;
	r->minor = s[7] - '0';
	k = MIN(n, 13);
	if ((r->reason = arena_strndup(a, s + k, n - k)) == NULL)
		return -E_NOMEM;
	return 0;
}

static int
header_line(struct http_head *r, struct arena *a, const char *s, size_t n)
{
	const char *c = memchr(s, ':', n);
	struct http_header *h;
	struct str v;

	/* A folded line starts with a space: no token before a colon. */
	if (c == NULL || !is_token(s, (size_t)(c - s)) ||
	    !is_text(c + 1, n - (size_t)(c + 1 - s), 1))
		return -E_PROTO;
	if (r->nhdrs == HTTP_MAX_HEADERS)
		return -E_LIMIT;
	if (r->hdrs == NULL && (r->hdrs = arena_alloc(a,
	    HTTP_MAX_HEADERS * sizeof(*r->hdrs))) == NULL)
		return -E_NOMEM;
	v.p = c + 1;
	v.n = n - (size_t)(c + 1 - s);
	h = &r->hdrs[r->nhdrs];
	if ((h->name = arena_strndup(a, s, (size_t)(c - s))) == NULL ||
	    (h->value = str_dup(a, str_trim(v))) == NULL)
		return -E_NOMEM;
	r->nhdrs++;
	return 0;
}

/* "GET /path HTTP/1.1": a token, one space, an origin-form target (or
 * "*"), one space, the version. */
static int
request_line(struct http_head *r, struct arena *a, const char *s, size_t n)
{
	const char *sp1 = memchr(s, ' ', n), *sp2;
	size_t m, t, i;

	if (sp1 == NULL || n < 14 || memcmp(s + n - 9, " HTTP/1.", 8) != 0 ||
	    !is_digit(s[n - 1]))
		return -E_PROTO;
	m = (size_t)(sp1 - s);
	sp2 = s + n - 9;
	if (sp1 + 1 >= sp2)
		return -E_PROTO;
	t = (size_t)(sp2 - (sp1 + 1));
	for (i = 0; i < t; i++)
		if ((unsigned char)sp1[1 + i] <= ' ' ||
		    (unsigned char)sp1[1 + i] >= 0x7f)
			return -E_PROTO;
	if (m == 0 || !is_token(s, m) || t == 0 || (sp1[1] != '/' && !(t == 1 &&
	    sp1[1] == '*' && m == 7 && memcmp(s, "OPTIONS", 7) == 0)))
		return -E_PROTO;
	r->minor = s[n - 1] - '0';
	if ((r->method = arena_strndup(a, s, m)) == NULL ||
	    (r->target = arena_strndup(a, sp1 + 1, t)) == NULL)
		return -E_NOMEM;
	return 0;
}

/* One line without its end: 0 for more, 1 at the end of the head. */
static int
head_line(struct http_head *r, struct arena *a, const char *s, size_t n)
{
	int e;

	if (r->request && r->nlines == 0 && n == 0)
		return 0;		/* stray CRLF between requests */
	if (r->nlines++ == 0) {
		r->mark = arena_mark(a);
		return r->request ? request_line(r, a, s, n) :
		    status_line(r, a, s, n);
	}
	if (n > 0)
		return header_line(r, a, s, n);
	if (r->request || r->status >= 200)
		return (e = framing(r)) != 0 ? e : 1;
	/* The end of an interim response: the final one follows. */
	arena_reset_to(a, r->mark);
	r->reason = NULL;
	r->hdrs = NULL;
	r->nhdrs = r->nlines = 0;
	return 0;
}

/* see http.h */
void
http_resp_init(struct http_head *r, long long now)
{
	memset(r, 0, sizeof(*r));
	r->content_length = -1;
	r->retry_after = -1;
	r->now = now;
}

/* see http.h */
void
http_req_init(struct http_head *r)
{
	http_resp_init(r, 0);
	r->request = 1;
}

/* see http.h */
int
http_head_feed(struct http_head *r, struct arena *a, const char *in,
    size_t n, size_t *used)
{
	const char *lf;
	size_t k;
	int e = 0;

	*used = 0;
	if (r->err != 0 || r->done)
		return r->err;
	while (e == 0) {
		k = n - *used;
		lf = r->scan < k ? memchr(in + *used + r->scan, '\n',
		    k - r->scan) : NULL;
		if (lf == NULL) {
			r->scan = k;
			if (k <= HTTP_MAX_HEAD - r->head_len)
				return -E_PART;
			e = -E_LIMIT;
			break;
		}
		r->scan = 0;
		k = (size_t)(lf - (in + *used)) + 1;
		if (k > HTTP_MAX_HEAD - r->head_len) {
			e = -E_LIMIT;
			break;
		}
		r->head_len += k;
		e = head_line(r, a, in + *used, k - 1 -
		    (k > 1 && lf[-1] == '\r'));
		*used += k;
	}
	if (e == 1) {
		r->done = 1;
		return 0;
	}
	return r->err = e;
}

/* see http.h */
const char *
http_header(const struct http_head *r, const char *name)
{
	unsigned i;

	for (i = 0; i < r->nhdrs; i++)
		if (strcasecmp(r->hdrs[i].name, name) == 0)
			return r->hdrs[i].value;
	return NULL;
}

/* see http.h */
void
http_body_init(struct http_body *b, enum http_framing mode, long long length)
{
	memset(b, 0, sizeof(*b));
	b->mode = (unsigned char)mode;
	b->left = length > 0 ? (uint64_t)length : 0;
	if (mode == HTTP_BODY_CHUNKED)
		b->state = B_SIZE;
	else if (mode == HTTP_BODY_NONE ||
	    (mode == HTTP_BODY_LENGTH && length <= 0))
		b->state = B_DONE;
	else
		b->state = B_DATA;
}

/* The LF of a framing line. */
static int
line_end(struct http_body *b)
{
	switch (b->state) {
	case B_SIZE:
		if (!b->digits)
			return -E_PROTO;
		/* FALLTHROUGH */
	case B_EXT:
		b->state = b->left != 0 ? B_DATA : B_TRAILER;
		b->digits = 0;
		break;
	case B_DATA_END:
		b->state = B_SIZE;
		break;
	default:
		if (b->line == 0)	/* the empty line after trailers */
			b->state = B_DONE;
	}
	b->line = 0;
	return 0;
}

/* see http.h */
long
http_body_feed(struct http_body *b, const char *in, size_t n, size_t *used)
{
	size_t i = 0, k;
	int c, h, e = -E_PROTO;

	*used = 0;
	if (b->err != 0)
		return b->err;
	while (i < n && b->state != B_DONE) {
		if (b->state == B_DATA) {
			k = n - i;
			if (b->mode != HTTP_BODY_CLOSE) {
				if (b->left < k)
					k = (size_t)b->left;
				b->left -= k;
				if (b->left == 0)
					b->state = b->mode == HTTP_BODY_LENGTH ?
					    B_DONE : B_DATA_END;
			}
			*used = i + k;
			return (long)k;
		}
		c = (unsigned char)in[i++];
		if (b->cr && c != '\n')
			goto fail;
		if ((b->cr = c == '\r'))
			continue;
		if (c == '\n') {
			if (line_end(b) != 0)
				goto fail;
			continue;
		}
		if (++b->line > HTTP_MAX_LINE) {
			e = -E_LIMIT;
			goto fail;
		}
		if (b->state == B_SIZE && (h = str_hex_val(c)) >= 0) {
			if (b->left >> 56) {
				e = -E_LIMIT;
				goto fail;
			}
			b->left = b->left << 4 | (unsigned)h;
			b->digits = 1;
		} else if (b->state == B_SIZE && b->digits &&
		    (c == ';' || c == ' ' || c == '\t'))
			b->state = B_EXT;
		else if (b->state == B_EXT) {
			if ((c < ' ' && c != '\t') || c == 0x7f)
				goto fail;
		} else if (b->state == B_TRAILER) {
			if (++b->left > HTTP_MAX_HEAD) {
				e = -E_LIMIT;
				goto fail;
			}
		} else
			goto fail;
	}
	*used = i;
	return 0;
fail:
	*used = i;
	return b->err = e;
}

/* see http.h */
int
http_body_done(const struct http_body *b)
{
	return b->err == 0 && b->state == B_DONE;
}

/* see http.h */
int
http_body_eof(struct http_body *b)
{
	if (b->err == 0 && b->mode == HTTP_BODY_CLOSE)
		b->state = B_DONE;
	if (b->err == 0 && b->state != B_DONE)
		b->err = -E_PROTO;
	return b->err;
}

/* see http.h */
void
http_conn_init(struct http_conn *c, const struct http_io *io, char *buf,
    size_t cap)
{
	memset(c, 0, sizeof(*c));
	c->io = *io;
	c->buf = buf;
	c->cap = cap;
}

static int
conn_fail(struct http_conn *c, long e)
{
	return c->err = e < 0 ? (int)e : -E_IO;
}

/* see http.h */
int
http_send(struct http_conn *c, const struct sbuf *head, const void *body,
    size_t body_len)
{
	int e;

	if (c->err != 0)
		return c->err;
	if (head->err != 0)
		return head->err;
	if (c->state != C_IDLE && !http_conn_reusable(c))
		return -E_INVAL;
	c->head_req = head->len >= 5 && memcmp(head->p, "HEAD ", 5) == 0;
	c->connect_req = head->len >= 8 && memcmp(head->p, "CONNECT ", 8) == 0;
	if ((e = c->io.write(c->io.ctx, head->p, head->len)) != 0 ||
	    (body_len > 0 && (e = c->io.write(c->io.ctx, body, body_len)) != 0))
		return conn_fail(c, e);
	c->state = C_SENT;
	return 0;
}

/* see http.h */
int
http_read_head(struct http_conn *c, struct arena *a, struct http_head *r)
{
	enum http_framing mode = HTTP_BODY_CLOSE;
	size_t used;
	long k;
	int e;

	if (c->err != 0)
		return c->err;
	if (c->state != C_SENT)
		return -E_INVAL;
	http_resp_init(r, c->now);
	for (;;) {
		e = http_head_feed(r, a, c->buf + c->pos, c->len - c->pos,
		    &used);
		c->pos += used;
		if (e != -E_PART)
			break;
		c->len -= c->pos;
		memmove(c->buf, c->buf + c->pos, c->len);
		c->pos = 0;
		if (c->len == c->cap)
			return conn_fail(c, -E_LIMIT);
		k = c->io.read(c->io.ctx, c->buf + c->len, c->cap - c->len);
		if (k == 0)
			return conn_fail(c, r->head_len == 0 && c->len == 0 ?
			    -E_IO : -E_PROTO);
		if (k < 0 || (size_t)k > c->cap - c->len)
			return conn_fail(c, k);
		c->len += (size_t)k;
	}
	if (e != 0)
		return conn_fail(c, e);
	if (c->connect_req && r->status / 100 == 2) {
		/* A tunnel now: the proxy must wait for our TLS hello. */
		if (c->pos != c->len)
			return conn_fail(c, -E_PROTO);
		r->close = 1;
		mode = HTTP_BODY_NONE;
	} else if (c->head_req || r->status == 204 || r->status == 304)
		mode = HTTP_BODY_NONE;
	else if (r->chunked)
		mode = HTTP_BODY_CHUNKED;
	else if (r->content_length >= 0)
		mode = HTTP_BODY_LENGTH;
	else
		r->close = 1;
	http_body_init(&c->body, mode, r->content_length);
	c->close = r->close;
	c->state = http_body_done(&c->body) ? C_DONE : C_BODY;
	return 0;
}

/* see http.h */
long
http_read_body(struct http_conn *c, void *buf, size_t n)
{
	size_t used;
	long k;
	int e;

	if (c->err != 0)
		return c->err;
	if ((c->state != C_BODY && c->state != C_DONE) || n == 0)
		return -E_INVAL;
	for (;;) {
		if (http_body_done(&c->body)) {
			c->state = C_DONE;
			return 0;
		}
		if (c->pos == c->len) {
			c->pos = c->len = 0;
			k = c->io.read(c->io.ctx, c->buf, c->cap);
			if (k == 0) {
				if ((e = http_body_eof(&c->body)) != 0)
					return conn_fail(c, e);
				c->close = 1;
				continue;
			}
			if (k < 0 || (size_t)k > c->cap)
				return conn_fail(c, k);
			c->len = (size_t)k;
		}
		k = http_body_feed(&c->body, c->buf + c->pos,
		    MIN(c->len - c->pos, n), &used);
		if (k < 0)
			return conn_fail(c, k);
		c->pos += used;
		if (k > 0) {
			memcpy(buf, c->buf + c->pos - (size_t)k, (size_t)k);
			return k;
		}
	}
}

/* see http.h */
int
http_conn_reusable(const struct http_conn *c)
{
	return c->err == 0 && c->state == C_DONE && !c->close &&
	    c->pos == c->len;
}
