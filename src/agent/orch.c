/* orch.c - orchestration skills (oskill.md): stages, plans, and plan steps or
 * handoffs at once in processes of their own (ORCH=1 builds). */

#include "agent/agent.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/agent_int.h"
#include "fmt/plan.h"
#include "net/net.h"

/* --- orchestration skills (oskill.md) */
/*
 * An orchestration skill's agent does its task by handing parts of it to
 * the skills it is allowed (Allowed-Skills, or every other skill), in one
 * of two sessions:
 * - loop: the model calls one tool a step and reads its result, until
 *   final_answer or cannot_complete; limits.steps model calls and
 *   limits.step_errors failed steps at most.
 * - sop (the default): the model writes a LightSOPLang plan (plan.h); it
 *   is parsed and checked whole, then its steps run in order of their
 *   dependencies, each a skill agent whose task is the step's arguments
 *   (references replaced by the results). A plan that does not parse is
 *   sent back with the error; a step that fails asks for a new plan with
 *   what was done so far; after limits.plans plans the session goes on as
 *   a loop (function calls instead of a plan).
 * A Preparation section is a stage before the main one, with its own
 * tools (Allowed-Prep-Skills); its final_answer goes to the main stage.
 * Every stage change is an `orchestrate` event, so a paused turn is
 * rebuilt from the log without asking the model again.
 */

enum or_stage { OS_PREP, OS_LOOP, OS_PLAN, OS_RUN };

static const char *const or_stage_names[] = { "prep", "loop", "plan",
    "run" };

struct orch {
	enum or_stage	 stage;
	char		*body;		/* oskill.md's text */
	unsigned	 steps;		/* model calls, loop and prep */
	unsigned	 errors;	/* failed steps */
	unsigned	 plans;		/* plans asked for */
	struct plan	*plan;
	uint64_t	 done;
	uint64_t	 solo;		/* steps that run alone (paused) */
	const char	**res;		/* plan step results */
	unsigned	 cur;		/* the step running */
	int		 cannot;	/* ended with cannot_complete */
};

static const char plan_rules[] =
    "\n# How to answer\n"
    "Reply with a plan and nothing else, in LightSOPLang:\n"
    "#!english\n"
    "@a cmd1 \"what cmd1 should do\"\n"
    "@b cmd2 \"what cmd2 should do\"\n"
    "@c cmd3 \"compare these:\" $a $b\n"
    "@out final_answer \"The answer, built from\" $c\n"
    "Each line is @NAME COMMAND ARGUMENTS. Arguments are words, \"quoted "
    "text\" (it may span lines; \\\" and \\\\ escaped) or $NAME, the "
    "result of an earlier line. A command's arguments, joined by spaces, "
    "are the task its agent gets. Lines that do not use each other's "
    "results may run at the same time. The last line, and only it, is "
    "final_answer (the answer for the person) or cannot_complete (why the "
    "task cannot be done). Lines starting with # are comments.\n\n"
    "# Commands\n";

/* The skills frame f (an orchestrator) may call in its stage. */
int
orch_may_call(const struct frame *f, const struct skill *sk)
{
	const struct skill_osk *o = skill_osk(f->skill);

	if (sk == f->skill)
		return 0;
	if (f->orch->stage == OS_PREP && (o->sk.flags & SKILL_OSK_PREP))
		return o->prep != NULL && str_word_in(o->prep, sk->name);
	if (o->sk.flags & SKILL_OSK_ALLOWED)
		return o->allowed != NULL && str_word_in(o->allowed,
		    sk->name);
	return 1;
}

static int
orch_known(void *ctx, const char *cmd, size_t n)
{
	struct frame *f = ctx;
	unsigned i;

	(void)n;
	for (i = 0; i < f->ntools; i++)
		if (strncmp(f->tools[i].name, HANDOFF_PREFIX,
		    strlen(HANDOFF_PREFIX)) == 0 && strcmp(f->tools[i].name +
		    strlen(HANDOFF_PREFIX), cmd) == 0)
			return 1;
	return 0;
}

/* The system prompt and tools of an orchestrator's frame, for its stage.
 * In the plan stage the tools are only the list of commands: the model
 * is not offered them. */
