/* crew.c - a .skilled_crew.yaml as the configuration, or beside a
 * skillbox.yaml (crew: PATH): its agents, skills, commands and MCP servers
 * into struct cfg (see cfg.h for the file and what is read). */
#include "agent/crew.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/fm.h"
#include "fmt/json.h"
#include "base/log.h"
#include "skill/mcp_spec.h"
#include "config.h"

/* see crew.h */
int
crew_is_file(const char *path)
{
	static const char sfx[] = ".skilled_crew.yaml";
	size_t n = strlen(path);

	return n >= sizeof(sfx) - 1 && strcmp(path + n - (sizeof(sfx) - 1),
	    sfx) == 0;
}

/* A string value, or NULL after the error. */
static const char *
crew_str(struct cfg_ld *l, const struct fm_node *nd)
{
	if (nd->kind == FM_SCALAR && nd->n > 0)
		return nd->s;
	cfg_bad(l, -E_INVAL, nd->line, "'%s' must be a string", nd->key);
	return NULL;
}

/* A list of maps, each with exactly the string keys names[0..n); item k
 * into out[k * n ..]. The number of items, or <0 after the error. */
static int
crew_items(struct cfg_ld *l, const struct fm_node *nd, const char *const *names,
    unsigned n, const char **out, unsigned max)
{
	const struct fm_node *it, *f;
	unsigned k = 0, i;

	if (nd->kind != FM_SEQ)
		return cfg_bad(l, -E_INVAL, nd->line, "'%s' must be a list",
		    nd->key);
	for (it = nd->kids; it != NULL; it = it->next, k++) {
		if (k == max)
			return cfg_bad(l, -E_INVAL, it->line,
			    "'%s': more than %u entries", nd->key, max);
		if (it->kind != FM_MAP)
			return cfg_bad(l, -E_INVAL, it->line,
			    "an entry of '%s' must be a map", nd->key);
		memset(out + k * n, 0, n * sizeof(*out));
		for (f = it->kids; f != NULL; f = f->next) {
			for (i = 0; i < n && strcmp(f->key, names[i]) != 0; i++)
				;
			if (i == n)
				return cfg_bad(l, -E_INVAL, f->line,
				    "unknown key '%s.%.40s'", nd->key, f->key);
			if ((out[k * n + i] = crew_str(l, f)) == NULL)
				return -E_INVAL;
		}
		for (i = 0; i < n; i++)
			if (out[k * n + i] == NULL)
				return cfg_bad(l, -E_INVAL, it->line,
				    "an entry of '%s' needs %s", nd->key,
				    names[i]);
	}
	return (int)k;
}

static struct fm_node *
crew_node(struct cfg_ld *l, struct fm_node *up, enum fm_kind kind,
    const char *key, const char *s)
{
	struct fm_node *nd, **p;

	if ((nd = arena_zalloc(&l->tmp, sizeof(*nd))) == NULL)
		return NULL;
	nd->kind = kind;
	nd->key = key;
	nd->s = s;
	nd->n = s != NULL ? strlen(s) : 0;
	nd->line = 1;
	for (p = &up->kids; *p != NULL; p = &(*p)->next)
		;
	*p = nd;
	up->nkids++;
	return nd;
}

/* A JSON string, or NULL (after the error when it is not one). */
static char *
crew_jstr(struct cfg_ld *l, const struct json_doc *d, int t, const char *path,
    const char *what)
{
	char *s = NULL;

	if (d->t[t].type != JSON_STR || json_str(d, &l->tmp, t, &s, NULL) != 0)
		cfg_bad(l, -E_INVAL, 0, "%s: '%s' must be a string", path,
		    what);
	return s;
}

/* Each string of JSON array or object t (an object's as "KEY=VALUE") as
 * a scalar in seq. */
static int
crew_strs(struct cfg_ld *l, const struct json_doc *d, int t,
    struct fm_node *seq, const char *path)
{
	int obj = d->t[t].type == JSON_OBJ, i;
	char *k, *s;

	for (i = t + 1; i < json_skip(d, t); i = json_skip(d, i + obj)) {
		if ((s = crew_jstr(l, d, i + obj, path, seq->key)) == NULL)
			return -E_INVAL;
		if (obj && (json_str(d, &l->tmp, i, &k, NULL) != 0 ||
		    (s = arena_printf(&l->tmp, "%s=%s", k, s)) == NULL))
			return -E_NOMEM;
		if (crew_node(l, seq, FM_SCALAR, NULL, s) == NULL)
			return -E_NOMEM;
	}
	return 0;
}

