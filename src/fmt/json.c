/* json.c - JSON reader and writer (RFC 8259).
 *
 * jsmn (strict mode) splits the input into tokens and resumes where it
 * stopped. It does not check the grammar between tokens ("[1,]", "[1 2]",
 * "{\"a\" \"b\"}" all pass), nor primitives, nor raw control characters in
 * strings, and it stops at a NUL byte. So a second pass, a pushdown
 * automaton with the container stack in a bitmask, walks the text jsmn has
 * consumed, checks every byte between tokens, every primitive against the
 * RFC 8259 grammar and the nesting depth. It also runs incrementally.
 */
#include "fmt/json.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define JSMN_STRICT
#include "jsmn.h"

#define POOL_START	32
#define POOL_MAX	(1u << 26)

/* What the checker expects next. */
enum {
	X_VAL,		/* a value */
	X_VAL_END,	/* a value or "]" (an array just opened) */
	X_KEY,		/* a key */
	X_KEY_END,	/* a key or "}" (an object just opened) */
	X_COLON,
	X_NEXT,		/* "," or the end of the container */
	X_DONE		/* only whitespace */
};

static const char *
digits(const char *s, const char *e)
{
	while (s < e && *s >= '0' && *s <= '9')
		s++;
	return s;
}

/* RFC 8259 section 3 literals and section 6 numbers. */
static int
prim_ok(const char *s, size_t n)
{
	const char *e = s + n, *q;

	if ((n == 4 && (memcmp(s, "true", 4) == 0 ||
	    memcmp(s, "null", 4) == 0)) ||
	    (n == 5 && memcmp(s, "false", 5) == 0))
		return 1;
	if (s < e && *s == '-')
		s++;
	if (s < e && *s == '0')
		s++;
	else if ((q = digits(s, e)) != s)
		s = q;
	else
		return 0;
	if (s < e && *s == '.') {
		if ((q = digits(s + 1, e)) == s + 1)
			return 0;
		s = q;
	}
	if (s < e && (*s == 'e' || *s == 'E')) {
		if (++s < e && (*s == '+' || *s == '-'))
			s++;
		if ((q = digits(s, e)) == s)
			return 0;
		s = q;
	}
	return s == e;
}

/* Take the next token if it is the one the checker found at `start`. */
static const jsmntok_t *
take(struct json_parser *p, jsmntype_t type, unsigned start)
{
	const jsmntok_t *t;

	if (p->vtok >= p->next)
		return NULL;
	t = (const jsmntok_t *)p->pool + p->vtok;
	if (t->type != type || t->start != (int)start)
		return NULL;
	p->vtok++;
	return t;
}

/* Check js[p->vpos..stop), text jsmn has consumed. */
static int
check(struct json_parser *p, const char *js, unsigned stop)
{
	const jsmntok_t *t;
	unsigned i, k;
	uint64_t bit;
	int s = p->state, obj, key;
	char c;

	for (i = p->vpos; i < stop; i++) {
		c = js[i];
		obj = p->depth > 0 && (p->objs >> (p->depth - 1) & 1);
		switch (c) {
		case ' ':
		case '\t':
		case '\n':
		case '\r':
			continue;
		case '{':
		case '[':
			if (s != X_VAL && s != X_VAL_END)
				return -E_PARSE;
			if (p->depth >= JSON_MAX_DEPTH)
				return -E_LIMIT;
			t = take(p, c == '{' ? JSMN_OBJECT : JSMN_ARRAY, i);
			if (t == NULL)
				return -E_PARSE;
			bit = (uint64_t)1 << p->depth++;
			if (c == '{')
				p->objs |= bit;
			else
				p->objs &= ~bit;
			s = c == '{' ? X_KEY_END : X_VAL_END;
			continue;
		case '}':
		case ']':
			if (p->depth == 0 || obj != (c == '}') ||
			    (s != X_NEXT && s != (obj ? X_KEY_END : X_VAL_END)))
				return -E_PARSE;
			p->depth--;
			break;
		case ':':
			if (s != X_COLON)
				return -E_PARSE;
			s = X_VAL;
			continue;
		case ',':
			if (s != X_NEXT)
				return -E_PARSE;
			s = obj ? X_KEY : X_VAL;
			continue;
		case '"':
			key = s == X_KEY || s == X_KEY_END;
			if ((!key && s != X_VAL && s != X_VAL_END) ||
			    (t = take(p, JSMN_STRING, i + 1)) == NULL)
				return -E_PARSE;
			for (k = i + 1; k < (unsigned)t->end; k++)
				if ((unsigned char)js[k] < 0x20)
					return -E_PARSE;
			i = t->end;
			if (key) {
				s = X_COLON;
				continue;
			}
			break;
		default:
			if ((s != X_VAL && s != X_VAL_END) ||
			    (t = take(p, JSMN_PRIMITIVE, i)) == NULL ||
			    !prim_ok(js + i, t->end - t->start))
				return -E_PARSE;
			i = t->end - 1;
			break;
		}
		/* A value ended. */
		s = p->depth > 0 ? X_NEXT : X_DONE;
	}
	p->vpos = i;
	p->state = s;
	return 0;
}

