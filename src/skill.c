/* skill.c - the skills registry.
 *
 * Format: Agent Skills (agentskills.io specification): name 1-64 of
 * [a-z0-9-] without leading, trailing or doubled '-', equal to the folder
 * name; description 1-1024; compatibility up to 500; metadata a map of
 * strings; allowed-tools a space-separated list. The lenient loader also
 * takes the variants seen in the wild, with a warning for each.
 */
#include "skill.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fm.h"
#include "str.h"

static const char *const deffiles[] = { "SKILL.md", "skill.md", "oskill.md" };

/* How a finding counts: in strict mode (validate) and when loading. */
enum kind {
	K_WARN,		/* warning everywhere */
	K_RULE,		/* error in strict mode, warning when loading */
	K_FATAL,	/* error in strict mode, skill skipped when loading */
};

struct parse {
	struct arena	*a;		/* where the skill's strings go */
	struct arena	*tmp;		/* file text and YAML tree */
	const char	*file;
	int		 strict;
	unsigned	 errors;
	int		 fatal;
	skill_diag_fn	 diag;
	void		*ctx;
};

static void
issue(struct parse *p, enum kind k, unsigned line, const char *rule,
    const char *fmt, ...)
{
	enum skill_sev sev;
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (k == K_FATAL)
		p->fatal = 1;
	if (p->strict)
		sev = k == K_WARN ? SKILL_WARN : SKILL_ERROR;
	else
		sev = k == K_FATAL ? SKILL_FATAL : SKILL_WARN;
	if (sev != SKILL_WARN)
		p->errors++;
	if (p->diag != NULL)
		p->diag(p->ctx, sev, p->file, line, rule, msg);
}

/* see skill.h */
const char *
skill_name_rule(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > SKILL_NAME_MAX)
		return "name-length";
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return "name-chars";
	if (s[0] == '-' || s[n - 1] == '-' || memmem(s, n, "--", 2) != NULL)
		return "name-hyphen";
	return NULL;
}

static const char *
base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s != NULL && s[1] != '\0' ? s + 1 : path;
}

/* Read at most `max` bytes of a regular file into tmp, NUL-terminated.
 * *size is the file's full size. */
