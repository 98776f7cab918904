/* json.h - JSON reader (a push parser over jsmn) and writer (RFC 8259).
 *
 * The reader turns a document into a flat array of tokens in text order;
 * a container is followed by its children. Strings stay escaped in the
 * input until json_str() or json_eq() looks at them. The writer appends
 * to a struct sbuf and inserts the commas itself.
 */
#ifndef JSON_H
#define JSON_H

#include "base/arena.h"
#include "base/base.h"
#include "base/str.h"

#define JSON_MAX_DEPTH	64	/* nesting of objects and arrays, both ways */

enum json_type {
	JSON_OBJ = 1,
	JSON_ARR,
	JSON_STR,
	JSON_PRIM	/* number, true, false or null */
};

/* start and end are byte offsets into the input: a string's exclude the
 * quotes, a container's include its brackets. size counts children: the
 * keys of an object, the elements of an array, 1 for a key (its value),
 * otherwise 0. */
struct json_tok {
	enum json_type	type;
	int		start, end, size;
};

/* A parsed document. js is the caller's input: the tokens point into it,
 * so it must outlive the document; t lives in the parser's arena. */
struct json_doc {
	const char		*js;
	size_t			 len;
	const struct json_tok	*t;
	unsigned		 n;
};

/* Push parser state. Caller-owned; the fields are private to json.c. */
struct json_parser {
	struct arena	*a;
	void		*pool;		/* tokens in jsmn's layout */
	unsigned	 cap, max;	/* pool size, token limit */
	unsigned	 pos, next;	/* where jsmn resumes */
	int		 super;
	unsigned	 vpos, vtok;	/* checked up to this byte and token */
	unsigned	 depth;
	uint64_t	 objs;		/* bit d: level d + 1 is an object */
	int		 state;
	int		 err;		/* sticky */
	size_t		 seen;		/* bytes scanned for NUL */
	struct json_doc	 doc;		/* valid once feed returned 0 */
};

/* Start a parse whose token pool grows in `a` (from 32, doubling) up to
 * max_tokens tokens. */
void	json_parser_init(struct json_parser *p, struct arena *a,
	    unsigned max_tokens);

/* Parse js[0..len), the whole input received so far: each call passes
 * the previous bytes unchanged plus any new ones (the buffer may move).
 * Returns 0 once one complete value followed only by whitespace has been
 * read (then p->doc is valid, its tokens in the arena), -E_PART when more
 * input is needed, -E_PARSE on malformed JSON, -E_LIMIT for more than
 * max_tokens tokens or nesting deeper than JSON_MAX_DEPTH, -E_NOMEM when
 * the arena is exhausted. Errors are sticky. A top-level number or literal
 * ends only at whitespace here; json_parse() accepts it at the end. */
int	json_parser_feed(struct json_parser *p, const char *js, size_t len);

/* Parse complete input: as json_parser_feed(), but input that ends too
 * early is -E_PARSE. On success *out is set. */
int	json_parse(struct arena *a, const char *js, size_t len,
	    unsigned max_tokens, struct json_doc *out);

/* Queries. Token indexes are ints, and -1 stands for "none": every query
 * accepts it (and any index out of range) and fails softly. None of them
 * recurses. */

/* The index just past the subtree rooted at i (d->n if there is no i). */
int	json_skip(const struct json_doc *d, int i);
/* The value of `key` in object obj, or -1. */
int	json_get(const struct json_doc *d, int obj, const char *key);
/* Element k of array arr, or -1. */
int	json_at(const struct json_doc *d, int arr, unsigned k);
/* 1 when token i is a string whose unescaped value equals s, else 0. */
int	json_eq(const struct json_doc *d, int i, const char *s);

/* Unescape string token i into `a` as UTF-8 with a NUL after it; the
 * length (which counts embedded NULs from \u0000) goes to *outlen unless
 * outlen is NULL. Returns 0, -E_NOENT (no token i), -E_PARSE (not a
 * string, or a lone surrogate) or -E_NOMEM. */
