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
 * -c FILE         configuration or crew, before or after `run`; -d DIR a
 *                 skills folder (skillbox --help: the global options)
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
#include <stdlib.h>

#include "agent/agent.h"
#include "cmd/cmd.h"
#include "config.h"
#include "base/str.h"

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
		case O_NOCACHE:	/* no cache without EVAL: nothing to skip */
			if (HAVE_EVAL)
				setenv("SKILLBOX_NO_CACHE", "1", 1);
			break;
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
	    1, &p)) != 0)
		return r;
	agent_entry(ag, agent, plan);
	st = agent_turn(ag, in.p, in.len, &final);
	cmd_agent_answer(&p, st, final);
	if (st == AG_WAIT && !json)
		cmd_wait_hint(ag);
	agent_close(ag);
	return cmd_agent_status(st);
}
