/* test_cmd.c - what the applets share (cmd.c): the message of an applet
 * left out of the build (main.c's table names its switch; an e2e run of
 * a FEATURES=0 build, tests/e2e/features.test, checks the table), and the
 * global options taken after an applet's name. */
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

/* The words left of "a b c ..." once the global options are taken, joined
 * by spaces into out; the status of cmd_global_take. */
static int
take(struct cmd_global *g, const char *own, const char *line, char *out,
    size_t n)
{
	char buf[256], *argv[32], *w;
	int argc = 0, r, i, saved = dup(2);
	size_t k = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (w = strtok(buf, " "); w != NULL && argc < 31; w = strtok(NULL,
	    " "))
		argv[argc++] = w;
	argv[argc] = NULL;
	memset(g, 0, sizeof(*g));
	freopen("/dev/null", "w", stderr);	/* usage errors are said */
	r = cmd_global_take(g, own, &argc, argv);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	out[0] = '\0';
	for (i = 0; i < argc && k < n; i++)
		k += (size_t)snprintf(out + k, n - k, "%s%s", i ? " " : "",
		    argv[i]);
	T(argv[argc] == NULL);
	return r;
}

static void
global_after(void)
{
	struct cmd_global g;
	char out[256];

	/* README's crew commands: skillbox run -c CREW 'prompt' */
	T_EQI(take(&g, "", "run -c crew.yaml hi", out, sizeof(out)), 0);
	T_EQS(out, "run hi");
	T_EQS(g.config, "crew.yaml");
	/* Anywhere before "--", long forms, = values, repeated -d. */
	T_EQI(take(&g, "", "mcp serve --config=a.yaml -d s1 --dir s2 -v "
	    "--stats -q --memory 4M -- -c x", out, sizeof(out)), 0);
	T_EQS(out, "mcp serve -- -c x");
	T_EQS(g.config, "a.yaml");
	T_EQS(g.memory, "4M");
	T_EQI(g.ndirs, 2);
	T_EQS(g.dirs[1], "s2");
	T_EQI(g.verbose + g.quiet + g.stats, 3);
	/* The applet's own options and their values stay. */
	T_EQI(take(&g, "m:", "llm -m gpt -c c.yaml -s -x hi", out,
	    sizeof(out)), 0);
	T_EQS(out, "llm -m gpt -s -x hi");
	T(g.memory == NULL);
	T_EQS(g.config, "c.yaml");
	T_EQI(take(&g, "d:q", "skills list -d -c -q -c k.yaml", out,
	    sizeof(out)), 0);
	T_EQS(out, "skills list -d -c -q");
	T_EQS(g.config, "k.yaml");
	/* exec: what follows the skill is the script's. */
	T_EQI(take(&g, "+d:S", "exec -d D --stats --timeout 5 -c c.yaml sk "
	    "s.sh -c arg", out, sizeof(out)), 0);
	T_EQS(out, "exec -d D --stats --timeout 5 sk s.sh -c arg");
	T_EQS(g.config, "c.yaml");
	T(g.stats == 0 && g.ndirs == 0);
	/* Not a global option: the applet says what is wrong with it. */
	T_EQI(take(&g, "", "run -cx --configx y", out, sizeof(out)), 0);
	T_EQS(out, "run -cx --configx y");
	/* A missing value, and a folder $SKILLBOX_SKILLS cannot hold. */
	T_EQI(take(&g, "", "run hi -c", out, sizeof(out)), EXIT_USAGE);
	T_EQI(take(&g, "", "run -d a:b hi", out, sizeof(out)), EXIT_USAGE);
}

static const struct unit_case cases[] = {
	{ "off", off },
	{ "global_after", global_after },
};

const struct unit_suite suite_cmd = { "cmd", cases, ARRAY_LEN(cases) };
