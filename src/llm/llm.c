/* llm.c - the provider-neutral side of a model request: assembling replies
 * from protocol events, stream framing, and the transport (HTTP/1.1 over
 * TCP or TLS, proxies, retries). */
#include "llm/llm.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llm/cache.h"
#include "net/http.h"
#include "net/net.h"
#include "base/sha256.h"
#include "fmt/sse.h"
#include "config.h"
#include "net/tls.h"

#define ERROR_BODY_MAX	(16u << 10)	/* bytes of a non-200 body read */

/* --- assembling a reply */

void
acc_text(struct llm_acc *acc, const char *s, size_t n)
{
	if (acc->err || n == 0)
		return;
	sbuf_add(&acc->text, s, n);
	if (acc->text.err) {
		acc_fail(acc, acc->text.err, "reply text over %u bytes",
		    LLM_MAX_TEXT);
		return;
	}
	if (acc->sink != NULL && acc->sink->text != NULL)
		acc->sink->text(acc->sink->ctx, s, n);
}

static char *
copy(struct llm_acc *acc, const char *s, size_t n)
{
	char *p = arena_strndup(acc->a, s, n);

	if (p == NULL)
		acc_fail(acc, -E_NOMEM, "out of memory");
	return p;
}

void
acc_call(struct llm_acc *acc, unsigned idx, const char *id, size_t idn,
    const char *name, size_t namen)
{
	if (acc->err)
		return;
	if (idx >= LLM_MAX_CALLS) {
		acc_fail(acc, -E_LIMIT, "more than %d tool calls in one reply",
		    LLM_MAX_CALLS);
		return;
	}
	if (!acc->calls[idx].used) {
		acc->calls[idx].used = 1;
		sbuf_init(&acc->calls[idx].args, NULL, LLM_MAX_ARGS);
		if (idx + 1 > acc->ncalls)
			acc->ncalls = idx + 1;
	}
	if (id != NULL && idn > 0)
		acc->calls[idx].id = copy(acc, id, idn);
	if (name != NULL && namen > 0)
		acc->calls[idx].name = copy(acc, name, namen);
}

void
acc_args(struct llm_acc *acc, unsigned idx, const char *s, size_t n)
{
	acc_call(acc, idx, NULL, 0, NULL, 0);
	if (acc->err)
		return;
	sbuf_add(&acc->calls[idx].args, s, n);
	if (acc->calls[idx].args.err)
		acc_fail(acc, acc->calls[idx].args.err,
		    "tool call arguments over %u bytes", LLM_MAX_ARGS);
}

void
acc_fail(struct llm_acc *acc, int e, const char *fmt, ...)
{
	va_list ap;

	if (acc->err)
		return;
	acc->err = e;
	va_start(ap, fmt);
	vsnprintf(acc->why, sizeof(acc->why), fmt, ap);
	va_end(ap);
}

void
acc_stop(struct llm_acc *acc, const char *raw, size_t n)
{
	static const struct { const char *s; enum llm_stop v; } map[] = {
		{ "stop", LLM_STOP_END }, { "end_turn", LLM_STOP_END },
		{ "stop_sequence", LLM_STOP_END }, { "completed", LLM_STOP_END },
		{ "tool_calls", LLM_STOP_TOOLS }, { "tool_use", LLM_STOP_TOOLS },
		{ "function_call", LLM_STOP_TOOLS },
		{ "length", LLM_STOP_LENGTH }, { "max_tokens", LLM_STOP_LENGTH },
	};
	size_t i;

	if (acc->err || raw == NULL || n == 0)
		return;
	acc->stop = LLM_STOP_OTHER;
	for (i = 0; i < ARRAY_LEN(map); i++)
		if (strlen(map[i].s) == n && memcmp(map[i].s, raw, n) == 0)
			acc->stop = map[i].v;
	acc->stop_raw = copy(acc, raw, n);
}

char *
acc_str(struct llm_acc *acc, const struct json_doc *d, int tok, size_t *len)
{
	char *s;
	size_t n;
	int e;

	if (tok < 0)
		return NULL;
	if ((e = json_str(d, acc->tmp, tok, &s, &n)) != 0) {
		if (e == -E_NOMEM)
			acc_fail(acc, e, "out of memory");
		return NULL;
	}
	if (len != NULL)
		*len = n;
	return s;
}

/* see llm.h */
int
acc_parse(struct llm_acc *acc, const char *s, size_t n, struct json_doc *d)
{
	int e = json_parse(acc->tmp, s, n, 1u << 16, d);

	if (e == -E_NOMEM)
		acc_fail(acc, e, "out of memory");
	else if (e != 0 || d->n == 0 || d->t[0].type != JSON_OBJ)
		acc_fail(acc, -E_PROTO, "malformed JSON from the model server: "
		    "%.60s", s);
	return acc->err;
}

