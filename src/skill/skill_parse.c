/* skill_parse.c - one skill's definition file, read into a struct skill.
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
#include "skill/skill_int.h"
#include "base/str.h"
#include "config.h"

const char *const skill_deffiles[3] = { "SKILL.md", "skill.md", "oskill.md" };

/* see skill_int.h */
void
skill_issue(struct parse *p, enum kind k, unsigned line, const char *rule,
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
		skill_issue(p, k, line, rule, len == 0 ? "name is empty" :
		    "name '%.80s' is %zu characters, more than %d", s, len,
		    SKILL_NAME_MAX);
	else if (strcmp(rule, "name-hyphen") == 0)
		skill_issue(p, k, line, rule, "name '%.80s' %s", s,
		    s[0] == '-' ? "starts with '-'" : s[n - 1] == '-' ?
		    "ends with '-'" : "has '--' (one hyphen between words)");
	else if (bad == NULL || (unsigned char)*bad <= ' ')
		skill_issue(p, k, line, rule, "name '%.80s' has %s: lowercase "
		    "letters, digits and '-' only", s, bad == NULL ?
		    "bytes not in UTF-8" : "a space or control character");
	else {
		for (cl = 1; ((unsigned char)bad[cl] & 0xc0) == 0x80; cl++)
			;
		skill_issue(p, k, line, rule, "name '%.80s' has '%.*s': "
		    "lowercase letters, digits and '-' only", s, cl, bad);
	}
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
			skill_issue(p, K_RULE, k->line, "unknown-key",
			    "'%s' is not an Agent Skills field (put it under "
			    "metadata)", k->key);
		else
			skill_issue(p, K_RULE, k->line, "unknown-key",
			    "unknown field '%s'", k->key);
	}

	/* name */
	nd = fm_get(root, "name");
	if (nd == NULL || nd->kind == FM_NULL) {
		skill_issue(p, K_RULE, nd != NULL ? nd->line : root->line,
		    "name-missing", "no name: the folder name '%s' is used",
		    folder);
		sk->name = arena_strdup(p->a, folder);
	} else if (nd->kind != FM_SCALAR) {
		skill_issue(p, K_FATAL, nd->line, "name-type",
		    "name must be a string");
	} else if (skill_name_rule(nd->s, nd->n) != NULL) {
		name_issue(p, skill_name_rule(folder, strlen(folder)) ?
		    K_FATAL : K_RULE, nd->line, nd->s, nd->n);
		sk->name = arena_strdup(p->a, folder);
	} else {
		/* No NFKC: the name must match its folder byte for byte. */
		if (strcmp(nd->s, folder) != 0)
			skill_issue(p, K_RULE, nd->line, "name-dir",
			    "name '%s' differs from its folder '%s'", nd->s,
			    folder);
		else if (!skill_name_is_ascii(nd->s))
			skill_issue(p, K_WARN, nd->line, "name-ascii",
			    "name '%s' is not ASCII: some clients take only "
			    "a-z, 0-9, '-'", nd->s);
		sk->name = arena_strndup(p->a, nd->s, nd->n);
	}

	/* description */
	nd = fm_get(root, "description");
	if (nd == NULL || nd->kind == FM_NULL ||
	    (nd->kind == FM_SCALAR && str_trim((struct str){ nd->s,
	    nd->n }).n == 0))
		skill_issue(p, K_FATAL, nd != NULL ? nd->line : root->line,
		    "description-missing", "no description");
	else if (nd->kind != FM_SCALAR)
		skill_issue(p, K_FATAL, nd->line, "description-type",
		    "description must be a string");
	else {
		if ((len = u8_len(nd->s, nd->n)) > SKILL_DESC_MAX)
			skill_issue(p, K_RULE, nd->line, "description-length",
			    "description is %zu characters, more than %d",
			    len, SKILL_DESC_MAX);
		sk->description = arena_strndup(p->a, nd->s, nd->n);
	}

	if ((nd = fm_get(root, "license")) != NULL) {
		if (is_empty(nd))
			skill_issue(p, K_WARN, nd->line, "license-empty",
			    "license is empty");
		else if (nd->kind != FM_SCALAR)
			skill_issue(p, K_RULE, nd->line, "license-type",
			    "license must be a string");
	}

	if ((nd = fm_get(root, "compatibility")) != NULL) {
		if (is_empty(nd))
			skill_issue(p, K_RULE, nd->line, "compatibility-length",
			    "compatibility is empty (1-%d characters, or no "
			    "key)", SKILL_COMPAT_MAX);
		else if (nd->kind == FM_SEQ && is_scalar_list(nd))
			skill_issue(p, K_RULE, nd->line, "compatibility-type",
			    "compatibility is a list; the format wants a string");
		else if (nd->kind != FM_SCALAR)
			skill_issue(p, K_RULE, nd->line, "compatibility-type",
			    "compatibility must be a string");
		else if ((len = u8_len(nd->s, nd->n)) > SKILL_COMPAT_MAX)
			skill_issue(p, K_RULE, nd->line, "compatibility-length",
			    "compatibility is %zu characters, more than %d",
			    len, SKILL_COMPAT_MAX);
	}

	if ((nd = fm_get(root, "metadata")) != NULL && nd->kind != FM_NULL) {
		if (nd->kind != FM_MAP)
			skill_issue(p, K_RULE, nd->line, "metadata-type",
			    "metadata must be a map of strings");
		else
			for (k = nd->kids; k != NULL; k = k->next)
				if (is_empty(k))
					skill_issue(p, K_WARN, k->line,
					    "metadata-empty", "metadata '%s' "
					    "is empty", k->key);
				else if (k->kind != FM_SCALAR)
					skill_issue(p, K_RULE, k->line,
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
				skill_issue(p, K_RULE, k->line,
				    "max-agent-depth",
				    "metadata max_agent_depth must be 0 to 3");
		}
	}

	if ((nd = fm_get(root, "allowed-tools")) != NULL &&
	    nd->kind != FM_NULL) {
		if (nd->kind == FM_SCALAR || is_scalar_list(nd)) {
			sk->allowed_tools = tools_list(p, nd, &commas);
			if (nd->kind == FM_SEQ || commas)
				skill_issue(p, K_RULE, nd->line,
				    "allowed-tools-type",
				    "allowed-tools should be one "
				    "space-separated string");
		} else
			skill_issue(p, K_RULE, nd->line, "allowed-tools-type",
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
			skill_issue(p, K_FATAL, line, "hooks", "%s", why);
	}
	if (HAVE_MCP && (nd = fm_get(root, "mcp_servers")) != NULL) {
		struct mcp_server *ms;
		unsigned n;

		sk->flags |= SKILL_MCP;
		if (mcp_parse(p->tmp, nd, ".", sk->name, &ms, &n, &line, why,
		    sizeof(why)) == -E_INVAL)
			skill_issue(p, K_FATAL, line, "mcp_servers", "%s", why);
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
			skill_issue(p, K_RULE, line, "oskill-list",
			    "'%.*s' in %s is not a skill name", (int)(c - w),
			    w, s->title);
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
					skill_issue(p, K_RULE, line,
					    "oskill-section",
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
			skill_issue(p, K_FATAL, 1, "description-missing",
			    "no Description section");
		else {
			if (u8_len(d.p, d.n) > SKILL_DESC_MAX)
				skill_issue(p, K_RULE, sec[0].line,
				    "description-length", "description is "
				    "%zu characters, more than %d",
				    u8_len(d.p, d.n), SKILL_DESC_MAX);
			sk->description = str_dup(p->a, d);
		}
	}
	if (!sec[1].seen)
		skill_issue(p, K_RULE, 1, "oskill-section",
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
			skill_issue(p, K_WARN, sec[5].line, "oskill-session",
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

/* A definition file that is a symlink must resolve inside its folder. */
static int
file_inside(const char *dir, const char *file)
{
	char rd[PATH_MAX], rf[PATH_MAX];
	struct stat st;

	if (lstat(file, &st) != 0 || !S_ISLNK(st.st_mode))
		return 1;
	return realpath(dir, rd) != NULL && realpath(file, rf) != NULL &&
	    skill_inside(rd, rf);
}

/* see skill_int.h. Whole-file findings are given line 1, for editors
 * that jump to FILE:LINE. */
int
skill_parse(struct parse *p, const char *dir, const char *folder, int which,
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

	if ((p->file = arena_printf(p->tmp, "%s/%s", dir,
	    skill_deffiles[which])) == NULL)
		return -E_NOMEM;
	if (which == 1)
		skill_issue(p, K_RULE, 1, "file-name",
		    "the file should be SKILL.md");
	if (!file_inside(dir, p->file)) {
		skill_issue(p, K_FATAL, 1, "file-outside",
		    "a link that leads out of the skill folder");
		return 1;
	}
	r = read_head(p->tmp, p->file, SKILL_FM_MAX + 8, &text, &len, &size);
	if (r == -E_NOMEM)
		return r;
	if (r != 0) {
		skill_issue(p, K_FATAL, 1, "file-read", "cannot read: %s",
		    strerror(errno));
		return 1;
	}
	if (size > SKILL_FILE_MAX) {
		skill_issue(p, K_FATAL, 1, "file-size", "file is %lld bytes, "
		    "more than %u", (long long)size, SKILL_FILE_MAX);
		return 1;
	}
	r = fm_split(text, len, &yaml, &yl, &body, &bl);
	if (r == -E_PARSE) {
		skill_issue(p, K_FATAL, yl, len < (size_t)size ?
		    "frontmatter-size" : "frontmatter-unclosed",
		    len < (size_t)size ?
		    "front-matter longer than %u bytes" :
		    "front-matter opened here is never closed with '---'",
		    SKILL_FM_MAX);
		return 1;
	}
	if (r == -E_NOENT && which != 2) {
		skill_issue(p, K_FATAL, 1, "frontmatter-missing",
		    "no front-matter: the file must start with '---'");
		return 1;
	}
	if (r == 0) {
		if (!str_is_utf8(yaml.p, yaml.n)) {
			skill_issue(p, K_FATAL, yl, "utf8",
			    "front-matter is not valid UTF-8");
			return 1;
		}
		r = fm_parse(p->tmp, yaml.p, yaml.n, yl, &root, &fe);
		if (r == -E_NOMEM)
			return r;
		if (r != 0) {
			skill_issue(p, K_FATAL, fe.line, "yaml", "%s", fe.msg);
			return 1;
		}
		if (root->kind != FM_MAP && !(which == 2 &&
		    root->kind == FM_NULL)) {
			skill_issue(p, K_FATAL, yl, "frontmatter-type",
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
				skill_issue(p, K_FATAL, 1, "file-read",
				    "cannot read: %s", strerror(errno));
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

/* see skill.h */
const char *
skill_file(const struct skill *sk, struct arena *a)
{
	int which = sk->flags & SKILL_OSKILL ? 2 :
	    sk->flags & SKILL_LOWERCASE ? 1 : 0;

	return arena_printf(a, "%s/%s", sk->dir, skill_deffiles[which]);
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
