/* skill.c - the skills registry: discovery under the roots, the catalog,
 * change detection, lookup, validation walks, and confined access to the
 * files inside a skill. Reading one definition file is skill_parse.c.
 */
#include "skill/skill.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "skill/skill_int.h"
#include "base/str.h"
#include "config.h"

static const char *
base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s != NULL && s[1] != '\0' ? s + 1 : path;
}

/* see skill_int.h */
int
skill_inside(const char *root, const char *path)
{
	size_t n = strlen(root);

	if (n == 1 && root[0] == '/')
		return 1;
	return strncmp(root, path, n) == 0 && (path[n] == '/' ||
	    path[n] == '\0');
}

/* Discovery: walk the roots, find skill folders, parse or fingerprint. */

/* Folders that hold tools' state, never skills: not entered. */
static const char *const notdirs[] = { ".git", ".hg", ".svn", ".venv",
    "__pycache__", "node_modules" };

enum walk_mode {
	W_STAMP,	/* fingerprint only */
	W_KEEP,		/* parse into the registry being built */
	W_EACH,		/* parse, hand each skill to fn, keep nothing */
};

/* One walk. The path buffers live here (in a scratch arena), not in the
 * frames of the recursion. */
struct walk {
	const struct skill_reg *r;
	struct parse	 p;
	enum walk_mode	 mode;
	char		 path[PATH_MAX];	/* the folder looked at */
	size_t		 len;
	char		 cut[PATH_MAX];		/* first folder cut */
	char		 real[PATH_MAX];	/* a root, resolved */
	unsigned	 entries, found, ncut, nskip, nunread;
	int		 stopped;		/* SKILL_MAX_ENTRIES hit */
	uint64_t	 stamp;
	int		 err;
	unsigned short	 root;
	struct arena	*keep;			/* W_KEEP: new registry */
	struct skill	**v;			/* on the heap */
	struct skill_ix	**ix;			/* instead of v, past
						 * SKILL_FULL_MAX skills */
	unsigned	 n, cap;
	skill_each_fn	 fn;			/* W_EACH; NULL: check */
	void		*ctx;
};

static uint64_t
fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n-- > 0)
		h = (h ^ *c++) * 0x100000001b3ull;
	return h;
}

static void
reg_diag(struct walk *w, const char *file, const char *rule,
    const char *fmt, ...) ATTR_PRINTF(4, 5);