static int
read_head(struct arena *tmp, const char *path, size_t max, char **out,
    size_t *len, off_t *size)
{
	struct stat st;
	size_t want, got = 0;
	ssize_t r;
	char *buf;
	int fd, e = 0;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return errno == ENOENT ? -E_NOENT : -E_IO;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		e = -E_IO;
		goto out;
	}
	*size = st.st_size;
	want = (size_t)st.st_size < max ? (size_t)st.st_size : max;
	if ((buf = arena_alloc(tmp, want + 1)) == NULL) {
		e = -E_NOMEM;
		goto out;
	}
	while (got < want) {
		r = read(fd, buf + got, want - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	buf[got] = '\0';
	*out = buf;
	*len = got;
out:
	close(fd);
	return e;
}

/* Join a scalar or a list of scalars into one string, `sep` between. */
static char *
join(struct parse *p, const struct fm_node *nd, const char *sep)
{
	const struct fm_node *k;
	struct sbuf sb;

	if (nd->kind == FM_SCALAR)
		return arena_strndup(p->a, nd->s, nd->n);
	sbuf_init(&sb, p->a, 0);
	for (k = nd->kids; k != NULL; k = k->next) {
		if (k->kind != FM_SCALAR)
			continue;
		if (sb.len > 0)
			sbuf_adds(&sb, sep);
		sbuf_add(&sb, k->s, k->n);
	}
	return sb.err ? NULL : sb.p;
}

/* allowed-tools: "Read Grep", "Read, Grep" or a YAML list, into one
 * space-separated string. Spaces inside parentheses, as in
 * "Bash(git status:*)", belong to the entry. */
static char *
tools_list(struct parse *p, const struct fm_node *nd, int *commas)
{
	const char *s = nd->s, *e;
	struct sbuf sb;
	int depth = 0;

	if (nd->kind == FM_SEQ)
		return join(p, nd, " ");
	sbuf_init(&sb, p->a, 0);
	for (e = s + nd->n; s < e; s++) {
		if (*s == '(')
			depth++;
		else if (*s == ')' && depth > 0)
			depth--;
		if (depth == 0 && (*s == ',' || *s == ' ' || *s == '\t' ||
		    *s == '\n')) {
			if (*s == ',')
				*commas = 1;
			if (sb.len > 0 && sb.p[sb.len - 1] != ' ')
				sbuf_addc(&sb, ' ');
			continue;
		}
		sbuf_addc(&sb, *s);
	}
	if (sb.len > 0 && sb.p[sb.len - 1] == ' ')
		sbuf_truncate(&sb, sb.len - 1);
	return sb.err ? NULL : sb.p;
}

static int
is_scalar_list(const struct fm_node *nd)
{
	const struct fm_node *k;

	if (nd->kind != FM_SEQ)
		return 0;
	for (k = nd->kids; k != NULL; k = k->next)
		if (k->kind != FM_SCALAR)
			return 0;
	return 1;
}

/* Keys outside the specification that are known from other runtimes. */
static const char *const known_extra[] = {
	"actions", "agent", "argument-hint", "author", "context",
	"disable-model-invocation", "model", "requires", "tags", "triggers",
	"user-invocable", "version", "when_to_use",
};

static int
in_list(const char *const *v, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return 1;
	return 0;
}

/* Fill sk from the front-matter tree. */
static int
from_fm(struct parse *p, struct skill *sk, const struct fm_node *root,
    const char *folder)
{
	static const char *const spec[] = { "allowed-tools", "compatibility",
	    "description", "license", "metadata", "name" };
	const struct fm_node *nd, *k;
	int commas = 0;

	for (k = root->kids; k != NULL; k = k->next) {
		if (in_list(spec, ARRAY_LEN(spec), k->key))
			continue;
		if (in_list(known_extra, ARRAY_LEN(known_extra), k->key))
			issue(p, K_RULE, k->line, "unknown-key", "'%s' is not "
			    "an Agent Skills field (put it under metadata)",
			    k->key);
		else
			issue(p, K_RULE, k->line, "unknown-key",
			    "unknown field '%s'", k->key);
	}

	/* name */
	nd = fm_get(root, "name");
	if (nd == NULL || nd->kind == FM_NULL) {
		issue(p, K_RULE, root->line, "name-missing",
		    "no name: the folder name '%s' is used", folder);
		sk->name = arena_strdup(p->a, folder);
	} else if (nd->kind != FM_SCALAR) {
		issue(p, K_FATAL, nd->line, "name-type", "name must be a string");
	} else {
		const char *rule = skill_name_rule(nd->s, nd->n);

		if (rule != NULL) {
			issue(p, skill_name_rule(folder, strlen(folder)) ?
			    K_FATAL : K_RULE, nd->line, rule,
			    "name '%.80s' must be 1-%d lowercase letters, digits "
			    "and single inner hyphens", nd->s, SKILL_NAME_MAX);
			sk->name = arena_strdup(p->a, folder);
		} else {
			if (strcmp(nd->s, folder) != 0)
				issue(p, K_RULE, nd->line, "name-dir", "name "
				    "'%s' differs from its folder '%s'",
				    nd->s, folder);
			sk->name = arena_strndup(p->a, nd->s, nd->n);
		}
	}

	/* description */
	nd = fm_get(root, "description");
	if (nd == NULL || nd->kind == FM_NULL ||
	    (nd->kind == FM_SCALAR && str_trim((struct str){ nd->s,
	    nd->n }).n == 0))
		issue(p, K_FATAL, nd != NULL ? nd->line : root->line,
		    "description-missing", "no description");
	else if (nd->kind != FM_SCALAR)
		issue(p, K_FATAL, nd->line, "description-type",
		    "description must be a string");
	else {
		if (nd->n > SKILL_DESC_MAX)
			issue(p, K_RULE, nd->line, "description-length",
			    "description is %zu characters, more than %d",
			    nd->n, SKILL_DESC_MAX);
		sk->description = arena_strndup(p->a, nd->s, nd->n);
	}

	if ((nd = fm_get(root, "license")) != NULL && nd->kind != FM_SCALAR)
		issue(p, K_RULE, nd->line, "license-type",
		    "license must be a string");

	if ((nd = fm_get(root, "compatibility")) != NULL) {
		if (nd->kind == FM_SEQ && is_scalar_list(nd))
			issue(p, K_RULE, nd->line, "compatibility-type",
			    "compatibility is a list; the format wants a string");
		else if (nd->kind != FM_SCALAR)
			issue(p, K_RULE, nd->line, "compatibility-type",
			    "compatibility must be a string");
		else if (nd->n > SKILL_COMPAT_MAX)
			issue(p, K_RULE, nd->line, "compatibility-length",
			    "compatibility is %zu characters, more than %d",
			    nd->n, SKILL_COMPAT_MAX);
	}

	if ((nd = fm_get(root, "metadata")) != NULL && nd->kind != FM_NULL) {
		if (nd->kind != FM_MAP)
			issue(p, K_RULE, nd->line, "metadata-type",
			    "metadata must be a map of strings");
		else
			for (k = nd->kids; k != NULL; k = k->next)
				if (k->kind != FM_SCALAR)
					issue(p, K_RULE, k->line,
					    "metadata-type", "metadata '%s' "
					    "must be a string", k->key);
		if ((k = fm_get(nd, "default-action")) != NULL &&
		    k->kind == FM_SCALAR)
			sk->default_action = arena_strndup(p->a, k->s, k->n);
		if ((k = fm_get(nd, "triggers")) != NULL &&
		    (k->kind == FM_SCALAR || is_scalar_list(k)))
			sk->triggers = join(p, k, ", ");
	}

	if ((nd = fm_get(root, "allowed-tools")) != NULL &&
	    nd->kind != FM_NULL) {
		if (nd->kind == FM_SCALAR || is_scalar_list(nd)) {
			sk->allowed_tools = tools_list(p, nd, &commas);
			if (nd->kind == FM_SEQ || commas)
				issue(p, K_RULE, nd->line, "allowed-tools-type",
				    "allowed-tools should be one "
				    "space-separated string");
		} else
			issue(p, K_RULE, nd->line, "allowed-tools-type",
			    "allowed-tools must be a space-separated string");
	}

	/* Variants from other runtimes, loaded for what they mean. */
	if (sk->triggers == NULL && (nd = fm_get(root, "triggers")) != NULL &&
	    (nd->kind == FM_SCALAR || is_scalar_list(nd)))
		sk->triggers = join(p, nd, ", ");
	if ((nd = fm_get(root, "context")) != NULL && nd->kind == FM_SCALAR &&
	    strcmp(nd->s, "fork") == 0)
		sk->flags |= SKILL_FORK;
	if ((nd = fm_get(root, "disable-model-invocation")) != NULL &&
	    nd->kind == FM_SCALAR && strcmp(nd->s, "true") == 0)
		sk->flags |= SKILL_NO_MODEL;
	if ((nd = fm_get(root, "user-invocable")) != NULL &&
	    nd->kind == FM_SCALAR && strcmp(nd->s, "false") == 0)
		sk->flags |= SKILL_NOT_USER;
	return 0;
}

/* oskill.md: Markdown sections, optional front-matter for name. */
struct osk_sec {
	const char	*title;
	const char	*p;
	size_t		 n;
	unsigned	 line, seen;
};

static void
title_norm(const char *s, size_t n, char *out, size_t max)
{
	size_t i, o = 0;

	while (n > 0 && (s[n - 1] == ':' || s[n - 1] == ' ' || s[n - 1] == '\r'))
		n--;
	for (i = 0; i < n && o + 1 < max; i++)
		out[o++] = s[i] == ' ' || s[i] == '_' ? '-' :
		    (s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a' : s[i]);
	out[o] = '\0';
}

/* A list section ("- a", "* b", "a, b") into a space-separated string. */
static char *
osk_list(struct parse *p, const struct osk_sec *s)
{
	const char *c = s->p, *e = s->p + s->n, *w;
	struct sbuf sb;
	unsigned line = s->line;

	sbuf_init(&sb, p->a, 0);
	while (c < e) {
		while (c < e && (*c == ' ' || *c == '\t' || *c == ',' ||
		    *c == '-' || *c == '*' || *c == '`' || *c == '\r' ||
		    *c == '\n'))
			if (*c++ == '\n')
				line++;
		for (w = c; c < e && *c != ' ' && *c != '\t' && *c != ',' &&
		    *c != '\n' && *c != '\r' && *c != '`'; c++)
			;
		if (c == w)
			continue;
		if (skill_name_rule(w, (size_t)(c - w)) != NULL)
			issue(p, K_RULE, line, "oskill-list", "'%.*s' in %s "
			    "is not a skill name", (int)(c - w), w, s->title);
		if (sb.len > 0)
			sbuf_addc(&sb, ' ');
		sbuf_add(&sb, w, (size_t)(c - w));
	}
	return sb.err ? NULL : sb.p;
}

static int
from_oskill(struct parse *p, struct skill *sk, const char *text, size_t n,
    unsigned line, const char *folder)
{
	struct osk_sec sec[] = {
		{ .title = "description" }, { .title = "instructions" },
		{ .title = "preparation" }, { .title = "allowed-skills" },
		{ .title = "allowed-prep-skills" }, { .title = "session" },
	};
	struct osk_sec *cur = NULL;
	const char *c = text, *e = text + n, *nl, *h;
	char t[32];
	size_t i;

	sk->flags |= SKILL_OSKILL;
	for (; c < e; c = nl + 1, line++) {
		if ((nl = memchr(c, '\n', (size_t)(e - c))) == NULL)
			nl = e;
		if (*c != '#') {
			if (cur != NULL)
				cur->n = (size_t)(nl - cur->p) + (nl < e);
			continue;
		}
		for (h = c; h < nl && *h == '#'; h++)
			;
		while (h < nl && *h == ' ')
			h++;
		title_norm(h, (size_t)(nl - h), t, sizeof(t));
		cur = NULL;
		for (i = 0; i < ARRAY_LEN(sec); i++)
			if (strcmp(t, sec[i].title) == 0) {
				cur = &sec[i];
				if (cur->seen++)
					issue(p, K_RULE, line, "oskill-section",
					    "section '%s' appears twice", t);
				cur->p = nl < e ? nl + 1 : e;
				cur->n = 0;
				cur->line = line + 1;
			}
		if (nl == e)
			break;
	}
	if (sk->name == NULL)
		sk->name = arena_strdup(p->a, folder);
	if (sk->description == NULL) {
		struct str d = str_trim((struct str){ sec[0].p, sec[0].n });

		if (!sec[0].seen || d.n == 0)
			issue(p, K_FATAL, 0, "description-missing",
			    "no Description section");
		else {
			if (d.n > SKILL_DESC_MAX)
				issue(p, K_RULE, sec[0].line,
				    "description-length", "description is "
				    "%zu characters, more than %d", d.n,
				    SKILL_DESC_MAX);
			sk->description = str_dup(p->a, d);
		}
	}
	if (!sec[1].seen)
		issue(p, K_RULE, 0, "oskill-section",
		    "no Instructions section");
	if (sec[3].seen) {
		sk->flags |= SKILL_OSK_ALLOWED;
		sk->osk_allowed = osk_list(p, &sec[3]);
	}
	if (sec[4].seen) {
		sk->flags |= SKILL_OSK_PREP;
		sk->osk_prep = osk_list(p, &sec[4]);
	}
	if (sec[5].seen) {
		struct str s = str_trim((struct str){ sec[5].p, sec[5].n });

		if (s.n >= 4 && strncasecmp(s.p, "loop", 4) == 0)
			sk->flags |= SKILL_OSK_LOOP;
		else if (!(s.n >= 3 && strncasecmp(s.p, "sop", 3) == 0))
			issue(p, K_WARN, sec[5].line, "oskill-session",
			    "session is neither 'loop' nor 'sop': SOP is used");
	}
	return 0;
}

/* Is `path` (resolved) inside `root` (resolved)? */
static int
inside(const char *root, const char *path)
{
	size_t n = strlen(root);

	if (n == 1 && root[0] == '/')
		return 1;
	return strncmp(root, path, n) == 0 && (path[n] == '/' ||
	    path[n] == '\0');
}

/* A definition file that is a symlink must resolve inside its folder. */
static int
file_inside(const char *dir, const char *file)
{
	char rd[PATH_MAX], rf[PATH_MAX];
	struct stat st;

	if (lstat(file, &st) != 0 || !S_ISLNK(st.st_mode))
		return 1;
	return realpath(dir, rd) != NULL && realpath(file, rf) != NULL &&
	    inside(rd, rf);
}

/* Parse one skill folder's definition file (deffiles[which]) into a new
 * skill in p->a. Returns NULL on a fatal finding or when out of memory
 * (*err says which). */
static struct skill *
parse_skill(struct parse *p, const char *dir, int which, int *err)
{
	struct fm_node *root;
	struct fm_error fe;
	struct skill *sk;
	struct str yaml, body;
	unsigned yl = 0, bl = 0;
	const char *folder = base_name(dir);
	char *text;
	size_t len;
	off_t size = 0;
	int r;

	*err = 0;
	if ((p->file = arena_printf(p->tmp, "%s/%s", dir, deffiles[which])) ==
	    NULL || (sk = arena_zalloc(p->a, sizeof(*sk))) == NULL) {
		*err = -E_NOMEM;
		return NULL;
	}
	if (which == 1)
		issue(p, K_RULE, 0, "file-name", "the file should be SKILL.md");
	if (!file_inside(dir, p->file)) {
		issue(p, K_FATAL, 0, "file-outside",
		    "a link that leads out of the skill folder");
		return NULL;
	}
	r = read_head(p->tmp, p->file, SKILL_FM_MAX + 8, &text, &len, &size);
	if (r == -E_NOMEM) {
		*err = r;
		return NULL;
	}
	if (r != 0) {
		issue(p, K_FATAL, 0, "file-read", "cannot read: %s",
		    strerror(errno));
		return NULL;
	}
	if (size > SKILL_FILE_MAX) {
		issue(p, K_FATAL, 0, "file-size", "file is %lld bytes, more "
		    "than %u", (long long)size, SKILL_FILE_MAX);
		return NULL;
	}
	r = fm_split(text, len, &yaml, &yl, &body, &bl);
	if (r == -E_PARSE) {
		issue(p, K_FATAL, yl, len < (size_t)size ? "frontmatter-size" :
		    "frontmatter-unclosed", len < (size_t)size ?
		    "front-matter longer than %u bytes" :
		    "front-matter opened here is never closed with '---'",
		    SKILL_FM_MAX);
		return NULL;
	}
	if (r == -E_NOENT && which != 2) {
		issue(p, K_FATAL, 1, "frontmatter-missing",
		    "no front-matter: the file must start with '---'");
		return NULL;
	}
	if (r == 0) {
		if (!str_is_utf8(yaml.p, yaml.n)) {
			issue(p, K_FATAL, yl, "utf8",
			    "front-matter is not valid UTF-8");
			return NULL;
		}
		r = fm_parse(p->tmp, yaml.p, yaml.n, yl, &root, &fe);
		if (r == -E_NOMEM) {
			*err = r;
			return NULL;
		}
		if (r != 0) {
			issue(p, K_FATAL, fe.line, "yaml", "%s", fe.msg);
			return NULL;
		}
		if (root->kind != FM_MAP && !(which == 2 &&
		    root->kind == FM_NULL)) {
			issue(p, K_FATAL, yl, "frontmatter-type",
			    "front-matter must be a YAML mapping");
			return NULL;
		}
		if (which != 2)
			from_fm(p, sk, root, folder);
		else if (root->kind == FM_MAP) {
			const struct fm_node *nd;

			if ((nd = fm_get(root, "name")) != NULL &&
			    nd->kind == FM_SCALAR) {
				if (skill_name_rule(nd->s, nd->n) != NULL) {
					issue(p, K_FATAL, nd->line,
					    skill_name_rule(nd->s, nd->n),
					    "name '%.80s' is not a skill name",
					    nd->s);
					return NULL;
				}
				sk->name = arena_strndup(p->a, nd->s, nd->n);
			}
			if ((nd = fm_get(root, "description")) != NULL &&
			    nd->kind == FM_SCALAR)
				sk->description = arena_strndup(p->a, nd->s,
				    nd->n);
		}
	} else {
		body.p = text;
		body.n = len;
		bl = 1;
	}
	if (which == 2) {
		if (len < (size_t)size) {	/* sections need the whole file */
			r = read_head(p->tmp, p->file, SKILL_FILE_MAX, &text,
			    &len, &size);
			if (r != 0) {
				*err = r == -E_NOMEM ? r : 0;
				return NULL;
			}
			if (fm_split(text, len, &yaml, &yl, &body, &bl) != 0) {
				body.p = text;
				body.n = len;
				bl = 1;
			}
		}
		from_oskill(p, sk, body.p, body.n, bl, folder);
	}
	if (which == 1)
		sk->flags |= SKILL_LOWERCASE;
	if (p->fatal)
		return NULL;
	if (sk->name == NULL || sk->description == NULL) {
		*err = -E_NOMEM;
		return NULL;
	}
	if ((sk->dir = arena_strdup(p->a, dir)) == NULL) {
		*err = -E_NOMEM;
		return NULL;
	}
	return sk;
}

/* Discovery: walk the roots, find skill folders, parse or fingerprint. */
struct walk {
	struct skill_reg *r;
	struct parse	 p;
	struct skill	**tmpv;
	unsigned	 n, cap, entries;
	uint64_t	 stamp;
	int		 parse;		/* 0: fingerprint only */
	int		 err;
	unsigned short	 root;
};

static uint64_t
fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n-- > 0)
		h = (h ^ *c++) * 0x100000001b3ull;
	return h;
}

