/* sandbox_shell.c - the Bash(prefix:*) rules of a skill's allowed-tools:
 * which model-written command lines it may run (see sandbox.h).
 *
 * A restricted line is read as the shells that may run it read it (POSIX
 * sh; BusyBox ash, OpenWrt's /bin/sh; dash; bash), only as far as needed
 * to find each command and its words: quotes, backslashes, separators,
 * redirections, comments. What the checker does not follow, or what those
 * shells read differently, is refused rather than guessed at: command,
 * arithmetic and process substitution, subshells, $'...', $"..." and
 * $[...], ${...} other than ${NAME}, here-documents and here-strings, &>,
 * a redirection without its target, a backslash-newline inside a word
 * (the shells remove it before anything else: "$\<newline>(id)" is
 * $(id)); between words it is followed. Keywords, assignments, functions,
 * aliases, eval, exec and the like are refused because a command's first
 * words must match a rule word for word, unexpanded.
 *
 * A rule limits the first word(s) of each command, not what that program
 * may be told to run. For the programs in risky[] the options that make
 * them run commands are refused whatever the rule, and their arguments
 * must be words the checker reads as the program will (no $, glob or
 * brace: -$- is -c under ash, -[c] is -c beside a file of that name).
 * This closes one-line bypasses; it does not make such a program safe (a
 * git that may write its own repository can be told through .git/config
 * to run anything): containing that is the sandbox's job.
 */
#include "sandbox/sandbox.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define SH_WORDS	4
#define SH_WORDLEN	64

#define W_CUT		1u	/* cut to SH_WORDLEN - 1 bytes */
#define W_EXP		2u	/* holds $, or an unquoted glob or brace */

/*
 * Programs that run other commands when told to. lead: the only options
 * allowed before the subcommand (for git that refuses -c, -C, --git-dir,
 * --work-tree, --exec-path, --config-env: each runs or reads a
 * configuration of the caller's choosing). opts: refused after it; a
 * "--name" also as any abbreviation and with =value, as git and
 * getopt_long accept both. subs: subcommands refused, and "sub:xy" the
 * short options -x and -y of that subcommand, in any cluster (-nOcmd).
 */
static const struct risky {
	const char	*prog;
	const char	*lead;
	const char	*opts;
	const char	*subs;
} risky[] = {
	{ "git", "-P --no-pager --version --help",
	    "--config --exec --extcmd --open-files-in-pager --receive-pack "
	    "--template --upload-pack",
	    "bisect config daemon filter-branch instaweb remote-ext "
	    "send-email submodule clone:cu difftool:x grep:O rebase:x" },
	{ "find", NULL, "-delete -exec -execdir -fls -fprint -fprint0 "
	    "-fprintf -ok -okdir", NULL },
};

/* One command of the line, as far as read. */
struct sh_cmd {
	char			 w[SH_WORDS][SH_WORDLEN]; /* first words, unquoted */
	unsigned		 nw;
	unsigned		 odd;	/* bit i: w[i] was cut or expands */
	const struct risky	*rk;	/* the program's entry, or NULL */
	const char		*shortopts;	/* refused in its subcommand */
	size_t			 nshort;
	int			 insub;	/* past the leading options */
};

static int ATTR_PRINTF(3, 4)
refuse(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
	return -E_DENIED;
}

/* Does s start with "NAME}"? */
static int
is_name_brace(const char *s)
{
	const char *p = s;

	while (((*p | 32) >= 'a' && (*p | 32) <= 'z') || *p == '_' ||
	    (*p >= '0' && *p <= '9'))
		p++;
	return p > s && *p == '}';
}

/* Read the word at *sp (unquoted, cut to SH_WORDLEN - 1 bytes) up to a
 * blank or an operator; *fl gets W_*. Returns NULL, or why it is refused. */