static void
acc_init(struct llm_acc *acc, struct arena *a, struct arena *tmp,
    const struct llm_sink *sink)
{
	memset(acc, 0, sizeof(*acc));
	acc->a = a;
	acc->tmp = tmp;
	acc->sink = sink;
	sbuf_init(&acc->text, NULL, LLM_MAX_TEXT);
}

static void
acc_release(struct llm_acc *acc)
{
	unsigned i;

	sbuf_release(&acc->text);
	for (i = 0; i < acc->ncalls; i++)
		if (acc->calls[i].used)
			sbuf_release(&acc->calls[i].args);
}

/* Move the assembled reply into `a`; check tool arguments are JSON
 * objects (an empty string counts as {}). */
static int
acc_finish(struct llm_acc *acc, struct llm_reply *r)
{
	unsigned i, k;

	memset(r, 0, sizeof(*r));
	if (acc->err)
		return acc->err;
	/* The text is handed over, not copied: a 1 MiB reply fits a 2 MiB
	 * budget. */
	if (acc->text.cap == 0)
		sbuf_addc(&acc->text, '\0'), sbuf_truncate(&acc->text, 0);
	if (acc->text.err)
		acc_fail(acc, -E_NOMEM, "out of memory");
	r->text = acc->text.p;
	r->text_len = acc->text.len;
	sbuf_init(&acc->text, NULL, 0);
	if (acc->ncalls > 0)
		r->calls = arena_zalloc(acc->a, acc->ncalls * sizeof(*r->calls));
	if (acc->ncalls > 0 && r->calls == NULL)
		acc_fail(acc, -E_NOMEM, "out of memory");
	for (i = k = 0; i < acc->ncalls && !acc->err; i++) {
		struct llm_call *c = &r->calls[k];
		struct sbuf *ab = &acc->calls[i].args;

		if (!acc->calls[i].used)
			continue;
		c->name = acc->calls[i].name != NULL ? acc->calls[i].name : "";
		c->id = acc->calls[i].id != NULL ? acc->calls[i].id :
		    arena_printf(acc->a, "call_%u", i);
		if (c->id == NULL)
			acc_fail(acc, -E_NOMEM, "out of memory");
		if (ab->len == 0)
			c->args = copy(acc, "{}", 2), c->args_len = 2;
		else
			c->args = copy(acc, ab->p, ab->len),
			    c->args_len = ab->len;
		c->bad_args = ab->len == 0 ? 0 :
		    json_args_check(acc->tmp, ab->p, ab->len);
		if (acc->sink != NULL && acc->sink->call != NULL)
			acc->sink->call(acc->sink->ctx, c);
		k++;
	}
	r->ncalls = k;
	r->stop = acc->stop;
	r->stop_raw = acc->stop_raw;
	r->in_tokens = acc->in_tokens;
	r->out_tokens = acc->out_tokens;
	/* The terminal event came without a reason: say what happened. */
	if (r->stop == LLM_STOP_NONE)
		r->stop = k > 0 ? LLM_STOP_TOOLS : LLM_STOP_END;
	return acc->err;
}

/* --- stream framing */

struct dec {
	const struct llm_proto	*p;
	struct llm_acc		 acc;
	struct sse		 sse;
	struct ndjson		 nd;
	int			 stream;
	struct sbuf		 whole;		/* non-streamed body */
};

static int
on_sse(void *ctx, const struct sse_event *ev)
{
	struct dec *d = ctx;
	struct arena_mark m = arena_mark(d->acc.tmp);

	d->acc.nevents++;
	if (!d->acc.done)
		d->p->event(&d->acc, ev->event, ev->data, ev->data_len);
	arena_reset_to(d->acc.tmp, m);
	return d->acc.err;
}

static int
on_line(void *ctx, const char *line, size_t n)
{
	struct dec *d = ctx;
	struct arena_mark m = arena_mark(d->acc.tmp);

	d->acc.nevents++;
	if (!d->acc.done)
		d->p->event(&d->acc, NULL, line, n);
	arena_reset_to(d->acc.tmp, m);
	return d->acc.err;
}

static int
dec_init(struct dec *d, const struct llm_proto *p, struct arena *a,
    struct arena *tmp, int stream, const struct llm_sink *sink)
{
	memset(d, 0, sizeof(*d));
	d->p = p;
	d->stream = stream;
	acc_init(&d->acc, a, tmp, sink);
	if (!stream) {
		sbuf_init(&d->whole, NULL, LLM_MAX_TEXT * 2);
		return 0;
	}
	/* The parsers' own buffers: they grow only as far as events do. */
	if (p->ndjson)
		ndjson_init(&d->nd, NULL, LLM_MAX_EVENT);
	else
		sse_init(&d->sse, NULL, LLM_MAX_EVENT);
	return 0;
}

static void
dec_release(struct dec *d)
{
	acc_release(&d->acc);
	sbuf_release(&d->whole);
	if (d->stream && d->p->ndjson)
		ndjson_free(&d->nd);
	else if (d->stream)
		sse_free(&d->sse);
}