/* An MCP server's JSON file ({name, type, command, args, env, cwd}) as the
 * map mcp_parse reads: its tools for `agents` (NULL: the entry agent).
 * The server goes to v[*n]. */
static int
crew_mcp(struct cfg_ld *l, const char *rel, struct fm_node *agents,
    struct mcp_server *v, unsigned *n, unsigned line)
{
	struct fm_node top, *srv, *nd;
	struct mcp_server *ms;
	struct json_doc d;
	const char *path = cfg_resolve(l, rel), *base;
	char *text, why[200], *k, *s, *p;
	int e, t, args = -1, env = -1;
	unsigned cnt, eline;
	size_t len;

	if (path == NULL)
		return -E_NOMEM;
	if (*n == MCP_MAX_SERVERS)
		return cfg_bad(l, -E_INVAL, line, "more than %d MCP servers",
		    MCP_MAX_SERVERS);
	if ((e = cfg_read_file(l, path, 64u << 10, &text, &len)) != 0)
		return e == -E_NOMEM ? e : cfg_bad(l, e, line,
		    "MCP server file '%s': %s", path, cfg_read_why(e, 64u << 10,
		    why, sizeof(why)));
	if ((e = json_parse(&l->tmp, text, len, 1024, &d)) != 0 ||
	    d.t[0].type != JSON_OBJ)
		return e == -E_NOMEM ? e : cfg_bad(l, -E_PARSE, line,
		    "%s: not a JSON object", path);
	memset(&top, 0, sizeof(top));
	top.kind = FM_MAP;
	base = strrchr(path, '/') + 1;
	if ((srv = crew_node(l, &top, FM_MAP, arena_strndup(&l->tmp, base,
	    strcspn(base, ".")), NULL)) == NULL || srv->key == NULL ||
	    (nd = crew_node(l, srv, FM_SEQ, "command", NULL)) == NULL)
		return -E_NOMEM;
	for (t = 1; t < (int)d.n; t = json_skip(&d, t + 1)) {
		if (json_str(&d, &l->tmp, t, &k, NULL) != 0)
			return -E_NOMEM;
		if (strcmp(k, "args") == 0 || strcmp(k, "env") == 0) {
			if (d.t[t + 1].type != (k[0] == 'a' ? JSON_ARR :
			    JSON_OBJ))
				return cfg_bad(l, -E_INVAL, 0,
				    "%s: '%s' must be %s", path, k, k[0] ==
				    'a' ? "a list of strings" :
				    "an object of strings");
			*(k[0] == 'a' ? &args : &env) = t + 1;
			continue;
		}
		if (strcmp(k, "name") != 0 && strcmp(k, "type") != 0 &&
		    strcmp(k, "command") != 0 && strcmp(k, "cwd") != 0) {
			log_warn("%s: key '%.40s' ignored", path, k);
			continue;
		}
		if ((s = crew_jstr(l, &d, t + 1, path, k)) == NULL)
			return -E_INVAL;
		if (k[0] == 'n') {		/* '_' in tool names: '-' */
			for (srv->key = p = s; *p != '\0'; p++)
				*p = *p == '_' ? '-' : *p;
		} else if (k[0] == 't' && strcmp(s, "stdio") != 0)
			return cfg_bad(l, -E_INVAL, 0, "%s: type '%.20s': "
			    "skillbox runs MCP servers on stdio only", path, s);
		else if (k[1] == 'o' && crew_node(l, nd, FM_SCALAR, NULL, s) ==
		    NULL)
			return -E_NOMEM;
		else if (k[1] == 'w' && crew_node(l, srv, FM_SCALAR, "root",
		    s) == NULL)
			return -E_NOMEM;
	}
	if (nd->nkids == 0)
		return cfg_bad(l, -E_INVAL, 0, "%s: needs a command", path);
	if ((args >= 0 && (e = crew_strs(l, &d, args, nd, path)) != 0) ||
	    (env >= 0 && ((nd = crew_node(l, srv, FM_SEQ, "env", NULL)) ==
	    NULL || (e = crew_strs(l, &d, env, nd, path)) != 0)))
		return nd == NULL ? -E_NOMEM : e;
	if (agents != NULL) {
		if ((nd = crew_node(l, srv, FM_SEQ, "agents", NULL)) == NULL)
			return -E_NOMEM;
		nd->kids = agents->kids;
		nd->nkids = agents->nkids;
	}
	if ((e = mcp_parse(l->a, &top, arena_strdup(l->a, l->dir), NULL, &ms,
	    &cnt, &eline, why, sizeof(why))) != 0)
		return e == -E_NOMEM ? e : cfg_bad(l, e, 0, "%s: %s", path,
		    why);
	for (t = 0; t < (int)*n; t++)
		if (strcmp(v[t].name, ms->name) == 0)
			return cfg_bad(l, -E_INVAL, line, "two MCP servers "
			    "named '%s'", ms->name);
	v[(*n)++] = *ms;
	return 0;
}

