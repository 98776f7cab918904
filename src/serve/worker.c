/* worker.c - agent turns: the request parsed before the fork, the forked
 * worker that runs the turn within its memory slice and writes its events
 * to a pipe in the request's format, and the queue of turns waiting for
 * a slot. */
#include "serve/serve_int.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "config.h"
#include "session/slog.h"
#include "serve/jobs.h"

/* Parse a turn request into c->tr; 0, or an error response was made. */
static int
parse_turn(struct srv *s, struct conn *c, enum api api, int *bad)
{
	struct json_doc d;
	struct turnreq *tr = &c->tr;
	const char *acc = http_header(&c->h, "Accept");
	char *str = NULL;
	size_t n;
	int t, m, stream = 0;

	*bad = 1;
	if (json_parse(&c->a, c->body ? c->body : "", c->body_len, REQ_TOKENS,
	    &d) != 0 || d.n == 0 || d.t[0].type != JSON_OBJ)
		return httpd_respond_err(s, c, 400, "invalid_request_error", "the "
		    "body must be a JSON object", NULL);
	if (api == API_RUN) {
		t = json_get(&d, 0, "approve");
		if (t >= 0 && tr->path_session != NULL) {
			if (json_bool(&d, t, &tr->approve) != 0)
				return httpd_respond_err(s, c, 400,
				    "invalid_request_error", "'approve' must be "
				    "true or false", NULL);
			tr->decide = 1;
			if (json_str(&d, &c->a, json_get(&d, 0, "reason"),
			    &tr->reason, NULL) != 0)
				tr->reason = NULL;
			if ((t = json_get(&d, 0, "call")) >= 0 && json_str(&d,
			    &c->a, t, &tr->call, NULL) != 0)
				return httpd_respond_err(s, c, 400,
				    "invalid_request_error", "'call' must be "
				    "the id of the call (a string)", NULL);
			str = "";
			n = 0;
		} else if (json_str(&d, &c->a, json_get(&d, 0, "input"), &str,
		    &n) != 0 || n == 0)
			return httpd_respond_err(s, c, 400, "invalid_request_error",
			    "'input' must be a non-empty string", NULL);
		tr->input = str;
		tr->inlen = n;
		t = json_get(&d, 0, "session");
		if (tr->path_session != NULL)
			t = -1, str = (char *)tr->path_session;
		if (t >= 0 && !json_is_null(&d, t) && json_str(&d, &c->a, t,
		    &str, NULL) != 0)
			return httpd_respond_err(s, c, 400, "invalid_request_error",
			    "'session' must be a string", NULL);
		if ((t < 0 || json_is_null(&d, t)) && tr->path_session == NULL &&
		    (str = (char *)openai_new_session(c, "web")) == NULL)
			return httpd_respond_err(s, c, 503, "server_error",
			    "no random bytes", NULL);
		tr->shown = str;
		t = HAVE_ORCH ? json_get(&d, 0, "agent") : -1;
		if (t >= 0 && !json_is_null(&d, t) && json_str(&d, &c->a, t,
		    &str, NULL) != 0)
			return httpd_respond_err(s, c, 400, "invalid_request_error",
			    "'agent' must be a string", NULL);
		tr->agent = t >= 0 && !json_is_null(&d, t) ? str : NULL;
		c->kind = acc != NULL && strstr(acc, "application/json") &&
		    !strstr(acc, "text/event-stream") ? K_RUN_JSON : K_RUN_SSE;
	} else if (api == API_RESP) {
		if (responses_parse(s, c, &d) != 0)
			return 0;
	} else {
		if ((t = json_get(&d, 0, "stream")) >= 0 &&
		    !json_is_null(&d, t) && json_bool(&d, t, &stream) != 0)
			return httpd_respond_err(s, c, 400, "invalid_request_error",
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
			return httpd_respond_err(s, c, 400, "invalid_request_error",
			    "'messages' must be a non-empty array", NULL);
		if (openai_messages(s, c, &d, m, 0) != 0)
			return 0;
		str = NULL;
		if ((t = json_get(&d, 0, "user")) >= 0 &&
		    json_str(&d, &c->a, t, &str, &n) == 0 && n > 0) {
			tr->shown = openai_user_session(c, str);
			tr->nseed = 0;	/* the session holds the history */
		}
	}
	if (HAVE_ORCH && openai_find_agent(s, c, tr->agent) != 0)
		return httpd_respond_err(s, c, 404, api != API_RUN ?
		    "invalid_request_error" : "not_found", api != API_RUN ?
		    "no such model: GET /v1/models lists them" : "no such "
		    "agent: GET /v1/models lists them", NULL);
	if (tr->agent != NULL && strcmp(tr->agent, "skillbox") == 0)
		tr->agent = NULL;
	/* A job's paused turn is no token's: a token that may use every
	 * skill may answer it, as it may add and run jobs. */
	if (tr->path_session != NULL && c->tok >= 0 &&
	    strncmp(tr->shown, "job-", 4) == 0) {
		if (s->only[c->tok] != NULL)
			return httpd_respond_err(s, c, 403, "forbidden", "this "
			    "token is limited to some skills: it may not answer "
			    "a job", NULL);
		tr->session = slog_name_ok(tr->shown) ? tr->shown : NULL;
	} else if (tr->shown != NULL)
		tr->session = api_stored_name(s, c, tr->shown);
	if (tr->shown != NULL && tr->session == NULL)
		return httpd_respond_err(s, c, 400, "invalid_request_error", "bad "
		    "session name: 1-55 letters, digits, '.', '_' or '-', not "
		    "starting with '.'", NULL);
	*bad = 0;
	return 0;
}

/* see serve_int.h */
void
worker_write(struct wctx *w, const char *p, size_t n)
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

/* see serve_int.h */
void
worker_printf(struct wctx *w, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		worker_write(w, buf, MIN((size_t)n, sizeof(buf) - 1));
}

static void
w_event(void *ctx, const struct agent_event *e)
{
	struct wctx *w = ctx;

	if (w->kind == K_RUN_SSE) {
		if (e->off >= 0)
			worker_printf(w, "id: %lld\n", e->off);
		worker_printf(w, "event: %s\ndata: ", e->type);
		worker_write(w, e->json, e->n);
		worker_write(w, "\n\n", 2);
	} else if ((w->kind == K_OAI_SSE || w->kind == K_RESP_SSE) &&
	    strcmp(e->type, "text") == 0 && e->agent != NULL &&
	    strcmp(e->agent, "entry") == 0 && e->len > 0) {
		if (w->kind == K_RESP_SSE)
			responses_delta(w, e->text, e->len);
		else
			openai_chunk(w, e->text, e->len, NULL);
	}
}

/* see serve_int.h */
void
worker_error_json(struct wctx *w, struct sbuf *sb, const char *msg)
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
	if (!ok && (w->kind == K_OAI_JSON || w->kind == K_RESP_JSON)) {
		worker_error_json(w, &sb, final);
	} else if (w->kind == K_RESP_JSON) {
		responses_json(w, &sb, final, in, out);
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
				if (agent_asked(ag) != NULL)
					json_kstr(&j, "call", agent_asked(ag));
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
	worker_printf(w, "%d application/json %s\n", ok ? 200 : 500,
	    w->tr->shown ? w->tr->shown : "-");
	if (!sb.err)
		worker_write(w, sb.p, sb.len);
	(void)ag;
}

/* see serve_int.h */
void
worker_detach(struct srv *s)
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
		if (HAVE_SERVE_TLS && s->c[i].tls != NULL)
			explicit_bzero(s->c[i].tls, tls_srv_size());
	}
	if (HAVE_SERVE_TLS && s->cred != NULL)
		tls_cred_wipe(s->cred);
	if (HAVE_FLEET && s->fleet != NULL)
		fleet_detach(s->fleet);
}