/* Bytes of the reply body. */
static int
dec_feed(struct dec *d, const char *s, size_t n)
{
	int e;

	if (d->acc.err)
		return d->acc.err;
	if (!d->stream) {
		sbuf_add(&d->whole, s, n);
		if (d->whole.err == -E_NOMEM)
			acc_fail(&d->acc, -E_NOMEM, "out of memory for the "
			    "reply");
		else if (d->whole.err)
			acc_fail(&d->acc, d->whole.err, "reply over %u bytes",
			    LLM_MAX_TEXT * 2);
		return d->acc.err;
	}
	e = d->p->ndjson ? ndjson_feed(&d->nd, s, n, on_line, d) :
	    sse_feed(&d->sse, s, n, on_sse, d);
	if (e == -E_NOMEM && !d->acc.err)
		acc_fail(&d->acc, e, "out of memory for a stream event");
	else if (e != 0 && !d->acc.err)
		acc_fail(&d->acc, e, e == -E_LIMIT ? "a stream event over %u "
		    "bytes" : "malformed stream", LLM_MAX_EVENT);
	return d->acc.err;
}

/* The body ended cleanly: was the reply complete? */
static int
dec_end(struct dec *d)
{
	int e;

	if (d->acc.err)
		return d->acc.err;
	if (!d->stream) {
		struct arena_mark m = arena_mark(d->acc.tmp);

		d->p->whole(&d->acc, d->whole.p, d->whole.len);
		arena_reset_to(d->acc.tmp, m);
		if (!d->acc.err && d->acc.stop == LLM_STOP_NONE &&
		    d->acc.ncalls == 0 && !d->acc.done)
			acc_fail(&d->acc, -E_PROTO, "reply without a result");
		return d->acc.err;
	}
	e = d->p->ndjson ? ndjson_finish(&d->nd, on_line, d) :
	    sse_finish(&d->sse, on_sse, d);
	if (e != 0 && !d->acc.err)
		acc_fail(&d->acc, -E_PROTO, "the stream was cut in the middle "
		    "of an event");
	if (!d->acc.err && !d->acc.done && !(d->p->lax_end &&
	    d->acc.stop != LLM_STOP_NONE))
		acc_fail(&d->acc, -E_PROTO, "the stream ended before the "
		    "reply was complete (%u events)", d->acc.nevents);
	return d->acc.err;
}

/* see llm.h */
int
llm_decode(const struct llm_proto *p, struct arena *a, int stream,
    const char *data, size_t n, size_t step, const struct llm_sink *sink,
    struct llm_reply *r, char *why, size_t whylen)
{
	struct arena tmp;
	struct dec *d;
	size_t off, k;
	int e;

	memset(r, 0, sizeof(*r));
	arena_init(&tmp, "decode");
	if ((d = mem_alloc(sizeof(*d))) == NULL)
		return -E_NOMEM;
	if ((e = dec_init(d, p, a, &tmp, stream, sink)) == 0) {
		for (off = 0; off < n && e == 0; off += k) {
			k = step == 0 || step > n - off ? n - off : step;
			e = dec_feed(d, data + off, k);
		}
		if (e == 0)
			e = dec_end(d);
		if (e == 0)
			e = acc_finish(&d->acc, r);
		if (e != 0)
			llm_reply_release(r);
		if (e != 0 && why != NULL)
			snprintf(why, whylen, "%s", d->acc.why[0] ? d->acc.why :
			    err_str(e));
	}
	dec_release(d);
	mem_free(d);
	arena_reset(&tmp);
	return e;
}

/* see llm.h */
void
llm_put_messages(struct json_writer *w, const struct llm_req *q,
    enum llm_chat_style style,
    void (*put_call)(struct json_writer *, const struct llm_call *))
{
	const struct llm_msg *m;
	int ollama = style == LLM_CHAT_OLLAMA;
	unsigned i;

	json_key(w, "messages");
	json_begin_arr(w);
	if (q->system != NULL) {
		json_begin_obj(w);
		json_kstr(w, "role", "system");
		json_kstr(w, "content", q->system);
		json_end_obj(w);
	}
	for (m = q->msgs; m != NULL; m = m->next) {
		json_begin_obj(w);
		json_kstr(w, "role", m->role == LLM_USER ? "user" :
		    m->role == LLM_TOOL ? "tool" : "assistant");
		if (m->role == LLM_TOOL && !ollama)
			json_kstr(w, "tool_call_id", m->call_id);
		json_key(w, "content");
		if (!ollama && m->role == LLM_ASSISTANT && m->text_len == 0 &&
		    m->ncalls > 0)
			json_put_null(w);
		else
			json_put_strn(w, m->text, m->text_len);
		if (m->role == LLM_TOOL && ollama && m->tool_name != NULL)
			json_kstr(w, "tool_name", m->tool_name);
		if (m->role == LLM_ASSISTANT && m->ncalls > 0) {
			json_key(w, "tool_calls");
			json_begin_arr(w);
			for (i = 0; i < m->ncalls; i++)
				put_call(w, &m->calls[i]);
			json_end_arr(w);
		}
		json_end_obj(w);
	}
	json_end_arr(w);
}

