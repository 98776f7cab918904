/* agent.c - the agent loop: entry agent, skill agents (handoffs, nested
 * runs with a depth limit), tools, limits, sessions and compaction. */
#include "agent/agent.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fmt/fm.h"
#include "skill/hook.h"
#include "fmt/json.h"
#include "base/log.h"
#include "tool/mcp.h"
#include "fmt/plan.h"
#include "net/net.h"
#include "sandbox/sandbox.h"
#include "session/slog.h"
#include "base/str.h"
#include "config.h"
#if HAVE_JOBS
#include "serve/jobs.h"
#endif
#include "tool/tool.h"

#define MAX_DEPTH	3		/* entry -> skill -> skill -> skill */
#define MAX_HASHES	128
#define REPEAT_REFUSE	3		/* the 3rd identical call is refused */
#define REPEAT_STOP	5		/* the 5th stops the turn */
#define HANDOFF_PREFIX	"handoff_to_"
/* Tools from outside (tool_ext): only builds with a feature that makes
 * them have the code. */
#define EXT(ag)		(HAVE_MCP || HAVE_JOBS ? (ag)->o.ext : NULL)

static const char default_instructions[] =
    "You are skillbox, an assistant running on a small Linux device. "
    "Answer briefly and precisely. Use the skills to inspect or change the "
    "device; never invent command output.";

struct agent {
	const struct cfg	*cfg;
	struct agent_opts	 o;
	struct arena		*perm;
	struct arena		 sess[2];	/* conversation, semi-space */
	unsigned		 cur;
	struct arena		 turn;
	struct skill_reg	 reg;
	struct llm_client	*cl;		/* NULL: offline */
	struct slog		 log;
	int			 logging;
	const char		*session;
	const char		*workspace;
	struct sbx_policy	 base;
	unsigned		 host_allow, host_deny;
	struct mcp		*mcp;		/* MCP servers' tools */
	struct tool_ext		 mcp_ext;

	struct llm_msg		*msgs, **tail;
	unsigned		 nitems;
	size_t			 bytes;		/* conversation size */
	const char		*summary;	/* compacted history */
	const char		*activated[16];	/* inline-activated skills */
	unsigned		 nactivated;

	unsigned		 turn_no, calls;
	long long		 deadline;
	unsigned long		 in_tok, out_tok;
	double			 cost;
	uint64_t		 hashes[MAX_HASHES];
	unsigned char		 counts[MAX_HASHES];
	unsigned		 nhashes;
	unsigned long long	 ws_start;	/* workspace bytes before the
						 * turn's first writing tool */
	int			 ws_measured;
	enum agent_status	 stop;		/* why the turn must end */
	char			 why[320];

	int			 waiting;	/* a turn paused on ask_user */
	const char		*question;
	struct llm_msg		**wait_tail, *wait_mark; /* before it */
	long long		 replay_from;	/* where resume read from */

	struct hook_env		 hooks;
	int			 approval;	/* the pause is for an approval */
	const char		*approved;	/* the call a person approved */
	int			 relay;		/* a plan step's process: its
						 * events go to fd relay - 1 */
};

/* --- events */

struct ev {
	struct sbuf		 sb;
	struct json_writer	 w;
	struct agent_event	 t;
};

static void
ev_begin(struct agent *ag, struct ev *e, const char *type)
{
	sbuf_init(&e->sb, &ag->turn, 0);
	json_writer_init(&e->w, &e->sb);
	memset(&e->t, 0, sizeof(e->t));
	e->t.type = type;
	e->t.ms = -1;
	json_begin_obj(&e->w);
	json_kstr(&e->w, "type", type);
	json_key(&e->w, "turn");
	json_put_uint(&e->w, ag->turn_no);
}

static void ev_emit(struct agent *ag, struct agent_event *t, const char *json,
    size_t n, int log);

