/* ere.c - POSIX extended regular expressions over bytes (see ere.h).
 *
 * The parser emits code straight into the program, Thompson's way. A
 * postfix operator turns the code of the atom before it into a loop or an
 * option by inserting a SPLIT in front of it; a count {m,n} appends copies
 * of that code. Code that moves is relocated: every jump inside a piece of
 * code points into it or just past its end, so moving or copying a piece
 * only shifts the targets that point into it. */
#include <string.h>

#include "base/base.h"
#include "base/ere.h"

enum { OP_BYTE, OP_ANY, OP_SET, OP_BOL, OP_EOL, OP_JMP, OP_SPLIT, OP_MATCH };

struct ere_op {
	unsigned char	op;
	unsigned char	c;		/* OP_BYTE */
	unsigned short	set;		/* OP_SET */
	unsigned	x, y;		/* OP_JMP: x; OP_SPLIT: x and y */
};

#define ERE_MAX_SETS	64
#define ERE_MAX_DEPTH	64
#define INF		(ERE_DUP_MAX + 1)
#define NONE		(~0u)

struct rc {
	const char	*p;
	struct ere	*re;
	const char	*why;
	unsigned	 depth;
};

static int
err(struct rc *c, const char *why)
{
	if (c->why == NULL)
		c->why = why;
	return -E_PARSE;
}

static int
room(struct rc *c, unsigned k)
{
	return c->re->n + k > ERE_MAX_OPS - 1 ?	/* one left for MATCH */
	    err(c, "the pattern is too large (counts multiply its size)") : 0;
}

static int
emit(struct rc *c, unsigned op, unsigned x, unsigned y)
{
	struct ere_op *o;

	if (room(c, 1) != 0)
		return -E_PARSE;
	o = &c->re->prog[c->re->n++];
	memset(o, 0, sizeof(*o));
	o->op = (unsigned char)op;
	o->x = x;
	o->y = y;
	return 0;
}

/* Shift `d` to every jump target at or past `from` in prog[lo..hi). */
static void
relocate(struct ere_op *prog, unsigned lo, unsigned hi, unsigned from,
    unsigned d)
{
	for (; lo < hi; lo++) {
		if (prog[lo].op != OP_JMP && prog[lo].op != OP_SPLIT)
			continue;
		if (prog[lo].x >= from)
			prog[lo].x += d;
		if (prog[lo].op == OP_SPLIT && prog[lo].y >= from)
			prog[lo].y += d;
	}
}

/* Room for one instruction at `at`: what follows moves up one. Code before
 * `at` that points at `at` now points at the new instruction, which is
 * what a prefix operator wants. */
static int
insert(struct rc *c, unsigned at)
{
	struct ere *re = c->re;

	if (room(c, 1) != 0)
		return -E_PARSE;
	memmove(&re->prog[at + 1], &re->prog[at], (re->n - at) *
	    sizeof(re->prog[0]));
	re->n++;
	relocate(re->prog, at + 1, re->n, at, 1);
	memset(&re->prog[at], 0, sizeof(re->prog[0]));
	return 0;
}

/* prog[s..e) made optional: SPLIT in front, one way past the end. */
static int
quest(struct rc *c, unsigned s, unsigned e)
{
	if (insert(c, s) != 0)
		return -E_PARSE;
	c->re->prog[s].op = OP_SPLIT;
	c->re->prog[s].x = s + 1;
	c->re->prog[s].y = e + 1;
	return 0;
}

/* prog[s..n) repeated any number of times; it must end the program. */
static int
star(struct rc *c, unsigned s)
{
	if (insert(c, s) != 0 || emit(c, OP_JMP, s, 0) != 0)
		return -E_PARSE;
	c->re->prog[s].op = OP_SPLIT;
	c->re->prog[s].x = s + 1;
	c->re->prog[s].y = c->re->n;
	return 0;
}

/* a{m,n}: the atom at prog[s..n), len instructions, m times, then n-m
 * times optional (or, with no upper bound, the last copy looped). */
