/* mcp_spec.c - the mcp_servers of a configuration or a skill (see
 * mcp_spec.h). */
#include "skill/mcp_spec.h"

#include <stdio.h>
#include <string.h>

#include "fmt/fm.h"

static int
perr(char *err, size_t n, const char *fmt, const char *a, const char *b)
{
	snprintf(err, n, fmt, a, b);
	return -E_INVAL;
}

/* A scalar or a list of non-empty scalars, as a NULL-terminated array. */
static const char **
list(struct arena *a, const struct fm_node *nd, int *bad)
{
	const struct fm_node *it = nd->kind == FM_SCALAR ? nd : nd->kids;
	unsigned n = nd->kind == FM_SCALAR ? 1 : nd->nkids, i;
	const char **v;

	*bad = (nd->kind != FM_SCALAR && nd->kind != FM_SEQ) || n == 0 ||
	    n > 32;
	if (*bad || (v = arena_zalloc(a, (n + 1) * sizeof(*v))) == NULL)
		return NULL;
	for (i = 0; i < n; i++, it = it->next) {
		if (it->kind != FM_SCALAR || it->n == 0) {
			*bad = 1;
			return NULL;
		}
		if ((v[i] = arena_strdup(a, it->s)) == NULL)
			return NULL;
	}
	return v;
}

static const char *
path(struct arena *a, const char *dir, const char *s)
{
	return s[0] == '/' ? arena_strdup(a, s) : arena_printf(a, "%s/%s",
	    dir, s);
}

/* 1 to 3600, in digits. */
static int
seconds(const char *s, unsigned *out)
{
	unsigned v = 0;

	for (; *s >= '0' && *s <= '9' && v <= 3600; s++)
		v = v * 10 + (unsigned)(*s - '0');
	*out = v;
	return *s != '\0' || v < 1 || v > 3600 ? -1 : 0;
}

static int
name_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= 24 && strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") == n;
}

static int
one(struct arena *a, const struct fm_node *m, const char *dir,
    const char *skill, struct mcp_server *s, unsigned *line, char *err,
    size_t errlen)
{
	static const char *const entry[] = { "entry", NULL };
	const struct fm_node *f;
	const char ***lst, **v;
	unsigned t;
	int bad;

	if ((s->name = arena_strdup(a, m->key)) == NULL)
		return -E_NOMEM;
	s->agents = (const char **)entry;
	if ((s->skill = skill != NULL) && ((v = arena_zalloc(a,
	    2 * sizeof(*v))) == NULL || (v[0] = arena_strdup(a, skill)) ==
	    NULL))
		return -E_NOMEM;
	if (s->skill)
		s->agents = v;
	s->root = dir;
	s->timeout_ms = 30000;
	if (!name_ok(m->key))
		return perr(err, errlen, "'mcp_servers.%s': a server's name "
		    "is 1 to 24 of A-Z a-z 0-9 -%s", m->key, "");
	if (m->kind != FM_MAP)
		return perr(err, errlen, "'mcp_servers.%s' must be a map with "
		    "command:%s", m->key, "");
	for (f = m->kids; f != NULL; f = f->next) {
		*line = f->line;
		/* A skill's server is its own agent's, in its own folder,
		 * with no secrets: the skill is not trusted with more. */
		if (skill != NULL && (strcmp(f->key, "agents") == 0 ||
		    strcmp(f->key, "root") == 0 || strcmp(f->key,
		    "workspace") == 0 || strcmp(f->key, "env") == 0))
			return perr(err, errlen, "'mcp_servers.%s.%s': not in a "
			    "skill (its server is its own agent's, in its folder, "
			    "without the environment)", m->key, f->key);
		lst = strcmp(f->key, "command") == 0 ? &s->argv :
		    strcmp(f->key, "agents") == 0 ? &s->agents :
		    strcmp(f->key, "tools") == 0 ? &s->tools :
		    strcmp(f->key, "env") == 0 ? &s->env : NULL;
		if (lst != NULL) {
			if ((v = list(a, f, &bad)) == NULL)
				return bad ? perr(err, errlen, "'mcp_servers.%s"
				    ".%s' must be a list of 1 to 32 strings",
				    m->key, f->key) : -E_NOMEM;
			*lst = v;
			continue;
		}
		if (f->kind != FM_SCALAR || f->n == 0)
			return perr(err, errlen, "'mcp_servers.%s.%s' must be "
			    "a value", m->key, f->key);
		if (strcmp(f->key, "allowed_tools") == 0) {
			if ((s->allowed_tools = arena_strdup(a, f->s)) == NULL)
				return -E_NOMEM;
		}
		else if (strcmp(f->key, "root") == 0) {
			if ((s->root = path(a, dir, f->s)) == NULL)
				return -E_NOMEM;
		} else if (strcmp(f->key, "workspace") == 0) {
			if ((s->workspace = path(a, dir, f->s)) == NULL)
				return -E_NOMEM;
		} else if (strcmp(f->key, "timeout") == 0) {
			if (seconds(f->s, &t) != 0)
				return perr(err, errlen, "'mcp_servers.%s.%s' "
				    "must be seconds, 1 to 3600", m->key,
				    f->key);
			s->timeout_ms = t * 1000;
		} else
			return perr(err, errlen, "unknown key 'mcp_servers.%s"
			    ".%s'", m->key, f->key);
	}
	*line = m->line;
	if (s->argv == NULL)
		return perr(err, errlen, "'mcp_servers.%s' needs command: "
		    "[PROGRAM, ARGS...]%s", m->key, "");
	if (strchr(s->argv[0], '/') != NULL && s->argv[0][0] != '/' &&
	    (s->argv[0] = path(a, dir, s->argv[0])) == NULL)
		return -E_NOMEM;
	for (v = s->env; v != NULL && *v != NULL; v++)
		if (strspn(*v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrst"
		    "uvwxyz0123456789_") != strcspn(*v, "=") || **v == '=')
			return perr(err, errlen, "'mcp_servers.%s.env': '%s' "
			    "is not a variable name", m->key, *v);
	return 0;
}

/* see mcp_spec.h */
int
mcp_parse(struct arena *a, const struct fm_node *nd, const char *dir,
    const char *skill, struct mcp_server **out, unsigned *n, unsigned *line,
    char *err, size_t errlen)
{
	const struct fm_node *m;
	struct mcp_server *v;
	int e;

	*line = nd->line;
	*n = 0;
	if (nd->kind != FM_MAP || nd->nkids > MCP_MAX_SERVERS)
		return perr(err, errlen, "'mcp_servers' must be a map of at "
		    "most 8 servers%s%s", "", "");
	if ((v = arena_zalloc(a, nd->nkids * sizeof(*v) + 1)) == NULL)
		return -E_NOMEM;
	if (dir == NULL)
		dir = ".";
	for (m = nd->kids; m != NULL; m = m->next) {
		*line = m->line;
		if ((e = one(a, m, dir, skill, &v[*n], line, err,
		    errlen)) != 0)
			return e;
		(*n)++;
	}
	*out = v;
	return 0;
}
