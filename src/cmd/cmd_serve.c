/* cmd_serve.c - the agent as a local HTTP service
 * usage: skillbox serve [--listen HOST:PORT] [--port-file FILE]
 *        skillbox serve --hash-token TOKEN
 * One process answers HTTP/1.1 (and 1.0) on serve.listen, by default
 * 127.0.0.1:8080. Each agent turn runs in a forked worker that streams its
 * events back; a worker that crashes or runs out of memory ends its turn
 * with an error, never the server.
 *
 *   GET  /                      the chat page
 *   GET  /health                no token needed
 *   GET  /api/v1/skills         the skills a token may use
 *   GET  /api/v1/sessions       the token's sessions, newest first
 *   GET  /api/v1/sessions/NAME  its events as NDJSON; ?from=OFFSET or
 *                               Last-Event-ID: OFFSET for the rest
 *   DELETE /api/v1/sessions/NAME
 *   POST /api/v1/run            {"input": "...", "session": "NAME"}:
 *                               the --json events as Server-Sent Events
 *                               (id: the log offset), or one JSON reply
 *                               with Accept: application/json
 *   POST /api/v1/sessions/NAME/answer  {"input": "..."}: the answer to
 *                               the question the session's turn waits
 *                               on (ask_user), or {"approve": BOOL,
 *                               "reason": "..."}; then as /api/v1/run
 * [JOBS]   GET  /api/v1/jobs           the job board; ?status=NAME
 * [JOBS]   POST /api/v1/jobs           {"title", "input", "to", "parents",
 * [JOBS]                               "schema", "budget", "timeout",
 * [JOBS]                               "tries", "backoff"}: as jobs add
 * [JOBS]   GET  /api/v1/jobs/ID        a job with its events
 * [JOBS]   POST /api/v1/jobs/ID/block|unblock|comment|cancel  {"text":..}
 * [JOBS]   GET  /api/v1/jobs/events    the journal's new lines as SSE (id:
 * [JOBS]                               the offset after; Last-Event-ID or
 * [JOBS]                               ?from=OFFSET; event: reset after a
 * [JOBS]                               compaction); not for a token
 * [JOBS]                               limited to skills (403)
 *   GET  /v1/models             OpenAI-compatible
 *   POST /v1/chat/completions   OpenAI-compatible, streamed or not; the
 *                               `user` field names the session; when it
 *                               waits on a question, the message answers
 *                               (an approval: "yes", or why not)
 *
 * --listen HOST:PORT  instead of serve.listen (port 0: any free port)
 * --port-file FILE    write the port listened on to FILE
 * --hash-token TOKEN  print the line to put in serve.tokens
 *
 * Tokens are kept as SHA-256 hashes in serve.tokens; without any, no
 * token is asked and the server listens on loopback addresses only.
 * With serve.tls_cert and serve.tls_key (PEM; an EC or RSA key) it speaks
 * HTTPS, TLS 1.2, instead of HTTP.
 * SIGTERM stops accepting, lets running turns finish and exits; SIGHUP
 * reloads the configuration. One line per request goes to stderr, or to
 * syslog with serve.log: syslog.
 * Exit status: 0 stopped by SIGTERM, 1 cannot start, 2 usage. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "agent/cfg.h"
#include "base/log.h"
#include "base/sha256.h"
#include "cmd/cmd.h"
#include "serve/serve.h"

static int
hash_token(const char *tok)
{
	unsigned char d[32];
	char hex[65];
	struct sha256 h;

	if (strlen(tok) < 16) {
		log_err("a token needs 16 characters at least (try: head -c 24 "
		    "/dev/urandom | base64)");
		return EXIT_USAGE;
	}
	sha256_init(&h);
	sha256_feed(&h, tok, strlen(tok));
	sha256_final(&h, d);
	sha256_hex(d, hex);
	printf("%s\n", hex);
	return EXIT_OK;
}

/* Said before the first request. */
static int
key_check(void)
{
	struct arena_mark m = arena_mark(&app.perm);
	struct cfg *c;
	int r;

	if ((r = cmd_cfg_load(&c)) == 0)
		r = cmd_key_check(c);
	arena_reset_to(&app.perm, m);
	return r;
}

int
cmd_serve(int argc, char **argv)
{
	enum { O_LISTEN = 256, O_PORTFILE, O_HASH };
	static const struct option lo[] = {
		{ "listen", required_argument, NULL, O_LISTEN },
		{ "port-file", required_argument, NULL, O_PORTFILE },
		{ "hash-token", required_argument, NULL, O_HASH },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct serve_opts o;
	int c;

	memset(&o, 0, sizeof(o));
	optind = 0;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case O_LISTEN: o.listen = optarg; break;
		case O_PORTFILE: o.port_file = optarg; break;
		case O_HASH: return hash_token(optarg);
		case 'h': return cmd_help("serve");
		default: return cmd_usage("serve", "bad option");
		}
	}
	if (optind < argc)
		return cmd_usage("serve", "no arguments are taken");
	if ((c = key_check()) != 0)
		return c;
	o.config = app.config;
	o.nomem = cmd_nomem;
	o.usage = cmd_usage;
	return serve_main(&app.perm, &o);
}
