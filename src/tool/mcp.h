/* mcp.h - the MCP client: the tools of Model Context Protocol servers,
 * each a process on stdio started in the sandbox under a policy of its
 * own, offered to the agents the configuration names as
 * mcp__SERVER__TOOL. JSON-RPC 2.0, one message a line; protocol versions
 * 2024-11-05 to 2025-11-25 (only initialize, tools/list, tools/call,
 * ping and notifications/tools/list_changed are used, alike in all of
 * them).
 *
 * The servers of the configuration and of skills: skill/mcp_spec.h.
 */
#ifndef MCP_H
#define MCP_H

#include "base/arena.h"
#include "base/base.h"
#include "sandbox/sandbox.h"
#include "skill/mcp_spec.h"

#define MCP_MAX_TOOLS	32		/* offered per server */
#define MCP_LINE_MAX	(512u << 10)	/* one message from a server */

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