/* "openai/M" or "lmstudio/M": the model as the crew's own runtime names
 * it, from $SKILLET_MODEL_RUNNER, the AGENTS.md, or its default. */
static int
crew_model(struct cfg_ld *l, const char *path)
{
	struct cfg *c = l->c;
	const char *spec = getenv("SKILLET_MODEL_RUNNER"), *base;
	int lm;

	if (spec == NULL || *spec == '\0')
		spec = l->crew_model != NULL ? l->crew_model :
		    "openai/gpt-4.1-nano";
	lm = strncmp(spec, "lmstudio/", 9) == 0;
	if ((!lm && strncmp(spec, "openai/", 7) != 0) || spec[lm ? 9 : 7] ==
	    '\0')
		return cfg_bad(l, -E_INVAL, 0, "model '%.60s': a crew's model "
		    "is openai/MODEL or lmstudio/MODEL", spec);
	base = getenv(lm ? "LMSTUDIO_BASE_URL" : "OPENAI_BASE_URL");
	if (base == NULL || *base == '\0')
		base = lm ? "http://localhost:1234/v1" : "https://api.openai.com";
	if (!cfg_is_url(base))
		return cfg_bad(l, -E_INVAL, 0, "$%s: not an http:// or "
		    "https:// URL", lm ? "LMSTUDIO_BASE_URL" :
		    "OPENAI_BASE_URL");
	c->provider = "openai";
	if ((c->model = arena_strdup(l->a, spec + (lm ? 9 : 7))) == NULL ||
	    (c->base_url = arena_strdup(l->a, base)) == NULL)
		return -E_NOMEM;
	cfg_set_src(c, "provider", path);
	cfg_set_src(c, "model", path);
	cfg_set_src(c, "base_url", path);
	return 0;
}

/* Another agent's instructions file (f: its instructionsPath) into
 * *text, read as the entry agent's is; what that left is kept. */
static int
crew_other(struct cfg_ld *l, const struct fm_node *f, const char **text)
{
	struct cfg *c = l->c;
	const char *file = c->agents_file, *ins = c->instructions;
	const char *src = c->src[cfg_find_key("instructions")];
	unsigned line = l->agents_line;
	int e;

	if ((c->agents_file = cfg_resolve(l, f->s)) == NULL)
		return -E_NOMEM;
	l->agents_line = f->line;
	l->other = 1;
	e = cfg_load_agents(l);
	*text = c->instructions;
	l->other = 0;
	l->agents_line = line;
	c->agents_file = file;
	c->instructions = ins;
	c->src[cfg_find_key("instructions")] = src;
	return e;
}

/* One agent of the crew: its skills (into c->skills), the entry agent's
 * instructions, and (MCP builds) its servers into v[*nv]. */
static int
crew_agent(struct cfg_ld *l, const struct fm_node *ag, int entry,
    struct mcp_server *v, unsigned *nv)
{
	static const char *const skf[] = { "name", "folderPath" };
	struct cfg *c = l->c;
	const struct fm_node *f, *sk, *x;
	const char *text;
	const char *it[2 * CFG_MAX_DIRS];
	int k, i, e;