static int
relay_write(int fd, const char *p, size_t n)
{
	ssize_t k;

	while (n > 0) {
		if ((k = write(fd, p, n)) < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Close the event, log it (unless it is a text delta) and hand it on. */
static void
ev_end(struct agent *ag, struct ev *e, int log)
{
	json_end_obj(&e->w);
	if (json_writer_err(&e->w) != 0) {
		ag->stop = AG_NOMEM;
		return;
	}
	ev_emit(ag, &e->t, e->sb.p, e->sb.len, log);
}

/* Log the event t, its JSON line json (unless a text delta: !log), and
 * hand it on. A plan step's process sends its logged events to the
 * orchestrator's instead (orch_batch). */
static void
ev_emit(struct agent *ag, struct agent_event *t, const char *json, size_t n,
    int log)
{
	struct ev w;
	long long off = ag->log.off;
	int x;

	if (HAVE_ORCH && ag->relay > 0) {
		if (log && (relay_write(ag->relay - 1, json, n) != 0 ||
		    relay_write(ag->relay - 1, "\n", 1) != 0))
			_exit(1);	/* the orchestrator is gone */
		return;
	}
	if (log && ag->logging && (x = slog_append(&ag->log, json, n)) != 0) {
		if (x == -E_IO) {
			snprintf(ag->why, sizeof(ag->why), "session log %s: %s",
			    ag->log.path, strerror(ag->log.err_no));
			ag->logging = 0;	/* say it once; keep answering */
		} else {
			/* An event the log cannot hold stops the turn: what
			 * it carried (a reply's tool calls) must not run
			 * unlogged. */
			snprintf(ag->why, sizeof(ag->why), "the %s event (%zu "
			    "bytes) %s: the turn is stopped", t->type,
			    n, x == -E_LIMIT ? "is over the session "
			    "log's line limit" : "does not fit in the memory "
			    "budget");
			ag->stop = x == -E_NOMEM ? AG_NOMEM : AG_FAIL;
		}
		ev_begin(ag, &w, "error");
		json_kstr(&w.w, "message", ag->why);
		w.t.text = ag->why;
		ev_end(ag, &w, x == -E_LIMIT);
	}
	if (ag->o.on_event != NULL) {
		t->json = json;
		t->n = n;
		t->off = ag->log.off != off ? ag->log.off : -1;
		if (t->text != NULL && t->len == 0)
			t->len = strlen(t->text);
		ag->o.on_event(ag->o.ctx, t);
	}
}

/* The start of a tool event: which agent, which call, which tool. */
static void
ev_tool(struct agent *ag, struct ev *e, const char *type, const char *agent,
    const char *id, const char *name)
{
	ev_begin(ag, e, type);
	e->t.agent = agent;
	e->t.name = name;
	json_kstr(&e->w, "agent", agent);
	if (id != NULL) {
		json_kstr(&e->w, "id", id);
	}
	json_kstr(&e->w, "name", name);
}

/* A tool's result; ms < 0: not timed. */
static void
ev_tool_end(struct agent *ag, const char *agent, const char *id,
    const char *name, const struct tool_out *out, long long ms)
{
	struct ev ev;

	ev_tool(ag, &ev, "tool_end", agent, id, name);
	json_key(&ev.w, "ok");
	json_put_bool(&ev.w, !out->is_error);
	if (ms >= 0) {
		json_key(&ev.w, "ms");
		json_put_int(&ev.w, ms);
	}
	if (out->confinement != NULL) {
		json_kstr(&ev.w, "confinement", out->confinement);
	}
	if (out->as_root) {
		json_key(&ev.w, "as_root");
		json_put_bool(&ev.w, 1);
	}
	if (out->activated != NULL) {
		json_kstr(&ev.w, "skill", out->activated);
	}
	json_key(&ev.w, "output");
	json_put_strn(&ev.w, out->text, out->len);
	ev.t.ok = !out->is_error;
	ev.t.ms = ms;
	ev.t.confinement = out->confinement;
	ev.t.text = out->text;
	ev.t.len = out->len;
	ev_end(ag, &ev, 1);
}

static void
ev_simple(struct agent *ag, const char *type, const char *key,
    const char *val)
{
	struct ev e;

	ev_begin(ag, &e, type);
	if (key != NULL) {
		json_key(&e.w, key);
		json_put_str(&e.w, val);
	}
	if (strcmp(type, "error") == 0)
		e.t.text = val;
	else
		e.t.agent = val;	/* agent_start, agent_end */
	ev_end(ag, &e, 1);
}

/* A handoff going to a skill agent (with its task) or coming back (with
 * the result). */
static void
ev_handoff(struct agent *ag, const char *from, const char *to, int back,
    const char *text, int offline, const char *step)
{
	struct ev ev;

	ev_begin(ag, &ev, "handoff");
	json_kstr(&ev.w, "from", from);
	json_kstr(&ev.w, "to", to);
	json_key(&ev.w, back ? "result" : "task");
	json_put_str(&ev.w, text);
	if (HAVE_ORCH && step != NULL) {	/* a plan step's variable */
		json_kstr(&ev.w, "step", step);
	}
	if (offline) {
		json_key(&ev.w, "offline");
		json_put_bool(&ev.w, 1);
	}
	ev.t.from = from;
	ev.t.name = to;
	ev.t.back = back;
	ev.t.text = text;
	ev_end(ag, &ev, 1);
}

static void
ev_error(struct agent *ag, const char *msg)
{
	ev_simple(ag, "error", "message", msg);
}

/* Is name one of the space-separated words of list? */
static int
in_words(const char *list, const char *name)
{
	const char *p = list;
	size_t len = strlen(name);

	while ((p = strstr(p, name)) != NULL) {
		if ((p == list || p[-1] == ' ') && (p[len] == '\0' ||
		    p[len] == ' '))
			return 1;
		p += len;
	}
	return 0;
}

/* Keep only the skills named in o.only (the array stays sorted). */
static void
only_skills(struct agent *ag)
{
	const char *w = ag->o.only;
	unsigned i, k;

	if (w == NULL)
		return;
	for (i = k = 0; i < ag->reg.n; i++)
		if (in_words(w, ag->reg.v[i]->name))
			ag->reg.v[k++] = ag->reg.v[i];
	ag->reg.n = k;
}

/* --- conversation */

static struct arena *
sess(struct agent *ag)
{
	return &ag->sess[ag->cur];
}

static struct llm_msg *
msg_add(struct agent *ag, struct arena *a, struct llm_msg ***tail,
    enum llm_role role, const char *text, size_t n)
{
	struct llm_msg *m = arena_zalloc(a, sizeof(*m));

	if (m == NULL || (m->text = arena_strndup(a, text, n)) == NULL) {
		ag->stop = AG_NOMEM;
		return NULL;
	}
	m->role = role;
	m->text_len = n;
	**tail = m;
	*tail = &m->next;
	if (a == sess(ag)) {
		ag->nitems++;
		ag->bytes += n;
	}
	return m;
}

/* --- frames: one agent's run */

/* One agent of the turn: the entry agent at the bottom of the stack, a
 * skill agent above the frame that handed off to it. A frame is driven a
 * step at a time (a model call, or one of the calls it asked for), so the
 * whole turn is data, not C recursion. */
struct frame {
	const char		*name;		/* "entry" or the skill */
	const struct skill	*skill;		/* NULL for the entry agent */
	struct arena		*a;		/* where its messages live */
	struct llm_msg		**head, ***tail;
	struct llm_msg		*own, **own_tail; /* a skill agent's list */
	struct llm_tool		*tools;
	unsigned		 ntools;
	char			*system;
	unsigned		 depth;
	int			 handed_back;
	const char		*result;	/* hand_back's */
	struct llm_msg		*pending;	/* the reply whose calls run */
	unsigned		 next;		/* its next call */
	long long		 t0;		/* when that call started */
	const char		*answer;	/* the frame is done */
	int			 tools_off;	/* tools listed, not offered */
	struct orch		*orch;		/* an orchestrator's run */
	unsigned		 maxd;		/* its agents go this deep */
	unsigned		 solo;		/* calls before it: one by one */
};

/* How deep the agents below frame f may go: limits.depth, lowered by a
 * skill's metadata.max_agent_depth on the way down (ORCH=1 builds). */
#define MAXD(f)		(HAVE_ORCH ? (f)->maxd : MAX_DEPTH)
#define DEEPEST(ag)	(HAVE_ORCH ? (ag)->cfg->limits.depth : MAX_DEPTH)

static void frame_return(struct agent *ag, struct frame *fs, unsigned *top,
    int failed);

static int
may_handoff(const struct agent *ag, const char *from, const char *to)
{
	char pair[160];
	unsigned i;

	if (strcmp(from, "entry") == 0)
		return 1;
	if (ag->cfg->nhandoff_pairs == 0)
		return ag->cfg->handoffs_all;
	snprintf(pair, sizeof(pair), "%s->%s", from, to);
	for (i = 0; i < ag->cfg->nhandoff_pairs; i++)
		if (strcmp(ag->cfg->handoff_pairs[i], pair) == 0)
			return 1;
	return 0;
}

static int
add_tool(struct frame *f, struct arena *a, unsigned cap, enum tool_id id)
{
	if (f->ntools >= cap)
		return -E_LIMIT;
	tool_def(id, &f->tools[f->ntools++]);
	(void)a;
	return 0;
}

/* A skill taken by an orchestration skill's Allowed-Skills: reached only
 * through that orchestrator, so the entry agent does not see it. */
static int
owned(const struct agent *ag, const char *name)
{
	const struct skill_osk *o;
	unsigned i;

	for (i = 0; i < ag->reg.n; i++)
		if ((o = skill_osk(ag->reg.v[i])) != NULL &&
		    (o->sk.flags & SKILL_OSK_ALLOWED) && o->allowed != NULL &&
		    in_words(o->allowed, name))
			return 1;
	return 0;
}

static int	mcp_init(struct agent *);
static int	orch_setup(struct agent *, struct frame *);
static int	orch_may_call(const struct frame *, const struct skill *);

/* The handoff_to_<skill> tools of frame f: the skills it may hand a task
 * to (all, or for an orchestrator those it is allowed). */
static int
add_handoffs(struct agent *ag, struct frame *f, unsigned cap)
{
	static const char handoff_params[] = "{\"type\":\"object\","
	    "\"properties\":{\"task\":{\"type\":\"string\",\"description\":"
	    "\"What the skill agent should do, with the details it needs.\"}},"
	    "\"required\":[\"task\"]}";
	unsigned i;

	for (i = 0; i < ag->reg.n && f->ntools < cap; i++) {
		const struct skill *sk = ag->reg.v[i];
		struct llm_tool *t = &f->tools[f->ntools];

		/* Providers want tool names in [A-Za-z0-9_-]: a skill named
		 * in another script is reached only inline. */
		if (sk == f->skill || (sk->flags & SKILL_NO_MODEL) ||
		    !skill_name_is_ascii(sk->name) ||
		    strlen(sk->name) > 64 - strlen(HANDOFF_PREFIX) ||
		    !may_handoff(ag, f->name, sk->name))
			continue;
		/* Without ORCH nothing here can run an orchestration
		 * skill. */
		if (HAVE_ORCH ? (f->orch != NULL ? !orch_may_call(f, sk) :
		    owned(ag, sk->name)) : skill_osk(sk) != NULL)
			continue;
		t->name = arena_printf(f->a, HANDOFF_PREFIX "%s", sk->name);
		t->description = arena_printf(f->a, "Hand a task to the '%s' "
		    "skill agent: %s", sk->name, sk->description);
		t->params = handoff_params;
		if (t->name == NULL || t->description == NULL)
			return -E_NOMEM;
		f->ntools++;
	}
	return 0;
}

/* Tools and the system prompt of a frame. */
static int
frame_setup(struct agent *ag, struct frame *f)
{
	unsigned cap = ag->reg.n + T__COUNT + 1 + (EXT(ag) != NULL ?
	    TOOL_EXT_TOOLS : 0), i;
	const struct tool_ext *x;
	struct sbuf sb;
	int e = 0;

	if (HAVE_ORCH && f->skill != NULL && skill_osk(f->skill) != NULL)
		return orch_setup(ag, f);
	if ((f->tools = arena_zalloc(f->a, cap * sizeof(*f->tools))) == NULL)
		return -E_NOMEM;
	f->ntools = 0;
	sbuf_init(&sb, f->a, 0);
	if (f->skill == NULL) {
		sbuf_adds(&sb, ag->cfg->instructions != NULL ?
		    ag->cfg->instructions : default_instructions);
		sbuf_adds(&sb, "\n\n# Skills\n");
		for (i = 0; i < ag->reg.n; i++)
			if (!(ag->reg.v[i]->flags & SKILL_NO_MODEL) &&
			    !(HAVE_ORCH && owned(ag, ag->reg.v[i]->name)))
				sbuf_printf(&sb, "- %s: %s\n", ag->reg.v[i]->name,
				    ag->reg.v[i]->description);
		if (ag->reg.n == 0)
			sbuf_adds(&sb, "(none installed)\n");
		if (ag->cfg->skill_inline) {
			sbuf_adds(&sb, "\nTo use a skill, call activate_skill "
			    "with its name, then follow its instructions with "
			    "the skill tools, passing skill=<name>.\n");
			if (ag->reg.n > 0) {
				e = tool_def_activate(f->a, &ag->reg,
				    &f->tools[f->ntools]);
				f->ntools += e == 0;
			}
			add_tool(f, f->a, cap, T_RUN_SKILL_SCRIPT);
			add_tool(f, f->a, cap, T_RUN_COMMAND_LINE);
			add_tool(f, f->a, cap, T_READ_SKILL_FILE);
			add_tool(f, f->a, cap, T_LIST_SKILL_FILES);
			add_tool(f, f->a, cap, T_LOAD_SKILL_RESOURCES);
		} else {
			sbuf_adds(&sb, "\nTo use a skill, call handoff_to_<name> "
			    "with the task: that skill's agent does the work "
			    "and hands back its result. Answer directly when "
			    "no skill is needed.\n");
		}
		add_tool(f, f->a, cap, T_LIST_SKILLS);
		if (ag->cfg->create_skill)
			add_tool(f, f->a, cap, T_CREATE_SKILL);
	} else {
		char *fm, *body;
		unsigned bl;

		if ((e = skill_load(f->skill, f->a, &fm, &body, &bl)) != 0)
			return e;
		sbuf_printf(&sb, "You are the agent of the skill '%s'. Do the "
		    "task you are given with your tools, following the skill's "
		    "instructions below. Paths are relative to the skill "
		    "folder. When done, call hand_back with the result.\n\n"
		    "<skill name=\"%s\">\n%s\n</skill>\n", f->skill->name,
		    f->skill->name, body);
		for (i = 0; HAVE_CREW && i < ag->cfg->nroles; i++)
			if (strcmp(ag->cfg->roles[i].skill, f->skill->name) == 0)
				sbuf_printf(&sb, "\nYou work for the crew's agent "
				    "'%s'. Its instructions:\n<agent name=\"%s\">"
				    "\n%s\n</agent>\n", ag->cfg->roles[i].agent,
				    ag->cfg->roles[i].agent,
				    ag->cfg->roles[i].text);
		add_tool(f, f->a, cap, T_RUN_SKILL_SCRIPT);
		add_tool(f, f->a, cap, T_RUN_COMMAND_LINE);
		add_tool(f, f->a, cap, T_READ_SKILL_FILE);
		add_tool(f, f->a, cap, T_LIST_SKILL_FILES);
		add_tool(f, f->a, cap, T_LOAD_SKILL_RESOURCES);
		add_tool(f, f->a, cap, T_HAND_BACK);
	}
	/* A question pauses the turn in the session log: not without one. */
	if (ag->logging)
		add_tool(f, f->a, cap, T_ASK_USER);
	if (ag->workspace != NULL) {
		add_tool(f, f->a, cap, T_WRITE_FILE);
		add_tool(f, f->a, cap, T_READ_FILE);
		add_tool(f, f->a, cap, T_LIST_WORKSPACE_FILES);
		add_tool(f, f->a, cap, T_GET_FILE_INFO);
	}
	for (x = EXT(ag); x != NULL; x = x->next) {
		unsigned room = cap - f->ntools;

		if ((e = x->tools(x->ctx, f->a, f->name, f->tools + f->ntools,
		    room < TOOL_EXT_TOOLS ? room : TOOL_EXT_TOOLS)) < 0)
			return e;
		f->ntools += (unsigned)e;
	}
	if (f->skill == NULL && ag->summary != NULL)
		sbuf_printf(&sb, "\n# Earlier in this conversation "
		    "(summary)\n%s\n", ag->summary);
	for (i = 0; f->skill == NULL && i < ag->nactivated; i++) {
		const struct skill *sk = skill_find(&ag->reg, ag->activated[i]);
		char *fm, *body;
		unsigned bl;

		if (sk != NULL && skill_load(sk, f->a, &fm, &body, &bl) == 0)
			sbuf_printf(&sb, "\n<skill name=\"%s\">\n%s\n</skill>\n",
			    sk->name, body);
	}
	/* Handoff tools, entry agent and (where allowed) skill agents. */
	if ((f->skill == NULL ? !ag->cfg->skill_inline : f->depth < MAXD(f)) &&
	    add_handoffs(ag, f, cap) != 0)
		return -E_NOMEM;
	if (sb.err)
		return -E_NOMEM;
	f->system = sb.p;
	return 0;
}

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


static void
tool_env(struct agent *ag, const struct frame *f, struct tool_env *env)
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
 * from the agent, never from what the model names. */
static int
offered(const struct frame *f, const char *name)
{
	unsigned i;

	for (i = 0; i < f->ntools; i++)
		if (strcmp(f->tools[i].name, name) == 0)
			return 1;
	return 0;
}

/* One call: returns the result text for the model in *out. */
/* A skill agent's frame f for sk at depth, under a frame whose agents go
 * lim deep; its task is the first message; its messages live in the
 * turn's arena. 0 or -E_NOMEM. */
static int
frame_skill(struct agent *ag, struct frame *f, const struct skill *sk,
    const char *task, unsigned depth, unsigned lim)
{
	memset(f, 0, sizeof(*f));
	f->name = sk->name;
	f->skill = sk;
	f->a = &ag->turn;
	f->own_tail = &f->own;
	f->head = &f->own;
	f->tail = &f->own_tail;
	f->depth = depth;
	f->maxd = lim;
	if (HAVE_ORCH && (sk->flags & SKILL_DEPTH_MASK) != 0)
		f->maxd = MIN(lim, depth - 1 +
		    ((sk->flags & SKILL_DEPTH_MASK) >> SKILL_DEPTH_SHIFT));
	if (frame_setup(ag, f) != 0 || msg_add(ag, f->a, f->tail, LLM_USER,
	    task, strlen(task)) == NULL)
		return -E_NOMEM;
	return 0;
}

/* A string member of obj, copied into a; NULL when missing. */
static char *
dstr(const struct json_doc *d, struct arena *a, int obj, const char *key,
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
static int
orch_may_call(const struct frame *f, const struct skill *sk)
{
	const struct skill_osk *o = skill_osk(f->skill);

	if (sk == f->skill)
		return 0;
	if (f->orch->stage == OS_PREP && (o->sk.flags & SKILL_OSK_PREP))
		return o->prep != NULL && in_words(o->prep, sk->name);
	if (o->sk.flags & SKILL_OSK_ALLOWED)
		return o->allowed != NULL && in_words(o->allowed, sk->name);
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
static int
orch_setup(struct agent *ag, struct frame *f)
{
	struct orch *o = f->orch;
	unsigned cap = ag->reg.n + 4, i;
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
	if (f->depth < MAXD(f) && add_handoffs(ag, f, cap) != 0)
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
		add_tool(f, f->a, cap, T_FINAL_ANSWER);
		if (o->stage == OS_LOOP)
			add_tool(f, f->a, cap, T_CANNOT_COMPLETE);
		if (ag->logging)
			add_tool(f, f->a, cap, T_ASK_USER);
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
	if (msg != NULL && msg_add(ag, f->a, f->tail, LLM_USER, msg,
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

static enum agent_status run_frames(struct agent *ag, struct frame *fs,
    unsigned top, int resumed, const char **answer);
static void call_step(struct agent *ag, struct frame *fs, unsigned *top);
static void count_usage(struct agent *ag, unsigned long in,
    unsigned long out, int cache);

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
		call_step(ag, fs, &t);
	} else {			/* plan step k */
		f->orch->cur = k;
		orch_start(ag, fs, &t);
	}
	if (t > top && ag->stop == AG_OK)
		(void)run_frames(ag, &fs[t], 0, 1, &ans);
	failed = ag->stop != AG_OK;
	if (t > top && ag->stop != AG_WAIT)
		frame_return(ag, fs, &t, failed);
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
	if ((t.type = dstr(&d, a, 0, "type", NULL)) == NULL)
		return;
	if (strcmp(t.type, "usage") == 0) {
		unsigned long ti = 0, tn = 0;

		if (json_int(&d, json_get(&d, 0, "input_tokens"), &v) == 0)
			ti = (unsigned long)v;
		if (json_int(&d, json_get(&d, 0, "output_tokens"), &v) == 0)
			tn = (unsigned long)v;
		const char *ch = HAVE_EVAL ? dstr(&d, a, 0, "cache",
		    NULL) : NULL;

		ag->calls++;
		count_usage(ag, ti, tn, ch == NULL ? -1 :
		    strcmp(ch, "hit") == 0);
		return;
	}
	t.agent = dstr(&d, a, 0, "agent", NULL);
	t.name = dstr(&d, a, 0, "name", NULL);
	t.confinement = dstr(&d, a, 0, "confinement", NULL);
	if (json_int(&d, json_get(&d, 0, "ms"), &v) == 0)
		t.ms = v;
	if (json_bool(&d, json_get(&d, 0, "ok"), &ok) == 0)
		t.ok = ok;
	if (strcmp(t.type, "error") == 0 && (t.text = dstr(&d, a, 0,
	    "message", &t.len)) != NULL)
		snprintf(ag->why, sizeof(ag->why), "%s", t.text);
	else if (strcmp(t.type, "handoff") == 0) {
		/* Texts are copied only where needed: the printers use the
		 * names, and outputs may be large. */
		t.from = dstr(&d, a, 0, "from", NULL);
		t.name = to = dstr(&d, a, 0, "to", NULL);
		t.back = json_get(&d, 0, "result") >= 0;
		if (t.back && to != NULL && strcmp(to, f->name) == 0)
			*res = t.text = dstr(&d, a, 0, "result", &t.len);
	} else if (strcmp(t.type, "tool_end") == 0 && t.agent != NULL &&
	    strcmp(t.agent, f->name) == 0) {	/* a handoff call's result */
		out->text = dstr(&d, a, 0, "output", &out->len);
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
static int
call_batch(struct agent *ag, struct frame *fs, unsigned top)
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
		if ((tm = msg_add(ag, f->a, f->tail, LLM_TOOL, out.text,
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
static char *
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
		f->orch->cur = step_named(f->orch, dstr(d, a, 0, "step",
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

	s = dstr(d, a, 0, "stage", NULL);
	for (i = 0; s != NULL && i < ARRAY_LEN(or_stage_names); i++)
		if (strcmp(s, or_stage_names[i]) == 0)
			break;
	if (s == NULL || i == ARRAY_LEN(or_stage_names) ||
	    (i == OS_RUN && (plan = dstr(d, a, 0, "plan", NULL)) == NULL))
		return -E_PARSE;
	return orch_stage(ag, f, (enum or_stage)i, dstr(d, a, 0, "text",
	    NULL), plan, 0);
}

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
static void
call_ended(struct frame *f, const char *tool, const char *r)
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
static void
ask_user(struct agent *ag, struct frame *f, const struct llm_call *c,
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

static void
hooks_init(struct agent *ag)
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
static int
gate(struct agent *ag, struct frame *f, const struct llm_call *c,
    struct tool_out *out)
{
	struct hook_step st;
	enum hook_verdict v;
	const char *why, *q;
	struct ev ev;
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
	q = arena_printf(&ag->turn, "Approve %s %.*s%s (agent "
	    "%s; %s)?", c->name, (int)MIN(c->args_len, 400), c->args,
	    c->args_len > 400 ? "..." : "", f->name, why);
	input_begin(ag, &ev, "approval", f, c->id);
	json_kstr(&ev.w, "name", c->name);
	json_key(&ev.w, "args");
	json_put_strn(&ev.w, c->args, c->args_len);
	json_kstr(&ev.w, "question", q);
	ev.t.name = c->name;
	ag->approval = 1;
	input_end(ag, &ev, q);
	return 1;
}

/* The post hooks of call c, with its outcome (none without HOOKS: only
 * calls are checked then, by approvals). */
static void
call_hooked(struct agent *ag, const struct frame *f, const struct llm_call *c,
    const struct tool_out *out)
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
static int
step_hooked(struct agent *ag, const struct frame *f, enum hook_event ev,
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
	if (!offered(f, c->name)) {
		out->text = arena_printf(&ag->turn, "there is no tool named "
		    "'%s' here (the tools you were given are the ones you may "
		    "call)", c->name);
		out->is_error = 1;
		return 0;
	}
	if (c->bad_args) {
		out->text = arena_printf(&ag->turn, "the arguments are not "
		    "valid JSON (got: %.200s); call %s again with a JSON "
		    "object matching its schema", c->args, c->name);
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
		    !may_handoff(ag, f->name, to)) {
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
				call_hooked(ag, f, c, out);
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
		ask_user(ag, f, c, out);
		return 0;
	}
	tool_env(ag, f, &env);
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
	call_hooked(ag, f, c, out);
	if (!out->is_error)
		call_ended(f, c->name, out->text);
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

static double
price(const struct agent *ag, unsigned long in, unsigned long out)
{
	const struct cfg_price *p = cfg_price(ag->cfg, ag->cfg->model);

	if (p == NULL)
		return 0;
	return ((double)in * p->input + (double)out * p->output) / 1e6;
}

/* Add a model call's tokens to the session and log them. cache is
 * llm_cached(): a reply from the response cache cost nothing, so it
 * counts 0 tokens and no money, and says "cache":"hit" ("miss" when the
 * cache is on and the model was asked). */
static void
count_usage(struct agent *ag, unsigned long in, unsigned long out, int cache)
{
	struct ev ev;
	const char *c;

	if (!HAVE_EVAL)
		cache = -1;
	if (cache == 1)
		in = out = 0;
	ag->in_tok += in;
	ag->out_tok += out;
	ag->cost += price(ag, in, out);
	ev_begin(ag, &ev, "usage");
	json_key(&ev.w, "input_tokens");
	json_put_uint(&ev.w, in);
	json_key(&ev.w, "output_tokens");
	json_put_uint(&ev.w, out);
	json_key(&ev.w, "session_tokens");
	json_put_uint(&ev.w, ag->in_tok + ag->out_tok);
	if (ag->cost > 0 && (c = arena_printf(&ag->turn, "%.6f",
	    ag->cost)) != NULL) {
		json_key(&ev.w, "cost");
		json_put_raw(&ev.w, c, strlen(c));
	}
	if (cache >= 0) {
		json_kstr(&ev.w, "cache", cache ? "hit" : "miss");
	}
	ev_end(ag, &ev, 1);
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
	if ((tm = msg_add(ag, f->a, f->tail, LLM_TOOL, out->text,
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
	if (step_hooked(ag, f, HOOK_PRE_MODEL, NULL, NULL))
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
	count_usage(ag, r.in_tokens, r.out_tokens, llm_cached(ag->cl));
	m = msg_add(ag, f->a, f->tail, LLM_ASSISTANT, r.text, r.text_len);
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
	(void)step_hooked(ag, f, HOOK_POST_MODEL, m->text, NULL);
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
static void
call_step(struct agent *ag, struct frame *fs, unsigned *top)
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
		frame_return(ag, fs, top, failed);
}

/* The agent at fs[*top] has ended (failed or not): its answer is the
 * result of the handoff call, or of the plan step, of the frame below. */
static void
frame_return(struct agent *ag, struct frame *fs, unsigned *top, int failed)
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
		call_hooked(ag, f, c, &out);
	if (ag->stop != AG_NOMEM)
		call_done(ag, f, c, &out, f->t0);
	f->next++;
}

/* Run the turn from the frame stack fs[0..top] until the bottom frame
 * answers, a question pauses it (AG_WAIT: the frames stay as they are) or
 * something stops the turn. `resumed`: the top frame started earlier. */
static enum agent_status
run_frames(struct agent *ag, struct frame *fs, unsigned top, int resumed,
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
				if (HAVE_ORCH && call_batch(ag, fs, top))
					continue;
				call_step(ag, fs, &top);
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

/* --- compaction */

static enum agent_status
compact(struct agent *ag, const char **out)
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
	count_usage(ag, r.in_tokens, r.out_tokens, llm_cached(ag->cl));
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

static int
needs_compaction(const struct agent *ag)
{
	const struct cfg *c = ag->cfg;

	if (c->limits.compact_after != 0 && ag->nitems >= c->limits.compact_after)
		return 1;
	/* about 4 bytes a token; compact at 80% of the window */
	return c->limits.context_window != 0 &&
	    ag->bytes / 4 > c->limits.context_window / 10 * 8;
}

/* --- offline: no model, the best-matching action of the best skill */

/* Does w (n bytes) start a word of hay? A prefix is enough: "log" finds
 * "logs", but not "catalog". */
static int
word_in(const char *hay, const char *w, size_t n)
{
	const char *p;

	for (p = hay; (p = strcasestr(p, w)) != NULL; p += n)
		if (p == hay || !((p[-1] | 32) >= 'a' && (p[-1] | 32) <= 'z'))
			return 1;
	return 0;
}

/* Score the comma-separated trigger phrases at s, up to ';' or the end
 * (set in *end): 10 for each that starts a word of the request. */
static int
triggers(const char *s, const char **end, const char *input)
{
	const char *e;
	char w[64];
	size_t n;
	int sc = 0;

	for (; *s != '\0' && *s != ';'; s = *e == ',' ? e + 1 : e) {
		for (e = s; *e != '\0' && *e != ',' && *e != ';'; e++)
			;
		while (s < e && *s == ' ')
			s++;
		for (n = (size_t)(e - s); n > 0 && s[n - 1] == ' '; n--)
			;
		if (n > 0 && n < sizeof(w)) {
			memcpy(w, s, n);
			w[n] = '\0';
			sc += word_in(input, w, n) ? 10 : 0;
		}
	}
	*end = s;
	return sc;
}

/* Score a skill against the request: trigger phrases count most. */
static int
score(const struct skill *sk, const char *input)
{
	static const char *const stop[] = { "the", "and", "what", "why",
	    "how", "is", "my", "are", "this", "that", "with", "for", "of",
	    "to", "in", "on", "it", "me", "show", "tell", "using", "can" };
	const char *s, *e;
	char w[64];
	int sc = 0;
	size_t n, i;

	if (sk->triggers != NULL)
		sc = triggers(sk->triggers, &e, input);
	for (s = input; *s != '\0'; s = e) {
		while (*s != '\0' && !((*s | 32) >= 'a' && (*s | 32) <= 'z'))
			s++;
		for (e = s; (*e | 32) >= 'a' && (*e | 32) <= 'z'; e++)
			;
		n = (size_t)(e - s);
		if (n < 3 || n >= sizeof(w))
			continue;
		memcpy(w, s, n);
		w[n] = '\0';
		for (i = 0; i < ARRAY_LEN(stop); i++)
			if (strcasecmp(w, stop[i]) == 0)
				break;
		if (i < ARRAY_LEN(stop))
			continue;
		if (strcasestr(sk->name, w) != NULL)
			sc += 3;
		if (word_in(sk->description, w, n))
			sc += 1;
	}
	return sc;
}

/* The action of sk that fits the request: the metadata.actions entry
 * ("SCRIPT: trigger, ...; ...") whose triggers score most, else the
 * default action (*script NULL when there is none). Returns the score. */
static int
action(const struct skill *sk, const char *input, const char **script,
    size_t *len)
{
	const char *s, *c, *e;
	int sc, top = 0;

	*script = sk->default_action;
	*len = *script != NULL ? strlen(*script) : 0;
	for (s = sk->actions; s != NULL && *s != '\0'; s = e + (*e == ';')) {
		while (*s == ' ')
			s++;
		if ((c = strchr(s, ':')) == NULL)
			break;
		if ((sc = triggers(c + 1, &e, input)) > top) {
			top = sc;
			*script = s;
			for (*len = (size_t)(c - s); s[*len - 1] == ' ';)
				--*len;
		}
	}
	return top;
}

static enum agent_status
offline_turn(struct agent *ag, const char *input, const char **final)
{
	const struct skill *best = NULL;
	const char *script = NULL, *scr, *text;
	struct json_doc d;
	struct tool_env env;
	struct tool_out out;
	struct json_writer jw;
	struct frame f;
	struct sbuf sb;
	struct ev ev;
	char *args, *so;
	int sc, top = 0, human;
	size_t len = 0, n;
	unsigned i;

	for (i = 0; i < ag->reg.n; i++) {
		const struct skill *sk = ag->reg.v[i];

		/* disable-model-invocation: only a person starts it. */
		if (sk->flags & SKILL_NO_MODEL)
			continue;
		sc = action(sk, input, &scr, &n);
		if (scr != NULL && (sc += score(sk, input)) > top)
			top = sc, best = sk, script = scr, len = n;
	}
	if (best == NULL) {
		*final = "No model is configured (offline mode), and no "
		    "installed skill with a default action matches the "
		    "request. Configure a provider in skillbox.yaml, or name "
		    "a skill's topic (skillbox skills list shows them).";
		return AG_FAIL;
	}
	ev_handoff(ag, "entry", best->name, 0, input, 1, NULL);
	memset(&f, 0, sizeof(f));
	f.name = best->name;
	f.skill = best;
	tool_env(ag, &f, &env);
	/* A skill that declares actions prints for a person with --text;
	 * --json (ag->o.json) keeps the JSON. The arguments go through the
	 * JSON writer: the script is text from the skill's author. */
	human = best->actions != NULL && !ag->o.json;
	sbuf_init(&sb, &ag->turn, 0);
	json_writer_init(&jw, &sb);
	json_begin_obj(&jw);
	json_key(&jw, "script");
	json_put_strn(&jw, script, len);
	if (human) {
		json_key(&jw, "args");
		json_begin_arr(&jw);
		json_put_str(&jw, "--text");
		json_end_arr(&jw);
	}
	json_end_obj(&jw);
	if (json_writer_err(&jw) != 0)
		return AG_NOMEM;
	args = sb.p;
	ev_tool(ag, &ev, "tool_start", best->name, NULL, "run_skill_script");
	json_kstr(&ev.w, "args", args);
	ev_end(ag, &ev, 1);
	if (tool_call(&env, &ag->turn, T_RUN_SKILL_SCRIPT, args, strlen(args),
	    &out) != 0)
		return AG_NOMEM;
	ev_tool_end(ag, best->name, NULL, "run_skill_script", &out, -1);
	text = out.text;
	n = out.len;
	if (human && json_parse(&ag->turn, out.text, out.len, 64, &d) == 0 &&
	    json_str(&d, &ag->turn, json_get(&d, 0, "stdout"), &so, &n) == 0)
		text = so;
	while (n > 0 && text[n - 1] == '\n')
		n--;
	sbuf_init(&sb, &ag->turn, 0);
	sbuf_printf(&sb, "%.*s\n\n(offline: no model is configured; this is "
	    "the '%s' skill's %.*s)", (int)n, text, best->name, (int)len,
	    script);
	if (sb.err)
		return AG_NOMEM;
	*final = sb.p;
	return out.is_error ? AG_FAIL : AG_OK;
}

/* --- slash commands and .command.md */

#define HELP_CMDS	"Commands: /help, /skills, /compact, /session, /usage, "

static enum agent_status
slash(struct agent *ag, const char *cmd, const char **final)
{
	struct sbuf sb;
	unsigned i;

	sbuf_init(&sb, &ag->turn, 0);
	if (strcmp(cmd, "/help") == 0) {
		sbuf_adds(&sb, HAVE_MCP ? HELP_CMDS "/mcp_servers, /exit" :
		    HELP_CMDS "/exit");
		if (ag->cfg->commands_dir != NULL)
			sbuf_printf(&sb, "; your commands in %s (/NAME ARGS)",
			    ag->cfg->commands_dir);
		for (i = 0; HAVE_CREW && i < ag->cfg->ncmds; i++)
			sbuf_printf(&sb, "%s/%s", i ? ", " : "; the crew's: ",
			    ag->cfg->cmds[i].name);
		sbuf_adds(&sb, ".\nAnything else goes to the agent.");
	} else if (strcmp(cmd, "/skills") == 0) {
		for (i = 0; i < ag->reg.n; i++)
			sbuf_printf(&sb, "%s - %s\n", ag->reg.v[i]->name,
			    ag->reg.v[i]->description);
		if (ag->reg.n == 0)
			sbuf_adds(&sb, "(no skills installed)");
	} else if (strcmp(cmd, "/compact") == 0) {
		const char *r;
		enum agent_status st = compact(ag, &r);

		*final = r;
		return st;
	} else if (strcmp(cmd, "/session") == 0) {
		sbuf_printf(&sb, "session %s, %u items in the conversation%s, "
		    "log %s", ag->session, ag->nitems, ag->summary ?
		    " after a summary" : "", ag->logging ? ag->log.path :
		    "(none)");
	} else if (strcmp(cmd, "/usage") == 0) {
		sbuf_printf(&sb, "tokens: %lu in, %lu out", ag->in_tok,
		    ag->out_tok);
		if (ag->cost > 0)
			sbuf_printf(&sb, "; cost %.4f", ag->cost);
		sbuf_printf(&sb, "; memory: %zu of %zu KiB in use, peak %zu",
		    mem_used() >> 10, mem_budget() >> 10, mem_peak() >> 10);
	} else if (HAVE_MCP && strcmp(cmd, "/mcp_servers") == 0) {
		mcp_describe(ag->mcp, &sb);
	} else if (strcmp(cmd, "/exit") == 0 || strcmp(cmd, "/quit") == 0) {
		*final = "bye";
		return AG_EXIT;
	} else
		return AG_FAIL;		/* not built in */
	if (sb.err)
		return AG_NOMEM;
	*final = sb.p;
	return AG_OK;
}

/* /NAME ARGS with <commands_dir>/NAME.command.md: its body with
 * $ARGUMENTS replaced. *agent is its front-matter's `agent`, if any. */
static int
expand_command(struct agent *ag, const char *input, char **out,
    const char **agent)
{
	const char *sp = strchr(input, ' '), *args = sp ? sp + 1 : "";
	size_t nlen = sp ? (size_t)(sp - input - 1) : strlen(input) - 1;
	struct fm_node *root, *a;
	struct fm_error fe;
	struct str y, body;
	unsigned yl, bl;
	struct sbuf sb;
	char *path, *text, buf[4096];
	const char *p, *q;
	FILE *f;
	size_t n;

	*agent = NULL;
	path = NULL;
	for (n = 0; HAVE_CREW && n < ag->cfg->ncmds; n++) /* a crew's */
		if (strncmp(ag->cfg->cmds[n].name, input + 1, nlen) == 0 &&
		    ag->cfg->cmds[n].name[nlen] == '\0')
			path = (char *)ag->cfg->cmds[n].path;
	if (path == NULL) {
		if (ag->cfg->commands_dir == NULL || nlen == 0 || nlen > 64)
			return -E_NOENT;
		for (p = input + 1; p < input + 1 + nlen; p++)
			if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' &&
			    *p <= '9') || *p == '-' || *p == '_'))
				return -E_NOENT;
		if ((path = arena_printf(&ag->turn, "%s/%.*s.command.md",
		    ag->cfg->commands_dir, (int)nlen, input + 1)) == NULL)
			return -E_NOMEM;
	}
	if ((f = fopen(path, "r")) == NULL)
		return -E_NOENT;
	sbuf_init(&sb, &ag->turn, 64u << 10);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		sbuf_add(&sb, buf, n);
	fclose(f);
	if (sb.err)
		return sb.err;
	text = sb.p;
	body.p = text;
	body.n = sb.len;
	if (fm_split(text, sb.len, &y, &yl, &body, &bl) == 0 &&
	    fm_parse(&ag->turn, y.p, y.n, yl, &root, &fe) == 0 &&
	    (a = fm_get(root, "agent")) != NULL && a->kind == FM_SCALAR)
		*agent = a->s;
	sbuf_init(&sb, &ag->turn, 0);
	for (p = body.p; p < body.p + body.n; p = q + 10) {
		q = strstr(p, "$ARGUMENTS");
		if (q == NULL || q >= body.p + body.n) {
			sbuf_add(&sb, p, (size_t)(body.p + body.n - p));
			break;
		}
		sbuf_add(&sb, p, (size_t)(q - p));
		sbuf_adds(&sb, args);
	}
	if (sb.err)
		return sb.err;
	*out = (char *)str_dup(&ag->turn, str_trim((struct str){ sb.p,
	    sb.len }));
	return *out != NULL ? 0 : -E_NOMEM;
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
		(void)step_hooked(ag, NULL, HOOK_POST_TURN, st == AG_OK ? ans :
		    ag->why, names[st]);
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
	if (ag->cl != NULL && text[0] != '/' && needs_compaction(ag)) {
		const char *r;

		st = compact(ag, &r);
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
		only_skills(ag);
	if (text[0] == '/') {
		char *sp = strchr(text, ' ');

		if (sp == NULL || sp[1] == '\0') {
			if (sp != NULL)
				*sp = '\0';
			st = slash(ag, text, final);
			if (st != AG_FAIL || *final != NULL) {
				turn_end(ag, st, *final);
				return st;
			}
			if (sp != NULL)
				*sp = ' ';
		}
		e = expand_command(ag, text, &text, &agent);
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
	if (step_hooked(ag, NULL, HOOK_PRE_TURN, text, NULL)) {
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
		st = run_frames(ag, fs, 0, 0, &ans);
		return turn_finish(ag, st, ans, NULL, NULL, final);
	} else {
		mark_tail = ag->tail;
		mark = *ag->tail;
		f->name = "entry";
		f->maxd = DEEPEST(ag);
		f->a = sess(ag);
		f->head = &ag->msgs;
		f->tail = &ag->tail;
		if (frame_setup(ag, f) != 0 || msg_add(ag, f->a, f->tail,
		    LLM_USER, text, strlen(text)) == NULL)
			return AG_NOMEM;
		st = run_frames(ag, fs, 0, 0, &ans);
	}
	return turn_finish(ag, st, ans, mark_tail, mark, final);
}

/* --- sessions: resume by replaying the log */

struct replay {
	struct agent	*ag;
	struct llm_msg	**turn_tail, *turn_mark;
	unsigned	 open_turn;	/* a user event without turn_end */
	int		 waiting;	/* it paused on a question */
	int		 approval;	/* ...that is an approval */
	const char	*question;
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
		m->calls[i].id = dstr(d, a, c, "id", NULL);
		m->calls[i].name = dstr(d, a, c, "name", NULL);
		m->calls[i].args = dstr(d, a, c, "args", &m->calls[i].args_len);
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
	return dstr(d, sess(rp->ag), obj, key, n);
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
			msg_add(ag, sess(ag), &ag->tail, LLM_USER, s, n);
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
		rp->approval = json_eq(d, json_get(d, 0, "kind"), "approval");
	} else if (strcmp(type, "answer") == 0) {
		rp->waiting = 0;
	} else if (strcmp(type, "assistant") == 0 && agent != NULL &&
	    strcmp(agent, "entry") == 0) {
		if ((s = jstr(rp, d, 0, "text", &n)) == NULL)
			s = "", n = 0;
		if ((m = msg_add(ag, sess(ag), &ag->tail, LLM_ASSISTANT, s,
		    n)) == NULL)
			return -E_NOMEM;
		if ((t = read_calls(d, sess(ag), m)) != 0)
			return t;
	} else if (strcmp(type, "tool_end") == 0 && agent != NULL &&
	    strcmp(agent, "entry") == 0) {
		if ((s = jstr(rp, d, 0, "output", &n)) == NULL)
			s = "", n = 0;
		if ((m = msg_add(ag, sess(ag), &ag->tail, LLM_TOOL, s, n)) ==
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

static int
resume(struct agent *ag, char *why, size_t whylen)
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
	if ((type = dstr(d, a, 0, "type", NULL)) == NULL)
		return 0;
	agent = dstr(d, a, 0, "agent", NULL);
	if (strcmp(type, "user") == 0 || strcmp(type, "turn_abort") == 0 ||
	    (strcmp(type, "turn_end") == 0 && ((s = dstr(d, a, 0, "status",
	    NULL)) == NULL || strcmp(s, "waiting") != 0))) {
		rb->top = -1;		/* a new turn, or one that ended */
		rb->command = rb->asked = NULL;
		rb->user = strcmp(type, "user") == 0 ? dstr(d, a, 0, "text",
		    NULL) : NULL;
	} else if (strcmp(type, "command") == 0) {
		rb->command = dstr(d, a, 0, "text", NULL);
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
	    (to = dstr(d, a, 0, "to", NULL)) != NULL) {
		if ((s = dstr(d, a, 0, "task", NULL)) != NULL) {
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
			if (HAVE_ORCH && f->orch != NULL && (s = dstr(d, a, 0,
			    "result", NULL)) != NULL)
				(void)orch_returned(ag, f, s, 0);
		}
	} else if (HAVE_ORCH && strcmp(type, "orchestrate") == 0 && f != NULL &&
	    f->orch != NULL && agent != NULL && strcmp(agent, f->name) == 0) {
		e = orch_replay(ag, f, d, a);
	} else if (f == NULL || f->skill == NULL || agent == NULL ||
	    strcmp(agent, f->name) != 0) {
		;	/* the entry agent's are in the conversation */
	} else if (strcmp(type, "assistant") == 0) {
		if ((s = dstr(d, a, 0, "text", &n)) == NULL)
			s = "", n = 0;
		if ((m = msg_add(ag, a, f->tail, LLM_ASSISTANT, s, n)) == NULL)
			return -E_NOMEM;
		if ((e = read_calls(d, a, m)) == 0 && m->ncalls > 0) {
			f->pending = m;
			f->next = 0;
		}
	} else if (strcmp(type, "tool_end") == 0) {
		if ((s = dstr(d, a, 0, "output", &n)) == NULL)
			s = "", n = 0;
		if ((m = msg_add(ag, a, f->tail, LLM_TOOL, s, n)) == NULL)
			return -E_NOMEM;
		m->call_id = dstr(d, a, 0, "id", NULL);
		m->tool_name = dstr(d, a, 0, "name", NULL);
		if (json_bool(d, json_get(d, 0, "ok"), &ok) == 0)
			m->is_error = !ok;
		if (m->tool_name != NULL && !m->is_error)
			call_ended(f, m->tool_name, m->text);
		f->next++;
	}
	if (strcmp(type, "input_requested") == 0)
		rb->asked = dstr(d, a, 0, "id", NULL);
	return e;
}

/* The frames of the paused turn, from the log; the question's call is
 * fs[*top]'s next. */
static int
rebuild(struct agent *ag, struct frame *fs, unsigned *top)
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
#if HAVE_JOBS
	/* A job's paused turn goes on in its worker, with the job's tools. */
	if (ag->session != NULL && (e = job_answer(&ag->turn, ag->cfg,
	    ag->session, approve < 0 ? JOB_ANS_TEXT : approve ?
	    JOB_ANS_APPROVE : JOB_ANS_DENY, text, n, final)) != 0) {
		/* Said for --json and SSE; not logged: the turn is not here. */
		ev_begin(ag, &ev, e > 0 ? "final" : "error");
		json_key(&ev.w, e > 0 ? "text" : "message");
		json_put_str(&ev.w, *final);
		ev.t.text = *final;
		ev_end(ag, &ev, 0);
		return e > 0 ? AG_OK : AG_FAIL;
	}
#endif
	turn_begin(ag);
	if ((e = rebuild(ag, fs, &top)) != 0) {
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
	st = run_frames(ag, fs, top, 1, &ans);
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

/* --- setup */


static const char *
new_session_name(struct arena *a)
{
	struct utc u;

	utc_split((long long)time(NULL), &u);
	return arena_printf(a, "%04lld%02d%02d-%02d%02d%02d-%d", u.year, u.mon,
	    u.day, u.hour, u.min, u.sec, (int)getpid());
}

static unsigned
perm_of(const char *tool)
{
	struct sbx_policy p;
	struct arena a;
	unsigned v;

	arena_init(&a, "policy");
	sbx_policy_defaults(&p);
	p.perms = 0;
	sbx_from_allowed_tools(&p, &a, tool);
	v = p.perms;
	arena_reset(&a);
	return v;
}

/* Hand the workspace to the scripts' user, so they can write there. */
static void
give_workspace(struct agent *ag)
{
	char *parent = arena_strdup(ag->perm, ag->workspace), *sl;
	struct stat st;

	if (chown(ag->workspace, ag->base.uid, ag->base.gid) != 0)
		log_warn("workspace %s: cannot give it to uid %u: %s",
		    ag->workspace, (unsigned)ag->base.uid, strerror(errno));
	/* The user must reach its workspace: let it through the (0700)
	 * state folder without reading it. */
	if (parent != NULL && (sl = strrchr(parent, '/')) != NULL &&
	    sl != parent) {
		*sl = '\0';
		if (stat(parent, &st) == 0 && !(st.st_mode & S_IXOTH))
			(void)chmod(parent, (st.st_mode & 07777) | S_IXOTH);
	}
}

/* see agent.h */
struct agent *
agent_new(struct arena *perm, const struct cfg *c, const struct agent_opts *o,
    int *err, char *why, size_t whylen)
{
	struct agent *ag;
	struct llm_conf lc;
	const char *key;
	unsigned i;
	int e;

	*err = 0;
	why[0] = '\0';
	if ((ag = arena_zalloc(perm, sizeof(*ag))) == NULL) {
		*err = -E_NOMEM;
		return NULL;
	}
	ag->cfg = c;
	ag->o = *o;
	ag->perm = perm;
	arena_init(&ag->sess[0], "session");
	arena_init(&ag->sess[1], "session");
	arena_init(&ag->turn, "turn");
	ag->tail = &ag->msgs;
	ag->log.fd = -1;
	if (c->workspace != NULL) {
		char *w = arena_strdup(perm, c->workspace);

		if (w == NULL) {
			*err = -E_NOMEM;
			return NULL;
		}
		if (slog_mkdirs(w) == 0)
			ag->workspace = w;
		else
			log_warn("workspace %s: %s: the workspace tools are "
			    "off", w, strerror(errno));
	}
	sbx_policy_defaults(&ag->base);
	for (i = 0; i < c->sandbox.nallow; i++)
		ag->host_allow |= perm_of(c->sandbox.allow[i]);
	for (i = 0; i < c->sandbox.ndeny; i++)
		ag->host_deny |= perm_of(c->sandbox.deny[i]);
	for (i = 0; i < c->sandbox.nsecrets && i < SBX_MAX_SECRETS; i++)
		ag->base.secrets[ag->base.nsecrets++] = c->sandbox.secrets[i];
	for (i = 0; i < c->sandbox.nrequire; i++) {
		const char *bad, *want = strcmp(c->sandbox.require[i],
		    "all") == 0 ? "rlimit nnp landlock landlock-net netns "
		    "seccomp seccomp-net seccomp-unix userdrop privtmp env" :
		    c->sandbox.require[i];
		unsigned bits;

		if (sbx_layers_parse(want, &bits, &bad) == 0)
			ag->base.require |= bits;
	}
	/* As root, scripts run as sandbox.user, or nobody: running them as
	 * root takes an explicit sandbox.user: root, said on every run. */
	if (geteuid() == 0) {
		if (cfg_script_user(c, &ag->base.uid, &ag->base.gid) != 0) {
			snprintf(why, whylen, "sandbox.user '%s': no such user",
			    c->sandbox.user);
			*err = -E_INVAL;
			return NULL;
		}
		ag->base.as_root = ag->base.uid == 0;
		if (!ag->base.as_root && ag->workspace != NULL)
			give_workspace(ag);
	}
	if (ag->base.as_root)
		log_warn("sandbox.user is root: skill scripts and model-written "
		    "command lines run as root, with every capability");
	if ((key = cfg_secret_is_key(c)) != NULL)
		log_warn("sandbox.secrets names %s, the model's own API key: "
		    "every script (and so the model) can read it", key);
	if ((e = skill_reg_init(&ag->reg, c->skills, c->nskills, NULL,
	    NULL)) != 0 || (e = skill_reg_scan(&ag->reg)) != 0) {
		*err = e;
		snprintf(why, whylen, "loading the skills: %s", err_str(e));
		return NULL;
	}
	only_skills(ag);
	hooks_init(ag);
	if (strcmp(c->provider, "offline") != 0) {
		llm_conf_defaults(&lc);
		lc.proto = llm_proto_find(c->provider);
		lc.base_url = c->base_url;
		lc.api_key = cfg_api_key(c);
		lc.anthropic_version = c->anthropic_version;
		lc.bearer = c->anthropic_bearer;
		lc.ca_file = c->ca_file;
		lc.connect_ms = (int)c->limits.connect_s * 1000;
		lc.first_ms = (int)c->limits.first_byte_s * 1000;
		lc.idle_ms = (int)c->limits.idle_s * 1000;
		lc.retries = c->limits.retries;
		/* $SKILLBOX_NO_CACHE (set by --no-cache) turns it off */
		if (HAVE_EVAL && c->cache.on && ((key = getenv(
		    "SKILLBOX_NO_CACHE")) == NULL || *key == '\0' ||
		    strcmp(key, "0") == 0)) {
			lc.cache_dir = c->cache.dir;
			lc.cache_max = c->cache.max;
		}
		if (lc.proto == NULL || c->model == NULL || lc.base_url == NULL) {
			*err = -E_INVAL;
			snprintf(why, whylen, "provider %s needs a model and a "
			    "base_url", c->provider);
			return NULL;
		}
		if ((ag->cl = llm_client_new(perm, &lc)) == NULL) {
			*err = -E_NOMEM;
			return NULL;
		}
	}
	if (HAVE_MCP && (e = mcp_init(ag)) != 0) {
		*err = e;
		return NULL;
	}
	ag->session = o->session != NULL ? o->session :
	    new_session_name(perm);
	if (ag->session == NULL) {
		*err = -E_NOMEM;
		return NULL;
	}
	if (!o->ephemeral && c->state_dir != NULL) {
		e = slog_open(&ag->log, perm, c->state_dir, ag->session,
		    o->resume ? SLOG_APPEND : SLOG_CREATE);
		if (e != 0) {
			*err = e;
			snprintf(why, whylen, "session %s: %s", ag->session,
			    e == -E_NOENT ? "no such session" : e == -E_INVAL ?
			    "bad name (letters, digits, . _ -)" :
			    e == -E_BUSY ? "in use by another turn (another "
			    "skillbox has it open)" : strerror(ag->log.err_no));
			return NULL;
		}
		ag->logging = 1;
		if ((e = resume(ag, why, whylen)) != 0) {
			*err = e;
			return NULL;
		}
	}
	return ag;
}

const char *
agent_session(const struct agent *ag)
{
	return ag->session;
}

void
agent_usage(const struct agent *ag, unsigned long *in, unsigned long *out,
    double *cost)
{
	*in = ag->in_tok;
	*out = ag->out_tok;
	*cost = ag->cost;
}

/* see agent.h */
int
agent_seed(struct agent *ag, enum llm_role role, const char *text, size_t n)
{
	if (msg_add(ag, sess(ag), &ag->tail, role, text, n) == NULL)
		return -E_NOMEM;
	return 0;
}

void
agent_entry(struct agent *ag, const char *name, int plan_only)
{
	ag->o.agent = name;
	ag->o.plan_only = plan_only;
}

/* see agent.h */
int
agent_tool(struct agent *ag, const char *skill, const char *tool,
    const char *args, size_t n, struct tool_out *out)
{
	struct frame f;
	struct llm_call c;
	struct tool_env env;
	int id = tool_find(tool);

	arena_reset(&ag->turn);
	memset(out, 0, sizeof(*out));
	memset(&f, 0, sizeof(f));
	memset(&c, 0, sizeof(c));
	out->is_error = 1;
	if ((f.skill = tool_skill_find(&ag->reg, skill)) == NULL ||
	    skill_osk(f.skill) != NULL) {
		out->text = "no such skill here";
		return 0;
	}
	if (id != T_RUN_SKILL_SCRIPT && id != T_READ_SKILL_FILE &&
	    id != T_LIST_SKILL_FILES) {
		out->text = "not a tool of a skill";
		return 0;
	}
	f.name = f.skill->name;
	f.a = &ag->turn;
	f.depth = 1;
	c.id = "mcp";
	c.name = tool;
	c.args = args;
	c.args_len = n;
	ag->deadline = net_now_ms() + (long long)ag->cfg->limits.time_s * 1000;
	if (gate(ag, &f, &c, out))
		return 0;
	out->is_error = 0;
	tool_env(ag, &f, &env);
	if (tool_call(&env, &ag->turn, (enum tool_id)id, args, n, out) != 0)
		return -E_NOMEM;
	call_hooked(ag, &f, &c, out);
	return 0;
}

/* The MCP servers: the configuration's, then those of the skills' own
 * front-matter (a name already taken is left out). */
static int
mcp_init(struct agent *ag)
{
	const struct cfg *c = ag->cfg;
	struct mcp_server *v, *sv;
	struct mcp_host h;
	struct fm_node *root, *nd;
	struct fm_error fe;
	char *fm, *body, why[200];
	unsigned n = c->nmcp, i, k, j, sn, bl, line;
	int e;

	if ((v = arena_zalloc(ag->perm, MCP_MAX_ALL * sizeof(*v))) == NULL)
		return -E_NOMEM;
	memcpy(v, c->mcp, n * sizeof(*v));
	for (i = 0; i < ag->reg.n; i++) {
		const struct skill *sk = ag->reg.v[i];
		struct arena_mark m = arena_mark(&ag->turn);

		if (!(sk->flags & SKILL_MCP) || skill_load(sk, &ag->turn, &fm,
		    &body, &bl) != 0 || fm == NULL || fm_parse(&ag->turn, fm,
		    strlen(fm), 1, &root, &fe) != 0 || (nd = fm_get(root,
		    "mcp_servers")) == NULL || (e = mcp_parse(ag->perm, nd,
		    sk->dir, sk->name, &sv, &sn, &line, why, sizeof(why))) != 0) {
			arena_reset_to(&ag->turn, m);
			continue;	/* checked when the skill loaded */
		}
		arena_reset_to(&ag->turn, m);
		for (k = 0; k < sn; k++) {
			for (j = 0; j < n && strcmp(v[j].name, sv[k].name); j++)
				;
			if (j < n || n == MCP_MAX_ALL) {
				log_warn("skill %s: MCP server %s left out (%s)",
				    sk->name, sv[k].name, j < n ? "the name is "
				    "taken" : "too many servers");
				continue;
			}
			v[n++] = sv[k];
		}
	}
	if (n == 0)
		return 0;
	memset(&h, 0, sizeof(h));
	h.base = &ag->base;
	h.allow = ag->host_allow;
	h.deny = ag->host_deny;
	h.workspace = ag->workspace;
	h.out_cap = c->limits.output_cap;
	if ((ag->mcp = mcp_new(ag->perm, v, n, &h)) == NULL)
		return -E_NOMEM;
	mcp_ext(ag->mcp, &ag->mcp_ext);
	ag->mcp_ext.next = ag->o.ext;
	ag->o.ext = &ag->mcp_ext;
	return 0;
}

const struct skill_reg *
agent_reg(const struct agent *ag)
{
	return &ag->reg;
}

struct mcp *
agent_mcp(const struct agent *ag)
{
	return HAVE_MCP ? ag->mcp : NULL;
}

/* see agent.h */
void
agent_close(struct agent *ag)
{
	if (HAVE_MCP)
		mcp_close(ag->mcp);
	if (ag->logging)
		slog_sync(&ag->log);
	slog_close(&ag->log);
}

struct llm_client *
agent_llm(struct agent *ag)
{
	return ag->cl;
}

/* see agent.h */
void
agent_free(struct agent *ag)
{
	agent_close(ag);
	llm_disconnect(ag->cl);
	skill_reg_free(&ag->reg);
	arena_reset(&ag->sess[0]);
	arena_reset(&ag->sess[1]);
	arena_reset(&ag->turn);
}