int	json_str(const struct json_doc *d, struct arena *a, int i, char **out,
	    size_t *outlen);
/* An integer without fraction or exponent that fits a long long. Returns
 * 0, -E_NOENT or -E_PARSE. */
int	json_int(const struct json_doc *d, int i, long long *out);
/* true or false, as 1 or 0. Returns 0, -E_NOENT or -E_PARSE. */
int	json_bool(const struct json_doc *d, int i, int *out);
/* Token i's text as it stands in the input (a string with its quotes,
 * still escaped), its length in *n; NULL when there is no token i. */
const char *json_raw(const struct json_doc *d, int i, size_t *n);

/* 1 when token i is null, else 0. */
int	json_is_null(const struct json_doc *d, int i);

/* 1 when an object in d has a key twice, compared unescaped ("a" and
 * "\u0061" are one key); 0 when none; -E_NOMEM. Readers disagree on which
 * of two keys counts (json_get takes the first), so a document that has
 * them means different things to different readers. Scratch in `a`. */
int	json_dup_key(const struct json_doc *d, struct arena *a);

/* A tool call's arguments s[0..n): 0 when they are one JSON object with
 * no key twice, 1 when they are not a JSON object, 2 when a key comes
 * twice (json_dup_key). The model's calls (llm.c) and MCP clients'
 * (agent_tool) are held to the same rule. Scratch in `a`, given back. */
int	json_args_check(struct arena *a, const char *s, size_t n);

/* Writer. Errors are sticky in sb->err: -E_NOMEM or -E_LIMIT from the
 * buffer, -E_LIMIT for nesting deeper than JSON_MAX_DEPTH, -E_INVAL for a
 * call that would make invalid JSON (a value without its key in an object,
 * a key outside one, a mismatched end, a second top-level value). */
struct json_writer {
	struct sbuf	*sb;
	uint64_t	 objs;		/* bit d: level d + 1 is an object */
	uint64_t	 more;		/* bit d: level d + 1 has an item */
	unsigned	 depth;
	unsigned char	 key;		/* a key waits for its value */
	unsigned char	 done;		/* the top-level value has begun */
};

void	json_writer_init(struct json_writer *w, struct sbuf *sb);
void	json_begin_obj(struct json_writer *w);
void	json_end_obj(struct json_writer *w);
void	json_begin_arr(struct json_writer *w);
void	json_end_arr(struct json_writer *w);
void	json_key(struct json_writer *w, const char *k);
/* Strings are escaped; bytes that are not valid UTF-8 become U+FFFD. */
void	json_put_str(struct json_writer *w, const char *s);
void	json_put_strn(struct json_writer *w, const char *s, size_t n);
/* json_key(w, k), then json_put_str(w, s): the pair most writers want. */
void	json_kstr(struct json_writer *w, const char *k, const char *s);
void	json_put_int(struct json_writer *w, long long v);
void	json_put_uint(struct json_writer *w, unsigned long long v);
void	json_put_bool(struct json_writer *w, int v);
void	json_put_null(struct json_writer *w);
/* One value that is already valid JSON, copied as is. */
void	json_put_raw(struct json_writer *w, const char *s, size_t n);
/* Token i of d and what it holds, written again in one canonical form: no
 * whitespace, strings unescaped and escaped as json_put_str does (so
 * "\u0062" is "b"), numbers and literals as they stand. A string that
 * cannot be unescaped (a lone surrogate) is -E_PARSE. */
void	json_put_tok(struct json_writer *w, const struct json_doc *d, int i);
/* js[0..n) in the form json_put_tok writes, in `a` with a NUL after it
 * (its length in *outlen), or NULL when it is not JSON or `a` is full. */
char	*json_canon(struct arena *a, const char *js, size_t n,
	    size_t *outlen);
/* The sticky error, or -E_INVAL while the document is unfinished; 0 when
 * sb holds exactly one complete value. */
int	json_writer_err(const struct json_writer *w);

#endif
