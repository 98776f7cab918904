/* fm.c - YAML through libfyaml's event parser (the smaller of its APIs),
 * folded into fm_node trees. YAML 1.2; see fm.h for the limits. */
#include "fmt/fm.h"

#include <stdio.h>
#include <string.h>

#include <libfyaml.h>

#include "base/str.h"

struct build {
	struct arena	*a;
	struct fm_node	*stack[FM_MAX_DEPTH + 1];
	struct fm_node	*last[FM_MAX_DEPTH + 1];	/* last kid, for appends */
	const char	*pending_key;	/* map key waiting for its value */
	unsigned	 pending_line;
	int		 depth;
	unsigned	 nodes, first_line;
	struct fm_error	*err;
};

static int
fail(struct fm_error *err, int code, unsigned line, unsigned col,
    const char *msg)
{
	err->line = line;
	err->col = col;
	snprintf(err->msg, sizeof(err->msg), "%s", msg);
	return code;
}

static unsigned
line_of(struct build *b, struct fy_event *ev)
{
	const struct fy_mark *m = fy_event_start_mark(ev);

	return m != NULL ? (unsigned)m->line + b->first_line : 0;
}

/* Attach a finished node to the container on top of the stack. */
static int
attach(struct build *b, struct fm_node *nd)
{
	struct fm_node *parent, *k;

	if (b->depth == 0) {
		b->stack[0] = nd;
		return 0;
	}
	parent = b->stack[b->depth];
	/* An empty value ("key:") has no position of its own: give it its
	 * key's line, so every finding about it can say FILE:LINE. */
	if (nd->line == 0)
		nd->line = parent->kind == FM_MAP ? b->pending_line :
		    parent->line;
	if (parent->kind == FM_MAP) {
		nd->key = b->pending_key;
		b->pending_key = NULL;
		for (k = parent->kids; k != NULL; k = k->next)
			if (strcmp(k->key, nd->key) == 0)
				return fail(b->err, -E_PARSE, b->pending_line, 0,
				    "duplicate key");
	}
	if (b->last[b->depth] != NULL)
		b->last[b->depth]->next = nd;
	else
		parent->kids = nd;
	b->last[b->depth] = nd;
	parent->nkids++;
	return 0;
}

static struct fm_node *
new_node(struct build *b, enum fm_kind kind, unsigned line)
{
	struct fm_node *nd;

	if (++b->nodes > FM_MAX_NODES)
		return NULL;
	if ((nd = arena_zalloc(b->a, sizeof(*nd))) == NULL)
		return NULL;
	nd->kind = kind;
	nd->line = line;
	return nd;
}

static int
no_node(struct build *b, unsigned line)
{
	if (b->nodes > FM_MAX_NODES)
		return fail(b->err, -E_LIMIT, line, 0, "too many YAML nodes");
	return -E_NOMEM;
}

static int
on_event(struct build *b, struct fy_event *ev)
{
	struct fm_node *top = b->depth > 0 ? b->stack[b->depth] : NULL;
	unsigned line = line_of(b, ev);
	struct fm_node *nd;
	const char *txt;
	size_t len;
	enum fm_kind kind;

	switch (ev->type) {
	case FYET_ALIAS:
		return fail(b->err, -E_PARSE, line, 0,
		    "YAML aliases are not supported");
	case FYET_SCALAR:
		if (ev->scalar.anchor != NULL)
			return fail(b->err, -E_PARSE, line, 0,
			    "YAML anchors are not supported");
		if ((txt = fy_token_get_text(ev->scalar.value, &len)) == NULL)
			txt = "", len = 0;
		if (top != NULL && top->kind == FM_MAP && b->pending_key == NULL) {
			if (memchr(txt, '\0', len) != NULL)
				return fail(b->err, -E_PARSE, line, 0,
				    "NUL byte in a key");
			if ((b->pending_key = arena_strndup(b->a, txt, len)) == NULL)
				return -E_NOMEM;
			b->pending_line = line;
			return 0;
		}
		if ((nd = new_node(b, FM_SCALAR, line)) == NULL)
			return no_node(b, line);
		nd->plain = fy_token_scalar_style(ev->scalar.value) == FYSS_PLAIN;
		if ((nd->s = arena_strndup(b->a, txt, len)) == NULL)
			return -E_NOMEM;
		nd->n = len;
		if (fm_is_null(nd))
			nd->kind = FM_NULL;
		return attach(b, nd);
	case FYET_MAPPING_START:
	case FYET_SEQUENCE_START:
		kind = ev->type == FYET_MAPPING_START ? FM_MAP : FM_SEQ;
		if (top != NULL && top->kind == FM_MAP && b->pending_key == NULL)
			return fail(b->err, -E_PARSE, line, 0,
			    "a key must be a plain string");
		if ((kind == FM_MAP && ev->mapping_start.anchor != NULL) ||
		    (kind == FM_SEQ && ev->sequence_start.anchor != NULL))
			return fail(b->err, -E_PARSE, line, 0,
			    "YAML anchors are not supported");
		if (b->depth >= FM_MAX_DEPTH)
			return fail(b->err, -E_LIMIT, line, 0,
			    "YAML nested too deep");
		if ((nd = new_node(b, kind, line)) == NULL)
			return no_node(b, line);
		if (attach(b, nd) != 0)
			return -E_PARSE;
		b->depth++;
		b->stack[b->depth] = nd;
		b->last[b->depth] = NULL;
		return 0;
	case FYET_MAPPING_END:
	case FYET_SEQUENCE_END:
		b->depth--;
		return 0;
	default:
		return 0;
	}
}

