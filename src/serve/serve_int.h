/* serve_int.h - what the files of serve/ share, and no one else: the
 * server (struct srv), its connections (struct conn), their limits, and
 * the functions one file of the server calls in another.
 *
 *   httpd.c     connections: requests in, replies out, TLS, the poll loop
 *   api.c       auth, /health, skills, sessions, the page, the router
 *   openai.c    /v1/models and the chat.completions translation
 *   responses.c /v1/responses: its request, events and reply
 *   worker.c    turn requests, the forked worker, relaying its events
 *   jobs_api.c  /api/v1/jobs and its event stream
 *   serve.c     tokens, configuration, memory slices, serve_main
 *
 * Request strings live in the connection's arena (c->a) until its next
 * request; c->in, c->out and c->body come from mem_realloc and go with
 * the connection. */
#ifndef SERVE_INT_H
#define SERVE_INT_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include "agent/agent.h"
#include "agent/cfg.h"
#include "base/arena.h"
#include "base/base.h"
#include "base/str.h"
#include "fmt/json.h"
#include "llm/llm.h"
#include "net/http.h"
#include "net/tls.h"
#include "serve/serve.h"
#include "skill/skill.h"

#define OUT_HIGH	(64u << 10)	/* stop reading a source above this */
#define RELAY_BUF	(16u << 10)
#define REQ_TOKENS	4096		/* JSON tokens in a request body */
#define TAG_LEN		8		/* hex digits of a token's session tag */
#define RETRY_AFTER	"5"

enum kind { K_PLAIN, K_FILE, K_RUN_SSE, K_RUN_JSON, K_OAI_SSE, K_OAI_JSON,
    K_JOBS, K_RESP_SSE, K_RESP_JSON };
/* An OpenAI client's request (chat completions or responses): the reply
 * is the answer, a question or approval is the reply's text. */
#define IS_OAI(k)	((k) == K_OAI_SSE || (k) == K_OAI_JSON || \
			    (k) == K_RESP_SSE || (k) == K_RESP_JSON)
/* What worker_turn parses: /api/v1/run, chat completions, responses. */
enum api { API_RUN, API_CHAT, API_RESP };
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
	char		*call;		/* the call an approval names */
	const char	*prev;		/* OpenAI: the assistant message
					 * before the input, or NULL */
	char		*ref;		/* responses: the last item_reference */
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
	unsigned char	 served;	/* kept alive after a reply */
	unsigned char	 authed;	/* the head came, with a valid token
					 * (or none is configured) */
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
	long long	 joff, jbeat;	/* K_JOBS: the journal's next line */
	unsigned long long jino;	/* the journal's inode, 0 none yet */
	unsigned char	 jmore;		/* stopped at OUT_HIGH */
};

struct srv {
	struct arena	*perm;		/* lives until exit */
	const struct serve_opts *o;	/* the applet's options and helpers */
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
	long long	 jlook;		/* the journal's last look, ms */
	struct fleet	*fleet;		/* the fleet's device, or NULL */
	int		 jnow;		/* run the due jobs now: one came */
};

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
	unsigned	 seq;		/* responses: the next sequence_number */
	struct sbuf	 said;		/* responses: the text streamed */
};

/* SIGTERM (or SIGINT) came: drain and stop; SIGHUP came: reload. */
extern volatile sig_atomic_t got_term, got_hup;

/* httpd.c: replies. Each returns 0 or -E_NOMEM (-E_LIMIT: out_printf
 * over 1 KiB); bytes wait in c->out for the poll loop. */
int	httpd_out(struct conn *c, const void *p, size_t n);
int	httpd_printf(struct conn *c, const char *fmt, ...) ATTR_PRINTF(2, 3);
/* Body bytes of a streamed reply, chunked unless HTTP/1.0. */
int	httpd_chunk(struct conn *c, const char *p, size_t n);
/* The head of a response: len bytes of body, or len < 0 for a streamed
 * one; extra: more header lines, each ending in CRLF, or NULL. */
int	httpd_head(struct conn *c, int st, const char *ctype, long long len,
	    const char *extra);
/* A whole response with a body; then c is C_WRITE. */
int	httpd_respond(struct srv *s, struct conn *c, int st, const char *ctype,
	    const char *body, size_t n, const char *extra);
/* An error in the OpenAI shape ({"error": {message, type, code}}). */
int	httpd_respond_err(struct srv *s, struct conn *c, int st, const char *type,
	    const char *msg, const char *extra);
/* Close c's socket, its source and TLS, free its buffers: C_FREE. */
void	httpd_close(struct srv *s, struct conn *c);
/* One line of what serve did (a request, a fleet's job) to serve.log. */
void	httpd_log_line(struct srv *s, const char *line);
/* One pass of the loop: poll, then serve what is ready. */
void	httpd_step(struct srv *s);

/* fleet.c: the device of a fleet (mqtt: in the configuration) */
/* Connect (the first try at once), or SERVE_FAIL with the error logged
 * (a bad CA or certificate, no job board); s->fleet is set. */
int	fleet_start(struct srv *s);
/* Its pollfd (fd -1: none) and the longest poll may wait, ms (<0 any). */
struct pollfd;
long	fleet_poll(struct fleet *f, struct pollfd *pfd, long long now);
/* After poll: revents of its fd (0 none). */
void	fleet_run(struct fleet *f, short revents, long long now);
/* In a forked child: the broker's socket, the board's files and the
 * client key are not its own. */
