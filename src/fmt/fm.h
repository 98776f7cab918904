/* fm.h - YAML documents (front-matter, config) as a small tree.
 *
 * The only includer of libfyaml. A document parses into fm_node trees in
 * the caller's arena, with the source line of every node, so every later
 * error can say file:line. Anchors and aliases are refused (no expansion
 * bombs); keys must be scalars and unique; depth and node count are capped.
 */
#ifndef FM_H
#define FM_H

#include "base/arena.h"
#include "base/base.h"

#define FM_MAX_DEPTH	16
#define FM_MAX_NODES	4096

enum fm_kind { FM_NULL, FM_SCALAR, FM_SEQ, FM_MAP };

struct fm_node {
	enum fm_kind	 kind;
	unsigned	 line;		/* 1-based, in the whole file */
	unsigned	 plain : 1;	/* scalar written without quotes */
	const char	*key;		/* set when the node is a map value */
	const char	*s;		/* scalar text, NUL-terminated */
	size_t		 n;		/* its length */
	struct fm_node	*kids;		/* seq items or map values, in order */
	struct fm_node	*next;
	unsigned	 nkids;
};

struct fm_error {
	unsigned	line, col;	/* 1-based; 0 when unknown */
	char		msg[160];
};

/* Parse one YAML document. Line numbers are offset so that the text's
 * first line is `first_line`. An empty document gives an FM_NULL root.
 * Returns 0, -E_PARSE (with *err filled), -E_LIMIT (also in *err) or
 * -E_NOMEM. The tree lives in `a`. */
int	fm_parse(struct arena *a, const char *text, size_t n,
	    unsigned first_line, struct fm_node **root, struct fm_error *err);

/* fm_parse, then for a document it refuses, once more with the lines of
 * an unclosed top-level quoted value ('key: "text...') that go on at
 * column 0 indented, as js-yaml reads them (skilled_crew's AGENTS.md).
 * *fixed: the first line so read, 0 when the document was valid YAML.
 * On failure the first parse's error is in *err. */
int	fm_parse_lax(struct arena *a, const char *text, size_t n,
	    unsigned first_line, struct fm_node **root, struct fm_error *err,
	    unsigned *fixed);

/* Split a Markdown file that opens with a "---" line into its front-matter
 * and body. *yaml_line is the file line where the YAML starts, *body_line
 * where the body starts. Returns 0, or -E_NOENT when the file has no
 * front-matter, -E_PARSE when the closing "---" is missing (*yaml_line
 * then says where it opened). */
int	fm_split(const char *text, size_t n, struct str *yaml,
	    unsigned *yaml_line, struct str *body, unsigned *body_line);

/* The value of `key` in a map node, or NULL. */
struct fm_node *fm_get(const struct fm_node *map, const char *key);

/* True for a scalar that is YAML's null written plainly: "", "~", "null". */
int	fm_is_null(const struct fm_node *nd);

const char *fm_version(void);

#endif