static int
count(struct rc *c, unsigned s, unsigned m, unsigned n)
{
	struct ere *re = c->re;
	unsigned len = re->n - s, k, i, at;

	if (n == 0) {
		re->n = s;			/* a{0} matches the empty text */
		return 0;
	}
	k = n == INF ? (m > 0 ? m : 1) : n;
	if (room(c, (k - 1) * len + k + 1) != 0)
		return -E_PARSE;
	for (i = 1; i < k; i++) {
		memcpy(&re->prog[re->n], &re->prog[s], len * sizeof(re->prog[0]));
		relocate(re->prog, re->n, re->n + len, s, re->n - s);
		re->n += len;
	}
	if (n == INF)		/* the last copy: a+ when m > 0, else a* */
		return m > 0 ? emit(c, OP_SPLIT, s + (k - 1) * len, re->n + 1) :
		    star(c, s);
	/* Last to first, so each insert moves only copies already done. */
	for (i = k; i-- > m;) {
		at = s + i * len;
		if (quest(c, at, at + len) != 0)
			return -E_PARSE;
	}
	return 0;
}

/* A decimal count of {m,n}, at most ERE_DUP_MAX. */
static int
number(struct rc *c, unsigned *v)
{
	if (*c->p < '0' || *c->p > '9')
		return err(c, "a count in { } must be a number, as in {2} or "
		    "{1,3}");
	for (*v = 0; *c->p >= '0' && *c->p <= '9'; c->p++) {
		*v = *v * 10 + (unsigned)(*c->p - '0');
		if (*v > ERE_DUP_MAX)
			return err(c, "a count in { } is over 255");
	}
	return 0;
}

static int
interval(struct rc *c, unsigned *m, unsigned *n)
{
	if (number(c, m) != 0)
		return -E_PARSE;
	*n = *m;
	if (*c->p == ',') {
		c->p++;
		*n = INF;
		if (*c->p != '}' && number(c, n) != 0)
			return -E_PARSE;
	}
	if (*c->p != '}')
		return err(c, "a { } count is not closed");
	c->p++;
	if (*n < *m)
		return err(c, "a { } count's maximum is below its minimum");
	return 0;
}

/* The postfix operators after the atom at prog[s..n). */
static int
repeats(struct rc *c, unsigned s)
{
	unsigned m, n;
	int e = 0;

	for (;;) {
		switch (*c->p) {
		case '*':
			c->p++;
			e = star(c, s);
			break;
		case '+':
			c->p++;
			e = emit(c, OP_SPLIT, s, c->re->n + 1);
			break;
		case '?':
			c->p++;
			e = quest(c, s, c->re->n);
			break;
		case '{':
			c->p++;
			if ((e = interval(c, &m, &n)) == 0)
				e = count(c, s, m, n);
			break;
		default:
			return 0;
		}
		if (e != 0)
			return e;
	}
}

/* Is byte ch in the class named by s[0..len)? -1: no such class. */
static int
in_class(const char *s, size_t len, unsigned ch)
{
	static const char names[] = "alpha\0digit\0alnum\0upper\0lower\0"
	    "space\0blank\0punct\0print\0graph\0cntrl\0xdigit\0";
	const char *nm = names;
	int k;
	unsigned up = ch - 'A' < 26, lo = ch - 'a' < 26, dg = ch - '0' < 10;

	for (k = 0; *nm != '\0'; k++, nm += strlen(nm) + 1)
		if (strlen(nm) == len && memcmp(nm, s, len) == 0)
			break;
	switch (k) {
	case 0: return up || lo;
	case 1: return dg;
	case 2: return up || lo || dg;
	case 3: return up;
	case 4: return lo;
	case 5: return ch == ' ' || ch - '\t' < 5;
	case 6: return ch == ' ' || ch == '\t';
	case 7: return ch - 33 < 94 && !up && !lo && !dg;
	case 8: return ch - 32 < 95;
	case 9: return ch - 33 < 94;
	case 10: return ch < 32 || ch == 127;
	case 11: return dg || (ch | 32) - 'a' < 6;
	default: return -1;
	}
}

static void
set_add(unsigned char *set, unsigned lo, unsigned hi)
{
	for (; lo <= hi; lo++)
		set[lo >> 3] |= (unsigned char)(1u << (lo & 7));
}

