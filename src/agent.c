/* agent.c - the agent loop: entry agent, skill agents (handoffs, nested
 * runs with a depth limit), tools, limits, sessions and compaction. */
#include "agent.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fm.h"
#include "json.h"
#include "log.h"
#include "net.h"
#include "sandbox.h"
#include "slog.h"
#include "str.h"
#include "tool.h"

#define MAX_DEPTH	3		/* entry -> skill -> skill -> skill */
#define MAX_HASHES	128
#define REPEAT_REFUSE	3		/* the 3rd identical call is refused */
#define REPEAT_STOP	5		/* the 5th stops the turn */
#define HANDOFF_PREFIX	"handoff_to_"

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
};

/* --- events */

struct ev {
	struct sbuf		 sb;
	struct json_writer	 w;
	const char		*type;
};

static void
ev_begin(struct agent *ag, struct ev *e, const char *type)
{
	sbuf_init(&e->sb, &ag->turn, 0);
	json_writer_init(&e->w, &e->sb);
	e->type = type;
	json_begin_obj(&e->w);
	json_key(&e->w, "type");
	json_put_str(&e->w, type);
	json_key(&e->w, "turn");
	json_put_uint(&e->w, ag->turn_no);
}

/* Close the event, log it (unless it is a text delta) and hand it on. */
static void
ev_end(struct agent *ag, struct ev *e, int log)
{
	struct ev w;
	int x;

	json_end_obj(&e->w);
	if (json_writer_err(&e->w) != 0) {
		ag->stop = AG_NOMEM;
		return;
	}
	if (log && ag->logging && (x = slog_append(&ag->log, e->sb.p,
	    e->sb.len)) != 0) {
		if (x == -E_IO) {
			snprintf(ag->why, sizeof(ag->why), "session log %s: %s",
			    ag->log.path, strerror(ag->log.err_no));
			ag->logging = 0;	/* say it once; keep answering */
		} else {
			/* An event the log cannot hold stops the turn: what
			 * it carried (a reply's tool calls) must not run
			 * unlogged. */
			snprintf(ag->why, sizeof(ag->why), "the %s event (%zu "
			    "bytes) %s: the turn is stopped", e->type,
			    e->sb.len, x == -E_LIMIT ? "is over the session "
			    "log's line limit" : "does not fit in the memory "
			    "budget");
			ag->stop = x == -E_NOMEM ? AG_NOMEM : AG_FAIL;
		}
		ev_begin(ag, &w, "error");
		json_key(&w.w, "message");
		json_put_str(&w.w, ag->why);
		ev_end(ag, &w, x == -E_LIMIT);
	}
	if (ag->o.on_event != NULL)
		ag->o.on_event(ag->o.ctx, e->type, e->sb.p, e->sb.len);
}

/* The start of a tool event: which agent, which call, which tool. */
static void
ev_tool(struct agent *ag, struct ev *e, const char *type, const char *agent,
    const char *id, const char *name)
{
	ev_begin(ag, e, type);
	json_key(&e->w, "agent");
	json_put_str(&e->w, agent);
	if (id != NULL) {
		json_key(&e->w, "id");
		json_put_str(&e->w, id);
	}
	json_key(&e->w, "name");
	json_put_str(&e->w, name);
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
	ev_end(ag, &e, 1);
}