	if (ag->kind != FM_MAP)
		return fm_is_null(ag) ? 0 : cfg_bad(l, -E_INVAL, ag->line,
		    "agent '%.40s' must be a map", ag->key);
	for (f = ag->kids; f != NULL; f = f->next) {
		if (fm_is_null(f))
			continue;
		if (strcmp(f->key, "instructionsPath") == 0) {
			if (crew_str(l, f) == NULL)
				return -E_INVAL;
			if (entry && (c->agents_file = cfg_resolve(l, f->s)) ==
			    NULL)
				return -E_NOMEM;
			if (entry)
				l->agents_line = f->line;
		} else if (strcmp(f->key, "codeWorkerPath") == 0) {
			if (entry)
				return cfg_bad(l, -E_INVAL, f->line,
				    "codeWorkerPath: a JavaScript module; "
				    "skillbox runs agents of instructions and "
				    "skills");
		} else if (strcmp(f->key, "skills") == 0) {
			if ((k = crew_items(l, f, skf, 2, it, CFG_MAX_DIRS)) < 0)
				return k;
			for (i = 0; i < k; i++) {
				if (c->nskills == CFG_MAX_DIRS)
					return cfg_bad(l, -E_INVAL, f->line,
					    "more than %d skills",
					    CFG_MAX_DIRS);
				if ((c->skills[c->nskills++] = cfg_resolve(l,
				    it[2 * i + 1])) == NULL)
					return -E_NOMEM;
			}
		} else if (strcmp(f->key, "mcp_servers") != 0)
			return cfg_bad(l, -E_INVAL, f->line,
			    "unknown key '%.40s' in agent '%.40s'", f->key,
			    ag->key);
	}
	/* Another agent's instructions: for its skills' agents. */
	if (!entry && (f = fm_get(ag, "instructionsPath")) != NULL &&
	    !fm_is_null(f) && (sk = fm_get(ag, "skills")) != NULL &&
	    sk->kind == FM_SEQ) {
		if ((e = crew_other(l, f, &text)) != 0)
			return e;
		for (x = sk->kids; x != NULL; x = x->next, c->nroles++) {
			c->roles[c->nroles].skill = arena_strdup(l->a,
			    fm_get(x, "name")->s);
			c->roles[c->nroles].agent = arena_strdup(l->a, ag->key);
			c->roles[c->nroles].text = text;
		}
	}
	if ((f = fm_get(ag, "mcp_servers")) == NULL || fm_is_null(f))
		return 0;
	if (!HAVE_MCP)
		return cfg_bad(l, -E_INVAL, f->line, "mcp_servers: not in this "
		    "build (MCP=0)");
	{
		/* Another agent's servers: its skills' agents get them. */
		static const char *const mcf[] = { "filePath" };
		struct fm_node *who = NULL, seq;

		sk = fm_get(ag, "skills");

		if (!entry && sk != NULL && sk->kind == FM_SEQ &&
		    sk->nkids > 0) {
			memset(&seq, 0, sizeof(seq));
			seq.kind = FM_SEQ;
			who = &seq;
			for (x = sk->kids; x != NULL; x = x->next)
				if (crew_node(l, who, FM_SCALAR, NULL,
				    fm_get(x, "name")->s) == NULL)
					return -E_NOMEM;
		}
		if ((k = crew_items(l, f, mcf, 1, it, MCP_MAX_SERVERS)) < 0)
			return k;
		for (i = 0; i < k; i++)
			if ((e = crew_mcp(l, it[i], who, v, nv, f->line)) != 0)
				return e;
		return 0;
	}
}

/* The folders that hold the crew's skills/ folders (DIR of
 * DIR/skills/NAME, made real): its scripts share the code there
 * (skilled_crew's `npx tsx ../../_src/todo_script.ts`). Not / nor a
 * folder that holds $HOME: skills in ~/skills would open all of it. */
static int
crew_dirs(struct cfg_ld *l, const char *path)
{
	struct cfg *c = l->c;
	const char *h = getenv("HOME");
	char buf[PATH_MAX], home[PATH_MAX], *s;
	unsigned i, k;
	size_t n;

	if (h == NULL || realpath(h, home) == NULL)
		home[0] = '\0';
	for (i = 0; i < c->nskills; i++) {
		if (realpath(c->skills[i], buf) == NULL ||
		    (s = strrchr(buf, '/')) == NULL)
			continue;
		*s = '\0';
		if ((s = strrchr(buf, '/')) == NULL || strcmp(s + 1, "skills"))
			continue;
		*s = '\0';
		n = strlen(buf);
		if (n == 0 || (home[0] != '\0' && strncmp(home, buf, n) == 0 &&
		    (home[n] == '\0' || home[n] == '/'))) {
			log_warn("%s: %s: its crew folder holds your home "
			    "folder: not opened to the crew's scripts", path,
			    c->skills[i]);
			continue;
		}
		for (k = 0; k < c->ncrew_dirs && strcmp(c->crew_dirs[k], buf);
		    k++)
			;
		if (k < c->ncrew_dirs)
			continue;
		if (k == CFG_CREW_DIRS) {
			log_warn("%s: %s: skills in more than %d crew folders: "
			    "%s not opened to the crew's scripts", path,
			    c->skills[i], CFG_CREW_DIRS, buf);
			continue;
		}
		if ((c->crew_dirs[c->ncrew_dirs++] = arena_strdup(l->a, buf)) ==
		    NULL)
			return -E_NOMEM;
	}
	return 0;
}

