/* agent_int.h - what the files of the agent folder share: the agent, its
 * frames, and the functions one file calls in another. Private to
 * src/agent/; agent.h is the interface.
 *
 *   agent.c    the turn: the frame loop, model steps, running calls
 *   frame.c    a frame's tools, handoffs and system prompt; messages
 *   event.c    events: the log line, then the caller's consumer
 *   gate.c     ask_user, approvals, hooks
 *   orch.c     orchestration skills: stages, plans, steps at once
 *   session.c  compaction, resume, a paused turn rebuilt
 *   offline.c  no model: the best-matching action of the best skill
 *   command.c  slash commands and .command.md
 *   setup.c    agent_new and the rest of agent.h's accessors
 */
#ifndef AGENT_INT_H
#define AGENT_INT_H

#include "agent/agent.h"
#include "config.h"
#include "fmt/json.h"
#include "base/str.h"
#include "sandbox/sandbox.h"
#include "session/slog.h"
#include "skill/hook.h"
#include "tool/tool.h"

#define MAX_DEPTH	3		/* entry -> skill -> skill -> skill */
#define MAX_HASHES	128
#define HANDOFF_PREFIX	"handoff_to_"
#define CATALOG_TOP	50		/* skills named to the model when the
					 * registry is an index */
/* Tools from outside (tool_ext): only builds with a feature that makes
 * them have the code. */
#define EXT(ag)		(HAVE_MCP || HAVE_JOBS ? (ag)->o.ext : NULL)

/* The agent: configuration, conversation, the turn's state. */
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
	const char		*asked;		/* its call's id */
	struct llm_msg		**wait_tail, *wait_mark; /* before it */
	long long		 replay_from;	/* where resume read from */

	struct hook_env		 hooks;
	int			 approval;	/* the pause is for an approval */
	const char		*approved;	/* the call a person approved */
	int			 relay;		/* a plan step's process: its
						 * events go to fd relay - 1 */
};

/* --- events */

/* An event being written: ev_begin, fields, ev_end. */
struct ev {
	struct sbuf		 sb;
	struct json_writer	 w;
	struct agent_event	 t;
};

/* The arena the conversation lives in now (compaction swaps them). */
static inline struct arena *
sess(struct agent *ag)
{
	return &ag->sess[ag->cur];
}

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
	int			 handoffs;	/* it has handoff tools */
};

/* How deep the agents below frame f may go: limits.depth, lowered by a
 * skill's metadata.max_agent_depth on the way down (ORCH=1 builds). */
#define MAXD(f)		(HAVE_ORCH ? (f)->maxd : MAX_DEPTH)
#define DEEPEST(ag)	(HAVE_ORCH ? (ag)->cfg->limits.depth : MAX_DEPTH)

struct orch;

/* --- event.c: each event is logged (unless a text delta: log 0), then
 * given to o.on_event; a log that fails stops the turn (ag->stop). */
void	ev_begin(struct agent *ag, struct ev *e, const char *type);
void	ev_end(struct agent *ag, struct ev *e, int log);
/* A tool event's start: agent, id (NULL: none) and tool. */
void	ev_tool(struct agent *ag, struct ev *e, const char *type,
	    const char *agent, const char *id, const char *name);
/* tool_end with out's result; ms < 0: not timed. */
void	ev_tool_end(struct agent *ag, const char *agent, const char *id,
	    const char *name, const struct tool_out *out, long long ms);
/* {"type":type, key:val} */
void	ev_simple(struct agent *ag, const char *type, const char *key,
	    const char *val);
/* A handoff from -> to (back: a result), of plan step `step` (or NULL). */
void	ev_handoff(struct agent *ag, const char *from, const char *to,
	    int back, const char *text, int offline, const char *step);
void	ev_error(struct agent *ag, const char *msg);
/* Log event t, its JSON line json (unless a text delta: !log), and hand
 * it on (ev_end's second half; orch.c relays a step's events with it). */
