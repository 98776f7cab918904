/* gate.c - ask_user, approvals and hooks: hook.c decides; here they are logged
 * and the turn paused or stopped. */

#include "agent/agent.h"

#include <stdio.h>
#include <string.h>

#include "agent/agent_int.h"

/* The tools with which an agent ends its part: hand_back, and an
 * orchestrator's final_answer and cannot_complete. */
static int
end_tool(int id)
{
	return id == T_HAND_BACK || id == T_FINAL_ANSWER ||
	    id == T_CANNOT_COMPLETE;
}

/* Frame f's call of `tool` came back ok with r: when that is one of its
 * end tools, the frame is done once the rest of its reply's calls are
 * (live, and when a paused turn is rebuilt from the log). */
void
gate_call_ended(struct frame *f, const char *tool, const char *r)
{
	int id = tool_find(tool);

	if (!end_tool(id))
		return;
	f->handed_back = 1;
	f->result = r;
	if (HAVE_ORCH && f->orch != NULL)
		orch_call_ended(f, id == T_CANNOT_COMPLETE);
}

/* The input_requested event for call id of frame f (kind NULL: a
 * question): the caller adds its fields, then input_end logs it with the
 * question for the person and pauses the turn (AG_WAIT). */
static void
input_begin(struct agent *ag, struct ev *ev, const char *kind,
    const struct frame *f, const char *id)
{
	ev_begin(ag, ev, "input_requested");
	if (kind != NULL) {
		json_kstr(&ev->w, "kind", kind);
	}
	json_kstr(&ev->w, "agent", f->name);
	json_kstr(&ev->w, "id", id);
	ev->t.agent = f->name;
	ag->asked = id;
}

static void
input_end(struct agent *ag, struct ev *ev, const char *q)
{
	ev->t.text = q;
	ev_end(ag, ev, 1);
	ag->question = q;
	ag->stop = AG_WAIT;
}

/* ask_user: check the question, log it, and pause the turn (AG_WAIT);
 * the answer becomes the call's result in agent_answer. */
void
gate_ask_user(struct agent *ag, struct frame *f, const struct llm_call *c,
    struct tool_out *out)
{
	struct json_doc d;
	struct ev ev;
	char *q = NULL, *s;
	int t, i, n;

	if (json_parse(&ag->turn, c->args, c->args_len, 256, &d) != 0 ||
	    json_str(&d, &ag->turn, json_get(&d, 0, "question"), &q,
	    NULL) != 0 || q[0] == '\0') {
		out->text = "ask_user needs {\"question\": \"...\"}";
		out->is_error = 1;
		return;
	}
	t = json_get(&d, 0, "choices");
	n = t >= 0 && d.t[t].type == JSON_ARR ? d.t[t].size : 0;
	if (t >= 0 && (d.t[t].type != JSON_ARR || n > 16)) {
		out->text = "choices must be an array of at most 16 strings";
		out->is_error = 1;
		return;
	}
	input_begin(ag, &ev, NULL, f, c->id);
	json_kstr(&ev.w, "question", q);
	if (n > 0) {
		json_key(&ev.w, "choices");
		json_begin_arr(&ev.w);
		for (i = 0; i < n; i++)
			if (json_str(&d, &ag->turn, json_at(&d, t, i), &s,
			    NULL) == 0)
				json_put_str(&ev.w, s);
		json_end_arr(&ev.w);
	}
	input_end(ag, &ev, q);
}

/* --- approvals and hooks: hook.c decides; here they are logged and the
 * turn paused or stopped. */

static void
on_hook(void *ctx, const struct hook_step *st, const struct hook *h,
    const char *decision, const char *reason, long long ms)
{
	struct agent *ag = ctx;
	struct ev ev;

	ev_begin(ag, &ev, "hook");
	json_key(&ev.w, "event");		/* the rule's: maybe *_subagent */
	json_put_str(&ev.w, hook_event_name((enum hook_event)h->event));
	json_kstr(&ev.w, "handler", h->kind == HOOK_HTTP ? "http" : "command");
	if (st->tool != NULL) {
		json_kstr(&ev.w, "name", st->tool);
	}
	json_kstr(&ev.w, "decision", decision);
	if (reason != NULL) {
		json_kstr(&ev.w, "reason", reason);
	}
	json_key(&ev.w, "ms");
	json_put_int(&ev.w, ms);
	ev.t.name = st->tool;
	ev.t.text = reason;
	ev.t.ms = ms;
	ev_end(ag, &ev, 1);
}

void
gate_init(struct agent *ag)
{
	struct hook_env *h = &ag->hooks;

	h->cfg.approve = ag->cfg->approve;
	h->cfg.napprove = ag->cfg->napprove;
	h->cfg.hooks = ag->cfg->hooks;
	h->cfg.nhooks = ag->cfg->nhooks;
	h->base = &ag->base;
	h->workspace = ag->workspace;
	h->ca_file = ag->cfg->ca_file;
	h->perm = ag->perm;
	if (HAVE_HOOKS) {
		h->log = on_hook;
		h->ctx = ag;
	}
}

/* A step of frame f (NULL: the turn) as the hooks see it. */
static void
hook_step(struct agent *ag, const struct frame *f, enum hook_event ev,
    struct hook_step *st)
{
	memset(st, 0, sizeof(*st));
	st->ev = ev;
	st->session = ag->session;
	st->turn = ag->turn_no;
	st->agent = f != NULL ? f->name : "entry";
	st->sk = f != NULL ? f->skill : NULL;
	st->skill = st->sk != NULL ? st->sk->name : NULL;
}