void	fleet_detach(struct fleet *f);
/* Stopping: the offline status, DISCONNECT, close. */
void	fleet_stop(struct fleet *f);
/* api.c */
/* The on-disk name of a token's session: "TAG.NAME"; NULL when bad. */
const char *api_stored_name(struct srv *s, struct conn *c, const char *name);
/* 1 when the token's session NAME has a log. */
int	api_has_session(struct srv *s, struct conn *c, const char *name);
/* The value of a query parameter in c->a, or NULL. */
const char *api_query(struct conn *c, const char *key);
/* sb and a newline as a 200 application/json reply (503: sb ran out). */
int	api_send_json(struct srv *s, struct conn *c, struct sbuf *sb);
/* What walk_skills hands each skill. */
struct skills_ctx {
	struct json_writer	*w;
	const char		*only;
	const char		*find;		/* each_model: look for this */
	int			 found;
	long long		 created;
};
/* 1 when name is a word of the space-separated list (NULL: all). */
int	api_in_words(const char *list, const char *name);
/* Walk the skills the token may use with fn; 0 or -E_*. */
int	api_walk_skills(struct srv *s, struct conn *c, struct skills_ctx *x,
	    int (*fn)(void *, const struct skill *));
/* The index of the token the request's Authorization names, or -1. */
int	api_token(const struct srv *s, const struct conn *c);
/* Answer the request whose head (and body) came. */
int	api_route(struct srv *s, struct conn *c);

/* openai.c */
/* GET /v1/models: skillbox, the default entry agent, and (HAVE_ORCH) the
 * orchestration skills the token may use. */
int	openai_models(struct srv *s, struct conn *c);
/* The entry agent a request names: NULL or "skillbox" is the default;
 * else an orchestration skill the token may use. 0, or -E_NOENT. */
int	openai_find_agent(struct srv *s, struct conn *c, const char *name);
/* Text of an OpenAI message content (token t of d) into c->a: a string,
 * or the text parts of an array joined by newlines. 0 or -E_*. */
int	openai_content_text(struct conn *c, const struct json_doc *d, int t,
	    char **out, size_t *n);
/* A session name from the OpenAI `user` field: itself when it is a valid
 * name, else "u-" and 16 hex digits of its hash (in c->a). */
const char *openai_user_session(struct conn *c, const char *user);
/* In the worker: an OpenAI chunk with a content delta (role on the
 * first), or the closing one with finish_reason. */
void	openai_chunk(struct wctx *w, const char *text, size_t n,
	    const char *finish);
/* In the worker: the end of a streamed OpenAI turn. */
void	openai_end(struct wctx *w, enum agent_status st, const char *final,
	    unsigned long in, unsigned long out);
/* A 400 invalid_request_error saying msg; returns -E_INVAL. */
int	openai_bad(struct srv *s, struct conn *c, const char *msg);
/* The messages (chat) or input items (resp) array m of d into c->tr: the
 * last user message is the input, the user and assistant messages before
 * it the seed, the assistant one right before it tr->prev; resp: the id
 * of the last item_reference in tr->ref. 0, or an error reply was made
 * (-E_*). */
int	openai_messages(struct srv *s, struct conn *c, const struct json_doc *d,
	    int m, int resp);
/* A new session name, PREFIX-12 hex digits, in c->a; NULL: no random. */
const char *openai_new_session(struct conn *c, const char *prefix);

/* responses.c */
/* The fields of POST /v1/responses (d, an object) into c->tr and c->kind;
 * 0, or an error reply was made (-E_*). */
int	responses_parse(struct srv *s, struct conn *c, const struct json_doc *d);
/* In the worker: the response's id, resp_ and time and pid, then _ and
 * the session's shown name in hex when it is stored, into buf. */
void	responses_id(const struct wctx *w, char *buf, size_t size);
/* In the worker: the events of a streamed response: response.created and
 * .in_progress; a delta of the entry agent's text; the end (the answer
 * when not streamed yet, the done events and response.completed, or an
 * error event and response.failed). */
void	responses_start(struct wctx *w);
void	responses_delta(struct wctx *w, const char *text, size_t n);
void	responses_end(struct wctx *w, enum agent_status st, const char *final,
	    unsigned long in, unsigned long out);
/* In the worker: a response object, completed, with final as its text. */
void	responses_json(struct wctx *w, struct sbuf *sb, const char *final,
	    unsigned long in, unsigned long out);

/* worker.c */
/* POST /api/v1/run, .../answer (c->tr.answer set), the chat completions
 * and responses: parse, then start the turn, queue it or say busy. */
int	worker_turn(struct srv *s, struct conn *c, enum api api);
/* Start queued turns while there is room, oldest first. */
void	worker_run_queue(struct srv *s);
/* The worker's status line in c->ph as the reply's head. */
int	worker_relay_head(struct srv *s, struct conn *c);
/* Finish the reply of a worker that died (its wait status wst). */
void	worker_relay_died(struct srv *s, struct conn *c, int wst);
/* In a forked child (a turn's worker, the jobs dispatcher): signals at
 * their defaults, none of the server's sockets and pipes, and no TLS
 * session keys or server key left in memory. */
void	worker_detach(struct srv *s);
/* In the worker: bytes into the pipe; a pipe that broke is given up. */
void	worker_write(struct wctx *w, const char *p, size_t n);
void	worker_printf(struct wctx *w, const char *fmt, ...) ATTR_PRINTF(2, 3);
/* The JSON of an error, OpenAI's shape, into sb. */
void	worker_error_json(struct wctx *w, struct sbuf *sb, const char *msg);

/* jobs_api.c (HAVE_JOBS) */
/* /api/v1/jobs...: p is the rest of the path. */
int	jobs_api_route(struct srv *s, struct conn *c, const char *p, int get,
	    int post);
/* Feed, beat and end the streams of /api/v1/jobs/events. */
void	jobs_api_streams(struct srv *s);

#endif