/* see llm.h */
void
llm_put_tools(struct json_writer *w, const struct llm_req *q,
    enum llm_tools_style style)
{
	const struct llm_tool *t;
	unsigned i;

	if (q->ntools == 0)
		return;
	json_key(w, "tools");
	json_begin_arr(w);
	for (i = 0; i < q->ntools; i++) {
		t = &q->tools[i];
		json_begin_obj(w);
		if (style != LLM_TOOLS_ANTHROPIC) {
			json_kstr(w, "type", "function");
		}
		if (style == LLM_TOOLS_NESTED) {
			json_key(w, "function");
			json_begin_obj(w);
		}
		json_kstr(w, "name", t->name);
		json_kstr(w, "description",
		    t->description != NULL ? t->description : "");
		json_key(w, style == LLM_TOOLS_ANTHROPIC ? "input_schema" :
		    "parameters");
		json_put_raw(w, t->params, strlen(t->params));
		if (style == LLM_TOOLS_NESTED)
			json_end_obj(w);
		json_end_obj(w);
	}
	json_end_arr(w);
}

/* see llm.h */
void
llm_reply_release(struct llm_reply *r)
{
	if (r->text != NULL)
		mem_free(r->text);
	r->text = NULL;
	r->text_len = 0;
}

/* see llm.h */
const struct llm_proto *
llm_proto_find(const char *name)
{
	static const struct llm_proto *const v[] = {
		&llm_openai, &llm_responses, &llm_anthropic, &llm_ollama,
	};
	size_t i;

	for (i = 0; i < ARRAY_LEN(v); i++)
		if (strcmp(v[i]->name, name) == 0)
			return v[i];
	return NULL;
}

/* --- transport */

struct llm_client {
	struct llm_conf		 c;
	struct arena		*perm;
	struct http_url		 url;		/* the server */
	struct http_url		 proxy;		/* valid when use_proxy */
	int			 use_proxy;
	char			*path;		/* base path + protocol path */
	struct tls_anchors	*ta;
	struct tls_conn		*tls;
	struct net_conn		 net;
	int			 up;		/* a connection is open */
	long long		 deadline;	/* see llm_set_deadline */
	struct http_conn	 hc;
	char			 rbuf[4096];
	int			 status;
	unsigned		 attempts;
	int			 delivered;	/* output reached the sink */
	int			 stale;		/* the attempt found its kept-
						 * alive connection closed */
	int			 timed_out;	/* the deadline ended llm_send */
	const struct llm_sink	*user_sink;
	struct sbuf		*rec;		/* the reply body, for the cache */
	int			 cached;	/* see llm_cached */
	char			 why[320];
};

void
llm_conf_defaults(struct llm_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->proto = &llm_openai;
	c->anthropic_version = "2023-06-01";
	c->connect_ms = 10000;
	c->first_ms = 120000;
	c->idle_ms = 60000;
	c->retries = 3;
	c->max_backoff_ms = 30000;
}

static int
fail(struct llm_client *cl, int e, const char *fmt, ...) ATTR_PRINTF(3, 4);

static int
fail(struct llm_client *cl, int e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cl->why, sizeof(cl->why), fmt, ap);
	va_end(ap);
	return e;
}

static long
io_read(void *ctx, void *buf, size_t n)
{
	struct llm_client *cl = ctx;

	return cl->tls != NULL && cl->url.https ? tls_read(cl->tls, buf, n) :
	    net_read(&cl->net, buf, n);
}

static int
io_write(void *ctx, const void *buf, size_t n)
{
	struct llm_client *cl = ctx;

	return cl->tls != NULL && cl->url.https ? tls_write(cl->tls, buf, n) :
	    net_write(&cl->net, buf, n);
}

/* The proxy for this URL from the environment, if any. */
static int
find_proxy(struct llm_client *cl)
{
	const char *p, *np;

	p = cl->url.https ? getenv("HTTPS_PROXY") : getenv("HTTP_PROXY");
	if (p == NULL)
		p = cl->url.https ? getenv("https_proxy") : getenv("http_proxy");
	if (p == NULL || *p == '\0')
		return 0;
	if ((np = getenv("NO_PROXY")) == NULL)
		np = getenv("no_proxy");
	if (np != NULL && http_no_proxy(np, cl->url.host))
		return 0;
	if (http_url_parse(cl->perm, p, &cl->proxy) != 0 || cl->proxy.https)
		return fail(cl, -E_INVAL, "proxy '%s': want http://host:port",
		    p);
	cl->use_proxy = 1;
	return 0;
}