static int
grow(struct json_parser *p)
{
	unsigned n = p->cap == 0 ? POOL_START : p->cap * 2;
	void *np;

	if (n > p->max)
		n = p->max;
	if (n <= p->cap)
		return -E_LIMIT;
	if ((np = arena_alloc(p->a, n * sizeof(jsmntok_t))) == NULL)
		return -E_NOMEM;
	if (p->next > 0)
		memcpy(np, p->pool, p->next * sizeof(jsmntok_t));
	p->pool = np;
	p->cap = n;
	return 0;
}

/* Copy jsmn's tokens into ours. */
static int
finish(struct json_parser *p, const char *js, size_t len)
{
	const jsmntok_t *jt = p->pool;
	struct json_tok *t;
	unsigned i;

	if (p->vtok != p->next)
		return -E_PARSE;
	if ((t = arena_alloc(p->a, p->next * sizeof(*t))) == NULL)
		return -E_NOMEM;
	for (i = 0; i < p->next; i++) {
		t[i].type = jt[i].type == JSMN_OBJECT ? JSON_OBJ :
		    jt[i].type == JSMN_ARRAY ? JSON_ARR :
		    jt[i].type == JSMN_STRING ? JSON_STR : JSON_PRIM;
		t[i].start = jt[i].start;
		t[i].end = jt[i].end;
		t[i].size = jt[i].size;
	}
	p->doc.js = js;
	p->doc.len = len;
	p->doc.t = t;
	p->doc.n = p->next;
	return 0;
}

/* see json.h */
void
json_parser_init(struct json_parser *p, struct arena *a, unsigned max_tokens)
{
	jsmn_parser jp;

	memset(p, 0, sizeof(*p));
	p->a = a;
	p->max = MIN(max_tokens, POOL_MAX);
	jsmn_init(&jp);
	p->pos = jp.pos;
	p->next = jp.toknext;
	p->super = jp.toksuper;
	p->state = X_VAL;
}

static int
feed(struct json_parser *p, const char *js, size_t len)
{
	jsmn_parser jp;
	int r;

	if (len > INT_MAX)
		return -E_LIMIT;
	if (len < p->seen)
		return -E_INVAL;
	if (memchr(js + p->seen, '\0', len - p->seen) != NULL)
		return -E_PARSE;
	p->seen = len;
	if (p->doc.t != NULL) {
		/* Complete already: the rest may only be whitespace. */
		if ((r = check(p, js, (unsigned)len)) != 0)
			return r;
		p->doc.js = js;
		p->doc.len = len;
		return 0;
	}
	if (p->pool == NULL && (r = grow(p)) != 0)
		return r;
	for (;;) {
		jp.pos = p->pos;
		jp.toknext = p->next;
		jp.toksuper = p->super;
		r = jsmn_parse(&jp, js, len, p->pool, p->cap);
		p->pos = jp.pos;
		p->next = jp.toknext;
		p->super = jp.toksuper;
		if (r != JSMN_ERROR_NOMEM)
			break;
		/* Check what jsmn has so far, so that a document too deep
		 * fails before its tokens use up the arena. */
		if ((r = check(p, js, p->pos)) != 0 || (r = grow(p)) != 0)
			return r;
	}
	if (r == JSMN_ERROR_INVAL)
		return -E_PARSE;
	if ((r = check(p, js, p->pos)) != 0)
		return r;
	if (p->pos < len)	/* stopped before a token not yet complete */
		return p->state == X_DONE ? -E_PARSE : -E_PART;
	if (p->state != X_DONE)
		return -E_PART;
	return finish(p, js, len);
}

