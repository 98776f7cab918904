/* cmd_answer.c - answer the question a paused turn waits on
 * usage: skillbox answer [-s] [--json] SESSION [TEXT|--approve|--deny [WHY]]
 *        [--call ID]
 * When the model asks the person something (its ask_user tool), the turn
 * pauses: `skillbox run` prints the question and exits 5, and the session
 * log holds the turn. This gives the answer (from the command line or,
 * without TEXT, from stdin) and the turn goes on where it stopped, in
 * this process: the model is not asked again for the steps it took.
 * A call that needs approval pauses the same way: --approve runs it,
 * --deny makes its result an error for the model, with WHY. --call ID
 * names the call (the id the question showed): when the session waits on
 * another one (a later message paused on a new call), nothing is decided
 * and the exit status is 2. Without --call the call waiting now is
 * decided, as before: the person at this terminal sees it in `run`.
 *
 * -s      stream the answer as it arrives
 * --json  NDJSON events on stdout, as `run --json`
 * -c FILE configuration, before or after `answer` (skillbox --help)
 *
 * A new `run` or `chat` message on the session instead of an answer
 * drops the paused turn (logged as turn_abort).
 * Exit status: as `run`: 0 answered, 1 failed or the session waits on no
 * question, 2 usage (or the wrong kind of answer), 3 memory budget
 * exhausted, 4 stopped by a limit, 5 waiting again. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "agent/agent.h"
#include "cmd/cmd.h"
#include "base/log.h"
#include "base/str.h"

int
cmd_answer(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "approve", no_argument, NULL, 'a' },
		{ "deny", no_argument, NULL, 'd' },
		{ "call", required_argument, NULL, 'C' },
		{ "stream", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, json = 0, stream = 0, r, decide = -1;
	const char *final, *call = NULL, *asked;
	struct cmd_printer p;
	struct agent *ag;
	enum agent_status st;
	struct sbuf in;

	optind = 0;
	while ((c = getopt_long(argc, argv, "sh", lo, NULL)) != -1) {
		switch (c) {
		case 's': stream = 1; break;
		case 'j': json = 1; break;
		case 'a': decide = 1; break;
		case 'd': decide = 0; break;
		case 'C': call = optarg; break;
		case 'h': return cmd_help("answer");
		default: return cmd_usage("answer", "bad option");
		}
	}
	if (optind == argc || argc - optind > 2 || (decide == 1 &&
	    argc - optind > 1))
		return cmd_usage("answer", "SESSION, then the answer, quoted");
	if (call != NULL && decide < 0)
		return cmd_usage("answer", "--call goes with --approve or --deny");
	if (decide < 0 && (r = cmd_read_text("answer", optind + 1 < argc ?
	    argv[optind + 1] : NULL, &in)) != 0)
		return r;
	if ((r = cmd_agent_open(&ag, argv[optind], 1, stream, json, 0, 1,
	    &p)) != 0)
		return r;
	if (agent_question(ag) == NULL) {
		log_err("session %s waits on no question", argv[optind]);
		agent_close(ag);
		return EXIT_FAIL;
	}
	if ((decide >= 0) != agent_approval(ag)) {
		log_err("session %s waits on %s", argv[optind], decide < 0 ?
		    "an approval: answer --approve, or --deny 'REASON'" :
		    "an answer to a question, not an approval");
		agent_close(ag);
		return EXIT_USAGE;
	}
	if (call != NULL && strcmp(call, (asked = agent_asked(ag)) ?
	    asked : "") != 0) {
		log_err("session %s waits on call %s now, not %s: %s",
		    argv[optind], asked ? asked : "?", call, agent_question(ag));
		agent_close(ag);
		return EXIT_USAGE;
	}
	st = decide >= 0 ? agent_decide(ag, decide, optind + 1 < argc ?
	    argv[optind + 1] : NULL, &final) : agent_answer(ag, in.p, in.len,
	    &final);
	cmd_agent_answer(&p, st, final);
	if (st == AG_WAIT && !json)
		cmd_wait_hint(ag);
	agent_close(ag);
	return cmd_agent_status(st);
}
