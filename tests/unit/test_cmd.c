/* test_cmd.c - what the applets share (cmd.c): the message of an applet
 * left out of the build (main.c's table names its switch; an e2e run of
 * a FEATURES=0 build, tests/e2e/features.test, checks the table). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "unit.h"

static void
off(void)
{
	char buf[200];
	ssize_t n;
	int p[2], saved;

	if (pipe(p) != 0 || (saved = dup(2)) < 0) {
		t_fail(__FILE__, __LINE__, "pipe");
		return;
	}
	dup2(p[1], 2);
	T_EQI(cmd_off("mcp", "MCP"), EXIT_USAGE);
	dup2(saved, 2);
	close(saved);
	close(p[1]);
	n = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	buf[n > 0 ? n : 0] = '\0';
	T_EQS(buf, "skillbox: mcp: not in this build (MCP=0)\n");
	T_EQI(EXIT_USAGE, 2);
}

static const struct unit_case cases[] = {
	{ "off", off },
};

const struct unit_suite suite_cmd = { "cmd", cases, ARRAY_LEN(cases) };
