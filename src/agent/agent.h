/* agent.h - the orchestrator and the skill agents: one user turn at a time.
 *
 * The entry agent sees the skill catalog (names and descriptions) and
 * either hands off to a skill agent (handoff_to_<skill>: the skill agent's
 * system prompt is the skill body, its tools are the skill tools, and it
 * hands back a result that becomes the handoff's tool result) or activates
 * a skill inline (activate_skill). Every event is written to the session
 * log and given to the caller's event function.
 */
#ifndef AGENT_H
#define AGENT_H

#include "base/arena.h"
#include "base/base.h"
#include "agent/cfg.h"
#include "llm/llm.h"
#include "skill/skill.h"
#include "tool/tool.h"

/* What a turn ended with; cmd_run maps these to exit statuses. */
enum agent_status {
	AG_OK,
	AG_FAIL,	/* the model or a tool failed the turn */
	AG_LIMIT,	/* turns, time, tokens or budget ran out */
	AG_NOMEM,	/* the memory budget ran out */
	AG_EXIT,	/* /exit */
	AG_WAIT,	/* the model asked the person (ask_user): the turn is
			 * paused, in the session log, until agent_answer */
};

/* An event: the JSON object as logged and printed by --json (text
 * without newline), and its main fields already taken out, so consumers
 * need not parse it again. Fields that do not apply are NULL (0). */
struct agent_event {
	const char	*type;
	const char	*json;
	size_t		 n;
	const char	*agent;		/* text, tool_*: the agent */
	const char	*text;		/* text: the delta; final: the answer;
					 * error: the message; tool_end: the
					 * output; handoff: task or result */
	size_t		 len;		/* of text */
	const char	*name;		/* tool_*: the tool; handoff: "to" */
	const char	*from;		/* handoff */
	const char	*confinement;	/* tool_end, when sandboxed */
	long long	 ms;		/* tool_end: how long; -1 unknown */
	int		 ok;		/* tool_end */
	int		 back;		/* handoff: a result coming back */
	long long	 off;		/* the session log's size after this
					 * event, -1 when it was not logged */
};

typedef void (*agent_event_fn)(void *ctx, const struct agent_event *e);

/* Asked before a paused turn is resumed here with an answer (approve -1:
 * text answers a question; 1 or 0: approve or deny a call, text the
 * reason or NULL): a turn that goes on elsewhere takes it (a job's, in its
 * worker: job_answer in serve/jobs.h). 1 taken (*msg says where it went),
 * -1 refused (*msg why), 0 not its: the turn resumes here. Strings in a. */
struct cfg;
typedef int (*agent_take_fn)(struct arena *a, const struct cfg *c,
    const char *session, int approve, const char *text, size_t n,
    const char **msg);

struct agent_opts {
	const char	*session;	/* resume or create this session */
	int		 resume;	/* the session must exist */
	int		 stream;	/* text deltas as events */
	int		 ephemeral;	/* no session log */
	int		 json;		/* offline answers as the scripts'
					 * JSON, not text for a person */
	const char	*only;		/* space-separated: the skills this
					 * agent may see and use, and
					 * mcp:NAME the configuration's MCP
					 * servers it may; NULL all */
	const char	*ws_sub;	/* its files in this folder of the
					 * workspace (serve: the token's
					 * tag); NULL the workspace */
	const char	*agent;		/* start the turns at this skill's
					 * agent, not at the entry agent */
	int		 plan_only;	/* that agent is an orchestration
					 * skill (SOP): its plan, checked,
					 * is the answer; nothing runs */
	const struct tool_ext *ext;	/* more tools; NULL none */
	agent_take_fn	 take_answer;	/* NULL: every answer is ours */
	agent_event_fn	 on_event;
	void		*ctx;
};

struct agent;

/* An agent over a loaded configuration. Opens (or resumes) the session.
 * Returns NULL with *err set (and words in why) on failure. */