/* libfyaml (0.7.12) ends the stream without an error at a NUL byte, and
 * can loop forever on bytes that are not UTF-8 ("%Y\x97A\n"): YAML allows
 * neither, so refuse both first. A UTF-8 sequence never spans a '\n', so
 * the lines are checked one by one, for the line number. */
static int
check_text(const char *text, size_t n, unsigned first_line,
    struct fm_error *err)
{
	const char *p = text, *e = text + n, *nl;
	unsigned line = first_line;

	while (p < e) {
		if ((nl = memchr(p, '\n', (size_t)(e - p))) == NULL)
			nl = e;
		if (memchr(p, '\0', (size_t)(nl - p)) != NULL)
			return fail(err, -E_PARSE, line, 0, "NUL byte in YAML");
		if (!str_is_utf8(p, (size_t)(nl - p)))
			return fail(err, -E_PARSE, line, 0,
			    "YAML is not valid UTF-8");
		if (nl == e)
			break;
		p = nl + 1;
		line++;
	}
	return 0;
}

/* see fm.h */
int
fm_parse(struct arena *a, const char *text, size_t n, unsigned first_line,
    struct fm_node **root, struct fm_error *err)
{
	struct fy_parse_cfg cfg;
	struct fy_diag_cfg dcfg;
	struct fy_diag *diag = NULL;
	struct fy_parser *fyp = NULL;
	struct fy_event *ev;
	struct build *b;
	struct arena_mark m = arena_mark(a);
	unsigned long nfail0 = mem_fail_count();
	int r = 0, docs = 0;

	memset(err, 0, sizeof(*err));
	*root = NULL;
	if ((r = check_text(text, n, first_line, err)) != 0)
		return r;
	if ((b = arena_zalloc(a, sizeof(*b))) == NULL)
		return -E_NOMEM;
	b->a = a;
	b->err = err;
	b->first_line = first_line;

	fy_diag_cfg_default(&dcfg);
	dcfg.fp = NULL;
	dcfg.level = FYET_ERROR;
	memset(&cfg, 0, sizeof(cfg));
	cfg.flags = FYPCF_QUIET | FYPCF_DISABLE_ACCELERATORS |
	    FYPCF_DISABLE_RECYCLING;
	if ((diag = fy_diag_create(&dcfg)) == NULL ||
	    (fy_diag_set_collect_errors(diag, true), 0) ||
	    (cfg.diag = diag, fyp = fy_parser_create(&cfg)) == NULL ||
	    fy_parser_set_string(fyp, text, n) != 0) {
		r = -E_NOMEM;
		goto out;
	}
	while (r == 0 && (ev = fy_parser_parse(fyp)) != NULL) {
		if (ev->type == FYET_DOCUMENT_START && ++docs > 1)
			r = fail(err, -E_PARSE, line_of(b, ev), 0,
			    "more than one YAML document");
		else
			r = on_event(b, ev);
		fy_parser_event_free(fyp, ev);
	}
	if (r == 0 && mem_fail_count() != nfail0)
		r = -E_NOMEM;
	else if (r == 0 && fy_parser_get_stream_error(fyp)) {
		void *it = NULL;
		struct fy_diag_error *de = fy_diag_errors_iterate(diag, &it);

		/* libfyaml's diagnostic positions are 1-based already. */
		if (de != NULL)
			r = fail(err, -E_PARSE, de->line > 0 ? (unsigned)de->line -
			    1 + first_line : first_line, de->column > 0 ?
			    (unsigned)de->column : 0, de->msg);
		else
			r = fail(err, -E_PARSE, first_line, 0, "invalid YAML");
	}
	if (r == 0 && b->stack[0] == NULL) {
		if ((b->stack[0] = new_node(b, FM_NULL, first_line)) == NULL)
			r = -E_NOMEM;
	}
out:
	if (fyp != NULL)
		fy_parser_destroy(fyp);
	if (diag != NULL)
		fy_diag_destroy(diag);
	if (r == 0)
		*root = b->stack[0];
	else
		arena_reset_to(a, m);
	return r;
}

