/* httpd.c - the server's connections: requests read (RFC 9112), replies
 * written, HTTPS through tls_srv, a worker's pipe or a session file
 * relayed, and the poll loop that drives them. */
#include "serve/serve_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "config.h"
#include "net/net.h"

static const char *
reason(int st)
{
	switch (st) {
	case 200: return "OK";
	case 201: return "Created";
	case 204: return "No Content";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 406: return "Not Acceptable";
	case 408: return "Request Timeout";
	case 409: return "Conflict";
	case 411: return "Length Required";
	case 413: return "Content Too Large";
	case 415: return "Unsupported Media Type";
	case 417: return "Expectation Failed";
	case 421: return "Misdirected Request";
	case 431: return "Request Header Fields Too Large";
	case 501: return "Not Implemented";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return st < 500 ? "Error" : "Internal Server Error";
	}
}

/* --- output */

/* see serve_int.h */
int
httpd_out(struct conn *c, const void *p, size_t n)
{
	char *q;
	size_t cap;

	if (c->gone)
		return 0;
	if (c->out_off > 0 && c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	if (c->out_len + n > c->out_cap) {
		for (cap = c->out_cap ? c->out_cap : 4096; cap < c->out_len + n;
		    cap *= 2)
			;
		if ((q = mem_realloc(c->out, cap)) == NULL)
			return -E_NOMEM;
		c->out = q;
		c->out_cap = cap;
	}
	memcpy(c->out + c->out_len, p, n);
	c->out_len += n;
	return 0;
}

/* see serve_int.h */
int
httpd_printf(struct conn *c, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -E_LIMIT;
	return httpd_out(c, buf, (size_t)n);
}

/* see serve_int.h */
int
httpd_chunk(struct conn *c, const char *p, size_t n)
{
	int e = 0;

	if (n == 0)
		return 0;
	if (c->chunked)
		e = httpd_printf(c, "%zx\r\n", n);
	if (e == 0)
		e = httpd_out(c, p, n);
	if (e == 0 && c->chunked)
		e = httpd_out(c, "\r\n", 2);
	return e;
}

/* see serve_int.h */
int
httpd_head(struct conn *c, int st, const char *ctype, long long len,
    const char *extra)
{
	int e;

	c->status = st;
	if (got_term)
		c->close = 1;
	if (len < 0) {
		c->chunked = !c->v10;
		if (c->v10)
			c->close = 1;
	}
	e = httpd_printf(c, "HTTP/1.1 %d %s\r\n", st, reason(st));
	if (e == 0 && ctype != NULL)
		e = httpd_printf(c, "Content-Type: %s\r\n", ctype);
	/* A turn that ran must not run again because a client retried;
	 * a server that was only busy (503) may be asked again. */
	if (e == 0 && ((c->ran && st >= 400) || (st >= 500 && st != 503)))
		e = httpd_printf(c, "x-should-retry: false\r\n");
	if (e == 0 && c->origin != NULL)
		e = httpd_printf(c, "Access-Control-Allow-Origin: %s\r\n"
		    "Vary: Origin\r\n", c->origin);
	if (e == 0 && extra != NULL)
		e = httpd_out(c, extra, strlen(extra));
	if (e == 0 && len >= 0)
		e = httpd_printf(c, "Content-Length: %lld\r\n", len);
	if (e == 0 && c->chunked)
		e = httpd_printf(c, "Transfer-Encoding: chunked\r\n");
	if (e == 0)
		e = httpd_printf(c, "Cache-Control: no-store\r\n"
		    "X-Content-Type-Options: nosniff\r\n%s\r\n", c->close ?
		    "Connection: close\r\n" : c->v10 ?
		    "Connection: keep-alive\r\n" : "");
	return e;
}

/* see serve_int.h */
int
httpd_respond(struct srv *s, struct conn *c, int st, const char *ctype,
    const char *body, size_t n, const char *extra)
{
	int e;

	(void)s;
	e = httpd_head(c, st, ctype, (long long)n, extra);
	if (e == 0 && !c->head)
		e = httpd_out(c, body, n);
	if (e != 0)
		c->close = 1;
	c->st = C_WRITE;
	return e;
}

/* see serve_int.h */
int
httpd_respond_err(struct srv *s, struct conn *c, int st, const char *type,
    const char *msg, const char *extra)
{
	struct sbuf sb;
	struct json_writer w;

	sbuf_init(&sb, &c->a, 0);
	json_writer_init(&w, &sb);
	json_begin_obj(&w);
	json_key(&w, "error");
	json_begin_obj(&w);
	json_kstr(&w, "message", msg);
	json_kstr(&w, "type", type);
	json_key(&w, "code");
	json_put_uint(&w, (unsigned)st);
	json_end_obj(&w);
	json_end_obj(&w);
	sbuf_addc(&sb, '\n');
	if (sb.err) {
		c->close = 1;
		return httpd_respond(s, c, 503, "text/plain", "out of memory\n", 14,
		    NULL);
	}
	return httpd_respond(s, c, st, "application/json", sb.p, sb.len, extra);
}

/* --- connections */

/* see serve_int.h */
void
httpd_close(struct srv *s, struct conn *c)
{
	if (HAVE_SERVE_TLS && c->tls != NULL) {
		if (!c->gone && c->fd >= 0)
			tls_srv_close(c->tls, c->fd);
		mem_free(c->tls);
	}
	if (c->fd >= 0)
		close(c->fd);
	if (c->src >= 0 && c->pid <= 0)
		close(c->src);
	mem_free(c->in);
	mem_free(c->out);
	mem_free(c->body);
	arena_reset(&c->a);
	memset(c, 0, sizeof(*c));
	c->fd = c->src = -1;
	c->st = C_FREE;
	s->open--;
}

/* A line to syslog (facility daemon, level info) through /dev/log; lost
 * when no syslog daemon listens. */
static void
syslog_line(const char *line)
{
	static int fd = -1;
	struct sockaddr_un un;
	char b[600];
	int n;

	if (fd < 0) {
		memset(&un, 0, sizeof(un));
		un.sun_family = AF_UNIX;
		memcpy(un.sun_path, "/dev/log", 9);
		if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
			return;
		if (connect(fd, (struct sockaddr *)&un, sizeof(un)) != 0) {
			close(fd);
			fd = -1;
			return;
		}
	}
	n = snprintf(b, sizeof(b), "<30>skillbox[%d]: %s", (int)getpid(),
	    line);
	if (n > 0)
		(void)!send(fd, b, MIN((size_t)n, sizeof(b) - 1), MSG_NOSIGNAL);
}

/* One line a request, when its response is complete. */
static void
log_request(struct srv *s, struct conn *c)
{
	long long ms = net_now_ms() - c->t0;
	const char *m = c->h.method ? c->h.method : "-";
	const char *t = c->h.target ? c->h.target : "-";
	char tgt[96];
	size_t i;

	snprintf(tgt, sizeof(tgt), "%s", t);
	for (i = 0; tgt[i] != '\0'; i++)
		if (tgt[i] == '?')
			tgt[i] = '\0';	/* queries may carry names */
	char line[256];

	snprintf(line, sizeof(line), "%s \"%s %s\" %d %llu %lldms", c->peer,
	    m, tgt, c->status, c->sent, ms);
	httpd_log_line(s, line);
}

/* see serve_int.h */
void
httpd_log_line(struct srv *s, const char *line)
{
	if (s->cfg->serve.syslog)
		syslog_line(line);
	else
		fprintf(stderr, "skillbox: %s\n", line);
}

/* Ready for the next request on a kept-alive connection; pipelined bytes
 * stay. */
static void
conn_next(struct srv *s, struct conn *c)
{
	size_t used = c->in_len;

	log_request(s, c);
	if (c->close) {
		httpd_close(s, c);
		return;
	}
	(void)used;
	mem_free(c->body);
	c->body = NULL;
	c->body_len = 0;
	arena_reset(&c->a);
	memset(&c->tr, 0, sizeof(c->tr));
	c->st = C_HEAD;
	c->served = 1;
	c->kind = K_PLAIN;
	c->headed = c->chunked = c->head = c->ran = c->authed = 0;
	c->phlen = 0;
	c->status = 0;
	c->sent = 0;
	c->origin = NULL;
	c->pid = 0;
	c->src = -1;
	http_req_init(&c->h);
	c->t0 = net_now_ms();
	c->deadline = c->t0 + (c->in_len > 0 ? s->cfg->serve.header_s :
	    s->cfg->serve.idle_s) * 1000LL;
	if (c->in_len == 0 && c->in_cap > 4096) {
		mem_free(c->in);	/* idle: keep little */
		c->in = NULL;
		c->in_cap = 0;
	}
}

/* --- who may ask: a web page on another site may not
 *
 * A browser sends a page's requests to any address, loopback included,
 * and a form or a text/plain fetch goes without asking first. So: the
 * Host must be a name of this server (a page whose own name was made to
 * resolve here, DNS rebinding, names its own host); a request that
 * changes something and carries an Origin must come from this server's
 * origin or serve.cors_origin; a body must be application/json, which a
 * page elsewhere can only send after a CORS preflight (refused). */

/* The length of the name in a Host value ("[v6]" keeps its brackets), or
 * 0 when what follows it is not ":PORT". */
static size_t
host_name_len(const char *h)
{
	const char *e = h[0] == '[' ? strchr(h, ']') : NULL;
	size_t n = e != NULL ? (size_t)(e - h) + 1 : h[0] == '[' ? 0 :
	    strcspn(h, ":");

	if (n == 0 || (h[n] != '\0' && (h[n] != ':' ||
	    strspn(h + n + 1, "0123456789") != strlen(h + n + 1))))
		return 0;
	return n;
}

static int
name_is(const char *h, size_t n, const char *name)
{
	return name != NULL && strlen(name) == n && strncasecmp(h, name, n) == 0;
}

/* The address the client reached, as a Host names it: "10.0.0.1" or
 * "[fe80::1]" (a v4-mapped v6 one as v4). */
static void
local_name(const struct conn *c, char *b, size_t bn)
{
	struct sockaddr_storage ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
	socklen_t sl = sizeof(ss);
	char a[INET6_ADDRSTRLEN];

	b[0] = '\0';
	if (getsockname(c->fd, (struct sockaddr *)&ss, &sl) != 0)
		return;
	if (ss.ss_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, b,
		    (socklen_t)bn);
	else if (IN6_IS_ADDR_V4MAPPED(&v6->sin6_addr))
		inet_ntop(AF_INET, &v6->sin6_addr.s6_addr[12], b, (socklen_t)bn);
	else if (inet_ntop(AF_INET6, &v6->sin6_addr, a, sizeof(a)) != NULL)
		snprintf(b, bn, "[%s]", a);
}

/* Is the Host header (none: a client that is no browser) a name of this
 * server: localhost, a loopback address, the listen address, the address
 * the client connected to, or one of serve.hosts? */
static int
host_ok(const struct srv *s, const struct conn *c, const char *h)
{
	const char *l = s->cfg->serve.listen;
	char me[INET6_ADDRSTRLEN + 2];
	size_t n, i;

	if (h == NULL)
		return 1;
	if ((n = host_name_len(h)) == 0)
		return 0;
	if (name_is(h, n, "localhost") || name_is(h, n, "127.0.0.1") ||
	    name_is(h, n, "[::1]"))
		return 1;
	if (strchr(l, ':') != NULL && (i = host_name_len(l)) == n &&
	    strncasecmp(h, l, n) == 0)
		return 1;
	for (i = 0; i < s->cfg->serve.nhosts; i++)
		if (name_is(h, n, s->cfg->serve.hosts[i]))
			return 1;
	local_name(c, me, sizeof(me));
	return name_is(h, n, me);
}

/* An Origin that is this server's own: scheme://Host. */
static int
own_origin(const struct conn *c, const char *o, const char *host)
{
	const char *sch = HAVE_SERVE_TLS && c->tls != NULL ? "https://" :
	    "http://";
	size_t k = strlen(sch);

	return host != NULL && strncasecmp(o, sch, k) == 0 &&
	    strcasecmp(o + k, host) == 0;
}

/* A Content-Type of application/json, parameters aside. */
static int
is_json(const char *ct)
{
	if (ct == NULL)
		return 0;
	ct += strspn(ct, " \t");
	if (strncasecmp(ct, "application/json", 16) != 0)
		return 0;
	ct += 16;
	ct += strspn(ct, " \t");
	return *ct == '\0' || *ct == ';';
}

/* 0: the request may go on; else the status of the refusal made. */
static int
admit(struct srv *s, struct conn *c)
{
	const char *h = http_header(&c->h, "Host");
	const char *o = http_header(&c->h, "Origin");
	const char *m = c->h.method, *co = s->cfg->serve.cors_origin, *msg;
	int st = 0;

	if (!host_ok(s, c, h)) {
		st = 421;
		msg = "the Host header is not a name of this server (localhost, "
		    "its address, or one of serve.hosts)";
	} else if (o != NULL && strcmp(m, "GET") != 0 && strcmp(m, "HEAD") !=
	    0 && strcmp(m, "OPTIONS") != 0 && !own_origin(c, o, h) &&
	    (co == NULL || strcmp(o, co) != 0)) {
		st = 403;
		msg = "a request from a page of another origin (not "
		    "serve.cors_origin)";
	} else if ((c->h.chunked || c->h.content_length > 0) &&
	    !is_json(http_header(&c->h, "Content-Type"))) {
		st = 415;
		msg = "the body must be JSON: send Content-Type: "
		    "application/json";
	} else
		return 0;
	c->close = 1;	/* the body, if any, is left unread */
	(void)httpd_respond_err(s, c, st, st == 403 ? "forbidden" :
	    "invalid_request_error", msg, NULL);
	return st;
}

/* --- reading requests */

/* The head is complete: check it, then read the body or route. */
static int
head_done(struct srv *s, struct conn *c, size_t used)
{
	const char *ex = http_header(&c->h, "Expect");

	memmove(c->in, c->in + used, c->in_len - used);
	c->in_len -= used;
	c->v10 = c->h.minor == 0;
	c->close = c->h.close;
	if (admit(s, c) != 0)
		return 0;
	c->authed = s->ntok == 0 || api_token(s, c) >= 0;
	if (ex != NULL && strcasecmp(ex, "100-continue") != 0) {
		c->close = 1;
		return httpd_respond_err(s, c, 417, "invalid_request_error", "only "
		    "Expect: 100-continue is known", NULL);
	}
	if (c->h.content_length > (long long)s->cfg->serve.body_max) {
		c->close = 1;
		return httpd_respond_err(s, c, 413, "invalid_request_error", "the "
		    "body is over serve.body_max", NULL);
	}
	c->want = c->h.chunked ? -1 : c->h.content_length > 0 ?
	    c->h.content_length : 0;
	if (c->want == 0)
		return api_route(s, c);
	if (ex != NULL && !c->v10 && httpd_out(c, "HTTP/1.1 100 Continue\r\n\r\n",
	    25) != 0)
		return -E_NOMEM;
	http_body_init(&c->bd, c->h.chunked ? HTTP_BODY_CHUNKED :
	    HTTP_BODY_LENGTH, c->h.content_length);
	c->st = C_BODY;
	return 0;
}

/* Take body bytes from c->in; route once the body is whole. */
static int
body_feed(struct srv *s, struct conn *c)
{
	size_t used, off = 0;
	long r;
	char *q;

	while (off < c->in_len) {
		r = http_body_feed(&c->bd, c->in + off, c->in_len - off, &used);
		if (r < 0) {
			c->close = 1;
			return httpd_respond_err(s, c, 400, "invalid_request_error",
			    "malformed chunked body", NULL);
		}
		if (r > 0) {
			if (c->body_len + (size_t)r > s->cfg->serve.body_max) {
				c->close = 1;
				return httpd_respond_err(s, c, 413,
				    "invalid_request_error", "the body is over "
				    "serve.body_max", NULL);
			}
			if ((q = mem_realloc(c->body, c->body_len + (size_t)r +
			    1)) == NULL) {
				c->close = 1;
				return httpd_respond_err(s, c, 503, "server_error",
				    "out of memory in the server",
				    "Retry-After: " RETRY_AFTER "\r\n");
			}
			c->body = q;
			memcpy(c->body + c->body_len, c->in + off + used -
			    (size_t)r, (size_t)r);
			c->body_len += (size_t)r;
			c->body[c->body_len] = '\0';
		}
		off += used;
		if (http_body_done(&c->bd))
			break;
		if (used == 0)
			break;
	}
	memmove(c->in, c->in + off, c->in_len - off);
	c->in_len -= off;
	if (http_body_done(&c->bd))
		return api_route(s, c);
	return 0;
}

static int
head_feed(struct srv *s, struct conn *c)
{
	size_t used, max = s->cfg->serve.head_max;
	int e;

	/* The parser sees no byte past serve.head_max: what lies beyond is
	 * 431 however the head came in, never a 400 for a line after it. */
	e = http_head_feed(&c->h, &c->a, c->in, MIN(c->in_len, max -
	    MIN(c->h.head_len, max)), &used);
	if (e == -E_PART) {
		/* the parser wants the partial line again: keep it */
		memmove(c->in, c->in + used, c->in_len - used);
		c->in_len -= used;
		if (c->h.head_len + c->in_len > s->cfg->serve.head_max) {
			c->close = 1;
			return httpd_respond_err(s, c, 431, "invalid_request_error",
			    "the request head is over serve.head_max", NULL);
		}
		return 0;
	}
	if (e == 0 && c->h.head_len > s->cfg->serve.head_max)
		e = -E_LIMIT;
	if (e != 0) {
		c->close = 1;
		if (e == -E_NOMEM)
			return httpd_respond_err(s, c, 503, "server_error", "out of "
			    "memory in the server", NULL);
		if (e == -E_LIMIT)
			return httpd_respond_err(s, c, 431, "invalid_request_error",
			    "the request head is over serve.head_max", NULL);
		if (c->h.method != NULL && c->h.minor > 1)
			return httpd_respond_err(s, c, 505, "invalid_request_error",
			    "HTTP/1.0 and 1.1 only", NULL);
		return httpd_respond_err(s, c, 400, "invalid_request_error",
		    "malformed request", NULL);
	}
	return head_done(s, c, used);
}

/* Read what the client sent; 0, or -1 when the connection is gone. */
static int
conn_read(struct srv *s, struct conn *c)
{
	size_t cap = s->cfg->serve.head_max + 1024;
	ssize_t k;
	char *q;

	if (c->in_cap < cap) {
		if ((q = mem_realloc(c->in, cap)) == NULL) {
			c->close = 1;
			httpd_respond_err(s, c, 503, "server_error", "out of memory "
			    "in the server", NULL);
			return 0;
		}
		c->in = q;
		c->in_cap = cap;
	}
	if (c->in_len == c->in_cap)
		return 0;	/* full: the parser decides */
	if (HAVE_SERVE_TLS && c->tls != NULL) {
		k = tls_srv_read(c->tls, c->fd, c->in + c->in_len,
		    c->in_cap - c->in_len);
		if (k == -2) {	/* plain HTTP: told so in plain HTTP */
			mem_free(c->tls);
			c->tls = NULL;
			c->close = 1;
			httpd_respond_err(s, c, 400, "invalid_request_error", "this "
			    "server speaks HTTPS: use an https:// address",
			    NULL);
			return 0;
		}
		if (k <= 0)
			return k == 0 ? 0 : -1;
	} else {
		k = read(c->fd, c->in + c->in_len, c->in_cap - c->in_len);
		if (k < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
	}
	if (k <= 0)
		return -1;
	if (c->in_len == 0 && c->st == C_HEAD && c->h.nlines == 0) {
		c->t0 = net_now_ms();
		c->deadline = c->t0 + s->cfg->serve.header_s * 1000LL;
	}
	c->in_len += (size_t)k;
	return 0;
}

static void
conn_input(struct srv *s, struct conn *c)
{
	const char *why;

	if (conn_read(s, c) != 0) {
		if (HAVE_SERVE_TLS && c->tls != NULL &&
		    (why = tls_srv_why(c->tls)) != NULL)
			log_err("%s: TLS: %s", c->peer, why);
		if (c->st == C_HEAD && c->in_len == 0 && c->h.nlines == 0) {
			httpd_close(s, c);	/* a kept-alive one ended */
			return;
		}
		c->close = 1;
		c->gone = 1;
		log_request(s, c);
		httpd_close(s, c);
		return;
	}
	if (c->st == C_HEAD && c->in_len > 0)
		(void)head_feed(s, c);
	if (c->st == C_BODY && c->in_len > 0)
		(void)body_feed(s, c);
}

/* --- relaying a worker or a file */

/* Read from the source; at its end finish the response. */
static void
relay(struct srv *s, struct conn *c)
{
	char buf[RELAY_BUF];
	ssize_t k;
	size_t off = 0, i;
	int wst = 0;

	k = read(c->src, buf, sizeof(buf));
	if (k < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (k > 0) {
		if (!c->headed) {
			for (i = 0; i < (size_t)k && !c->headed; i++) {
				if (buf[i] == '\n') {
					if (worker_relay_head(s, c) != 0)
						c->headed = 2;	/* bad */
				} else if (c->phlen < sizeof(c->ph) - 1)
					c->ph[c->phlen++] = buf[i];
			}
			off = i;
		}
		if (c->headed == 1)
			(void)httpd_chunk(c, buf + off, (size_t)k - off);
		return;
	}
	/* The end: a worker is reaped (it closed the pipe by exiting). */
	if (c->kind == K_FILE) {
		close(c->src);
	} else {
		close(c->src);
		while (waitpid(c->pid, &wst, 0) < 0 && errno == EINTR)
			;
		s->turns--;
		if (!WIFEXITED(wst) || WEXITSTATUS(wst) != 0 || c->headed != 1)
			worker_relay_died(s, c, wst);
		c->pid = 0;
	}
	c->src = -1;
	if (c->chunked)
		(void)httpd_out(c, "0\r\n\r\n", 5);
	else if (c->kind != K_FILE || c->v10)
		c->close = 1;
	c->st = C_WRITE;
	worker_run_queue(s);
}

/* Write what is waiting; 0, or -1 when the client is gone. */
static int
conn_write(struct conn *c)
{
	ssize_t k;

	while (c->out_off < c->out_len) {
		if (HAVE_SERVE_TLS && c->tls != NULL) {
			k = tls_srv_write(c->tls, c->fd, c->out + c->out_off,
			    c->out_len - c->out_off);
			if (k == 0)
				return 0;
		} else
			k = send(c->fd, c->out + c->out_off, c->out_len -
			    c->out_off, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EAGAIN)
			return 0;
		if (k <= 0)
			return -1;
		c->out_off += (size_t)k;
		c->sent += (unsigned long long)k;
	}
	c->out_off = c->out_len = 0;
	if (HAVE_SERVE_TLS && c->tls != NULL && tls_srv_write(c->tls, c->fd,
	    "", 0) < 0)
		return -1;	/* sends the records still held */
	if (c->out_cap > (64u << 10)) {
		mem_free(c->out);
		c->out = NULL;
		c->out_cap = 0;
	}
	return 0;
}

/* --- the loop */

/* Bytes wait to go out: the response, or TLS records holding it. */
static int
out_waiting(const struct conn *c)
{
	if (HAVE_SERVE_TLS && c->tls != NULL && tls_srv_unsent(c->tls))
		return 1;
	return c->out_off < c->out_len;
}

/* A connection that holds a slot without a request to show for it:
 * its head has not all come, or its body comes without a valid token. */
static int
pending(const struct conn *c)
{
	return c->st == C_HEAD || (c->st == C_BODY && !c->authed);
}

/* The oldest pending connection, of the peer (NULL: of anyone); NULL
 * when there is none. n: how many the peer has. A peer's count leaves out
 * connections kept alive after a reply: a browser or an SDK keeps several
 * idle between requests, and closing one races with its next request. */
static struct conn *
oldest_pending(struct srv *s, const char *peer, unsigned *n)
{
	struct conn *c, *old = NULL;
	unsigned i;

	*n = 0;
	for (i = 0; i < s->nc; i++) {
		c = &s->c[i];
		if (!pending(c) || (peer != NULL &&
		    (c->served || strcmp(c->peer, peer) != 0)))
			continue;
		(*n)++;
		if (old == NULL || c->t0 < old->t0)
			old = c;
	}
	return old;
}

/* A slot for a new connection from peer. Slots are not first come, first
 * kept: a peer with a quarter of serve.max_connections pending gives up
 * its oldest, and a full server closes the oldest pending connection of
 * anyone, so half-sent requests cannot keep out /health, token holders
 * or other peers. One pending for less than a second is left alone: it
 * may be part of a burst that is about to send its requests. NULL: every
 * slot serves a request, or is that young. */
static struct conn *
take_slot(struct srv *s, const char *peer)
{
	long long young = net_now_ms() - 1000;
	struct conn *c;
	unsigned i, n;

	c = oldest_pending(s, peer, &n);
	if (n >= MAX(s->nc / 4, 1u) && c->t0 < young)
		httpd_close(s, c);
	for (i = 0; i < s->nc; i++)
		if (s->c[i].st == C_FREE)
			return &s->c[i];
	if ((c = oldest_pending(s, NULL, &n)) == NULL || c->t0 >= young)
		return NULL;
	httpd_close(s, c);
	return c;
}

static void
accept_all(struct srv *s)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	struct conn *c = NULL;
	char peer[48];
	int fd;

	for (;;) {
		sl = sizeof(ss);
		fd = accept4(s->lfd, (struct sockaddr *)&ss, &sl,
		    SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		if (ss.ss_family == AF_INET6)
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->
			    sin6_addr, peer, sizeof(peer));
		else
			inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->
			    sin_addr, peer, sizeof(peer));
		c = take_slot(s, peer);
		if (c == NULL && s->cred != NULL) {
			close(fd);	/* over max_connections */
			continue;
		}
		if (c == NULL) {
			/* over max_connections: a short answer, then close */
			static const char busy[] = "HTTP/1.1 503 Service "
			    "Unavailable\r\nRetry-After: " RETRY_AFTER "\r\n"
			    "Content-Length: 0\r\nConnection: close\r\n\r\n";

			(void)!send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL);
			close(fd);
			continue;
		}
		memset(c, 0, sizeof(*c));
		/* A reply goes out in pieces (head, body, SSE events): without
		 * this the last piece waits on the client's delayed ACK, 40 ms
		 * a kept-alive turn. Fails harmlessly on a unix socket. */
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){1},
		    sizeof(int));
		if (HAVE_SERVE_TLS && s->cred != NULL) {
			/* Out of the server's share, not the turns' slices. */
			if (mem_used() + tls_srv_size() > mem_budget() -
			    s->slice * s->cfg->serve.max_turns ||
			    (c->tls = mem_alloc(tls_srv_size())) == NULL) {
				log_err("no memory for one more HTTPS "
				    "connection (%zu KiB each): raise memory "
				    "or lower serve.max_connections",
				    tls_srv_size() >> 10);
				close(fd);
				continue;
			}
			tls_srv_start(c->tls, s->cred);
		}
		c->fd = fd;
		c->src = -1;
		c->tok = -1;
		arena_init(&c->a, "request");
		memcpy(c->peer, peer, sizeof(peer));
		s->open++;
		c->st = C_HEAD;
		c->served = 0;
		c->in_len = 0;
		http_req_init(&c->h);
		c->t0 = net_now_ms();
		c->deadline = c->t0 + s->cfg->serve.header_s * 1000LL;
	}
}

