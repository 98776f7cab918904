/* hook.c - approval rules and hooks as the config and a skill's
 * front-matter declare them (see hook.h): names, globs and the parser.
 * Running them is hook_run.c's; the skill catalog needs only this part. */
#include "skill/hook.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/fm.h"
#include "net/http.h"
#include "base/str.h"
#include "config.h"

#define HOOK_MAX	32		/* hooks in one list */
#define HOOK_TIMEOUT	10		/* seconds, unless timeout: */

static const char *const evnames[HOOK__COUNT] = {
	"pre_tool_use", "post_tool_use", "pre_skill", "post_skill",
	"pre_subagent", "post_subagent", "pre_model_request",
	"post_model_request", "pre_turn", "post_turn",
};

/* see hook.h */
const char *
hook_event_name(enum hook_event ev)
{
	return evnames[ev];
}

/* see hook.h */
int
hook_glob(const char *pat, const char *name)
{
	const char *star = NULL, *back = NULL;

	/* One star remembered: on a mismatch it takes one more character
	 * (linear in practice; these are short names). */
	while (*name != '\0') {
		if (*pat == '*') {
			star = ++pat;
			back = name;
		} else if (*pat == *name) {
			pat++;
			name++;
		} else if (star != NULL) {
			pat = star;
			name = ++back;
		} else
			return 0;
	}
	while (*pat == '*')
		pat++;
	return *pat == '\0';
}

/* see hook.h */
int
hook_name_ok(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || *s == '_' || *s == '-' ||
		    *s == '*'))
			return 0;
	return 1;
}

/* see hook.h */
int
hook_names(struct arena *a, const struct fm_node *nd, const char ***out,
    unsigned *line)
{
	const struct fm_node *it = nd->kind == FM_SEQ ? nd->kids : nd;
	unsigned n = nd->kind == FM_SEQ ? nd->nkids : 1, i;
	const char **v;

	*line = nd->line;
	if (nd->kind != FM_SEQ && nd->kind != FM_SCALAR)
		return -E_INVAL;
	if (n > HOOK_MAX || (v = arena_zalloc(a, (n + 1) *
	    sizeof(*v))) == NULL)
		return n > HOOK_MAX ? -E_INVAL : -E_NOMEM;
	for (i = 0; i < n; i++, it = it->next) {
		*line = it->line;
		if (it->kind != FM_SCALAR || !hook_name_ok(it->s))
			return -E_INVAL;
		v[i] = it->s;
	}
	*out = v;
	return (int)n;
}

static int
perr(char *err, size_t errlen, const char *msg)
{
	snprintf(err, errlen, "%s", msg);
	return -E_INVAL;
}

/* Every mistake in a hook gets the same sentence, naming the field. */
static int
syntax(char *err, size_t errlen, const char *field)
{
	snprintf(err, errlen, "hook '%s': a hook is { event: pre_ or post_ "
	    "tool_use, skill, subagent, model_request or turn; match; command, "
	    "url or pending; timeout: 1-600; on_error }", field);
	return -E_INVAL;
}

/* One { event, match, command | url | pending, timeout, on_error } into
 * h. */
static int
parse_one(struct arena *a, const struct fm_node *m, const char *dir,
    struct hook *h, unsigned *line, char *err, size_t errlen)
{
	const struct fm_node *k;
	struct http_url u;
	unsigned long v;
	char *end;
	int ev = -1, handlers = 0, onerr = -1;

