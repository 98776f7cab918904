/* skill.c - the skills registry.
 *
 * Format: Agent Skills (agentskills.io specification): name 1-64
 * lowercase letters, digits and '-' without leading, trailing or doubled
 * '-', equal to the folder name (letters of any script, as the reference
 * validator reads the text, with a warning that they are not portable);
 * description 1-1024; compatibility 1-500; metadata a map of strings;
 * allowed-tools a space-separated list. Limits count characters (code
 * points), as the specification does. The lenient loader also takes the
 * variants seen in the wild, with a warning for each.
 */
#include "skill/skill.h"

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

#include "fmt/fm.h"
#include "skill/hook.h"
#include "skill/mcp_spec.h"
#include "base/str.h"
#include "config.h"

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
    const char *fmt, ...) ATTR_PRINTF(5, 6);

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

/* UTF-8 text is valid by now (checked first). */
static uint32_t
u8_next(const unsigned char **pp)
{
	const unsigned char *p = *pp;
	uint32_t c = *p++;
	int k = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;

	if (k > 0)
		c &= 0x3fu >> k;
	while (k-- > 0)
		c = c << 6 | (*p++ & 0x3fu);
	*pp = p;
	return c;
}

/* Characters, as the specification counts its limits: code points. */
static size_t
u8_len(const char *s, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		k += ((unsigned char)s[i] & 0xc0) != 0x80;
	return k;
}

/* Blocks that hold no letters or digits: punctuation, symbols, spaces,
 * private use. A short list instead of Unicode tables; the letters and
 * digits of every script pass (and some rarer symbols with them). */
static const uint16_t nonletter[][2] = {
	{ 0x80, 0xbf }, { 0xd7, 0xd7 }, { 0xf7, 0xf7 }, { 0x2000, 0x2bff },
	{ 0x2e00, 0x2e7f }, { 0x3000, 0x303f }, { 0xe000, 0xf8ff },
	{ 0xfe00, 0xfe6f }, { 0xfeff, 0xfeff }, { 0xff00, 0xff0f },
	{ 0xff1a, 0xff20 }, { 0xff3b, 0xff40 }, { 0xff5b, 0xff65 },
	{ 0xfff0, 0xffff },
};

/* The name rules; on "name-chars" *bad is the first character refused
 * (NULL for text that is not UTF-8), *len the length in characters. */
static const char *
name_rule(const char *s, size_t n, size_t *len, const char **bad)
{
	const unsigned char *p = (const unsigned char *)s, *e = p + n, *c;
	uint32_t u;
	size_t i;

	*bad = NULL;
	*len = u8_len(s, n);
	if (*len == 0 || *len > SKILL_NAME_MAX)
		return "name-length";
	if (!str_is_utf8(s, n))
		return "name-chars";
	while (p < e) {
		c = p;
		u = u8_next(&p);
		for (i = 0; i < ARRAY_LEN(nonletter); i++)
			if (u >= nonletter[i][0] && u <= nonletter[i][1])
				break;
		if ((u < 0x80 && !((u >= 'a' && u <= 'z') ||
		    (u >= '0' && u <= '9') || u == '-')) ||
		    i < ARRAY_LEN(nonletter) || (u >= 0x1f000 &&
		    u <= 0x1faff) || u >= 0xe0000) {	/* emoji, tags */
			*bad = (const char *)c;
			return "name-chars";
		}
	}
	if (s[0] == '-' || s[n - 1] == '-')
		return "name-hyphen";
	for (i = 1; i < n; i++)		/* musl's memmem costs 900 bytes */
		if (s[i] == '-' && s[i - 1] == '-')
			return "name-hyphen";
	return NULL;
}

/* see skill.h */
const char *
skill_name_rule(const char *s, size_t n)
{
	const char *bad;
	size_t len;

	return name_rule(s, n, &len, &bad);
}

/* see skill.h */
int
skill_name_is_ascii(const char *s)
{
	for (; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		    *s == '-'))
			return 0;
	return 1;
}

