/* tool.h - the built-in tools: their JSON schemas (fixed in the binary)
 * and their implementations. The agent decides which tools each agent
 * sees and dispatches calls here; every file access is confined (skill
 * folder or workspace) and every script runs through the sandbox.
 */
#ifndef TOOL_H
#define TOOL_H

#include "base/arena.h"
#include "base/base.h"
#include "llm/llm.h"
#include "sandbox/sandbox.h"
#include "skill/skill.h"

#define TOOL_FILE_MAX	(256u << 10)	/* bytes read_* returns */

/* Why a script without network may have failed (a result's "sandbox"). */
extern const char tool_no_net_note[];

enum tool_id {
	T_RUN_COMMAND_LINE, T_LOAD_SKILL_RESOURCES, T_READ_SKILL_FILE,
	T_LIST_SKILL_FILES, T_RUN_SKILL_SCRIPT, T_LIST_SKILLS,
	T_ACTIVATE_SKILL, T_WRITE_FILE, T_READ_FILE, T_LIST_WORKSPACE_FILES,
	T_GET_FILE_INFO, T_CREATE_SKILL, T_HAND_BACK, T_ASK_USER,
	T_FINAL_ANSWER, T_CANNOT_COMPLETE,
	T__COUNT
};

/* What a tool runs against. Permissions come from here, never from a
 * tool's arguments: a skill agent acts on its own skill only, the entry
 * agent on the skills it activated inline; a skill marked
 * disable-model-invocation is out of the model's reach. */
struct tool_env {
	struct skill_reg	*reg;
	const struct skill	*skill;		/* the skill agent's own */
	const char *const	*activated;	/* entry: skills activated */
	unsigned		 nactivated;
	const char		*workspace;	/* NULL: no workspace tools */
	const struct sbx_policy	*base;		/* host policy: narrows */
	unsigned		 host_allow;	/* perms the host allows */
	unsigned		 host_deny;
	int			 create_skill;	/* 0 off, 1 pending, 2 trusted */
	const char		*create_dir;	/* where it writes */
	unsigned		 timeout_ms;
	size_t			 out_cap;
};

/* A tool's result: text for the model, plus what events want. */
struct tool_out {
	char		*text;
	size_t		 len;
	int		 is_error;
	const char	*confinement;	/* scripts: layers in force */
	int		 as_root;	/* scripts: ran as uid 0 (opt-in) */
	const char	*audit;		/* scripts: audit record JSON */
	const char	*activated;	/* activate_skill: the skill name */
};

/* Tools from outside the built-in set (an MCP server's, a job worker's):
 * offered after the built-in tools of the agents they choose, and called
 * before them. Approvals and hooks apply to them as to any tool. */
struct tool_ext {
	/* Put the tools agent `agent` ("entry" or a skill name) may use in
	 * t[0..cap): returns how many, or -E_NOMEM. */
	int	(*tools)(void *ctx, struct arena *a, const char *agent,
		    struct llm_tool *t, unsigned cap);
	/* Run `name` for `agent`: 0 done (out filled, a failure the model
	 * should see in out->is_error), 1 not one of these tools, or
	 * -E_NOMEM. Text in `a`. */
	int	(*call)(void *ctx, struct arena *a, const char *agent,
		    const char *name, const char *args, size_t n,
		    struct tool_out *out);
	void	*ctx;
	const struct tool_ext *next;
};

/* At most this many tools of all tool_ext sets in one agent. */
#define TOOL_EXT_TOOLS	64

/* The tool's name, description and parameters schema for the model. */
void	tool_def(enum tool_id id, struct llm_tool *t);

/* activate_skill's definition with an enum of the skill names the model
 * may activate (not disable-model-invocation ones), built in `a`. */
int	tool_def_activate(struct arena *a, const struct skill_reg *reg,
	    struct llm_tool *t);

/* Which tool a name is, or -1. */
int	tool_find(const char *name);

/* Run a call. Bad arguments, denials and failures are tool errors the
 * model can correct (out->is_error), not failures of the turn. Returns 0,
 * or -E_NOMEM when the budget ran out. Text in `a`. */
int	tool_call(const struct tool_env *env, struct arena *a, enum tool_id id,
	    const char *args, size_t args_len, struct tool_out *out);

/* The skill a model-originated call may name, or NULL: not found, or
 * marked disable-model-invocation. */
const struct skill *tool_skill_find(const struct skill_reg *reg,
	    const char *name);

/* Build a sandbox policy for a skill: its allowed-tools narrowed by the
 * host. */
void	tool_policy(const struct tool_env *env, const struct skill *sk,
	    struct arena *a, struct sbx_policy *p);

#endif