static const char *
sh_word(const char **sp, char *buf, unsigned *fl)
{
	const char *s = *sp;
	size_t n = 0;
	char q = 0, c;
	int lit;

	*fl = 0;
	for (;; s++) {
		if ((c = *s) == '\0') {
			if (q != 0)
				return "an unterminated quote";
			break;
		}
		lit = 1;
		if (q == '\'') {
			if (c == '\'')
				q = lit = 0;
		} else if (c == '\\' && s[1] == '\n')
			return "a backslash-newline inside a word";
		else if (c == '\\' && s[1] != '\0' && (q == 0 ||
		    strchr("$`\"\\", s[1]) != NULL))
			c = *++s;
		else if (c == '`' || (c == '$' && s[1] == '('))
			return "command substitution";
		else if (c == '$' && s[1] != '\0' &&
		    strchr("'\"[", s[1]) != NULL)
			return "$'...', $\"...\" or $[...]";
		else if (c == '$' && s[1] == '{' && !is_name_brace(s + 2))
			return "${...} other than ${NAME}";
		else if (c == '$')
			*fl |= W_EXP;
		else if (q == '"') {
			if (c == '"')
				q = lit = 0;
		} else if (c == '\'' || c == '"') {
			q = c;
			lit = 0;
		} else if (strchr(" \t\n;&|<>()", c) != NULL)
			break;
		else if (strchr("*?[{}", c) != NULL)
			*fl |= W_EXP;
		if (lit && n + 1 < SH_WORDLEN)
			buf[n++] = c;
		else if (lit)
			*fl |= W_CUT;
	}
	buf[n] = '\0';
	*sp = s;
	return NULL;
}

/* Read the redirection at *sp, operator and target (into buf). Returns
 * NULL, or why it is refused. */
static const char *
sh_redir(const char **sp, char *buf)
{
	const char *s = *sp, *e;
	unsigned fl;

	if (s[0] == '&' || (s[0] == '<' && s[1] == '<'))
		return "a here-document, here-string or &> redirection";
	if ((s[0] == '>' && (s[1] == '>' || s[1] == '&' || s[1] == '|')) ||
	    (s[0] == '<' && (s[1] == '&' || s[1] == '>')))
		s++;
	s++;
	s += strspn(s, " \t");
	if (*s == '\0' || strchr("\n#;&|<>()", *s) != NULL)
		return "a redirection without a target";
	if ((e = sh_word(&s, buf, &fl)) != NULL)
		return e;
	*sp = s;
	return NULL;
}

/* Is w in the space-separated list? With abbrev, a "--name" item also
 * matches its abbreviations and --name=value. */
static int
in_list(const char *list, const char *w, int abbrev)
{
	const char *e;
	size_t n, k;

	for (; list != NULL && *list != '\0'; list = *e ? e + 1 : e) {
		e = list + strcspn(list, " ");
		n = (size_t)(e - list);
		if (abbrev && n > 2 && strncmp(list, "--", 2) == 0 &&
		    strncmp(w, "--", 2) == 0) {
			k = strcspn(w + 2, "=");
			if (k > 0 && k <= n - 2 && memcmp(w + 2, list + 2, k) == 0)
				return 1;
		} else if (strlen(w) == n && memcmp(w, list, n) == 0)
			return 1;
	}
	return 0;
}

/* The subcommand w of c's program: refused, or whose short options are. */
static int
sh_sub(struct sh_cmd *c, const char *w)
{
	const char *l, *e, *colon;
	size_t n;

	for (l = c->rk->subs; l != NULL && *l != '\0'; l = *e ? e + 1 : e) {
		e = l + strcspn(l, " ");
		colon = memchr(l, ':', (size_t)(e - l));
		n = (size_t)((colon != NULL ? colon : e) - l);
		if (strlen(w) != n || memcmp(w, l, n) != 0)
			continue;
		if (colon == NULL)
			return -1;
		c->shortopts = colon + 1;
		c->nshort = (size_t)(e - colon - 1);
	}
	return 0;
}

static const char *
base(const char *path)
{
	const char *b = strrchr(path, '/');

	return b != NULL ? b + 1 : path;
}

/* Check word number c->nw of a command (read into w, with flags fl)
 * against risky[]. Returns 0 or -E_DENIED. */
static int
sh_arg(struct sh_cmd *c, const char *w, unsigned fl, char *why,
    size_t whylen)
{
	const char *prog;
	size_t i;
	int hit = 0;

	if (c->nw == 0 || (c->nw == 1 && c->rk == NULL &&
	    strcmp(base(c->w[0]), "busybox") == 0)) {
		for (i = 0; i < ARRAY_LEN(risky); i++)
			if (strcmp(base(w), risky[i].prog) == 0) {
				c->rk = &risky[i];
				c->insub = risky[i].lead == NULL;
			}
		return 0;
	}
	if (c->rk == NULL)
		return 0;
	prog = c->rk->prog;
	if (fl & W_EXP)
		return refuse(why, whylen, "$, or an unquoted glob or brace, "
		    "in an argument of %s: quote it in '...'", prog);
	if (!c->insub) {
		if (w[0] == '-') {
			if (in_list(c->rk->lead, w, 0))
				return 0;
			return refuse(why, whylen, "'%s %.40s' is refused "
			    "(before the subcommand only %s)", prog, w,
			    c->rk->lead);
		}
		c->insub = 1;
		hit = sh_sub(c, w) != 0;
	}
	for (i = 0; w[0] == '-' && w[1] != '-' && i < c->nshort; i++)
		if (strchr(w + 1, c->shortopts[i]) != NULL)
			hit = 1;
	if (hit || in_list(c->rk->opts, w, 1))
		return refuse(why, whylen, "'%s %.40s' is refused in a "
		    "restricted command line", prog, w);
	return 0;
}