int
orch_setup(struct agent *ag, struct frame *f)
{
	struct orch *o = f->orch;
	unsigned cap = frame_ncatalog(ag) + 4, i;
	struct sbuf sb;
	struct str sec;
	char *fm;
	int e;

	if (o == NULL) {
		if ((o = f->orch = arena_zalloc(f->a, sizeof(*o))) == NULL)
			return -E_NOMEM;
		if ((e = skill_load(f->skill, f->a, &fm, &o->body, &i)) != 0)
			return e;
		o->stage = skill_osk_section(o->body, "preparation").p !=
		    NULL ? OS_PREP : f->skill->flags & SKILL_OSK_LOOP ?
		    OS_LOOP : OS_PLAN;
	}
	if ((f->tools = arena_zalloc(f->a, cap * sizeof(*f->tools))) == NULL)
		return -E_NOMEM;
	f->ntools = 0;
	sbuf_init(&sb, f->a, 0);
	sbuf_printf(&sb, "You are '%s', an orchestrator: you do the task by "
	    "giving parts of it to other skills' agents, and you never guess "
	    "what they would find.\n\n# Description\n%s\n", f->skill->name,
	    f->skill->description);
	sec = skill_osk_section(o->body, "instructions");
	if (sec.n > 0)
		sbuf_printf(&sb, "\n# Instructions\n%.*s\n", (int)sec.n,
		    sec.p);
	if (f->depth < MAXD(f) && frame_handoffs(ag, f, cap) != 0)
		return -E_NOMEM;
	if (o->stage == OS_PREP) {
		sec = skill_osk_section(o->body, "preparation");
		sbuf_printf(&sb, "\n# Preparation\nThis is the preparation "
		    "stage, before the main one:\n%.*s\nWhen it is done, "
		    "call final_answer with what the main stage needs to "
		    "know.\n", (int)sec.n, sec.p);
	} else if (o->stage == OS_LOOP) {
		sbuf_adds(&sb, "\n# How to work\nWork in steps: call one tool "
		    "a step and read its result before the next. The results "
		    "are numbered: write $r1, $r2 ... in a later task to pass "
		    "a result on. End with final_answer, or with "
		    "cannot_complete when the task cannot be done.\n");
	} else {
		sbuf_adds(&sb, plan_rules);
		for (i = 0; i < f->ntools; i++)
			sbuf_printf(&sb, "- %s: %s\n", f->tools[i].name +
			    strlen(HANDOFF_PREFIX), skill_find(&ag->reg,
			    f->tools[i].name + strlen(HANDOFF_PREFIX))->
			    description);
		if (f->ntools == 0)
			sbuf_adds(&sb, "(none: answer with final_answer or "
			    "cannot_complete only)\n");
	}
	f->tools_off = o->stage == OS_PLAN || o->stage == OS_RUN;
	if (!f->tools_off) {
		frame_add_tool(f, f->a, cap, T_FINAL_ANSWER);
		if (o->stage == OS_LOOP)
			frame_add_tool(f, f->a, cap, T_CANNOT_COMPLETE);
		if (ag->logging)
			frame_add_tool(f, f->a, cap, T_ASK_USER);
	}
	if (sb.err)
		return -E_NOMEM;
	f->system = sb.p;
	return 0;
}

/* Move frame f to stage st, with msg (if not NULL) as the next message
 * to its model; plan is the plan text when st is OS_RUN. Logged as an
 * `orchestrate` event, unless this is the rebuild of a paused turn (log
 * 0), which calls it for each such event. */
static int
orch_stage(struct agent *ag, struct frame *f, enum or_stage st,
    const char *msg, const char *plan, int log)
{
	struct orch *o = f->orch;
	struct plan_error pe;
	struct ev ev;
	int e;

	if (log) {
		ev_begin(ag, &ev, "orchestrate");
		json_kstr(&ev.w, "agent", f->name);
		json_kstr(&ev.w, "stage", or_stage_names[st]);
		if (msg != NULL) {
			json_kstr(&ev.w, "text", msg);
		}
		if (plan != NULL) {
			json_kstr(&ev.w, "plan", plan);
		}
		ev.t.agent = f->name;
		ev.t.text = plan != NULL ? plan : msg;
		ev_end(ag, &ev, 1);
	}
	if (st == OS_RUN) {
		if ((e = plan_parse(f->a, plan, strlen(plan), NULL, NULL,
		    &o->plan, &pe)) != 0)
			return e;
		if ((o->res = arena_zalloc(f->a, o->plan->n *
		    sizeof(*o->res))) == NULL)
			return -E_NOMEM;
		o->done = 0;
	}
	if (o->stage == OS_PREP && st != OS_PREP) {
		/* The main stage starts a conversation of its own. */
		f->own = NULL;
		f->own_tail = &f->own;
	}
	o->stage = st;
	f->answer = NULL;
	f->handed_back = 0;
	if ((e = orch_setup(ag, f)) != 0)
		return e;
	if (msg != NULL && frame_msg(ag, f->a, f->tail, LLM_USER, msg,
	    strlen(msg)) == NULL)
		return -E_NOMEM;
	return 0;
}

