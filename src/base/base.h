/* base.h - types and helpers every module uses. */
#ifndef BASE_H
#define BASE_H

#include <stddef.h>
#include <stdint.h>

/* Error codes. Fallible functions return 0 or the negated code. */
enum err {
	E_OK = 0,
	E_NOMEM,	/* memory budget or a fixed capacity exhausted */
	E_IO,		/* read, write, open, stat failed (errno kept by caller) */
	E_TLS,
	E_PROTO,	/* peer broke the protocol */
	E_PARSE,	/* malformed input: JSON, YAML, front-matter */
	E_LIMIT,	/* a cap was hit: size, count, depth */
	E_TIMEOUT,
	E_DENIED,	/* policy or path confinement refused it */
	E_PART,		/* need more input */
	E_NOENT,	/* no such thing */
	E_INVAL,	/* bad argument or value */
	E_BUSY,		/* in use by another process */
	E__COUNT
};

/* A byte slice: not NUL-terminated unless said so. */
struct str {
	const char	*p;
	size_t		 n;
};

#define STR(lit)	((struct str){ (lit), sizeof(lit) - 1 })
#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))
#define MIN(a, b)	((a) < (b) ? (a) : (b))
#define MAX(a, b)	((a) > (b) ? (a) : (b))

#define ATTR_PRINTF(f, a)	__attribute__((format(printf, f, a)))
#define ATTR_NORETURN		__attribute__((noreturn))
#define ATTR_UNUSED		__attribute__((unused))

/* Short English name of an error code ("out of memory", "parse error"). */
const char	*err_str(int e);

#endif
