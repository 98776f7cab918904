/* sse.c - push parsers for text/event-stream and NDJSON.
 *
 * Server-sent events follow WHATWG HTML, section "Server-sent events",
 * "Interpreting an event stream": lines end in CRLF, LF or CR; a blank
 * line dispatches; a line starting with ':' is a comment; "field: value"
 * loses one space after the colon. The pending data lines stay at the
 * start of the caller's buffer and the line being read follows them, so a
 * data: line is moved down once, over its own field name, and nothing is
 * copied at dispatch.
 */
#include "fmt/sse.h"

#include <string.h>

#include "base/arena.h"

/* Room for need bytes: a caller's buffer is what it is; an own one grows
 * by doubling, up to max. */
static int
room(char **buf, size_t *cap, size_t max, int own, size_t need)
{
	size_t n;
	char *nb;

	if (need <= *cap)
		return 0;
	if (!own || need > max)
		return -E_LIMIT;
	for (n = *cap ? *cap : SSE_BUF_START; n < need; n *= 2)
		;
	n = MIN(n, max);
	if ((nb = mem_realloc(*buf, n)) == NULL)
		return -E_NOMEM;
	*buf = nb;
	*cap = n;
	return 0;
}

/* The field name s[0..n) is `name`. */
static int
is_field(const char *s, size_t n, const char *name)
{
	return n == strlen(name) && memcmp(s, name, n) == 0;
}

/* Keep v[0..n) in dst[0..max) with a NUL, its length in *len. */
static int
sse_set(char *dst, unsigned char *len, size_t max, const char *v, size_t n)
{
	if (n >= max)
		return -E_LIMIT;
	memcpy(dst, v, n);
	dst[n] = '\0';
	*len = (unsigned char)n;
	return 0;
}

/* Dispatch the pending event, if it has data, and reset it. */
static int
sse_dispatch(struct sse *p, sse_event_fn fn, void *ctx)
{
	struct sse_event ev;

	ev.event = p->event;
	ev.event_len = p->event_len;
	p->event_len = 0;
	if (p->dlen == 0)
		return 0;
	if (ev.event_len == 0) {
		ev.event = "message";
		ev.event_len = 7;
	}
	p->buf[--p->dlen] = '\0';	/* the last data line's newline */
	ev.data = p->buf;
	ev.data_len = p->dlen;
	ev.id = p->id;
	ev.id_len = p->id_len;
	p->dlen = 0;
	p->events++;
	return fn(ctx, &ev);
}

/* Act on the complete line that follows the pending data in buf. */
static int
sse_line(struct sse *p, sse_event_fn fn, void *ctx)
{
	static const char names[4][6] = { "data", "event", "id", "retry" };
	size_t n = p->llen, k, vn;
	char *s = n > 0 ? p->buf + p->dlen : p->buf, *v;	/* buf may be NULL */
	unsigned long r;
	size_t f;

	p->llen = 0;
	if (!p->started) {
		p->started = 1;
		if (n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0) {
			s += 3;
			n -= 3;
		}
	}
	if (n == 0)
		return sse_dispatch(p, fn, ctx);
	/* A comment has an empty field name, which matches nothing. */
	for (k = 0; k < n && s[k] != ':'; k++)
		;
	v = s + k;
	vn = n - k;
	if (vn > 0) {
		v++;
		vn--;
		if (vn > 0 && *v == ' ') {
			v++;
			vn--;
		}
	}
	for (f = 0; f < ARRAY_LEN(names) && !is_field(s, k, names[f]); f++)
		;
	if (f == 0) {
		/* The value shrinks by "data", so the newline fits. */
		memmove(p->buf + p->dlen, v, vn);
		p->dlen += vn;
		p->buf[p->dlen++] = '\n';
	} else if (f == 1) {
		return sse_set(p->event, &p->event_len, sizeof(p->event), v,
		    vn);
	} else if (f == 2) {
		if (memchr(v, '\0', vn) == NULL)
			return sse_set(p->id, &p->id_len, sizeof(p->id), v, vn);
	} else if (f == 3 && vn > 0) {
		r = 0;
		for (k = 0; k < vn && v[k] >= '0' && v[k] <= '9'; k++)
			r = MIN(r * 10 + (unsigned long)(v[k] - '0'),
			    (unsigned long)SSE_RETRY_MAX);
		if (k == vn)
			p->retry_ms = (long)r;
	}
	return 0;
}

