/* skill.h - the skills registry: discovery, parsing, validation, and
 * confined access to the files inside a skill.
 *
 * A skill is a folder holding SKILL.md (Agent Skills format: YAML
 * front-matter, then Markdown instructions), or skill.md (a variant found
 * in the wild), or oskill.md (an orchestration skill made of Markdown
 * sections). Discovery keeps only what the catalog needs; the body and the
 * resource list are read when asked for (progressive disclosure).
 */
#ifndef SKILL_H
#define SKILL_H

#include <sys/types.h>

#include "base/arena.h"
#include "base/base.h"
#include "base/str.h"

#define SKILL_NAME_MAX		64		/* characters (code points) */
#define SKILL_DESC_MAX		1024		/* characters */
#define SKILL_COMPAT_MAX	500		/* characters */
#define SKILL_FM_MAX		(32u << 10)	/* front-matter bytes */
#define SKILL_FILE_MAX		(1u << 20)	/* SKILL.md bytes */
#define SKILL_MAX_COUNT		100000		/* skills per registry */
#define SKILL_MAX_DEPTH		6		/* folder levels below a root */
#define SKILL_MAX_ENTRIES	200000		/* directory entries read per scan */
#define SKILL_FULL_MAX		256		/* skills kept whole; more: an index */
#define SKILL_MAX_ROOTS		16
#define SKILL_RES_MAX		256		/* resource files listed */
#define SKILL_RES_DEPTH		6

enum skill_flag {
	SKILL_OSKILL		= 1 << 0,	/* oskill.md orchestration skill */
	SKILL_LOWERCASE		= 1 << 1,	/* file is skill.md */
	SKILL_FORK		= 1 << 2,	/* context: fork */
	SKILL_NO_MODEL		= 1 << 3,	/* disable-model-invocation */
	SKILL_NOT_USER		= 1 << 4,	/* user-invocable: false */
	SKILL_OSK_ALLOWED	= 1 << 5,	/* oskill: Allowed-Skills present */
	SKILL_OSK_PREP		= 1 << 6,	/* oskill: Allowed-Prep-Skills present */
	SKILL_OSK_LOOP		= 1 << 7,	/* oskill: Session: loop (else SOP) */
	SKILL_GATED		= 1 << 8,	/* front-matter approve: or hooks:
						 * (hook.c reads them when used) */
	SKILL_MCP		= 1 << 9,	/* front-matter mcp_servers: (MCP=1
						 * builds; the agent reads them) */
};

/* metadata.max_agent_depth N (0..3), kept as N + 1 in these bits of the
 * flags (0: not set): the skill's agent starts agents at most N levels
 * below itself. ORCH=1 builds. */
#define SKILL_DEPTH_SHIFT	12
#define SKILL_DEPTH_MASK	(7u << SKILL_DEPTH_SHIFT)

/* What the catalog keeps of a skill, in one block: the struct, then its
 * strings. The name shares the folder name's bytes when they are equal. */
struct skill {
	const char	*name;
	const char	*description;
	const char	*dir;		/* the skill folder, as found */
	const char	*triggers;	/* comma-separated, or NULL */
	const char	*default_action;/* script path relative to dir, or NULL */
	const char	*actions;	/* metadata.actions: "SCRIPT: trigger,
					 * trigger; SCRIPT: ...", or NULL */
	const char	*allowed_tools;	/* space-separated, or NULL */
	unsigned	 flags;
	unsigned short	 root;		/* index of the root dir it came from */
};

/* An orchestration skill (SKILL_OSKILL) is this larger block; the other
 * skills do not pay for its lists. */
struct skill_osk {
	struct skill	 sk;
	const char	*allowed;	/* Allowed-Skills, space-separated */
	const char	*prep;		/* Allowed-Prep-Skills */
};

/* The oskill lists of sk, or NULL when sk is not an orchestration skill. */
const struct skill_osk *skill_osk(const struct skill *sk);

