/* hook.h - approvals and hooks: what may stop, or pause, a step of a turn.
 *
 * Approval gates are always built: `approve:` (in the config, and in a
 * skill's front-matter for the calls of that skill) lists names; a tool
 * call that one matches pauses the turn until a person approves or denies
 * it. Hooks (HAVE_HOOKS): `hooks:` lists of { event, match, command |
 * url | pending, timeout, on_error } run before and after the steps of a
 * turn; a pre hook may deny its step, a post hook only sees the outcome.
 *
 * A name in `match` or `approve` is compared with the step's tool, the
 * skill it works for and the agent taking it ("entry" or a skill); `*` in
 * it matches any run of characters; no `match` is every step.
 * A hook that fails (a timeout, a command that cannot start or exits
 * other than 0 or 2, an http hook that cannot be reached or answers
 * garbage or a non-2xx status) does what its `on_error` says: deny (the
 * default of pre hooks: a guard that can be slowed down must not open)
 * or allow (the default of post hooks).
 * The order of a check: every command and http hook in turn (the config's,
 * then the skill's; the first deny wins), then the pauses (approve rules
 * and pending hooks). A step approved by a person runs without being
 * checked again.
 */
#ifndef HOOK_H
#define HOOK_H

#include "base/arena.h"
#include "base/base.h"

struct fm_node;
struct sbx_policy;
struct skill;

/* A pre event and its post event are neighbours: post = pre + 1. */
enum hook_event {
	HOOK_PRE_TOOL, HOOK_POST_TOOL,		/* a tool call */
	HOOK_PRE_SKILL, HOOK_POST_SKILL,	/* handoff_to_X, activate_skill */
	HOOK_PRE_SUBAGENT, HOOK_POST_SUBAGENT,	/* a child agent */
	HOOK_PRE_MODEL, HOOK_POST_MODEL,	/* one model request */
	HOOK_PRE_TURN, HOOK_POST_TURN,		/* one user turn */
	HOOK__COUNT
};

enum hook_kind { HOOK_COMMAND, HOOK_HTTP, HOOK_PENDING };

struct hook {
	unsigned char	 event;		/* enum hook_event */
	unsigned char	 kind;		/* enum hook_kind */
	unsigned char	 deny_on_error;	/* on_error: deny */
	unsigned short	 timeout_s;
	const char	*match;		/* NULL: every step */
	const char	*target;	/* the command line or the URL */
	const char	*dir;		/* where a command runs */
};

/* The rules of one source: the config, or a skill's front-matter. */
struct hook_rules {
	const char *const	*approve;
	unsigned		 napprove;
	const struct hook	*hooks;
	unsigned		 nhooks;
};

/* One step, as the hooks see it (their JSON context). Fields that do not
 * apply are NULL. */
struct hook_step {
	enum hook_event	 ev;
	const char	*session;
	unsigned	 turn;
	const char	*agent;		/* "entry" or the skill agent */
	const char	*tool;
	const char	*skill;		/* the skill the step works for */
	const struct skill *sk;		/* ...whose front-matter rules apply */
	const char	*id;		/* the call's id */
	const char	*args;		/* the call's arguments (JSON) */
	size_t		 args_len;
	const char	*result;	/* post: the output, reply or answer;
					 * pre_turn: the input */
	size_t		 result_len;
	int		 is_error;	/* post: the step failed */
	const char	*status;	/* post_turn: as turn_end's */
	int		 child;		/* a handoff, which starts a child
					 * agent: *_skill is *_subagent too */
};

/* One hook ran: decision is "allow", "deny" or "error" (it failed; its
 * on_error says whether the step goes on: the reason then ends "on_error:
 * deny"); reason as the hook gave it, or NULL. */
typedef void (*hook_log_fn)(void *ctx, const struct hook_step *st,
    const struct hook *h, const char *decision, const char *reason,
    long long ms);

/* What hooks run with. */
struct hook_env {
	struct hook_rules	 cfg;
	const struct sbx_policy	*base;		/* scripts' user, secrets */
	const char		*workspace;
	const char		*ca_file;	/* https hooks; NULL: system */
	struct arena		*perm;		/* where the CA bundle is kept */
	hook_log_fn		 log;
	void			*ctx;
};

enum hook_verdict { HOOK_ALLOW, HOOK_DENY, HOOK_ASK };

/* Check a step against env's rules and sk's front-matter. A post event
 * runs its hooks and returns HOOK_ALLOW. A pre event returns HOOK_DENY
 * with *reason (in `a`) when a hook denied it, HOOK_ASK with *reason
 * saying which rule when it waits for a person (never when `approved`),
 * else HOOK_ALLOW. Scratch memory comes from `a`. */
enum hook_verdict hook_check(const struct hook_env *env, struct arena *a,
	    const struct hook_step *st, int approved, const char **reason);

/* The `approve:` and `hooks:` of a front-matter map into r, strings in a;
 * relative commands of hooks run in dir. Returns 0, or -E_INVAL with the
 * problem in err (at *line), or -E_NOMEM. With HOOKS=0 a `hooks:` key is
 * -E_INVAL ("built without hooks"). */
int	hook_rules_fm(struct arena *a, const struct fm_node *map,
	    const char *dir, struct hook_rules *r, unsigned *line, char *err,
	    size_t errlen);

/* A list of hooks (the value of `hooks:`) into *out; as hook_rules_fm. */
int	hook_parse(struct arena *a, const struct fm_node *nd, const char *dir,
	    struct hook **out, unsigned *n, unsigned *line, char *err,
	    size_t errlen);

/* A name list (`approve:`): one name or a list of them, each letters,
 * digits, '_', '-' and '*'. Returns the count, or -E_INVAL at *line. */
int	hook_names(struct arena *a, const struct fm_node *nd,
	    const char ***out, unsigned *line);

/* 1 when s may be a name in `approve` or `match`. */
int	hook_name_ok(const char *s);

/* 1 when name matches the pattern (`*` any run of characters). */
int	hook_glob(const char *pat, const char *name);

/* The event's name in the config ("pre_tool_use"). */
const char *hook_event_name(enum hook_event ev);

#endif
