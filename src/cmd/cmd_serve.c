/* cmd_serve.c - the agent as a local HTTP service
 * usage: skillbox serve [--listen HOST:PORT] [--port-file FILE]
 *        skillbox serve --hash-token TOKEN
 * One process answers HTTP/1.1 (and 1.0) on serve.listen, by default
 * 127.0.0.1:8080. Each agent turn runs in a forked worker that streams its
 * events back; a worker that crashes or runs out of memory ends its turn
 * with an error, never the server.
 *
 *   GET  /                      the chat page
 *   GET  /health                no token needed
 *   GET  /api/v1/skills         the skills a token may use
 *   GET  /api/v1/sessions       the token's sessions, newest first
 *   GET  /api/v1/sessions/NAME  its events as NDJSON; ?from=OFFSET or
 *                               Last-Event-ID: OFFSET for the rest
 *   DELETE /api/v1/sessions/NAME
 *   POST /api/v1/run            {"input": "...", "session": "NAME"}:
 *                               the --json events as Server-Sent Events
 *                               (id: the log offset), or one JSON reply
 *                               with Accept: application/json
 *   POST /api/v1/sessions/NAME/answer  {"input": "..."}: the answer to
 *                               the question the session's turn waits
 *                               on (ask_user), or {"approve": BOOL,
 *                               "reason": "..."}; then as /api/v1/run
 * [JOBS]   GET  /api/v1/jobs           the job board; ?status=NAME
 * [JOBS]   POST /api/v1/jobs           {"title", "input", "to", "parents",
 * [JOBS]                               "schema", "budget", "timeout",
 * [JOBS]                               "tries", "backoff"}: as jobs add
 * [JOBS]   GET  /api/v1/jobs/ID        a job with its events
 * [JOBS]   POST /api/v1/jobs/ID/block|unblock|comment|cancel  {"text":..}
 * [JOBS]   GET  /api/v1/jobs/events    the journal's new lines as SSE (id:
 * [JOBS]                               the offset after; Last-Event-ID or
 * [JOBS]                               ?from=OFFSET; event: reset after a
 * [JOBS]                               compaction); not for a token
 * [JOBS]                               limited to skills (403)
 *   GET  /v1/models             OpenAI-compatible
 *   POST /v1/chat/completions   OpenAI-compatible, streamed or not; the
 *                               `user` field names the session; when it
 *                               waits on a question, the message answers
 *                               (an approval: "yes", or why not)
 *
 * --listen HOST:PORT  instead of serve.listen (port 0: any free port)
 * --port-file FILE    write the port listened on to FILE
 * --hash-token TOKEN  print the line to put in serve.tokens
 *
 * Tokens are kept as SHA-256 hashes in serve.tokens; without any, no
 * token is asked and the server listens on loopback addresses only.
 * With serve.tls_cert and serve.tls_key (PEM; an EC or RSA key) it speaks
 * HTTPS, TLS 1.2, instead of HTTP.
 * SIGTERM stops accepting, lets running turns finish and exits; SIGHUP
 * reloads the configuration. One line per request goes to stderr, or to
 * syslog with serve.log: syslog.
 * Exit status: 0 stopped by SIGTERM, 1 cannot start, 2 usage. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/cfg.h"
#include "cmd/cmd.h"
#include "config.h"
#include "net/http.h"
#include "fmt/json.h"
#include "llm/llm.h"
#include "base/log.h"
#include "net/net.h"
#include "serve/persist.h"
#include "base/sha256.h"
#include "skill/skill.h"
#include "session/slog.h"
#include "base/str.h"
#include "net/tls.h"
#include "web.h"
#if HAVE_JOBS
#include "serve/jobs.h"
#endif

#define OUT_HIGH	(64u << 10)	/* stop reading a source above this */
#define RELAY_BUF	(16u << 10)
#define REQ_TOKENS	4096		/* JSON tokens in a request body */
#define TAG_LEN		8		/* hex digits of a token's session tag */
#define RETRY_AFTER	"5"

enum kind { K_PLAIN, K_FILE, K_RUN_SSE, K_RUN_JSON, K_OAI_SSE, K_OAI_JSON,
    K_JOBS };
enum cst { C_FREE, C_HEAD, C_BODY, C_QUEUED, C_RELAY, C_WRITE };

/* What a turn request asks for, parsed by the server before the fork. */
struct turnreq {
	const char	*input;
	size_t		 inlen;
	const char	*session;	/* the name on disk; NULL: ephemeral */
	const char	*shown;		/* the name the client knows */
	const char	*model;
	const char	*agent;		/* the entry agent; NULL: skillbox */
	int		 include_usage;
	int		 answer;	/* the input answers the question */
	int		 decide;	/* {"approve": ...} came */
	int		 approve;
	char		*reason;
	const char	*path_session;	/* .../sessions/NAME/answer */
	struct seed {
		enum llm_role	 role;
		const char	*s;
		size_t		 n;
	}		*seed;
	unsigned	 nseed;
};

struct conn {
	int		 fd, src;	/* src: worker pipe or session file */
	struct tls_srv	*tls;		/* HTTPS: the connection's TLS */
	unsigned char	 st, kind, close, v10, chunked, headed, gone, head;
	unsigned char	 ran;		/* a worker ran this request's turn */
	unsigned	 seq;		/* order in the queue */
	pid_t		 pid;
	long long	 deadline, t0;
	char		 peer[48];
	char		*in;		/* request bytes */
	size_t		 in_len, in_cap;
	char		*body;
	size_t		 body_len;
	long long	 want;		/* body bytes to come; -1 chunked */
	struct http_body bd;
	struct http_head h;
	struct arena	 a;		/* this request's strings */
	char		*out;
	size_t		 out_len, out_off, out_cap;
	char		 ph[160];	/* the worker's status line */
	size_t		 phlen;
	int		 status;
	unsigned long long sent;
	int		 tok;		/* -1: no token (none configured) */
	const char	*origin;	/* an allowed Origin, to echo */
	struct turnreq	 tr;
#if HAVE_JOBS
	long long	 joff, jbeat;	/* K_JOBS: the journal's next line */
	unsigned long long jino;	/* the journal's inode, 0 none yet */
	unsigned char	 jmore;		/* stopped at OUT_HIGH */
#endif
};

struct srv {
	struct cfg	*cfg;
	struct arena	 cfga[2];
	unsigned	 cur;
	int		 lfd;
	unsigned	 port;
	struct conn	*c;
	unsigned	 nc;
	struct pollfd	*pfd;
	struct conn	**pc;		/* pfd[i] belongs to pc[i] */
	unsigned	 turns, queued, seq, open;
	size_t		 slice;
	unsigned char	 hash[CFG_MAX_LIST][32];
	const char	*only[CFG_MAX_LIST];
	char		 tag[CFG_MAX_LIST][TAG_LEN + 1];
	unsigned	 ntok;
	long long	 started;
	struct tls_cred	*cred;		/* HTTPS: chain and key */
#if HAVE_JOBS
	long long	 jlook;		/* the journal's last look, ms */
#endif
};

static volatile sig_atomic_t got_term, got_hup;

static void
on_signal(int sig)
{
	if (sig == SIGTERM || sig == SIGINT)
		got_term = 1;
	else
		got_hup = 1;
}

static const char *
reason(int st)
{
	switch (st) {
	case 200: return "OK";
#if HAVE_JOBS
	case 201: return "Created";
#endif
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
	case 431: return "Request Header Fields Too Large";
	case 501: return "Not Implemented";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return st < 500 ? "Error" : "Internal Server Error";
	}
}

/* --- output */

static int
out_add(struct conn *c, const void *p, size_t n)
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

static int
out_printf(struct conn *c, const char *fmt, ...) ATTR_PRINTF(2, 3);

static int
out_printf(struct conn *c, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -E_LIMIT;
	return out_add(c, buf, (size_t)n);
}

/* Body bytes of a streamed reply, chunked unless HTTP/1.0. */
static int
out_chunk(struct conn *c, const char *p, size_t n)
{
	int e = 0;

	if (n == 0)
		return 0;
	if (c->chunked)
		e = out_printf(c, "%zx\r\n", n);
	if (e == 0)
		e = out_add(c, p, n);
	if (e == 0 && c->chunked)
		e = out_add(c, "\r\n", 2);
	return e;
}

/* The head of a response: len bytes of body, or len < 0 for a streamed
 * one (chunked, or up to the close for HTTP/1.0). */
static int
out_head(struct conn *c, int st, const char *ctype, long long len,
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
	e = out_printf(c, "HTTP/1.1 %d %s\r\n", st, reason(st));
	if (e == 0 && ctype != NULL)
		e = out_printf(c, "Content-Type: %s\r\n", ctype);
	/* A turn that ran must not run again because a client retried;
	 * a server that was only busy (503) may be asked again. */
	if (e == 0 && ((c->ran && st >= 400) || (st >= 500 && st != 503)))
		e = out_printf(c, "x-should-retry: false\r\n");
	if (e == 0 && c->origin != NULL)
		e = out_printf(c, "Access-Control-Allow-Origin: %s\r\n"
		    "Vary: Origin\r\n", c->origin);
	if (e == 0 && extra != NULL)
		e = out_add(c, extra, strlen(extra));
	if (e == 0 && len >= 0)
		e = out_printf(c, "Content-Length: %lld\r\n", len);
	if (e == 0 && c->chunked)
		e = out_printf(c, "Transfer-Encoding: chunked\r\n");
	if (e == 0)
		e = out_printf(c, "Cache-Control: no-store\r\n"
		    "X-Content-Type-Options: nosniff\r\n%s\r\n", c->close ?
		    "Connection: close\r\n" : c->v10 ?
		    "Connection: keep-alive\r\n" : "");
	return e;
}

/* A whole response with a body. */
static int
respond(struct srv *s, struct conn *c, int st, const char *ctype,
    const char *body, size_t n, const char *extra)
{
	int e;

	(void)s;
	e = out_head(c, st, ctype, (long long)n, extra);
	if (e == 0 && !c->head)
		e = out_add(c, body, n);
	if (e != 0)
		c->close = 1;
	c->st = C_WRITE;
	return e;
}

/* An error in the OpenAI shape, which serves the native API as well. */
static int
respond_err(struct srv *s, struct conn *c, int st, const char *type,
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
		return respond(s, c, 503, "text/plain", "out of memory\n", 14,
		    NULL);
	}
	return respond(s, c, st, "application/json", sb.p, sb.len, extra);
}

/* --- connections */

static void
conn_close(struct srv *s, struct conn *c)
{
#if HAVE_SERVE_TLS
	if (c->tls != NULL) {
		if (!c->gone && c->fd >= 0)
			tls_srv_close(c->tls, c->fd);
		mem_free(c->tls);
	}
#endif
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
		conn_close(s, c);
		return;
	}
	(void)used;
	mem_free(c->body);
	c->body = NULL;
	c->body_len = 0;
	arena_reset(&c->a);
	memset(&c->tr, 0, sizeof(c->tr));
	c->st = C_HEAD;
	c->kind = K_PLAIN;
	c->headed = c->chunked = c->head = c->ran = 0;
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

/* --- auth */

/* The token index for "Bearer T", compared in constant time against
 * every hash; -1 none matches. */