/* see json.h */
int
json_parser_feed(struct json_parser *p, const char *js, size_t len)
{
	int r;

	if (p->err != 0)
		return p->err;
	r = feed(p, js, len);
	if (r != 0 && r != -E_PART && r != -E_INVAL)
		p->err = r;
	return r;
}

/* see json.h */
int
json_parse(struct arena *a, const char *js, size_t len, unsigned max_tokens,
    struct json_doc *out)
{
	struct json_parser p;
	struct json_tok *t;
	int r;

	json_parser_init(&p, a, max_tokens);
	r = json_parser_feed(&p, js, len);
	if (r == -E_PART && p.depth == 0 && p.state == X_VAL && p.pos < len &&
	    js[p.pos] != '"') {
		/* jsmn wants a delimiter after a primitive, but the end of
		 * the input is one: the rest is a lone top-level primitive. */
		if (!prim_ok(js + p.pos, len - p.pos))
			return -E_PARSE;
		if (p.max == 0)
			return -E_LIMIT;
		if ((t = arena_alloc(a, sizeof(*t))) == NULL)
			return -E_NOMEM;
		t->type = JSON_PRIM;
		t->start = (int)p.pos;
		t->end = (int)len;
		t->size = 0;
		p.doc.js = js;
		p.doc.len = len;
		p.doc.t = t;
		p.doc.n = 1;
		r = 0;
	}
	if (r == 0)
		*out = p.doc;
	return r == -E_PART ? -E_PARSE : r;
}

/* see json.h */
int
json_skip(const struct json_doc *d, int i)
{
	long need = 1;

	if (i < 0 || (unsigned)i >= d->n)
		return (int)d->n;
	for (; need > 0 && (unsigned)i < d->n; i++)
		need += d->t[i].size - 1;
	return i;
}

/* The token if i names one of this type. */
static const struct json_tok *
tok(const struct json_doc *d, int i, enum json_type type)
{
	if (i < 0 || (unsigned)i >= d->n || d->t[i].type != type)
		return NULL;
	return &d->t[i];
}

static int
hex4(const char *s)
{
	int i, v = 0, c;

	for (i = 0; i < 4; i++) {
		if ((c = str_hex_val((unsigned char)s[i])) < 0)
			return -1;
		v = v << 4 | c;
	}
	return v;
}

/* Decode one character of an escaped string body at *sp (before e) into
 * b as UTF-8. Returns its length (1 to 4) or -E_PARSE. */
