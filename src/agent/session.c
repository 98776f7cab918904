/* session.c - the session: compaction, resume by replaying the log, and a
 * paused turn's frames rebuilt from it. */

#include "agent/agent.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_int.h"
#include "net/net.h"

/* A string member of obj, copied into a; NULL when missing. */
char *
session_str(const struct json_doc *d, struct arena *a, int obj, const char *key,
    size_t *n)
{
	char *s;
	size_t len;

	if (json_str(d, a, json_get(d, obj, key), &s, &len) != 0)
		return NULL;
	if (n != NULL)
		*n = len;
	return s;
}

/* --- compaction */

enum agent_status
session_compact(struct agent *ag, const char **out)
{
	struct llm_msg *m, umsg;
	struct llm_req q;
	struct llm_reply r;
	struct arena *next;
	struct sbuf t;
	struct ev ev;
	unsigned i, n = ag->nitems;
	long long at;
	const char *ck;
	int e;

	*out = NULL;
	if (ag->msgs == NULL) {
		*out = "nothing to compact";
		return AG_OK;
	}
	if (ag->cl == NULL) {
		*out = "no model is configured: compaction needs one";
		return AG_FAIL;
	}
	sbuf_init(&t, &ag->turn, 0);
	if (ag->summary != NULL)
		sbuf_printf(&t, "Earlier summary:\n%s\n\n", ag->summary);
	for (m = ag->msgs; m != NULL; m = m->next) {
		size_t k = m->text_len > 2000 ? 2000 : m->text_len;

		sbuf_printf(&t, "%s: %.*s%s\n", m->role == LLM_USER ? "User" :
		    m->role == LLM_TOOL ? "Tool result" : "Assistant", (int)k,
		    m->text, k < m->text_len ? " [...]" : "");
		for (i = 0; i < m->ncalls; i++)
			sbuf_printf(&t, "  (called %s %.*s)\n", m->calls[i].name,
			    (int)MIN(m->calls[i].args_len, 500),
			    m->calls[i].args);
	}
	if (t.err)
		return AG_NOMEM;
	memset(&umsg, 0, sizeof(umsg));
	umsg.role = LLM_USER;
	umsg.text = t.p;
	umsg.text_len = t.len;
	memset(&q, 0, sizeof(q));
	q.model = ag->cfg->model;
	q.system = "Summarize this conversation between a user and an "
	    "assistant running on a device, for the assistant to continue "
	    "from. Keep facts, numbers, file names, decisions and open "
	    "questions; drop chatter. Plain text, at most 300 words.";
	q.msgs = &umsg;
	ag->calls++;
	if ((e = llm_send(ag->cl, &ag->turn, &q, NULL, &r)) != 0) {
		snprintf(ag->why, sizeof(ag->why), "compaction failed: %s",
		    llm_why(ag->cl));
		*out = ag->why;
		return e == -E_NOMEM ? AG_NOMEM : llm_timed_out(ag->cl) ?
		    AG_LIMIT : AG_FAIL;
	}
	frame_usage(ag, r.in_tokens, r.out_tokens, llm_cached(ag->cl));
	/* Semi-space: the summary and what stays go to the other arena. */
	next = &ag->sess[ag->cur ^ 1];
	arena_reset(next);
	ag->summary = arena_strndup(next, r.text, r.text_len);
	for (i = 0; i < ag->nactivated; i++)
		ag->activated[i] = arena_strdup(next, ag->activated[i]);
	llm_reply_release(&r);
	if (ag->summary == NULL)
		return AG_NOMEM;
	arena_reset(sess(ag));
	ag->cur ^= 1;
	ag->msgs = NULL;
	ag->tail = &ag->msgs;
	ag->nitems = 0;
	ag->bytes = 0;
	ev_begin(ag, &ev, "compaction");
	json_key(&ev.w, "items");
	json_put_uint(&ev.w, n);
	json_kstr(&ev.w, "summary", ag->summary);
	json_key(&ev.w, "activated");
	json_begin_arr(&ev.w);
	for (i = 0; i < ag->nactivated; i++)
		json_put_str(&ev.w, ag->activated[i]);
	json_end_arr(&ev.w);
	at = ag->log.off;
	ev_end(ag, &ev, 1);
	/* Later resumes replay from this event: nothing before it counts
	 * but the totals, which the checkpoint keeps. */
	if (ag->logging && ag->log.off > at && (ck = arena_printf(&ag->turn,
	    "%lu %lu", ag->in_tok, ag->out_tok)) != NULL)
		(void)slog_ckpt_write(&ag->log, &ag->turn, at, ck);
	*out = arena_printf(&ag->turn, "compacted %u items into a summary "
	    "of %zu bytes", n, strlen(ag->summary));
	return AG_OK;
}