static void
reg_diag(struct walk *w, const char *file, const char *rule,
    const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (w->mode == W_STAMP || w->r->diag == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	w->r->diag(w->r->diag_ctx, SKILL_WARN, file, 0, rule, msg);
}

/* Append "/name" to w->path. Returns -1 when it would not fit. */
static int
path_push(struct walk *w, const char *name)
{
	size_t n = strlen(name);
	int sep = w->len > 0 && w->path[w->len - 1] != '/';

	if (w->len + (size_t)sep + n >= sizeof(w->path))
		return -1;
	if (sep)
		w->path[w->len++] = '/';
	memcpy(w->path + w->len, name, n + 1);
	w->len += n;
	return 0;
}

static void
path_pop(struct walk *w, size_t len)
{
	w->len = len;
	w->path[len] = '\0';
}

/* Which definition file the folder w->path holds, or -1. */
static int
def_file(struct walk *w, struct stat *st)
{
	size_t len = w->len, i;
	int which = -1;

	for (i = 0; i < ARRAY_LEN(skill_deffiles) && which < 0; i++) {
		if (path_push(w, skill_deffiles[i]) != 0)
			break;
		if (stat(w->path, st) == 0 && S_ISREG(st->st_mode))
			which = (int)i;
		path_pop(w, len);
	}
	return which;
}

/* The name of a root folder given as "." or "..": its real name. */
static const char *
root_name(struct walk *w)
{
	const char *b = base_name(w->path);

	if (strcmp(b, ".") != 0 && strcmp(b, "..") != 0)
		return b;
	return realpath(w->path, w->real) != NULL ? base_name(w->real) : b;
}

/* Room in the array being filled (v or ix) for one more. */
static int
grow(struct walk *w)
{
	unsigned ncap;
	void *nv;

	if (w->n < w->cap)
		return 0;
	if (w->n >= SKILL_MAX_COUNT)
		return -E_LIMIT;
	ncap = w->cap ? w->cap * 2 : 64;
	nv = w->ix != NULL ? mem_realloc(w->ix, ncap * sizeof(*w->ix)) :
	    mem_realloc(w->v, ncap * sizeof(*w->v));
	if (nv == NULL)
		return -E_NOMEM;
	if (w->ix != NULL)
		w->ix = nv;
	else
		w->v = nv;
	w->cap = ncap;
	return 0;
}

/* The index of a large registry: a record per skill, the name and the
 * folder below its root ("" when it is the name, "." for the root
 * itself) one after the other in s. */
struct skill_ix {
	unsigned	 flags;
	unsigned char	 root;
	char		 s[];
};

/* The skills of an index read again, kept until the next scan. */
struct skill_got {
	const struct skill_ix	*x;
	struct skill		*sk;
	struct skill_got	*next;
};

struct skill_lazy {
	struct arena		*a;		/* the live registry's */
	struct skill_got	*got;
};

static const char *
ix_rel(const struct skill_ix *x)
{
	return x->s + strlen(x->s) + 1;
}

static size_t
ix_size(const struct skill_ix *x)
{
	const char *rel = ix_rel(x);

	return (size_t)(rel - (const char *)x) + strlen(rel) + 1;
}

/* Where skill_reg_scan took `dir` from: its root, as the walk trims it. */
static size_t
root_len(const char *root)
{
	size_t n = strlen(root);

	while (n > 1 && root[n - 1] == '/')
		n--;
	return n;
}

/* The index record of sk, in a. */
static struct skill_ix *
ix_new(struct arena *a, const struct skill_reg *r, const struct skill *sk)
{
	size_t rl = root_len(r->roots[sk->root]), nn = strlen(sk->name) + 1;
	const char *rel = sk->dir + rl;
	struct skill_ix *x;
	size_t n;

	if (*rel == '/')
		rel++;
	if (*rel == '\0')
		rel = ".";
	else if (strcmp(rel, sk->name) == 0)
		rel = "";
	n = strlen(rel) + 1;
	if ((x = arena_alloc(a, sizeof(*x) + nn + n)) == NULL)
		return NULL;
	x->flags = sk->flags;
	x->root = (unsigned char)sk->root;
	memcpy(x->s, sk->name, nn);
	memcpy(x->s + nn, rel, n);
	return x;
}

/* The folder of x, as the scan found it, in buf. -1 when too long. */
static int
ix_dir(const struct skill_reg *r, const struct skill_ix *x, char *buf,
    size_t cap)
{
	const char *root = r->roots[x->root], *rel = ix_rel(x);
	size_t rl = root_len(root);
	int n;

	if (strcmp(rel, ".") == 0)
		n = snprintf(buf, cap, "%.*s", (int)rl, root);
	else
		n = snprintf(buf, cap, "%.*s%s%s", (int)rl, root,
		    root[rl - 1] == '/' ? "" : "/", *rel ? rel : x->s);
	return n >= 0 && (size_t)n < cap ? 0 : -1;
}

/* Past SKILL_FULL_MAX skills: the registry becomes an index. The whole
 * skills kept so far make way for their records. */
static int
to_index(struct walk *w)
{
	struct skill_ix **ix, *x;
	struct arena tmp;
	unsigned i;
	int e = -E_NOMEM;

	arena_init(&tmp, "index");
	if ((ix = mem_alloc(w->cap * sizeof(*ix))) == NULL)
		return -E_NOMEM;
	for (i = 0; i < w->n; i++)
		if ((ix[i] = ix_new(&tmp, w->r, w->v[i])) == NULL)
			goto out;
	arena_reset(w->keep);
	for (i = 0; i < w->n; i++) {
		if ((x = arena_alloc(w->keep, ix_size(ix[i]))) == NULL)
			goto out;
		ix[i] = memcpy(x, ix[i], ix_size(ix[i]));
	}
	mem_free(w->v);
	w->v = NULL;
	w->ix = ix;
	ix = NULL;
	e = 0;
out:
	mem_free(ix);
	arena_reset(&tmp);
	return e;
}

/* Copy a parsed skill into a as one block, the struct and then its
 * strings. */
static struct skill *
skill_copy(struct arena *a, const struct skill_osk *o)
{
	const struct skill *s = &o->sk;
	int osk = (s->flags & SKILL_OSKILL) != 0, share, i;
	const char *src[9] = { s->dir, s->name, s->description, s->triggers,
	    s->default_action, s->allowed_tools, osk ? o->allowed : NULL,
	    osk ? o->prep : NULL, s->actions };
	size_t hdr = osk ? sizeof(*o) : sizeof(*s), len[9], total = hdr;
	const char *base = base_name(s->dir);
	struct skill_osk *k;
	const char **dst[9];
	char *c;

	share = strcmp(base, s->name) == 0;	/* the usual case */
	for (i = 0; i < 9; i++) {
		len[i] = src[i] != NULL && !(i == 1 && share) ?
		    strlen(src[i]) + 1 : 0;
		total += len[i];
	}
	if ((k = arena_alloc(a, total)) == NULL)
		return NULL;
	memcpy(k, o, hdr);
	dst[0] = &k->sk.dir;
	dst[1] = &k->sk.name;
	dst[2] = &k->sk.description;
	dst[3] = &k->sk.triggers;
	dst[4] = &k->sk.default_action;
	dst[5] = &k->sk.allowed_tools;
	dst[6] = osk ? &k->allowed : NULL;
	dst[7] = osk ? &k->prep : NULL;
	dst[8] = &k->sk.actions;
	for (c = (char *)k + hdr, i = 0; i < 9; c += len[i], i++)
		if (len[i] > 0)
			*dst[i] = memcpy(c, src[i], len[i]);
	if (share)
		k->sk.name = k->sk.dir + (base - s->dir);
	return &k->sk;
}

/* Keep a parsed skill in the registry being built: whole, or its record
 * in the index. */
static int
keep(struct walk *w, const struct skill_osk *o)
{
	struct skill_ix *x;
	struct skill *sk;
	int e;

	if (w->ix == NULL && w->n == SKILL_FULL_MAX && (e = to_index(w)) != 0)
		return e;
	if ((e = grow(w)) != 0) {
		if (e == -E_LIMIT)
			reg_diag(w, o->sk.dir, "limit", "more than %d skills: "
			    "the rest are ignored", SKILL_MAX_COUNT);
		return e;
	}
	if (w->ix != NULL) {
		if ((x = ix_new(w->keep, w->r, &o->sk)) == NULL)
			return -E_NOMEM;
		w->ix[w->n++] = x;
	} else {
		if ((sk = skill_copy(w->keep, o)) == NULL)
			return -E_NOMEM;
		w->v[w->n++] = sk;
	}
	return 0;
}

static void
found(struct walk *w, int which, const struct stat *st, unsigned depth)
{
	struct arena_mark m;
	struct skill_osk o;
	uint64_t h = 0xcbf29ce484222325ull;
	int e;

	h = fnv(h, w->path, w->len);
	h = fnv(h, &which, sizeof(which));
	h = fnv(h, &st->st_mtim, sizeof(st->st_mtim));
	h = fnv(h, &st->st_size, sizeof(st->st_size));
	h = fnv(h, &st->st_ino, sizeof(st->st_ino));
	w->stamp += h;
	w->found++;
	if (w->mode == W_STAMP)
		return;
	m = arena_mark(w->p.tmp);
	memset(&o, 0, sizeof(o));
	w->p.fatal = 0;
	e = skill_parse(&w->p, w->path, depth == 0 ? root_name(w) :
	    base_name(w->path), which, &o);
	if (e == 0) {
		o.sk.root = w->root;
		if (w->mode == W_KEEP)
			e = keep(w, &o);
		else if (w->fn != NULL)
			e = w->fn(w->ctx, &o.sk);
	}
	arena_reset_to(w->p.tmp, m);
	if (e < 0)
		w->err = e;
}

static int
is_dir(const struct dirent *de, const char *path)
{
	struct stat st;

	if (de->d_type == DT_DIR)
		return 1;
	if (de->d_type == DT_REG)
		return 0;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);	/* links */
}

