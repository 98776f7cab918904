/* plan.h - LightSOPLang: the plans an orchestration skill in SOP mode asks
 * the model to write, parsed and checked whole before any step runs.
 *
 * The language:
 * - A plan is UTF-8 text in lines ended by LF; a CR before an LF is
 *   ignored (also inside literals). Other control characters than tab,
 *   and a CR that no LF follows, are errors.
 * - An optional first line "#!LANG" (e.g. "#!english", starting in column
 *   1) names the natural language of the plan's prose: the rest of the
 *   line without the blanks around it, 1 to PLAN_MAX_NAME bytes.
 *   Default "english". "#!" on any other line is a comment.
 * - Blank lines, and lines whose first non-blank character is '#', are
 *   comments. There are no comments at the end of a statement ("#x"
 *   there is a word).
 * - A statement is "@VAR COMMAND ARG..." on one line (leading blanks are
 *   allowed); a multi-line literal continues it on the next lines. VAR
 *   and COMMAND are names: [A-Za-z_][A-Za-z0-9_-]*, at most PLAN_MAX_NAME
 *   bytes. Blanks (space, tab) separate the parts; an argument is
 *   - a word: a run of non-blank characters not starting with '"' or '$';
 *   - a quoted literal "..." with the escapes \" \\ \n \t (no others); it
 *     may span lines, the line ends being part of the value;
 *   - a block """...""": the bytes between the first """ and the next
 *     one, verbatim (no escapes, so a block cannot hold three quotes in
 *     a row); a line end right after the opening """ is not part of it;
 *   - a reference $NAME to the result of an earlier statement's VAR.
 *   A literal or reference ends at a blank or at the end of the line.
 * - Each VAR is defined once. A reference to a VAR that no earlier
 *   statement defines is an error, so the steps form an acyclic graph
 *   whose order is the text order.
 * - Commands are checked by the caller's callback; final_answer and
 *   cannot_complete are always known and take at least one argument.
 *   The last statement, and only it, is one of those two.
 * - Limits: PLAN_MAX_STEPS statements, PLAN_MAX_ARGS arguments each,
 *   PLAN_MAX_LITERAL bytes per literal (decoded), PLAN_MAX_TEXT bytes of
 *   text.
 */
#ifndef PLAN_H
#define PLAN_H

#include "base/arena.h"
#include "base/base.h"
#include "base/str.h"

#define PLAN_MAX_STEPS		64	/* the bits of plan_ready's sets */
#define PLAN_MAX_ARGS		16
#define PLAN_MAX_NAME		64	/* VAR, COMMAND, LANG */
#define PLAN_MAX_LITERAL	(16u << 10)
#define PLAN_MAX_TEXT		(64u << 10)

#define PLAN_FINAL		"final_answer"
#define PLAN_CANNOT		"cannot_complete"

enum plan_arg_kind {
	PA_WORD,
	PA_TEXT,	/* a quoted literal or a """ block, decoded */
	PA_REF
};

/* s[0..n) is the word or the decoded literal, or for a reference the
 * name of the step it refers to (steps[ref].var). s is NUL-terminated
 * but n rules. */
struct plan_arg {
	enum plan_arg_kind	 kind;
	const char		*s;
	size_t			 n;
	unsigned		 ref;	/* step index, for PA_REF */
};

struct plan_step {
	const char		*var;	/* without the '@' */
	const char		*cmd;
	struct plan_arg		*args;
	unsigned		 nargs;
	unsigned		 line, col;	/* of the '@' */
	unsigned		*deps;	/* steps referred to: sorted, unique */
	unsigned		 ndeps;
};

struct plan {
	const char		*lang;
	struct plan_step	*steps;
	unsigned		 n;	/* >= 1; steps[n - 1] is terminal */
};

/* Where and why a plan was refused. line and col are 1-based; col counts
 * characters (UTF-8 sequences), a tab as one. msg is one sentence without
 * the position, written for the model that wrote the plan, e.g.
 * "$total is used before a statement defines it (line 7)". */
struct plan_error {
	unsigned	line, col;
	char		msg[160];
};

/* Nonzero when the command cmd[0..n) exists (cmd is NUL-terminated). */
typedef int	(*plan_known_fn)(void *ctx, const char *cmd, size_t n);

/* Parse and check the whole plan text[0..n) (not NUL-terminated; nothing
 * past text + n is read). known == NULL knows every command. On success
 * *out and everything it points to live in `a` (nothing points into
 * text). On failure *out is NULL, err (if not NULL) says where and why,
 * and what was allocated stays in `a` (reset it to a mark to drop it).
 * Returns 0, -E_PARSE (the plan is wrong), -E_LIMIT (a PLAN_MAX_* was
 * exceeded, or a name is too long) or -E_NOMEM. When a plan has several
 * errors, the first in the text is reported, but the text's encoding is
 * checked first. */
int	plan_parse(struct arena *a, const char *text, size_t n,
	    plan_known_fn known, void *ctx, struct plan **out,
	    struct plan_error *err);

/* 1 when cmd is final_answer or cannot_complete. */
int	plan_is_terminal(const char *cmd);

/* The steps that can start now: not in done, not in running, every dep
 * in done (bit i is step i); the last (terminal) step also waits for all
 * the others, referred to or not, so that it ends the run. Their indexes
 * go to out[], in step order, at most max of them; returns how many. */
unsigned plan_ready(const struct plan *p, uint64_t done, uint64_t running,
	    unsigned *out, unsigned max);

/* Append the plan as canonical text: "#!LANG", then one statement per
 * line, single blanks between the parts, every literal as a quoted one
 * with \" \\ \n \t escaped. Parsing it gives the same plan. Returns 0 or
 * sb's sticky error. */
int	plan_write(struct sbuf *sb, const struct plan *p);

#endif
