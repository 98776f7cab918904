/* plan.c - LightSOPLang plans: parser, checks, ready steps, canonical text.
 *
 * The language is described in plan.h. The text is checked for encoding
 * first, then read once, front to back, a statement at a time; a literal
 * is scanned twice (check and measure, then copy into the arena), so
 * nothing needs a scratch buffer. A reference to a name no
 * earlier statement defines does not stop the parse at once: the rest is
 * read to tell the model whether the name is defined later or nowhere,
 * and that error is still the one reported, being the first in the text.
 */
#include "fmt/plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct pp {
	struct arena		*a;
	const char		*t;
	size_t			 n, i;		/* text, length, position */
	plan_known_fn		 known;
	void			*ctx;
	struct plan		*p;
	unsigned		 cap;		/* of p->steps */
	int			 partial;	/* steps[p->n].var is set */
	struct plan_error	*err;
	/* Position cache: line pc_line starts at pc_bol, scanned to pc_off. */
	size_t			 pc_off, pc_bol;
	unsigned		 pc_line;
	/* The first reference to an undefined name, reported at the end. */
	int			 ref_bad;
	size_t			 ref_off;
	unsigned		 ref_step;
	char			 ref_name[PLAN_MAX_NAME + 1];
};

/* Length of the valid UTF-8 sequence at s[0..n) that starts with a byte
 * >= 0x80, or 0 (overlongs, surrogates and values past U+10FFFF too). */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0], lo = 0x80, hi = 0xbf;
	size_t k, need;

	if (c >= 0xc2 && c <= 0xdf)
		need = 1;
	else if (c >= 0xe0 && c <= 0xef)
		need = 2;
	else if (c >= 0xf0 && c <= 0xf4)
		need = 3;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (need >= n)
		return 0;
	for (k = 1; k <= need; k++, lo = 0x80, hi = 0xbf)
		if (s[k] < lo || s[k] > hi)
			return 0;
	return need + 1;
}

/* Line and column (1-based, in characters) of offset off. Errors and
 * statements come in text order, so the scan mostly goes on from the
 * last answer. */
static void
pos(struct pp *pp, size_t off, unsigned *line, unsigned *col)
{
	size_t k;
	unsigned c = 1;

	if (off < pp->pc_off) {
		pp->pc_off = pp->pc_bol = 0;
		pp->pc_line = 1;
	}
	for (; pp->pc_off < off; pp->pc_off++)
		if (pp->t[pp->pc_off] == '\n') {
			pp->pc_line++;
			pp->pc_bol = pp->pc_off + 1;
		}
	for (k = pp->pc_bol; k < off; k++)
		if (((unsigned char)pp->t[k] & 0xc0) != 0x80)
			c++;
	*line = pp->pc_line;
	*col = c;
}

/* Report an error at offset off and return code. */
static int
fail(struct pp *pp, size_t off, int code, const char *fmt, ...)
    ATTR_PRINTF(4, 5);
static int
fail(struct pp *pp, size_t off, int code, const char *fmt, ...)
{
	va_list ap;

	if (pp->err == NULL)
		return code;
	pos(pp, off, &pp->err->line, &pp->err->col);
	va_start(ap, fmt);
	vsnprintf(pp->err->msg, sizeof(pp->err->msg), fmt, ap);
	va_end(ap);
	return code;
}

static int
nomem(struct pp *pp)
{
	return fail(pp, pp->i, -E_NOMEM,
	    "out of memory while reading the plan");
}

static int
is_blank(int c)
{
	return c == ' ' || c == '\t';
}

/* At the end of a line: LF, CR (always before LF here) or end of text. */
static int
at_eol(const struct pp *pp)
{
	return pp->i >= pp->n || pp->t[pp->i] == '\n' || pp->t[pp->i] == '\r';
}

static void
skip_blanks(struct pp *pp)
{
	while (pp->i < pp->n && is_blank(pp->t[pp->i]))
		pp->i++;
}