/* A bracket expression; c->p is past the '['. */
static int
bracket(struct rc *c)
{
	struct ere *re = c->re;
	unsigned char *set;
	unsigned lo, hi, ch, i;
	const char *end;
	int neg, first = 1;

	if (re->nsets == ERE_MAX_SETS)
		return err(c, "more than 64 bracket expressions");
	set = re->sets[re->nsets];
	memset(set, 0, 32);
	if ((neg = *c->p == '^'))
		c->p++;
	for (;; first = 0) {
		if (*c->p == '\0')
			return err(c, "a [ is not closed");
		if (*c->p == ']' && !first) {
			c->p++;
			break;
		}
		if (c->p[0] == '[' && (c->p[1] == '.' || c->p[1] == '='))
			return err(c, "[. .] and [= =] are not supported");
		if (c->p[0] == '[' && c->p[1] == ':') {
			if ((end = strstr(c->p + 2, ":]")) == NULL ||
			    in_class(c->p + 2, (size_t)(end - c->p - 2), 0) < 0)
				return err(c, "an unknown [:class:] name");
			for (ch = 0; ch < 256; ch++)
				if (in_class(c->p + 2, (size_t)(end - c->p - 2),
				    ch) == 1)
					set_add(set, ch, ch);
			c->p = end + 2;
			continue;
		}
		lo = hi = (unsigned char)*c->p++;
		if (c->p[0] == '-' && c->p[1] != ']' && c->p[1] != '\0') {
			if (c->p[1] == '[' && (c->p[2] == '.' || c->p[2] == '=' ||
			    c->p[2] == ':'))
				return err(c, "a range cannot end in a class");
			hi = (unsigned char)c->p[1];
			c->p += 2;
			if (hi < lo)
				return err(c, "a range in [ ] runs backwards");
		}
		set_add(set, lo, hi);
	}
	if (neg)
		for (i = 0; i < 32; i++)
			set[i] = (unsigned char)~set[i];
	if (emit(c, OP_SET, 0, 0) != 0)
		return -E_PARSE;
	re->prog[re->n - 1].set = (unsigned short)re->nsets++;
	return 0;
}

static int alternation(struct rc *);

static int
atom(struct rc *c)
{
	unsigned char ch = (unsigned char)*c->p++;
	int e;

	switch (ch) {
	case '(':
		if (++c->depth > ERE_MAX_DEPTH)
			return err(c, "groups nested more than 64 deep");
		if ((e = alternation(c)) != 0)
			return e;
		if (*c->p != ')')
			return err(c, "a ( is not closed");
		c->p++;
		c->depth--;
		return 0;
	case '[':
		return bracket(c);
	case '.':
		return emit(c, OP_ANY, 0, 0);
	case '*': case '+': case '?': case '{':
		return err(c, "a repetition operator follows nothing to repeat");
	case '\\':
		if ((ch = (unsigned char)*c->p) == '\0')
			return err(c, "the pattern ends in a backslash");
		c->p++;
		if (strchr("^.[$()|*+?{}\\", ch) == NULL)
			return err(c, "a backslash may only quote one of "
			    "^.[$()|*+?{}\\ (no \\d \\w \\s: write [0-9], "
			    "[[:alnum:]_], [[:space:]])");
		break;
	}
	if (emit(c, OP_BYTE, 0, 0) != 0)
		return -E_PARSE;
	c->re->prog[c->re->n - 1].c = ch;
	return 0;
}

/* Atoms and their operators up to '|', ')' or the end. */
static int
sequence(struct rc *c)
{
	unsigned s;
	int e;

	while (*c->p != '\0' && *c->p != '|' && *c->p != ')') {
		s = c->re->n;
		if (*c->p == '^' || *c->p == '$') {
			e = emit(c, *c->p++ == '^' ? OP_BOL : OP_EOL, 0, 0);
			if (e == 0 && *c->p != '\0' && strchr("*+?{", *c->p))
				e = err(c, "an anchor cannot be repeated");
		} else if ((e = atom(c)) == 0) {
			e = repeats(c, s);
		}
		if (e != 0)
			return e;
	}
	return 0;
}

/* a|b|c as SPLIT a, (SPLIT b, c), each branch then jumping to the end.
 * The jumps wait in a chain through their x until the end is known. */
