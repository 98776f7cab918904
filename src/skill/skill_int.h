/* skill_int.h - what skill.c (the registry) and skill_parse.c (one
 * definition file) share; not for other modules.
 */
#ifndef SKILL_INT_H
#define SKILL_INT_H

#include "skill/skill.h"

/* The definition file names, by `which`: 0 SKILL.md, 1 skill.md,
 * 2 oskill.md. */
extern const char *const skill_deffiles[3];

/* How a finding counts: in strict mode (validate) and when loading. */
enum kind {
	K_WARN,		/* warning everywhere */
	K_RULE,		/* error in strict mode, warning when loading */
	K_FATAL,	/* error in strict mode, skill skipped when loading */
};

/* One definition file being read, and what its findings add up to. */
struct parse {
	struct arena	*a;		/* where the skill's strings go */
	struct arena	*tmp;		/* file text and YAML tree */
	const char	*file;
	int		 strict;
	unsigned	 errors;
	int		 fatal;
	skill_diag_fn	 diag;
	void		*ctx;
};

/* Report a finding of kind k at file p->file, line (0: the whole file),
 * to p->diag, counting errors and noting a fatal one in p. */
void	skill_issue(struct parse *p, enum kind k, unsigned line,
	    const char *rule, const char *fmt, ...) ATTR_PRINTF(5, 6);

/* Is `path` (resolved) inside `root` (resolved)? */
int	skill_inside(const char *root, const char *path);

/* Parse the definition file (skill_deffiles[which]) of the skill folder
 * `dir`, named `folder`, into *o (zeroed by the caller), its strings in
 * p->a. Returns 0, 1 when a fatal finding skips the skill, or -E_NOMEM. */
int	skill_parse(struct parse *p, const char *dir, const char *folder,
	    int which, struct skill_osk *o);

#endif