static void
timeouts(struct srv *s, long long now)
{
	unsigned i;
	struct conn *c;

	for (i = 0; i < s->nc; i++) {
		c = &s->c[i];
		if ((c->st != C_HEAD && c->st != C_BODY) || now < c->deadline)
			continue;
		if (c->st == C_HEAD && c->in_len == 0 && c->h.nlines == 0) {
			httpd_close(s, c);	/* idle keep-alive */
			continue;
		}
		c->close = 1;
		(void)httpd_respond_err(s, c, 408, "invalid_request_error", "the "
		    "request came too slowly (serve.header_timeout)", NULL);
	}
}

/* see serve_int.h */
void
httpd_step(struct srv *s)
{
	long long now = net_now_ms(), next = now + 1000;
	unsigned i, n = 0, fi = ~0u;
	struct conn *c;
	long w;
	int r;

	if (s->lfd >= 0) {	/* when full, accepted to be told 503 */
		s->pfd[n].fd = s->lfd;
		s->pfd[n].events = POLLIN;
		s->pc[n++] = NULL;
	}
	for (i = 0; i < s->nc; i++) {
		c = &s->c[i];
		if (c->st == C_FREE)
			continue;
		if (c->st == C_HEAD || c->st == C_BODY) {
			if (c->deadline < next)
				next = c->deadline;
			if (!out_waiting(c)) {
				s->pfd[n].fd = c->fd;
				s->pfd[n].events = POLLIN;
				s->pc[n++] = c;
			}
			if (HAVE_SERVE_TLS && c->tls != NULL &&
			    tls_srv_pending(c->tls))
				next = now;	/* read below, not polled */
		}
		if (out_waiting(c) && !c->gone) {
			s->pfd[n].fd = c->fd;
			s->pfd[n].events = POLLOUT;
			s->pc[n++] = c;
		}
		if (c->st == C_RELAY && c->src >= 0 &&
		    c->out_len - c->out_off < OUT_HIGH) {
			s->pfd[n].fd = c->src;
			s->pfd[n].events = POLLIN;
			s->pc[n++] = c;
		}
	}
	if (HAVE_FLEET && s->fleet != NULL) {	/* the broker's link */
		if ((w = fleet_poll(s->fleet, &s->pfd[n], now)) >= 0 &&
		    now + w < next)
			next = now + w;
		if (s->pfd[n].fd >= 0)
			s->pc[fi = n++] = NULL;
	}
	r = poll(s->pfd, n, (int)MAX(next - now, 0));
	if (r < 0)
		return;		/* EINTR: a signal to look at */
	if (HAVE_FLEET && s->fleet != NULL)
		fleet_run(s->fleet, fi < n ? s->pfd[fi].revents : 0,
		    net_now_ms());
	for (i = 0; i < n; i++) {
		if (s->pfd[i].revents == 0 || i == fi)
			continue;
		c = s->pc[i];
		if (c == NULL) {
			accept_all(s);
			continue;
		}
		if (c->st == C_FREE)
			continue;
		if (s->pfd[i].fd == c->src) {
			relay(s, c);
		} else if (s->pfd[i].events & POLLOUT) {
			if (conn_write(c) != 0) {
				c->gone = 1;
				c->out_len = c->out_off = 0;
			}
		} else
			conn_input(s, c);
	}
	/* Finished responses: the next request, or close. */
	for (i = 0; i < s->nc; i++) {
		c = &s->c[i];
		if (HAVE_SERVE_TLS && c->tls != NULL && (c->st == C_HEAD ||
		    c->st == C_BODY) && !out_waiting(c) &&
		    tls_srv_pending(c->tls)) {
			conn_input(s, c);
			continue;
		}
		if (c->st == C_WRITE && (!out_waiting(c) || c->gone)) {
			if (c->gone)
				c->close = 1;
			conn_next(s, c);
			if (c->st == C_HEAD && c->in_len > 0)
				(void)head_feed(s, c);
			if (c->st == C_BODY && c->in_len > 0)
				(void)body_feed(s, c);
		}
	}
	timeouts(s, net_now_ms());
}