/* The text of an oskill.md section (title normalized as the loader does:
 * "allowed-skills"), trimmed, pointing into body; {NULL, 0} when absent.
 * Any heading ends a section. */
struct str skill_osk_section(const char *body, const char *title);

/* Severity of a finding: an error makes `validate` fail; a fatal finding
 * also keeps the lenient loader from loading the skill. */
enum skill_sev { SKILL_WARN, SKILL_ERROR, SKILL_FATAL };

/* Receives every finding: file, line (0 = whole file), rule id, message. */
typedef void (*skill_diag_fn)(void *ctx, enum skill_sev sev, const char *file,
    unsigned line, const char *rule, const char *msg);

/* A registry of more than SKILL_FULL_MAX skills keeps only an index:
 * per skill its name, flags and folder, about 40 bytes where the whole
 * skill takes 300 and more. What else a skill says is read from its file
 * again when it is asked for (skill_find, skill_reg_get). */
struct skill_ix;
struct skill_lazy;

struct skill_reg {
	const char	*roots[SKILL_MAX_ROOTS];
	unsigned	 nroots;
	struct skill	**v;		/* sorted by name; on the heap; NULL
					 * when the registry is an index */
	struct skill_ix	**ix;		/* the index, sorted by name; on the
					 * heap; NULL when v is kept */
	struct skill_lazy *lazy;	/* index: the skills read again */
	unsigned	 n;
	struct arena	 a[2];		/* the live registry and the next one */
	unsigned	 cur;
	uint64_t	 stamp;		/* fingerprint of what was scanned */
	unsigned	 strict : 1;	/* findings as `validate` sees them */
	skill_diag_fn	 diag;
	void		*diag_ctx;
};

/* Set up an empty registry over the given root folders (kept by pointer:
 * they must outlive the registry). Later roots override earlier ones.
 * Returns -E_LIMIT when there are more than SKILL_MAX_ROOTS. */
int	skill_reg_init(struct skill_reg *r, const char *const *roots,
	    unsigned nroots, skill_diag_fn diag, void *ctx);

/* Scan the roots and rebuild the registry. Discovery enters every folder
 * up to SKILL_MAX_DEPTH levels below a root, dot-folders too, but not
 * .git, .hg, .svn, node_modules, __pycache__ or .venv, and not the inside
 * of a skill folder; a bound that cuts the search is reported (warning).
 * A root that does not exist is reported (warning) and skipped. The new
 * registry is built next to the old one; when the two do not fit together
 * the old one is dropped first. Returns 0, -E_NOMEM (the registry is then
 * empty, or the old one when it could be kept) or -E_LIMIT. */
int	skill_reg_scan(struct skill_reg *r);

/* The fingerprint of what a scan would find now, without parsing: the
 * roots, and each skill file's path, mtime, size and inode (a stat
 * each). Returns 0 or -E_NOMEM. */
int	skill_reg_stamp(const struct skill_reg *r, uint64_t *stamp);

/* Rescan when anything on disk changed since the last scan: a skill folder
 * added or removed, a skill file edited (mtime, size or inode). Sets
 * *changed. Returns as skill_reg_scan. */
int	skill_reg_refresh(struct skill_reg *r, int *changed);

/* Release the registry's memory (its arenas and its index). */
void	skill_reg_free(struct skill_reg *r);

/* Walk r's roots as skill_reg_scan does, but keep nothing: call fn for
 * each skill that loads, as it is found. Order: the roots as given, and
 * inside a root depth-first in directory order (as readdir returns it);
 * duplicate names are not looked for (in the registry a later root wins).
 * The skill lives only until fn returns. fn returns 0 to go on, or a
 * negative -E_* that stops the walk. Memory use does not grow with the
 * number of skills. Returns 0, -E_NOMEM or fn's error. */
