/* http.h - HTTP/1.1 client protocol (RFC 9110, RFC 9112) over callbacks.
 *
 * No sockets here: a connection reads and writes through struct http_io,
 * which net.c (plain TCP) or tls.c provides, and tests fill from memory.
 * The pieces work alone too: URL parsing, NO_PROXY matching, request
 * writers into a struct sbuf, and two push parsers (response head, body
 * framing) that the connection drives from its receive buffer.
 */
#ifndef HTTP_H
#define HTTP_H

#include "base/arena.h"
#include "base/base.h"
#include "base/str.h"

#define HTTP_MAX_HEADERS	64		/* header lines in a head */
#define HTTP_MAX_HEAD		(16u << 10)	/* head bytes, with interims */
#define HTTP_MAX_LINE		1024		/* chunk-size or trailer line */

/* The transport. read returns >0 bytes, 0 at EOF, or a negative -E_*
 * (-E_TIMEOUT, -E_IO, -E_TLS...); write sends all n bytes and returns 0
 * or a negative -E_*. A TLS transport reports EOF without close_notify
 * as an error, never as 0. */
struct http_io {
	long	(*read)(void *ctx, void *buf, size_t n);
	int	(*write)(void *ctx, const void *buf, size_t n);
	void	*ctx;
};

struct http_header {
	const char	*name;
	const char	*value;
};

struct http_url {
	const char	*host;		/* lowercase; IPv6 without brackets */
	const char	*path;		/* path and query, at least "/" */
	unsigned	 port;		/* 1..65535 */
	unsigned char	 https;
	unsigned char	 is_ipv6;
};

/* Split an absolute http:// or https:// URL; the strings live in `a`.
 * The host is a name of letters, digits, "-", "." and "_" or a bracketed
 * IPv6 address without zone; the port defaults to 80 or 443; a fragment
 * is dropped. Returns 0, -E_INVAL (another scheme, userinfo, an empty or
 * bad host, a port that is empty, 0 or above 65535, a control character,
 * space or non-ASCII byte anywhere) or -E_NOMEM. */
int	http_url_parse(struct arena *a, const char *url, struct http_url *u);

/* 1 when `host` bypasses the proxy under `no_proxy` (the NO_PROXY
 * variable: a comma-separated list), else 0. An entry "*" matches every
 * host; a name matches itself and its subdomains, with or without a
 * leading "."; an IP address (and any host that is one) only matches
 * exactly. A ":port" on an entry is ignored, as are brackets around IPv6
 * addresses; case does not matter. NULL or "" matches nothing. */
int	http_no_proxy(const char *no_proxy, const char *host);

/* Append a request head to sb: the request line with the origin-form
 * target (absolute_form = 0) or the absolute-form one that a plain-HTTP
 * proxy wants, Host (port only when not the default), the caller's
 * headers in order, Content-Length unless body_len is (size_t)-1, and the
 * empty line. Connection is not sent: HTTP/1.1 keeps it alive anyway.
 * Returns 0, sb->err, or -E_INVAL (nothing appended) for a method or
 * header name that is not a token, a value with CR, LF or another control
 * character, or a caller header Host, Content-Length or
 * Transfer-Encoding, which this module writes or does not support. */
int	http_write_request(struct sbuf *sb, const char *method,
	    const struct http_url *u, int absolute_form,
	    const struct http_header *hdrs, unsigned nhdrs, size_t body_len);

/* Append a CONNECT head for a tunnel to host:port (an IPv6 host gets its
 * brackets), with Proxy-Authorization when proxy_auth is not NULL (the
 * whole value, "Basic ..."). Returns 0, sb->err or -E_INVAL. */
int	http_write_connect(struct sbuf *sb, const char *host, unsigned port,
	    const char *proxy_auth);

/* A message head, response or request, filled by the head parser. Strings
 * live in the arena given to the parser. */
struct http_head {
	int			 status;	/* 100..599; 0 in a request */
	int			 minor;		/* HTTP/1.minor */
	const char		*reason;
	const char		*method;	/* requests: "GET", ... */
	const char		*target;	/* requests: "/path?query" */
	struct http_header	*hdrs;		/* as received, in order */
	unsigned		 nhdrs;
	/* Framing and hints taken from the headers. When Transfer-Encoding
	 * and Content-Length come together in a response, chunked wins and
	 * the length is dropped (RFC 9112 section 6.3), and the connection is
	 * not reused; in a request that is an error. */
	long long		 content_length;	/* -1 when absent */
	unsigned char		 chunked;
	unsigned char		 close;		/* no reuse after this one */
	long			 retry_after;	/* seconds; -1 absent or bad */
	const char		*content_type;	/* NULL when absent */
	/* Parser state, private. */
	long long		 now;
	struct arena_mark	 mark;
	size_t			 head_len, scan;
	unsigned		 nlines;
	int			 err;
	unsigned char		 done, request;
};

/* Start a response head. `now` (Unix seconds) turns a Retry-After date
 * into seconds; with now <= 0 dates give -1. */
void	http_resp_init(struct http_head *r, long long now);