static void
ev_error(struct agent *ag, const char *msg)
{
	ev_simple(ag, "error", "message", msg);
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

struct frame {
	const char		*name;		/* "entry" or the skill */
	const struct skill	*skill;		/* NULL for the entry agent */
	struct arena		*a;		/* where its messages live */
	struct llm_msg		**head, ***tail;
	struct llm_tool		*tools;
	unsigned		 ntools;
	char			*system;
	unsigned		 depth;
	int			 handed_back;
	const char		*result;
};

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

/* Tools and the system prompt of a frame. */
static int
frame_setup(struct agent *ag, struct frame *f)
{
	static const char handoff_params[] = "{\"type\":\"object\","
	    "\"properties\":{\"task\":{\"type\":\"string\",\"description\":"
	    "\"What the skill agent should do, with the details it needs.\"}},"
	    "\"required\":[\"task\"]}";
	unsigned cap = ag->reg.n + T__COUNT + 1, i;
	struct sbuf sb;
	int e = 0;

	if ((f->tools = arena_zalloc(f->a, cap * sizeof(*f->tools))) == NULL)
		return -E_NOMEM;
	f->ntools = 0;
	sbuf_init(&sb, f->a, 0);
	if (f->skill == NULL) {
		sbuf_adds(&sb, ag->cfg->instructions != NULL ?
		    ag->cfg->instructions : default_instructions);
		sbuf_adds(&sb, "\n\n# Skills\n");
		for (i = 0; i < ag->reg.n; i++)
			if (!(ag->reg.v[i]->flags & SKILL_NO_MODEL))
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
		add_tool(f, f->a, cap, T_RUN_SKILL_SCRIPT);
		add_tool(f, f->a, cap, T_RUN_COMMAND_LINE);
		add_tool(f, f->a, cap, T_READ_SKILL_FILE);
		add_tool(f, f->a, cap, T_LIST_SKILL_FILES);
		add_tool(f, f->a, cap, T_LOAD_SKILL_RESOURCES);
		add_tool(f, f->a, cap, T_HAND_BACK);
	}
	if (ag->workspace != NULL) {
		add_tool(f, f->a, cap, T_WRITE_FILE);
		add_tool(f, f->a, cap, T_READ_FILE);
		add_tool(f, f->a, cap, T_LIST_WORKSPACE_FILES);
		add_tool(f, f->a, cap, T_GET_FILE_INFO);
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
	if (f->skill == NULL ? !ag->cfg->skill_inline : f->depth < MAX_DEPTH) {
		for (i = 0; i < ag->reg.n && f->ntools < cap; i++) {
			const struct skill *sk = ag->reg.v[i];
			struct llm_tool *t = &f->tools[f->ntools];

			/* Providers want tool names in [A-Za-z0-9_-]: a skill
			 * named in another script is reached only inline. */
			if (sk == f->skill || (sk->flags & SKILL_NO_MODEL) ||
			    !skill_name_is_ascii(sk->name) ||
			    strlen(sk->name) > 64 - strlen(HANDOFF_PREFIX) ||
			    !may_handoff(ag, f->name, sk->name))
				continue;
			t->name = arena_printf(f->a, HANDOFF_PREFIX "%s",
			    sk->name);
			t->description = arena_printf(f->a, "Hand a task to the "
			    "'%s' skill agent: %s", sk->name, sk->description);
			t->params = handoff_params;
			if (t->name == NULL || t->description == NULL)
				return -E_NOMEM;
			f->ntools++;
		}
	}
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

static enum agent_status run_frame(struct agent *ag, struct frame *f,
    const char **answer);

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
static void
run_call(struct agent *ag, struct frame *f, const struct llm_call *c,
    struct tool_out *out)
{
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
		return;
	}
	if (rep >= REPEAT_REFUSE) {
		out->text = "refused: this exact call was already made twice "
		    "in this turn; use its earlier result or change the "
		    "arguments";
		out->is_error = 1;
		return;
	}
	if (!offered(f, c->name)) {
		out->text = arena_printf(&ag->turn, "there is no tool named "
		    "'%s' here (the tools you were given are the ones you may "
		    "call)", c->name);
		out->is_error = 1;
		return;
	}
	if (c->bad_args) {
		out->text = arena_printf(&ag->turn, "the arguments are not "
		    "valid JSON (got: %.200s); call %s again with a JSON "
		    "object matching its schema", c->args, c->name);
		out->is_error = 1;
		return;
	}
	if (strncmp(c->name, HANDOFF_PREFIX, strlen(HANDOFF_PREFIX)) == 0) {
		const char *to = c->name + strlen(HANDOFF_PREFIX), *ans = NULL;
		const struct skill *sk = skill_find(&ag->reg, to);
		struct llm_msg *head = NULL, **tail = &head;
		struct frame sub;
		struct json_doc d;
		char *task = NULL;
		struct ev ev;
		enum agent_status st;

		if (sk == NULL || f->depth >= MAX_DEPTH ||
		    (sk->flags & SKILL_NO_MODEL) ||
		    !may_handoff(ag, f->name, to)) {
			out->text = "no such skill agent here";
			out->is_error = 1;
			return;
		}
		if (json_parse(&ag->turn, c->args, c->args_len, 256, &d) != 0 ||
		    json_str(&d, &ag->turn, json_get(&d, 0, "task"), &task,
		    NULL) != 0) {
			out->text = "handoff needs {\"task\": \"...\"}";
			out->is_error = 1;
			return;
		}
		ev_begin(ag, &ev, "handoff");
		json_key(&ev.w, "from");
		json_put_str(&ev.w, f->name);
		json_key(&ev.w, "to");
		json_put_str(&ev.w, sk->name);
		json_key(&ev.w, "task");
		json_put_str(&ev.w, task);
		ev_end(ag, &ev, 1);
		memset(&sub, 0, sizeof(sub));
		sub.name = sk->name;
		sub.skill = sk;
		sub.a = &ag->turn;
		sub.head = &head;
		sub.tail = &tail;
		sub.depth = f->depth + 1;
		if (frame_setup(ag, &sub) != 0 ||
		    msg_add(ag, sub.a, sub.tail, LLM_USER, task,
		    strlen(task)) == NULL) {
			ag->stop = AG_NOMEM;
			return;
		}
		st = run_frame(ag, &sub, &ans);
		if (st != AG_OK && ag->stop == AG_OK)
			ag->stop = st;
		out->text = (char *)(ans != NULL ? ans : "(no result)");
		out->is_error = st != AG_OK;
		ev_begin(ag, &ev, "handoff");
		json_key(&ev.w, "from");
		json_put_str(&ev.w, sk->name);
		json_key(&ev.w, "to");
		json_put_str(&ev.w, f->name);
		json_key(&ev.w, "result");
		json_put_str(&ev.w, out->text);
		ev_end(ag, &ev, 1);
		return;
	}
	if ((id = tool_find(c->name)) < 0 ||
	    (id == T_HAND_BACK && f->skill == NULL)) {
		out->text = arena_printf(&ag->turn, "there is no tool named "
		    "'%s'", c->name);
		out->is_error = 1;
		return;
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
		return;
	}
	if (writes)
		workspace_grown(ag);
	if (id == T_HAND_BACK && !out->is_error) {
		f->handed_back = 1;
		f->result = out->text;
	}
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
	json_key(&e.w, "agent");
	json_put_str(&e.w, sc->agent);
	json_key(&e.w, "delta");
	json_put_strn(&e.w, s, n);
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

/* Run one agent until it answers, hands back, or a limit stops it. */
static enum agent_status
run_frame(struct agent *ag, struct frame *f, const char **answer)
{
	struct stream_ctx sc = { ag, f->name };
	struct llm_sink sink = { ag->o.stream ? on_delta : NULL, NULL, &sc };
	struct llm_req q;
	struct llm_reply r;
	struct llm_msg *m;
	struct ev ev;
	unsigned i;
	int e;

	ev_simple(ag, "agent_start", "agent", f->name);
	*answer = NULL;
	for (;;) {
		if (over_limits(ag))
			break;
		memset(&q, 0, sizeof(q));
		q.model = ag->cfg->model;
		q.system = f->system;
		q.msgs = *f->head;
		q.tools = f->tools;
		q.ntools = f->ntools;
		q.stream = 1;
		ag->calls++;
		e = llm_send(ag->cl, f->a, &q, &sink, &r);
		if (e != 0) {
			snprintf(ag->why, sizeof(ag->why), "%s", e == -E_NOMEM ?
			    "memory budget exhausted while receiving the "
			    "reply" : llm_why(ag->cl));
			ag->stop = e == -E_NOMEM ? AG_NOMEM : AG_FAIL;
			if (llm_timed_out(ag->cl)) {
				snprintf(ag->why, sizeof(ag->why), "stopped: "
				    "the turn took more than %u s (limits.time) "
				    "while waiting for the model",
				    ag->cfg->limits.time_s);
				ag->stop = AG_LIMIT;
			}
			ev_error(ag, ag->why);
			break;
		}
		ag->in_tok += r.in_tokens;
		ag->out_tok += r.out_tokens;
		ag->cost += price(ag, r.in_tokens, r.out_tokens);
		ev_begin(ag, &ev, "usage");
		json_key(&ev.w, "input_tokens");
		json_put_uint(&ev.w, r.in_tokens);
		json_key(&ev.w, "output_tokens");
		json_put_uint(&ev.w, r.out_tokens);
		json_key(&ev.w, "session_tokens");
		json_put_uint(&ev.w, ag->in_tok + ag->out_tok);
		if (ag->cost > 0) {
			json_key(&ev.w, "cost");
			json_put_raw(&ev.w, arena_printf(&ag->turn, "%.6f",
			    ag->cost), strlen(arena_printf(&ag->turn, "%.6f",
			    ag->cost)));
		}
		ev_end(ag, &ev, 1);
		m = msg_add(ag, f->a, f->tail, LLM_ASSISTANT, r.text,
		    r.text_len);
		llm_reply_release(&r);
		if (m == NULL)
			break;
		m->calls = r.calls;
		m->ncalls = r.ncalls;
		ev_begin(ag, &ev, "assistant");
		json_key(&ev.w, "agent");
		json_put_str(&ev.w, f->name);
		json_key(&ev.w, "text");
		json_put_strn(&ev.w, m->text, m->text_len);
		if (r.ncalls > 0) {
			json_key(&ev.w, "calls");
			json_begin_arr(&ev.w);
			for (i = 0; i < r.ncalls; i++) {
				json_begin_obj(&ev.w);
				json_key(&ev.w, "id");
				json_put_str(&ev.w, r.calls[i].id);
				json_key(&ev.w, "name");
				json_put_str(&ev.w, r.calls[i].name);
				json_key(&ev.w, "args");
				json_put_strn(&ev.w, r.calls[i].args,
				    r.calls[i].args_len);
				json_end_obj(&ev.w);
			}
			json_end_arr(&ev.w);
		}
		ev_end(ag, &ev, 1);
		if (r.ncalls == 0) {
			*answer = m->text;
			break;
		}
		for (i = 0; i < r.ncalls && ag->stop == AG_OK; i++) {
			const struct llm_call *c = &r.calls[i];
			struct tool_out out;
			struct llm_msg *tm;
			long long t0 = net_now_ms();

			if (over_time(ag))
				break;
			ev_tool(ag, &ev, "tool_start", f->name, c->id, c->name);
			json_key(&ev.w, "args");
			json_put_strn(&ev.w, c->args, c->args_len);
			ev_end(ag, &ev, 1);
			run_call(ag, f, c, &out);
			if (ag->stop == AG_NOMEM)
				break;
			if (out.text == NULL)
				out.text = "", out.len = 0;
			if (out.len == 0)
				out.len = strlen(out.text);
			tm = msg_add(ag, f->a, f->tail, LLM_TOOL, out.text,
			    out.len);
			if (tm == NULL)
				break;
			tm->call_id = c->id;
			tm->tool_name = c->name;
			tm->is_error = out.is_error;
			ev_tool(ag, &ev, "tool_end", f->name, c->id, c->name);
			json_key(&ev.w, "ok");
			json_put_bool(&ev.w, !out.is_error);
			json_key(&ev.w, "ms");
			json_put_int(&ev.w, net_now_ms() - t0);
			if (out.confinement != NULL) {
				json_key(&ev.w, "confinement");
				json_put_str(&ev.w, out.confinement);
			}
			if (out.as_root) {
				json_key(&ev.w, "as_root");
				json_put_bool(&ev.w, 1);
			}
			if (out.activated != NULL) {
				json_key(&ev.w, "skill");
				json_put_str(&ev.w, out.activated);
			}
			json_key(&ev.w, "output");
			json_put_strn(&ev.w, out.text, out.len);
			ev_end(ag, &ev, 1);
		}
		if (ag->stop != AG_OK)
			break;
		if (f->handed_back) {
			*answer = f->result;
			break;
		}
	}
	ev_simple(ag, "agent_end", "agent", f->name);
	if (ag->stop == AG_OK && *answer == NULL)
		ag->stop = AG_FAIL;
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
	ag->in_tok += r.in_tokens;
	ag->out_tok += r.out_tokens;
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
	json_key(&ev.w, "summary");
	json_put_str(&ev.w, ag->summary);
	json_key(&ev.w, "activated");
	json_begin_arr(&ev.w);
	for (i = 0; i < ag->nactivated; i++)
		json_put_str(&ev.w, ag->activated[i]);
	json_end_arr(&ev.w);
	ev_end(ag, &ev, 1);
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

/* --- offline: no model, the best-matching skill's default action */

static int
word_in(const char *hay, const char *w, size_t n)
{
	const char *p;

	for (p = hay; (p = strcasestr(p, w)) != NULL; p++) {
		int before = p == hay || !((p[-1] | 32) >= 'a' &&
		    (p[-1] | 32) <= 'z');
		char after = p[n];

		(void)after;
		if (before)
			return 1;
	}
	return 0;
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

	if (sk->triggers != NULL) {
		for (s = sk->triggers; *s != '\0'; s = *e ? e + 1 : e) {
			for (e = s; *e != '\0' && *e != ','; e++)
				;
			while (s < e && *s == ' ')
				s++;
			n = (size_t)(e - s);
			if (n > 0 && n < sizeof(w)) {
				memcpy(w, s, n);
				w[n] = '\0';
				if (strcasestr(input, w) != NULL)
					sc += 10;
			}
		}
	}
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

static enum agent_status
offline_turn(struct agent *ag, const char *input, const char **final)
{
	const struct skill *best = NULL;
	struct tool_env env;
	struct tool_out out;
	struct json_writer jw;
	struct frame f;
	struct sbuf sb;
	struct ev ev;
	char *args;
	int sc, top = 0;
	unsigned i;

	for (i = 0; i < ag->reg.n; i++) {
		const struct skill *sk = ag->reg.v[i];

		/* disable-model-invocation: only a person starts it. */
		if (sk->default_action == NULL || (sk->flags & SKILL_NO_MODEL))
			continue;
		if ((sc = score(sk, input)) > top)
			top = sc, best = sk;
	}
	if (best == NULL) {
		*final = "No model is configured (offline mode), and no "
		    "installed skill with a default action matches the "
		    "request. Configure a provider in skillbox.yaml, or name "
		    "a skill's topic (skillbox skills list shows them).";
		return AG_FAIL;
	}
	ev_begin(ag, &ev, "handoff");
	json_key(&ev.w, "from");
	json_put_str(&ev.w, "entry");
	json_key(&ev.w, "to");
	json_put_str(&ev.w, best->name);
	json_key(&ev.w, "task");
	json_put_str(&ev.w, input);
	json_key(&ev.w, "offline");
	json_put_bool(&ev.w, 1);
	ev_end(ag, &ev, 1);
	memset(&f, 0, sizeof(f));
	f.name = best->name;
	f.skill = best;
	tool_env(ag, &f, &env);
	/* The arguments through the JSON writer: a default-action is text
	 * from the skill's author, not JSON. The skill is the frame's own. */
	sbuf_init(&sb, &ag->turn, 0);
	json_writer_init(&jw, &sb);
	json_begin_obj(&jw);
	json_key(&jw, "script");
	json_put_str(&jw, best->default_action);
	json_end_obj(&jw);
	if (json_writer_err(&jw) != 0)
		return AG_NOMEM;
	args = sb.p;
	ev_tool(ag, &ev, "tool_start", best->name, NULL, "run_skill_script");
	json_key(&ev.w, "args");
	json_put_str(&ev.w, args);
	ev_end(ag, &ev, 1);
	if (tool_call(&env, &ag->turn, T_RUN_SKILL_SCRIPT, args, strlen(args),
	    &out) != 0)
		return AG_NOMEM;
	ev_tool(ag, &ev, "tool_end", best->name, NULL, "run_skill_script");
	json_key(&ev.w, "ok");
	json_put_bool(&ev.w, !out.is_error);
	if (out.confinement != NULL) {
		json_key(&ev.w, "confinement");
		json_put_str(&ev.w, out.confinement);
	}
	if (out.as_root) {
		json_key(&ev.w, "as_root");
		json_put_bool(&ev.w, 1);
	}
	json_key(&ev.w, "output");
	json_put_strn(&ev.w, out.text, out.len);
	ev_end(ag, &ev, 1);
	sbuf_init(&sb, &ag->turn, 0);
	sbuf_printf(&sb, "No model is configured (offline mode): skillbox "
	    "ran the default action of the '%s' skill (%s), the best match "
	    "for the request.\n\n%.*s", best->name, best->default_action,
	    (int)out.len, out.text);
	if (sb.err)
		return AG_NOMEM;
	*final = sb.p;
	return out.is_error ? AG_FAIL : AG_OK;
}

/* --- slash commands and .command.md */

static enum agent_status
slash(struct agent *ag, const char *cmd, const char **final)
{
	struct sbuf sb;
	unsigned i;

	sbuf_init(&sb, &ag->turn, 0);
	if (strcmp(cmd, "/help") == 0) {
		sbuf_adds(&sb, "Commands: /help, /skills, /compact, /session, "
		    "/usage, /exit");
		if (ag->cfg->commands_dir != NULL)
			sbuf_printf(&sb, "; your commands in %s (/NAME ARGS)",
			    ag->cfg->commands_dir);
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
	if (ag->cfg->commands_dir == NULL || nlen == 0 || nlen > 64)
		return -E_NOENT;
	for (p = input + 1; p < input + 1 + nlen; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		    *p == '-' || *p == '_'))
			return -E_NOENT;
	if ((path = arena_printf(&ag->turn, "%s/%.*s.command.md",
	    ag->cfg->commands_dir, (int)nlen, input + 1)) == NULL)
		return -E_NOMEM;
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
	    "memory", "exit" };
	struct ev ev;

	if (final != NULL) {
		ev_begin(ag, &ev, "final");
		json_key(&ev.w, "text");
		json_put_str(&ev.w, final);
		ev_end(ag, &ev, 1);
	}
	ev_begin(ag, &ev, "turn_end");
	json_key(&ev.w, "status");
	json_put_str(&ev.w, names[st]);
	if (st != AG_OK && st != AG_EXIT && ag->why[0] != '\0') {
		json_key(&ev.w, "why");
		json_put_str(&ev.w, ag->why);
	}
	ev_end(ag, &ev, 1);
	if (ag->logging)
		slog_sync(&ag->log);
}

/* see agent.h */
enum agent_status
agent_turn(struct agent *ag, const char *input, size_t n, const char **final)
{
	struct llm_msg **mark_tail, *mark;
	const char *agent = NULL, *ans = NULL;
	enum agent_status st;
	struct frame f;
	struct ev ev;
	char *text;
	int changed, e;

	arena_reset(&ag->turn);
	*final = NULL;
	ag->why[0] = '\0';
	ag->stop = AG_OK;
	ag->calls = 0;
	ag->nhashes = 0;
	ag->turn_no++;
	ag->deadline = net_now_ms() + (long long)ag->cfg->limits.time_s * 1000;
	/* The model's replies count against the turn too (compaction
	 * included): a trickle of keep-alives cannot hold it open. */
	if (ag->cl != NULL)
		llm_set_deadline(ag->cl, ag->cfg->limits.time_s != 0 ?
		    ag->deadline : 0);
	ag->ws_measured = 0;
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
	memset(&f, 0, sizeof(f));
	if (agent != NULL) {		/* a .command.md for a skill agent */
		struct llm_msg *head = NULL, **tail = &head;

		if ((f.skill = skill_find(&ag->reg, agent)) == NULL) {
			*final = arena_printf(&ag->turn, "the command names "
			    "agent '%s', which is not an installed skill",
			    agent);
			turn_end(ag, AG_FAIL, *final);
			return AG_FAIL;
		}
		f.name = f.skill->name;
		f.a = &ag->turn;
		f.head = &head;
		f.tail = &tail;
		f.depth = 1;
		if (frame_setup(ag, &f) != 0 || msg_add(ag, f.a, f.tail,
		    LLM_USER, text, strlen(text)) == NULL)
			return AG_NOMEM;
		st = run_frame(ag, &f, &ans);
	} else {
		mark_tail = ag->tail;
		mark = *ag->tail;
		f.name = "entry";
		f.a = sess(ag);
		f.head = &ag->msgs;
		f.tail = &ag->tail;
		if (frame_setup(ag, &f) != 0 || msg_add(ag, f.a, f.tail,
		    LLM_USER, text, strlen(text)) == NULL)
			return AG_NOMEM;
		st = run_frame(ag, &f, &ans);
		if (st != AG_OK) {
			/* Keep the conversation valid for the next turn:
			 * drop the unfinished exchange (calls without
			 * results would be refused by the provider). */
			*mark_tail = mark;
			ag->tail = mark_tail;
		}
	}
	if (st == AG_NOMEM) {
		snprintf(ag->why, sizeof(ag->why), "memory budget of %zu KiB "
		    "exhausted", mem_budget() >> 10);
		ev_error(ag, ag->why);
	}
	*final = st == AG_OK ? ans : ag->why;
	turn_end(ag, st, st == AG_OK ? ans : NULL);
	return st;
}

/* --- sessions: resume by replaying the log */

struct replay {
	struct agent	*ag;
	struct llm_msg	**turn_tail, *turn_mark;
	unsigned	 open_turn;	/* a user event without turn_end */
	int		 err;
};

static char *
jstr(struct replay *rp, const struct json_doc *d, int obj, const char *key,
    size_t *n)
{
	char *s;
	size_t len;

	if (json_str(d, sess(rp->ag), json_get(d, obj, key), &s, &len) != 0)
		return NULL;
	if (n != NULL)
		*n = len;
	return s;
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
		if (strcmp(type, "turn_end") == 0 && (s = jstr(rp, d, 0,
		    "status", NULL)) != NULL && strcmp(s, "ok") != 0 &&
		    rp->turn_tail != NULL) {
			*rp->turn_tail = rp->turn_mark;	/* as agent_turn */
			ag->tail = rp->turn_tail;
		}
		rp->open_turn = 0;
	} else if (strcmp(type, "assistant") == 0 && agent != NULL &&
	    strcmp(agent, "entry") == 0) {
		if ((s = jstr(rp, d, 0, "text", &n)) == NULL)
			s = "", n = 0;
		if ((m = msg_add(ag, sess(ag), &ag->tail, LLM_ASSISTANT, s,
		    n)) == NULL)
			return -E_NOMEM;
		t = json_get(d, 0, "calls");
		if (t >= 0 && d->t[t].type == JSON_ARR && d->t[t].size > 0) {
			m->ncalls = (unsigned)d->t[t].size;
			m->calls = arena_zalloc(sess(ag), m->ncalls *
			    sizeof(*m->calls));
			if (m->calls == NULL)
				return -E_NOMEM;
			for (i = 0; i < m->ncalls; i++) {
				int c = json_at(d, t, i);

				m->calls[i].id = jstr(rp, d, c, "id", NULL);
				m->calls[i].name = jstr(rp, d, c, "name", NULL);
				m->calls[i].args = jstr(rp, d, c, "args",
				    &m->calls[i].args_len);
				if (m->calls[i].id == NULL ||
				    m->calls[i].name == NULL ||
				    m->calls[i].args == NULL)
					return -E_PARSE;
			}
		}
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

static int
resume(struct agent *ag, char *why, size_t whylen)
{
	struct replay rp;
	unsigned bad;
	int torn, e;

	memset(&rp, 0, sizeof(rp));
	rp.ag = ag;
	e = slog_replay(&ag->log, &ag->turn, on_replay, &rp, &torn, &bad);
	arena_reset(&ag->turn);
	if (e != 0) {
		snprintf(why, whylen, "session %s: cannot resume: %s",
		    ag->session, err_str(e));
		return e;
	}
	if (rp.open_turn != 0 || torn) {
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
		json_key(&ev.w, "reason");
		json_put_str(&ev.w, torn ? "the log ends in a torn line: "
		    "the process was killed while writing" :
		    "the process ended in the middle of this turn");
		ev_end(ag, &ev, 1);
		slog_sync(&ag->log);
		arena_reset(&ag->turn);
	}
	(void)bad;
	return 0;
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
	ag->session = o->session != NULL ? o->session :
	    new_session_name(perm);
	if (ag->session == NULL) {
		*err = -E_NOMEM;
		return NULL;
	}
	if (!o->ephemeral && c->state_dir != NULL) {
		e = slog_open(&ag->log, perm, c->state_dir, ag->session,
		    !o->resume);
		if (e != 0) {
			*err = e;
			snprintf(why, whylen, "session %s: %s", ag->session,
			    e == -E_NOENT ? "no such session" : e == -E_INVAL ?
			    "bad name (letters, digits, . _ -)" :
			    strerror(ag->log.err_no));
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

void
agent_close(struct agent *ag)
{
	if (ag->logging)
		slog_sync(&ag->log);
	slog_close(&ag->log);
}