static int
alternation(struct rc *c)
{
	struct ere *re = c->re;
	unsigned s = re->n, pend = NONE, j;

	if (sequence(c) != 0)
		return -E_PARSE;
	while (*c->p == '|') {
		c->p++;
		if (insert(c, s) != 0 || emit(c, OP_JMP, pend, 0) != 0)
			return -E_PARSE;
		pend = re->n - 1;
		re->prog[s].op = OP_SPLIT;
		re->prog[s].x = s + 1;
		re->prog[s].y = re->n;
		s = re->n;
		if (sequence(c) != 0)
			return -E_PARSE;
	}
	for (; pend != NONE; pend = j) {
		j = re->prog[pend].x;
		re->prog[pend].x = re->n;
	}
	return 0;
}

/* see ere.h */
int
ere_comp(struct ere *re, struct arena *a, const char *pat, const char **why)
{
	struct rc c;

	memset(re, 0, sizeof(*re));
	memset(&c, 0, sizeof(c));
	*why = NULL;
	re->prog = arena_alloc(a, ERE_MAX_OPS * sizeof(*re->prog));
	re->sets = arena_alloc(a, ERE_MAX_SETS * sizeof(*re->sets));
	if (re->prog == NULL || re->sets == NULL)
		return -E_NOMEM;
	c.p = pat;
	c.re = re;
	if (alternation(&c) == 0 && *c.p == ')')
		(void)err(&c, "a ) has no (");
	if (c.why == NULL)
		(void)emit(&c, OP_MATCH, 0, 0);
	*why = c.why;
	return c.why != NULL ? -E_PARSE : 0;
}

/* The matcher's state: the threads of the step being built. */
struct run {
	const struct ere	*re;
	unsigned	*mark, gen;	/* mark[pc] == gen: on the list */
	unsigned	*stack;
	size_t		 pos, n;
};

/* Follow pc through jumps, splits and anchors at text position pos; the
 * instructions that wait on a byte go on list. 1 when MATCH is reached. */
static int
follow(struct run *r, unsigned pc, unsigned *list, unsigned *cnt)
{
	const struct ere_op *o;
	unsigned sp = 0;

	r->stack[sp++] = pc;
	while (sp > 0) {
		pc = r->stack[--sp];
		if (r->mark[pc] == r->gen)
			continue;
		r->mark[pc] = r->gen;
		o = &r->re->prog[pc];
		switch (o->op) {
		case OP_MATCH:
			return 1;
		case OP_JMP:
			r->stack[sp++] = o->x;
			break;
		case OP_SPLIT:
			r->stack[sp++] = o->y;
			r->stack[sp++] = o->x;
			break;
		case OP_BOL:
			if (r->pos == 0)
				r->stack[sp++] = pc + 1;
			break;
		case OP_EOL:
			if (r->pos == r->n)
				r->stack[sp++] = pc + 1;
			break;
		default:
			list[(*cnt)++] = pc;
		}
	}
	return 0;
}

static int
takes(const struct ere *re, unsigned pc, unsigned char ch)
{
	const struct ere_op *o = &re->prog[pc];

	return o->op == OP_ANY || (o->op == OP_BYTE && o->c == ch) ||
	    (o->op == OP_SET && (re->sets[o->set][ch >> 3] >> (ch & 7) & 1));
}

/* see ere.h */
int
ere_match(const struct ere *re, struct arena *a, const char *s, size_t n)
{
	struct run r;
	unsigned *cur, *next, *t, ncur = 0, nnext, i;

	memset(&r, 0, sizeof(r));
	r.re = re;
	r.n = n;
	r.mark = arena_zalloc(a, re->n * sizeof(*r.mark));
	/* each instruction is expanded once a step, pushing at most two */
	r.stack = arena_alloc(a, (2 * re->n + 1) * sizeof(*r.stack));
	cur = arena_alloc(a, re->n * sizeof(*cur));
	next = arena_alloc(a, re->n * sizeof(*next));
	if (r.mark == NULL || r.stack == NULL || cur == NULL || next == NULL)
		return -E_NOMEM;
	r.gen = 1;
	if (follow(&r, 0, cur, &ncur))
		return 1;
	while (r.pos < n) {
		unsigned char ch = (unsigned char)s[r.pos++];

		r.gen++;
		nnext = 0;
		for (i = 0; i < ncur; i++)
			if (takes(re, cur[i], ch) &&
			    follow(&r, cur[i] + 1, next, &nnext))
				return 1;
		if (follow(&r, 0, next, &nnext))	/* a match may start here */
			return 1;
		t = cur;
		cur = next;
		next = t;
		ncur = nnext;
	}
	return 0;
}