int
session_needs_compaction(const struct agent *ag)
{
	const struct cfg *c = ag->cfg;

	if (c->limits.compact_after != 0 && ag->nitems >= c->limits.compact_after)
		return 1;
	/* about 4 bytes a token; compact at 80% of the window */
	return c->limits.context_window != 0 &&
	    ag->bytes / 4 > c->limits.context_window / 10 * 8;
}

/* --- sessions: resume by replaying the log */

struct replay {
	struct agent	*ag;
	struct llm_msg	**turn_tail, *turn_mark;
	unsigned	 open_turn;	/* a user event without turn_end */
	int		 waiting;	/* it paused on a question */
	int		 approval;	/* ...that is an approval */
	const char	*question;
	const char	*asked;		/* its call's id */
	int		 err;
};

/* An assistant event's "calls" into m, strings in a. */
static int
read_calls(const struct json_doc *d, struct arena *a, struct llm_msg *m)
{
	int t = json_get(d, 0, "calls"), c;
	unsigned i;

	if (t < 0 || d->t[t].type != JSON_ARR || d->t[t].size == 0)
		return 0;
	m->ncalls = (unsigned)d->t[t].size;
	if ((m->calls = arena_zalloc(a, m->ncalls * sizeof(*m->calls))) ==
	    NULL)
		return -E_NOMEM;
	for (i = 0; i < m->ncalls; i++) {
		c = json_at(d, t, i);
		m->calls[i].id = session_str(d, a, c, "id", NULL);
		m->calls[i].name = session_str(d, a, c, "name", NULL);
		m->calls[i].args = session_str(d, a, c, "args",
		    &m->calls[i].args_len);
		if (m->calls[i].id == NULL || m->calls[i].name == NULL ||
		    m->calls[i].args == NULL)
			return -E_PARSE;
	}
	return 0;
}

static char *
jstr(struct replay *rp, const struct json_doc *d, int obj, const char *key,
    size_t *n)
{
	return session_str(d, sess(rp->ag), obj, key, n);
}