/* Does a command whose first words are w[0..nw) fit the rule? "git:*" or
 * "git *": any command starting with those words; "git status": exactly
 * that command. */
static int
rule_match(const char *rule, char w[][SH_WORDLEN], unsigned nw,
    unsigned odd)
{
	size_t rl = strlen(rule), k;
	const char *r = rule, *e;
	unsigned i = 0;
	int prefix = 0;

	if (rl >= 2 && (strcmp(rule + rl - 2, ":*") == 0 ||
	    strcmp(rule + rl - 2, " *") == 0)) {
		prefix = 1;
		rl -= 2;
	}
	for (;;) {
		while (r < rule + rl && *r == ' ')
			r++;
		if (r == rule + rl)
			break;
		if ((e = memchr(r, ' ', (size_t)(rule + rl - r))) == NULL)
			e = rule + rl;
		k = (size_t)(e - r);
		if (i >= nw || i >= SH_WORDS || odd & 1u << i ||
		    strlen(w[i]) != k || memcmp(w[i], r, k) != 0)
			return 0;
		i++;
		r = e;
	}
	return i > 0 && (prefix || nw == i);
}

/* see sandbox.h */
int
sbx_shell_check(const struct sbx_policy *p, const char *line, char *why,
    size_t whylen)
{
	struct sh_cmd c;
	char scratch[SH_WORDLEN], *buf;
	const char *s = line, *e;
	unsigned fl, i;

	if (!(p->perms & SBX_SHELL))
		return refuse(why, whylen, "the skill's allowed-tools grant "
		    "no shell (Bash)");
	if (p->nshell_allow == 0)
		return 0;
	for (;;) {
		memset(&c, 0, sizeof(c));
		for (;;) {
			s += strspn(s, " \t");
			if (s[0] == '\\' && s[1] == '\n') {
				s += 2;
				continue;
			}
			if (*s == '#') {
				s += strcspn(s, "\n");
				continue;
			}
			if (*s == '\0' || *s == '\n' || *s == ';' ||
			    *s == '|' || (*s == '&' && s[1] != '>'))
				break;
			if (*s == '(' || *s == ')')
				return refuse(why, whylen, "a subshell or "
				    "process substitution in a restricted "
				    "command line");
			/* bash and ash take 12>x as fd 12, dash as a word:
			 * as a word it could hide an option from sh_arg. */
			i = (unsigned)strspn(s, "0123456789");
			if (i > 0 && (s[i] == '<' || s[i] == '>'))
				s += i;
			if (*s == '<' || *s == '>' || *s == '&') {
				if (c.nw == 0)
					return refuse(why, whylen, "a command "
					    "that starts with a redirection");
				if ((e = sh_redir(&s, scratch)) != NULL)
					return refuse(why, whylen, "%s in a "
					    "restricted command line", e);
				continue;
			}
			buf = c.nw < SH_WORDS ? c.w[c.nw] : scratch;
			if ((e = sh_word(&s, buf, &fl)) != NULL)
				return refuse(why, whylen, "%s in a restricted "
				    "command line", e);
			if (fl != 0 && c.nw < SH_WORDS)
				c.odd |= 1u << c.nw;
			if (sh_arg(&c, buf, fl, why, whylen) != 0)
				return -E_DENIED;
			c.nw++;
		}
		for (i = 0; c.nw > 0 && i < p->nshell_allow; i++)
			if (rule_match(p->shell_allow[i], c.w, c.nw, c.odd))
				break;
		if (c.nw > 0 && i == p->nshell_allow)
			return refuse(why, whylen, "'%s' is not a command the "
			    "skill's Bash(...) rules allow", c.w[0]);
		if (*s == '\0')
			return 0;
		s += s[0] == s[1] && (*s == '&' || *s == '|' || *s == ';') ?
		    2 : 1;
	}
}
