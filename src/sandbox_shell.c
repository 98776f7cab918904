/* sandbox_shell.c - the Bash(prefix:*) rules of a skill's allowed-tools:
 * which model-written command lines it may run (see sandbox.h). */
#include "sandbox.h"

#include <stdio.h>
#include <string.h>

#define SH_WORDS	4
#define SH_WORDLEN	64

/* Read the word at *sp (unquoted, cut to SH_WORDLEN - 1 bytes: *cut is
 * set) up to a blank or an operator. Returns NULL, or why it is refused. */
static const char *
sh_word(const char **sp, char *buf, int *cut)
{
	const char *s = *sp;
	size_t n = 0;
	char q = 0, c;
	int lit;

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
		} else if (c == '\\' && s[1] != '\0' && (q == 0 ||
		    strchr("$`\"\\\n", s[1]) != NULL)) {
			c = *++s;
			lit = c != '\n';
		} else if (c == '`' || (c == '$' && s[1] == '('))
			return "command substitution";
		else if (q == '"') {
			if (c == '"')
				q = lit = 0;
		} else if (c == '\'' || c == '"') {
			q = c;
			lit = 0;
		} else if (strchr(" \t\n;&|<>()", c) != NULL)
			break;
		if (lit && n + 1 < SH_WORDLEN)
			buf[n++] = c;
		else if (lit)
			*cut = 1;
	}
	buf[n] = '\0';
	*sp = s;
	return NULL;
}

/* Does a command whose first words are w[0..nw) fit the rule? "git:*" or
 * "git *": any command starting with those words; "git status": exactly
 * that command. */
static int
rule_match(const char *rule, char w[][SH_WORDLEN], unsigned nw,
    unsigned cut)
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
		if (i >= nw || i >= SH_WORDS || cut & 1u << i ||
		    strlen(w[i]) != k || memcmp(w[i], r, k) != 0)
			return 0;
		i++;
		r = e;
	}
	return i > 0 && (prefix || nw == i);
}

static int
refuse(char *why, size_t n, const char *fmt, const char *arg)
{
	snprintf(why, n, fmt, arg);
	return -E_DENIED;
}

/* see sandbox.h */
int
sbx_shell_check(const struct sbx_policy *p, const char *line, char *why,
    size_t whylen)
{
	char w[SH_WORDS][SH_WORDLEN], scratch[SH_WORDLEN] = "";
	const char *s = line, *e;
	unsigned nw, cut, i;
	int redir, c1;

	if (!(p->perms & SBX_SHELL))
		return refuse(why, whylen, "%sthe skill's allowed-tools grant "
		    "no shell (Bash)", "");
	if (p->nshell_allow == 0)
		return 0;
	for (;;) {
		nw = cut = 0;
		redir = 0;
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
				return refuse(why, whylen, "%sa subshell or "
				    "process substitution in a restricted "
				    "command line", "");
			if (*s == '<' || *s == '>' || *s == '&') {
				if (nw == 0)
					return refuse(why, whylen, "%sa "
					    "command that starts with a "
					    "redirection", "");
				s += strspn(s, "<>&|");
				redir = 1;
				continue;
			}
			c1 = 0;
			if ((e = sh_word(&s, redir || nw >= SH_WORDS ? scratch :
			    w[nw], &c1)) != NULL)
				return refuse(why, whylen, "%s in a restricted "
				    "command line", e);
			if (!redir) {
				if (c1 && nw < SH_WORDS)
					cut |= 1u << nw;
				nw++;
			}
			redir = 0;
		}
		for (i = 0; nw > 0 && i < p->nshell_allow; i++)
			if (rule_match(p->shell_allow[i], w, nw, cut))
				break;
		if (nw > 0 && i == p->nshell_allow)
			return refuse(why, whylen, "'%s' is not a command the "
			    "skill's Bash(...) rules allow", w[0]);
		if (*s == '\0')
			return 0;
		s += s[0] == s[1] && (*s == '&' || *s == '|' || *s == ';') ?
		    2 : 1;
	}
}