/* see llm.h */
struct llm_client *
llm_client_new(struct arena *perm, const struct llm_conf *c)
{
	struct llm_client *cl;
	const char *base;
	size_t n;

	if ((cl = arena_zalloc(perm, sizeof(*cl))) == NULL)
		return NULL;
	cl->c = *c;
	cl->perm = perm;
	cl->net.fd = -1;
	base = c->base_url;
	if (base == NULL || http_url_parse(perm, base, &cl->url) != 0) {
		fail(cl, -E_INVAL, "base URL '%s' is not an http:// or "
		    "https:// URL", base != NULL ? base : "");
		return cl;
	}
	/* "https://host/v1" + "/v1/chat/completions": no doubled /v1 */
	n = strlen(cl->url.path);
	while (n > 0 && cl->url.path[n - 1] == '/')
		n--;
	if (n >= 3 && strncmp(cl->url.path + n - 3, "/v1", 3) == 0 &&
	    strncmp(c->proto->path, "/v1/", 4) == 0)
		n -= 3;
	cl->path = arena_printf(perm, "%.*s%s", (int)n, cl->url.path,
	    c->proto->path);
	if (cl->path == NULL)
		return NULL;
	if (find_proxy(cl) != 0)
		cl->path = NULL;	/* llm_send fails with cl->why */
	return cl;
}

static void
disconnect(struct llm_client *cl)
{
	if (!cl->up)
		return;
	net_close(&cl->net);
	cl->up = 0;
}

/* see llm.h */
void
llm_disconnect(struct llm_client *cl)
{
	if (cl != NULL)
		disconnect(cl);
}

/* Open a connection: TCP to the server or the proxy, a CONNECT tunnel for
 * https through a proxy, then TLS. */
static int
connect_server(struct llm_client *cl)
{
	const struct http_url *to = cl->use_proxy ? &cl->proxy : &cl->url;
	struct http_io io = { io_read, io_write, cl };
	int e;

	cl->net.first_ms = cl->c.first_ms;
	cl->net.idle_ms = cl->c.idle_ms;
	if ((e = net_connect(&cl->net, to->host, to->port,
	    cl->c.connect_ms)) != 0)
		return fail(cl, e, "cannot connect to %s%s port %u: %s",
		    cl->use_proxy ? "proxy " : "", to->host, to->port,
		    cl->net.why);
	cl->up = 1;
	if (cl->use_proxy && cl->url.https) {
		struct http_io plain = { io_read, io_write, cl };
		struct tls_conn *keep = cl->tls;
		struct http_head r;
		struct sbuf sb;
		struct arena_mark m = arena_mark(cl->perm);

		cl->tls = NULL;		/* plain I/O for the CONNECT */
		sbuf_init(&sb, cl->perm, 1024);
		http_write_connect(&sb, cl->url.host, cl->url.port, NULL);
		http_conn_init(&cl->hc, &plain, cl->rbuf, sizeof(cl->rbuf));
		e = sb.err ? sb.err : http_send(&cl->hc, &sb, NULL, 0);
		if (e == 0)
			e = http_read_head(&cl->hc, cl->perm, &r);
		arena_reset_to(cl->perm, m);
		cl->tls = keep;
		if (e != 0)
			return fail(cl, e, "proxy %s: CONNECT failed: %s",
			    cl->proxy.host, cl->net.why ? cl->net.why :
			    err_str(e));
		if (r.status != 200)
			return fail(cl, -E_PROTO, "proxy %s refused CONNECT "
			    "to %s:%u: HTTP %d", cl->proxy.host, cl->url.host,
			    cl->url.port, r.status);
	}
	if (cl->url.https) {
		if (cl->ta == NULL) {
			const char *ca = cl->c.ca_file != NULL ?
			    cl->c.ca_file : tls_default_ca();

			if (ca == NULL)
				return fail(cl, -E_TLS, "no CA bundle found: "
				    "set ca_file");
			if ((e = tls_anchors_shared(cl->perm, ca,
			    &cl->ta)) != 0)
				return fail(cl, e, "CA bundle %s: %s", ca,
				    e == -E_PARSE ? "no certificates in it" :
				    err_str(e));
		}
		if (cl->tls == NULL && (cl->tls = tls_new(cl->perm)) == NULL)
			return fail(cl, -E_NOMEM, "out of memory");
		if ((e = tls_connect(cl->tls, cl->ta, &cl->net,
		    cl->url.host)) != 0)
			return fail(cl, e, "TLS with %s: %s", cl->url.host,
			    tls_why(cl->tls));
	}
	http_conn_init(&cl->hc, &io, cl->rbuf, sizeof(cl->rbuf));
	return 0;
}

static void
sink_text(void *ctx, const char *s, size_t n)
{
	struct llm_client *cl = ctx;

	cl->delivered = 1;
	if (cl->user_sink != NULL && cl->user_sink->text != NULL)
		cl->user_sink->text(cl->user_sink->ctx, s, n);
}