static int
unesc(const char **sp, const char *e, unsigned char *b)
{
	static const char map[] = "\"\"\\\\//b\bf\fn\nr\rt\t";
	const char *s = *sp, *m;
	long cp;
	int lo;

	if (*s != '\\') {
		*b = (unsigned char)*s;
		*sp = s + 1;
		return 1;
	}
	if (e - s < 2)
		return -E_PARSE;
	if (s[1] != 'u') {
		for (m = map; *m != '\0' && *m != s[1]; m += 2)
			;
		if (*m == '\0')
			return -E_PARSE;
		*b = (unsigned char)m[1];
		*sp = s + 2;
		return 1;
	}
	if (e - s < 6 || (cp = hex4(s + 2)) < 0)
		return -E_PARSE;
	s += 6;
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return -E_PARSE;
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (e - s < 6 || s[0] != '\\' || s[1] != 'u' ||
		    (lo = hex4(s + 2)) < 0xdc00 || lo > 0xdfff)
			return -E_PARSE;
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
		s += 6;
	}
	*sp = s;
	if (cp < 0x80) {
		b[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		b[0] = (unsigned char)(0xc0 | cp >> 6);
		b[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		b[0] = (unsigned char)(0xe0 | cp >> 12);
		b[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		b[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	b[0] = (unsigned char)(0xf0 | cp >> 18);
	b[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
	b[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
	b[3] = (unsigned char)(0x80 | (cp & 0x3f));
	return 4;
}

/* see json.h */
int
json_eq(const struct json_doc *d, int i, const char *s)
{
	const struct json_tok *t = tok(d, i, JSON_STR);
	const char *p, *e;
	unsigned char b[4];
	int n, k;

	if (t == NULL)
		return 0;
	for (p = d->js + t->start, e = d->js + t->end; p < e; ) {
		if ((n = unesc(&p, e, b)) < 0)
			return 0;
		for (k = 0; k < n; k++, s++)
			if (*s == '\0' || (unsigned char)*s != b[k])
				return 0;
	}
	return *s == '\0';
}

/* see json.h */
int
json_get(const struct json_doc *d, int obj, const char *key)
{
	const struct json_tok *t = tok(d, obj, JSON_OBJ);
	int i, k;

	if (t == NULL)
		return -1;
	for (i = obj + 1, k = 0; k < t->size && (unsigned)i < d->n; k++) {
		if (json_eq(d, i, key))
			return (unsigned)i + 1 < d->n ? i + 1 : -1;
		i = json_skip(d, i);
	}
	return -1;
}

/* A key as its reader sees it: unescaped when it has escapes. */
struct key {
	const char	*p;
	size_t		 n;
};

static int
key_cmp(const void *x, const void *y)
{
	const struct key *a = x, *b = y;
	int c = memcmp(a->p, b->p, MIN(a->n, b->n));

	return c != 0 ? c : (a->n > b->n) - (a->n < b->n);
}

/* The keys of object obj sorted: 1 when two are equal. */
static int
obj_dup(const struct json_doc *d, struct arena *a, int obj)
{
	unsigned nk = (unsigned)d->t[obj].size, k;
	const struct json_tok *t;
	struct key *v;
	size_t n;
	char *s;
	int i, e;

	if ((v = arena_alloc(a, nk * sizeof(*v))) == NULL)
		return -E_NOMEM;
	for (i = obj + 1, k = 0; k < nk; k++, i = json_skip(d, i + 1)) {
		t = &d->t[i];
		v[k].p = d->js + t->start;
		v[k].n = (size_t)(t->end - t->start);
		/* A key that cannot be unescaped stays as it stands: no
		 * query matches it anyway. */
		if (memchr(v[k].p, '\\', v[k].n) == NULL ||
		    (e = json_str(d, a, i, &s, &n)) == -E_PARSE)
			continue;
		if (e != 0)
			return e;
		v[k].p = s;
		v[k].n = n;
	}
	qsort(v, nk, sizeof(*v), key_cmp);
	for (k = 1; k < nk; k++)
		if (key_cmp(&v[k - 1], &v[k]) == 0)
			return 1;
	return 0;
}

/* see json.h */
int
json_args_check(struct arena *a, const char *s, size_t n)
{
	struct arena_mark m = arena_mark(a);
	struct json_doc d;
	int r = 1;

	if (json_parse(a, s, n, 1u << 16, &d) == 0 && d.n > 0 &&
	    d.t[0].type == JSON_OBJ)
		r = json_dup_key(&d, a) != 0 ? 2 : 0;
	arena_reset_to(a, m);
	return r;
}

/* see json.h */
int
json_dup_key(const struct json_doc *d, struct arena *a)
{
	struct arena_mark m = arena_mark(a);
	unsigned i;
	int r = 0;

	for (i = 0; i < d->n && r == 0; i++)
		if (d->t[i].type == JSON_OBJ && d->t[i].size > 1) {
			r = obj_dup(d, a, (int)i);
			arena_reset_to(a, m);
		}
	return r;
}

/* see json.h */
int
json_at(const struct json_doc *d, int arr, unsigned k)
{
	const struct json_tok *t = tok(d, arr, JSON_ARR);
	int i;

	if (t == NULL || k >= (unsigned)t->size)
		return -1;
	for (i = arr + 1; k > 0 && (unsigned)i < d->n; k--)
		i = json_skip(d, i);
	return (unsigned)i < d->n ? i : -1;
}

/* see json.h */
int
json_str(const struct json_doc *d, struct arena *a, int i, char **out,
    size_t *outlen)
{
	const struct json_tok *t = tok(d, i, JSON_STR);
	const char *p, *e;
	char *buf;
	size_t len = 0;
	int n;

	if (i < 0 || (unsigned)i >= d->n)
		return -E_NOENT;
	if (t == NULL)
		return -E_PARSE;
	/* Unescaping never makes a string longer. */
	if ((buf = arena_alloc(a, (size_t)(t->end - t->start) + 1)) == NULL)
		return -E_NOMEM;
	for (p = d->js + t->start, e = d->js + t->end; p < e; len += n)
		if ((n = unesc(&p, e, (unsigned char *)buf + len)) < 0)
			return n;
	buf[len] = '\0';
	*out = buf;
	if (outlen != NULL)
		*outlen = len;
	return 0;
}

/* The primitive token i, or NULL with the reason in *err. */
static const struct json_tok *
prim(const struct json_doc *d, int i, int *err)
{
	const struct json_tok *t = tok(d, i, JSON_PRIM);

	*err = i < 0 || (unsigned)i >= d->n ? -E_NOENT : -E_PARSE;
	return t;
}

/* see json.h */
int
json_int(const struct json_doc *d, int i, long long *out)
{
	const struct json_tok *t;
	const char *s, *e;
	unsigned long long v = 0, lim = LLONG_MAX;
	int err, neg;

	if ((t = prim(d, i, &err)) == NULL)
		return err;
	s = d->js + t->start;
	e = d->js + t->end;
	if ((neg = (s < e && *s == '-')))
		s++, lim++;
	if (s == e || digits(s, e) != e)
		return -E_PARSE;
	for (; s < e; s++) {
		if (v > (lim - (unsigned)(*s - '0')) / 10)
			return -E_PARSE;
		v = v * 10 + (unsigned)(*s - '0');
	}
	*out = neg ? (long long)(0 - v) : (long long)v;
	return 0;
}

static int
prim_is(const struct json_doc *d, const struct json_tok *t, const char *lit)
{
	size_t n = strlen(lit);

	return (size_t)(t->end - t->start) == n &&
	    memcmp(d->js + t->start, lit, n) == 0;
}

/* see json.h */
int
json_bool(const struct json_doc *d, int i, int *out)
{
	const struct json_tok *t;
	int err;

	if ((t = prim(d, i, &err)) == NULL)
		return err;
	if (prim_is(d, t, "true"))
		*out = 1;
	else if (prim_is(d, t, "false"))
		*out = 0;
	else
		return -E_PARSE;
	return 0;
}

/* see json.h */
int
json_is_null(const struct json_doc *d, int i)
{
	const struct json_tok *t = tok(d, i, JSON_PRIM);

	return t != NULL && prim_is(d, t, "null");
}

/* see json.h */
const char *
json_raw(const struct json_doc *d, int i, size_t *n)
{
	int q;

	if (i < 0 || (unsigned)i >= d->n)
		return NULL;
	q = d->t[i].type == JSON_STR;	/* its quotes are outside it */
	*n = (size_t)(d->t[i].end - d->t[i].start) + 2 * (size_t)q;
	return d->js + d->t[i].start - q;
}

/* Writer. */

static void
fail(struct json_writer *w, int err)
{
	if (w->sb->err == 0)
		w->sb->err = err;
}

/* Before a value: the comma, or -1 when no value may go here. */
static int
pre(struct json_writer *w)
{
	uint64_t bit;

	if (w->sb->err != 0)
		return -1;
	if (w->depth == 0) {
		if (w->done)
			goto bad;
		w->done = 1;
		return 0;
	}
	bit = (uint64_t)1 << (w->depth - 1);
	if (w->objs & bit) {
		if (!w->key)
			goto bad;
		w->key = 0;
		return 0;
	}
	if (w->more & bit)
		sbuf_addc(w->sb, ',');
	w->more |= bit;
	return 0;
bad:
	fail(w, -E_INVAL);
	return -1;
}

/* The length of the well-formed UTF-8 sequence at s, or 0. */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
	size_t k = *s >= 0xc2 && *s <= 0xdf ? 2 : *s >= 0xe0 && *s <= 0xef ?
	    3 : *s >= 0xf0 && *s <= 0xf4 ? 4 : 0;

	return k != 0 && k <= n && str_is_utf8((const char *)s, k) ? k : 0;
}

/* Bytes that go into a JSON string as they are: printable ASCII but the
 * quote and the backslash (one bit each; rows of 32). */
static const uint32_t plain_bits[4] = {
	0, 0xfffffffbu, 0xefffffffu, 0x7fffffffu
};
#define PLAIN(c)	((c) < 0x80 && (plain_bits[(c) >> 5] >> ((c) & 31) & 1))

/* A string's body escaped: the quote, the backslash and controls. */
static void
esc_body(struct sbuf *sb, const char *str, size_t n)
{
	static const char map[] = "\"\"\\\\\bb\ff\nn\rr\tt";
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str, *e = s + n, *run;
	const char *m;
	char u[6] = { '\\', 'u', '0', '0' };
	size_t k;

	for (run = s; s < e; ) {
		if (PLAIN(*s)) {
			s++;
			continue;
		}
		if (*s >= 0x80 && (k = utf8_len(s, (size_t)(e - s))) != 0) {
			s += k;
			continue;
		}
		sbuf_add(sb, (const char *)run, (size_t)(s - run));
		for (m = map; *m != '\0' && (unsigned char)*m != *s; m += 2)
			;
		if (*s >= 0x80)
			sbuf_add(sb, "\xef\xbf\xbd", 3);
		else if (*m != '\0') {
			u[1] = m[1];
			sbuf_add(sb, u, 2);
			u[1] = 'u';
		} else {
			u[4] = hex[*s >> 4];
			u[5] = hex[*s & 15];
			sbuf_add(sb, u, 6);
		}
		run = ++s;
	}
	sbuf_add(sb, (const char *)run, (size_t)(s - run));
}

static void
put_esc(struct sbuf *sb, const char *s, size_t n)
{
	sbuf_addc(sb, '"');
	esc_body(sb, s, n);
	sbuf_addc(sb, '"');
}

/* The escaped body js[s..e) of a string token unescaped and escaped
 * again. Returns 0 or -E_PARSE (a lone surrogate). */
static int
put_unesc(struct sbuf *sb, const char *s, const char *e)
{
	unsigned char b[4];
	const char *q;
	int n;

	sbuf_addc(sb, '"');
	while (s < e) {
		if ((q = memchr(s, '\\', (size_t)(e - s))) == NULL)
			q = e;
		esc_body(sb, s, (size_t)(q - s));
		if ((s = q) < e) {
			if ((n = unesc(&s, e, b)) < 0)
				return n;
			esc_body(sb, (const char *)b, (size_t)n);
		}
	}
	sbuf_addc(sb, '"');
	return 0;
}

static void
begin(struct json_writer *w, int obj)
{
	uint64_t bit;

	if (pre(w) != 0)
		return;
	if (w->depth >= JSON_MAX_DEPTH) {
		fail(w, -E_LIMIT);
		return;
	}
	bit = (uint64_t)1 << w->depth++;
	w->objs = obj ? w->objs | bit : w->objs & ~bit;
	w->more &= ~bit;
	sbuf_addc(w->sb, obj ? '{' : '[');
}

static void
end(struct json_writer *w, int obj)
{
	if (w->sb->err != 0)
		return;
	if (w->depth == 0 || w->key ||
	    (int)(w->objs >> (w->depth - 1) & 1) != obj) {
		fail(w, -E_INVAL);
		return;
	}
	w->depth--;
	sbuf_addc(w->sb, obj ? '}' : ']');
}

/* see json.h */
void
json_writer_init(struct json_writer *w, struct sbuf *sb)
{
	memset(w, 0, sizeof(*w));
	w->sb = sb;
}

void json_begin_obj(struct json_writer *w) { begin(w, 1); }
void json_end_obj(struct json_writer *w) { end(w, 1); }
void json_begin_arr(struct json_writer *w) { begin(w, 0); }
void json_end_arr(struct json_writer *w) { end(w, 0); }

/* Before a key: the comma, or -1 when no key may go here. */
static int
pre_key(struct json_writer *w)
{
	uint64_t bit;

	if (w->sb->err != 0)
		return -1;
	bit = w->depth > 0 ? (uint64_t)1 << (w->depth - 1) : 0;
	if (!(w->objs & bit) || w->key) {
		fail(w, -E_INVAL);
		return -1;
	}
	if (w->more & bit)
		sbuf_addc(w->sb, ',');
	w->more |= bit;
	w->key = 1;
	return 0;
}

/* see json.h */
void
json_key(struct json_writer *w, const char *k)
{
	if (pre_key(w) != 0)
		return;
	put_esc(w->sb, k, strlen(k));
	sbuf_addc(w->sb, ':');
}

/* see json.h */
void
json_put_strn(struct json_writer *w, const char *s, size_t n)
{
	if (pre(w) == 0)
		put_esc(w->sb, s, n);
}

/* see json.h */
void
json_put_str(struct json_writer *w, const char *s)
{
	json_put_strn(w, s, strlen(s));
}

/* see json.h */
void
json_kstr(struct json_writer *w, const char *k, const char *s)
{
	json_key(w, k);
	json_put_str(w, s);
}

/* see json.h */
void
json_put_raw(struct json_writer *w, const char *s, size_t n)
{
	if (pre(w) == 0)
		sbuf_add(w->sb, s, n);
}

/* 1 when the writer is in an object and wants a key. */
static int
wants_key(const struct json_writer *w)
{
	return w->depth > 0 && (w->objs >> (w->depth - 1) & 1) && !w->key;
}

/* One token of json_put_tok (a container only opens). */
static void
put_one(struct json_writer *w, const struct json_doc *d,
    const struct json_tok *t, int key)
{
	const char *s = d->js + t->start, *e = d->js + t->end;
	int r;

	if (t->type == JSON_OBJ || t->type == JSON_ARR)
		begin(w, t->type == JSON_OBJ);
	else if (t->type == JSON_PRIM)
		json_put_raw(w, s, (size_t)(e - s));
	else if ((key ? pre_key(w) : pre(w)) == 0) {
		if ((r = put_unesc(w->sb, s, e)) != 0)
			fail(w, r);
		if (key)
			sbuf_addc(w->sb, ':');
	}
}

/* see json.h */
void
json_put_tok(struct json_writer *w, const struct json_doc *d, int i)
{
	/* Items (keys and values) still to come at each open level. */
	unsigned left[JSON_MAX_DEPTH + 1], top = 0, stop;
	const struct json_tok *t;
	int key;

	if (i < 0 || (unsigned)i >= d->n) {
		fail(w, -E_INVAL);
		return;
	}
	left[0] = 1;
	for (stop = (unsigned)json_skip(d, i); (unsigned)i < stop &&
	    w->sb->err == 0; i++) {
		t = &d->t[i];
		key = top > 0 && wants_key(w);
		left[top]--;
		put_one(w, d, t, key);
		if ((t->type == JSON_OBJ || t->type == JSON_ARR) &&
		    w->sb->err == 0)
			left[++top] = (unsigned)t->size *
			    (t->type == JSON_OBJ ? 2 : 1);
		while (top > 0 && left[top] == 0 && w->sb->err == 0) {
			end(w, (int)(w->objs >> (w->depth - 1) & 1));
			top--;
		}
	}
}

/* see json.h */
char *
json_canon(struct arena *a, const char *js, size_t n, size_t *outlen)
{
	struct json_writer w;
	struct json_doc d;
	struct sbuf sb;

	/* As many tokens as a call's arguments may have (llm.c). */
	if (json_parse(a, js, n, 1u << 16, &d) != 0)
		return NULL;
	sbuf_init(&sb, a, 0);
	json_writer_init(&w, &sb);
	json_put_tok(&w, &d, 0);
	if (json_writer_err(&w) != 0)
		return NULL;
	sbuf_addc(&sb, '\0');
	if (sb.err != 0)
		return NULL;
	*outlen = sb.len - 1;
	return sb.p;
}

static void
put_num(struct json_writer *w, int neg, unsigned long long v)
{
	char buf[24], *p = buf + sizeof(buf);

	do
		*--p = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	if (neg)
		*--p = '-';
	json_put_raw(w, p, (size_t)(buf + sizeof(buf) - p));
}

/* see json.h */
void
json_put_int(struct json_writer *w, long long v)
{
	put_num(w, v < 0, v < 0 ? 0 - (unsigned long long)v :
	    (unsigned long long)v);
}

/* see json.h */
void
json_put_uint(struct json_writer *w, unsigned long long v)
{
	put_num(w, 0, v);
}

/* see json.h */
void
json_put_bool(struct json_writer *w, int v)
{
	json_put_raw(w, v ? "true" : "false", v ? 4 : 5);
}

void json_put_null(struct json_writer *w) { json_put_raw(w, "null", 4); }

/* see json.h */
int
json_writer_err(const struct json_writer *w)
{
	if (w->sb->err != 0)
		return w->sb->err;
	return w->depth != 0 || w->key || !w->done ? -E_INVAL : 0;
}
