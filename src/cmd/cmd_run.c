/* cmd_run.c - run one request through the agents and print the answer
 * usage: skillbox run [-s] [--json] [--session NAME] [--agent SKILL
 *        [--plan-only]] [PROMPT]
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
 * [EVAL] --no-cache      ask the model even when the response cache has it
 * --agent SKILL   give the prompt to that skill's agent (an orchestration
 *                 skill runs its plan or loop) instead of the entry agent
 * --plan-only     with an orchestration skill in SOP mode: print its plan,
 *                 checked, and run nothing
 * -c FILE         configuration (before the applet: skillbox -c FILE run)
 *
 * Progress goes to stderr on a terminal (or with -v).
 * When the model asks the person something (ask_user, offered when the
 * session is logged), the question is printed and the turn waits in the
 * session log: `skillbox answer SESSION TEXT` goes on with it (or
 * --approve, --deny [REASON] for a call that needs approval).
 * Exit status: 0 answered, 1 failed (model, tool or session error),
 * 2 usage, 3 memory budget exhausted, 4 stopped by a limit (turns, time,
 * tokens, budget), 5 waiting for an answer (skillbox answer). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/cfg.h"
#include "cmd/cmd.h"
#include "fmt/json.h"
#include "base/log.h"
#include "base/str.h"

/* Text of an event shown to a person, in app.perm: controls are
 * neutralised when a terminal is at either end. */
static const char *
shown(const struct cmd_printer *p, const char *s, size_t n)
{
	char *c;

	if (s == NULL)
		return "";
	if ((c = arena_strndup(&app.perm, s, n ? n : strlen(s))) == NULL)
		return "";
	if (p->tty)
		str_ctl_clean(c, strlen(c));
	return c;
}

