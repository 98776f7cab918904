/* cmd_run.c - run one request through the agents and print the answer
 * usage: skillbox run [-s] [--json] [--session NAME] [PROMPT]
 * The prompt comes from the command line or, without one, from stdin. The
 * entry agent answers, handing work to skill agents that run the skills'
 * scripts in the sandbox. With no model configured, the offline mode runs
 * the best-matching skill's default action and says so.
 *
 * -s              stream the answer as it arrives
 * --json          NDJSON events on stdout: agent_start, agent_end,
 *                 tool_start, tool_end, handoff, text, usage, error,
 *                 final (and the session log's user, assistant, turn_end)
 * --session NAME  continue that session (created if new)
 * --resume NAME   continue that session; it must exist
 * --no-log        keep no session log
 * -c FILE         configuration (before the applet: skillbox -c FILE run)
 *
 * Progress goes to stderr on a terminal (or with -v).
 * Exit status: 0 answered, 1 failed (model, tool or session error),
 * 2 usage, 3 memory budget exhausted, 4 stopped by a limit (turns, time,
 * tokens, budget). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "cfg.h"
#include "cmd.h"
#include "json.h"
#include "log.h"
#include "str.h"

/* A string field of an event, in app.perm, or "". It is shown to a
 * person: controls are neutralised when a terminal is at either end. */
static const char *
field(const struct cmd_printer *p, const char *js, size_t n,
    const char *key)
{
	struct arena *a = &app.perm;
	struct json_doc d;
	size_t len;
	char *s;

	if (json_parse(a, js, n, 1u << 16, &d) != 0 ||
	    json_str(&d, a, json_get(&d, 0, key), &s, &len) != 0)
		return "";
	if (p->tty)
		str_ctl_clean(s, len);
	return s;
}

static void
on_event(void *ctx, const char *type, const char *js, size_t n)
{
	struct cmd_printer *p = ctx;
	struct arena_mark m;

	if (p->json) {
		if (strcmp(type, "text") == 0 && !p->stream)
			return;
		fwrite(js, 1, n, stdout);
		putchar('\n');
		fflush(stdout);
		return;
	}
	m = arena_mark(&app.perm);
	if (strcmp(type, "text") == 0 && p->stream) {
		if (strcmp(field(p, js, n, "agent"), "entry") == 0) {
			const char *d = field(p, js, n, "delta");

			fputs(d, stdout);
			fflush(stdout);
			p->open = *d != '\0' && d[strlen(d) - 1] != '\n';
		}
	} else if (p->progress && strcmp(type, "handoff") == 0) {
		const char *to = field(p, js, n, "to");

		if (*field(p, js, n, "task") != '\0')
			fprintf(stderr, "  -> %s\n", to);
		else
			fprintf(stderr, "  <- %s\n", field(p, js, n,
			    "from"));
	} else if (p->progress && strcmp(type, "tool_end") == 0) {
		struct json_doc d;
		int ok = 0;
		long long ms = 0;

		if (json_parse(&app.perm, js, n, 1u << 16, &d) == 0) {
			json_bool(&d, json_get(&d, 0, "ok"), &ok);
			json_int(&d, json_get(&d, 0, "ms"), &ms);
		}
		fprintf(stderr, "  [%s] %s %s (%lld ms%s%s)\n",
		    field(p, js, n, "agent"), field(p, js, n,
		    "name"), ok ? "ok" : "failed", ms,
		    *field(p, js, n, "confinement") ? "; " : "",
		    field(p, js, n, "confinement"));
	} else if (strcmp(type, "error") == 0) {
		if (p->open)
			putchar('\n'), p->open = 0;
		fflush(stdout);
		snprintf(p->said, sizeof(p->said), "%s", field(p, js,
		    n, "message"));
		log_err("%s", field(p, js, n, "message"));
	}
	arena_reset_to(&app.perm, m);
}