/* Look at the folder w->path, `depth` levels below its root: a skill
 * folder, or a folder to search. At SKILL_MAX_DEPTH the search stops, and
 * a folder there that has subfolders is counted as cut. */
static void
walk_dir(struct walk *w, unsigned depth)
{
	struct dirent *de;
	struct stat st;
	size_t len = w->len;
	DIR *d;
	int which;

	if ((which = def_file(w, &st)) >= 0) {
		found(w, which, &st, depth);
		return;
	}
	if ((d = opendir(w->path)) == NULL) {
		w->nunread++;
		reg_diag(w, w->path, "unreadable", "folder not searched: %s",
		    strerror(errno));
		return;
	}
	while (w->err == 0 && (de = readdir(d)) != NULL) {
		if (de->d_type == DT_REG || strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (str_in(notdirs, ARRAY_LEN(notdirs), de->d_name)) {
			w->nskip++;
			continue;
		}
		if (++w->entries > SKILL_MAX_ENTRIES) {
			w->err = -E_LIMIT;
			w->stopped = 1;
			reg_diag(w, w->path, "limit", "search stopped after "
			    "%d folders: the rest is not searched",
			    SKILL_MAX_ENTRIES);
			break;
		}
		if (path_push(w, de->d_name) != 0) {
			w->nunread++;
			reg_diag(w, w->path, "limit", "a path in here is too "
			    "long: not searched");
			continue;
		}
		if (is_dir(de, w->path)) {
			if (depth < SKILL_MAX_DEPTH)
				walk_dir(w, depth + 1);
			else {
				path_pop(w, len);
				if (w->ncut++ == 0)
					memcpy(w->cut, w->path, len + 1);
				break;
			}
		}
		path_pop(w, len);
	}
	closedir(d);
}

static int
walk_roots(struct walk *w)
{
	const struct skill_reg *r = w->r;
	struct stat st;
	unsigned i;

	for (i = 0; i < r->nroots && w->err == 0; i++) {
		w->root = (unsigned short)i;
		w->stamp = fnv(w->stamp, r->roots[i], strlen(r->roots[i]) + 1);
		if (stat(r->roots[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
			reg_diag(w, r->roots[i], "root",
			    "skills folder not found");
			continue;
		}
		path_pop(w, 0);
		if (path_push(w, r->roots[i]) != 0) {
			reg_diag(w, r->roots[i], "root", "path too long");
			continue;
		}
		while (w->len > 1 && w->path[w->len - 1] == '/')
			path_pop(w, w->len - 1);
		walk_dir(w, 0);
	}
	if (w->ncut > 0)
		reg_diag(w, w->cut, "limit", "search stopped at depth %d: "
		    "folders below this one%s not searched", SKILL_MAX_DEPTH,
		    w->ncut > 1 ? " and like it" : "");
	return w->err == -E_LIMIT ? 0 : w->err;
}

/* A walk in a scratch arena; NULL when out of memory. */
static struct walk *
walk_new(struct arena *tmp, const struct skill_reg *r, enum walk_mode mode)
{
	struct walk *w;

	if ((w = arena_zalloc(tmp, sizeof(*w))) == NULL)
		return NULL;
	w->r = r;
	w->mode = mode;
	w->p.a = tmp;
	w->p.tmp = tmp;
	w->p.strict = r->strict;
	w->p.diag = r->diag;
	w->p.ctx = r->diag_ctx;
	return w;
}

static int
cmp_skill(const void *a, const void *b)
{
	const struct skill *x = *(struct skill *const *)a;
	const struct skill *y = *(struct skill *const *)b;
	int c = strcmp(x->name, y->name);

	if (c != 0)
		return c;
	if (x->root != y->root)
		return x->root < y->root ? -1 : 1;
	return strcmp(x->dir, y->dir);
}

/* The folder below the root, to order an index as cmp_skill orders
 * whole skills: the root itself first. */
static const char *
ix_order(const struct skill_ix *x)
{
	const char *rel = ix_rel(x);

	return strcmp(rel, ".") == 0 ? "" : *rel ? rel : x->s;
}

static int
cmp_ix(const void *a, const void *b)
{
	const struct skill_ix *x = *(struct skill_ix *const *)a;
	const struct skill_ix *y = *(struct skill_ix *const *)b;
	int c = strcmp(x->s, y->s);

	if (c != 0)
		return c;
	if (x->root != y->root)
		return x->root < y->root ? -1 : 1;
	return strcmp(ix_order(x), ix_order(y));
}

/* see skill.h */
const char *
skill_reg_name(const struct skill_reg *r, unsigned i)
{
	return r->ix != NULL ? r->ix[i]->s : r->v[i]->name;
}

/* see skill.h */
unsigned
skill_reg_flags(const struct skill_reg *r, unsigned i)
{
	return r->ix != NULL ? r->ix[i]->flags : r->v[i]->flags;
}

static unsigned
reg_root(const struct skill_reg *r, unsigned i)
{
	return r->ix != NULL ? r->ix[i]->root : r->v[i]->root;
}

/* see skill.h */
const struct skill_osk *
skill_osk(const struct skill *sk)
{
	return sk->flags & SKILL_OSKILL ? (const struct skill_osk *)sk : NULL;
}

/* see skill.h */
int
skill_reg_init(struct skill_reg *r, const char *const *roots,
    unsigned nroots, skill_diag_fn diag, void *ctx)
{
	unsigned i;

	memset(r, 0, sizeof(*r));
	if (nroots > SKILL_MAX_ROOTS)
		return -E_LIMIT;
	for (i = 0; i < nroots; i++)
		r->roots[i] = roots[i];
	r->nroots = nroots;
	r->diag = diag;
	r->diag_ctx = ctx;
	arena_init(&r->a[0], "skills");
	arena_init(&r->a[1], "skills");
	return 0;
}

/* Keep one skill per name: the one from the latest root; inside a root,
 * the first folder in path order. */
static void
dedup(struct walk *w, struct skill_reg *r)
{
	unsigned i, j, k, win;
	const char *a, *b;

	r->v = w->v;
	r->ix = w->ix;
	r->n = w->n;
	if (w->n > 1 && w->ix != NULL)
		qsort(w->ix, w->n, sizeof(*w->ix), cmp_ix);
	else if (w->n > 1)
		qsort(w->v, w->n, sizeof(*w->v), cmp_skill);
	for (i = j = 0; i < w->n; i = k) {
		for (k = i + 1; k < w->n && strcmp(skill_reg_name(r, k),
		    skill_reg_name(r, i)) == 0; k++)
			;
		win = k - 1;
		while (win > i && reg_root(r, win - 1) == reg_root(r, k - 1))
			win--;
		for (; i < k; i++) {
			if (i == win || r->diag == NULL)
				continue;
			a = w->v != NULL ? w->v[i]->dir : w->path;
			b = w->v != NULL ? w->v[win]->dir : w->cut;
			if (w->ix != NULL && (ix_dir(r, w->ix[i], w->path,
			    sizeof(w->path)) != 0 || ix_dir(r, w->ix[win],
			    w->cut, sizeof(w->cut)) != 0))
				continue;
			reg_diag(w, a, "override", "skill '%s' here is %s %s",
			    skill_reg_name(r, i), reg_root(r, i) ==
			    reg_root(r, win) ? "a duplicate of" :
			    "overridden by", b);
		}
		if (w->ix != NULL)
			w->ix[j++] = w->ix[win];
		else
			w->v[j++] = w->v[win];
	}
	w->n = j;
}

/* Build the registry into `next`: its v or ix, n, lazy and stamp in *nr
 * (a copy of r). */
static int
build(struct skill_reg *r, struct arena *next, struct skill_reg *nr)
{
	struct arena tmp;
	struct walk *w;
	void *nv;
	int e;

	arena_init(&tmp, "scan");
	*nr = *r;
	nr->lazy = NULL;
	if ((w = walk_new(&tmp, r, W_KEEP)) == NULL)
		return -E_NOMEM;
	w->keep = next;
	if ((e = walk_roots(w)) == 0 && w->ix != NULL &&
	    (nr->lazy = arena_zalloc(next, sizeof(*nr->lazy))) == NULL)
		e = -E_NOMEM;
	if (e == 0) {
		dedup(w, nr);
		nv = w->n == 0 || w->n == w->cap ? NULL : w->ix != NULL ?
		    mem_realloc(w->ix, w->n * sizeof(*w->ix)) :
		    mem_realloc(w->v, w->n * sizeof(*w->v));
		if (nv != NULL && w->ix != NULL)	/* give the tail back */
			w->ix = nv;
		else if (nv != NULL)
			w->v = nv;
		nr->v = w->v;
		nr->ix = w->ix;
		nr->n = w->n;
		nr->stamp = w->stamp;
		if (nr->lazy != NULL)
			nr->lazy->a = next;
	} else {
		mem_free(w->v);
		mem_free(w->ix);
	}
	arena_reset(&tmp);
	return e;
}

/* see skill.h */
int
skill_reg_scan(struct skill_reg *r)
{
	struct arena *next = &r->a[r->cur ^ 1];
	struct skill_reg nr;
	int e;

	arena_reset(next);
	e = build(r, next, &nr);
	if (e == -E_NOMEM && r->n > 0) {
		/* Old and new do not fit side by side: drop the old. */
		skill_reg_free(r);
		next = &r->a[r->cur ^ 1];
		e = build(r, next, &nr);
	}
	if (e != 0) {
		arena_reset(next);
		return e;
	}
	mem_free(r->v);
	mem_free(r->ix);
	r->v = nr.v;
	r->ix = nr.ix;
	r->lazy = nr.lazy;
	r->n = nr.n;
	r->stamp = nr.stamp;
	arena_reset(&r->a[r->cur]);
	r->cur ^= 1;
	return 0;
}

/* see skill.h */
int
skill_reg_stamp(const struct skill_reg *r, uint64_t *stamp)
{
	struct arena tmp;
	struct walk *w;

	arena_init(&tmp, "refresh");
	if ((w = walk_new(&tmp, r, W_STAMP)) == NULL)
		return -E_NOMEM;
	walk_roots(w);
	*stamp = w->stamp;
	arena_reset(&tmp);
	return 0;
}

/* see skill.h */
int
skill_reg_refresh(struct skill_reg *r, int *changed)
{
	uint64_t stamp;

	*changed = 0;
	if (skill_reg_stamp(r, &stamp) != 0)
		return -E_NOMEM;
	if (stamp == r->stamp)
		return 0;
	*changed = 1;
	return skill_reg_scan(r);
}

/* see skill.h */
void
skill_reg_free(struct skill_reg *r)
{
	arena_reset(&r->a[0]);
	arena_reset(&r->a[1]);
	mem_free(r->v);
	mem_free(r->ix);
	r->v = NULL;
	r->ix = NULL;
	r->lazy = NULL;
	r->n = 0;
	r->stamp = 0;
}

/* see skill.h */
int
skill_reg_each(const struct skill_reg *r, skill_each_fn fn, void *ctx)
{
	struct arena tmp;
	struct walk *w;
	int e;

	arena_init(&tmp, "each");
	if ((w = walk_new(&tmp, r, W_EACH)) == NULL)
		return -E_NOMEM;
	w->fn = fn;
	w->ctx = ctx;
	e = walk_roots(w);
	arena_reset(&tmp);
	return e;
}

/* Read the skill of the record x again from its file, into a. NULL when
 * it no longer reads as that skill, or memory ran out. */
static struct skill *
ix_load(const struct skill_reg *r, const struct skill_ix *x, struct arena *a)
{
	struct skill *sk = NULL;
	struct skill_osk o;
	struct arena tmp;
	struct parse p;
	const char *folder;
	char *dir, *real;
	int which = x->flags & SKILL_OSKILL ? 2 :
	    x->flags & SKILL_LOWERCASE ? 1 : 0;

	arena_init(&tmp, "load");
	if ((dir = arena_alloc(&tmp, 2 * PATH_MAX)) == NULL ||
	    ix_dir(r, x, dir, PATH_MAX) != 0)
		goto out;
	real = dir + PATH_MAX;
	folder = base_name(dir);
	if (strcmp(ix_rel(x), ".") == 0 && (strcmp(folder, ".") == 0 ||
	    strcmp(folder, "..") == 0) && realpath(dir, real) != NULL)
		folder = base_name(real);	/* as root_name() does */
	memset(&p, 0, sizeof(p));
	memset(&o, 0, sizeof(o));
	p.a = p.tmp = &tmp;
	p.strict = r->strict;
	if (skill_parse(&p, dir, folder, which, &o) == 0 &&
	    strcmp(o.sk.name, x->s) == 0) {
		o.sk.root = x->root;
		sk = skill_copy(a, &o);
	}
out:
	arena_reset(&tmp);
	return sk;
}

/* The position of `name` in r, or -1. */
static long
reg_pos(const struct skill_reg *r, const char *name)
{
	unsigned lo = 0, hi = r->n, mid;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = strcmp(name, skill_reg_name(r, mid));
		if (c == 0)
			return mid;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

/* see skill.h */
struct skill *
skill_find(const struct skill_reg *r, const char *name)
{
	long i = reg_pos(r, name);
	struct skill_got *g;

	if (i < 0 || r->ix == NULL)
		return i < 0 ? NULL : r->v[i];
	for (g = r->lazy->got; g != NULL; g = g->next)
		if (g->x == r->ix[i])
			return g->sk;
	if ((g = arena_alloc(r->lazy->a, sizeof(*g))) == NULL ||
	    (g->sk = ix_load(r, r->ix[i], r->lazy->a)) == NULL)
		return NULL;
	g->x = r->ix[i];
	g->next = r->lazy->got;
	r->lazy->got = g;
	return g->sk;
}

/* see skill.h */
const struct skill *
skill_reg_get(const struct skill_reg *r, unsigned i, struct arena *a)
{
	return r->ix != NULL ? ix_load(r, r->ix[i], a) : r->v[i];
}

/* see skill.h */
void
skill_reg_filter(struct skill_reg *r, int (*want)(void *ctx,
    const char *name), void *ctx)
{
	unsigned i, k;

	for (i = k = 0; i < r->n; i++) {
		if (!want(ctx, skill_reg_name(r, i)))
			continue;
		if (r->ix != NULL)
			r->ix[k++] = r->ix[i];
		else
			r->v[k++] = r->v[i];
	}
	r->n = k;
}

/* A no-skill finding that says only what is true: a search cut by a
 * bound, or a folder it could not read, has been warned about. */
static void
no_skill(struct walk *w, const char *path)
{
	w->p.file = path;
	if (w->ncut > 0 || w->stopped || w->nunread > 0)
		skill_issue(&w->p, K_FATAL, 0, "no-skill", "no SKILL.md found "
		    "in the folders searched (see the warnings)");
	else
		skill_issue(&w->p, K_FATAL, 0, "no-skill", "no SKILL.md found "
		    "in this folder or below%s", w->nskip > 0 ? " (.git, "
		    "node_modules and the like are not searched)" : "");
}

/* see skill.h */
int
skill_validate(struct arena *a, const char *path, skill_diag_fn diag,
    void *ctx, unsigned *nskills)
{
	struct arena_mark m = arena_mark(a);
	struct skill_reg r;
	struct walk *w;
	struct stat st;
	const char *base;
	int e = 0;

	if (nskills != NULL)
		*nskills = 0;
	memset(&r, 0, sizeof(r));
	r.roots[0] = path;
	r.nroots = 1;
	r.strict = 1;
	r.diag = diag;
	r.diag_ctx = ctx;
	if ((w = walk_new(a, &r, W_EACH)) == NULL)
		return -E_NOMEM;
	w->p.file = path;
	if (stat(path, &st) != 0) {
		skill_issue(&w->p, K_FATAL, 0, "no-skill", "%s",
		    errno == ENOENT ? "not found" : strerror(errno));
		goto out;
	}
	base = base_name(path);
	if (S_ISREG(st.st_mode) && str_in(skill_deffiles,
	    ARRAY_LEN(skill_deffiles), base)) {
		/* A definition file stands for the folder that holds it. */
		r.roots[0] = base == path ? "." : base == path + 1 ? "/" :
		    arena_strndup(a, path, (size_t)(base - path - 1));
		if (r.roots[0] == NULL) {
			e = -E_NOMEM;
			goto out;
		}
	} else if (!S_ISDIR(st.st_mode)) {
		skill_issue(&w->p, K_FATAL, 0, "no-skill", "not a folder or a "
		    "SKILL.md file");
		goto out;
	}
	if ((e = walk_roots(w)) == 0 && w->found == 0)
		no_skill(w, r.roots[0]);
	if (nskills != NULL)
		*nskills = w->found;
out:
	if (e == 0)
		e = (int)w->p.errors;
	arena_reset_to(a, m);
	return e;
}

/* see skill.h */
int
skill_validate_dir(struct arena *a, const char *dir, skill_diag_fn diag,
    void *ctx)
{
	return skill_validate(a, dir, diag, ctx, NULL);
}

/* see skill.h */
int
skill_confine(struct arena *a, const char *dir, const char *rel,
    int must_exist, char **out)
{
	char root[PATH_MAX], full[PATH_MAX], res[PATH_MAX], *slash;
	const char *last;

	if (rel[0] == '/' || rel[0] == '\0')
		return -E_DENIED;
	if (realpath(dir, root) == NULL)
		return -E_NOENT;
	if ((size_t)snprintf(full, sizeof(full), "%s/%s", root, rel) >=
	    sizeof(full))
		return -E_DENIED;
	if (realpath(full, res) != NULL) {
		if (!skill_inside(root, res))
			return -E_DENIED;
	} else {
		if (errno != ENOENT || must_exist)
			return errno == ENOENT ? -E_NOENT : -E_DENIED;
		/* The last component may be missing: check its parent. */
		slash = strrchr(full, '/');
		*slash = '\0';
		last = slash + 1;
		if (strcmp(last, "..") == 0 || strcmp(last, ".") == 0 ||
		    realpath(full, res) == NULL || !skill_inside(root, res))
			return -E_DENIED;
		*out = arena_printf(a, "%s/%s", res, last);
		return *out != NULL ? 0 : -E_NOMEM;
	}
	return (*out = arena_strdup(a, res)) != NULL ? 0 : -E_NOMEM;
}

/* see skill.h */
int
skill_path(const struct skill *sk, struct arena *a, const char *rel,
    int must_exist, char **out)
{
	return skill_confine(a, sk->dir, rel, must_exist, out);
}

struct reswalk {
	struct arena	*a;
	char		 root[PATH_MAX];
	char		 path[PATH_MAX], res[PATH_MAX];	/* scratch */
	char		 rel[PATH_MAX];	/* the entry, from root */
	size_t		 rlen;
	const char	*deffile;
	struct skill_res *v;
	unsigned	 n, cap;
	int		 more, err;
};

static void
res_add(struct reswalk *w, const struct stat *st, int outside)
{
	struct skill_res *nv;

	if (w->n == SKILL_RES_MAX) {
		w->more = 1;
		return;
	}
	if (w->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 16;
		if ((nv = arena_alloc(w->a, w->cap * sizeof(*nv))) == NULL) {
			w->err = -E_NOMEM;
			return;
		}
		if (w->n > 0)
			memcpy(nv, w->v, w->n * sizeof(*nv));
		w->v = nv;
	}
	nv = &w->v[w->n];
	if ((nv->path = arena_strndup(w->a, w->rel, w->rlen)) == NULL) {
		w->err = -E_NOMEM;
		return;
	}
	nv->size = st->st_size;
	nv->dir = S_ISDIR(st->st_mode);
	nv->outside = (unsigned)outside;
	w->n++;
}

/* List the folder w->rel, `depth` levels down. A folder at the depth
 * bound is opened only to see whether the bound leaves anything out. */
static void
res_walk(struct reswalk *w, unsigned depth)
{
	char *path = w->path, *res = w->res;
	size_t rlen = w->rlen, n;
	struct dirent *de;
	struct stat st;
	int outside;
	DIR *d;

	if ((size_t)snprintf(path, PATH_MAX, "%s%s%s", w->root,
	    rlen > 0 ? "/" : "", w->rel) >= PATH_MAX)
		return;
	if ((d = opendir(path)) == NULL) {
		if (depth == 0)
			w->err = -E_IO;
		return;
	}
	while (w->err == 0 && !w->more && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (depth == 0 && strcmp(de->d_name, w->deffile) == 0)
			continue;
		n = strlen(de->d_name);
		if (depth == SKILL_RES_DEPTH ||
		    rlen + 1 + n >= sizeof(w->rel)) {
			w->more = 1;
			break;
		}
		if (rlen > 0)
			w->rel[rlen] = '/';
		memcpy(w->rel + rlen + (rlen > 0), de->d_name, n + 1);
		w->rlen = rlen + (rlen > 0) + n;
		if ((size_t)snprintf(path, PATH_MAX, "%s/%s", w->root,
		    w->rel) < PATH_MAX && lstat(path, &st) == 0) {
			outside = 0;
			if (S_ISLNK(st.st_mode)) {
				if (realpath(path, res) == NULL ||
				    !skill_inside(w->root, res) ||
				    stat(path, &st) != 0)
					outside = 1;
			}
			res_add(w, &st, outside);
			if (!outside && S_ISDIR(st.st_mode))
				res_walk(w, depth + 1);
		}
		w->rlen = rlen;
		w->rel[rlen] = '\0';
	}
	closedir(d);
}

static int
cmp_res(const void *a, const void *b)
{
	return strcmp(((const struct skill_res *)a)->path,
	    ((const struct skill_res *)b)->path);
}

/* see skill.h */
int
skill_resources(const struct skill *sk, struct arena *a,
    struct skill_res **out, unsigned *n, int *more)
{
	struct reswalk *w;
	const char *f;

	if ((w = arena_zalloc(a, sizeof(*w))) == NULL ||
	    (f = skill_file(sk, a)) == NULL)
		return -E_NOMEM;
	w->a = a;
	w->deffile = base_name(f);
	if (realpath(sk->dir, w->root) == NULL)
		return -E_IO;
	res_walk(w, 0);
	if (w->err != 0)
		return w->err;
	if (w->n > 1)
		qsort(w->v, w->n, sizeof(*w->v), cmp_res);
	*out = w->v;
	*n = w->n;
	*more = w->more;
	return 0;
}
