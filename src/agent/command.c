/* command.c - slash commands and .command.md files. */

#include "agent/agent.h"

#include <stdio.h>
#include <string.h>

#include "agent/agent_int.h"
#include "fmt/fm.h"
#include "tool/mcp.h"

/* --- slash commands and .command.md */

#define HELP_CMDS	"Commands: /help, /skills, /compact, /session, /usage, "

enum agent_status
command_slash(struct agent *ag, const char *cmd, const char **final)
{
	struct sbuf sb;
	unsigned i;

	sbuf_init(&sb, &ag->turn, 0);
	if (strcmp(cmd, "/help") == 0) {
		sbuf_adds(&sb, HAVE_MCP ? HELP_CMDS "/mcp_servers, /exit" :
		    HELP_CMDS "/exit");
		if (ag->cfg->commands_dir != NULL)
			sbuf_printf(&sb, "; your commands in %s (/NAME ARGS)",
			    ag->cfg->commands_dir);
		for (i = 0; HAVE_CREW && i < ag->cfg->ncmds; i++)
			sbuf_printf(&sb, "%s/%s", i ? ", " : "; the crew's: ",
			    ag->cfg->cmds[i].name);
		sbuf_adds(&sb, ".\nAnything else goes to the agent.");
	} else if (strcmp(cmd, "/skills") == 0) {
		for (i = 0; ag->reg.ix == NULL && i < ag->reg.n; i++)
			sbuf_printf(&sb, "%s - %s\n", ag->reg.v[i]->name,
			    ag->reg.v[i]->description);
		/* An index: its names (`skills list` has the rest). */
		for (i = 0; ag->reg.ix != NULL && i < ag->reg.n; i++)
			sbuf_printf(&sb, "%s\n", skill_reg_name(&ag->reg, i));
		if (ag->reg.n == 0)
			sbuf_adds(&sb, "(no skills installed)");
	} else if (strcmp(cmd, "/compact") == 0) {
		const char *r;
		enum agent_status st = session_compact(ag, &r);

		*final = r;
		return st;
	} else if (strcmp(cmd, "/session") == 0) {
		sbuf_printf(&sb, "session %s, %u items in the conversation%s, "
		    "log %s", ag->session, ag->nitems, ag->summary ?
		    " after a summary" : "", ag->logging ? ag->log.path :
		    "(none)");
	} else if (strcmp(cmd, "/usage") == 0) {
		sbuf_printf(&sb, "tokens: %lu in, %lu out", ag->in_tok,
		    ag->out_tok);
		if (ag->cost > 0)
			sbuf_printf(&sb, "; cost %.4f", ag->cost);
		sbuf_printf(&sb, "; memory: %zu of %zu KiB in use, peak %zu",
		    mem_used() >> 10, mem_budget() >> 10, mem_peak() >> 10);
	} else if (HAVE_MCP && strcmp(cmd, "/mcp_servers") == 0) {
		mcp_describe(ag->mcp, &sb);
	} else if (strcmp(cmd, "/exit") == 0 || strcmp(cmd, "/quit") == 0) {
		*final = "bye";
		return AG_EXIT;
	} else
		return AG_FAIL;		/* not built in */
	if (sb.err)
		return AG_NOMEM;
	*final = sb.p;
	return AG_OK;
}

/* /NAME ARGS with <commands_dir>/NAME.command.md: its body with
 * $ARGUMENTS replaced. *agent is its front-matter's `agent`, if any. */
int
command_expand(struct agent *ag, const char *input, char **out,
    const char **agent)
{
	const char *sp = strchr(input, ' '), *args = sp ? sp + 1 : "";
	size_t nlen = sp ? (size_t)(sp - input - 1) : strlen(input) - 1;
	struct fm_node *root, *a;
	struct fm_error fe;
	struct str y, body;
	unsigned yl, bl;
	struct sbuf sb;
	char *path, *text, buf[4096];
	const char *p, *q;
	FILE *f;
	size_t n;

	*agent = NULL;
	path = NULL;
	for (n = 0; HAVE_CREW && n < ag->cfg->ncmds; n++) /* a crew's */
		if (strncmp(ag->cfg->cmds[n].name, input + 1, nlen) == 0 &&
		    ag->cfg->cmds[n].name[nlen] == '\0')
			path = (char *)ag->cfg->cmds[n].path;
	if (path == NULL) {
		if (ag->cfg->commands_dir == NULL || nlen == 0 || nlen > 64)
			return -E_NOENT;
		for (p = input + 1; p < input + 1 + nlen; p++)
			if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' &&
			    *p <= '9') || *p == '-' || *p == '_'))
				return -E_NOENT;
		if ((path = arena_printf(&ag->turn, "%s/%.*s.command.md",
		    ag->cfg->commands_dir, (int)nlen, input + 1)) == NULL)
			return -E_NOMEM;
	}
	if ((f = fopen(path, "r")) == NULL)
		return -E_NOENT;
	sbuf_init(&sb, &ag->turn, 64u << 10);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		sbuf_add(&sb, buf, n);
	fclose(f);
	if (sb.err)
		return sb.err;
	text = sb.p;
	body.p = text;
	body.n = sb.len;
	if (fm_split(text, sb.len, &y, &yl, &body, &bl) == 0 &&
	    fm_parse(&ag->turn, y.p, y.n, yl, &root, &fe) == 0 &&
	    (a = fm_get(root, "agent")) != NULL && a->kind == FM_SCALAR)
		*agent = a->s;
	sbuf_init(&sb, &ag->turn, 0);
	for (p = body.p; p < body.p + body.n; p = q + 10) {
		q = strstr(p, "$ARGUMENTS");
		if (q == NULL || q >= body.p + body.n) {
			sbuf_add(&sb, p, (size_t)(body.p + body.n - p));
			break;
		}
		sbuf_add(&sb, p, (size_t)(q - p));
		sbuf_adds(&sb, args);
	}
	if (sb.err)
		return sb.err;
	*out = (char *)str_dup(&ag->turn, str_trim((struct str){ sb.p,
	    sb.len }));
	return *out != NULL ? 0 : -E_NOMEM;
}