/* see sse.h */
void
sse_init(struct sse *p, char *buf, size_t cap)
{
	memset(p, 0, sizeof(*p));
	p->buf = buf;
	p->own = buf == NULL;
	p->cap = p->own ? 0 : cap;
	p->max = cap;
	p->retry_ms = -1;
}

/* see sse.h */
void
sse_free(struct sse *p)
{
	if (p->own) {
		mem_free(p->buf);
		p->buf = NULL;
		p->cap = 0;
	}
}

/* see sse.h */
int
sse_feed(struct sse *p, const char *data, size_t n, sse_event_fn fn,
    void *ctx)
{
	size_t k;
	int r;

	if (p->err != 0)
		return p->err;
	p->bytes += n;
	while (n > 0) {
		if (p->cr) {
			p->cr = 0;
			if (*data == '\n') {	/* the rest of a CRLF */
				data++;
				n--;
				continue;
			}
		}
		for (k = 0; k < n && data[k] != '\n' && data[k] != '\r'; k++)
			;
		if (k > p->max - p->dlen - p->llen)
			return (p->err = -E_LIMIT);
		if ((r = room(&p->buf, &p->cap, p->max, p->own,
		    p->dlen + p->llen + k)) != 0)
			return (p->err = r);
		if (k > 0)
			memcpy(p->buf + p->dlen + p->llen, data, k);
		p->llen += k;
		if (k == n)
			break;
		p->cr = data[k] == '\r';
		data += k + 1;
		n -= k + 1;
		if ((r = sse_line(p, fn, ctx)) != 0)
			return (p->err = r);
	}
	return 0;
}

/* see sse.h */
int
sse_finish(struct sse *p, sse_event_fn fn, void *ctx)
{
	if (p->err != 0)
		return p->err;
	if (p->llen > 0)
		return -E_PART;
	return (p->err = sse_dispatch(p, fn, ctx));
}

/* Deliver the buffered line, less a CR at its end, unless it is empty. */
static int
ndjson_line(struct ndjson *p, ndjson_line_fn fn, void *ctx)
{
	size_t n = p->len;

	p->len = 0;
	if (n > 0 && p->buf[n - 1] == '\r')
		n--;
	if (n == 0)
		return 0;
	p->buf[n] = '\0';
	p->lines++;
	return fn(ctx, p->buf, n);
}

/* see sse.h */
void
ndjson_init(struct ndjson *p, char *buf, size_t cap)
{
	memset(p, 0, sizeof(*p));
	p->buf = buf;
	p->own = buf == NULL;
	p->cap = p->own ? 0 : cap;
	p->max = cap;
}

/* see sse.h */
void
ndjson_free(struct ndjson *p)
{
	if (p->own) {
		mem_free(p->buf);
		p->buf = NULL;
		p->cap = 0;
	}
}

/* see sse.h */
int
ndjson_feed(struct ndjson *p, const char *data, size_t n,
    ndjson_line_fn fn, void *ctx)
{
	const char *e;
	size_t k;
	int r;

	if (p->err != 0)
		return p->err;
	p->bytes += n;
	while (n > 0) {
		e = memchr(data, '\n', n);
		k = e != NULL ? (size_t)(e - data) : n;
		if (k >= p->max - p->len)	/* room for the NUL */
			return (p->err = -E_LIMIT);
		if ((r = room(&p->buf, &p->cap, p->max, p->own,
		    p->len + k + 1)) != 0)
			return (p->err = r);
		memcpy(p->buf + p->len, data, k);
		p->len += k;
		if (e == NULL)
			break;
		data += k + 1;
		n -= k + 1;
		if ((r = ndjson_line(p, fn, ctx)) != 0)
			return (p->err = r);
	}
	return 0;
}

/* see sse.h */
int
ndjson_finish(struct ndjson *p, ndjson_line_fn fn, void *ctx)
{
	if (p->err != 0)
		return p->err;
	return (p->err = ndjson_line(p, fn, ctx));
}
