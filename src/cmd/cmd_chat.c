/* cmd_chat.c - an interactive conversation with the agents
 * usage: skillbox chat [-s] [--json] [--session NAME]
 * Reads one request per line from stdin (a terminal, a serial console or
 * a pipe) and answers each; /help lists the commands, /exit or end of
 * input ends the conversation. The session log keeps every turn, and
 * --session NAME continues it later.
 *
 * -s              stream answers as they arrive
 * --json          NDJSON events on stdout
 * --session NAME  continue or create that session
 * --resume NAME   continue that session; it must exist
 * [EVAL] --no-cache      ask the model even when the response cache has it
 * -c FILE         configuration or crew, before or after `chat` (skillbox
 *                 --help: the global options)
 *
 * When the model asks a question (ask_user), the next line is the answer
 * ("answer>" on a terminal); /exit then leaves with the turn paused in
 * the session, for `skillbox answer` or a later chat. To an approval, y
 * approves; anything else denies, the text being the reason.
 * Exit status: 0 at the end of input or /exit, 1 when the session could
 * not be opened, 2 usage, 3 memory budget exhausted. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "cmd/cmd.h"
#include "config.h"
#include "base/log.h"

#define LINE_MAX_BYTES	(64u << 10)

int
cmd_chat(int argc, char **argv)
{
	enum { O_JSON = 256, O_SESSION, O_RESUME, O_NOCACHE };
	static const struct option lo[] = {
		{ "json", no_argument, NULL, O_JSON },
		{ "session", required_argument, NULL, O_SESSION },
		{ "resume", required_argument, NULL, O_RESUME },
		{ "no-cache", no_argument, NULL, O_NOCACHE },
		{ "stream", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cmd_printer printer;
	const char *session = NULL, *final;
	int c, json = 0, stream = 0, resume = 0, r, tty = isatty(0);
	char *line;
	struct agent *ag;
	enum agent_status st = AG_OK;
	size_t n;

	optind = 0;
	while ((c = getopt_long(argc, argv, "sh", lo, NULL)) != -1) {
		switch (c) {
		case 's': stream = 1; break;
		case O_JSON: json = 1; break;
		case O_SESSION: session = optarg; break;
		case O_RESUME: session = optarg; resume = 1; break;
		case O_NOCACHE:	/* no cache without EVAL: nothing to skip */
			if (HAVE_EVAL)
				setenv("SKILLBOX_NO_CACHE", "1", 1);
			break;
		case 'h': return cmd_help("chat");
		default: return cmd_usage("chat", "bad option");
		}
	}
	if (optind < argc)
		return cmd_usage("chat", "no arguments; type requests on "
		    "stdin");
	if ((line = arena_alloc(&app.perm, LINE_MAX_BYTES)) == NULL)
		return cmd_nomem("starting");
	if ((r = cmd_agent_open(&ag, session, resume, stream, json, 0, 1,
	    &printer)) != 0)
		return r;
	if (tty)
		fprintf(stderr, "skillbox chat, session %s; /help for "
		    "commands, /exit to leave\n", agent_session(ag));
	if (agent_question(ag) != NULL && !json)
		printf("%s\n", agent_question(ag));	/* a paused turn */
	for (;;) {
		if (tty) {
			fputs(agent_approval(ag) ? "approve? [y/N or why not]> " :
			    agent_question(ag) != NULL ? "answer> " : "> ",
			    stderr);
			fflush(stderr);
		}
		if (fgets(line, LINE_MAX_BYTES, stdin) == NULL)
			break;
		n = strlen(line);
		if (n == LINE_MAX_BYTES - 1 && line[n - 1] != '\n') {
			log_err("chat: line over %u bytes ignored",
			    LINE_MAX_BYTES);
			while ((c = getchar()) != EOF && c != '\n')
				;
			continue;
		}
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (n == 0)
			continue;
		/* While the model waits on a question the line is the
		 * answer; /exit leaves it waiting. */
		if (agent_question(ag) != NULL && strcmp(line, "/exit") == 0)
			break;
		if (agent_question(ag) != NULL)
			st = agent_reply(ag, line, n, &final);
		else
			st = agent_turn(ag, line, n, &final);
		cmd_agent_answer(&printer, st, final);
		if (st == AG_EXIT || st == AG_NOMEM)
			break;
	}
	agent_close(ag);
	return st == AG_NOMEM ? cmd_nomem("running the turn") : EXIT_OK;
}