static int
on_replay(void *ctx, const struct json_doc *d, unsigned line)
{
	struct replay *rp = ctx;
	struct agent *ag = rp->ag;
	struct llm_msg *m;
	long long v;
	char *type, *s, *agent;
	size_t n;
	unsigned i;
	int t;

	(void)line;
	if (json_str(d, &ag->turn, json_get(d, 0, "type"), &type, NULL) != 0)
		return 0;
	if (json_int(d, json_get(d, 0, "turn"), &v) == 0 && v > 0 &&
	    (unsigned)v > ag->turn_no)
		ag->turn_no = (unsigned)v;
	agent = jstr(rp, d, 0, "agent", NULL);
	if (strcmp(type, "user") == 0) {
		rp->open_turn = ag->turn_no;
		rp->turn_tail = ag->tail;
		rp->turn_mark = *ag->tail;
		if ((s = jstr(rp, d, 0, "text", &n)) != NULL && s[0] != '/')
			frame_msg(ag, sess(ag), &ag->tail, LLM_USER, s, n);
	} else if (strcmp(type, "turn_end") == 0 || strcmp(type,
	    "turn_abort") == 0) {
		s = strcmp(type, "turn_end") == 0 ? jstr(rp, d, 0, "status",
		    NULL) : "aborted";
		if (s != NULL && strcmp(s, "waiting") == 0) {
			rp->waiting = 1;	/* open until answered */
			return 0;
		}
		if (s != NULL && strcmp(s, "ok") != 0 &&
		    rp->turn_tail != NULL) {
			*rp->turn_tail = rp->turn_mark;	/* as agent_turn */
			ag->tail = rp->turn_tail;
		}
		rp->open_turn = 0;
		rp->waiting = 0;
	} else if (strcmp(type, "input_requested") == 0) {
		rp->question = jstr(rp, d, 0, "question", NULL);
		rp->asked = jstr(rp, d, 0, "id", NULL);
		rp->approval = json_eq(d, json_get(d, 0, "kind"), "approval");
	} else if (strcmp(type, "answer") == 0) {
		rp->waiting = 0;
	} else if (strcmp(type, "assistant") == 0 && agent != NULL &&
	    strcmp(agent, "entry") == 0) {
		if ((s = jstr(rp, d, 0, "text", &n)) == NULL)
			s = "", n = 0;
		if ((m = frame_msg(ag, sess(ag), &ag->tail, LLM_ASSISTANT, s,
		    n)) == NULL)
			return -E_NOMEM;
		if ((t = read_calls(d, sess(ag), m)) != 0)
			return t;
	} else if (strcmp(type, "tool_end") == 0 && agent != NULL &&
	    strcmp(agent, "entry") == 0) {
		if ((s = jstr(rp, d, 0, "output", &n)) == NULL)
			s = "", n = 0;
		if ((m = frame_msg(ag, sess(ag), &ag->tail, LLM_TOOL, s, n)) ==
		    NULL)
			return -E_NOMEM;
		m->call_id = jstr(rp, d, 0, "id", NULL);
		m->tool_name = jstr(rp, d, 0, "name", NULL);
		if (json_bool(d, json_get(d, 0, "ok"), &t) == 0)
			m->is_error = !t;
		if (m->call_id == NULL)
			return -E_PARSE;
		if (!m->is_error && m->tool_name != NULL &&
		    strcmp(m->tool_name, "activate_skill") == 0 &&
		    ag->nactivated < ARRAY_LEN(ag->activated) &&
		    (s = jstr(rp, d, 0, "skill", NULL)) != NULL)
			ag->activated[ag->nactivated++] = s;
	} else if (strcmp(type, "compaction") == 0) {
		ag->msgs = NULL;
		ag->tail = &ag->msgs;
		ag->nitems = 0;
		ag->bytes = 0;
		ag->summary = jstr(rp, d, 0, "summary", NULL);
		ag->nactivated = 0;
		t = json_get(d, 0, "activated");
		for (i = 0; t >= 0 && i < (unsigned)d->t[t].size &&
		    i < ARRAY_LEN(ag->activated); i++) {
			char *a;

			if (json_str(d, sess(ag), json_at(d, t, i), &a,
			    NULL) == 0)
				ag->activated[ag->nactivated++] = a;
		}
		rp->turn_tail = NULL;
	} else if (strcmp(type, "usage") == 0) {
		if (json_int(d, json_get(d, 0, "input_tokens"), &v) == 0)
			ag->in_tok += (unsigned long)v;
		if (json_int(d, json_get(d, 0, "output_tokens"), &v) == 0)
			ag->out_tok += (unsigned long)v;
	}
	return ag->stop == AG_NOMEM ? -E_NOMEM : 0;
}

/* "IN OUT": the token totals of a checkpoint. */
static int
sscan_totals(const char *s, unsigned long *in, unsigned long *out)
{
	char *end;

	*in = strtoul(s, &end, 10);
	if (end == s || *end != ' ')
		return -E_PARSE;
	s = end + 1;
	*out = strtoul(s, &end, 10);
	return end == s || *end != '\0' ? -E_PARSE : 0;
}