void	ev_emit(struct agent *ag, struct agent_event *t, const char *json,
	    size_t n, int log);

/* --- frame.c */
/* Append a message (text copied) at *tail, in a; counted in the
 * conversation's size when a is sess(ag). NULL: out of memory
 * (ag->stop is AG_NOMEM). */
struct llm_msg *frame_msg(struct agent *ag, struct arena *a,
	    struct llm_msg ***tail, enum llm_role role, const char *text,
	    size_t n);
/* May agent `from` hand off to `to` (handoffs: in the configuration)? */
int	frame_may_handoff(const struct agent *ag, const char *from,
	    const char *to);
/* Add tool id to f->tools (cap: their room): 0 or -E_LIMIT. */
int	frame_add_tool(struct frame *f, struct arena *a, unsigned cap,
	    enum tool_id id);
/* How many skills a frame names to the model: all of them, or of an
 * index (SKILL_FULL_MAX) at most CATALOG_TOP. */
unsigned frame_ncatalog(const struct agent *ag);
/* May frame f hand a task to the skill `name` with these flags? */
int	frame_handoff_ok(const struct agent *ag, const struct frame *f,
	    const char *name, unsigned flags);
/* Add f's handoff_to_<skill> tools (cap: their room). 0 or -E_NOMEM. */
int	frame_handoffs(struct agent *ag, struct frame *f, unsigned cap);
/* Tools and system prompt of frame f, in f->a. 0 or -E_NOMEM. */
int	frame_setup(struct agent *ag, struct frame *f);
/* Skill sk's agent's frame f at depth, under a frame whose agents go lim
 * deep, with task as its first message, in the turn's arena. 0 or
 * -E_NOMEM. */
int	frame_skill(struct agent *ag, struct frame *f, const struct skill *sk,
	    const char *task, unsigned depth, unsigned lim);
/* Count and log a model call's tokens; cache as llm_cached(). */
void	frame_usage(struct agent *ag, unsigned long in, unsigned long out,
	    int cache);

/* --- agent.c */
/* The tools' environment for frame f's calls. */
void	agent_tool_env(struct agent *ag, const struct frame *f,
	    struct tool_env *env);
/* Run the turn from frames fs[0..top] until the bottom one answers
 * (*answer, in the turn's arena), a person is asked (AG_WAIT) or
 * something stops it; resumed: fs[top] started before. */
enum agent_status agent_run_frames(struct agent *ag, struct frame *fs,
	    unsigned top, int resumed, const char **answer);
/* Start the next call of fs[*top]'s pending reply (a handoff pushes a
 * frame). */
void	agent_call_step(struct agent *ag, struct frame *fs, unsigned *top);
/* The agent at fs[*top] ended (failed or not): its answer is the result of
 * the handoff call, or the plan step, of the frame below; *top drops. */
void	agent_frame_return(struct agent *ag, struct frame *fs, unsigned *top,
	    int failed);

/* --- gate.c */
/* Frame f's call of `tool` came back ok with r: an end tool (hand_back,
 * final_answer, cannot_complete) ends the frame after its reply's calls. */
void	gate_call_ended(struct frame *f, const char *tool, const char *r);
/* ask_user: the question logged and the turn paused (AG_WAIT); a bad
 * call's error in out. */
void	gate_ask_user(struct agent *ag, struct frame *f,
	    const struct llm_call *c, struct tool_out *out);
/* The hooks' and approvals' environment, from the configuration. */
void	gate_init(struct agent *ag);
/* Approvals and pre hooks of call c: 1 when it does not run now, denied
 * (out says so, for the model) or paused for a person (AG_WAIT). */
int	gate(struct agent *ag, struct frame *f, const struct llm_call *c,
	    struct tool_out *out);
/* The post hooks of call c, with its outcome (HOOKS=1 builds). */
void	gate_call_hooked(struct agent *ag, const struct frame *f,
	    const struct llm_call *c, const struct tool_out *out);