static int
auth_token(const struct srv *s, const char *hdr)
{
	unsigned char d[32];
	struct sha256 h;
	unsigned i, k, diff;
	int hit = -1;

	if (hdr == NULL || strncasecmp(hdr, "Bearer ", 7) != 0)
		return -1;
	hdr += 7;
	while (*hdr == ' ')
		hdr++;
	sha256_init(&h);
	sha256_feed(&h, hdr, strlen(hdr));
	sha256_final(&h, d);
	for (i = 0; i < s->ntok; i++) {
		for (diff = k = 0; k < 32; k++)
			diff |= d[k] ^ s->hash[i][k];
		if (diff == 0)
			hit = (int)i;
	}
	return hit;
}

/* The on-disk name of a token's session: "TAG.NAME"; NULL when bad. */
static const char *
stored_name(struct srv *s, struct conn *c, const char *name)
{
	const char *n;

	if (name == NULL)
		return NULL;
	if (c->tok < 0)
		n = name;
	else if ((n = arena_printf(&c->a, "%s.%s", s->tag[c->tok], name)) ==
	    NULL)
		return NULL;
	return slog_name_ok(n) ? n : NULL;
}

/* --- cheap endpoints */

static int
send_json(struct srv *s, struct conn *c, struct sbuf *sb)
{
	sbuf_addc(sb, '\n');
	if (sb->err)
		return respond_err(s, c, 503, "server_error", "out of memory "
		    "in the server", "Retry-After: " RETRY_AFTER "\r\n");
	return respond(s, c, 200, "application/json", sb->p, sb->len, NULL);
}

static int
ep_health(struct srv *s, struct conn *c)
{
	char b[160];
	int n;

	n = snprintf(b, sizeof(b), "{\"status\":\"%s\",\"version\":\"%s\","
	    "\"turns\":%u,\"queued\":%u}\n", got_term ? "draining" : "ok",
	    SKILLBOX_VERSION, s->turns, s->queued);
	return respond(s, c, 200, "application/json", b, (size_t)n, NULL);
}

struct skills_ctx {
	struct json_writer	*w;
	const char		*only;
	const char		*find;		/* each_model: look for this */
	int			 found;
	long long		 created;
};

/* 1 when name is a word of the space-separated list (NULL: all). */
static int
in_words(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	if (list == NULL)
		return 1;
	while ((p = strstr(p, name)) != NULL) {
		if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
			return 1;
		p += n;
	}
	return 0;
}

static int
each_skill(void *ctx, const struct skill *sk)
{
	struct skills_ctx *x = ctx;

	if ((sk->flags & SKILL_NO_MODEL) || !in_words(x->only, sk->name))
		return 0;
	json_begin_obj(x->w);
	json_kstr(x->w, "name", sk->name);
	json_kstr(x->w, "description", sk->description);
	json_end_obj(x->w);
	return 0;
}

/* Walk the skills the token may use with fn; 0 or -E_*. */
static int
walk_skills(struct srv *s, struct conn *c, struct skills_ctx *x,
    int (*fn)(void *, const struct skill *))
{
	struct skill_reg reg;
	int e;

	x->only = c->tok >= 0 ? s->only[c->tok] : NULL;
	x->created = s->started;
	if ((e = skill_reg_init(&reg, s->cfg->skills, s->cfg->nskills, NULL,
	    NULL)) == 0)
		e = skill_reg_each(&reg, fn, x);
	skill_reg_free(&reg);
	return e;
}

static int
ep_skills(struct srv *s, struct conn *c)
{
	struct skills_ctx x;
	struct json_writer w;
	struct sbuf sb;
	int e;

	memset(&x, 0, sizeof(x));
	sbuf_init(&sb, &c->a, 0);
	json_writer_init(&w, &sb);
	json_begin_obj(&w);
	json_key(&w, "skills");
	json_begin_arr(&w);
	x.w = &w;
	e = walk_skills(s, c, &x, each_skill);
	json_end_arr(&w);
	json_end_obj(&w);
	if (e != 0)
		return respond_err(s, c, 503, "server_error", "cannot list the "
		    "skills", NULL);
	return send_json(s, c, &sb);
}

#if HAVE_ORCH
/* A model entry (a skill's name is escaped: the lenient loader takes
 * names the format does not allow). */
static void
put_model(struct json_writer *w, const char *id, long long created)
{
	json_begin_obj(w);
	json_kstr(w, "id", id);
	json_kstr(w, "object", "model");
	json_key(w, "created");
	json_put_int(w, created);
	json_kstr(w, "owned_by", "skillbox");
	json_end_obj(w);
}

/* An orchestration skill the token may use is a model of its own. */
static int
each_model(void *ctx, const struct skill *sk)
{
	struct skills_ctx *x = ctx;

	if ((sk->flags & (SKILL_NO_MODEL | SKILL_OSKILL)) != SKILL_OSKILL ||
	    !in_words(x->only, sk->name))
		return 0;
	if (x->find != NULL)
		x->found |= strcmp(sk->name, x->find) == 0;
	else
		put_model(x->w, sk->name, x->created);
	return 0;
}

/* The entry agent a request names: NULL or "skillbox" is the default;
 * else an orchestration skill the token may use. 0, or -E_NOENT. */
static int
find_agent(struct srv *s, struct conn *c, const char *name)
{
	struct skills_ctx x;

	if (name == NULL || *name == '\0' || strcmp(name, "skillbox") == 0)
		return 0;
	memset(&x, 0, sizeof(x));
	x.find = name;
	return walk_skills(s, c, &x, each_model) == 0 && x.found ? 0 :
	    -E_NOENT;
}
#endif

#if HAVE_ORCH
static int
ep_models(struct srv *s, struct conn *c)
{
	struct skills_ctx x;
	struct json_writer w;
	struct sbuf sb;

	memset(&x, 0, sizeof(x));
	sbuf_init(&sb, &c->a, 0);
	json_writer_init(&w, &sb);
	json_begin_obj(&w);
	json_kstr(&w, "object", "list");
	json_key(&w, "data");
	json_begin_arr(&w);
	x.w = &w;
	put_model(&w, "skillbox", s->started);	/* the default entry agent */
	if (HAVE_ORCH && walk_skills(s, c, &x, each_model) < 0)
		return respond_err(s, c, 503, "server_error", "cannot list the "
		    "skills", NULL);
	json_end_arr(&w);
	json_end_obj(&w);
	return send_json(s, c, &sb);
}
#else
static int
ep_models(struct srv *s, struct conn *c)
{
	char b[192];
	int n;

	/* one model: this build has no orchestration skills */
	n = snprintf(b, sizeof(b), "{\"object\":\"list\",\"data\":[{\"id\":"
	    "\"skillbox\",\"object\":\"model\",\"created\":%lld,\"owned_by\":"
	    "\"skillbox\"}]}\n", s->started);
	return respond(s, c, 200, "application/json", b, (size_t)n, NULL);
}
#endif

static int
ep_sessions(struct srv *s, struct conn *c)
{
	struct slog_info *v;
	struct json_writer w;
	struct sbuf sb;
	unsigned n, i;
	size_t tl = c->tok >= 0 ? TAG_LEN + 1 : 0;
	int e;

	if ((e = slog_list(&c->a, s->cfg->state_dir, &v, &n)) != 0 &&
	    e != -E_NOENT)
		return respond_err(s, c, 503, "server_error", "cannot list the "
		    "sessions", NULL);
	if (e != 0)
		n = 0;
	sbuf_init(&sb, &c->a, 0);
	json_writer_init(&w, &sb);
	json_begin_obj(&w);
	json_key(&w, "sessions");
	json_begin_arr(&w);
	for (i = 0; i < n; i++) {
		if (tl > 0 && (strncmp(v[i].name, s->tag[c->tok], TAG_LEN) !=
		    0 || v[i].name[TAG_LEN] != '.'))
			continue;
		json_begin_obj(&w);
		json_kstr(&w, "name", v[i].name + tl);
		json_key(&w, "size");
		json_put_int(&w, v[i].size);
		json_key(&w, "mtime");
		json_put_int(&w, v[i].mtime);
		json_end_obj(&w);
	}
	json_end_arr(&w);
	json_end_obj(&w);
	return send_json(s, c, &sb);
}

/* The value of a query parameter, or NULL. */
static const char *
query(struct conn *c, const char *key)
{
	const char *q = strchr(c->h.target, '?'), *p, *e;
	size_t k = strlen(key);

	for (p = q; p != NULL; p = strchr(p + 1, '&')) {
		if (strncmp(p + 1, key, k) == 0 && p[1 + k] == '=') {
			e = strchr(p + 2 + k, '&');
			return arena_strndup(&c->a, p + 2 + k, e ? (size_t)(e -
			    (p + 2 + k)) : strlen(p + 2 + k));
		}
	}
	return NULL;
}

static int
ep_session(struct srv *s, struct conn *c, const char *name)
{
	const char *stored = stored_name(s, c, name), *from;
	struct slog lg;
	long long off = 0;
	char prev, *end;
	int e;

	if (stored == NULL)
		return respond_err(s, c, 404, "not_found", "no such session",
		    NULL);
	if (strcmp(c->h.method, "DELETE") == 0) {
		if ((e = slog_open(&lg, &c->a, s->cfg->state_dir, stored,
		    SLOG_APPEND)) == 0) {
			slog_close(&lg);
			e = slog_remove(&c->a, s->cfg->state_dir, stored);
		}
		if (e == -E_BUSY)
			return respond_err(s, c, 409, "conflict", "a turn of "
			    "this session is running", NULL);
		if (e != 0)
			return respond_err(s, c, 404, "not_found", "no such "
			    "session", NULL);
		return respond(s, c, 204, NULL, "", 0, NULL);
	}
	if ((from = query(c, "from")) == NULL)
		from = http_header(&c->h, "Last-Event-ID");
	if (from != NULL) {
		errno = 0;
		off = strtoll(from, &end, 10);
		if (errno != 0 || end == from || *end != '\0' || off < 0)
			return respond_err(s, c, 400, "invalid_request_error",
			    "'from' must be a log offset", NULL);
	}
	if ((e = slog_open(&lg, &c->a, s->cfg->state_dir, stored,
	    SLOG_READ)) != 0)
		return respond_err(s, c, 404, "not_found", "no such session",
		    NULL);
	/* An offset must be the start of an event: 0, or after a newline. */
	if (off > 0 && (off > lg.off || pread(lg.fd, &prev, 1, off - 1) != 1 ||
	    prev != '\n')) {
		slog_close(&lg);
		return respond_err(s, c, 400, "invalid_request_error", "that "
		    "offset is not the start of an event", NULL);
	}
	if (lseek(lg.fd, off, SEEK_SET) < 0 || out_head(c, 200,
	    "application/x-ndjson", -1, NULL) != 0) {
		slog_close(&lg);
		return -E_NOMEM;
	}
	c->kind = K_FILE;
	c->headed = 1;
	if (c->head) {		/* the head alone: no chunks, not even the last */
		slog_close(&lg);
		c->st = C_WRITE;
		return 0;
	}
	c->src = lg.fd;		/* the connection closes it */
	c->st = C_RELAY;
	return 0;
}

/* The page is kept gzip-compressed: every browser takes it so. */
static int
ep_page(struct srv *s, struct conn *c)
{
	static const char no[] = "the page is sent gzip-compressed: ask "
	    "with Accept-Encoding: gzip\n";
	const char *ae = http_header(&c->h, "Accept-Encoding");

	if (ae == NULL || strstr(ae, "gzip") == NULL)
		return respond(s, c, 406, "text/plain", no, sizeof(no) - 1,
		    NULL);
	return respond(s, c, 200, "text/html; charset=utf-8",
	    (const char *)web_index_gz, WEB_INDEX_GZ_LEN,
	    "Content-Encoding: gzip\r\nVary: Accept-Encoding\r\n"
	    "Content-Security-Policy: default-src 'self'; script-src "
	    "'unsafe-inline'; style-src 'unsafe-inline'\r\n");
}