/* The plan in a reply: the text, or what a ``` fence holds. */
static struct str
plan_in(const char *s)
{
	const char *a = strstr(s, "```"), *b;

	if (a == NULL || (a = strchr(a, '\n')) == NULL ||
	    (b = strstr(a + 1, "```")) == NULL)
		return (struct str){ s, strlen(s) };
	return (struct str){ a + 1, (size_t)(b - a - 1) };
}

/* Frame f's model answered (f->answer): go on to the next stage when
 * there is one, and return 1; 0 when the answer is the frame's. */
static int
orch_answered(struct agent *ag, struct frame *f, int plan_only)
{
	struct orch *o = f->orch;
	struct plan_error pe;
	struct plan *p;
	struct sbuf sb;
	struct str t;
	const char *msg;
	int e;

	if (o->stage == OS_PREP) {
		const char *task = (*f->head)->text;

		msg = arena_printf(f->a, "%s\n\n# What the preparation found\n"
		    "%s", task, f->answer);
		e = msg == NULL ? -E_NOMEM : orch_stage(ag, f,
		    f->skill->flags & SKILL_OSK_LOOP ? OS_LOOP : OS_PLAN, msg,
		    NULL, 1);
	} else if (o->stage == OS_PLAN) {
		o->plans++;
		t = plan_in(f->answer);
		e = plan_parse(&ag->turn, t.p, t.n, orch_known, f, &p, &pe);
		if (e == -E_NOMEM)
			goto fail;
		sbuf_init(&sb, &ag->turn, 0);
		if (e == 0) {
			if (plan_write(&sb, p) != 0)
				goto nomem;
			if (plan_only) {
				f->answer = arena_strdup(f->a, sb.p);
				return 0;
			}
			e = orch_stage(ag, f, OS_RUN, NULL, sb.p, 1);
		} else if (o->plans >= ag->cfg->limits.plans) {
			sbuf_printf(&sb, "No valid plan after %u tries (the "
			    "last: line %u, column %u: %s). Do the task with "
			    "the tools instead, one call a step.", o->plans,
			    pe.line, pe.col, pe.msg);
			e = sb.err ? -E_NOMEM : orch_stage(ag, f, OS_LOOP,
			    sb.p, NULL, 1);
		} else {
			sbuf_printf(&sb, "The plan is not valid: line %u, "
			    "column %u: %s. Write the whole plan again, and "
			    "nothing else.", pe.line, pe.col, pe.msg);
			e = sb.err ? -E_NOMEM : orch_stage(ag, f, OS_PLAN,
			    sb.p, NULL, 1);
		}
	} else
		return 0;
	if (e == 0)
		return 1;
fail:
	if (e != -E_NOMEM) {
		snprintf(ag->why, sizeof(ag->why), "%s: cannot go on to its "
		    "next stage", f->name);
		ag->stop = AG_FAIL;
		ev_error(ag, ag->why);
		return 1;
	}
nomem:
	ag->stop = AG_NOMEM;
	return 1;
}

/* A plan step's text: its arguments, references replaced by results. */
static char *
step_text(struct agent *ag, const struct orch *o, const struct plan_step *st)
{
	struct sbuf sb;
	unsigned i;

	sbuf_init(&sb, &ag->turn, 0);
	for (i = 0; i < st->nargs; i++) {
		if (i > 0)
			sbuf_addc(&sb, ' ');
		if (st->args[i].kind == PA_REF)
			sbuf_adds(&sb, o->res[st->args[i].ref] != NULL ?
			    o->res[st->args[i].ref] : "");
		else
			sbuf_add(&sb, st->args[i].s, st->args[i].n);
	}
	return sb.err ? NULL : sb.p;
}

/* The first plan step that can start; the terminal one last. */
static unsigned
next_step(const struct orch *o)
{
	unsigned i = o->plan->n - 1;

	(void)plan_ready(o->plan, o->done, 0, &i, 1);
	return i;
}