int
session_resume(struct agent *ag, char *why, size_t whylen)
{
	struct replay rp;
	const char *ck;
	long long from;
	unsigned bad;
	int torn, e;

	memset(&rp, 0, sizeof(rp));
	rp.ag = ag;
	/* From the last compaction when its checkpoint holds up. */
	if ((from = slog_ckpt_read(&ag->log, &ag->turn, "{\"type\":"
	    "\"compaction\",", &ck)) > 0 && sscan_totals(ck, &ag->in_tok,
	    &ag->out_tok) != 0)
		from = 0;
	e = slog_replay(&ag->log, from, &ag->turn, on_replay, &rp, &torn,
	    &bad);
	arena_reset(&ag->turn);
	if (e != 0) {
		snprintf(why, whylen, "session %s: cannot resume: %s",
		    ag->session, err_str(e));
		return e;
	}
	ag->replay_from = from;
	if (rp.open_turn != 0 && rp.waiting && !torn) {
		/* Paused on a question: it stays open for agent_answer. */
		ag->waiting = 1;
		ag->question = rp.question != NULL ? rp.question : "";
		ag->asked = rp.asked;
		ag->approval = rp.approval;
		ag->wait_tail = rp.turn_tail;
		ag->wait_mark = rp.turn_mark;
	} else if (rp.open_turn != 0 || torn) {
		struct ev ev;

		/* Killed mid-turn: drop the half turn from the model's
		 * view; the log keeps it, marked. */
		if (rp.turn_tail != NULL) {
			*rp.turn_tail = rp.turn_mark;
			ag->tail = rp.turn_tail;
			for (ag->nitems = 0, rp.turn_mark = ag->msgs;
			    rp.turn_mark != NULL; rp.turn_mark =
			    rp.turn_mark->next)
				ag->nitems++;
		}
		ev_begin(ag, &ev, "turn_abort");
		json_kstr(&ev.w, "reason",
		    torn ? "the log ends in a torn line: "
		    "the process was killed while writing" :
		    "the process ended in the middle of this turn");
		ev_end(ag, &ev, 1);
		slog_sync(&ag->log);
		arena_reset(&ag->turn);
	}
	(void)bad;
	return 0;
}

/* --- a paused turn, resumed: its frames rebuilt from the log
 *
 * The entry agent's messages are in the conversation already (replay
 * keeps a waiting turn's); the skill agents' are rebuilt here from the
 * events of the open turn, so the model is not asked again for any step
 * it took. */

struct rebuild {
	struct agent	*ag;
	struct frame	*fs;
	int		 top;		/* -1: no frame yet */
	const char	*command;	/* a .command.md turn's text */
	const char	*user;		/* the turn's input */
	const char	*asked;		/* the question's call id */
	int		 err;
};

/* A skill agent's frame at fs[i], its task as first message. */
static int
rb_push(struct rebuild *rb, unsigned i, const char *skill, const char *task,
    unsigned depth)
{
	const struct skill *sk = skill_find(&rb->ag->reg, skill);

	if (sk == NULL)
		return -E_NOENT;	/* removed while paused */
	if (frame_skill(rb->ag, &rb->fs[i], sk, task, depth, i == 0 ?
	    DEEPEST(rb->ag) : MAXD(&rb->fs[i - 1])) != 0)
		return -E_NOMEM;
	rb->top = (int)i;
	return 0;
}