/* see cmd.h */
int
cmd_agent_open(struct agent **out, const char *session, int resume,
    int stream, int json, int nolog, struct cmd_printer *p)
{
	struct agent_opts o;
	struct cfg *c;
	char why[320];
	int e;

	if ((c = arena_zalloc(&app.perm, sizeof(*c))) == NULL)
		return cmd_nomem("loading the configuration");
	if ((e = cfg_load(c, &app.perm, app.config, why, sizeof(why))) != 0) {
		if (e == -E_NOMEM)
			return cmd_nomem("loading the configuration");
		log_err("%s", why);
		return EXIT_FAIL;
	}
	memset(p, 0, sizeof(*p));
	p->json = json;
	p->stream = stream;
	p->progress = !json && (isatty(2) || log_get_level() >= LOG_INFO);
	p->tty = isatty(1) || isatty(2);
	memset(&o, 0, sizeof(o));
	o.session = session;
	o.resume = resume;
	o.stream = stream;
	o.ephemeral = nolog;
	o.on_event = on_event;
	o.ctx = p;
	if ((*out = agent_new(&app.perm, c, &o, &e, why, sizeof(why))) ==
	    NULL) {
		if (e == -E_NOMEM)
			return cmd_nomem("starting the agent");
		log_err("%s", why);
		return EXIT_FAIL;
	}
	return 0;
}

/* see cmd.h */
int
cmd_agent_status(enum agent_status st)
{
	switch (st) {
	case AG_OK: case AG_EXIT: return EXIT_OK;
	case AG_LIMIT: return EXIT_LIMIT;
	case AG_NOMEM: return cmd_nomem("running the turn");
	default: return EXIT_FAIL;
	}
}

/* see cmd.h */
void
cmd_agent_answer(struct cmd_printer *p, enum agent_status st,
    const char *final)
{
	char *s;

	if (p->json || final == NULL)
		return;
	if (p->stream && st == AG_OK) {
		if (p->open)
			putchar('\n');
		p->open = 0;
		return;
	}
	if (p->tty && (s = arena_strdup(&app.perm,
	    final)) != NULL) {
		str_ctl_clean(s, strlen(s));
		final = s;
	}
	if (st == AG_OK || st == AG_EXIT) {
		fputs(final, stdout);
		if (*final != '\0' && final[strlen(final) - 1] != '\n')
			putchar('\n');
	} else if ((st == AG_FAIL || st == AG_LIMIT) &&
	    strncmp(final, p->said, sizeof(p->said) - 1) != 0)
		fprintf(stderr, "skillbox: %s\n", final);	/* not said yet */
	p->said[0] = '\0';
	fflush(stdout);
}

int
cmd_run(int argc, char **argv)
{
	enum { O_JSON = 256, O_SESSION, O_RESUME, O_NOLOG };
	static const struct option lo[] = {
		{ "json", no_argument, NULL, O_JSON },
		{ "session", required_argument, NULL, O_SESSION },
		{ "resume", required_argument, NULL, O_RESUME },
		{ "no-log", no_argument, NULL, O_NOLOG },
		{ "stream", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *session = NULL, *final;
	int c, json = 0, stream = 0, resume = 0, nolog = 0, r;
	struct cmd_printer p;
	struct agent *ag;
	enum agent_status st;
	struct sbuf in;
	char buf[4096];
	ssize_t k;

	optind = 0;
	while ((c = getopt_long(argc, argv, "sh", lo, NULL)) != -1) {
		switch (c) {
		case 's': stream = 1; break;
		case O_JSON: json = 1; break;
		case O_SESSION: session = optarg; break;
		case O_RESUME: session = optarg; resume = 1; break;
		case O_NOLOG: nolog = 1; break;
		case 'h': return cmd_help("run");
		default: return cmd_usage("run", "bad option");
		}
	}
	sbuf_init(&in, &app.perm, 1u << 20);
	if (optind + 1 < argc)
		return cmd_usage("run", "one prompt, quoted");
	if (optind < argc)
		sbuf_adds(&in, argv[optind]);
	else
		while ((k = read(0, buf, sizeof(buf))) > 0)
			sbuf_add(&in, buf, (size_t)k);
	if (in.err)
		return in.err == -E_LIMIT ? cmd_usage("run", "prompt over 1 "
		    "MiB") : cmd_nomem("reading the prompt");
	while (in.len > 0 && (in.p[in.len - 1] == '\n' ||
	    in.p[in.len - 1] == '\r'))
		sbuf_truncate(&in, in.len - 1);
	if (in.len == 0)
		return cmd_usage("run", "empty prompt");
	if ((r = cmd_agent_open(&ag, session, resume, stream, json, nolog,
	    &p)) != 0)
		return r;
	st = agent_turn(ag, in.p, in.len, &final);
	cmd_agent_answer(&p, st, final);
	agent_close(ag);
	return cmd_agent_status(st);
}