static void
sink_call(void *ctx, const struct llm_call *c)
{
	struct llm_client *cl = ctx;

	if (cl->user_sink != NULL && cl->user_sink->call != NULL)
		cl->user_sink->call(cl->user_sink->ctx, c);
}

/* The provider's message from an error body, or the start of the body. */
static void
error_body(struct llm_client *cl, struct arena *a, int status,
    const char *body, size_t n)
{
	struct arena_mark m = arena_mark(a);
	struct json_doc d;
	char *msg = NULL;
	int e;

	if (json_parse(a, body, n, 4096, &d) == 0 && d.n > 0 &&
	    d.t[0].type == JSON_OBJ && (e = json_get(&d, 0, "error")) >= 0) {
		if (d.t[e].type == JSON_OBJ)
			e = json_get(&d, e, "message");
		if (json_str(&d, a, e, &msg, NULL) != 0)
			msg = NULL;
	}
	fail(cl, -E_PROTO, "HTTP %d from %s: %.200s", status, cl->url.host,
	    msg != NULL ? msg : n > 0 ? body : "(no message)");
	arena_reset_to(a, m);
}

/* Words for a failure while talking over an open connection. */
static const char *
conn_why(struct llm_client *cl, int e)
{
	if (e == -E_TLS && cl->tls != NULL && cl->url.https)
		return tls_why(cl->tls);
	if ((e == -E_IO || e == -E_TIMEOUT) && cl->net.why != NULL)
		return cl->net.why;
	if (e == -E_PROTO)
		return "the reply was cut off or is not valid HTTP";
	if (e == -E_LIMIT)
		return "the reply head is too large";
	return err_str(e);
}

static int
retryable(int status)
{
	return status == 429 || status == 502 || status == 503 ||
	    status == 529;
}

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* One attempt: send, read the head, decode the body. Sets *again when the
 * failure is worth another attempt; *wait_ms to the server's Retry-After. */
static int
attempt(struct llm_client *cl, struct arena *a, struct arena *tmp,
    const struct llm_req *q, const struct sbuf *head, const struct sbuf *body,
    struct llm_reply *r, int *again, long *wait_ms)
{
	struct llm_sink sink = { sink_text, sink_call, cl };
	struct http_head resp;
	struct dec *d = NULL;
	char buf[4096];
	long n;
	int e, fresh = 0;

	*again = 0;
	*wait_ms = -1;
	cl->status = 0;
	cl->stale = 0;
	if (cl->up && !http_conn_reusable(&cl->hc))
		disconnect(cl);
	if (!cl->up) {
		if ((e = connect_server(cl)) != 0) {
			disconnect(cl);
			*again = e == -E_IO || e == -E_TIMEOUT;
			return e;
		}
		fresh = 1;
	}
	cl->hc.now = (long long)time(NULL);	/* for Retry-After dates */
	e = http_send(&cl->hc, head, body->p, body->len);
	if (e == 0)
		e = http_read_head(&cl->hc, tmp, &resp);
	if (e != 0) {
		disconnect(cl);
		*again = e != -E_NOMEM;
		if (!fresh)	/* a kept-alive connection the server closed */
			*wait_ms = 0, cl->stale = e != -E_NOMEM;
		return fail(cl, e, "%s: %s", cl->url.host, conn_why(cl, e));
	}
	cl->status = resp.status;
	if (resp.status >= 300 && resp.status < 400) {
		const char *loc = http_header(&resp, "location");

		disconnect(cl);
		return fail(cl, -E_PROTO, "HTTP %d: redirect to %s refused "
		    "(set the base URL to the final address)", resp.status,
		    loc != NULL ? loc : "(nowhere)");
	}
	if (resp.status != 200) {
		struct sbuf eb;

		/* The message is at the start; an endless error body is not
		 * read to its end, and the connection goes with it. */
		sbuf_init(&eb, tmp, ERROR_BODY_MAX);
		while ((n = http_read_body(&cl->hc, buf, MIN(sizeof(buf),
		    ERROR_BODY_MAX - eb.len))) > 0) {
			sbuf_add(&eb, buf, (size_t)n);
			if (eb.err || eb.len >= ERROR_BODY_MAX)
				break;
		}
		if (n != 0 || eb.err)
			disconnect(cl);
		error_body(cl, tmp, resp.status, eb.p, eb.len);
		if (retryable(resp.status)) {
			*again = 1;
			if (resp.retry_after >= 0)
				*wait_ms = resp.retry_after > 86400 ? 86400000L :
				    resp.retry_after * 1000;
		}
		return -E_PROTO;
	}
	if ((d = mem_alloc(sizeof(*d))) == NULL ||
	    dec_init(d, cl->c.proto, a, tmp, q->stream, &sink) != 0) {
		e = fail(cl, -E_NOMEM, "out of memory for the reply");
		goto out;
	}
	while ((n = http_read_body(&cl->hc, buf, sizeof(buf))) > 0) {
		if (HAVE_EVAL && cl->rec != NULL)
			sbuf_add(cl->rec, buf, (size_t)n);
		if ((e = dec_feed(d, buf, (size_t)n)) != 0)
			break;
	}
	if (n < 0) {
		e = fail(cl, (int)n, "reading the reply from %s: %s",
		    cl->url.host, conn_why(cl, (int)n));
		*again = !cl->delivered;
		disconnect(cl);
		goto out;
	}
	if (n == 0 && d->acc.err == 0)
		dec_end(d);
	if (d->acc.err == 0)
		acc_finish(&d->acc, r);
	if ((e = d->acc.err) != 0) {
		llm_reply_release(r);
		fail(cl, e, "%s", d->acc.why);
		disconnect(cl);
	}
out:
	if (d != NULL) {
		dec_release(d);
		mem_free(d);
	}
	return e;
}