	memset(h, 0, sizeof(*h));
	h->dir = dir;
	h->timeout_s = HOOK_TIMEOUT;
	for (k = m->kids; k != NULL; k = k->next) {
		*line = k->line;
		if (k->kind != FM_SCALAR || k->n == 0)
			return syntax(err, errlen, k->key);
		if (strcmp(k->key, "event") == 0) {
			for (ev = 0; ev < HOOK__COUNT &&
			    strcmp(evnames[ev], k->s) != 0; ev++)
				;
			if (ev == HOOK__COUNT)
				return syntax(err, errlen, k->key);
			h->event = (unsigned char)ev;
		} else if (strcmp(k->key, "match") == 0) {
			if (!hook_name_ok(k->s))
				return syntax(err, errlen, k->key);
			if (strcmp(k->s, "*") != 0 && (h->match =
			    arena_strdup(a, k->s)) == NULL)
				return -E_NOMEM;
		} else if (strcmp(k->key, "command") == 0) {
			h->kind = HOOK_COMMAND;
			h->target = k->s;
			handlers++;
		} else if (strcmp(k->key, "url") == 0) {
			if (http_url_parse(a, k->s, &u) != 0)
				return syntax(err, errlen, k->key);
			h->kind = HOOK_HTTP;
			h->target = k->s;
			handlers++;
		} else if (strcmp(k->key, "pending") == 0) {
			if (strcmp(k->s, "true") != 0)
				return syntax(err, errlen, k->key);
			h->kind = HOOK_PENDING;
			handlers++;
		} else if (strcmp(k->key, "timeout") == 0) {
			v = strtoul(k->s, &end, 10);
			if (*end != '\0' || *k->s < '0' || *k->s > '9' ||
			    v < 1 || v > 600)
				return syntax(err, errlen, k->key);
			h->timeout_s = (unsigned short)v;
		} else if (strcmp(k->key, "on_error") == 0) {
			if (strcmp(k->s, "deny") != 0 &&
			    strcmp(k->s, "allow") != 0)
				return perr(err, errlen, "hook 'on_error': deny "
				    "or allow");
			onerr = k->s[0] == 'd';
		} else
			return syntax(err, errlen, k->key);
	}
	*line = m->line;
	if (h->target != NULL && (h->target = arena_strdup(a,
	    h->target)) == NULL)
		return -E_NOMEM;
	if (ev < 0 || handlers != 1)
		return syntax(err, errlen, ev < 0 ? "event" : "command");
	/* A guard fails closed; a post hook only watches. */
	h->deny_on_error = (unsigned char)(onerr >= 0 ? onerr : !(ev & 1));
	/* A pause resumes at a tool call; the other steps have none. */
	if (h->kind == HOOK_PENDING && ev != HOOK_PRE_TOOL &&
	    ev != HOOK_PRE_SKILL && ev != HOOK_PRE_SUBAGENT)
		return perr(err, errlen, "hook 'pending' is for pre_tool_use, "
		    "pre_skill and pre_subagent");
	return 0;
}

/* see hook.h */
int
hook_parse(struct arena *a, const struct fm_node *nd, const char *dir,
    struct hook **out, unsigned *n, unsigned *line, char *err, size_t errlen)
{
	const struct fm_node *m;
	struct hook *v;
	int e;

	*line = nd->line;
	*n = 0;
	if (!HAVE_HOOKS)
		return perr(err, errlen, "'hooks': this skillbox was built "
		    "without hooks (HOOKS=0)");
	if (nd->kind != FM_SEQ || nd->nkids > HOOK_MAX)
		return perr(err, errlen, "'hooks' must be a list of at most 32 "
		    "hooks");
	if ((v = arena_zalloc(a, (nd->nkids + 1) * sizeof(*v))) == NULL)
		return -E_NOMEM;
	for (m = nd->kids; m != NULL; m = m->next) {
		*line = m->line;
		if (m->kind != FM_MAP)
			return syntax(err, errlen, "-");
		if ((e = parse_one(a, m, dir, &v[*n], line, err, errlen)) != 0)
			return e;
		(*n)++;
	}
	*out = v;
	return 0;
}

/* see hook.h */
int
hook_rules_fm(struct arena *a, const struct fm_node *map, const char *dir,
    struct hook_rules *r, unsigned *line, char *err, size_t errlen)
{
	const struct fm_node *nd;
	struct hook *h = NULL;
	const char **v;
	int n;

	memset(r, 0, sizeof(*r));
	if ((nd = fm_get(map, "approve")) != NULL && !fm_is_null(nd)) {
		if ((n = hook_names(a, nd, &v, line)) < 0) {
			if (n == -E_INVAL)
				snprintf(err, errlen, "'approve' must be a list "
				    "of tool or skill names ('*' any "
				    "characters)");
			return n;
		}
		r->approve = v;
		r->napprove = (unsigned)n;
	}
	if ((nd = fm_get(map, "hooks")) != NULL && !fm_is_null(nd)) {
		if ((n = hook_parse(a, nd, dir, &h, &r->nhooks, line, err,
		    errlen)) != 0)
			return n;
		r->hooks = h;
	}
	return 0;
}