/* The plan step a handoff names (its variable), or when it names none
 * (older logs: one step at a time), the next one. */
static unsigned
step_named(const struct orch *o, const char *var)
{
	unsigned i;

	for (i = 0; var != NULL && i < o->plan->n; i++)
		if (strcmp(o->plan->steps[i].var, var) == 0)
			return i;
	return next_step(o);
}

/* Start plan step o->cur of frame fs[*top]: its skill's agent above it.
 * At the final_answer / cannot_complete step, the frame's answer. */
static void
orch_start(struct agent *ag, struct frame *fs, unsigned *top)
{
	struct frame *f = &fs[*top];
	struct orch *o = f->orch;
	const struct plan_step *st = &o->plan->steps[o->cur];
	const struct skill *sk;
	char *task;

	if ((task = step_text(ag, o, st)) == NULL) {
		ag->stop = AG_NOMEM;
		return;
	}
	if (plan_is_terminal(st->cmd)) {
		o->cannot = strcmp(st->cmd, PLAN_CANNOT) == 0;
		f->answer = arena_strdup(f->a, task);
		return;
	}
	sk = skill_find(&ag->reg, st->cmd);
	if (sk == NULL || f->depth >= MAXD(f)) {
		snprintf(ag->why, sizeof(ag->why), "%s: step @%s cannot run "
		    "%s here", f->name, st->var, st->cmd);
		ag->stop = AG_FAIL;
		ev_error(ag, ag->why);
		return;
	}
	ev_handoff(ag, f->name, sk->name, 0, task, 0, st->var);
	if (frame_skill(ag, &fs[*top + 1], sk, task, f->depth + 1, MAXD(f))
	    != 0) {
		ag->stop = AG_NOMEM;
		return;
	}
	(*top)++;
	ev_simple(ag, "agent_start", "agent", sk->name);
}

static int orch_batch(struct agent *ag, struct frame *fs, unsigned top);

/* Frame fs[*top] runs a plan: the steps that are ready at once in
 * processes of their own (orch_batch), else the next one here. */
static void
orch_run(struct agent *ag, struct frame *fs, unsigned *top)
{
	if (orch_batch(ag, fs, *top) != 0)
		return;
	fs[*top].orch->cur = next_step(fs[*top].orch);
	orch_start(ag, fs, top);
}

/* The plan step of frame f ended: r is its result, or when it failed,
 * why. A failure asks for a new plan, with the results so far. */
static void
orch_step_done(struct agent *ag, struct frame *f, const char *r, int failed)
{
	struct orch *o = f->orch;
	const struct plan_step *st = &o->plan->steps[o->cur];
	struct sbuf sb;
	unsigned i;

	if (!failed) {
		o->res[o->cur] = r;
		o->done |= (uint64_t)1 << o->cur;
		return;
	}
	if (ag->stop != AG_OK)
		return;			/* a limit or the memory: the end */
	if (++o->errors >= ag->cfg->limits.step_errors ||
	    o->plans >= ag->cfg->limits.plans) {
		snprintf(ag->why, sizeof(ag->why), "%s gave up after %u failed "
		    "steps and %u plans; the last, @%s (%s): %s", f->name,
		    o->errors, o->plans, st->var, st->cmd, r);
		ag->stop = AG_FAIL;
		ev_error(ag, ag->why);
		return;
	}
	sbuf_init(&sb, &ag->turn, 0);
	sbuf_printf(&sb, "Step @%s (%s) failed: %s\n", st->var, st->cmd, r);
	for (i = 0; i < o->plan->n; i++)
		if (o->done & ((uint64_t)1 << i))
			sbuf_printf(&sb, "Done: @%s %s gave:\n%s\n",
			    o->plan->steps[i].var, o->plan->steps[i].cmd,
			    o->res[i]);
	sbuf_adds(&sb, "Write a new plan for what is left of the task (put "
	    "the results you need in it as text), and nothing else.");
	if (sb.err || orch_stage(ag, f, OS_PLAN, sb.p, NULL, 1) != 0)
		ag->stop = AG_NOMEM;
}

/*
 * Plan steps at the same time. When two or more steps are ready, each runs
 * in a forked copy of this process (at most limits.parallel), which sends
 * the events it would log down a pipe and ends with "#end STOP FAILED".
 * When all have ended, their events go to the log and the printer one
 * step after another, in plan order, as if the steps had run in turn
 * (each forward handoff names its step, so a replay knows which it was),
 * and each result is taken as orch_step_done would take it. A step that
 * paused on a person (a question, an approval) is dropped, its events
 * too: it runs again here, alone, and asks again. A step whose process
 * died is a failed step.
 */