/* see crew.h */
int
crew_load(struct cfg_ld *l, const char *path, int alone)
{
	static const char *const cmf[] = { "name", "filePath" };
	struct cfg *c = l->c;
	struct fm_node *root, *nd, *agents = NULL, *ag;
	const char *file = l->file, *dir = l->dir, *entry = NULL;
	const char *it[2 * CFG_MAX_LIST];
	struct mcp_server v[MCP_MAX_SERVERS];
	unsigned nv = 0, i;
	int e, k;

	l->file = path;
	l->crew = 1;
	if ((e = cfg_read_yaml(l, path, &root)) != 0)
		return e;
	if (root->kind != FM_MAP)
		return cfg_bad(l, -E_INVAL, root->line, "a crew must be a map "
		    "of keys");
	c->nskills = 0;
	for (i = 0; i < c->nmcp; i++)	/* skillbox.yaml's first */
		v[nv++] = c->mcp[i];
	for (nd = root->kids; nd != NULL; nd = nd->next) {
		if (fm_is_null(nd))
			continue;
		if (strcmp(nd->key, "version") == 0) {
			if (crew_str(l, nd) == NULL)
				return -E_INVAL;
			if (strcmp(nd->s, "1") != 0 && strncmp(nd->s, "1.", 2))
				return cfg_bad(l, -E_INVAL, nd->line, "version "
				    "'%.20s': skillbox reads crews of version "
				    "1.x", nd->s);
		} else if (strcmp(nd->key, "id") == 0 ||
		    strcmp(nd->key, "entryPointAgent") == 0) {
			if (crew_str(l, nd) == NULL)
				return -E_INVAL;
			if (nd->key[0] == 'e')
				entry = nd->s;
		} else if (strcmp(nd->key, "commands") == 0) {
			if ((k = crew_items(l, nd, cmf, 2, it,
			    CFG_MAX_LIST)) < 0)
				return k;
			for (c->ncmds = 0; c->ncmds < (unsigned)k; c->ncmds++) {
				if ((c->cmds[c->ncmds].name = arena_strdup(l->a,
				    it[2 * c->ncmds])) == NULL ||
				    (c->cmds[c->ncmds].path = cfg_resolve(l,
				    it[2 * c->ncmds + 1])) == NULL)
					return -E_NOMEM;
			}
		} else if (strcmp(nd->key, "agents") == 0) {
			if (nd->kind != FM_MAP)
				return cfg_bad(l, -E_INVAL, nd->line,
				    "'agents' must be a map of agents");
			agents = nd;
		} else if (strcmp(nd->key, "script_runtime") == 0) {
			if ((ag = fm_get(nd, "kind")) != NULL &&
			    ag->kind == FM_SCALAR &&
			    strcmp(ag->s, "container") == 0)
				log_warn("%s:%u: script_runtime container: "
				    "scripts run in skillbox's sandbox; no "
				    "container is built", path, ag->line);
		} else
			return cfg_bad(l, -E_INVAL, nd->line,
			    "unknown key '%.60s'", nd->key);
	}
	if (agents == NULL || agents->nkids == 0)
		return cfg_bad(l, -E_INVAL, 0, "a crew needs agents");
	for (ag = agents->kids; entry != NULL && ag != NULL; ag = ag->next)
		if (strcmp(ag->key, entry) == 0)
			break;
	if (ag == NULL)
		return cfg_bad(l, -E_INVAL, 0, "entryPointAgent '%.40s' is not "
		    "one of the agents", entry);
	if (entry == NULL)
		ag = agents->kids;
	if ((e = crew_agent(l, ag, 1, v, &nv)) != 0)
		return e;
	for (nd = agents->kids; nd != NULL; nd = nd->next)
		if (nd != ag && (e = crew_agent(l, nd, 0, v, &nv)) != 0)
			return e;
	if (nv > 0 && (c->mcp = arena_alloc(l->a, nv * sizeof(*v))) == NULL)
		return -E_NOMEM;
	if (nv > 0)
		memcpy((void *)c->mcp, v, nv * sizeof(*v));
	if (nv > c->nmcp)
		cfg_set_src(c, "mcp_servers", path);
	c->nmcp = nv;
	c->ncrew_dirs = 0;
	if ((e = crew_dirs(l, path)) != 0)
		return e;
	cfg_set_src(c, "skills", path);
	cfg_set_src(c, "crew", l->c->file);
	cfg_set_src(c, "agents_file", path);
	if (l->agents_line != 0 && (e = cfg_load_agents(l)) != 0)
		return e;
	if (alone && (e = crew_model(l, path)) != 0)
		return e;
	l->file = file;
	l->dir = dir;
	return 0;
}