/* Where a quoted scalar that starts at or after p closes on this line
 * (e its end): 1 closed, 0 still open. q is the quote. */
static int
closes(const char *p, const char *e, char q)
{
	for (; p < e; p++) {
		if (q == '"' && *p == '\\' && p + 1 < e)
			p++;
		else if (*p == q && q == '\'' && p + 1 < e && p[1] == '\'')
			p++;
		else if (*p == q)
			return 1;
	}
	return 0;
}

/* The quote that opens a top-level "key: 'value" on [p, e) and is not
 * closed there, or 0. */
static char
opens(const char *p, const char *e)
{
	const char *c;

	if (p == e || *p == ' ' || *p == '#' || *p == '-' ||
	    (c = memchr(p, ':', (size_t)(e - p))) == NULL)
		return 0;
	for (c++; c < e && *c == ' '; c++)
		;
	if (c == e || (*c != '"' && *c != '\''))
		return 0;
	return closes(c + 1, e, *c) ? 0 : *c;
}

/* see fm.h */
int
fm_parse_lax(struct arena *a, const char *text, size_t n,
    unsigned first_line, struct fm_node **root, struct fm_error *err,
    unsigned *fixed)
{
	struct fm_error e2;
	const char *p = text, *e, *end = text + n;
	char *t, q = 0;
	size_t k = 0;
	unsigned line = first_line;
	int r;

	*fixed = 0;
	if ((r = fm_parse(a, text, n, first_line, root, err)) != -E_PARSE)
		return r;
	/* js-yaml (gray-matter) reads a quoted value that goes on at
	 * column 0; YAML 1.2 wants those lines indented. Indent them. */
	if ((t = arena_alloc(a, 3 * n + 1)) == NULL)
		return -E_NOMEM;
	for (; p < end; p = e + (e < end), line++) {
		if ((e = memchr(p, '\n', (size_t)(end - p))) == NULL)
			e = end;
		if (q != 0 && p < e && *p != ' ' && *p != '\r') {
			t[k++] = ' ', t[k++] = ' ';
			if (*fixed == 0)
				*fixed = line;
		}
		if (q != 0 && closes(p, e, q))
			q = 0;
		else if (q == 0)
			q = opens(p, e);
		memcpy(t + k, p, (size_t)(e - p) + (e < end));
		k += (size_t)(e - p) + (e < end);
	}
	if (*fixed == 0 || fm_parse(a, t, k, first_line, root, &e2) != 0) {
		*fixed = 0;
		return -E_PARSE;	/* the first error stands */
	}
	return 0;
}

static int
is_dashes(const char *p, const char *e)
{
	if (e - p < 3 || memcmp(p, "---", 3) != 0)
		return 0;
	for (p += 3; p < e && (*p == ' ' || *p == '\t' || *p == '\r'); p++)
		;
	return p == e;
}

/* see fm.h */
int
fm_split(const char *text, size_t n, struct str *yaml, unsigned *yaml_line,
    struct str *body, unsigned *body_line)
{
	const char *p = text, *e = text + n, *nl, *ys;
	unsigned line = 1;

	if (n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)	/* BOM */
		p += 3;
	nl = memchr(p, '\n', (size_t)(e - p));
	if (!is_dashes(p, nl != NULL ? nl : e))
		return -E_NOENT;
	*yaml_line = 2;
	if (nl == NULL)
		return -E_PARSE;
	ys = p = nl + 1;
	line = 2;
	while (p < e) {
		nl = memchr(p, '\n', (size_t)(e - p));
		if (is_dashes(p, nl != NULL ? nl : e)) {
			yaml->p = ys;
			yaml->n = (size_t)(p - ys);
			body->p = nl != NULL ? nl + 1 : e;
			body->n = (size_t)(e - body->p);
			*body_line = line + 1;
			return 0;
		}
		if (nl == NULL)
			break;
		p = nl + 1;
		line++;
	}
	return -E_PARSE;
}

/* see fm.h */
struct fm_node *
fm_get(const struct fm_node *map, const char *key)
{
	struct fm_node *k;

	if (map == NULL || map->kind != FM_MAP)
		return NULL;
	for (k = map->kids; k != NULL; k = k->next)
		if (strcmp(k->key, key) == 0)
			return k;
	return NULL;
}

/* see fm.h */
int
fm_is_null(const struct fm_node *nd)
{
	if (nd->kind == FM_NULL)
		return 1;
	if (nd->kind != FM_SCALAR || !nd->plain)
		return 0;
	return nd->n == 0 || strcmp(nd->s, "~") == 0 ||
	    strcmp(nd->s, "null") == 0 || strcmp(nd->s, "Null") == 0 ||
	    strcmp(nd->s, "NULL") == 0;
}

const char *
fm_version(void)
{
	return fy_library_version();
}