/* What is wrong with a name, in words: one message per rule. */
static void
name_issue(struct parse *p, enum kind k, unsigned line, const char *s,
    size_t n)
{
	const char *rule, *bad;
	size_t len;
	int cl;

	if ((rule = name_rule(s, n, &len, &bad)) == NULL)
		return;
	if (strcmp(rule, "name-length") == 0)
		issue(p, k, line, rule, len == 0 ? "name is empty" :
		    "name '%.80s' is %zu characters, more than %d", s, len,
		    SKILL_NAME_MAX);
	else if (strcmp(rule, "name-hyphen") == 0)
		issue(p, k, line, rule, "name '%.80s' %s", s, s[0] == '-' ?
		    "starts with '-'" : s[n - 1] == '-' ? "ends with '-'" :
		    "has '--' (one hyphen between words)");
	else if (bad == NULL || (unsigned char)*bad <= ' ')
		issue(p, k, line, rule, "name '%.80s' has %s: lowercase "
		    "letters, digits and '-' only", s, bad == NULL ?
		    "bytes not in UTF-8" : "a space or control character");
	else {
		for (cl = 1; ((unsigned char)bad[cl] & 0xc0) == 0x80; cl++)
			;
		issue(p, k, line, rule, "name '%.80s' has '%.*s': lowercase "
		    "letters, digits and '-' only", s, cl, bad);
	}
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

/* A null or "" optional field: loaded as "", reported the same way for
 * both spellings, at the key's line. */
static int
is_empty(const struct fm_node *nd)
{
	return nd->kind == FM_NULL || (nd->kind == FM_SCALAR && nd->n == 0);
}

/* Fill sk from the front-matter tree. */
static int
from_fm(struct parse *p, struct skill *sk, const struct fm_node *root,
    const char *folder)
{
	static const char *const spec[] = { "allowed-tools", "compatibility",
	    "description", "license", "metadata", "name", "approve", "hooks" };
	const struct fm_node *nd, *k;
	struct hook_rules hr;
	char why[160];
	size_t len;
	unsigned line;
	int commas = 0;

	for (k = root->kids; k != NULL; k = k->next) {
		if (str_in(spec, ARRAY_LEN(spec), k->key))
			continue;
		if (str_in(known_extra, ARRAY_LEN(known_extra), k->key))
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
		issue(p, K_RULE, nd != NULL ? nd->line : root->line,
		    "name-missing", "no name: the folder name '%s' is used",
		    folder);
		sk->name = arena_strdup(p->a, folder);
	} else if (nd->kind != FM_SCALAR) {
		issue(p, K_FATAL, nd->line, "name-type", "name must be a string");
	} else if (skill_name_rule(nd->s, nd->n) != NULL) {
		name_issue(p, skill_name_rule(folder, strlen(folder)) ?
		    K_FATAL : K_RULE, nd->line, nd->s, nd->n);
		sk->name = arena_strdup(p->a, folder);
	} else {
		/* No NFKC: the name must match its folder byte for byte. */
		if (strcmp(nd->s, folder) != 0)
			issue(p, K_RULE, nd->line, "name-dir", "name '%s' "
			    "differs from its folder '%s'", nd->s, folder);
		else if (!skill_name_is_ascii(nd->s))
			issue(p, K_WARN, nd->line, "name-ascii", "name '%s' is "
			    "not ASCII: some clients take only a-z, 0-9, '-'",
			    nd->s);
		sk->name = arena_strndup(p->a, nd->s, nd->n);
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
		if ((len = u8_len(nd->s, nd->n)) > SKILL_DESC_MAX)
			issue(p, K_RULE, nd->line, "description-length",
			    "description is %zu characters, more than %d",
			    len, SKILL_DESC_MAX);
		sk->description = arena_strndup(p->a, nd->s, nd->n);
	}

	if ((nd = fm_get(root, "license")) != NULL) {
		if (is_empty(nd))
			issue(p, K_WARN, nd->line, "license-empty",
			    "license is empty");
		else if (nd->kind != FM_SCALAR)
			issue(p, K_RULE, nd->line, "license-type",
			    "license must be a string");
	}

	if ((nd = fm_get(root, "compatibility")) != NULL) {
		if (is_empty(nd))
			issue(p, K_RULE, nd->line, "compatibility-length",
			    "compatibility is empty (1-%d characters, or no "
			    "key)", SKILL_COMPAT_MAX);
		else if (nd->kind == FM_SEQ && is_scalar_list(nd))
			issue(p, K_RULE, nd->line, "compatibility-type",
			    "compatibility is a list; the format wants a string");
		else if (nd->kind != FM_SCALAR)
			issue(p, K_RULE, nd->line, "compatibility-type",
			    "compatibility must be a string");
		else if ((len = u8_len(nd->s, nd->n)) > SKILL_COMPAT_MAX)
			issue(p, K_RULE, nd->line, "compatibility-length",
			    "compatibility is %zu characters, more than %d",
			    len, SKILL_COMPAT_MAX);
	}

	if ((nd = fm_get(root, "metadata")) != NULL && nd->kind != FM_NULL) {
		if (nd->kind != FM_MAP)
			issue(p, K_RULE, nd->line, "metadata-type",
			    "metadata must be a map of strings");
		else
			for (k = nd->kids; k != NULL; k = k->next)
				if (is_empty(k))
					issue(p, K_WARN, k->line,
					    "metadata-empty", "metadata '%s' "
					    "is empty", k->key);
				else if (k->kind != FM_SCALAR)
					issue(p, K_RULE, k->line,
					    "metadata-type", "metadata '%s' "
					    "must be a string", k->key);
		if ((k = fm_get(nd, "default-action")) != NULL &&
		    k->kind == FM_SCALAR)
			sk->default_action = arena_strndup(p->a, k->s, k->n);
		if ((k = fm_get(nd, "triggers")) != NULL &&
		    (k->kind == FM_SCALAR || is_scalar_list(k)))
			sk->triggers = join(p, k, ", ");
		if ((k = fm_get(nd, "actions")) != NULL && k->kind == FM_SCALAR)
			sk->actions = arena_strndup(p->a, k->s, k->n);
		if (HAVE_ORCH && (k = fm_get(nd, "max_agent_depth")) != NULL &&
		    k->kind == FM_SCALAR) {
			if (k->n == 1 && k->s[0] >= '0' && k->s[0] <= '3')
				sk->flags |= (unsigned)(k->s[0] - '0' + 1) <<
				    SKILL_DEPTH_SHIFT;
			else
				issue(p, K_RULE, k->line, "max-agent-depth",
				    "metadata max_agent_depth must be 0 to 3");
		}
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
	/* skillbox's own: approvals and hooks guard the skill, so a skill
	 * whose rules are wrong (or need hooks this build lacks) does not
	 * load. They are read again when the skill is used. */
	if (fm_get(root, "approve") != NULL || fm_get(root, "hooks") != NULL) {
		sk->flags |= SKILL_GATED;
		if (hook_rules_fm(p->tmp, root, ".", &hr, &line, why,
		    sizeof(why)) == -E_INVAL)
			issue(p, K_FATAL, line, "hooks", "%s", why);
	}
	if (HAVE_MCP && (nd = fm_get(root, "mcp_servers")) != NULL) {
		struct mcp_server *ms;
		unsigned n;

		sk->flags |= SKILL_MCP;
		if (mcp_parse(p->tmp, nd, ".", sk->name, &ms, &n, &line, why,
		    sizeof(why)) == -E_INVAL)
			issue(p, K_FATAL, line, "mcp_servers", "%s", why);
	}
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

/* Is the line [c, nl) a Markdown heading? Its title, normalized, in t. */
static int
heading(const char *c, const char *nl, char *t, size_t max)
{
	const char *h;

	if (c == nl || *c != '#')
		return 0;
	for (h = c; h < nl && *h == '#'; h++)
		;
	while (h < nl && *h == ' ')
		h++;
	title_norm(h, (size_t)(nl - h), t, max);
	return 1;
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
from_oskill(struct parse *p, struct skill_osk *o, const char *text, size_t n,
    unsigned line, const char *folder)
{
	struct skill *sk = &o->sk;
	struct osk_sec sec[] = {
		{ .title = "description" }, { .title = "instructions" },
		{ .title = "preparation" }, { .title = "allowed-skills" },
		{ .title = "allowed-prep-skills" }, { .title = "session" },
	};
	struct osk_sec *cur = NULL;
	const char *c = text, *e = text + n, *nl;
	char t[32];
	size_t i;

	sk->flags |= SKILL_OSKILL;
	for (; c < e; c = nl + 1, line++) {
		if ((nl = memchr(c, '\n', (size_t)(e - c))) == NULL)
			nl = e;
		if (!heading(c, nl, t, sizeof(t))) {
			if (cur != NULL)
				cur->n = (size_t)(nl - cur->p) + (nl < e);
			continue;
		}
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
			issue(p, K_FATAL, 1, "description-missing",
			    "no Description section");
		else {
			if (u8_len(d.p, d.n) > SKILL_DESC_MAX)
				issue(p, K_RULE, sec[0].line,
				    "description-length", "description is "
				    "%zu characters, more than %d",
				    u8_len(d.p, d.n), SKILL_DESC_MAX);
			sk->description = str_dup(p->a, d);
		}
	}
	if (!sec[1].seen)
		issue(p, K_RULE, 1, "oskill-section",
		    "no Instructions section");
	if (sec[3].seen) {
		sk->flags |= SKILL_OSK_ALLOWED;
		o->allowed = osk_list(p, &sec[3]);
	}
	if (sec[4].seen) {
		sk->flags |= SKILL_OSK_PREP;
		o->prep = osk_list(p, &sec[4]);
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

/* see skill.h */
struct str
skill_osk_section(const char *body, const char *title)
{
	const char *c = body, *nl, *start = NULL;
	char t[32];

	for (; *c != '\0'; c = *nl != '\0' ? nl + 1 : nl) {
		if ((nl = strchr(c, '\n')) == NULL)
			nl = c + strlen(c);
		if (!heading(c, nl, t, sizeof(t)))
			continue;
		if (start != NULL)
			return str_trim((struct str){ start, (size_t)(c - start) });
		if (strcmp(t, title) == 0)
			start = *nl != '\0' ? nl + 1 : nl;
	}
	return start != NULL ? str_trim((struct str){ start,
	    (size_t)(c - start) }) : (struct str){ NULL, 0 };
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

/* Parse the definition file (deffiles[which]) of the skill folder `dir`,
 * named `folder`, into *o (zeroed by the caller), its strings in p->a.
 * Whole-file findings are given line 1, for editors that jump to
 * FILE:LINE. Returns 0, 1 when a fatal finding skips the skill, or
 * -E_NOMEM. */
static int
parse_skill(struct parse *p, const char *dir, const char *folder, int which,
    struct skill_osk *o)
{
	struct skill *sk = &o->sk;
	struct fm_node *root;
	struct fm_error fe;
	struct str yaml, body;
	unsigned yl = 0, bl = 0;
	char *text;
	size_t len;
	off_t size = 0;
	int r;

	if ((p->file = arena_printf(p->tmp, "%s/%s", dir, deffiles[which])) ==
	    NULL)
		return -E_NOMEM;
	if (which == 1)
		issue(p, K_RULE, 1, "file-name", "the file should be SKILL.md");
	if (!file_inside(dir, p->file)) {
		issue(p, K_FATAL, 1, "file-outside",
		    "a link that leads out of the skill folder");
		return 1;
	}
	r = read_head(p->tmp, p->file, SKILL_FM_MAX + 8, &text, &len, &size);
	if (r == -E_NOMEM)
		return r;
	if (r != 0) {
		issue(p, K_FATAL, 1, "file-read", "cannot read: %s",
		    strerror(errno));
		return 1;
	}
	if (size > SKILL_FILE_MAX) {
		issue(p, K_FATAL, 1, "file-size", "file is %lld bytes, more "
		    "than %u", (long long)size, SKILL_FILE_MAX);
		return 1;
	}
	r = fm_split(text, len, &yaml, &yl, &body, &bl);
	if (r == -E_PARSE) {
		issue(p, K_FATAL, yl, len < (size_t)size ? "frontmatter-size" :
		    "frontmatter-unclosed", len < (size_t)size ?
		    "front-matter longer than %u bytes" :
		    "front-matter opened here is never closed with '---'",
		    SKILL_FM_MAX);
		return 1;
	}
	if (r == -E_NOENT && which != 2) {
		issue(p, K_FATAL, 1, "frontmatter-missing",
		    "no front-matter: the file must start with '---'");
		return 1;
	}
	if (r == 0) {
		if (!str_is_utf8(yaml.p, yaml.n)) {
			issue(p, K_FATAL, yl, "utf8",
			    "front-matter is not valid UTF-8");
			return 1;
		}
		r = fm_parse(p->tmp, yaml.p, yaml.n, yl, &root, &fe);
		if (r == -E_NOMEM)
			return r;
		if (r != 0) {
			issue(p, K_FATAL, fe.line, "yaml", "%s", fe.msg);
			return 1;
		}
		if (root->kind != FM_MAP && !(which == 2 &&
		    root->kind == FM_NULL)) {
			issue(p, K_FATAL, yl, "frontmatter-type",
			    "front-matter must be a YAML mapping");
			return 1;
		}
		if (which != 2)
			from_fm(p, sk, root, folder);
		else if (root->kind == FM_MAP) {
			const struct fm_node *nd;

			if ((nd = fm_get(root, "name")) != NULL &&
			    nd->kind == FM_SCALAR) {
				if (skill_name_rule(nd->s, nd->n) != NULL) {
					name_issue(p, K_FATAL, nd->line, nd->s,
					    nd->n);
					return 1;
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
			if (r == -E_NOMEM)
				return r;
			if (r != 0) {
				issue(p, K_FATAL, 1, "file-read", "cannot "
				    "read: %s", strerror(errno));
				return 1;
			}
			if (fm_split(text, len, &yaml, &yl, &body, &bl) != 0) {
				body.p = text;
				body.n = len;
				bl = 1;
			}
		}
		from_oskill(p, o, body.p, body.n, bl, folder);
	}
	if (which == 1)
		sk->flags |= SKILL_LOWERCASE;
	if (p->fatal)
		return 1;
	if (sk->name == NULL || sk->description == NULL)
		return -E_NOMEM;
	sk->dir = dir;
	return 0;
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

	for (i = 0; i < ARRAY_LEN(deffiles) && which < 0; i++) {
		if (path_push(w, deffiles[i]) != 0)
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
	e = parse_skill(&w->p, w->path, depth == 0 ? root_name(w) :
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
skill_reg_refresh(struct skill_reg *r, int *changed)
{
	struct arena tmp;
	struct walk *w;
	uint64_t stamp;

	*changed = 0;
	arena_init(&tmp, "refresh");
	if ((w = walk_new(&tmp, r, W_STAMP)) == NULL)
		return -E_NOMEM;
	walk_roots(w);
	stamp = w->stamp;
	arena_reset(&tmp);
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
		issue(&w->p, K_FATAL, 0, "no-skill", "no SKILL.md found in "
		    "the folders searched (see the warnings)");
	else
		issue(&w->p, K_FATAL, 0, "no-skill", "no SKILL.md found in "
		    "this folder or below%s", w->nskip > 0 ? " (.git, "
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
		issue(&w->p, K_FATAL, 0, "no-skill", "%s", errno == ENOENT ?
		    "not found" : strerror(errno));
		goto out;
	}
	base = base_name(path);
	if (S_ISREG(st.st_mode) && str_in(deffiles, ARRAY_LEN(deffiles),
	    base)) {
		/* A definition file stands for the folder that holds it. */
		r.roots[0] = base == path ? "." : base == path + 1 ? "/" :
		    arena_strndup(a, path, (size_t)(base - path - 1));
		if (r.roots[0] == NULL) {
			e = -E_NOMEM;
			goto out;
		}
	} else if (!S_ISDIR(st.st_mode)) {
		issue(&w->p, K_FATAL, 0, "no-skill", "not a folder or a "
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
				    !inside(w->root, res) ||
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
