/* frame.c - a frame, one agent's run: its tools, handoffs and system
 * prompt; the messages of the conversation and what a model call cost. */

#include "agent/agent.h"

#include <stdio.h>
#include <string.h>

#include "agent/agent_int.h"

static const char default_instructions[] =
    "You are skillbox, an assistant running on a small Linux device. "
    "Answer briefly and precisely. Use the skills to inspect or change the "
    "device; never invent command output.";

struct llm_msg *
frame_msg(struct agent *ag, struct arena *a, struct llm_msg ***tail,
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

int
frame_may_handoff(const struct agent *ag, const char *from, const char *to)
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

int
frame_add_tool(struct frame *f, struct arena *a, unsigned cap, enum tool_id id)
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
	const unsigned want = SKILL_OSKILL | SKILL_OSK_ALLOWED;
	const struct skill_osk *o;
	const struct skill *sk;
	unsigned i;

	for (i = 0; i < ag->reg.n; i++)
		if ((skill_reg_flags(&ag->reg, i) & want) == want &&
		    (sk = skill_find(&ag->reg, skill_reg_name(&ag->reg,
		    i))) != NULL && (o = skill_osk(sk)) != NULL &&
		    o->allowed != NULL && str_word_in(o->allowed, name))
			return 1;
	return 0;
}

/* see agent_int.h */
unsigned
frame_ncatalog(const struct agent *ag)
{
	return ag->reg.ix != NULL ? MIN(ag->reg.n, CATALOG_TOP) : ag->reg.n;
}

/* s on one line: a description from a skill file cannot start a line of
 * its own in the prompt. */
static void
add_line(struct sbuf *sb, const char *s)
{
	for (; *s != '\0'; s++)
		sbuf_addc(sb, (unsigned char)*s < ' ' ? ' ' : *s);
	sbuf_addc(sb, '\n');
}

/* The skills the entry agent is shown: all, or of an index the first
 * CATALOG_TOP by name, and how to find the others. */
static void
catalog(struct agent *ag, struct sbuf *sb)
{
	const struct skill_reg *r = &ag->reg;
	const struct skill *sk;
	struct arena tmp;
	unsigned i, shown = 0;

	for (i = 0; r->ix == NULL && i < r->n; i++)
		if (!(r->v[i]->flags & SKILL_NO_MODEL) &&
		    !(HAVE_ORCH && owned(ag, r->v[i]->name)))
			sbuf_printf(sb, "- %s: %s\n", r->v[i]->name,
			    r->v[i]->description);
	if (r->ix == NULL)
		return;
	arena_init(&tmp, "catalog");
	for (i = 0; i < r->n && shown < CATALOG_TOP; i++) {
		if (!(skill_reg_flags(r, i) & SKILL_NO_MODEL) &&
		    !(HAVE_ORCH && owned(ag, skill_reg_name(r, i))) &&
		    (sk = skill_reg_get(r, i, &tmp)) != NULL) {
			sbuf_printf(sb, "- %s: ", sk->name);
			add_line(sb, sk->description);
			shown++;
		}
		arena_reset(&tmp);
	}
	sbuf_printf(sb, "(%u skills are installed, too many to show: these "
	    "are the first %u by name. list_skills with a query searches "
	    "the names and descriptions of all of them.)\n", r->n, shown);
}

/* see agent_int.h */
int
frame_handoff_ok(const struct agent *ag, const struct frame *f,
    const char *name, unsigned flags)
{
	struct skill stub;

	/* Providers want tool names in [A-Za-z0-9_-]: a skill named in
	 * another script is reached only inline. */
	if ((f->skill != NULL && strcmp(name, f->skill->name) == 0) ||
	    (flags & SKILL_NO_MODEL) || !skill_name_is_ascii(name) ||
	    strlen(name) > 64 - strlen(HANDOFF_PREFIX) ||
	    !frame_may_handoff(ag, f->name, name))
		return 0;
	memset(&stub, 0, sizeof(stub));
	stub.name = name;
	stub.flags = flags;
	/* Without ORCH nothing here can run an orchestration skill. */
	return HAVE_ORCH ? (f->orch != NULL ? orch_may_call(f, &stub) :
	    !owned(ag, name)) : !(flags & SKILL_OSKILL);
}

/* The handoff_to_<skill> tools of frame f: the skills it may hand a task
 * to (all, or for an orchestrator those it is allowed); of an index the
 * first CATALOG_TOP, and offered() lets it reach the others. */
