/* ere.h - POSIX extended regular expressions, to ask one question: does
 * the pattern match somewhere in this text?
 *
 * The syntax is POSIX ERE over bytes, as in the C locale: literals, `.`,
 * bracket expressions with ranges and [:class:] names, `^` and `$` (at the
 * text's ends only), groups, `|`, and `* + ? {m} {m,} {m,n}` (counts up to
 * 255). Not taken, each with an error that says so: back-references
 * (not ERE), [= =] and [. .], and escapes other than a backslash before a
 * special character (no \d, \w, \s: write [0-9], [[:alnum:]_], [[:space:]]).
 *
 * The pattern compiles to a Thompson NFA that ere_match runs one byte at a
 * time, keeping every live state at once: time is the text's length times
 * the program's, whatever the pattern; there is no backtracking to blow
 * up. Everything lives in the caller's arena. */
#ifndef ERE_H
#define ERE_H

#include <stddef.h>

#include "base/arena.h"

#define ERE_MAX_OPS	2000	/* program size: a{255} of a big group fails */
#define ERE_DUP_MAX	255

struct ere_op;

struct ere {
	struct ere_op	*prog;
	unsigned	 n;		/* instructions, the last one MATCH */
	unsigned char	(*sets)[32];	/* bracket expressions, a bit a byte */
	unsigned	 nsets;
};

/* 0, or -E_PARSE with *why saying what is wrong (a static string), or
 * -E_NOMEM. */
int	ere_comp(struct ere *re, struct arena *a, const char *pat,
	    const char **why);
/* 1 when the pattern matches somewhere in s[0..n), 0 when not, -E_NOMEM
 * when a has no room for the run (about 16 bytes an instruction). */
int	ere_match(const struct ere *re, struct arena *a, const char *s,
	    size_t n);

#endif