struct agent *agent_new(struct arena *perm, const struct cfg *c,
	    const struct agent_opts *o, int *err, char *why, size_t whylen);

/* Run one user turn: slash commands, .command.md expansion, then the
 * entry agent until it answers or a limit stops it. *final is the answer
 * (or the slash command's output), valid until the next turn. */
enum agent_status agent_turn(struct agent *ag, const char *input, size_t n,
	    const char **final);

/* Resume a paused turn with the person's answer to its question (in this
 * process or any later one: the session log holds the paused turn, and
 * the model is not asked again for the steps already done). AG_FAIL with
 * *final saying why when the session is not waiting. */
enum agent_status agent_answer(struct agent *ag, const char *text, size_t n,
	    const char **final);

/* The question a paused session waits on, or NULL. */
const char *agent_question(const struct agent *ag);

/* The id of the call a paused session waits on (the input_requested
 * event's "id"), or NULL: what an approval names to be sure it approves
 * the call the person saw, not one a later message paused on. */
const char *agent_asked(const struct agent *ag);

/* 1 when the paused turn waits on an approval of a tool call (approve:
 * rules, pending hooks) rather than an answer: agent_decide resumes it,
 * agent_answer refuses to. */
int	agent_approval(const struct agent *ag);

/* Approve the call a paused turn waits on (it runs, without its pre hooks
 * and approvals asked again) or deny it (its result is an error the model
 * sees: "the person denied this call: REASON"; reason may be NULL), then
 * go on as agent_answer does. */
enum agent_status agent_decide(struct agent *ag, int approve,
	    const char *reason, const char **final);

/* The line a person typed while the turn waits (chat, serve's answer and
 * OpenAI endpoints): s (n bytes, NUL-terminated) answers a question; to
 * an approval, y or yes (any case) approves and anything else denies, s
 * being the reason. Returns what agent_answer or agent_decide does. */
enum agent_status agent_reply(struct agent *ag, const char *s, size_t n,
	    const char **final);

/* The session's name, and the totals so far. */
const char *agent_session(const struct agent *ag);
void	agent_usage(const struct agent *ag, unsigned long *in,
	    unsigned long *out, double *cost);

/* Add an earlier exchange to the conversation before the first turn, as
 * if replayed from a log, without logging it (an OpenAI-style request that
 * carries its own history): role is LLM_USER or LLM_ASSISTANT. Returns 0
 * or -E_NOMEM. */
int	agent_seed(struct agent *ag, enum llm_role role, const char *text,
	    size_t n);

/* Start this agent's turns at skill `name`'s agent instead of the entry
 * agent (NULL: the entry agent again); plan_only: see agent_opts. */
void	agent_entry(struct agent *ag, const char *name, int plan_only);

/* Run a skill tool (run_skill_script, read_skill_file, list_skill_files)
 * as skill `skill`'s agent would, outside a turn: `skillbox mcp serve`.
 * Approval rules and pending hooks refuse it (nobody is there to ask),
 * a denying hook denies it. Nothing is logged; out->text lives until the
 * next call. 0 or -E_NOMEM. MCP=1 builds. */
struct tool_out;
int	agent_tool(struct agent *ag, const char *skill, const char *tool,
	    const char *args, size_t n, struct tool_out *out);

/* The skills this agent sees. */
const struct skill_reg *agent_reg(const struct agent *ag);

/* The agent's MCP client (MCP=1 builds), NULL without servers. */
struct mcp;
struct mcp *agent_mcp(const struct agent *ag);

/* Close the session log (synced). */
void	agent_close(struct agent *ag);

/* Close it, its connection to the model, and give back the memory it
 * holds outside `perm` (one agent after another, as evals run them);
 * perm is the caller's to reset. */
void	agent_free(struct agent *ag);

/* Its client of the model, NULL when offline (an eval's judge). */
struct llm_client *agent_llm(struct agent *ag);

#endif
