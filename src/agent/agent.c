/* agent.c - the turn: the frame loop, a model step, running the calls of
 * a reply. */

#include "agent/agent.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "agent/agent_int.h"
#include "net/net.h"

#define REPEAT_REFUSE	3		/* the 3rd identical call is refused */
#define REPEAT_STOP	5		/* the 5th stops the turn */

/* --- limits */

/* The turn's wall time: checked before each model call and each tool. */
static int
over_time(struct agent *ag)
{
	if (ag->stop != AG_OK)
		return 1;
	if (ag->cfg->limits.time_s == 0 || net_now_ms() <= ag->deadline)
		return 0;
	snprintf(ag->why, sizeof(ag->why), "stopped: the turn took more than "
	    "%u s (limits.time)", ag->cfg->limits.time_s);
	ag->stop = AG_LIMIT;
	ev_error(ag, ag->why);
	return 1;
}

static int
over_limits(struct agent *ag)
{
	const struct cfg *c = ag->cfg;

	if (over_time(ag))
		return 1;
	if (c->limits.turns != 0 && ag->calls >= c->limits.turns)
		snprintf(ag->why, sizeof(ag->why), "stopped: %u model calls in "
		    "this turn (limits.turns)", ag->calls);
	else if (c->limits.tokens != 0 && ag->in_tok + ag->out_tok >=
	    c->limits.tokens)
		snprintf(ag->why, sizeof(ag->why), "stopped: %lu tokens used, "
		    "the limit is %lu (limits.tokens)", ag->in_tok + ag->out_tok,
		    c->limits.tokens);
	else if (c->limits.budget > 0 && ag->cost >= c->limits.budget)
		snprintf(ag->why, sizeof(ag->why), "stopped: spent %.4f, the "
		    "budget is %.4f (limits.budget)", ag->cost,
		    c->limits.budget);
	else
		return 0;
	ag->stop = AG_LIMIT;
	ev_error(ag, ag->why);
	return 1;
}