static int
def_file(const char *dir, struct stat *st)
{
	char path[PATH_MAX];
	size_t i;

	for (i = 0; i < ARRAY_LEN(deffiles); i++) {
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir,
		    deffiles[i]) >= sizeof(path))
			return -1;
		if (stat(path, st) == 0 && S_ISREG(st->st_mode))
			return (int)i;
	}
	return -1;
}

static void
reg_diag(struct skill_reg *r, const char *file, const char *rule,
    const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (r->diag == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->diag(r->diag_ctx, SKILL_WARN, file, 0, rule, msg);
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
		if ((nv = mem_realloc(w->tmpv, ncap * sizeof(*nv))) == NULL)
			return -E_NOMEM;
		w->tmpv = nv;
		w->cap = ncap;
	}
	w->tmpv[w->n++] = sk;
	return 0;
}

static void
found(struct walk *w, const char *dir, int which, const struct stat *st)
{
	struct arena_mark m;
	struct skill *sk;
	uint64_t h = 0xcbf29ce484222325ull;
	int e;

	h = fnv(h, dir, strlen(dir));
	h = fnv(h, &which, sizeof(which));
	h = fnv(h, &st->st_mtim, sizeof(st->st_mtim));
	h = fnv(h, &st->st_size, sizeof(st->st_size));
	h = fnv(h, &st->st_ino, sizeof(st->st_ino));
	w->stamp += h;
	if (!w->parse)
		return;
	m = arena_mark(w->p.tmp);
	w->p.fatal = 0;
	sk = parse_skill(&w->p, dir, which, &e);
	arena_reset_to(w->p.tmp, m);
	if (e != 0) {
		w->err = e;
		return;
	}
	if (sk == NULL)
		return;
	sk->root = w->root;
	if ((e = push(w, sk)) != 0) {
		w->err = e;
		if (e == -E_LIMIT)
			reg_diag(w->r, dir, "limit", "more than %d skills: "
			    "the rest are ignored", SKILL_MAX_COUNT);
	}
}