/* The error reply of a turn that did not start. */
static void ATTR_NORETURN
w_refuse(struct wctx *w, struct agent *ag, int st, const char *msg)
{
	struct sbuf sb;

	sbuf_init(&sb, w->a, 0);
	worker_error_json(w, &sb, msg);
	sbuf_addc(&sb, '\n');
	worker_printf(w, "%d application/json -\n", st);
	worker_write(w, sb.p, sb.len);
	agent_close(ag);
	_exit(0);
}

/* An OpenAI client approves with "yes" (or "y"), naming the call as
 * "yes ID" or by the question its last assistant message quoted
 * ("[call ID]"); 1 and the id in *call, or 0 when text is no yes. */
static int
oai_yes(struct conn *c, const char *text, const char *prev, char **call)
{
	size_t w = strcspn(text, " \t\n");
	const char *p;

	*call = NULL;
	if (!((w == 1 && (*text | 0x20) == 'y') || (w == 3 &&
	    strncasecmp(text, "yes", 3) == 0)))
		return 0;
	text += w + strspn(text + w, " \t\n");
	if (*text != '\0')
		*call = arena_strndup(&c->a, text, strcspn(text, " \t\n"));
	else if (prev != NULL && (p = strstr(prev, "[call ")) != NULL) {
		while (strstr(p + 1, "[call ") != NULL)
			p = strstr(p + 1, "[call ");
		p += 6;
		*call = arena_strndup(&c->a, p, strcspn(p, "]"));
	}
	return 1;
}