/* --- turns */

/* Text of an OpenAI message content: a string, or the text parts of an
 * array joined by newlines. */
static int
content_text(struct conn *c, const struct json_doc *d, int t, char **out,
    size_t *n)
{
	struct sbuf sb;
	unsigned i;
	int p;
	char *s;
	size_t k;

	if (t < 0)
		return -E_INVAL;
	if (d->t[t].type == JSON_STR)
		return json_str(d, &c->a, t, out, n);
	if (d->t[t].type != JSON_ARR)
		return -E_INVAL;
	sbuf_init(&sb, &c->a, 0);
	for (i = 0; (p = json_at(d, t, i)) >= 0; i++) {
		if (!json_eq(d, json_get(d, p, "type"), "text"))
			continue;	/* images, files: not for this agent */
		if (json_str(d, &c->a, json_get(d, p, "text"), &s, &k) != 0)
			return -E_INVAL;
		if (sb.len > 0)
			sbuf_addc(&sb, '\n');
		sbuf_add(&sb, s, k);
	}
	sbuf_addc(&sb, '\0');
	if (sb.err)
		return sb.err;
	*out = sb.p;
	*n = sb.len - 1;
	return 0;
}

/* A session name from the OpenAI `user` field: itself when it is a valid
 * name, else "u-" and 16 hex digits of its hash. */
static const char *
user_session(struct conn *c, const char *user)
{
	unsigned char d[32];
	char hex[65];
	struct sha256 h;

	if (slog_name_ok(user) && strlen(user) <= SLOG_NAME_MAX - TAG_LEN - 1)
		return user;
	sha256_init(&h);
	sha256_feed(&h, user, strlen(user));
	sha256_final(&h, d);
	sha256_hex(d, hex);
	return arena_printf(&c->a, "u-%.16s", hex);
}

/* Parse a turn request into c->tr; 0, or an error response was made. */
static int
parse_turn(struct srv *s, struct conn *c, int oai, int *bad)
{
	struct json_doc d;
	struct turnreq *tr = &c->tr;
	const char *acc = http_header(&c->h, "Accept");
	char *str = NULL, *role;
	size_t n;
	int t, m, i, last = -1, stream = 0;

	*bad = 1;
	if (json_parse(&c->a, c->body ? c->body : "", c->body_len, REQ_TOKENS,
	    &d) != 0 || d.n == 0 || d.t[0].type != JSON_OBJ)
		return respond_err(s, c, 400, "invalid_request_error", "the "
		    "body must be a JSON object", NULL);
	if (!oai) {
		t = json_get(&d, 0, "approve");
		if (t >= 0 && tr->path_session != NULL) {
			if (json_bool(&d, t, &tr->approve) != 0)
				return respond_err(s, c, 400,
				    "invalid_request_error", "'approve' must be "
				    "true or false", NULL);
			tr->decide = 1;
			if (json_str(&d, &c->a, json_get(&d, 0, "reason"),
			    &tr->reason, NULL) != 0)
				tr->reason = NULL;
			str = "";
			n = 0;
		} else if (json_str(&d, &c->a, json_get(&d, 0, "input"), &str,
		    &n) != 0 || n == 0)
			return respond_err(s, c, 400, "invalid_request_error",
			    "'input' must be a non-empty string", NULL);
		tr->input = str;
		tr->inlen = n;
		t = json_get(&d, 0, "session");
		if (tr->path_session != NULL)
			t = -1, str = (char *)tr->path_session;
		if (t >= 0 && !json_is_null(&d, t) && json_str(&d, &c->a, t,
		    &str, NULL) != 0)
			return respond_err(s, c, 400, "invalid_request_error",
			    "'session' must be a string", NULL);
		if ((t < 0 || json_is_null(&d, t)) && tr->path_session == NULL) {
			unsigned char rnd[6];
			char hex[13];
			unsigned k;

			if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) !=
			    (ssize_t)sizeof(rnd))
				return respond_err(s, c, 503, "server_error",
				    "no random bytes", NULL);
			for (k = 0; k < sizeof(rnd); k++)
				snprintf(hex + 2 * k, 3, "%02x", rnd[k]);
			str = arena_printf(&c->a, "web-%s", hex);
		}
		tr->shown = str;
#if HAVE_ORCH
		if ((t = json_get(&d, 0, "agent")) >= 0 &&
		    !json_is_null(&d, t) && json_str(&d, &c->a, t, &str,
		    NULL) != 0)
			return respond_err(s, c, 400, "invalid_request_error",
			    "'agent' must be a string", NULL);
		tr->agent = t >= 0 && !json_is_null(&d, t) ? str : NULL;
#endif
		c->kind = acc != NULL && strstr(acc, "application/json") &&
		    !strstr(acc, "text/event-stream") ? K_RUN_JSON : K_RUN_SSE;
	} else {
		if ((t = json_get(&d, 0, "stream")) >= 0 &&
		    !json_is_null(&d, t) && json_bool(&d, t, &stream) != 0)
			return respond_err(s, c, 400, "invalid_request_error",
			    "'stream' must be true or false", NULL);
		c->kind = stream ? K_OAI_SSE : K_OAI_JSON;
		t = json_get(&d, 0, "stream_options");
		if (t >= 0 && d.t[t].type == JSON_OBJ)
			(void)json_bool(&d, json_get(&d, t, "include_usage"),
			    &tr->include_usage);
		if (json_str(&d, &c->a, json_get(&d, 0, "model"), &str, NULL)
		    == 0)
			tr->model = tr->agent = str;
		m = json_get(&d, 0, "messages");
		if (m < 0 || d.t[m].type != JSON_ARR || d.t[m].size == 0)
			return respond_err(s, c, 400, "invalid_request_error",
			    "'messages' must be a non-empty array", NULL);
		tr->seed = arena_zalloc(&c->a, (size_t)d.t[m].size *
		    sizeof(*tr->seed));
		if (tr->seed == NULL)
			return respond_err(s, c, 503, "server_error", "out of "
			    "memory in the server", NULL);
		for (i = 0; (t = json_at(&d, m, (unsigned)i)) >= 0; i++) {
			if (json_str(&d, &c->a, json_get(&d, t, "role"),
			    &role, NULL) != 0)
				return respond_err(s, c, 400,
				    "invalid_request_error", "each message "
				    "needs a 'role'", NULL);
			if (strcmp(role, "user") != 0 && strcmp(role,
			    "assistant") != 0)
				continue;	/* system, tool: ours rule */
			if (content_text(c, &d, json_get(&d, t, "content"),
			    &str, &n) != 0) {
				if (strcmp(role, "assistant") == 0)
					continue;	/* only tool calls */
				return respond_err(s, c, 400,
				    "invalid_request_error", "a user message "
				    "needs 'content': a string or text parts",
				    NULL);
			}
			tr->seed[tr->nseed].role = role[0] == 'u' ? LLM_USER :
			    LLM_ASSISTANT;
			tr->seed[tr->nseed].s = str;
			tr->seed[tr->nseed].n = n;
			if (role[0] == 'u')
				last = (int)tr->nseed;
			tr->nseed++;
		}
		if (last < 0 || tr->seed[last].n == 0)
			return respond_err(s, c, 400, "invalid_request_error",
			    "no user message with text", NULL);
		tr->input = tr->seed[last].s;
		tr->inlen = tr->seed[last].n;
		tr->nseed = (unsigned)last;	/* what came before it */
		str = NULL;
		if ((t = json_get(&d, 0, "user")) >= 0 &&
		    json_str(&d, &c->a, t, &str, &n) == 0 && n > 0) {
			tr->shown = user_session(c, str);
			tr->nseed = 0;	/* the session holds the history */
		}
	}
#if HAVE_ORCH
	if (find_agent(s, c, tr->agent) != 0)
		return respond_err(s, c, 404, oai ? "invalid_request_error" :
		    "not_found", oai ? "no such model: GET /v1/models lists "
		    "them" : "no such agent: GET /v1/models lists them", NULL);
	if (tr->agent != NULL && strcmp(tr->agent, "skillbox") == 0)
		tr->agent = NULL;
#endif
	if (tr->shown != NULL &&
	    (tr->session = stored_name(s, c, tr->shown)) == NULL)
		return respond_err(s, c, 400, "invalid_request_error", "bad "
		    "session name: 1-55 letters, digits, '.', '_' or '-', not "
		    "starting with '.'", NULL);
	*bad = 0;
	return 0;
}

/* The worker's side: events into the pipe, in the request's format. */
struct wctx {
	int		 fd;
	int		 dead;
	enum kind	 kind;
	const struct turnreq *tr;
	const char	*id;
	long long	 created;
	int		 streamed;	/* entry text sent (OpenAI stream) */
	struct arena	*a;
};

static void
w_write(struct wctx *w, const char *p, size_t n)
{
	ssize_t k;

	while (!w->dead && n > 0) {
		k = write(w->fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			w->dead = 1;	/* the server is gone; the turn goes on */
			return;
		}
		p += k;
		n -= (size_t)k;
	}
}

static void
w_printf(struct wctx *w, const char *fmt, ...) ATTR_PRINTF(2, 3);

static void
w_printf(struct wctx *w, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		w_write(w, buf, MIN((size_t)n, sizeof(buf) - 1));
}

/* An OpenAI chunk with a content delta (role on the first), or the
 * closing one with finish_reason. */
static void
w_oai_chunk(struct wctx *w, const char *text, size_t n, const char *finish)
{
	struct arena_mark m = arena_mark(w->a);
	struct json_writer j;
	struct sbuf sb;

	sbuf_init(&sb, w->a, 0);
	json_writer_init(&j, &sb);
	json_begin_obj(&j);
	json_kstr(&j, "id", w->id);
	json_kstr(&j, "object", "chat.completion.chunk");
	json_key(&j, "created");
	json_put_int(&j, w->created);
	json_kstr(&j, "model", w->tr->model ? w->tr->model : "skillbox");
	json_key(&j, "choices");
	json_begin_arr(&j);
	json_begin_obj(&j);
	json_key(&j, "index");
	json_put_uint(&j, 0);
	json_key(&j, "delta");
	json_begin_obj(&j);
	if (text != NULL) {
		if (!w->streamed) {
			json_kstr(&j, "role", "assistant");
		}
		json_key(&j, "content");
		json_put_strn(&j, text, n);
	}
	json_end_obj(&j);
	json_key(&j, "finish_reason");
	if (finish != NULL)
		json_put_str(&j, finish);
	else
		json_put_null(&j);
	json_end_obj(&j);
	json_end_arr(&j);
	json_end_obj(&j);
	if (!sb.err) {
		w_write(w, "data: ", 6);
		w_write(w, sb.p, sb.len);
		w_write(w, "\n\n", 2);
	}
	if (text != NULL)
		w->streamed = 1;
	arena_reset_to(w->a, m);
}