/* Identical calls in one turn: counted by a hash of name and arguments. */
static unsigned
repeat_count(struct agent *ag, const struct llm_call *c)
{
	uint64_t h = 0xcbf29ce484222325ull;
	const char *s;
	unsigned i;

	for (s = c->name; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	h = (h ^ 0xff) * 0x100000001b3ull;
	for (i = 0; i < c->args_len; i++)
		h = (h ^ (unsigned char)c->args[i]) * 0x100000001b3ull;
	for (i = 0; i < ag->nhashes; i++)
		if (ag->hashes[i] == h)
			return ++ag->counts[i];
	if (ag->nhashes < MAX_HASHES) {
		ag->hashes[ag->nhashes] = h;
		ag->counts[ag->nhashes++] = 1;
	}
	return 1;
}

/* --- running tools */


void
agent_tool_env(struct agent *ag, const struct frame *f, struct tool_env *env)
{
	long long left;

	memset(env, 0, sizeof(*env));
	env->reg = &ag->reg;
	env->skill = f->skill;
	env->activated = ag->activated;
	env->nactivated = ag->nactivated;
	env->workspace = ag->workspace;
	env->base = &ag->base;
	env->host_allow = ag->host_allow;
	env->host_deny = ag->host_deny;
	env->create_skill = ag->cfg->create_skill;
	env->create_dir = ag->cfg->nskills > 0 ?
	    ag->cfg->skills[ag->cfg->nskills - 1] : NULL;
	env->timeout_ms = ag->cfg->limits.tool_timeout_s * 1000;
	/* A script may not outlive the turn (limits.time). */
	left = ag->deadline - net_now_ms();
	if (ag->cfg->limits.time_s != 0 && left < (long long)env->timeout_ms)
		env->timeout_ms = (unsigned)MAX(left, 1);
	env->out_cap = ag->cfg->limits.output_cap;
}

/* The workspace may grow by limits.workspace bytes in a turn (a script
 * filling the flash of a router is a turn gone wrong): past that the turn
 * stops. Nothing is removed: the files are the person's to judge. */
static void
workspace_grown(struct agent *ag)
{
	unsigned long long now;

	if (ag->cfg->limits.workspace == 0 ||
	    sbx_disk_usage(ag->workspace, &now) == -E_IO ||
	    now <= ag->ws_start + ag->cfg->limits.workspace)
		return;
	snprintf(ag->why, sizeof(ag->why), "stopped: the workspace grew by "
	    "%llu bytes in this turn, more than limits.workspace (%zu); "
	    "nothing was removed from %s", now - ag->ws_start,
	    ag->cfg->limits.workspace, ag->workspace);
	ag->stop = AG_LIMIT;
	ev_error(ag, ag->why);
}

/* Was the tool offered to this agent? Only those run: permissions come
 * from the agent, never from what the model names. Of an index (more
 * than SKILL_FULL_MAX skills) only the first handoffs are listed; one to
 * any other skill is offered on the same terms (list_skills finds it). */
static int
offered(const struct agent *ag, const struct frame *f, const char *name)
{
	const size_t n = strlen(HANDOFF_PREFIX);
	const struct skill *sk;
	unsigned i;

	for (i = 0; i < f->ntools; i++)
		if (strcmp(f->tools[i].name, name) == 0)
			return 1;
	return ag->reg.ix != NULL && f->handoffs && !f->tools_off &&
	    strncmp(name, HANDOFF_PREFIX, n) == 0 &&
	    (sk = skill_find(&ag->reg, name + n)) != NULL &&
	    frame_handoff_ok(ag, f, sk->name, sk->flags);
}

/* Run call c of frame fs[*top]. A handoff does not run here: it sets up
 * the skill agent's frame above and returns 1 (the engine runs it and
 * finishes the call when it is done); anything else returns 0 with
 * out filled. */
static int
run_call(struct agent *ag, struct frame *fs, unsigned *top,
    const struct llm_call *c, struct tool_out *out)
{
	struct frame *f = &fs[*top];
	const struct tool_ext *x;
	struct tool_env env;
	unsigned rep;
	int id, e, writes;

	memset(out, 0, sizeof(*out));
	rep = repeat_count(ag, c);
	if (rep >= REPEAT_STOP) {
		snprintf(ag->why, sizeof(ag->why), "stopped: the model made "
		    "the same %s call %u times", c->name, rep);
		ag->stop = AG_FAIL;
		out->text = "refused: repeated call";
		out->is_error = 1;
		return 0;
	}
	if (rep >= REPEAT_REFUSE) {
		out->text = "refused: this exact call was already made twice "
		    "in this turn; use its earlier result or change the "
		    "arguments";
		out->is_error = 1;
		return 0;
	}
	if (!offered(ag, f, c->name)) {
		out->text = arena_printf(&ag->turn, "there is no tool named "
		    "'%s' here (the tools you were given are the ones you may "
		    "call)", c->name);
		out->is_error = 1;
		return 0;
	}
	if (c->bad_args) {
		out->text = arena_printf(&ag->turn, "the arguments are not "
		    "valid JSON%s (got: %.200s); call %s again with a JSON "
		    "object matching its schema", c->bad_args == 2 ? ": a key "
		    "appears twice in one object" : "", c->args, c->name);
		out->is_error = 1;
		return 0;
	}
	if (HAVE_ORCH && f->orch != NULL && f->next > 0) {
		out->text = "not run: one tool a step; call it again after "
		    "reading the result of the first";
		out->is_error = 1;
		return 0;
	}
	if (gate(ag, f, c, out))
		return 0;
	if (strncmp(c->name, HANDOFF_PREFIX, strlen(HANDOFF_PREFIX)) == 0) {
		const char *to = c->name + strlen(HANDOFF_PREFIX);
		const struct skill *sk = skill_find(&ag->reg, to);
		struct frame *sub = &fs[*top + 1];
		struct json_doc d;
		char *task = NULL;

		if (sk == NULL || f->depth >= MAXD(f) ||
		    (sk->flags & SKILL_NO_MODEL) ||
		    !frame_may_handoff(ag, f->name, to)) {
			out->text = "no such skill agent here";
			out->is_error = 1;
			return 0;
		}
		if (json_parse(&ag->turn, c->args, c->args_len, 256, &d) != 0 ||
		    json_str(&d, &ag->turn, json_get(&d, 0, "task"), &task,
		    NULL) != 0) {
			out->text = "handoff needs {\"task\": \"...\"}";
			out->is_error = 1;
			return 0;
		}
		if (HAVE_ORCH && f->orch != NULL && (task = orch_refs(ag, f,
		    task)) == NULL) {
			ag->stop = AG_NOMEM;
			return 0;
		}
		ev_handoff(ag, f->name, sk->name, 0, task, 0, NULL);
		if (frame_skill(ag, sub, sk, task, f->depth + 1, MAXD(f))
		    != 0) {
			ag->stop = AG_NOMEM;
			return 0;
		}
		(*top)++;
		ev_simple(ag, "agent_start", "agent", sub->name);
		return 1;
	}
	for (x = EXT(ag); x != NULL; x = x->next)
		if ((e = x->call(x->ctx, &ag->turn, f->name, c->name, c->args,
		    c->args_len, out)) <= 0) {
			if (e < 0)
				ag->stop = AG_NOMEM;
			else
				gate_call_hooked(ag, f, c, out);
			return 0;
		}
	if ((id = tool_find(c->name)) < 0 ||
	    (id == T_HAND_BACK && f->skill == NULL)) {
		out->text = arena_printf(&ag->turn, "there is no tool named "
		    "'%s'", c->name);
		out->is_error = 1;
		return 0;
	}
	if (id == T_ASK_USER) {
		gate_ask_user(ag, f, c, out);
		return 0;
	}
	agent_tool_env(ag, f, &env);
	writes = (id == T_RUN_COMMAND_LINE || id == T_RUN_SKILL_SCRIPT ||
	    id == T_WRITE_FILE) && ag->workspace != NULL;
	/* Measured once a turn, and only in turns that may write there. */
	if (writes && !ag->ws_measured) {
		(void)sbx_disk_usage(ag->workspace, &ag->ws_start);
		ag->ws_measured = 1;
	}
	if ((e = tool_call(&env, &ag->turn, (enum tool_id)id, c->args,
	    c->args_len, out)) != 0) {
		ag->stop = AG_NOMEM;
		return 0;
	}
	if (writes)
		workspace_grown(ag);
	gate_call_hooked(ag, f, c, out);
	if (!out->is_error)
		gate_call_ended(f, c->name, out->text);
	if (out->activated != NULL && ag->nactivated <
	    ARRAY_LEN(ag->activated)) {
		unsigned i;

		for (i = 0; i < ag->nactivated; i++)
			if (strcmp(ag->activated[i], out->activated) == 0)
				break;
		if (i == ag->nactivated)
			ag->activated[ag->nactivated++] = arena_strdup(sess(ag),
			    out->activated);
	}
	return 0;
}

/* --- streaming */

struct stream_ctx {
	struct agent	*ag;
	const char	*agent;
};

static void
on_delta(void *ctx, const char *s, size_t n)
{
	struct stream_ctx *sc = ctx;
	struct agent *ag = sc->ag;
	struct arena_mark m = arena_mark(&ag->turn);
	struct ev e;

	ev_begin(ag, &e, "text");
	json_kstr(&e.w, "agent", sc->agent);
	json_key(&e.w, "delta");
	json_put_strn(&e.w, s, n);
	e.t.agent = sc->agent;
	e.t.text = n > 0 ? s : "";
	e.t.len = n;
	ev_end(ag, &e, 0);
	arena_reset_to(&ag->turn, m);
}

/* Run one agent until it answers, hands back, or a limit stops it. */
/* Log and keep the result of call c of frame f, started at t0. */
static void
call_done(struct agent *ag, struct frame *f, const struct llm_call *c,
    struct tool_out *out, long long t0)
{
	struct llm_msg *tm;

	if (out->text == NULL)
		out->text = "", out->len = 0;
	if (out->len == 0)
		out->len = strlen(out->text);
	if ((tm = frame_msg(ag, f->a, f->tail, LLM_TOOL, out->text,
	    out->len)) == NULL)
		return;
	tm->call_id = c->id;
	tm->tool_name = c->name;
	tm->is_error = out->is_error;
	ev_tool_end(ag, f->name, c->id, c->name, out, net_now_ms() - t0);
	if (HAVE_ORCH && f->orch != NULL && out->is_error && ag->stop ==
	    AG_OK)
		orch_call_failed(ag, f);
}

/* Ask frame f's model for its next step: an answer (the frame is done)
 * or calls to run. */
static void
model_step(struct agent *ag, struct frame *f, struct llm_sink *sink)
{
	struct llm_req q;
	struct llm_reply r;
	struct llm_msg *m;
	struct ev ev;
	unsigned i;
	int e;

	memset(&q, 0, sizeof(q));
	q.model = ag->cfg->model;
	q.system = f->system;
	q.msgs = *f->head;
	q.tools = f->tools;
	q.ntools = f->tools_off ? 0 : f->ntools;
	q.stream = 1;
	if (gate_step_hooked(ag, f, HOOK_PRE_MODEL, NULL, NULL))
		return;
	ag->calls++;
	e = llm_send(ag->cl, f->a, &q, sink, &r);
	if (e != 0) {
		snprintf(ag->why, sizeof(ag->why), "%s", e == -E_NOMEM ?
		    "memory budget exhausted while receiving the reply" :
		    llm_why(ag->cl));
		ag->stop = e == -E_NOMEM ? AG_NOMEM : AG_FAIL;
		if (llm_timed_out(ag->cl)) {
			snprintf(ag->why, sizeof(ag->why), "stopped: the turn "
			    "took more than %u s (limits.time) while waiting "
			    "for the model", ag->cfg->limits.time_s);
			ag->stop = AG_LIMIT;
		}
		ev_error(ag, ag->why);
		return;
	}
	frame_usage(ag, r.in_tokens, r.out_tokens, llm_cached(ag->cl));
	m = frame_msg(ag, f->a, f->tail, LLM_ASSISTANT, r.text, r.text_len);
	llm_reply_release(&r);
	if (m == NULL)
		return;
	m->calls = r.calls;
	m->ncalls = r.ncalls;
	ev_begin(ag, &ev, "assistant");
	json_kstr(&ev.w, "agent", f->name);
	json_key(&ev.w, "text");
	json_put_strn(&ev.w, m->text, m->text_len);
	if (r.ncalls > 0) {
		json_key(&ev.w, "calls");
		json_begin_arr(&ev.w);
		for (i = 0; i < r.ncalls; i++) {
			json_begin_obj(&ev.w);
			json_kstr(&ev.w, "id", r.calls[i].id);
			json_kstr(&ev.w, "name", r.calls[i].name);
			json_key(&ev.w, "args");
			json_put_strn(&ev.w, r.calls[i].args,
			    r.calls[i].args_len);
			json_end_obj(&ev.w);
		}
		json_end_arr(&ev.w);
	}
	ev_end(ag, &ev, 1);
	(void)gate_step_hooked(ag, f, HOOK_POST_MODEL, m->text, NULL);
	if (r.ncalls == 0)
		f->answer = m->text;
	else {
		f->pending = m;
		f->next = 0;
		f->solo = 0;
	}
}

/* Start the next call of fs[*top]'s pending reply; a handoff pushes the
 * skill agent's frame instead of finishing the call. */
void
agent_call_step(struct agent *ag, struct frame *fs, unsigned *top)
{
	struct frame *f = &fs[*top];
	const struct llm_call *c = &f->pending->calls[f->next];
	struct tool_out out;
	struct ev ev;

	f->t0 = net_now_ms();
	ev_tool(ag, &ev, "tool_start", f->name, c->id, c->name);
	json_key(&ev.w, "args");
	json_put_strn(&ev.w, c->args, c->args_len);
	ev_end(ag, &ev, 1);
	if (run_call(ag, fs, top, c, &out))
		return;			/* a skill agent runs first */
	if (ag->stop == AG_WAIT)
		return;			/* the answer finishes the call */
	if (ag->stop != AG_NOMEM)
		call_done(ag, f, c, &out, f->t0);
	f->next++;
}

/* The frame on top is done (or the turn stops): end it, and give its
 * answer to the frame below as the result of its handoff call (or of its
 * plan step). */
static void
frame_end(struct agent *ag, struct frame *fs, unsigned *top)
{
	struct frame *child = &fs[*top];
	int failed;

	ev_simple(ag, "agent_end", "agent", child->name);
	if (ag->stop == AG_OK && child->answer == NULL)
		ag->stop = AG_FAIL;
	failed = ag->stop != AG_OK;
	if (HAVE_ORCH && !failed && child->orch != NULL)
		failed = orch_cannot(ag, child, *top == 0);
	if (*top > 0)
		agent_frame_return(ag, fs, top, failed);
}

/* The agent at fs[*top] has ended (failed or not): its answer is the
 * result of the handoff call, or of the plan step, of the frame below. */
void
agent_frame_return(struct agent *ag, struct frame *fs, unsigned *top,
    int failed)
{
	struct frame *child = &fs[*top], *f = &fs[--*top];
	const struct llm_call *c;
	struct tool_out out;

	memset(&out, 0, sizeof(out));
	out.text = (char *)(child->answer != NULL ? child->answer :
	    "(no result)");
	out.is_error = failed;
	/* Under an orchestrator a failed agent is a failed step, which it
	 * may get over; a limit or the memory budget still ends the turn. */
	if (HAVE_ORCH && f->orch != NULL && ag->stop == AG_FAIL) {
		if ((out.text = arena_strdup(&ag->turn, ag->why)) == NULL) {
			ag->stop = AG_NOMEM;
			return;
		}
		ag->stop = AG_OK;
		ag->why[0] = '\0';
	}
	ev_handoff(ag, child->name, f->name, 1, out.text, 0, NULL);
	if (HAVE_ORCH && f->orch != NULL && orch_returned(ag, f, out.text,
	    failed))
		return;
	c = &f->pending->calls[f->next];
	if (ag->stop != AG_NOMEM)
		gate_call_hooked(ag, f, c, &out);
	if (ag->stop != AG_NOMEM)
		call_done(ag, f, c, &out, f->t0);
	f->next++;
}

/* Run the turn from the frame stack fs[0..top] until the bottom frame
 * answers, a question pauses it (AG_WAIT: the frames stay as they are) or
 * something stops the turn. `resumed`: the top frame started earlier. */
enum agent_status
agent_run_frames(struct agent *ag, struct frame *fs, unsigned top, int resumed,
    const char **answer)
{
	struct stream_ctx sc = { ag, NULL };
	struct llm_sink sink = { ag->o.stream ? on_delta : NULL, NULL, &sc };
	struct frame *f;

	*answer = NULL;
	if (!resumed)
		ev_simple(ag, "agent_start", "agent", fs[top].name);
	for (;;) {
		f = &fs[top];
		if (ag->stop == AG_WAIT)
			return AG_WAIT;
		/* An orchestrator's answer may end a stage, not the frame;
		 * a plan runs without asking the model. */
		if (HAVE_ORCH && ag->stop == AG_OK && f->orch != NULL &&
		    f->pending == NULL && orch_next(ag, fs, &top))
			continue;
		if (ag->stop != AG_OK || f->answer != NULL) {
			if (top == 0)
				break;
			frame_end(ag, fs, &top);
			continue;
		}
		if (f->pending != NULL) {
			if (f->next < f->pending->ncalls && !over_time(ag)) {
				if (HAVE_ORCH && orch_call_batch(ag, fs, top))
					continue;
				agent_call_step(ag, fs, &top);
			}
			else if (ag->stop == AG_OK) {
				f->pending = NULL;
				if (f->handed_back)
					f->answer = f->result;
			}
			continue;
		}
		if (over_limits(ag))
			continue;
		if (HAVE_ORCH && f->orch != NULL && orch_over_steps(ag, f))
			continue;
		sc.agent = f->name;
		model_step(ag, f, &sink);
	}
	frame_end(ag, fs, &top);
	*answer = fs[0].answer;
	return ag->stop;
}

/* --- the turn */

static void
turn_end(struct agent *ag, enum agent_status st, const char *final)
{
	static const char *const names[] = { "ok", "failed", "limit",
	    "memory", "exit", "waiting" };
	struct ev ev;

	if (final != NULL) {
		ev_begin(ag, &ev, "final");
		json_kstr(&ev.w, "text", final);
		ev.t.text = final;
		ev_end(ag, &ev, 1);
	}
	ev_begin(ag, &ev, "turn_end");
	json_kstr(&ev.w, "status", names[st]);
	ev.t.name = names[st];
	if (st != AG_OK && st != AG_EXIT && ag->why[0] != '\0') {
		json_kstr(&ev.w, "why", ag->why);
		ev.t.text = ag->why;
	}
	ev_end(ag, &ev, 1);
	if (ag->logging)
		slog_sync(&ag->log);
}

/* see agent.h */
/* What every turn, or a paused turn resumed, starts from. */
static void
turn_begin(struct agent *ag)
{
	arena_reset(&ag->turn);
	ag->why[0] = '\0';
	ag->stop = AG_OK;
	ag->calls = 0;
	ag->nhashes = 0;
	ag->deadline = net_now_ms() + (long long)ag->cfg->limits.time_s * 1000;
	/* The model's replies count against the turn too (compaction
	 * included): a trickle of keep-alives cannot hold it open. */
	if (ag->cl != NULL)
		llm_set_deadline(ag->cl, ag->cfg->limits.time_s != 0 ?
		    ag->deadline : 0);
	ag->ws_measured = 0;
	ag->approval = 0;
}

/* Drop the entry agent's messages from mark on: the conversation stays
 * valid (calls without results would be refused by the provider). */
static void
drop_from(struct agent *ag, struct llm_msg **mark_tail, struct llm_msg *mark)
{
	struct llm_msg *m;

	if (mark_tail == NULL)
		return;
	*mark_tail = mark;
	ag->tail = mark_tail;
	for (ag->nitems = 0, m = ag->msgs; m != NULL; m = m->next)
		ag->nitems++;
}

/* A paused turn that will not be answered: logged as aborted. */
static void
abort_wait(struct agent *ag, const char *reason)
{
	struct ev ev;

	ev_begin(ag, &ev, "turn_abort");
	json_kstr(&ev.w, "reason", reason);
	ev_end(ag, &ev, 1);
	drop_from(ag, ag->wait_tail, ag->wait_mark);
	ag->waiting = 0;
	ag->question = NULL;
}

/* The end of a turn's run: a paused turn keeps its messages and waits
 * for agent_answer; a failed one drops them. */
static enum agent_status
turn_finish(struct agent *ag, enum agent_status st, const char *ans,
    struct llm_msg **mark_tail, struct llm_msg *mark, const char **final)
{
	static const char *const names[] = { "ok", "failed", "limit",
	    "memory", "exit" };

	if (st != AG_WAIT && st != AG_NOMEM)
		(void)gate_step_hooked(ag, NULL, HOOK_POST_TURN, st == AG_OK ?
		    ans : ag->why, names[st]);
	ag->waiting = st == AG_WAIT;
	if (st == AG_WAIT) {
		ag->wait_tail = mark_tail;
		ag->wait_mark = mark;
		*final = ag->question;
		turn_end(ag, st, NULL);
		return st;
	}
	if (st != AG_OK)
		drop_from(ag, mark_tail, mark);
	if (st == AG_NOMEM) {
		snprintf(ag->why, sizeof(ag->why), "memory budget of %zu KiB "
		    "exhausted", mem_budget() >> 10);
		ev_error(ag, ag->why);
	}
	*final = st == AG_OK ? ans : ag->why;
	turn_end(ag, st, st == AG_OK ? ans : NULL);
	return st;
}

enum agent_status
agent_turn(struct agent *ag, const char *input, size_t n, const char **final)
{
	struct llm_msg **mark_tail, *mark;
	const char *agent = NULL, *ans = NULL;
	enum agent_status st;
	struct frame fs[MAX_DEPTH + 1], *f = &fs[0];
	struct ev ev;
	char *text;
	int changed, e;

	if (ag->waiting)
		abort_wait(ag, "a new message came instead of an answer");
	turn_begin(ag);
	*final = NULL;
	ag->turn_no++;
	if ((text = arena_strndup(&ag->turn, input, n)) == NULL)
		return AG_NOMEM;
	/* Compact before this turn's input is logged, so the log replays
	 * in the order it happened: summary, then the new turn. */
	if (ag->cl != NULL && text[0] != '/' && session_needs_compaction(ag)) {
		const char *r;

		st = session_compact(ag, &r);
		if (st == AG_NOMEM)
			return st;
		if (st != AG_OK)
			ev_error(ag, r);
	}
	ev_begin(ag, &ev, "user");
	json_key(&ev.w, "text");
	json_put_strn(&ev.w, input, n);
	ev_end(ag, &ev, 1);
	if (skill_reg_refresh(&ag->reg, &changed) == -E_NOMEM)
		return AG_NOMEM;
	if (changed)
		setup_only_skills(ag);
	if (text[0] == '/') {
		char *sp = strchr(text, ' ');

		if (sp == NULL || sp[1] == '\0') {
			if (sp != NULL)
				*sp = '\0';
			st = command_slash(ag, text, final);
			if (st != AG_FAIL || *final != NULL) {
				turn_end(ag, st, *final);
				return st;
			}
			if (sp != NULL)
				*sp = ' ';
		}
		e = command_expand(ag, text, &text, &agent);
		if (e == -E_NOMEM)
			return AG_NOMEM;
		if (e == -E_NOENT) {
			*final = arena_printf(&ag->turn, "unknown command %s "
			    "(/help lists them)", text);
			turn_end(ag, AG_FAIL, *final);
			return AG_FAIL;
		}
		ev_simple(ag, "command", "text", text);
	}
	if (ag->cl == NULL) {
		st = offline_turn(ag, text, final);
		turn_end(ag, st, *final);
		return st;
	}
	if (gate_step_hooked(ag, NULL, HOOK_PRE_TURN, text, NULL)) {
		*final = ag->why;
		turn_end(ag, AG_FAIL, NULL);
		return AG_FAIL;
	}
	memset(fs, 0, sizeof(fs));
	if (agent == NULL)
		agent = ag->o.agent;
	if (agent != NULL) {		/* a .command.md, or --agent */
		const struct skill *sk = skill_find(&ag->reg, agent);
		const char *bad = sk == NULL ? "is not an installed skill" :
		    !HAVE_ORCH && (skill_osk(sk) != NULL || ag->o.plan_only) ?
		    "needs orchestration, left out of this build (ORCH=0)" :
		    HAVE_ORCH && ag->o.plan_only && (skill_osk(sk) == NULL ||
		    (sk->flags & SKILL_OSK_LOOP)) ? "is not an orchestration "
		    "skill with a SOP session: it writes no plan" : NULL;

		if (bad != NULL) {
			*final = arena_printf(&ag->turn, "agent '%s' %s",
			    agent, bad);
			turn_end(ag, AG_FAIL, *final);
			return AG_FAIL;
		}
		if (frame_skill(ag, f, sk, text, 1, DEEPEST(ag)) != 0)
			return AG_NOMEM;
		st = agent_run_frames(ag, fs, 0, 0, &ans);
		return turn_finish(ag, st, ans, NULL, NULL, final);
	} else {
		mark_tail = ag->tail;
		mark = *ag->tail;
		f->name = "entry";
		f->maxd = DEEPEST(ag);
		f->a = sess(ag);
		f->head = &ag->msgs;
		f->tail = &ag->tail;
		if (frame_setup(ag, f) != 0 || frame_msg(ag, f->a, f->tail,
		    LLM_USER, text, strlen(text)) == NULL)
			return AG_NOMEM;
		st = agent_run_frames(ag, fs, 0, 0, &ans);
	}
	return turn_finish(ag, st, ans, mark_tail, mark, final);
}

/* Resume the paused turn: with the answer text (approve < 0), or
 * approving (1) or denying (0, text the reason) the call it waits on. */
static enum agent_status
answer(struct agent *ag, int approve, const char *text, size_t n,
    const char **final)
{
	struct frame fs[MAX_DEPTH + 1], *f;
	const char *ans = NULL;
	enum agent_status st;
	struct tool_out out;
	struct ev ev;
	unsigned top;
	int e;

	*final = NULL;
	if (!ag->waiting || ag->cl == NULL) {
		*final = "this session is not waiting for an answer";
		return AG_FAIL;
	}
	if ((approve < 0) == ag->approval) {
		*final = "this session waits on another kind of answer";
		return AG_FAIL;
	}
	/* A job's paused turn goes on in its worker, with the job's tools. */
	if (ag->o.take_answer != NULL && ag->session != NULL &&
	    (e = ag->o.take_answer(&ag->turn, ag->cfg, ag->session, approve,
	    text, n, final)) != 0) {
		/* Said for --json and SSE; not logged: the turn is not here. */
		ev_begin(ag, &ev, e > 0 ? "final" : "error");
		json_key(&ev.w, e > 0 ? "text" : "message");
		json_put_str(&ev.w, *final);
		ev.t.text = *final;
		ev_end(ag, &ev, 0);
		return e > 0 ? AG_OK : AG_FAIL;
	}
	turn_begin(ag);
	if ((e = session_rebuild(ag, fs, &top)) != 0) {
		snprintf(ag->why, sizeof(ag->why), "cannot resume the paused "
		    "turn: %s", e == -E_NOENT ? "a skill it was in is gone" :
		    e == -E_NOMEM ? "out of memory" : "the session log does "
		    "not end at its question");
		*final = ag->why;
		return e == -E_NOMEM ? AG_NOMEM : AG_FAIL;
	}
	ev_begin(ag, &ev, "answer");
	if (approve >= 0) {
		json_key(&ev.w, "approve");
		json_put_bool(&ev.w, approve);
	}
	if (text != NULL) {
		json_key(&ev.w, approve < 0 ? "text" : "reason");
		json_put_strn(&ev.w, text, n);
	}
	ev_end(ag, &ev, 1);
	ag->waiting = 0;
	f = &fs[top];
	memset(&out, 0, sizeof(out));
	if (approve == 1)	/* the call runs, unchecked, in run_frames */
		ag->approved = f->pending->calls[f->next].id;
	else {
		out.text = approve < 0 ? arena_strndup(&ag->turn, text, n) :
		    arena_printf(&ag->turn, "the person denied this call%s%.*s",
		    text != NULL ? ": " : "", (int)n, text != NULL ? text : "");
		if (out.text == NULL)
			return AG_NOMEM;
		out.is_error = approve == 0;
		call_done(ag, f, &f->pending->calls[f->next], &out,
		    net_now_ms());
		f->next++;
	}
	st = agent_run_frames(ag, fs, top, 1, &ans);
	return turn_finish(ag, st, ans, ag->wait_tail, ag->wait_mark, final);
}

/* see agent.h */
enum agent_status
agent_answer(struct agent *ag, const char *text, size_t n,
    const char **final)
{
	return answer(ag, -1, text, n, final);
}

/* see agent.h */
enum agent_status
agent_decide(struct agent *ag, int approve, const char *reason,
    const char **final)
{
	return answer(ag, approve != 0, reason, reason != NULL ?
	    strlen(reason) : 0, final);
}

/* see agent.h */
enum agent_status
agent_reply(struct agent *ag, const char *s, size_t n, const char **final)
{
	int yes = strcasecmp(s, "y") == 0 || strcasecmp(s, "yes") == 0;

	return !agent_approval(ag) ? agent_answer(ag, s, n, final) :
	    agent_decide(ag, yes, yes ? NULL : s, final);
}

/* see agent.h */
int
agent_approval(const struct agent *ag)
{
	return ag->waiting && ag->approval;
}

/* see agent.h */
const char *
agent_question(const struct agent *ag)
{
	return ag->waiting ? ag->question : NULL;
}

/* see agent.h */
const char *
agent_asked(const struct agent *ag)
{
	return ag->waiting && ag->asked != NULL ? ag->asked : NULL;
}