/* An approval must name the call the person was shown: a later message
 * on the session may have paused it on another call since. */
static void
check_call(struct wctx *w, struct conn *c, struct agent *ag)
{
	struct turnreq *tr = &c->tr;
	const char *now = agent_asked(ag), *q = agent_question(ag), *msg;
	char *call = tr->call;
	int oai = IS_OAI(c->kind);

	if (!agent_approval(ag) || (oai ? !oai_yes(c, tr->input, tr->prev,
	    &call) : !tr->decide))
		return;		/* a denial may leave the call out */
	if (call != NULL ? now != NULL && strcmp(call, now) == 0 :
	    !oai && !tr->approve) {
		if (oai)
			tr->decide = tr->approve = 1;
		return;
	}
	msg = arena_printf(w->a, "%s: the session waits on call %s now: %s",
	    call == NULL ? (oai ? "name the call you approve: yes CALL" :
	    "'call' is needed: the id of the call you approve") :
	    "refused", now ? now : "?", q);
	w_refuse(w, ag, call == NULL ? 400 : 409, msg ? msg : "refused: the "
	    "session waits on another call");
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
	char why[320], id[160];
	unsigned i;
	int e, resp = c->kind == K_RESP_SSE || c->kind == K_RESP_JSON;

	worker_detach(s);
	mem_set_limit(mem_used() + s->slice);
	memset(&w, 0, sizeof(w));
	w.fd = wfd;
	w.kind = (enum kind)c->kind;
	w.tr = tr;
	w.a = &c->a;
	w.created = time(NULL);
	if (resp)
		responses_id(&w, id, sizeof(id));
	else
		snprintf(id, sizeof(id), "chatcmpl-%lld%u", w.created,
		    (unsigned)getpid());
	w.id = id;
	memset(&o, 0, sizeof(o));
	o.session = tr->session;
	o.ephemeral = tr->session == NULL;
	o.resume = tr->answer;
	o.stream = 1;
	o.only = c->tok >= 0 ? s->only[c->tok] : NULL;
	o.ws_sub = c->tok >= 0 ? s->tag[c->tok] : NULL;
	o.take_answer = HAVE_JOBS ? job_answer : NULL;
	o.on_event = w_event;
	o.ctx = &w;
	if ((ag = agent_new(s->perm, s->cfg, &o, &e, why,
	    sizeof(why))) == NULL) {
		struct sbuf sb;

		sbuf_init(&sb, &c->a, 0);
		worker_error_json(&w, &sb, e == -E_NOMEM ? "the turn's memory "
		    "budget ran out while starting" : why);
		sbuf_addc(&sb, '\n');
		worker_printf(&w, "%d application/json -\n", e == -E_BUSY ? 409 :
		    e == -E_INVAL ? 400 : 500);
		worker_write(&w, sb.p, sb.len);
		_exit(0);
	}
	if (tr->answer && (agent_question(ag) == NULL || tr->decide !=
	    agent_approval(ag)))
		w_refuse(&w, ag, 409, agent_question(ag) == NULL ? "the session "
		    "waits on no question" : tr->decide ? "the session waits on "
		    "an answer (input)" : "the session waits on an approval "
		    "(approve)");
	/* An OpenAI client answers a question with its next message. */
	if (IS_OAI(c->kind) && agent_question(ag) != NULL)
		tr->answer = 1;
	if (tr->answer)
		check_call(&w, c, ag);
	for (i = 0; i < tr->nseed && !tr->answer; i++)
		if (agent_seed(ag, tr->seed[i].role, tr->seed[i].s,
		    tr->seed[i].n) != 0)
			break;
	if (c->kind == K_RUN_SSE || c->kind == K_OAI_SSE || c->kind ==
	    K_RESP_SSE)
		worker_printf(&w, "200 text/event-stream %s\n", tr->shown ?
		    tr->shown : "-");
	if (c->kind == K_RESP_SSE)
		responses_start(&w);
	if (HAVE_ORCH)
		agent_entry(ag, tr->agent, 0);
	agent_usage(ag, &in0, &out0, &cost);
	st = tr->decide ? agent_decide(ag, tr->approve, tr->reason, &final) :
	    tr->answer ? agent_reply(ag, tr->input, tr->inlen, &final) :
	    agent_turn(ag, tr->input, tr->inlen, &final);
	agent_usage(ag, &in1, &out1, &cost);
	/* A response may go on by previous_response_id alone, with no
	 * message quoting the call: its yes names the call. */
	if (IS_OAI(c->kind) && st == AG_WAIT && agent_approval(ag))
		final = arena_printf(&c->a, "%s [call %s] Reply \"yes%s%s\" to "
		    "approve it; anything else denies it.", final,
		    agent_asked(ag), resp ? " " : "", resp ? agent_asked(ag) :
		    "");
	/* Offline, the text is the answer (the notice that no skill
	 * matches, or what the skill's script said): not a server fault. */
	if (IS_OAI(c->kind) && st == AG_FAIL && agent_llm(ag) == NULL)
		st = AG_OK;
	if (c->kind == K_RUN_SSE)
		worker_printf(&w, "event: done\ndata: {\"session\":\"%s\","
		    "\"status\":\"%s\"}\n\n", tr->shown ? tr->shown : "",
		    status_names[st]);
	else if (c->kind == K_OAI_SSE)
		openai_end(&w, st, final, in1 - in0, out1 - out0);
	else if (c->kind == K_RESP_SSE)
		responses_end(&w, st, final, in1 - in0, out1 - out0);
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
		return httpd_respond_err(s, c, 503, "server_error", "cannot start "
		    "a worker: out of file descriptors",
		    "Retry-After: " RETRY_AFTER "\r\n");
	if ((pid = fork()) < 0) {
		close(p[0]);
		close(p[1]);
		return httpd_respond_err(s, c, 503, "server_error", "cannot start "
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

/* see serve_int.h */
void
worker_run_queue(struct srv *s)
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

/* see serve_int.h */
int
worker_turn(struct srv *s, struct conn *c, enum api api)
{
	int bad;

	if (parse_turn(s, c, api, &bad) != 0 || bad)
		return 0;
	if (got_term)
		return httpd_respond_err(s, c, 503, "server_error", "the server is "
		    "stopping", NULL);
	if (s->turns < s->cfg->serve.max_turns)
		return start_turn(s, c);
	if (s->queued >= s->cfg->serve.queue) {
		c->close = 1;
		return httpd_respond_err(s, c, 503, "server_error", "busy: every "
		    "turn slot and the queue are full", "Retry-After: "
		    RETRY_AFTER "\r\n");
	}
	c->st = C_QUEUED;
	c->seq = s->seq++;
	s->queued++;
	return 0;
}

/* --- relaying a worker */

/* see serve_int.h */
int
worker_relay_head(struct srv *s, struct conn *c)
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
	return httpd_head(c, st, ctype, -1, extra);
}

/* see serve_int.h */
void
worker_relay_died(struct srv *s, struct conn *c, int wst)
{
	char msg[160], b[480];
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
		(void)httpd_respond_err(s, c, 500, "server_error", msg, NULL);
		return;
	}
	if (c->kind == K_RUN_SSE)
		n = snprintf(b, sizeof(b), "event: error\ndata: {\"type\":"
		    "\"error\",\"message\":\"%s\"}\n\nevent: done\ndata: "
		    "{\"status\":\"failed\"}\n\n", msg);
	else if (c->kind == K_OAI_SSE)
		n = snprintf(b, sizeof(b), "data: {\"error\":{\"message\":"
		    "\"%s\",\"type\":\"server_error\"}}\n\n", msg);
	else if (c->kind == K_RESP_SSE)
		n = snprintf(b, sizeof(b), "event: error\ndata: {\"type\":"
		    "\"error\",\"code\":\"server_error\",\"message\":\"%s\","
		    "\"param\":null,\"error\":{\"message\":\"%s\",\"type\":"
		    "\"server_error\"}}\n\n", msg, msg);
	else {
		c->close = 1;	/* a cut JSON reply: no last chunk */
		c->chunked = 0;
		return;
	}
	(void)httpd_chunk(c, b, (size_t)n);
}