static int
on_rebuild(void *ctx, const struct json_doc *d, unsigned line)
{
	struct rebuild *rb = ctx;
	struct agent *ag = rb->ag;
	struct arena *a = &ag->turn;
	struct frame *f = rb->top >= 0 ? &rb->fs[rb->top] : NULL;
	struct llm_msg *m;
	char *type, *agent, *s, *to;
	size_t n;
	int ok, e = 0;

	(void)line;
	if ((type = session_str(d, a, 0, "type", NULL)) == NULL)
		return 0;
	agent = session_str(d, a, 0, "agent", NULL);
	if (strcmp(type, "user") == 0 || strcmp(type, "turn_abort") == 0 ||
	    (strcmp(type, "turn_end") == 0 && ((s = session_str(d, a, 0,
	    "status", NULL)) == NULL || strcmp(s, "waiting") != 0))) {
		rb->top = -1;		/* a new turn, or one that ended */
		rb->command = rb->asked = NULL;
		rb->user = strcmp(type, "user") == 0 ? session_str(d, a, 0,
		    "text", NULL) : NULL;
	} else if (strcmp(type, "command") == 0) {
		rb->command = session_str(d, a, 0, "text", NULL);
	} else if (strcmp(type, "agent_start") == 0 && rb->top < 0 &&
	    agent != NULL) {
		if (strcmp(agent, "entry") == 0) {
			f = &rb->fs[0];
			memset(f, 0, sizeof(*f));
			f->name = "entry";
			f->maxd = DEEPEST(ag);
			f->a = sess(ag);
			f->head = &ag->msgs;
			f->tail = &ag->tail;
			e = frame_setup(ag, f);
			rb->top = 0;
		} else			/* a .command.md's, or --agent */
			e = rb_push(rb, 0, agent, rb->command != NULL ?
			    rb->command : rb->user != NULL ? rb->user : "", 1);
	} else if (strcmp(type, "handoff") == 0 && f != NULL &&
	    (to = session_str(d, a, 0, "to", NULL)) != NULL) {
		if ((s = session_str(d, a, 0, "task", NULL)) != NULL) {
			if (rb->top + 1 > MAX_DEPTH)
				return -E_PARSE;
			if (HAVE_ORCH && f->orch != NULL)
				orch_replay_step(f, d, a);
			e = rb_push(rb, (unsigned)rb->top + 1, to, s,
			    f->depth + 1);
		} else if (rb->top > 0) {
			rb->top--;		/* handed back */
			/* A failed step's: the orchestrate event after it
			 * starts a new plan. */
			f = &rb->fs[rb->top];
			if (HAVE_ORCH && f->orch != NULL && (s = session_str(d,
			    a, 0, "result", NULL)) != NULL)
				(void)orch_returned(ag, f, s, 0);
		}
	} else if (HAVE_ORCH && strcmp(type, "orchestrate") == 0 && f != NULL &&
	    f->orch != NULL && agent != NULL && strcmp(agent, f->name) == 0) {
		e = orch_replay(ag, f, d, a);
	} else if (f == NULL || f->skill == NULL || agent == NULL ||
	    strcmp(agent, f->name) != 0) {
		;	/* the entry agent's are in the conversation */
	} else if (strcmp(type, "assistant") == 0) {
		if ((s = session_str(d, a, 0, "text", &n)) == NULL)
			s = "", n = 0;
		if ((m = frame_msg(ag, a, f->tail, LLM_ASSISTANT, s, n)) ==
		    NULL)
			return -E_NOMEM;
		if ((e = read_calls(d, a, m)) == 0 && m->ncalls > 0) {
			f->pending = m;
			f->next = 0;
		}
	} else if (strcmp(type, "tool_end") == 0) {
		if ((s = session_str(d, a, 0, "output", &n)) == NULL)
			s = "", n = 0;
		if ((m = frame_msg(ag, a, f->tail, LLM_TOOL, s, n)) == NULL)
			return -E_NOMEM;
		m->call_id = session_str(d, a, 0, "id", NULL);
		m->tool_name = session_str(d, a, 0, "name", NULL);
		if (json_bool(d, json_get(d, 0, "ok"), &ok) == 0)
			m->is_error = !ok;
		if (m->tool_name != NULL && !m->is_error)
			gate_call_ended(f, m->tool_name, m->text);
		f->next++;
	}
	if (strcmp(type, "input_requested") == 0)
		rb->asked = session_str(d, a, 0, "id", NULL);
	return e;
}

/* The frames of the paused turn, from the log; the question's call is
 * fs[*top]'s next. */
int
session_rebuild(struct agent *ag, struct frame *fs, unsigned *top)
{
	struct rebuild rb;
	struct arena tok;
	struct frame *f;
	struct llm_msg *m;
	unsigned bad, i;
	int torn, e;

	memset(&rb, 0, sizeof(rb));
	rb.ag = ag;
	rb.fs = fs;
	rb.top = -1;
	arena_init(&tok, "replay");
	e = slog_replay(&ag->log, ag->replay_from, &tok, on_rebuild, &rb,
	    &torn, &bad);
	arena_reset(&tok);
	if (e != 0)
		return e;
	if (rb.top < 0 || rb.asked == NULL)
		return -E_PARSE;
	/* The entry agent's place: its last reply with calls, and how many
	 * of them have results. */
	if (fs[0].skill == NULL) {
		for (m = ag->msgs; m != NULL; m = m->next)
			if (m->role == LLM_ASSISTANT && m->ncalls > 0) {
				fs[0].pending = m;
				fs[0].next = 0;
			} else if (m->role == LLM_TOOL && fs[0].pending != NULL)
				fs[0].next++;
	}
	f = &fs[rb.top];
	if (f->pending == NULL || f->next >= f->pending->ncalls ||
	    strcmp(f->pending->calls[f->next].id, rb.asked) != 0)
		return -E_PARSE;
	/* The handoffs under way are timed from here: the log has no clock
	 * for when they started. */
	for (i = 0; i < (unsigned)rb.top; i++)
		fs[i].t0 = net_now_ms();
	*top = (unsigned)rb.top;
	return 0;
}