static void
walk_dir(struct walk *w, const char *dir, unsigned depth)
{
	char path[PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *d;
	int which;

	if ((which = def_file(dir, &st)) >= 0) {
		found(w, dir, which, &st);
		return;
	}
	if (depth >= SKILL_MAX_DEPTH || (d = opendir(dir)) == NULL)
		return;
	while (w->err == 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || de->d_type == DT_REG)
			continue;
		if (++w->entries > SKILL_MAX_ENTRIES) {
			w->err = -E_LIMIT;
			reg_diag(w->r, dir, "limit", "more than %d folders "
			    "read: scan stopped", SKILL_MAX_ENTRIES);
			break;
		}
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir,
		    de->d_name) >= sizeof(path))
			continue;
		if (de->d_type != DT_DIR &&
		    (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)))
			continue;
		walk_dir(w, path, depth + 1);
	}
	closedir(d);
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

static int
walk_roots(struct skill_reg *r, struct walk *w)
{
	struct stat st;
	unsigned i;

	for (i = 0; i < r->nroots && w->err == 0; i++) {
		w->root = (unsigned short)i;
		w->stamp = fnv(w->stamp, r->roots[i], strlen(r->roots[i]) + 1);
		if (stat(r->roots[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
			if (w->parse)
				reg_diag(r, r->roots[i], "root",
				    "skills folder not found");
			continue;
		}
		walk_dir(w, r->roots[i], 0);
	}
	return w->err == -E_LIMIT ? 0 : w->err;
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

/* see skill.h */
int
skill_reg_scan(struct skill_reg *r)
{
	struct arena *next = &r->a[r->cur ^ 1], tmp;
	struct walk w;
	unsigned i, j, k, win;
	int e;

	memset(&w, 0, sizeof(w));
	arena_init(&tmp, "scan");
	w.r = r;
	w.parse = 1;
	w.p.a = next;
	w.p.tmp = &tmp;
	w.p.strict = r->strict;
	w.p.diag = r->diag;
	w.p.ctx = r->diag_ctx;
	arena_reset(next);
	e = walk_roots(r, &w);
	arena_reset(&tmp);
	if (e != 0)
		goto fail;
	if (w.n > 1)		/* w.tmpv is NULL when nothing was found */
		qsort(w.tmpv, w.n, sizeof(*w.tmpv), cmp_skill);

	/* Keep one skill per name: the one from the latest root; inside a
	 * root, the first folder in path order. */
	for (i = j = 0; i < w.n; i = k) {
		for (k = i + 1; k < w.n &&
		    strcmp(w.tmpv[k]->name, w.tmpv[i]->name) == 0; k++)
			;
		win = k - 1;
		while (win > i && w.tmpv[win - 1]->root == w.tmpv[k - 1]->root)
			win--;
		for (; i < k; i++)
			if (i != win)
				reg_diag(r, w.tmpv[i]->dir, "override",
				    "skill '%s' here is %s %s", w.tmpv[i]->name,
				    w.tmpv[i]->root == w.tmpv[win]->root ?
				    "a duplicate of" : "overridden by",
				    w.tmpv[win]->dir);
		w.tmpv[j++] = w.tmpv[win];
	}
	w.n = j;
	if ((r->v = arena_alloc(next, (w.n + 1) * sizeof(*r->v))) == NULL) {
		e = -E_NOMEM;
		goto fail;
	}
	if (w.n > 0)
		memcpy(r->v, w.tmpv, w.n * sizeof(*r->v));
	mem_free(w.tmpv);
	r->n = w.n;
	r->stamp = w.stamp;
	arena_reset(&r->a[r->cur]);
	r->cur ^= 1;
	return 0;
fail:
	mem_free(w.tmpv);
	arena_reset(next);
	return e;
}

/* see skill.h */
int
skill_reg_refresh(struct skill_reg *r, int *changed)
{
	struct walk w;

	memset(&w, 0, sizeof(w));
	w.r = r;
	*changed = 0;
	walk_roots(r, &w);
	if (w.stamp == r->stamp)
		return 0;
	*changed = 1;
	return skill_reg_scan(r);
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

/* see skill.h */
int
skill_validate_dir(struct arena *a, const char *dir, skill_diag_fn diag,
    void *ctx)
{
	struct skill_reg r;
	struct arena tmp;
	struct walk w;
	struct stat st;
	int e;

	memset(&w, 0, sizeof(w));
	memset(&r, 0, sizeof(r));
	arena_init(&tmp, "validate");
	r.roots[0] = dir;
	r.nroots = 1;
	r.diag = diag;
	r.diag_ctx = ctx;
	w.r = &r;
	w.parse = 1;
	w.p.a = a;
	w.p.tmp = &tmp;
	w.p.strict = 1;
	w.p.diag = diag;
	w.p.ctx = ctx;
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		w.p.file = dir;
		issue(&w.p, K_FATAL, 0, "no-skill", "not a folder");
		return (int)w.p.errors;
	}
	e = walk_roots(&r, &w);
	arena_reset(&tmp);
	mem_free(w.tmpv);
	if (e != 0)
		return e;
	if (w.n == 0 && w.p.errors == 0) {
		w.p.file = dir;
		issue(&w.p, K_FATAL, 0, "no-skill",
		    "no SKILL.md found in this folder or below");
	}
	return (int)w.p.errors;
}

/* see skill.h */
const char *
skill_file(const struct skill *sk, struct arena *a)
{
	int which = sk->flags & SKILL_OSKILL ? 2 :
	    sk->flags & SKILL_LOWERCASE ? 1 : 0;

	return arena_printf(a, "%s/%s", sk->dir, deffiles[which]);
}

/* see skill.h */
int
skill_load(const struct skill *sk, struct arena *a, char **fm, char **body,
    unsigned *body_line)
{
	const char *file;
	struct str y, b;
	unsigned yl;
	char *text;
	size_t len;
	off_t size;
	int r;

	if ((file = skill_file(sk, a)) == NULL)
		return -E_NOMEM;
	if ((r = read_head(a, file, SKILL_FILE_MAX, &text, &len, &size)) != 0)
		return r;
	if (size > SKILL_FILE_MAX)
		return -E_LIMIT;
	*fm = NULL;
	if (fm_split(text, len, &y, &yl, &b, body_line) == 0) {
		text[y.p - text + y.n] = '\0';
		*fm = (char *)y.p;
		*body = (char *)b.p;
	} else {
		*body = text;
		*body_line = 1;
	}
	return 0;
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
		if (!inside(root, res))
			return -E_DENIED;
	} else {
		if (errno != ENOENT || must_exist)
			return errno == ENOENT ? -E_NOENT : -E_DENIED;
		/* The last component may be missing: check its parent. */
		slash = strrchr(full, '/');
		*slash = '\0';
		last = slash + 1;
		if (strcmp(last, "..") == 0 || strcmp(last, ".") == 0 ||
		    realpath(full, res) == NULL || !inside(root, res))
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
	const char	*deffile;
	struct skill_res *v;
	unsigned	 n, cap;
	int		 more, err;
};

static void
res_add(struct reswalk *w, const char *rel, const struct stat *st,
    int outside)
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
	if ((nv->path = arena_strdup(w->a, rel)) == NULL) {
		w->err = -E_NOMEM;
		return;
	}
	nv->size = st->st_size;
	nv->dir = S_ISDIR(st->st_mode);
	nv->outside = (unsigned)outside;
	w->n++;
}

static void
res_walk(struct reswalk *w, const char *rel, unsigned depth)
{
	char sub[PATH_MAX], *path = w->path, *res = w->res;
	struct dirent *de;
	struct stat st;
	int outside;
	DIR *d;

	if ((size_t)snprintf(path, PATH_MAX, "%s%s%s", w->root,
	    *rel ? "/" : "", rel) >= PATH_MAX)
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
		if ((size_t)snprintf(sub, sizeof(sub), "%s%s%s", rel,
		    *rel ? "/" : "", de->d_name) >= sizeof(sub))
			continue;
		if ((size_t)snprintf(path, PATH_MAX, "%s/%s", w->root, sub) >=
		    PATH_MAX || lstat(path, &st) != 0)
			continue;
		outside = 0;
		if (S_ISLNK(st.st_mode)) {
			if (realpath(path, res) == NULL ||
			    !inside(w->root, res) || stat(path, &st) != 0)
				outside = 1;
		}
		res_add(w, sub, &st, outside);
		if (!outside && S_ISDIR(st.st_mode) &&
		    !S_ISLNK(st.st_mode) && depth + 1 < SKILL_RES_DEPTH)
			res_walk(w, sub, depth + 1);
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
	res_walk(w, "", 0);
	if (w->err != 0)
		return w->err;
	if (w->n > 1)
		qsort(w->v, w->n, sizeof(*w->v), cmp_res);
	*out = w->v;
	*n = w->n;
	*more = w->more;
	return 0;
}