static void
key_str(struct sha256 *h, const char *s)
{
	sha256_feed(h, s, strlen(s) + 1);	/* the NUL ends each field */
}

/* The cache key: everything that shapes the answer, the body (model,
 * messages, tools, options) and where and how it is asked. */
static void
cache_key(const struct llm_client *cl, const struct llm_req *q,
    const struct sbuf *body, char hex[65])
{
	struct sha256 h;
	unsigned char d[32];
	char port[12];

	sha256_init(&h);
	key_str(&h, "skillbox-cache 1");
	key_str(&h, cl->c.proto->name);
	key_str(&h, q->stream ? "stream" : "whole");
	key_str(&h, cl->url.https ? "https" : "http");
	key_str(&h, cl->url.host);
	snprintf(port, sizeof(port), "%u", cl->url.port);
	key_str(&h, port);
	key_str(&h, cl->path);
	if (cl->c.proto->anthropic_auth)
		key_str(&h, cl->c.anthropic_version);
	sha256_feed(&h, body->p, body->len);
	sha256_final(&h, d);
	sha256_hex(d, hex);
}

/* A stored reply for key, decoded as one from the network would be. One
 * that no longer decodes is dropped (a miss). */
static int
cache_hit(struct llm_client *cl, struct arena *a, const struct llm_req *q,
    const char *key, const struct llm_sink *sink, struct llm_reply *r)
{
	struct sbuf sb;
	int e;

	sbuf_init(&sb, NULL, cl->c.cache_max);
	if ((e = cache_get(cl->c.cache_dir, key, &sb)) == 0) {
		e = llm_decode(cl->c.proto, a, q->stream, sb.p, sb.len, 0, sink,
		    r, NULL, 0);
		if (e != 0 && e != -E_NOMEM)
			cache_drop(cl->c.cache_dir, key);
	}
	sbuf_release(&sb);
	return e;
}

