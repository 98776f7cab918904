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

#include "arena.h"
#include "base.h"
#include "cfg.h"
#include "llm.h"
#include "skill.h"

/* What a turn ended with; cmd_run maps these to exit statuses. */
enum agent_status {
	AG_OK,
	AG_FAIL,	/* the model or a tool failed the turn */
	AG_LIMIT,	/* turns, time, tokens or budget ran out */
	AG_NOMEM,	/* the memory budget ran out */
	AG_EXIT,	/* /exit */
};

/* An event as one JSON object (text without newline), its type apart. */
typedef void (*agent_event_fn)(void *ctx, const char *type, const char *json,
    size_t n);

struct agent_opts {
	const char	*session;	/* resume or create this session */
	int		 resume;	/* the session must exist */
	int		 stream;	/* text deltas as events */
	int		 ephemeral;	/* no session log */
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

/* The session's name, and the totals so far. */
const char *agent_session(const struct agent *ag);
void	agent_usage(const struct agent *ag, unsigned long *in,
	    unsigned long *out, double *cost);

/* Close the session log (synced). */
void	agent_close(struct agent *ag);

#endif