/* Past the line end at pp->i, if there is one. */
static void
skip_eol(struct pp *pp)
{
	if (pp->i < pp->n && pp->t[pp->i] == '\r')
		pp->i++;
	if (pp->i < pp->n && pp->t[pp->i] == '\n')
		pp->i++;
}

static int
is_name_start(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static int
is_name_char(int c)
{
	return is_name_start(c) || (c >= '0' && c <= '9') || c == '-';
}

/* Bytes of the character at off, to quote it in a message. */
static int
char_len(const struct pp *pp, size_t off)
{
	size_t k;

	if ((unsigned char)pp->t[off] < 0x80)
		return 1;
	k = utf8_len((const unsigned char *)pp->t + off, pp->n - off);
	return k > 0 ? (int)k : 1;
}

/* Encoding: UTF-8, no control characters but tab and line ends, a CR
 * only before LF. */
static int
check_text(struct pp *pp)
{
	const unsigned char *s = (const unsigned char *)pp->t;
	size_t i, k;

	for (i = 0; i < pp->n; i += k) {
		k = 1;
		if (s[i] >= 0x80) {
			if ((k = utf8_len(s + i, pp->n - i)) == 0)
				return fail(pp, i, -E_PARSE,
				    "invalid UTF-8 (byte 0x%02x)", s[i]);
		} else if (s[i] == '\r') {
			if (i + 1 >= pp->n || s[i + 1] != '\n')
				return fail(pp, i, -E_PARSE, "a carriage "
				    "return must be followed by a line feed");
		} else if ((s[i] < 0x20 && s[i] != '\t' && s[i] != '\n') ||
		    s[i] == 0x7f)
			return fail(pp, i, -E_PARSE, "control character 0x%02x "
			    "is not allowed (write \\n or \\t in a quoted "
			    "literal)", s[i]);
	}
	return 0;
}

/* A name at pp->i: its extent in *s, *len. what ("variable name",
 * "command name") and after (what precedes it) go in the messages. */
static int
name(struct pp *pp, const char *what, const char *after, size_t *s,
    size_t *len)
{
	size_t b = pp->i;

	if (pp->i >= pp->n || !is_name_start(pp->t[pp->i]))
		return fail(pp, pp->i, -E_PARSE, "%s expected after %s: "
		    "letters, digits, _ and -, starting with a letter or _",
		    what, after);
	while (pp->i < pp->n && is_name_char(pp->t[pp->i]))
		pp->i++;
	if (pp->i - b > PLAN_MAX_NAME)
		return fail(pp, b, -E_LIMIT, "the %s is longer than %u bytes",
		    what, PLAN_MAX_NAME);
	*s = b;
	*len = pp->i - b;
	return 0;
}

/* The optional "#!LANG" first line. */
static int
header(struct pp *pp)
{
	size_t b, e;

	pp->i = 2;
	skip_blanks(pp);
	b = pp->i;
	while (!at_eol(pp))
		pp->i++;
	for (e = pp->i; e > b && is_blank(pp->t[e - 1]); e--)
		;
	if (e == b)
		return fail(pp, b, -E_PARSE, "a language name must follow #! "
		    "(for example #!english)");
	if (e - b > PLAN_MAX_NAME)
		return fail(pp, b, -E_LIMIT, "the language name after #! is "
		    "longer than %u bytes", PLAN_MAX_NAME);
	if ((pp->p->lang = arena_strndup(pp->a, pp->t + b, e - b)) == NULL)
		return nomem(pp);
	skip_eol(pp);
	return 0;
}

/* The step defining name[0..len) among steps[0..lim), or -1. */
static int
find_var(const struct plan *p, unsigned lim, const char *name, size_t len)
{
	unsigned k;

	for (k = 0; k < lim; k++)
		if (strlen(p->steps[k].var) == len &&
		    memcmp(p->steps[k].var, name, len) == 0)
			return (int)k;
	return -1;
}

/* Three quotes at off. */
static int
is_triple(const struct pp *pp, size_t off)
{
	return pp->n - off >= 3 && memcmp(pp->t + off, "\"\"\"", 3) == 0;
}

/* A literal: "..." (escapes) or """...""" (verbatim), opening at pp->i.
 * With dst NULL, check it and measure its value in *len; then again with
 * dst, copy the value there. pp->i ends after the closing quotes. */
static int
literal(struct pp *pp, char *dst, size_t *len)
{
	static const char esc_in[] = "\"\\nt", esc_out[] = "\"\\\n\t";
	const char *t = pp->t, *e;
	size_t b = pp->i, i, k = 0;
	unsigned line, col;
	int triple;

	triple = is_triple(pp, b);
	i = b + (triple ? 3 : 1);
	if (triple && i < pp->n && t[i] == '\r')
		i++;
	if (triple && i < pp->n && t[i] == '\n')
		i++;
	for (;; i++) {
		if (i >= pp->n) {
			pos(pp, b, &line, &col);
			return fail(pp, pp->n, -E_PARSE, "unterminated %s "
			    "(opened at line %u, column %u)", triple ?
			    "\"\"\" block" : "quoted literal", line, col);
		}
		if (t[i] == '\r')
			continue;
		if (triple && is_triple(pp, i)) {
			i += 3;
			break;
		}
		if (!triple && t[i] == '"') {
			i++;
			break;
		}
		if (!triple && t[i] == '\\') {
			if (i + 1 < pp->n && (e = memchr(esc_in, t[i + 1],
			    sizeof(esc_in) - 1)) != NULL) {
				if (dst != NULL)
					dst[k] = esc_out[e - esc_in];
				k++;
				i++;
				continue;
			}
			if (i + 1 >= pp->n || t[i + 1] == '\n' ||
			    t[i + 1] == '\r')
				return fail(pp, i, -E_PARSE, "bad escape: a "
				    "backslash at the end of a line (only "
				    "\\\" \\\\ \\n \\t are allowed)");
			return fail(pp, i, -E_PARSE, "bad escape \\%.*s (only "
			    "\\\" \\\\ \\n \\t are allowed)",
			    char_len(pp, i + 1), t + i + 1);
		}
		if (dst != NULL)
			dst[k] = t[i];
		k++;
	}
	if (k > PLAN_MAX_LITERAL)
		return fail(pp, b, -E_LIMIT, "a literal is longer than %u "
		    "bytes", PLAN_MAX_LITERAL);
	*len = k;
	if (dst != NULL)
		pp->i = i;
	return 0;
}

/* Note the first reference to a name no earlier statement defines. */
static void
defer_ref(struct pp *pp, size_t off, size_t s, size_t len)
{
	if (pp->ref_bad)
		return;
	pp->ref_bad = 1;
	pp->ref_off = off;
	pp->ref_step = pp->p->n;
	memcpy(pp->ref_name, pp->t + s, len);
	pp->ref_name[len] = '\0';
}

/* Report the deferred reference error, now that the rest is read. */
static int
ref_error(struct pp *pp)
{
	const struct plan *p = pp->p;
	const char *nm = pp->ref_name;
	int d;

	d = find_var(p, p->n + (pp->partial ? 1 : 0), nm, strlen(nm));
	if (d >= 0 && (unsigned)d == pp->ref_step)
		return fail(pp, pp->ref_off, -E_PARSE, "$%s is used in the "
		    "statement that defines it", nm);
	if (d >= 0)
		return fail(pp, pp->ref_off, -E_PARSE, "$%s is used before a "
		    "statement defines it (line %u)", nm, p->steps[d].line);
	return fail(pp, pp->ref_off, -E_PARSE, "$%s is not defined by any "
	    "earlier statement", nm);
}

/* After a literal or a reference: a blank or the line's end. */
static int
arg_end(struct pp *pp, const char *what)
{
	if (at_eol(pp) || is_blank(pp->t[pp->i]))
		return 0;
	return fail(pp, pp->i, -E_PARSE, "unexpected '%.*s' after %s: "
	    "separate arguments with a blank", char_len(pp, pp->i),
	    pp->t + pp->i, what);
}

static int
arg_ref(struct pp *pp, struct plan_arg *g)
{
	char what[PLAN_MAX_NAME + 2];
	size_t b = pp->i, s, len;
	int r, d;

	pp->i++;
	if ((r = name(pp, "variable name", "$", &s, &len)) != 0)
		return r;
	if ((d = find_var(pp->p, pp->p->n, pp->t + s, len)) < 0) {
		defer_ref(pp, b, s, len);
		d = 0;
	}
	g->kind = PA_REF;
	g->ref = (unsigned)d;
	g->s = pp->p->steps[d].var;	/* steps[0] exists: partial */
	g->n = strlen(g->s);
	snprintf(what, sizeof(what), "$%.*s", (int)len, pp->t + s);
	return arg_end(pp, what);
}

static int
arg_literal(struct pp *pp, struct plan_arg *g)
{
	char *v;
	size_t len;
	int r;

	if ((r = literal(pp, NULL, &len)) != 0)
		return r;
	if ((v = arena_alloc(pp->a, len + 1)) == NULL)
		return nomem(pp);
	(void)literal(pp, v, &len);
	v[len] = '\0';
	g->kind = PA_TEXT;
	g->s = v;
	g->n = len;
	return arg_end(pp, "the closing quote");
}

static int
arg(struct pp *pp, struct plan_arg *g)
{
	size_t b = pp->i;

	memset(g, 0, sizeof(*g));
	if (pp->t[b] == '"')
		return arg_literal(pp, g);
	if (pp->t[b] == '$')
		return arg_ref(pp, g);
	while (!at_eol(pp) && !is_blank(pp->t[pp->i]))
		pp->i++;
	g->kind = PA_WORD;
	if ((g->s = arena_strndup(pp->a, pp->t + b, pp->i - b)) == NULL)
		return nomem(pp);
	g->n = pp->i - b;
	return 0;
}

/* Room for one more step, its slot zeroed. The array doubles; the old
 * one stays in the arena, so the waste is less than what is kept. */
static int
grow(struct pp *pp)
{
	struct plan_step *ns;
	unsigned cap;

	if (pp->p->n < pp->cap)
		goto out;
	cap = pp->cap ? pp->cap * 2 : 8;
	if ((ns = arena_alloc(pp->a, cap * sizeof(*ns))) == NULL)
		return nomem(pp);
	if (pp->p->n > 0)
		memcpy(ns, pp->p->steps, pp->p->n * sizeof(*ns));
	pp->p->steps = ns;
	pp->cap = cap;
out:
	memset(&pp->p->steps[pp->p->n], 0, sizeof(*ns));
	return 0;
}

/* The deps of st: its references, sorted, unique. */
static int
set_deps(struct pp *pp, struct plan_step *st)
{
	unsigned d[PLAN_MAX_ARGS], n = 0, k, j, v;

	for (k = 0; k < st->nargs; k++) {
		if (st->args[k].kind != PA_REF)
			continue;
		v = st->args[k].ref;
		for (j = n; j > 0 && d[j - 1] > v; j--)
			;
		if (j > 0 && d[j - 1] == v)
			continue;
		memmove(d + j + 1, d + j, (n - j) * sizeof(*d));
		d[j] = v;
		n++;
	}
	st->ndeps = n;
	if (n == 0)
		return 0;
	if ((st->deps = arena_alloc(pp->a, n * sizeof(*d))) == NULL)
		return nomem(pp);
	memcpy(st->deps, d, n * sizeof(*d));
	return 0;
}

/* "@VAR COMMAND": the statement's head, into st. */
static int
head(struct pp *pp, struct plan_step *st, size_t *cmd_off)
{
	char after[PLAN_MAX_NAME + 2];
	size_t s, len;
	int r, d;

	pp->i++;
	if ((r = name(pp, "variable name", "@", &s, &len)) != 0)
		return r;
	if ((st->var = arena_strndup(pp->a, pp->t + s, len)) == NULL)
		return nomem(pp);
	if ((d = find_var(pp->p, pp->p->n, st->var, len)) >= 0)
		return fail(pp, s - 1, -E_PARSE, "@%s is defined twice (first "
		    "at line %u)", st->var, pp->p->steps[d].line);
	pp->partial = 1;
	if (!at_eol(pp) && !is_blank(pp->t[pp->i]))
		return fail(pp, pp->i, -E_PARSE, "unexpected '%.*s' after @%s: "
		    "a variable name has only letters, digits, _ and -",
		    char_len(pp, pp->i), pp->t + pp->i, st->var);
	skip_blanks(pp);
	if (at_eol(pp))
		return fail(pp, pp->i, -E_PARSE, "missing command after @%s",
		    st->var);
	snprintf(after, sizeof(after), "@%s", st->var);
	*cmd_off = pp->i;
	if ((r = name(pp, "command name", after, &s, &len)) != 0)
		return r;
	if ((st->cmd = arena_strndup(pp->a, pp->t + s, len)) == NULL)
		return nomem(pp);
	if (!at_eol(pp) && !is_blank(pp->t[pp->i]))
		return fail(pp, pp->i, -E_PARSE, "unexpected '%.*s' after "
		    "command '%s': a command name has only letters, digits, "
		    "_ and -", char_len(pp, pp->i), pp->t + pp->i, st->cmd);
	if (!plan_is_terminal(st->cmd) && pp->known != NULL &&
	    !pp->known(pp->ctx, st->cmd, len))
		return fail(pp, s, -E_PARSE, "unknown command '%s'", st->cmd);
	return 0;
}

/* One statement, pp->i at its '@'. */
static int
statement(struct pp *pp)
{
	struct plan *p = pp->p;
	struct plan_step *st, *last;
	struct plan_arg args[PLAN_MAX_ARGS];
	size_t at = pp->i, cmd_off = at;
	int r;

	if (p->n > 0 && plan_is_terminal((last = &p->steps[p->n - 1])->cmd))
		return fail(pp, at, -E_PARSE, "nothing may follow %s (line "
		    "%u): the plan ends with its one final_answer or "
		    "cannot_complete", last->cmd, last->line);
	if (p->n == PLAN_MAX_STEPS)
		return fail(pp, at, -E_LIMIT, "more than %u statements",
		    PLAN_MAX_STEPS);
	if ((r = grow(pp)) != 0)
		return r;
	st = &p->steps[p->n];
	pos(pp, at, &st->line, &st->col);
	if ((r = head(pp, st, &cmd_off)) != 0)
		return r;
	for (;;) {
		skip_blanks(pp);
		if (at_eol(pp))
			break;
		if (st->nargs == PLAN_MAX_ARGS)
			return fail(pp, pp->i, -E_LIMIT, "more than %u "
			    "arguments in @%s", PLAN_MAX_ARGS, st->var);
		if ((r = arg(pp, &args[st->nargs])) != 0)
			return r;
		st->nargs++;
	}
	if (plan_is_terminal(st->cmd) && st->nargs == 0)
		return fail(pp, cmd_off, -E_PARSE, "%s needs at least one "
		    "argument", st->cmd);
	if (st->nargs > 0) {
		st->args = arena_alloc(pp->a, st->nargs * sizeof(*args));
		if (st->args == NULL)
			return nomem(pp);
		memcpy(st->args, args, st->nargs * sizeof(*args));
	}
	if ((r = set_deps(pp, st)) != 0)
		return r;
	p->n++;
	pp->partial = 0;
	skip_eol(pp);
	return 0;
}

static int
parse(struct pp *pp)
{
	struct plan *p = pp->p;
	int r;

	if (pp->n > PLAN_MAX_TEXT)
		return fail(pp, 0, -E_LIMIT, "the plan is longer than %u bytes",
		    PLAN_MAX_TEXT);
	if ((r = check_text(pp)) != 0)
		return r;
	if (pp->n >= 2 && pp->t[0] == '#' && pp->t[1] == '!' &&
	    (r = header(pp)) != 0)
		return r;
	while (pp->i < pp->n) {
		skip_blanks(pp);
		if (at_eol(pp)) {
			skip_eol(pp);
		} else if (pp->t[pp->i] == '#') {
			while (!at_eol(pp))
				pp->i++;
		} else if (pp->t[pp->i] != '@') {
			return fail(pp, pp->i, -E_PARSE, "statement expected: "
			    "a line must start with @VAR");
		} else if ((r = statement(pp)) != 0)
			return r;
	}
	if (p->n == 0)
		return fail(pp, pp->n, -E_PARSE, "the plan has no statement: "
		    "it must end with final_answer or cannot_complete");
	if (!plan_is_terminal(p->steps[p->n - 1].cmd))
		return fail(pp, pp->n, -E_PARSE, "the plan must end with "
		    "final_answer or cannot_complete");
	return 0;
}

/* see plan.h */
int
plan_parse(struct arena *a, const char *text, size_t n, plan_known_fn known,
    void *ctx, struct plan **out, struct plan_error *err)
{
	struct pp pp;
	int r;

	*out = NULL;
	memset(&pp, 0, sizeof(pp));
	pp.a = a;
	pp.t = text;
	pp.n = n;
	pp.known = known;
	pp.ctx = ctx;
	pp.err = err;
	pp.pc_line = 1;
	if ((pp.p = arena_zalloc(a, sizeof(*pp.p))) == NULL)
		return nomem(&pp);
	pp.p->lang = "english";
	r = parse(&pp);
	if (r != -E_NOMEM && pp.ref_bad)
		r = ref_error(&pp);
	if (r == 0)
		*out = pp.p;
	return r;
}

/* see plan.h */
int
plan_is_terminal(const char *cmd)
{
	return strcmp(cmd, PLAN_FINAL) == 0 || strcmp(cmd, PLAN_CANNOT) == 0;
}

/* see plan.h */
unsigned
plan_ready(const struct plan *p, uint64_t done, uint64_t running,
    unsigned *out, unsigned max)
{
	const struct plan_step *st;
	unsigned i, k, n = 0;
	uint64_t before;

	for (i = 0; i < p->n && i < PLAN_MAX_STEPS && n < max; i++) {
		if ((done | running) >> i & 1)
			continue;
		/* The answer waits for every step, used or not: nothing may
		 * still be running or be started after it. */
		before = ((uint64_t)1 << i) - 1;
		if (i == p->n - 1 && (done & before) != before)
			continue;
		st = &p->steps[i];
		for (k = 0; k < st->ndeps && (done >> st->deps[k] & 1); k++)
			;
		if (k == st->ndeps)
			out[n++] = i;
	}
	return n;
}

static void
write_text(struct sbuf *sb, const char *s, size_t n)
{
	size_t i;

	sbuf_addc(sb, '"');
	for (i = 0; i < n; i++) {
		if (s[i] == '"' || s[i] == '\\') {
			sbuf_addc(sb, '\\');
			sbuf_addc(sb, s[i]);
		} else if (s[i] == '\n') {
			sbuf_add(sb, "\\n", 2);
		} else if (s[i] == '\t') {
			sbuf_add(sb, "\\t", 2);
		} else
			sbuf_addc(sb, s[i]);
	}
	sbuf_addc(sb, '"');
}

/* see plan.h */
int
plan_write(struct sbuf *sb, const struct plan *p)
{
	const struct plan_step *st;
	const struct plan_arg *g;
	unsigned i, k;

	sbuf_printf(sb, "#!%s\n", p->lang);
	for (i = 0; i < p->n; i++) {
		st = &p->steps[i];
		sbuf_printf(sb, "@%s %s", st->var, st->cmd);
		for (k = 0; k < st->nargs; k++) {
			g = &st->args[k];
			sbuf_addc(sb, ' ');
			if (g->kind == PA_TEXT)
				write_text(sb, g->s, g->n);
			else if (g->kind == PA_REF)
				sbuf_printf(sb, "$%s", p->steps[g->ref].var);
			else
				sbuf_add(sb, g->s, g->n);
		}
		sbuf_addc(sb, '\n');
	}
	return sb->err;
}
