/* mcp_spec.h - what an MCP server is, as the configuration (mcp_servers:
 * in skillbox.yaml) or a skill's front-matter declares it; the client that
 * runs them is tool/mcp.h.
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
#ifndef MCP_SPEC_H
#define MCP_SPEC_H

#include <stddef.h>

#include "base/arena.h"
#include "base/base.h"

#define MCP_MAX_SERVERS	8		/* in the configuration */
#define MCP_MAX_ALL	16		/* with the skills' */

struct fm_node;

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

#endif