static void
w_event(void *ctx, const struct agent_event *e)
{
	struct wctx *w = ctx;

	if (w->kind == K_RUN_SSE) {
		if (e->off >= 0)
			w_printf(w, "id: %lld\n", e->off);
		w_printf(w, "event: %s\ndata: ", e->type);
		w_write(w, e->json, e->n);
		w_write(w, "\n\n", 2);
	} else if (w->kind == K_OAI_SSE && strcmp(e->type, "text") == 0 &&
	    e->agent != NULL && strcmp(e->agent, "entry") == 0 && e->len > 0)
		w_oai_chunk(w, e->text, e->len, NULL);
}

/* The JSON of an error, OpenAI's shape. */
static void
w_error_json(struct wctx *w, struct sbuf *sb, const char *msg)
{
	struct json_writer j;

	(void)w;
	json_writer_init(&j, sb);
	json_begin_obj(&j);
	json_key(&j, "error");
	json_begin_obj(&j);
	json_kstr(&j, "message", msg);
	json_kstr(&j, "type", "server_error");
	json_end_obj(&j);
	json_end_obj(&j);
}

static const char *const status_names[] = { "ok", "failed", "limit",
    "memory", "exit", "waiting" };

/* The reply of a turn that was not streamed. */
static void
w_reply(struct wctx *w, struct agent *ag, enum agent_status st,
    const char *final, unsigned long in, unsigned long out)
{
	struct json_writer j;
	struct sbuf sb;
	int ok = st == AG_OK || st == AG_EXIT || st == AG_WAIT;

	sbuf_init(&sb, w->a, 0);
	if (!ok && (final == NULL || *final == '\0'))
		final = st == AG_NOMEM ? "the turn's memory budget ran out "
		    "(serve.turn_memory, or memory)" : st == AG_LIMIT ?
		    "a limit of the turn was reached (limits)" :
		    "the turn failed";
	if (!ok && w->kind == K_OAI_JSON) {
		w_error_json(w, &sb, final);
	} else {
		json_writer_init(&j, &sb);
		json_begin_obj(&j);
		if (w->kind == K_OAI_JSON) {
			json_kstr(&j, "id", w->id);
			json_kstr(&j, "object", "chat.completion");
			json_key(&j, "created");
			json_put_int(&j, w->created);
			json_kstr(&j, "model", w->tr->model ? w->tr->model :
			    "skillbox");
			json_key(&j, "choices");
			json_begin_arr(&j);
			json_begin_obj(&j);
			json_key(&j, "index");
			json_put_uint(&j, 0);
			json_key(&j, "message");
			json_begin_obj(&j);
			json_kstr(&j, "role", "assistant");
			json_kstr(&j, "content", final ? final : "");
			json_end_obj(&j);
			json_kstr(&j, "finish_reason", "stop");
			json_end_obj(&j);
			json_end_arr(&j);
		} else {
			json_kstr(&j, "session", w->tr->shown);
			json_kstr(&j, "status", status_names[st]);
			json_key(&j, st == AG_WAIT ? "question" : ok ?
			    "answer" : "error");
			json_put_str(&j, final ? final : "");
			if (st == AG_WAIT && agent_approval(ag)) {
				json_key(&j, "approval");
				json_put_bool(&j, 1);
			}
		}
		json_key(&j, "usage");
		json_begin_obj(&j);
		json_key(&j, w->kind == K_OAI_JSON ? "prompt_tokens" :
		    "input_tokens");
		json_put_uint(&j, in);
		json_key(&j, w->kind == K_OAI_JSON ? "completion_tokens" :
		    "output_tokens");
		json_put_uint(&j, out);
		json_key(&j, "total_tokens");
		json_put_uint(&j, in + out);
		json_end_obj(&j);
		json_end_obj(&j);
	}
	sbuf_addc(&sb, '\n');
	w_printf(w, "%d application/json %s\n", ok ? 200 : 500,
	    w->tr->shown ? w->tr->shown : "-");
	if (!sb.err)
		w_write(w, sb.p, sb.len);
	(void)ag;
}

/* The end of a streamed OpenAI turn. */
static void
w_oai_end(struct wctx *w, enum agent_status st, const char *final,
    unsigned long in, unsigned long out)
{
	struct sbuf sb;

	if (st != AG_OK && st != AG_EXIT && st != AG_WAIT) {
		sbuf_init(&sb, w->a, 0);
		w_error_json(w, &sb, final);
		if (!sb.err) {
			w_write(w, "data: ", 6);
			w_write(w, sb.p, sb.len);
			w_write(w, "\n\n", 2);
		}
		return;
	}
	if (!w->streamed)
		w_oai_chunk(w, final ? final : "", final ? strlen(final) : 0,
		    NULL);
	w_oai_chunk(w, NULL, 0, "stop");
	if (w->tr->include_usage)
		w_printf(w, "data: {\"id\":\"%s\",\"object\":\"chat.completion."
		    "chunk\",\"created\":%lld,\"choices\":[],\"usage\":{"
		    "\"prompt_tokens\":%lu,\"completion_tokens\":%lu,"
		    "\"total_tokens\":%lu}}\n\n", w->id, w->created, in, out,
		    in + out);
	w_write(w, "data: [DONE]\n\n", 14);
}

/* In a forked child (a turn's worker, the jobs dispatcher): signals at
 * their defaults, none of the server's sockets and pipes, and no TLS
 * session keys or server key left in memory. */
static void
child_detach(struct srv *s)
{
	unsigned i;

	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	if (s->lfd >= 0)
		close(s->lfd);
	for (i = 0; i < s->nc; i++) {
		if (s->c[i].fd >= 0)
			close(s->c[i].fd);
		if (s->c[i].src >= 0)
			close(s->c[i].src);
#if HAVE_SERVE_TLS
		if (s->c[i].tls != NULL)
			explicit_bzero(s->c[i].tls, tls_srv_size());
#endif
	}
#if HAVE_SERVE_TLS
	if (s->cred != NULL)
		tls_cred_wipe(s->cred);
#endif
}

static void ATTR_NORETURN
worker(struct srv *s, struct conn *c, int wfd)
{
	struct turnreq *tr = &c->tr;
	struct agent_opts o;
	struct agent *ag;
	struct wctx w;
	enum agent_status st;
	unsigned long in0 = 0, out0 = 0, in1 = 0, out1 = 0;
	const char *final = NULL;
	double cost;
	char why[320], id[40];
	unsigned i;
	int e;

	child_detach(s);
	mem_set_limit(mem_used() + s->slice);
	memset(&w, 0, sizeof(w));
	w.fd = wfd;
	w.kind = (enum kind)c->kind;
	w.tr = tr;
	w.a = &c->a;
	w.created = time(NULL);
	snprintf(id, sizeof(id), "chatcmpl-%lld%u", w.created,
	    (unsigned)getpid());
	w.id = id;
	memset(&o, 0, sizeof(o));
	o.session = tr->session;
	o.ephemeral = tr->session == NULL;
	o.resume = tr->answer;
	o.stream = 1;
	o.only = c->tok >= 0 ? s->only[c->tok] : NULL;
	o.on_event = w_event;
	o.ctx = &w;
	if ((ag = agent_new(&app.perm, s->cfg, &o, &e, why,
	    sizeof(why))) == NULL) {
		struct sbuf sb;

		sbuf_init(&sb, &c->a, 0);
		w_error_json(&w, &sb, e == -E_NOMEM ? "the turn's memory "
		    "budget ran out while starting" : why);
		sbuf_addc(&sb, '\n');
		w_printf(&w, "%d application/json -\n", e == -E_BUSY ? 409 :
		    e == -E_INVAL ? 400 : 500);
		w_write(&w, sb.p, sb.len);
		_exit(0);
	}
	if (tr->answer && (agent_question(ag) == NULL || tr->decide !=
	    agent_approval(ag))) {
		struct sbuf sb;

		sbuf_init(&sb, &c->a, 0);
		w_error_json(&w, &sb, agent_question(ag) == NULL ? "the session "
		    "waits on no question" : tr->decide ? "the session waits on "
		    "an answer (input)" : "the session waits on an approval "
		    "(approve)");
		sbuf_addc(&sb, '\n');
		w_printf(&w, "409 application/json -\n");
		w_write(&w, sb.p, sb.len);
		agent_close(ag);
		_exit(0);
	}
	/* An OpenAI client answers a question with its next message. */
	if ((c->kind == K_OAI_SSE || c->kind == K_OAI_JSON) &&
	    agent_question(ag) != NULL)
		tr->answer = 1;
	for (i = 0; i < tr->nseed && !tr->answer; i++)
		if (agent_seed(ag, tr->seed[i].role, tr->seed[i].s,
		    tr->seed[i].n) != 0)
			break;
	if (c->kind == K_RUN_SSE || c->kind == K_OAI_SSE)
		w_printf(&w, "200 text/event-stream %s\n", tr->shown ?
		    tr->shown : "-");
#if HAVE_ORCH
	agent_entry(ag, tr->agent, 0);
#endif
	agent_usage(ag, &in0, &out0, &cost);
	st = tr->decide ? agent_decide(ag, tr->approve, tr->reason, &final) :
	    tr->answer ? cmd_agent_reply(ag, tr->input, tr->inlen,
	    &final) : agent_turn(ag, tr->input, tr->inlen, &final);
	agent_usage(ag, &in1, &out1, &cost);
	if (c->kind == K_RUN_SSE)
		w_printf(&w, "event: done\ndata: {\"session\":\"%s\","
		    "\"status\":\"%s\"}\n\n", tr->shown ? tr->shown : "",
		    status_names[st]);
	else if (c->kind == K_OAI_SSE)
		w_oai_end(&w, st, final, in1 - in0, out1 - out0);
	else
		w_reply(&w, ag, st, final, in1 - in0, out1 - out0);
	agent_close(ag);
	_exit(0);
}

/* Fork the turn's worker; the connection relays its pipe. */
static int
start_turn(struct srv *s, struct conn *c)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) != 0)
		return respond_err(s, c, 503, "server_error", "cannot start "
		    "a worker: out of file descriptors",
		    "Retry-After: " RETRY_AFTER "\r\n");
	if ((pid = fork()) < 0) {
		close(p[0]);
		close(p[1]);
		return respond_err(s, c, 503, "server_error", "cannot start "
		    "a worker: fork failed", "Retry-After: " RETRY_AFTER
		    "\r\n");
	}
	if (pid == 0) {
		close(p[0]);
		worker(s, c, p[1]);
	}
	close(p[1]);
	c->pid = pid;
	c->src = p[0];
	c->st = C_RELAY;
	c->ran = 1;
	s->turns++;
	return 0;
}

/* Start queued turns while there is room, oldest first. */
static void
run_queue(struct srv *s)
{
	struct conn *best;
	unsigned i;

	while (s->queued > 0 && s->turns < s->cfg->serve.max_turns) {
		best = NULL;
		for (i = 0; i < s->nc; i++)
			if (s->c[i].st == C_QUEUED && (best == NULL ||
			    s->c[i].seq < best->seq))
				best = &s->c[i];
		if (best == NULL)
			break;
		s->queued--;
		(void)start_turn(s, best);
	}
}

static int
ep_turn(struct srv *s, struct conn *c, int oai)
{
	int bad;

	if (parse_turn(s, c, oai, &bad) != 0 || bad)
		return 0;
	if (got_term)
		return respond_err(s, c, 503, "server_error", "the server is "
		    "stopping", NULL);
	if (s->turns < s->cfg->serve.max_turns)
		return start_turn(s, c);
	if (s->queued >= s->cfg->serve.queue) {
		c->close = 1;
		return respond_err(s, c, 503, "server_error", "busy: every "
		    "turn slot and the queue are full", "Retry-After: "
		    RETRY_AFTER "\r\n");
	}
	c->st = C_QUEUED;
	c->seq = s->seq++;
	s->queued++;
	return 0;
}