/* The pre step of call c: a handoff or activate_skill is pre_skill, for
 * the skill it enters (its front-matter rules apply); a skill tool of the
 * entry agent works for its `skill` argument. (A subagent call is to be
 * HOOK_PRE_SUBAGENT here.) */
static void
call_hook_step(struct agent *ag, const struct frame *f,
    const struct llm_call *c, struct hook_step *st)
{
	int act = strcmp(c->name, "activate_skill") == 0;
	const char *name = NULL;
	struct json_doc d;
	char *s;

	hook_step(ag, f, HOOK_PRE_TOOL, st);
	st->tool = c->name;
	st->id = c->id;
	st->args = c->args;
	st->args_len = c->args_len;
	if (strncmp(c->name, HANDOFF_PREFIX, strlen(HANDOFF_PREFIX)) == 0) {
		name = c->name + strlen(HANDOFF_PREFIX);
		act = 1;
		st->child = HAVE_HOOKS;
	} else if ((act || f->skill == NULL) && json_parse(&ag->turn, c->args,
	    c->args_len, 256, &d) == 0 && json_str(&d, &ag->turn,
	    json_get(&d, 0, act ? "name" : "skill"), &s, NULL) == 0)
		name = s;
	if (act)
		st->ev = HOOK_PRE_SKILL;
	if (name != NULL) {
		st->sk = skill_find(&ag->reg, name);
		st->skill = name;
	}
}

/* Approvals and pre hooks of call c: 1 when it does not run now, denied
 * (out says so, for the model) or paused for a person (AG_WAIT). */
int
gate(struct agent *ag, struct frame *f, const struct llm_call *c,
    struct tool_out *out)
{
	struct hook_step st;
	enum hook_verdict v;
	const char *why, *q, *args;
	struct ev ev;
	size_t n;
	int ok = ag->approved != NULL && strcmp(ag->approved, c->id) == 0;

	ag->approved = NULL;
	if (strcmp(c->name, "ask_user") == 0)
		return 0;		/* it asks the person anyway */
	/* Handing back a result, or the answer, is not an act to approve. */
	ok |= end_tool(tool_find(c->name));
	call_hook_step(ag, f, c, &st);
	if ((v = hook_check(&ag->hooks, &ag->turn, &st, ok, &why)) ==
	    HOOK_ALLOW)
		return 0;
	if (v == HOOK_DENY || !ag->logging) {
		/* Without a session log there is nothing to wait in. */
		out->text = arena_printf(&ag->turn, v == HOOK_DENY ? "denied "
		    "by a hook: %s" : "not run: it needs a person's approval "
		    "(%s) and this session cannot wait (no log)", why);
		out->is_error = 1;
		return 1;
	}
	/* The person sees the arguments as the hooks and the tool read
	 * them (json_canon), not as the model spelled them. */
	if ((args = json_canon(&ag->turn, c->args, c->args_len, &n)) == NULL)
		args = c->args, n = c->args_len;
	q = arena_printf(&ag->turn, "Approve %s %.*s%s (agent "
	    "%s; %s)?", c->name, (int)MIN(n, 400), args, n > 400 ? "..." :
	    "", f->name, why);
	input_begin(ag, &ev, "approval", f, c->id);
	json_kstr(&ev.w, "name", c->name);
	json_key(&ev.w, "args");
	json_put_strn(&ev.w, args, n);
	json_kstr(&ev.w, "question", q);
	ev.t.name = c->name;
	ag->approval = 1;
	input_end(ag, &ev, q);
	return 1;
}

/* The post hooks of call c, with its outcome (none without HOOKS: only
 * calls are checked then, by approvals). */
void
gate_call_hooked(struct agent *ag, const struct frame *f,
    const struct llm_call *c, const struct tool_out *out)
{
	struct hook_step st;
	const char *why;

	if (!HAVE_HOOKS)
		return;
	call_hook_step(ag, f, c, &st);
	st.ev++;
	st.result = out->text;
	st.result_len = out->len != 0 ? out->len : strlen(out->text);
	st.is_error = out->is_error;
	(void)hook_check(&ag->hooks, &ag->turn, &st, 0, &why);
}

/* Hooks of a model request (m: the reply, for the post hooks) or of the
 * turn (f NULL; text: the input, or the answer). 1 when a pre hook denied
 * it: the turn stops (AG_FAIL) with the reason. */
int
gate_step_hooked(struct agent *ag, const struct frame *f, enum hook_event ev,
    const char *text, const char *status)
{
	struct hook_step st;
	const char *why;

	if (!HAVE_HOOKS)
		return 0;
	hook_step(ag, f, ev, &st);
	st.result = text;
	st.result_len = text != NULL ? strlen(text) : 0;
	st.status = status;
	if (hook_check(&ag->hooks, &ag->turn, &st, 0, &why) != HOOK_DENY)
		return 0;
	snprintf(ag->why, sizeof(ag->why), "stopped: a hook denied the %s: "
	    "%s", ev == HOOK_PRE_TURN ? "turn" : "model request", why);
	ag->stop = AG_FAIL;
	ev_error(ag, ag->why);
	return 1;
}