typedef int (*skill_each_fn)(void *ctx, const struct skill *sk);
int	skill_reg_each(const struct skill_reg *r, skill_each_fn fn, void *ctx);

/* The skill named `name`, or NULL. In an index the skill is read from its
 * file the first time (NULL too when it no longer reads as that skill, or
 * memory ran out); it lives until the next scan, as the others do. */
struct skill *skill_find(const struct skill_reg *r, const char *name);

/* The name and the flags of the i-th skill (i < r->n), in name order,
 * whatever the registry keeps. */
const char *skill_reg_name(const struct skill_reg *r, unsigned i);
unsigned skill_reg_flags(const struct skill_reg *r, unsigned i);

/* The i-th skill whole: r->v[i], or from an index read again into `a`
 * (lives as `a` does). NULL as skill_find. */
const struct skill *skill_reg_get(const struct skill_reg *r, unsigned i,
	    struct arena *a);

/* Keep only the skills for which want(ctx, name) is true, in order. */
void	skill_reg_filter(struct skill_reg *r, int (*want)(void *ctx,
	    const char *name), void *ctx);

/* Check one skill folder, or every skill folder below it, strictly, as
 * `skills validate` does: every finding goes to diag. A path to a SKILL.md
 * (skill.md, oskill.md) checks the folder that holds it. *nskills (may be
 * NULL) is set to the number of skill folders checked. Returns the number
 * of errors, or a negative -E_*. */
int	skill_validate(struct arena *a, const char *path, skill_diag_fn diag,
	    void *ctx, unsigned *nskills);

/* The same without the count. */
int	skill_validate_dir(struct arena *a, const char *dir, skill_diag_fn diag,
	    void *ctx);

/* Parse a skill's file again, fully. *fm is the front-matter text (NULL for
 * oskill.md), *body the instructions; both NUL-terminated in `a`. */
int	skill_load(const struct skill *sk, struct arena *a, char **fm,
	    char **body, unsigned *body_line);

/* The path of the skill's definition file (SKILL.md, skill.md, oskill.md). */
const char *skill_file(const struct skill *sk, struct arena *a);

/* Resolve `rel` inside the skill folder: a relative path whose real
 * location, symlinks followed, stays inside the folder. With must_exist == 0
 * the last component may be missing (its parent is checked). *out is in `a`.
 * Returns 0, -E_DENIED (escapes, or absolute), -E_NOENT, or -E_NOMEM. */
int	skill_path(const struct skill *sk, struct arena *a, const char *rel,
	    int must_exist, char **out);

/* The same for any folder `dir` (a workspace). */
int	skill_confine(struct arena *a, const char *dir, const char *rel,
	    int must_exist, char **out);

struct skill_res {
	const char	*path;		/* relative to the skill folder */
	off_t		 size;
	unsigned	 dir : 1;
	unsigned	 outside : 1;	/* a symlink leading out: not usable */
};

/* List the files in the skill folder (not the definition file, no dot
 * files), bounded by SKILL_RES_MAX and SKILL_RES_DEPTH; *more is set when
 * a bound left something out. Returns 0, -E_IO or -E_NOMEM. */
int	skill_resources(const struct skill *sk, struct arena *a,
	    struct skill_res **out, unsigned *n, int *more);

/* Name rules of the Agent Skills format, read as its reference validator
 * does: 1-64 characters, each a lowercase letter or digit of any script or
 * '-', no '-' at either end or doubled. Without Unicode tables "letter" is
 * approximated: ASCII upper case and the punctuation, symbol, space and
 * private-use blocks are refused; no NFKC normalisation. Returns NULL when
 * valid, else the rule id that fails ("name-length", "name-chars",
 * "name-hyphen"). */
const char *skill_name_rule(const char *name, size_t n);

/* True when the name is plain ASCII (a-z, 0-9, '-'): the only names some
 * clients and model APIs (tool names) accept. */
int	skill_name_is_ascii(const char *name);

#endif