#if HAVE_JOBS
/* --- the job board */

#define JOBS_STREAMS	8	/* clients of /api/v1/jobs/events at once */
#define JOBS_BEAT_MS	15000	/* a comment line this often keeps proxies */

/* The board, opened, locked and loaded for this request alone (a
 * SIGHUP's state_dir holds at once, and the board's memory is given back
 * after); NULL when it cannot be (a 503 was made). */
static struct board *
jb_open(struct srv *s, struct conn *c, struct board *b)
{
	const char *dir = arena_printf(&c->a, "%s/jobs", s->cfg->state_dir);

	if (dir != NULL && board_open(b, dir, s->cfg->jobs.compact_at) == 0) {
		if (board_lock(b) == 0)
			return b;
		board_close(b);
	}
	(void)respond_err(s, c, 503, "server_error", "cannot open the job "
	    "board", NULL);
	return NULL;
}

static void
jb_close(struct board *b)
{
	board_unlock(b);
	board_close(b);
}

/* Reply with job id as job_json gives it (status st), and close b. */
static int
jb_reply(struct srv *s, struct conn *c, struct board *b, unsigned id, int st)
{
	const struct job *j = board_job(b, id);
	struct sbuf sb;

	sbuf_init(&sb, &c->a, 0);
	if (j != NULL)
		job_json(&sb, j, b);
	sbuf_addc(&sb, '\n');
	jb_close(b);
	if (j == NULL)
		return respond_err(s, c, 404, "not_found", "no such job", NULL);
	if (sb.err)
		return respond_err(s, c, 503, "server_error", "out of memory "
		    "in the server", "Retry-After: " RETRY_AFTER "\r\n");
	return respond(s, c, st, "application/json", sb.p, sb.len, NULL);
}

static int
jb_bad(struct srv *s, struct conn *c, const char *msg)
{
	return respond_err(s, c, 400, "invalid_request_error", msg, NULL);
}

/* GET /api/v1/jobs[?status=NAME]: archived (cancelled) jobs only when
 * asked for by status. */
static int
jb_list(struct srv *s, struct conn *c)
{
	const char *want = query(c, "status"), *name;
	struct board b;
	struct sbuf sb;
	unsigned i, k = 0;

	for (i = JOB_TODO; want != NULL && i <= JOB_ARCHIVED; i++)
		if (strcmp(job_status_name((enum job_status)i), want) == 0)
			break;
	if (i > JOB_ARCHIVED)
		return jb_bad(s, c, "'status' must be todo, ready, running, "
		    "blocked, done, failed or archived");
	if (jb_open(s, c, &b) == NULL)
		return 0;
	sbuf_init(&sb, &c->a, 0);
	sbuf_addc(&sb, '[');
	for (i = 0; i < b.njobs; i++) {
		name = job_status_name(job_status(&b, b.jobs[i]));
		if (want != NULL ? strcmp(name, want) != 0 :
		    b.jobs[i]->st == JOB_ARCHIVED)
			continue;
		if (k++ > 0)
			sbuf_addc(&sb, ',');
		job_json(&sb, b.jobs[i], &b);
	}
	sbuf_addc(&sb, ']');
	jb_close(&b);
	return send_json(s, c, &sb);
}

/* A field of the body that is a string when there; 0, or -1 when it is
 * something else. */
static int
jb_str(struct conn *c, const struct json_doc *d, const char *key,
    const char **out)
{
	int t = json_get(d, 0, key);
	char *v;

	if (t < 0 || json_is_null(d, t))
		return 0;
	if (json_str(d, &c->a, t, &v, NULL) != 0)
		return -1;
	*out = v;
	return 0;
}

/* A whole number field up to max when there; 0, or -1. */
static int
jb_num(const struct json_doc *d, const char *key, long long max, long *out)
{
	int t = json_get(d, 0, key);
	long long v;

	if (t < 0 || json_is_null(d, t))
		return 0;
	if (json_int(d, t, &v) != 0 || v < 0 || v > max)
		return -1;
	*out = (long)v;
	return 0;
}

/* The job a POST /api/v1/jobs body describes, into j; NULL, or what is
 * wrong with it. The fields and checks of `skillbox jobs add`. */
static const char *
jb_parse(struct conn *c, const struct json_doc *d, struct job *j)
{
	const char *raw;
	long tries = 0;
	long long v;
	double m;
	size_t n;
	int t, p, i;

	if (jb_str(c, d, "title", &j->title) != 0 || j->title == NULL ||
	    *j->title == '\0')
		return "'title' must be a non-empty string";
	j->input = j->title;
	if (jb_str(c, d, "input", &j->input) != 0)
		return "'input' must be a string";
	if (jb_str(c, d, "to", &j->to) != 0)
		return "'to' must be a string (an agent's name)";
	/* schema: JSON, or a string of JSON as --schema takes it */
	t = json_get(d, 0, "schema");
	if (t >= 0 && !json_is_null(d, t) && jb_str(c, d, "schema",
	    &j->schema) != 0) {
		raw = json_raw(d, t, &n);
		if (d->t[t].type != JSON_OBJ || (j->schema = arena_strndup(&c->a,
		    raw, n)) == NULL)
			return "'schema' must be a JSON-Schema object";
	}
	t = json_get(d, 0, "budget");
	if (t >= 0 && !json_is_null(d, t) && jb_str(c, d, "budget",
	    &j->budget) != 0 && d->t[t].type == JSON_PRIM) {
		raw = json_raw(d, t, &n);
		j->budget = arena_strndup(&c->a, raw, n);
	}
	if (j->budget != NULL && str_decimal(j->budget, &m) != 0)
		return "'budget' must be a decimal (money)";
	if (jb_num(d, "tries", 1L << 30, &tries) != 0)
		return "'tries' must be a whole number";
	j->max_tries = (unsigned)tries;
	if (jb_num(d, "timeout", 1L << 30, &j->timeout) != 0)
		return "'timeout' must be a whole number of seconds";
	if (jb_num(d, "backoff", 1L << 30, &j->backoff) != 0)
		return "'backoff' must be a whole number of seconds";
	p = json_get(d, 0, "parents");
	if (p >= 0 && !json_is_null(d, p) && (d->t[p].type != JSON_ARR ||
	    d->t[p].size > JOB_MAX_PARENTS))
		return "'parents' must be an array of at most 16 job ids";
	for (i = 0; p >= 0 && (t = json_at(d, p, (unsigned)i)) >= 0; i++) {
		if (json_int(d, t, &v) != 0 || v <= 0 || v > 1L << 30)
			return "'parents' must be an array of job ids";
		j->parents[j->nparents++] = (unsigned)v;
	}
	return NULL;
}

/* POST /api/v1/jobs */
static int
jb_add(struct srv *s, struct conn *c)
{
	struct json_doc d;
	struct board b;
	struct job j;
	const char *why;
	int e;

	if (json_parse(&c->a, c->body ? c->body : "", c->body_len, REQ_TOKENS,
	    &d) != 0 || d.n == 0 || d.t[0].type != JSON_OBJ)
		return jb_bad(s, c, "the body must be a JSON object");
	memset(&j, 0, sizeof(j));
	j.to = "";
	j.backoff = -1;
	if ((why = jb_parse(c, &d, &j)) != NULL)
		return jb_bad(s, c, why);
	j.made = time(NULL);
	if (jb_open(s, c, &b) == NULL)
		return 0;
	if ((e = board_add(&b, &j, s->cfg->jobs.retries + 1,
	    s->cfg->jobs.backoff_s)) != 0) {
		jb_close(&b);
		if (e == -E_PARSE || e == -E_INVAL)
			return jb_bad(s, c, e == -E_PARSE ? "'schema' is not "
			    "JSON" : "'parents' names a job that does not "
			    "exist, or one twice");
		return respond_err(s, c, 503, "server_error", "cannot write "
		    "the job board", NULL);
	}
	return jb_reply(s, c, &b, j.id, 201);
}

/* POST /api/v1/jobs/ID/KIND {"text": "..."} (the body optional, but for
 * a comment): as `skillbox jobs KIND ID TEXT`. */
static int
jb_change(struct srv *s, struct conn *c, unsigned id, const char *kind)
{
	struct json_doc d;
	struct board b;
	const char *text = NULL;
	int e;

	if (c->body_len > 0 && (json_parse(&c->a, c->body, c->body_len,
	    REQ_TOKENS, &d) != 0 || d.n == 0 || d.t[0].type != JSON_OBJ ||
	    jb_str(c, &d, "text", &text) != 0))
		return jb_bad(s, c, "the body must be a JSON object with "
		    "'text' a string");
	if (strcmp(kind, "comment") == 0 && (text == NULL || *text == '\0'))
		return jb_bad(s, c, "a comment needs 'text'");
	if (jb_open(s, c, &b) == NULL)
		return 0;
	if ((e = board_change(&b, id, kind, text, time(NULL))) == 0)
		return jb_reply(s, c, &b, id, 200);
	if (e == -E_DENIED)
		text = arena_printf(&c->a, "job %u is %s", id,
		    job_status_name(board_job(&b, id)->st));
	if (e == -E_BUSY)	/* a paused turn's: its answer endpoint */
		text = arena_printf(&c->a, "job %u waits on a person: POST "
		    "/api/v1/sessions/job-%u/answer", id, id);
	jb_close(&b);
	if (e == -E_NOENT)
		return respond_err(s, c, 404, "not_found", "no such job", NULL);
	if (e == -E_DENIED || e == -E_BUSY)
		return respond_err(s, c, 409, "conflict", text ? text :
		    "not now", NULL);
	return respond_err(s, c, 503, "server_error", "cannot write the job "
	    "board", NULL);
}

/* GET /api/v1/jobs/events[?from=OFFSET]: the journal's lines as they
 * come (jb_feed), from the start or OFFSET (Last-Event-ID too). */
static int
jb_events(struct srv *s, struct conn *c)
{
	const char *from = query(c, "from");
	long long off = 0;
	unsigned i, n = 0;
	char *end;

	if (from == NULL)
		from = http_header(&c->h, "Last-Event-ID");
	if (from != NULL) {
		errno = 0;
		off = strtoll(from, &end, 10);
		if (errno != 0 || end == from || *end != '\0' || off < 0)
			return jb_bad(s, c, "'from' must be a journal offset");
	}
	for (i = 0; i < s->nc; i++)
		n += s->c[i].st == C_RELAY && s->c[i].kind == K_JOBS;
	if (n >= JOBS_STREAMS)
		return respond_err(s, c, 503, "server_error", "too many "
		    "streams of the job board", "Retry-After: " RETRY_AFTER
		    "\r\n");
	if (out_head(c, 200, "text/event-stream", -1, NULL) != 0)
		return -E_NOMEM;
	c->kind = K_JOBS;
	c->headed = 1;
	c->st = c->head ? C_WRITE : C_RELAY;
	c->joff = off;
	c->jino = 0;
	c->jmore = 1;		/* the first lines at once */
	c->jbeat = net_now_ms();
	return 0;
}

/* The event of the line from c->joff to end (its newline's end): from
 * buf when it holds it (held), else read again in pieces. */