/* Start a request head, as a server reads it: "METHOD TARGET HTTP/1.x"
 * with an origin-form target ("/..."), "*" for OPTIONS only; empty lines
 * before it are skipped (RFC 9112 section 2.2). The server rules: no
 * Content-Length with Transfer-Encoding, no Transfer-Encoding other than
 * chunked, at most one Host; HTTP/1.0 closes unless it asks keep-alive. */
void	http_req_init(struct http_head *r);

/* Push parser. Consumes the complete lines of in[0..n) and sets *used;
 * the rest, a partial line, must come again at the start of the next
 * call, with more bytes after it. Nothing else may allocate from `a`
 * between calls. LF alone ends a line too. Interim 1xx responses are
 * dropped with their headers; 101 is refused, as this client never asks
 * to switch protocols. Returns 0 at the end of the head (*used stops
 * there), -E_PART for more, -E_PROTO (bad status or request line, folded
 * or malformed header line, a control character, a Content-Length that is
 * not a number or that disagrees with another, a Transfer-Encoding other
 * than chunked, and the request rules of http_req_init), -E_LIMIT (more
 * than HTTP_MAX_HEADERS headers or HTTP_MAX_HEAD bytes) or -E_NOMEM.
 * Errors are sticky. */
int	http_head_feed(struct http_head *r, struct arena *a, const char *in,
	    size_t n, size_t *used);

/* The value of the first header called `name` (any case), or NULL. */
const char	*http_header(const struct http_head *r, const char *name);

enum http_framing {
	HTTP_BODY_NONE,		/* HEAD, 204, 304, a tunnel */
	HTTP_BODY_LENGTH,
	HTTP_BODY_CHUNKED,
	HTTP_BODY_CLOSE		/* until the peer closes */
};

/* Body decoder state; fields private. */
struct http_body {
	uint64_t	 left;		/* in body or chunk; trailer bytes */
	unsigned	 line;		/* bytes in the current framing line */
	int		 err;
	unsigned char	 mode, state, cr, digits;
};

void	http_body_init(struct http_body *b, enum http_framing mode,
	    long long length);

/* Push decoder. Consumes framing bytes and at most one run of body bytes
 * from in[0..n): sets *used and returns the run's length, the run being
 * the last bytes consumed, in[*used - ret .. *used). Returns 0 with
 * *used == n when it needs more input, or 0 with nothing consumed once
 * the body is complete. Chunk extensions and trailers are skipped.
 * Errors, sticky: -E_PROTO (malformed chunking), -E_LIMIT (a chunk-size
 * or trailer line over HTTP_MAX_LINE, a chunk size over 2^60, trailers
 * over HTTP_MAX_HEAD). */
long	http_body_feed(struct http_body *b, const char *in, size_t n,
	    size_t *used);

/* 1 once the whole body has been seen, else 0. */
int	http_body_done(const struct http_body *b);

/* The input ended: 0 when that completes the body (framing CLOSE, or
 * already complete), else -E_PROTO: a truncated body is never complete. */
int	http_body_eof(struct http_body *b);

/* A client connection: requests go out one at a time, each answer is
 * read whole before the next request. */
struct http_conn {
	struct http_io	 io;
	char		*buf;		/* caller's receive buffer */
	size_t		 cap, pos, len;	/* unread bytes are buf[pos..len) */
	struct http_body body;
	long long	 now;		/* caller's clock, see http_resp_init */
	int		 err;		/* sticky until http_conn_init */
	unsigned char	 state, close, head_req, connect_req;
};

/* Start a connection over io (copied) with the receive buffer buf[cap],
 * which must outlive it; the longest head line must fit in it, so give it
 * 1 KiB at least. Set c->now before http_read_head for Retry-After
 * dates. */
void	http_conn_init(struct http_conn *c, const struct http_io *io,
	    char *buf, size_t cap);

/* Send a request head (from http_write_request or http_write_connect)
 * and body_len bytes of body. A HEAD or CONNECT request is recognised by
 * its head. Returns 0, the head's sbuf error, -E_INVAL when the previous
 * response is not read to its end or the connection is not reusable, or
 * the transport's error (sticky). */
int	http_send(struct http_conn *c, const struct sbuf *head,
	    const void *body, size_t body_len);

/* Read the response head to the request just sent into *r, strings in
 * `a`. Returns 0, -E_IO when the peer closed before sending a byte (an
 * idle keep-alive connection that the server dropped: safe to retry on a
 * new one), -E_PROTO when it closed within the head or for a 2xx to
 * CONNECT followed by early bytes, -E_LIMIT for a head line longer than
 * the buffer, http_head_feed's errors, the transport's, or -E_INVAL when
 * no request is waiting. Errors other than -E_INVAL are sticky. */
int	http_read_head(struct http_conn *c, struct arena *a,
	    struct http_head *r);

/* Read body bytes into buf[n], n > 0: bytes already buffered after the
 * head come first. Returns the count, 0 at the end of the body, or a
 * negative error (sticky): -E_PROTO for a body cut short by EOF, the
 * decoder's errors, the transport's; -E_INVAL before a head. */
long	http_read_body(struct http_conn *c, void *buf, size_t n);

/* 1 when another request may follow on this connection: the last body
 * was read to its end (http_read_body returned 0), no close was asked
 * for, no extra bytes came after it, and no error happened. */
int	http_conn_reusable(const struct http_conn *c);

#endif