static void
on_event(void *ctx, const struct agent_event *e)
{
	struct cmd_printer *p = ctx;
	struct arena_mark m;

	if (p->json) {
		if (strcmp(e->type, "text") == 0 && !p->stream)
			return;
		fwrite(e->json, 1, e->n, stdout);
		putchar('\n');
		fflush(stdout);
		return;
	}
	m = arena_mark(&app.perm);
	if (strcmp(e->type, "text") == 0 && p->stream) {
		if (strcmp(e->agent, "entry") == 0 && e->len > 0) {
			const char *d = shown(p, e->text, e->len);

			fputs(d, stdout);
			fflush(stdout);
			p->open = *d != '\0' && d[strlen(d) - 1] != '\n' ?
			    1 : 2;
		}
	} else if (p->progress && strcmp(e->type, "handoff") == 0) {
		if (!e->back)
			fprintf(stderr, "  -> %s\n", shown(p, e->name, 0));
		else
			fprintf(stderr, "  <- %s\n", shown(p, e->from, 0));
	} else if (p->progress && strcmp(e->type, "tool_end") == 0) {
		fprintf(stderr, "  [%s] %s %s (%lld ms%s%s)\n",
		    shown(p, e->agent, 0), shown(p, e->name, 0), e->ok ? "ok" :
		    "failed", e->ms < 0 ? 0 : e->ms, e->confinement ? "; " :
		    "", shown(p, e->confinement, 0));
	} else if (strcmp(e->type, "error") == 0) {
		const char *msg = shown(p, e->text, e->len);

		if (p->open == 1)
			putchar('\n');
		p->open = 0;
		fflush(stdout);
		snprintf(p->said, sizeof(p->said), "%s", msg);
		log_err("%s", msg);
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
	o.json = json;
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
cmd_read_text(const char *applet, const char *arg, struct sbuf *in)
{
	char buf[4096];
	ssize_t k;

	sbuf_init(in, &app.perm, 1u << 20);
	if (arg != NULL)
		sbuf_adds(in, arg);
	else
		while ((k = read(0, buf, sizeof(buf))) > 0)
			sbuf_add(in, buf, (size_t)k);
	if (in->err)
		return in->err == -E_LIMIT ? cmd_usage(applet, "text over 1 "
		    "MiB") : cmd_nomem("reading the text");
	while (in->len > 0 && (in->p[in->len - 1] == '\n' ||
	    in->p[in->len - 1] == '\r'))
		sbuf_truncate(in, in->len - 1);
	return 0;
}

/* see cmd.h */
int
cmd_agent_status(enum agent_status st)
{
	switch (st) {
	case AG_OK: case AG_EXIT: return EXIT_OK;
	case AG_LIMIT: return EXIT_LIMIT;
	case AG_WAIT: return EXIT_WAIT;
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
	/* Streamed: said already, unless no text came (/help, a job's
	 * answer). */
	if (p->stream && st == AG_OK && p->open) {
		if (p->open == 1)
			putchar('\n');
		p->open = 0;
		return;
	}
	if (p->tty && (s = arena_strdup(&app.perm,
	    final)) != NULL) {
		str_ctl_clean(s, strlen(s));
		final = s;
	}
	if (st == AG_OK || st == AG_EXIT || st == AG_WAIT) {
		fputs(final, stdout);
		if (*final != '\0' && final[strlen(final) - 1] != '\n')
			putchar('\n');
	} else if ((st == AG_FAIL || st == AG_LIMIT) &&
	    strncmp(final, p->said, sizeof(p->said) - 1) != 0)
		fprintf(stderr, "skillbox: %s\n", final);	/* not said yet */
	p->said[0] = '\0';
	fflush(stdout);
}

/* see cmd.h */
void
cmd_wait_hint(struct agent *ag)
{
	if (agent_approval(ag))
		fprintf(stderr, "skillbox: waiting for approval: skillbox answer "
		    "%s --approve, or --deny 'REASON'\n", agent_session(ag));
	else
		fprintf(stderr, "skillbox: waiting for an answer: skillbox "
		    "answer %s 'TEXT'\n", agent_session(ag));
}

/* see cmd.h */
enum agent_status
cmd_agent_reply(struct agent *ag, const char *s, size_t n, const char **final)
{
	int yes = strcasecmp(s, "y") == 0 || strcasecmp(s, "yes") == 0;

	return !agent_approval(ag) ? agent_answer(ag, s, n, final) :
	    agent_decide(ag, yes, yes ? NULL : s, final);
}

int
cmd_run(int argc, char **argv)
{
	enum { O_JSON = 256, O_SESSION, O_RESUME, O_NOLOG, O_AGENT, O_PLAN,
	    O_NOCACHE };
	static const struct option lo[] = {
		{ "json", no_argument, NULL, O_JSON },
		{ "session", required_argument, NULL, O_SESSION },
		{ "resume", required_argument, NULL, O_RESUME },
		{ "no-log", no_argument, NULL, O_NOLOG },
		{ "no-cache", no_argument, NULL, O_NOCACHE },
		{ "agent", required_argument, NULL, O_AGENT },
		{ "plan-only", no_argument, NULL, O_PLAN },
		{ "stream", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *session = NULL, *final, *agent = NULL;
	int c, json = 0, stream = 0, resume = 0, nolog = 0, plan = 0, r;
	struct cmd_printer p;
	struct agent *ag;
	enum agent_status st;
	struct sbuf in;

	optind = 0;
	while ((c = getopt_long(argc, argv, "sh", lo, NULL)) != -1) {
		switch (c) {
		case 's': stream = 1; break;
		case O_JSON: json = 1; break;
		case O_SESSION: session = optarg; break;
		case O_RESUME: session = optarg; resume = 1; break;
		case O_NOLOG: nolog = 1; break;
		case O_NOCACHE: setenv("SKILLBOX_NO_CACHE", "1", 1); break;
		case O_AGENT: agent = optarg; break;
		case O_PLAN: plan = 1; break;
		case 'h': return cmd_help("run");
		default: return cmd_usage("run", "bad option");
		}
	}
	if (optind + 1 < argc)
		return cmd_usage("run", "one prompt, quoted");
	if ((r = cmd_read_text("run", optind < argc ? argv[optind] : NULL,
	    &in)) != 0)
		return r;
	if (in.len == 0)
		return cmd_usage("run", "empty prompt");
	if (plan && agent == NULL)
		return cmd_usage("run", "--plan-only needs --agent NAME");
	if ((r = cmd_agent_open(&ag, session, resume, stream, json, nolog,
	    &p)) != 0)
		return r;
	agent_entry(ag, agent, plan);
	st = agent_turn(ag, in.p, in.len, &final);
	cmd_agent_answer(&p, st, final);
	if (st == AG_WAIT && !json)
		cmd_wait_hint(ag);
	agent_close(ag);
	return cmd_agent_status(st);
}