static void
jb_event(struct conn *c, int fd, char *buf, int held, long long end)
{
	long long p;
	ssize_t k;
	char id[40];

	snprintf(id, sizeof(id), "id: %lld\ndata: ", end);
	(void)out_chunk(c, id, strlen(id));
	if (held)
		(void)out_chunk(c, buf, (size_t)(end - 1 - c->joff));
	for (p = c->joff; !held && p < end - 1; p += k)
		if ((k = pread(fd, buf, (size_t)MIN(end - 1 - p,
		    (long long)RELAY_BUF), p)) <= 0 ||
		    out_chunk(c, buf, (size_t)k) != 0)
			break;
	(void)out_chunk(c, "\n\n", 2);
	c->joff = end;
}

/* The end of a line longer than buf (its newline's end) whose bytes go
 * on at off; -1 when it is not whole yet. */
static long long
jb_line_end(int fd, char *buf, long long off)
{
	ssize_t k;
	char *nl;

	while ((k = pread(fd, buf, RELAY_BUF, off)) > 0) {
		if ((nl = memchr(buf, '\n', (size_t)k)) != NULL)
			return off + (nl - buf) + 1;
		off += k;
	}
	return -1;
}

/* The journal's new whole lines, each an event, until OUT_HIGH waits to
 * go out (c->jmore: feed again once it went). A journal that is another
 * file (compacted: renamed over) or shorter than the offset, or an
 * offset asked for that is not a line's start: `event: reset`, then on
 * from its start. */
static void
jb_feed(struct srv *s, struct conn *c)
{
	char buf[RELAY_BUF], *nl, prev = '\n';
	struct stat st;
	long long end;
	ssize_t k;
	int fd;

	snprintf(buf, sizeof(buf), "%s/jobs/journal", s->cfg->state_dir);
	memset(&st, 0, sizeof(st));
	if ((fd = open(buf, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) >= 0 &&
	    fstat(fd, &st) != 0)
		st.st_ino = 0;
	if (c->joff > 0 && c->jino == 0 && fd >= 0 && pread(fd, &prev, 1,
	    c->joff - 1) != 1)
		prev = 0;
	if ((c->jino != 0 && st.st_ino != c->jino) || st.st_size < c->joff ||
	    prev != '\n') {
		snprintf(buf, sizeof(buf), "event: reset\nid: 0\ndata: "
		    "{\"size\":%lld}\n\n", (long long)st.st_size);
		(void)out_chunk(c, buf, strlen(buf));
		c->joff = 0;
	}
	c->jino = st.st_ino;
	/* What waits goes to the front: a client that never takes all of
	 * it must not grow the buffer. */
	if (c->out_off > 0) {
		memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
		c->out_len -= c->out_off;
		c->out_off = 0;
	}
	while (fd >= 0 && !(c->jmore = c->out_len >= OUT_HIGH)) {
		if ((k = pread(fd, buf, sizeof(buf), c->joff)) <= 0)
			break;
		if ((nl = memchr(buf, '\n', (size_t)k)) != NULL)
			end = c->joff + (nl - buf) + 1;
		else if (k < (ssize_t)sizeof(buf) || (end = jb_line_end(fd, buf,
		    c->joff + k)) < 0)
			break;	/* a line being written */
		jb_event(c, fd, buf, nl != NULL, end);
		c->jbeat = net_now_ms();
	}
	if (fd >= 0)
		close(fd);
}

/* The board's streams: fed once a second, or at once when one stopped at
 * OUT_HIGH and the client took half; a comment line after JOBS_BEAT_MS
 * of silence; ended when the server stops or the client went away. */
static void
jobs_streams(struct srv *s)
{
	long long now = net_now_ms();
	int tick = now - s->jlook >= 1000;
	struct conn *c;
	unsigned i;

	if (tick)
		s->jlook = now;
	for (i = 0; i < s->nc; i++) {
		c = &s->c[i];
		if (c->st != C_RELAY || c->kind != K_JOBS)
			continue;
		if (c->gone || got_term) {
			if (c->chunked)
				(void)out_add(c, "0\r\n\r\n", 5);
			c->close = 1;
			c->st = C_WRITE;
			continue;
		}
		if (tick || (c->jmore && c->out_len - c->out_off < OUT_HIGH / 2))
			jb_feed(s, c);
		if (now - c->jbeat >= JOBS_BEAT_MS && c->out_len == c->out_off) {
			(void)out_chunk(c, ": beat\n\n", 8);
			c->jbeat = now;
		}
	}
}

/* /api/v1/jobs...: p is the rest of the path. A token limited to some
 * skills may not use the board: a job may run any agent. */
static int
ep_jobs(struct srv *s, struct conn *c, const char *p, int get, int post)
{
	static const char *const kinds[] = { "block", "unblock", "comment",
	    "cancel" };
	struct board b;
	long long id = 0;
	const char *k;
	unsigned i;

	if (c->tok >= 0 && s->only[c->tok] != NULL)
		return respond_err(s, c, 403, "forbidden", "this token is "
		    "limited to some skills; a job may run any agent", NULL);
	if (*p == '\0')
		return get ? jb_list(s, c) : post ? jb_add(s, c) :
		    respond_err(s, c, 405, "invalid_request_error", "method "
		    "not allowed here", NULL);
	if (strcmp(p, "/events") == 0 && get)
		return jb_events(s, c);
	for (k = p + 1; *p == '/' && *k >= '0' && *k <= '9' && id <= 1L << 30;
	    k++)
		id = id * 10 + (*k - '0');
	if (id <= 0 || id > 1L << 30 || (*k != '\0' && *k != '/'))
		return respond_err(s, c, 404, "not_found", "no such path",
		    NULL);
	if (*k == '\0' && get)
		return jb_open(s, c, &b) == NULL ? 0 : jb_reply(s, c, &b,
		    (unsigned)id, 200);
	for (i = 0; *k == '/' && i < ARRAY_LEN(kinds); i++)
		if (strcmp(k + 1, kinds[i]) == 0)
			return post ? jb_change(s, c, (unsigned)id, kinds[i]) :
			    respond_err(s, c, 405, "invalid_request_error",
			    "POST it", NULL);
	if (*k == '/')
		return respond_err(s, c, 404, "not_found", "no such path",
		    NULL);
	return respond_err(s, c, 405, "invalid_request_error", "method not "
	    "allowed here", NULL);
}
#endif

/* --- routing */

static int
route(struct srv *s, struct conn *c)
{
	const char *m = c->h.method, *t = c->h.target, *o;
	char path[256];
	size_t n = strcspn(t, "?");
	int get = strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0;
	int post = strcmp(m, "POST") == 0;

	c->head = strcmp(m, "HEAD") == 0;
	if (n >= sizeof(path))
		return respond_err(s, c, 404, "not_found", "no such path",
		    NULL);
	memcpy(path, t, n);
	path[n] = '\0';
	o = http_header(&c->h, "Origin");
	if (o != NULL && s->cfg->serve.cors_origin != NULL &&
	    strcmp(o, s->cfg->serve.cors_origin) == 0)
		c->origin = s->cfg->serve.cors_origin;
	if (strcmp(m, "OPTIONS") == 0) {
		if (c->origin == NULL)
			return respond_err(s, c, 403, "forbidden", "no CORS "
			    "for this origin", NULL);
		return respond(s, c, 204, NULL, "", 0,
		    "Access-Control-Allow-Methods: GET, POST, DELETE\r\n"
		    "Access-Control-Allow-Headers: authorization, "
		    "content-type, last-event-id\r\n"
		    "Access-Control-Max-Age: 600\r\n");
	}
	if (strcmp(path, "/health") == 0 && get)
		return ep_health(s, c);
	if (strcmp(path, "/") == 0 && get)
		return ep_page(s, c);
	c->tok = -1;
	if (s->ntok > 0 && (c->tok = auth_token(s,
	    http_header(&c->h, "Authorization"))) < 0)
		return respond_err(s, c, 401, "authentication_error", "a "
		    "valid bearer token is needed", "WWW-Authenticate: Bearer "
		    "realm=\"skillbox\"\r\n");
	if (strcmp(path, "/v1/models") == 0 && get)
		return ep_models(s, c);
	if (strcmp(path, "/api/v1/skills") == 0 && get)
		return ep_skills(s, c);
	if (strcmp(path, "/api/v1/sessions") == 0 && get)
		return ep_sessions(s, c);
	if (strncmp(path, "/api/v1/sessions/", 17) == 0 && path[17] != '\0' &&
	    (get || strcmp(m, "DELETE") == 0))
		return ep_session(s, c, path + 17);
	if (strcmp(path, "/api/v1/run") == 0 && post)
		return ep_turn(s, c, 0);
#if HAVE_JOBS
	if (strncmp(path, "/api/v1/jobs", 12) == 0 && (path[12] == '\0' ||
	    path[12] == '/'))
		return ep_jobs(s, c, path + 12, get, post);
#endif
	if (strncmp(path, "/api/v1/sessions/", 17) == 0 && post &&
	    (n = strlen(path)) > 24 && strcmp(path + n - 7, "/answer") == 0) {
		path[n - 7] = '\0';
		c->tr.answer = 1;
		c->tr.path_session = arena_strdup(&c->a, path + 17);
		return ep_turn(s, c, 0);
	}
	if (strcmp(path, "/v1/chat/completions") == 0 && post)
		return ep_turn(s, c, 1);
	if (strcmp(path, "/v1/models") == 0 || strcmp(path,
	    "/api/v1/run") == 0 || strcmp(path, "/v1/chat/completions") == 0 ||
	    strcmp(path, "/api/v1/sessions") == 0 || strcmp(path,
	    "/api/v1/skills") == 0)
		return respond_err(s, c, 405, "invalid_request_error",
		    "method not allowed here", NULL);
	return respond_err(s, c, 404, "not_found", "no such path", NULL);
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
	if (ex != NULL && strcasecmp(ex, "100-continue") != 0) {
		c->close = 1;
		return respond_err(s, c, 417, "invalid_request_error", "only "
		    "Expect: 100-continue is known", NULL);
	}
	if (c->h.content_length > (long long)s->cfg->serve.body_max) {
		c->close = 1;
		return respond_err(s, c, 413, "invalid_request_error", "the "
		    "body is over serve.body_max", NULL);
	}
	c->want = c->h.chunked ? -1 : c->h.content_length > 0 ?
	    c->h.content_length : 0;
	if (c->want == 0)
		return route(s, c);
	if (ex != NULL && !c->v10 && out_add(c, "HTTP/1.1 100 Continue\r\n\r\n",
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
			return respond_err(s, c, 400, "invalid_request_error",
			    "malformed chunked body", NULL);
		}
		if (r > 0) {
			if (c->body_len + (size_t)r > s->cfg->serve.body_max) {
				c->close = 1;
				return respond_err(s, c, 413,
				    "invalid_request_error", "the body is over "
				    "serve.body_max", NULL);
			}
			if ((q = mem_realloc(c->body, c->body_len + (size_t)r +
			    1)) == NULL) {
				c->close = 1;
				return respond_err(s, c, 503, "server_error",
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
		return route(s, c);
	return 0;
}

static int
head_feed(struct srv *s, struct conn *c)
{
	size_t used;
	int e;

	e = http_head_feed(&c->h, &c->a, c->in, c->in_len, &used);
	if (e == -E_PART) {
		/* the parser wants the partial line again: keep it */
		memmove(c->in, c->in + used, c->in_len - used);
		c->in_len -= used;
		if (c->h.head_len + c->in_len > s->cfg->serve.head_max) {
			c->close = 1;
			return respond_err(s, c, 431, "invalid_request_error",
			    "the request head is over serve.head_max", NULL);
		}
		return 0;
	}
	if (e == 0 && c->h.head_len > s->cfg->serve.head_max)
		e = -E_LIMIT;
	if (e != 0) {
		c->close = 1;
		if (e == -E_NOMEM)
			return respond_err(s, c, 503, "server_error", "out of "
			    "memory in the server", NULL);
		if (e == -E_LIMIT)
			return respond_err(s, c, 431, "invalid_request_error",
			    "the request head is over serve.head_max", NULL);
		if (c->h.method != NULL && c->h.minor > 1)
			return respond_err(s, c, 505, "invalid_request_error",
			    "HTTP/1.0 and 1.1 only", NULL);
		return respond_err(s, c, 400, "invalid_request_error",
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
			respond_err(s, c, 503, "server_error", "out of memory "
			    "in the server", NULL);
			return 0;
		}
		c->in = q;
		c->in_cap = cap;
	}
	if (c->in_len == c->in_cap)
		return 0;	/* full: the parser decides */
#if HAVE_SERVE_TLS
	if (c->tls != NULL) {
		k = tls_srv_read(c->tls, c->fd, c->in + c->in_len,
		    c->in_cap - c->in_len);
		if (k == -2) {	/* plain HTTP: told so in plain HTTP */
			mem_free(c->tls);
			c->tls = NULL;
			c->close = 1;
			respond_err(s, c, 400, "invalid_request_error", "this "
			    "server speaks HTTPS: use an https:// address",
			    NULL);
			return 0;
		}
		if (k <= 0)
			return k == 0 ? 0 : -1;
	} else {
#endif
	k = read(c->fd, c->in + c->in_len, c->in_cap - c->in_len);
	if (k < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
#if HAVE_SERVE_TLS
	}
#endif
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
	if (conn_read(s, c) != 0) {
#if HAVE_SERVE_TLS
		const char *why;

		if (c->tls != NULL && (why = tls_srv_why(c->tls)) != NULL)
			log_err("%s: TLS: %s", c->peer, why);
#endif
		if (c->st == C_HEAD && c->in_len == 0 && c->h.nlines == 0) {
			conn_close(s, c);	/* a kept-alive one ended */
			return;
		}
		c->close = 1;
		c->gone = 1;
		log_request(s, c);
		conn_close(s, c);
		return;
	}
	if (c->st == C_HEAD && c->in_len > 0)
		(void)head_feed(s, c);
	if (c->st == C_BODY && c->in_len > 0)
		(void)body_feed(s, c);
}

/* --- relaying a worker or a file */

/* The worker's status line: "STATUS CONTENT-TYPE SESSION". */
static int
relay_head(struct srv *s, struct conn *c)
{
	char extra[120], *ctype, *sess;
	int st, i;

	(void)s;
	c->ph[c->phlen] = '\0';
	for (st = 0, i = 0; i < 3 && c->ph[i] >= '0' && c->ph[i] <= '9'; i++)
		st = st * 10 + c->ph[i] - '0';
	if (i < 3 || st < 200 || st > 599 || c->ph[3] != ' ' ||
	    (ctype = strchr(c->ph, ' ')) == NULL ||
	    (sess = strchr(++ctype, ' ')) == NULL)
		return -E_PROTO;
	*sess++ = '\0';
	extra[0] = '\0';
	if (strcmp(sess, "-") != 0)
		snprintf(extra, sizeof(extra), "X-Skillbox-Session: %s\r\n",
		    sess);
	c->headed = 1;
	return out_head(c, st, ctype, -1, extra);
}

/* Send one more piece of an error after a worker that died. */
static void
relay_died(struct srv *s, struct conn *c, int wst)
{
	char msg[160], b[320];
	int n;

	if (WIFSIGNALED(wst))
		snprintf(msg, sizeof(msg), "the turn's worker was killed by "
		    "signal %d", WTERMSIG(wst));
	else
		snprintf(msg, sizeof(msg), "the turn's worker exited with "
		    "status %d", WEXITSTATUS(wst));
	log_err("%s (%s %s)", msg, c->h.method, c->h.target);
	if (!c->headed) {
		c->out_len = c->out_off = 0;
		(void)respond_err(s, c, 500, "server_error", msg, NULL);
		return;
	}
	if (c->kind == K_RUN_SSE)
		n = snprintf(b, sizeof(b), "event: error\ndata: {\"type\":"
		    "\"error\",\"message\":\"%s\"}\n\nevent: done\ndata: "
		    "{\"status\":\"failed\"}\n\n", msg);
	else if (c->kind == K_OAI_SSE)
		n = snprintf(b, sizeof(b), "data: {\"error\":{\"message\":"
		    "\"%s\",\"type\":\"server_error\"}}\n\n", msg);
	else {
		c->close = 1;	/* a cut JSON reply: no last chunk */
		c->chunked = 0;
		return;
	}
	(void)out_chunk(c, b, (size_t)n);
}

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
					if (relay_head(s, c) != 0)
						c->headed = 2;	/* bad */
				} else if (c->phlen < sizeof(c->ph) - 1)
					c->ph[c->phlen++] = buf[i];
			}
			off = i;
		}
		if (c->headed == 1)
			(void)out_chunk(c, buf + off, (size_t)k - off);
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
			relay_died(s, c, wst);
		c->pid = 0;
	}
	c->src = -1;
	if (c->chunked)
		(void)out_add(c, "0\r\n\r\n", 5);
	else if (c->kind != K_FILE || c->v10)
		c->close = 1;
	c->st = C_WRITE;
	run_queue(s);
}

/* Write what is waiting; 0, or -1 when the client is gone. */
static int
conn_write(struct conn *c)
{
	ssize_t k;

	while (c->out_off < c->out_len) {
#if HAVE_SERVE_TLS
		if (c->tls != NULL) {
			k = tls_srv_write(c->tls, c->fd, c->out + c->out_off,
			    c->out_len - c->out_off);
			if (k == 0)
				return 0;
		} else
#endif
		k = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
		    MSG_NOSIGNAL);
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
#if HAVE_SERVE_TLS
	if (c->tls != NULL && tls_srv_write(c->tls, c->fd, "", 0) < 0)
		return -1;	/* sends the records still held */
#endif
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
#if HAVE_SERVE_TLS
	if (c->tls != NULL && tls_srv_unsent(c->tls))
		return 1;
#endif
	return c->out_off < c->out_len;
}

static void
accept_all(struct srv *s)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	struct conn *c = NULL;
	unsigned i;
	int fd;

	for (;;) {
		sl = sizeof(ss);
		fd = accept4(s->lfd, (struct sockaddr *)&ss, &sl,
		    SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		for (i = 0, c = NULL; i < s->nc; i++)
			if (s->c[i].st == C_FREE) {
				c = &s->c[i];
				break;
			}
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
#if HAVE_SERVE_TLS
		if (s->cred != NULL) {
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
#endif
		c->fd = fd;
		c->src = -1;
		c->tok = -1;
		arena_init(&c->a, "request");
		if (ss.ss_family == AF_INET6)
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->
			    sin6_addr, c->peer, sizeof(c->peer));
		else
			inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->
			    sin_addr, c->peer, sizeof(c->peer));
		s->open++;
		c->st = C_HEAD;
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
			conn_close(s, c);	/* idle keep-alive */
			continue;
		}
		c->close = 1;
		(void)respond_err(s, c, 408, "invalid_request_error", "the "
		    "request came too slowly (serve.header_timeout)", NULL);
	}
}