#define OR_PAR_MAX	8
#define OR_RELAY_MAX	(4u << 20)	/* bytes of events a step may send */

struct par {
	pid_t		 pid;
	int		 fd;
	unsigned	 step;
	struct sbuf	 out;
	int		 stop, failed;	/* from "#end"; stop -1: none */
	char		 why[48];
};

/* The child's side: run step o->cur of fs[top], send its events to fd. */
static void
par_child(struct agent *ag, struct frame *fs, unsigned top, unsigned k,
    int fd)
{
	struct frame *f = &fs[top];
	const char *ans = NULL;
	unsigned t = top;
	char end[32];
	int failed, n;

	ag->relay = fd + 1;
	ag->o.stream = 0;
	llm_disconnect(ag->cl);		/* the parent's connection is its own */
	/* Not inherited, and the sandbox reaps what scripts leave as ours. */
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	if (f->pending != NULL) {	/* call k of f's reply: a handoff */
		f->next = k;
		agent_call_step(ag, fs, &t);
	} else {			/* plan step k */
		f->orch->cur = k;
		orch_start(ag, fs, &t);
	}
	if (t > top && ag->stop == AG_OK)
		(void)agent_run_frames(ag, &fs[t], 0, 1, &ans);
	failed = ag->stop != AG_OK;
	if (t > top && ag->stop != AG_WAIT)
		agent_frame_return(ag, fs, &t, failed);
	n = snprintf(end, sizeof(end), "#end %d %d\n", (int)ag->stop,
	    failed);
	(void)!write(fd, end, (size_t)n);
	_exit(0);
}

