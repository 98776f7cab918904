/* mcp.h - the MCP client: the tools of Model Context Protocol servers,
 * each a process on stdio started in the sandbox under a policy of its
 * own, offered to the agents the configuration names as
 * mcp__SERVER__TOOL. JSON-RPC 2.0, one message a line; protocol versions
 * 2024-11-05 to 2025-11-25 (only initialize, tools/list, tools/call,
 * ping and notifications/tools/list_changed are used, alike in all of
 * them).
 *
 *	mcp_servers:
 *	  NAME:                       # [A-Za-z0-9-] (tool names: mcp__NAME__T)
 *	    command: [PROG, ARG, ...] # PROG a path, or found in the
 *	                              # sandbox's PATH
 *	    agents: [entry, SKILL]    # who sees its tools, `*` all [entry]
 *	    tools: [TOOL, ...]        # the ones offered [all it lists]
 *	    allowed_tools: "Read WebFetch"   # its sandbox, as a skill's
 *	                              # allowed-tools [none: no network]
 *	    root: DIR                 # it reads (its code) [the config's
 *	                              # folder]; also its working folder
 *	    workspace: DIR            # it may write [none]
 *	    env: [VAR, VAR=VALUE ...] # VAR passed from our environment;
 *	                              # VAR=VALUE set
 *	    timeout: 30               # seconds a request may take
 *
 * A skill's front-matter may declare servers too, for its own agent only:
 * command, tools, allowed_tools (narrowed by the host's sandbox.allow and
 * deny, as its scripts' are) and timeout; it reads its skill folder and
 * writes the agent's workspace, with nothing from the environment.
 */
#ifndef MCP_H
#define MCP_H

#include "base/arena.h"
#include "base/base.h"
#include "fmt/fm.h"
#include "sandbox/sandbox.h"

#define MCP_MAX_SERVERS	8		/* in the configuration */
#define MCP_MAX_ALL	16		/* with the skills' */
#define MCP_MAX_TOOLS	32		/* offered per server */
#define MCP_LINE_MAX	(512u << 10)	/* one message from a server */

struct mcp_server {
	const char	*name;
	const char	**argv;		/* NULL-terminated */
	const char	**agents;	/* NULL-terminated */
	const char	**tools;	/* NULL-terminated; NULL: all */
	const char	*allowed_tools;
	const char	*root, *workspace;
	const char	**env;		/* NULL-terminated */
	unsigned	 timeout_ms;
	int		 skill;		/* a skill's: the agent's workspace */
};

/* The mcp_servers map of a configuration (nd), paths relative to dir;
 * of skill `skill`'s front-matter when that is not NULL (dir its folder).
 * 0, -E_INVAL (err says what, *line where), -E_NOMEM. */
int	mcp_parse(struct arena *a, const struct fm_node *nd, const char *dir,
	    const char *skill, struct mcp_server **out, unsigned *n,
	    unsigned *line, char *err, size_t errlen);

struct mcp;
struct tool_ext;

/* How servers run: base (the user scripts run as, the layers required),
 * the host's narrowing of permissions (allow 0: none), the workspace of
 * skills' servers, the cut of results. */
struct mcp_host {
	const struct sbx_policy	*base;
	unsigned		 allow, deny;
	const char		*workspace;
	size_t			 out_cap;
};

/* The client of servers v[0..n): started when an agent that may use one
 * first needs its tools, with the server's own permissions narrowed by
 * h's. NULL when the budget ran out. */
struct mcp *mcp_new(struct arena *perm, const struct mcp_server *v,
	    unsigned n, const struct mcp_host *h);

/* Its tools as a tool_ext (ext->next left alone). */
void	mcp_ext(struct mcp *m, struct tool_ext *ext);

/* Server i's configuration, or NULL past the last. */
const struct mcp_server *mcp_server(const struct mcp *m, unsigned i);

/* Server i for `skillbox mcp`: start it; its tools (server's names, as
 * offered) and confinement. 0 or -E_* with *why. */
int	mcp_open(struct mcp *m, unsigned i, const char ***names,
	    unsigned *ntools, const char **confinement, const char **why);

/* Call tool (the server's name) of server i with args (a JSON object;
 * n 0: none): the result as an agent gets it. 0 or -E_NOMEM. */
struct tool_out;
int	mcp_call(struct mcp *m, unsigned i, struct arena *a, const char *tool,
	    const char *args, size_t n, struct tool_out *out);

/* The protocol version to answer a client that asked for `asked`: the
 * same when we speak it, else our latest. */
const char *mcp_version(const char *asked);

/* One line a server: its state, tools and agents (/mcp_servers). */
struct sbuf;
void	mcp_describe(const struct mcp *m, struct sbuf *sb);

/* Stop every server this process started. */
void	mcp_close(struct mcp *m);

#endif