/* One pass: poll, then serve what is ready. */
static void
step(struct srv *s)
{
	long long now = net_now_ms(), next = now + 1000;
	unsigned i, n = 0;
	struct conn *c;
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
#if HAVE_SERVE_TLS
			if (c->tls != NULL && tls_srv_pending(c->tls))
				next = now;	/* read below, not polled */
#endif
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
	r = poll(s->pfd, n, (int)MAX(next - now, 0));
	if (r < 0)
		return;		/* EINTR: a signal to look at */
	for (i = 0; i < n; i++) {
		if (s->pfd[i].revents == 0)
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
#if HAVE_SERVE_TLS
		if (c->tls != NULL && (c->st == C_HEAD || c->st == C_BODY) &&
		    !out_waiting(c) && tls_srv_pending(c->tls)) {
			conn_input(s, c);
			continue;
		}
#endif
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

/* --- setup */

static int
parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *sl)
{
	struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
	char host[64];
	const char *colon;
	char *end;
	unsigned long port;
	size_t hl;

	memset(ss, 0, sizeof(*ss));
	if (spec[0] == '[') {
		if ((colon = strstr(spec, "]:")) == NULL)
			return -E_INVAL;
		hl = (size_t)(colon - spec - 1);
		colon++;
		memcpy(host, spec + 1, MIN(hl, sizeof(host) - 1));
	} else if ((colon = strrchr(spec, ':')) != NULL) {
		hl = (size_t)(colon - spec);
		memcpy(host, spec, MIN(hl, sizeof(host) - 1));
	} else {
		colon = spec - 1;
		hl = 0;
		memcpy(host, "127.0.0.1", 10);
		hl = 9;
	}
	if (hl >= sizeof(host))
		return -E_INVAL;
	host[hl] = '\0';
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno != 0 || end == colon + 1 || *end != '\0' || port > 65535)
		return -E_INVAL;
	if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons((unsigned short)port);
		*sl = sizeof(*v4);
	} else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((unsigned short)port);
		*sl = sizeof(*v6);
	} else
		return -E_INVAL;
	return 0;
}

static int
is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.
		    s_addr) >> 24) == 127;
	return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)ss)->
	    sin6_addr);
}

static int
hexval(int ch)
{
	return ch <= '9' ? ch - '0' : (ch | 0x20) - 'a' + 10;
}

/* The tokens of the configuration into the server. Two tokens whose
 * hashes start alike would share sessions: refused. */
static int
take_tokens(struct srv *s)
{
	unsigned i, k;
	const char *t;

	s->ntok = s->cfg->serve.ntokens;
	for (i = 0; i < s->ntok; i++) {
		t = s->cfg->serve.tokens[i];
		for (k = 0; k < 32; k++)
			s->hash[i][k] = (unsigned char)(hexval(t[2 * k]) << 4 |
			    hexval(t[2 * k + 1]));
		for (k = 0; k < TAG_LEN; k++)
			s->tag[i][k] = (char)((t[k] | 0x20));
		s->tag[i][TAG_LEN] = '\0';
		s->only[i] = t[64] == ' ' ? t + 65 : NULL;
		for (k = 0; k < i; k++)
			if (strcmp(s->tag[k], s->tag[i]) == 0) {
				log_err("serve.tokens: two tokens' hashes start "
				    "with %s: they would share sessions; make "
				    "a new token", s->tag[i]);
				return -E_INVAL;
			}
	}
	return 0;
}

