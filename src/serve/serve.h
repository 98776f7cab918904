/* serve.h - the agent as a local HTTP service: what `skillbox serve`
 * runs once its command line is read (cmd_serve.c has the endpoints and
 * the options). One process answers HTTP/1.1 in a poll() loop; each turn
 * runs in a forked worker. */
#ifndef SERVE_H
#define SERVE_H

#include <stddef.h>

#include "agent/agent.h"
#include "base/arena.h"
#include "base/base.h"

/* serve_main's exit statuses, those of the applets (cmd.h). */
enum { SERVE_OK = 0, SERVE_FAIL = 1 };

/* What the applet hands the server. The helpers live in cmd/, above this
 * layer, and so come as functions. */
struct serve_opts {
	const char	*config;	/* the config file; NULL: default */
	const char	*listen;	/* instead of serve.listen; or NULL */
	const char	*port_file;	/* the port goes here; or NULL */
	/* Report the exhausted budget while doing something; returns the
	 * exit status (cmd_nomem). */
	int		(*nomem)(const char *doing);
	/* Report a usage error of applet; returns the exit status
	 * (cmd_usage). */
	int		(*usage)(const char *applet, const char *fmt, ...)
			    ATTR_PRINTF(2, 3);
};

/* Load the configuration (o->config), listen on serve.listen (or
 * o->listen) and serve until SIGTERM; SIGHUP reloads the configuration.
 * What lives until exit (the connections, TLS credentials, each worker's
 * agent) comes from perm; requests and the configuration from the
 * process's budget. Returns SERVE_OK
 * once stopped by SIGTERM and the running turns finished, SERVE_FAIL when
 * it cannot start (the reason logged), or what o->usage or o->nomem
 * returned. */
int	serve_main(struct arena *perm, const struct serve_opts *o);

#endif