/* Read every child's events until all pipes close. */
static void
par_read(struct par *v, unsigned n)
{
	struct pollfd pf[OR_PAR_MAX];
	unsigned i, open = n;
	char buf[4096];
	ssize_t k;

	while (open > 0) {
		for (i = 0; i < n; i++) {
			pf[i].fd = v[i].fd;
			pf[i].events = POLLIN;
		}
		if (poll(pf, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (i = 0; i < n; i++) {
			if (v[i].fd < 0 || pf[i].revents == 0)
				continue;
			k = read(v[i].fd, buf, sizeof(buf));
			if (k < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (k > 0 && v[i].out.len + (size_t)k <= OR_RELAY_MAX)
				sbuf_add(&v[i].out, buf, (size_t)k);
			else if (k > 0)
				kill(v[i].pid, SIGKILL);
			if (k <= 0 || v[i].out.err) {
				close(v[i].fd);
				v[i].fd = -1;
				open--;
			}
		}
	}
}

/* Log and print a child's event line; tokens are counted here, so the
 * session's totals stay right. The result it handed back goes to *res. */
static void
par_relay(struct agent *ag, const struct frame *f, char *line, size_t n,
    const char **res, struct tool_out *out)
{
	struct agent_event t;
	struct json_doc d;
	struct arena *a = &ag->turn;
	long long v;
	char *to;
	int ok;

	/* As many tokens as slog_replay takes: a line it can replay. */
	if (json_parse(a, line, n, 1u << 20, &d) != 0 || d.n == 0) {
		ag->stop = AG_FAIL;	/* ours, so not expected */
		return;
	}
	memset(&t, 0, sizeof(t));
	t.ms = -1;
	if ((t.type = session_str(&d, a, 0, "type", NULL)) == NULL)
		return;
	if (strcmp(t.type, "usage") == 0) {
		unsigned long ti = 0, tn = 0;

		if (json_int(&d, json_get(&d, 0, "input_tokens"), &v) == 0)
			ti = (unsigned long)v;
		if (json_int(&d, json_get(&d, 0, "output_tokens"), &v) == 0)
			tn = (unsigned long)v;
		const char *ch = HAVE_EVAL ? session_str(&d, a, 0, "cache",
		    NULL) : NULL;

		ag->calls++;
		frame_usage(ag, ti, tn, ch == NULL ? -1 :
		    strcmp(ch, "hit") == 0);
		return;
	}
	t.agent = session_str(&d, a, 0, "agent", NULL);
	t.name = session_str(&d, a, 0, "name", NULL);
	t.confinement = session_str(&d, a, 0, "confinement", NULL);
	if (json_int(&d, json_get(&d, 0, "ms"), &v) == 0)
		t.ms = v;
	if (json_bool(&d, json_get(&d, 0, "ok"), &ok) == 0)
		t.ok = ok;
	if (strcmp(t.type, "error") == 0 && (t.text = session_str(&d, a, 0,
	    "message", &t.len)) != NULL)
		snprintf(ag->why, sizeof(ag->why), "%s", t.text);
	else if (strcmp(t.type, "handoff") == 0) {
		/* Texts are copied only where needed: the printers use the
		 * names, and outputs may be large. */
		t.from = session_str(&d, a, 0, "from", NULL);
		t.name = to = session_str(&d, a, 0, "to", NULL);
		t.back = json_get(&d, 0, "result") >= 0;
		if (t.back && to != NULL && strcmp(to, f->name) == 0)
			*res = t.text = session_str(&d, a, 0, "result", &t.len);
	} else if (strcmp(t.type, "tool_end") == 0 && t.agent != NULL &&
	    strcmp(t.agent, f->name) == 0) {	/* a handoff call's result */
		out->text = session_str(&d, a, 0, "output", &out->len);
		out->is_error = !t.ok;
		t.text = out->text;
		t.len = out->len;
	}
	ev_emit(ag, &t, line, n, 1);
}

/* Fork a child for each of the n steps or calls idx[] of frame fs[top],
 * read what they send and reap them; 0 when no pipe or fork (none ran). */
static int
par_run(struct agent *ag, struct frame *fs, unsigned top, struct par *v,
    const unsigned *idx, unsigned n)
{
	unsigned i;
	char *p;
	int pfd[2], st = 0;

	for (i = 0; i < n; i++) {
		memset(&v[i], 0, sizeof(v[i]));
		v[i].step = idx[i];
		v[i].stop = -1;
		sbuf_init(&v[i].out, &ag->turn, 0);
	}
	for (i = 0; i < n; i++) {
		if (pipe2(pfd, O_CLOEXEC) != 0)
			break;
		if ((v[i].pid = fork()) == 0) {
			unsigned j;

			close(pfd[0]);
			for (j = 0; j < i; j++)
				close(v[j].fd);
			par_child(ag, fs, top, idx[i], pfd[1]);
		}
		close(pfd[1]);
		v[i].fd = pfd[0];
		if (v[i].pid < 0) {
			close(pfd[0]);
			break;
		}
	}
	if (i < n) {			/* no pipe or no fork: none run */
		while (i-- > 0) {
			kill(v[i].pid, SIGKILL);
			close(v[i].fd);
			(void)waitpid(v[i].pid, NULL, 0);
		}
		return 0;
	}
	par_read(v, n);
	for (i = 0; i < n; i++) {
		while (waitpid(v[i].pid, &st, 0) < 0 && errno == EINTR)
			;
		sbuf_addc(&v[i].out, '\0');
		p = v[i].out.err ? NULL : strstr(v[i].out.p, "#end ");
		if (p != NULL && (p == v[i].out.p || p[-1] == '\n') &&
		    p[5] >= '0' && p[5] <= '9' && p[6] == ' ') {
			v[i].stop = p[5] - '0';
			v[i].failed = p[7] == '1';
			*p = '\0';
		} else
			snprintf(v[i].why, sizeof(v[i].why), "its process "
			    "ended (%s %d)", WIFSIGNALED(st) ? "signal" :
			    "status", WIFSIGNALED(st) ? WTERMSIG(st) :
			    WEXITSTATUS(st));
	}
	return 1;
}

/* Relay child v's events; what it handed back to f goes to *res, the
 * result of f's call to *out. */
static void
par_relay_all(struct agent *ag, const struct frame *f, struct par *v,
    const char **res, struct tool_out *out)
{
	char *p, *nl;

	for (p = v->out.p; v->stop >= 0 && *p != '\0' && ag->stop == AG_OK;
	    p = nl + 1) {
		if ((nl = strchr(p, '\n')) == NULL)
			break;
		par_relay(ag, f, p, (size_t)(nl - p), res, out);
	}
}

/* Plan steps of frame fs[top] at once: 0 when fewer than two are ready
 * (or no fork), and the caller runs the next step itself. */
static int
orch_batch(struct agent *ag, struct frame *fs, unsigned top)
{
	struct frame *f = &fs[top];
	struct orch *o = f->orch;
	struct par v[OR_PAR_MAX];
	unsigned idx[OR_PAR_MAX], n, i, pass;
	struct tool_out out;

	n = plan_ready(o->plan, o->done, o->solo, idx,
	    MIN(ag->cfg->limits.parallel, OR_PAR_MAX));
	if (n < 2 || f->depth >= MAXD(f) || !par_run(ag, fs, top, v, idx, n))
		return 0;
	/* Steps that ended well first, then the failed ones: the first
	 * failure asks for a new plan with every result so far. */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < n && ag->stop == AG_OK; i++) {
			const char *res = NULL;
			int failed = v[i].stop != AG_OK || v[i].failed;

			if (v[i].stop == AG_WAIT) {
				o->solo |= (uint64_t)1 << v[i].step;
				continue;
			}
			if (failed != (int)pass)
				continue;
			par_relay_all(ag, f, &v[i], &res, &out);
			if (v[i].stop < 0) {	/* died: say so in the log */
				const struct plan_step *ps =
				    &o->plan->steps[v[i].step];

				res = v[i].why;
				ev_handoff(ag, f->name, ps->cmd, 0, "", 0,
				    ps->var);
				ev_handoff(ag, ps->cmd, f->name, 1, res, 0,
				    NULL);
			}
			if (ag->stop != AG_OK || o->stage != OS_RUN)
				continue;	/* replanning: the rest is logged */
			o->cur = v[i].step;
			orch_step_done(ag, f, res != NULL ? res : "(no result)",
			    failed);
		}
	return 1;
}

/* Handoff calls of frame fs[top]'s reply, from the next one on, at once
 * (each a child agent in a process of its own): 0 when fewer than two
 * follow each other there, or in an orchestrator (one tool a step). The
 * results go to the conversation in call order; from the first call that
 * paused or whose process died on, the calls run again here, one by one. */
int
orch_call_batch(struct agent *ag, struct frame *fs, unsigned top)
{
	struct frame *f = &fs[top];
	const struct llm_msg *m = f->pending;
	struct par v[OR_PAR_MAX];
	unsigned idx[OR_PAR_MAX], n, i;
	struct llm_msg *tm;
	struct tool_out out;
	const char *res = NULL;

	for (n = 0; f->orch == NULL && f->next >= f->solo &&
	    n < MIN(ag->cfg->limits.parallel,
	    OR_PAR_MAX) && f->next + n < m->ncalls && strncmp(m->calls[f->next +
	    n].name, HANDOFF_PREFIX, strlen(HANDOFF_PREFIX)) == 0; n++)
		idx[n] = f->next + n;
	if (n < 2 || !par_run(ag, fs, top, v, idx, n))
		return 0;
	f->solo = idx[n - 1] + 1;	/* what is left runs one by one */
	for (i = 0; i < n && ag->stop == AG_OK; i++) {
		if (v[i].stop < 0 || v[i].stop == AG_WAIT)
			break;
		memset(&out, 0, sizeof(out));
		par_relay_all(ag, f, &v[i], &res, &out);
		if (out.text == NULL)
			break;		/* no result came: run it again */
		if ((tm = frame_msg(ag, f->a, f->tail, LLM_TOOL, out.text,
		    out.len)) == NULL)
			return 1;
		tm->call_id = m->calls[f->next].id;
		tm->tool_name = m->calls[f->next].name;
		tm->is_error = out.is_error;
		f->next++;
		if (v[i].stop != AG_OK) {	/* as it would have here */
			ag->stop = (enum agent_status)v[i].stop;
			if (ag->why[0] == '\0')
				snprintf(ag->why, sizeof(ag->why), "a subagent "
				    "stopped the turn");
		}
	}
	return 1;
}

/* $rN in a loop stage's handoff task: the Nth result of the frame. */
char *
orch_refs(struct agent *ag, const struct frame *f, const char *task)
{
	const struct llm_msg *m;
	const char *p = task, *q;
	struct sbuf sb;
	unsigned long k, n;

	if (strstr(task, "$r") == NULL)
		return (char *)task;
	sbuf_init(&sb, &ag->turn, 0);
	while ((q = strstr(p, "$r")) != NULL) {
		sbuf_add(&sb, p, (size_t)(q - p));
		p = q + 2;
		if (*p < '1' || *p > '9') {
			sbuf_adds(&sb, "$r");
			continue;
		}
		k = strtoul(p, (char **)&p, 10);
		for (n = 0, m = *f->head; m != NULL; m = m->next)
			if (m->role == LLM_TOOL && ++n == k)
				break;
		if (m != NULL)
			sbuf_add(&sb, m->text, m->text_len);
		else
			sbuf_printf(&sb, "$r%lu", k);
	}
	sbuf_adds(&sb, p);
	return sb.err ? NULL : sb.p;
}

/* --- the seams: where the frame loop meets orchestration */

/* Frame fs[*top], an orchestrator, has no calls pending: its answer may
 * end a stage, not the frame, and a plan runs without asking the model.
 * 1 when it moved on (the loop goes round again), 0 when the frame goes
 * on as any other. */
int
orch_next(struct agent *ag, struct frame *fs, unsigned *top)
{
	struct frame *f = &fs[*top];

	if (f->answer != NULL)
		return orch_answered(ag, f, ag->o.plan_only && *top == 0);
	if (f->orch->stage == OS_RUN) {
		orch_run(ag, fs, top);
		return 1;
	}
	return 0;
}

/* Orchestrator f is to ask its model again: 1 when that is one step too
 * many (limits.steps, loop and prep stages), and the turn stops. */
int
orch_over_steps(struct agent *ag, struct frame *f)
{
	if (f->orch->stage > OS_LOOP || ++f->orch->steps <=
	    ag->cfg->limits.steps)
		return 0;
	snprintf(ag->why, sizeof(ag->why), "stopped: %s took %u steps "
	    "without an answer", f->name, ag->cfg->limits.steps);
	ag->stop = AG_LIMIT;
	ev_error(ag, ag->why);
	return 1;
}

/* Orchestrator f's call ended it with final_answer, or (cannot) with
 * cannot_complete. */
void
orch_call_ended(struct frame *f, int cannot)
{
	f->orch->cannot = cannot;
}

/* A call of orchestrator f failed: limits.step_errors of them stop the
 * turn. */
void
orch_call_failed(struct agent *ag, struct frame *f)
{
	if (++f->orch->errors < ag->cfg->limits.step_errors)
		return;
	snprintf(ag->why, sizeof(ag->why), "stopped: %u failed steps in %s",
	    f->orch->errors, f->name);
	ag->stop = AG_FAIL;
	ev_error(ag, ag->why);
}

/* Orchestrator f ended: 1 when with cannot_complete, which fails it (and
 * the turn, when it is the bottom frame). */
int
orch_cannot(struct agent *ag, struct frame *f, int bottom)
{
	if (!f->orch->cannot)
		return 0;
	if (bottom) {
		snprintf(ag->why, sizeof(ag->why), "%s cannot complete the "
		    "task: %s", f->name, f->answer);
		ag->stop = AG_FAIL;
	}
	return 1;
}

/* An agent above orchestrator f handed back r (failed or not): 1 when it
 * ran a plan step, which r ends, 0 when it was a handoff call. */
int
orch_returned(struct agent *ag, struct frame *f, const char *r, int failed)
{
	if (f->orch->stage != OS_RUN)
		return 0;
	if (ag->relay == 0)	/* a step's process: its parent's */
		orch_step_done(ag, f, r, failed);
	return 1;
}

/* A paused turn rebuilt: orchestrator f handed off (handoff event d),
 * maybe as the plan step the event names. */
void
orch_replay_step(struct frame *f, const struct json_doc *d, struct arena *a)
{
	if (f->orch->stage == OS_RUN)
		f->orch->cur = step_named(f->orch, session_str(d, a, 0, "step",
		    NULL));
}

/* A paused turn rebuilt: orchestrator f moved to the stage of
 * `orchestrate` event d. 0, -E_PARSE or -E_NOMEM. */
int
orch_replay(struct agent *ag, struct frame *f, const struct json_doc *d,
    struct arena *a)
{
	unsigned i;
	char *s, *plan = NULL;

	s = session_str(d, a, 0, "stage", NULL);
	for (i = 0; s != NULL && i < ARRAY_LEN(or_stage_names); i++)
		if (strcmp(s, or_stage_names[i]) == 0)
			break;
	if (s == NULL || i == ARRAY_LEN(or_stage_names) ||
	    (i == OS_RUN && (plan = session_str(d, a, 0, "plan", NULL)) ==
	    NULL))
		return -E_PARSE;
	return orch_stage(ag, f, (enum or_stage)i, session_str(d, a, 0, "text",
	    NULL), plan, 0);
}