static int
same_path(const char *a, const char *b)
{
	return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static int
load_cfg(struct srv *s, int first)
{
	struct arena *a = &s->cfga[s->cur ^ 1];
	struct cfg *c, *prev;
	char why[320];
	int e;

	arena_reset(a);
	if ((c = arena_zalloc(a, sizeof(*c))) == NULL)
		return cmd_nomem("loading the configuration");
	if ((e = cfg_load(c, a, app.config, why, sizeof(why))) != 0) {
		if (e == -E_NOMEM)
			return cmd_nomem("loading the configuration");
		log_err("%s%s", why, first ? "" : " (kept the old one)");
		return EXIT_FAIL;
	}
	if (!first) {
		prev = s->cfg;
		if (c->serve.max_conns != prev->serve.max_conns ||
		    strcmp(c->serve.listen, prev->serve.listen) != 0 ||
		    !same_path(c->serve.tls_cert, prev->serve.tls_cert) ||
		    !same_path(c->serve.tls_key, prev->serve.tls_key))
			log_warn("serve.listen, serve.max_connections, "
			    "serve.tls_cert and serve.tls_key take a restart");
		c->serve.listen = prev->serve.listen;
		c->serve.max_conns = prev->serve.max_conns;
		c->serve.tls_cert = prev->serve.tls_cert;
		c->serve.tls_key = prev->serve.tls_key;
	}
	prev = s->cfg;
	s->cfg = c;
	if (take_tokens(s) != 0) {
		s->cfg = prev;
		if (!first)
			(void)take_tokens(s);
		return EXIT_FAIL;
	}
	s->cur ^= 1;
	return 0;
}

/* Each worker's memory: serve.turn_memory, else what the server leaves
 * shared by max_turns; the server keeps a quarter (at least 256 KiB). */
static int
budget_slices(struct srv *s)
{
	size_t total = mem_budget(), used = mem_used();
	size_t keep = MAX(total / 4, (size_t)256 << 10);
	unsigned nt = s->cfg->serve.max_turns;

	if (s->cfg->serve.turn_memory != 0)
		s->slice = s->cfg->serve.turn_memory;
	else
		s->slice = total > used + keep ? (total - used - keep) / nt : 0;
	if (s->slice < MEM_MIN || used + keep + s->slice * nt > total) {
		log_err("memory budget of %zu KiB too small for %u turns of "
		    "%zu KiB and the server (%zu KiB): raise memory, or lower "
		    "serve.max_turns or serve.turn_memory", total >> 10, nt,
		    s->slice >> 10, (used + keep) >> 10);
		return EXIT_FAIL;
	}
#if HAVE_SERVE_TLS
	if (s->cred != NULL) {	/* each HTTPS connection has its buffers */
		size_t room = (total - used - s->slice * nt) / tls_srv_size();

		if (room < s->cfg->serve.max_conns)
			log_warn("HTTPS: the server's %zu KiB hold %zu of the "
			    "%u serve.max_connections (%zu KiB each); more are "
			    "closed at once: raise memory or lower "
			    "serve.max_connections", (total - used - s->slice *
			    nt) >> 10, room, s->cfg->serve.max_conns,
			    tls_srv_size() >> 10);
	}
#endif
	return 0;
}

static int
hash_token(const char *tok)
{
	unsigned char d[32];
	char hex[65];
	struct sha256 h;

	if (strlen(tok) < 16) {
		log_err("a token needs 16 characters at least (try: head -c 24 "
		    "/dev/urandom | base64)");
		return EXIT_USAGE;
	}
	sha256_init(&h);
	sha256_feed(&h, tok, strlen(tok));
	sha256_final(&h, d);
	sha256_hex(d, hex);
	printf("%s\n", hex);
	return EXIT_OK;
}

#if HAVE_JOBS
/* The job board's dispatcher: every jobs.every seconds, `skillbox jobs
 * run-due` in a child of its own (due schedules become jobs, dead runs
 * are reclaimed, ready jobs run, each in a worker it forks), one at a
 * time, and none once the server is stopping. */
static void
jobs_tick(struct srv *s, pid_t *pid, long long *next)
{
	static char *av[] = { "jobs", "run-due", NULL };
	int wst;

	if (*pid > 0 && waitpid(*pid, &wst, WNOHANG) == *pid) {
		if (!WIFEXITED(wst) || WEXITSTATUS(wst) != 0)
			log_warn("jobs run-due ended with %s %d", WIFEXITED(wst) ?
			    "status" : "signal", WIFEXITED(wst) ?
			    WEXITSTATUS(wst) : WTERMSIG(wst));
		*pid = 0;
	}
	if (*pid > 0 || got_term || s->cfg->jobs.every_s == 0 ||
	    time(NULL) < *next)
		return;
	*next = time(NULL) + s->cfg->jobs.every_s;
	if ((*pid = fork()) < 0) {
		log_warn("jobs run-due: fork: %s", strerror(errno));
		*pid = 0;
	}
	if (*pid != 0)
		return;
	child_detach(s);
	_exit(cmd_jobs(2, av));
}
#endif

int
cmd_serve(int argc, char **argv)
{
	enum { O_LISTEN = 256, O_PORTFILE, O_HASH };
	static const struct option lo[] = {
		{ "listen", required_argument, NULL, O_LISTEN },
		{ "port-file", required_argument, NULL, O_PORTFILE },
		{ "hash-token", required_argument, NULL, O_HASH },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *listen_at = NULL, *portfile = NULL;
	struct sockaddr_storage ss;
	struct sigaction sa;
	struct srv s;
	socklen_t sl;
	char why[320];
	int c, one = 1, r;
#if HAVE_PERSIST
	long long psync;
#endif
#if HAVE_JOBS
	long long jnext;
	pid_t jpid = 0;
#endif

	optind = 0;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case O_LISTEN: listen_at = optarg; break;
		case O_PORTFILE: portfile = optarg; break;
		case O_HASH: return hash_token(optarg);
		case 'h': return cmd_help("serve");
		default: return cmd_usage("serve", "bad option");
		}
	}
	if (optind < argc)
		return cmd_usage("serve", "no arguments are taken");
	memset(&s, 0, sizeof(s));
	arena_init(&s.cfga[0], "config");
	arena_init(&s.cfga[1], "config");
	s.lfd = -1;
	if ((r = load_cfg(&s, 1)) != 0)
		return r;
	if (listen_at != NULL)
		s.cfg->serve.listen = listen_at;
	if (parse_listen(s.cfg->serve.listen, &ss, &sl) != 0)
		return cmd_usage("serve", "listen on HOST:PORT or [V6]:PORT, "
		    "not '%s'", s.cfg->serve.listen);
	if (s.ntok == 0 && !is_loopback(&ss)) {
		log_err("serve.listen %s is not a loopback address and no "
		    "serve.tokens are set: refusing to serve without a token "
		    "(add one: skillbox serve --hash-token TOKEN)",
		    s.cfg->serve.listen);
		return EXIT_FAIL;
	}
	if ((s.cfg->serve.tls_cert == NULL) != (s.cfg->serve.tls_key ==
	    NULL)) {
		log_err("serve.tls_cert and serve.tls_key go together: set "
		    "both for HTTPS, or neither");
		return EXIT_FAIL;
	}
	if (s.cfg->serve.tls_cert != NULL) {
#if HAVE_SERVE_TLS
		if (tls_cred_load(&app.perm, s.cfg->serve.tls_cert,
		    s.cfg->serve.tls_key, &s.cred, why, sizeof(why)) != 0) {
			log_err("%s", why);
			return EXIT_FAIL;
		}
#else
		log_err("serve.tls_cert: built without HTTPS (SERVE_TLS=0): "
		    "use a TLS proxy");
		return EXIT_FAIL;
#endif
	}
	/* The trust anchors once, for every worker. */
	if (strcmp(s.cfg->provider, "offline") != 0 && s.cfg->base_url !=
	    NULL && strncmp(s.cfg->base_url, "https:", 6) == 0 &&
	    llm_preload_anchors(&app.perm, s.cfg->ca_file, why,
	    sizeof(why)) != 0) {
		log_err("%s", why);
		return EXIT_FAIL;
	}
	s.nc = s.cfg->serve.max_conns;
	s.c = arena_zalloc(&app.perm, s.nc * sizeof(*s.c));
	s.pfd = arena_zalloc(&app.perm, (2 * s.nc + 1) * sizeof(*s.pfd));
	s.pc = arena_zalloc(&app.perm, (2 * s.nc + 1) * sizeof(*s.pc));
	if (s.c == NULL || s.pfd == NULL || s.pc == NULL)
		return cmd_nomem("setting up the connections");
	for (c = 0; c < (int)s.nc; c++)
		s.c[c].fd = s.c[c].src = -1;
	if ((r = budget_slices(&s)) != 0)
		return r;
	s.lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0);
	if (s.lfd < 0 || setsockopt(s.lfd, SOL_SOCKET, SO_REUSEADDR, &one,
	    sizeof(one)) != 0 || bind(s.lfd, (struct sockaddr *)&ss, sl) != 0 ||
	    listen(s.lfd, 64) != 0) {
		log_err("cannot listen on %s: %s", s.cfg->serve.listen,
		    strerror(errno));
		return EXIT_FAIL;
	}
	sl = sizeof(ss);
	getsockname(s.lfd, (struct sockaddr *)&ss, &sl);
	s.port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->
	    sin_port : ((struct sockaddr_in6 *)&ss)->sin6_port);
	if (portfile != NULL) {
		FILE *f = fopen(portfile, "w");

		if (f == NULL || fprintf(f, "%u\n", s.port) < 0 ||
		    fclose(f) != 0) {
			log_err("%s: %s", portfile, strerror(errno));
			return EXIT_FAIL;
		}
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	s.started = time(NULL);
#if HAVE_JOBS
	jnext = s.started;
#endif
#if HAVE_PERSIST
	persist_run(s.cfg, &app.perm, 0);	/* the first start after a boot */
	psync = s.started + s.cfg->persist.interval;
#endif
	log_info("serving on port %u (%s; %u turns at once, %zu KiB each; "
	    "%s)", s.port, s.cfg->serve.listen, s.cfg->serve.max_turns,
	    s.slice >> 10, s.ntok ? "tokens required" : "no tokens: "
	    "loopback only");
#if HAVE_SERVE_TLS
	if (s.cred != NULL)
		fprintf(stderr, "skillbox: listening on %s port %u (HTTPS, %s "
		    "key)\n", s.cfg->serve.listen, s.port,
		    tls_cred_kind(s.cred));
	else
#endif
	fprintf(stderr, "skillbox: listening on %s port %u\n",
	    s.cfg->serve.listen, s.port);
	for (;;) {
		if (got_hup) {
			got_hup = 0;
			if (load_cfg(&s, 0) == 0)
				fprintf(stderr, "skillbox: configuration "
				    "reloaded\n");
		}
		if (got_term && s.lfd >= 0) {
			close(s.lfd);
			s.lfd = -1;
			fprintf(stderr, "skillbox: stopping: %u turns to "
			    "finish\n", s.turns + s.queued);
		}
		if (got_term) {
			unsigned i, busy = 0;

			for (i = 0; i < s.nc; i++) {
				struct conn *k = &s.c[i];

				if (k->st == C_RELAY || k->st == C_QUEUED ||
				    (k->st == C_WRITE && !k->gone))
					busy++;
				else if (k->st == C_HEAD && k->in_len == 0 &&
				    k->h.nlines == 0)
					conn_close(&s, k);
			}
			if (busy == 0)
				break;
		}
#if HAVE_JOBS
		jobs_tick(&s, &jpid, &jnext);
		jobs_streams(&s);
#endif
#if HAVE_PERSIST
		if (time(NULL) >= psync) {	/* only what changed */
			persist_run(s.cfg, &app.perm, 1);
			psync = time(NULL) + s.cfg->persist.interval;
		}
#endif
		step(&s);
	}
#if HAVE_PERSIST
	persist_run(s.cfg, &app.perm, 1);
#endif
	fprintf(stderr, "skillbox: stopped\n");
	return EXIT_OK;
}