/* Hooks of a model request or of the turn (f NULL): 1 when a pre hook
 * denied it and the turn stops (AG_FAIL). 0 without HOOKS. */
int	gate_step_hooked(struct agent *ag, const struct frame *f,
	    enum hook_event ev, const char *text, const char *status);

/* --- orch.c: orchestration skills (ORCH=1 builds); every call is under
 * if (HAVE_ORCH && f->orch != NULL) but orch_setup and orch_may_call. */
/* The system prompt and tools of orchestrator f, for its stage. */
int	orch_setup(struct agent *ag, struct frame *f);
/* May orchestrator f hand off to sk in its stage? */
int	orch_may_call(const struct frame *f, const struct skill *sk);
/* $rN in a loop stage's task replaced by results; NULL: no memory. */
char	*orch_refs(struct agent *ag, const struct frame *f, const char *task);
/* Handoff calls of fs[top]'s reply at once, in processes of their own:
 * 1 when it ran them, 0 when the caller runs the next call itself. */
int	orch_call_batch(struct agent *ag, struct frame *fs, unsigned top);
/* An orchestrator with no calls pending: 1 when it went on to its next
 * stage or plan step (the loop goes round again). */
int	orch_next(struct agent *ag, struct frame *fs, unsigned *top);
/* 1 when another model call is over limits.steps (the turn stops). */
int	orch_over_steps(struct agent *ag, struct frame *f);
/* f's end tool: cannot_complete (cannot 1) or final_answer. */
void	orch_call_ended(struct frame *f, int cannot);
/* A call of f failed: limits.step_errors of them stop the turn. */
void	orch_call_failed(struct agent *ag, struct frame *f);
/* f ended: 1 when with cannot_complete (a failure; of the turn too
 * when bottom). */
int	orch_cannot(struct agent *ag, struct frame *f, int bottom);
/* An agent above f handed back r: 1 when that ends a plan step. */
int	orch_returned(struct agent *ag, struct frame *f, const char *r,
	    int failed);
/* A paused turn rebuilt: f's handoff event d, maybe a plan step's. */
void	orch_replay_step(struct frame *f, const struct json_doc *d,
	    struct arena *a);
/* A paused turn rebuilt: f's orchestrate event d. 0, -E_PARSE, -E_NOMEM. */
int	orch_replay(struct agent *ag, struct frame *f,
	    const struct json_doc *d, struct arena *a);

/* --- session.c */
/* A string member of obj, copied into a; NULL when missing. */
char	*session_str(const struct json_doc *d, struct arena *a, int obj,
	    const char *key, size_t *n);
/* Summarize the conversation into the other semi-space; *out says what
 * happened (or why not). */
enum agent_status session_compact(struct agent *ag, const char **out);
/* Is the conversation over limits.compact_after or the window? */
int	session_needs_compaction(const struct agent *ag);
/* Replay the session log into the conversation (a turn paused on a
 * person stays open). 0, or an error with words in why. */
int	session_resume(struct agent *ag, char *why, size_t whylen);
/* The frames fs[0..*top] of the paused turn, from the log. 0, -E_NOENT
 * (a skill is gone), -E_PARSE, -E_NOMEM. */
int	session_rebuild(struct agent *ag, struct frame *fs, unsigned *top);

/* --- offline.c: a turn without a model. */
enum agent_status offline_turn(struct agent *ag, const char *input,
	    const char **final);

/* --- command.c */
/* A built-in slash command: AG_FAIL with *final NULL when cmd is none. */
enum agent_status command_slash(struct agent *ag, const char *cmd,
	    const char **final);
/* /NAME ARGS from a .command.md (or the crew's): *out its text, *agent
 * its front-matter's agent. 0, -E_NOENT, -E_NOMEM. */
int	command_expand(struct agent *ag, const char *input, char **out,
	    const char **agent);

/* --- setup.c */
/* Keep only the skills named in o.only. */
void	setup_only_skills(struct agent *ag);

#endif