int
frame_handoffs(struct agent *ag, struct frame *f, unsigned cap)
{
	static const char handoff_params[] = "{\"type\":\"object\","
	    "\"properties\":{\"task\":{\"type\":\"string\",\"description\":"
	    "\"What the skill agent should do, with the details it needs.\"}},"
	    "\"required\":[\"task\"]}";
	unsigned i, end = MIN(cap, f->ntools + frame_ncatalog(ag));
	struct arena tmp;
	int e = 0;

	arena_init(&tmp, "handoffs");
	f->handoffs = 1;
	for (i = 0; i < ag->reg.n && f->ntools < end && e == 0; i++) {
		struct llm_tool *t = &f->tools[f->ntools];
		const struct skill *sk;

		/* Decided on the name and flags: an index reads again only
		 * the skills it offers. */
		if (!frame_handoff_ok(ag, f, skill_reg_name(&ag->reg, i),
		    skill_reg_flags(&ag->reg, i)) ||
		    (sk = skill_reg_get(&ag->reg, i, &tmp)) == NULL)
			continue;
		t->name = arena_printf(f->a, HANDOFF_PREFIX "%s", sk->name);
		t->description = arena_printf(f->a, "Hand a task to the '%s' "
		    "skill agent: %s", sk->name, sk->description);
		t->params = handoff_params;
		if (t->name == NULL || t->description == NULL)
			e = -E_NOMEM;
		else
			f->ntools++;
		arena_reset(&tmp);
	}
	arena_reset(&tmp);
	return e;
}

/* Tools and the system prompt of a frame. */
int
frame_setup(struct agent *ag, struct frame *f)
{
	unsigned cap = frame_ncatalog(ag) + T__COUNT + 1 + (EXT(ag) != NULL ?
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
		catalog(ag, &sb);
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
			frame_add_tool(f, f->a, cap, T_RUN_SKILL_SCRIPT);
			frame_add_tool(f, f->a, cap, T_RUN_COMMAND_LINE);
			frame_add_tool(f, f->a, cap, T_READ_SKILL_FILE);
			frame_add_tool(f, f->a, cap, T_LIST_SKILL_FILES);
			frame_add_tool(f, f->a, cap, T_LOAD_SKILL_RESOURCES);
		} else {
			sbuf_adds(&sb, "\nTo use a skill, call handoff_to_<name> "
			    "with the task: that skill's agent does the work "
			    "and hands back its result. Answer directly when "
			    "no skill is needed.\n");
		}
		frame_add_tool(f, f->a, cap, T_LIST_SKILLS);
		if (ag->cfg->create_skill)
			frame_add_tool(f, f->a, cap, T_CREATE_SKILL);
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
		frame_add_tool(f, f->a, cap, T_RUN_SKILL_SCRIPT);
		frame_add_tool(f, f->a, cap, T_RUN_COMMAND_LINE);
		frame_add_tool(f, f->a, cap, T_READ_SKILL_FILE);
		frame_add_tool(f, f->a, cap, T_LIST_SKILL_FILES);
		frame_add_tool(f, f->a, cap, T_LOAD_SKILL_RESOURCES);
		frame_add_tool(f, f->a, cap, T_HAND_BACK);
	}
	/* A question pauses the turn in the session log: not without one. */
	if (ag->logging)
		frame_add_tool(f, f->a, cap, T_ASK_USER);
	if (ag->workspace != NULL) {
		frame_add_tool(f, f->a, cap, T_WRITE_FILE);
		frame_add_tool(f, f->a, cap, T_READ_FILE);
		frame_add_tool(f, f->a, cap, T_LIST_WORKSPACE_FILES);
		frame_add_tool(f, f->a, cap, T_GET_FILE_INFO);
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
	    frame_handoffs(ag, f, cap) != 0)
		return -E_NOMEM;
	if (sb.err)
		return -E_NOMEM;
	f->system = sb.p;
	return 0;
}

/* A skill agent's frame f for sk at depth, under a frame whose agents go
 * lim deep; its task is the first message; its messages live in the
 * turn's arena. 0 or -E_NOMEM. */
int
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
	if (frame_setup(ag, f) != 0 || frame_msg(ag, f->a, f->tail, LLM_USER,
	    task, strlen(task)) == NULL)
		return -E_NOMEM;
	return 0;
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
void
frame_usage(struct agent *ag, unsigned long in, unsigned long out, int cache)
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