/* see llm.h */
int
llm_send(struct llm_client *cl, struct arena *a, const struct llm_req *q,
    const struct llm_sink *sink, struct llm_reply *r)
{
	struct http_header hdr[6];
	struct http_url target = cl->url;
	struct json_writer w;
	struct sbuf body, head;
	struct arena tmp;
	unsigned nh = 0, i, restarted = 0;
	char *auth = NULL;
	long wait, backoff;
	int e, again;
	struct sbuf rec;
	char key[65];

	memset(r, 0, sizeof(*r));
	cl->cached = -1;
	cl->rec = NULL;
	if (cl->path == NULL)
		return -E_INVAL;
	target.path = cl->path;
	cl->user_sink = sink;
	cl->delivered = 0;
	cl->attempts = 0;
	cl->timed_out = 0;
	cl->net.expired = 0;
	arena_init(&tmp, "request");
	sbuf_init(&body, NULL, LLM_MAX_TEXT * 2);
	json_writer_init(&w, &body);
	cl->c.proto->body(q, &w);
	if ((e = json_writer_err(&w)) != 0 || (e = body.err) != 0) {
		e = fail(cl, e, "building the request: %s", err_str(e));
		goto out;
	}
	if (HAVE_EVAL && cl->c.cache_dir != NULL) {
		cache_key(cl, q, &body, key);
		if (cache_hit(cl, a, q, key, sink, r) == 0) {
			cl->cached = 1;
			cl->status = 200;
			e = 0;
			goto out;
		}
		sbuf_init(&rec, NULL, cl->c.cache_max);
		cl->rec = &rec;
	}
	hdr[nh++] = (struct http_header){ "Content-Type", "application/json" };
	hdr[nh++] = (struct http_header){ "Accept", q->stream ?
	    (cl->c.proto->ndjson ? "application/x-ndjson" :
	    "text/event-stream") : "application/json" };
	hdr[nh++] = (struct http_header){ "User-Agent",
	    "skillbox/" SKILLBOX_VERSION };
	if (cl->c.api_key != NULL && cl->c.proto->anthropic_auth &&
	    !cl->c.bearer)
		hdr[nh++] = (struct http_header){ "x-api-key", cl->c.api_key };
	else if (cl->c.api_key != NULL) {
		auth = arena_printf(&tmp, "Bearer %s", cl->c.api_key);
		hdr[nh++] = (struct http_header){ "Authorization", auth };
	}
	if (cl->c.proto->anthropic_auth)
		hdr[nh++] = (struct http_header){ "anthropic-version",
		    cl->c.anthropic_version };
	sbuf_init(&head, &tmp, 8192);
	if (auth == NULL && cl->c.api_key != NULL &&
	    !cl->c.proto->anthropic_auth)
		e = -E_NOMEM;
	else
		e = http_write_request(&head, "POST", &target, cl->use_proxy &&
		    !cl->url.https, hdr, nh, body.len);
	if (e != 0 || head.err) {
		e = fail(cl, e ? e : head.err, "building the request head");
		goto out;
	}
	for (i = 0;; i++) {
		struct arena_mark m = arena_mark(&tmp);

		cl->attempts++;
		/* A new attempt: a new body. */
		if (HAVE_EVAL && cl->rec != NULL) {
			sbuf_release(cl->rec);
			sbuf_init(cl->rec, NULL, cl->c.cache_max);
		}
		e = attempt(cl, a, &tmp, q, &head, &body, r, &again, &wait);
		arena_reset_to(&tmp, m);
		if (e != 0 && cl->net.expired) {
			cl->timed_out = 1;
			e = fail(cl, -E_TIMEOUT, "%s: the turn's time limit was "
			    "reached while waiting for the model",
			    cl->url.host);
			break;
		}
		if (e == 0 || !again || cl->delivered)
			break;
		/* A connection the server closed while it was idle is no
		 * failure of the server's: once more at once on a new one,
		 * whatever retries says. */
		if (cl->stale && !restarted) {
			restarted = 1;
			continue;
		}
		if (i - restarted >= cl->c.retries) {
			size_t k = strlen(cl->why);

			if (i > 0)
				snprintf(cl->why + k, sizeof(cl->why) - k,
				    " (gave up after %u attempts)", i + 1);
			break;
		}
		backoff = 500L << (i < 10 ? i : 10);
		backoff += (long)((unsigned long)net_now_ms() * 2654435761u %
		    (unsigned long)(backoff / 2 + 1));
		if (wait >= 0)
			backoff = wait;
		if (backoff > (long)cl->c.max_backoff_ms) {
			if (wait > (long)cl->c.max_backoff_ms) {
				size_t k = strlen(cl->why);

				snprintf(cl->why + k, sizeof(cl->why) - k,
				    " (asked to retry after %ld s: more than "
				    "the %u s allowed)", wait / 1000,
				    cl->c.max_backoff_ms / 1000);
				break;
			}
			backoff = (long)cl->c.max_backoff_ms;
		}
		if (cl->deadline > 0 && net_now_ms() + backoff >=
		    cl->deadline) {
			size_t k = strlen(cl->why);

			snprintf(cl->why + k, sizeof(cl->why) - k, " (not "
			    "retried: the turn's time limit comes first)");
			break;
		}
		sleep_ms(backoff);
	}
out:
	/* Only a whole reply is kept: attempt() returns 0 only when the
	 * status was 200 and the decoder saw the reply complete. */
	if (HAVE_EVAL && cl->rec != NULL) {
		if (e == 0) {
			cl->cached = 0;
			if (!rec.err)
				(void)cache_put(cl->c.cache_dir,
				    cl->c.cache_max, key, rec.p, rec.len);
		}
		sbuf_release(&rec);
		cl->rec = NULL;
	}
	sbuf_release(&body);
	arena_reset(&tmp);
	return e;
}

/* see llm.h */
void
llm_set_deadline(struct llm_client *cl, long long deadline_ms)
{
	cl->deadline = deadline_ms;
	cl->net.deadline = deadline_ms;
}

/* see llm.h */
int
llm_timed_out(const struct llm_client *cl)
{
	return cl->timed_out;
}

const char *
llm_why(const struct llm_client *cl)
{
	return cl->why[0] != '\0' ? cl->why : "no error";
}

int
llm_status(const struct llm_client *cl)
{
	return cl->status;
}

unsigned
llm_attempts(const struct llm_client *cl)
{
	return cl->attempts;
}

int
llm_cached(const struct llm_client *cl)
{
	return HAVE_EVAL ? cl->cached : -1;
}

/* see llm.h */
int
llm_preload_anchors(struct arena *perm, const char *ca_file, char *why,
    size_t whylen)
{
	const char *ca = ca_file != NULL ? ca_file : tls_default_ca();
	struct tls_anchors *ta;
	int e;

	if (ca == NULL) {
		snprintf(why, whylen, "no CA bundle found: set ca_file");
		return -E_TLS;
	}
	if ((e = tls_anchors_shared(perm, ca, &ta)) != 0)
		snprintf(why, whylen, "CA bundle %s: %s", ca, e == -E_PARSE ?
		    "no certificates in it" : err_str(e));
	return e;
}
