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

static int
push(struct walk *w, struct skill *sk)
{
	struct skill **nv;
	unsigned ncap;

	if (w->n == w->cap) {
		if (w->n >= SKILL_MAX_COUNT)
			return -E_LIMIT;
		ncap = w->cap ? w->cap * 2 : 64;
		if ((nv = mem_realloc(w->v, ncap * sizeof(*nv))) == NULL)
			return -E_NOMEM;
		w->v = nv;
		w->cap = ncap;
	}
	w->v[w->n++] = sk;
	return 0;
}

/* Copy a parsed skill into the new registry as one block, the struct and
 * then its strings, and index it. */
static int
keep(struct walk *w, const struct skill_osk *o)
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
	int e;

	share = strcmp(base, s->name) == 0;	/* the usual case */
	for (i = 0; i < 9; i++) {
		len[i] = src[i] != NULL && !(i == 1 && share) ?
		    strlen(src[i]) + 1 : 0;
		total += len[i];
	}
	if ((k = arena_alloc(w->keep, total)) == NULL)
		return -E_NOMEM;
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
	if ((e = push(w, &k->sk)) == -E_LIMIT)
		reg_diag(w, s->dir, "limit", "more than %d skills: the rest "
		    "are ignored", SKILL_MAX_COUNT);
	return e;
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
dedup(struct walk *w)
{
	struct skill **v = w->v;
	unsigned i, j, k, win;

	if (w->n > 1)
		qsort(v, w->n, sizeof(*v), cmp_skill);
	for (i = j = 0; i < w->n; i = k) {
		for (k = i + 1; k < w->n && strcmp(v[k]->name, v[i]->name) == 0;
		    k++)
			;
		win = k - 1;
		while (win > i && v[win - 1]->root == v[k - 1]->root)
			win--;
		for (; i < k; i++)
			if (i != win)
				reg_diag(w, v[i]->dir, "override", "skill '%s' "
				    "here is %s %s", v[i]->name,
				    v[i]->root == v[win]->root ?
				    "a duplicate of" : "overridden by",
				    v[win]->dir);
		v[j++] = v[win];
	}
	w->n = j;
}

/* Build the registry into `next`. */
static int
build(struct skill_reg *r, struct arena *next, struct skill ***v,
    unsigned *n, uint64_t *stamp)
{
	struct skill **nv;
	struct arena tmp;
	struct walk *w;
	int e;

	arena_init(&tmp, "scan");
	if ((w = walk_new(&tmp, r, W_KEEP)) == NULL)
		return -E_NOMEM;
	w->keep = next;
	if ((e = walk_roots(w)) == 0) {
		dedup(w);
		if (w->n > 0 && w->n < w->cap &&	/* give the tail back */
		    (nv = mem_realloc(w->v, w->n * sizeof(*nv))) != NULL)
			w->v = nv;
		*v = w->v;
		*n = w->n;
		*stamp = w->stamp;
	} else
		mem_free(w->v);
	arena_reset(&tmp);
	return e;
}

/* see skill.h */
int
skill_reg_scan(struct skill_reg *r)
{
	struct arena *next = &r->a[r->cur ^ 1];
	struct skill **v = NULL;
	unsigned n = 0;
	uint64_t stamp = 0;
	int e;

	arena_reset(next);
	e = build(r, next, &v, &n, &stamp);
	if (e == -E_NOMEM && r->n > 0) {
		/* Old and new do not fit side by side: drop the old. */
		skill_reg_free(r);
		next = &r->a[r->cur ^ 1];
		e = build(r, next, &v, &n, &stamp);
	}
	if (e != 0) {
		arena_reset(next);
		return e;
	}
	mem_free(r->v);
	r->v = v;
	r->n = n;
	r->stamp = stamp;
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
	r->v = NULL;
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

/* see skill.h */
struct skill *
skill_find(const struct skill_reg *r, const char *name)
{
	unsigned lo = 0, hi = r->n, mid;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = strcmp(name, r->v[mid]->name);
		if (c == 0)
			return r->v[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
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
