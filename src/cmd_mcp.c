/* cmd_mcp.c - the MCP servers of the configuration, and their tools
 * usage: skillbox mcp list [--json] [SERVER]
 *        skillbox mcp call SERVER TOOL [JSON]
 *
 * list   start each server (or SERVER) as an agent would, in its sandbox,
 *        and print its tools as the model sees them (mcp__SERVER__TOOL),
 *        the agents that may use them and the confinement it runs under.
 * call   call one tool with JSON arguments (an object; default {}) and
 *        print its result as the model would get it.
 *
 * Servers are configured under mcp_servers: in skillbox.yaml (README,
 * "MCP servers"). Each is stopped when the command ends.
 *
 * Exit status: 0 ok, 1 a server did not start or the tool reported an
 * error, 2 usage. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "json.h"
#include "log.h"
#include "mcp.h"
#include "str.h"
#include "tool.h"

static int
find(struct mcp *m, const char *name)
{
	const struct mcp_server *s;
	unsigned i;

	for (i = 0; (s = mcp_server(m, i)) != NULL; i++)
		if (strcmp(s->name, name) == 0)
			return (int)i;
	return -1;
}

static void
put_list(struct json_writer *w, const char *key, const char **v)
{
	json_key(w, key);
	json_begin_arr(w);
	for (; v != NULL && *v != NULL; v++)
		json_put_str(w, *v);
	json_end_arr(w);
}

static int
list(struct mcp *m, const char *only, int json)
{
	const struct mcp_server *s;
	const char **names, *conf, *why, **a;
	unsigned i, k, n;
	int e, rc = EXIT_OK;

	for (i = 0; (s = mcp_server(m, i)) != NULL; i++) {
		struct sbuf sb;
		struct json_writer w;

		if (only != NULL && strcmp(s->name, only) != 0)
			continue;
		if ((e = mcp_open(m, i, &names, &n, &conf, &why)) == -E_NOMEM)
			return cmd_nomem("starting the server");
		if (e != 0)
			rc = EXIT_FAIL;
		if (!json) {
			printf("%s: %s\n", s->name, e != 0 ? why : conf);
			for (a = s->agents; a != NULL && *a != NULL; a++)
				printf("%s%s", a == s->agents ? "  agents: " :
				    " ", *a);
			printf("\n");
			for (k = 0; e == 0 && k < n; k++)
				printf("  mcp__%s__%s\n", s->name, names[k]);
			continue;
		}
		sbuf_init(&sb, &app.perm, 0);
		json_writer_init(&w, &sb);
		json_begin_obj(&w);
		json_key(&w, "server");
		json_put_str(&w, s->name);
		json_key(&w, "ok");
		json_put_bool(&w, e == 0);
		json_key(&w, e != 0 ? "error" : "confinement");
		json_put_str(&w, e != 0 ? why : conf);
		put_list(&w, "agents", s->agents);
		json_key(&w, "tools");
		json_begin_arr(&w);
		for (k = 0; e == 0 && k < n; k++) {
			char *t = arena_printf(&app.perm, "mcp__%s__%s",
			    s->name, names[k]);

			json_put_str(&w, t != NULL ? t : "");
		}
		json_end_arr(&w);
		json_end_obj(&w);
		if (json_writer_err(&w) != 0)
			return cmd_nomem("printing");
		printf("%s\n", sb.p);
	}
	return rc;
}

int
cmd_mcp(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct cmd_printer p;
	struct agent *ag;
	struct mcp *m;
	struct tool_out out;
	const char *args;
	int c, json = 0, i, rc;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 'h')
			return cmd_help("mcp");
		if (c == 'j')
			json = 1;
		else
			return cmd_usage("mcp", "unknown option");
	}
	argc -= optind;
	argv += optind;
	if (argc < 1 || (strcmp(argv[0], "list") == 0 ? argc > 2 :
	    strcmp(argv[0], "call") != 0 || argc < 3 || argc > 4))
		return cmd_usage("mcp", "list [SERVER] or call SERVER TOOL "
		    "[JSON]");
	if ((rc = cmd_agent_open(&ag, NULL, 0, 0, json, 1, &p)) != 0)
		return rc;
	if ((m = agent_mcp(ag)) == NULL) {
		log_err("no mcp_servers in the configuration");
		return EXIT_FAIL;
	}
	if ((i = find(m, argc > 1 ? argv[1] : "")) < 0 && (argc > 1 ||
	    argv[0][0] == 'c')) {
		log_err("no MCP server named '%s' in the configuration",
		    argv[1]);
		rc = EXIT_FAIL;
	} else if (argv[0][0] == 'l')
		rc = list(m, argc > 1 ? argv[1] : NULL, json);
	else {
		args = argc > 3 ? argv[3] : "{}";
		if (mcp_call(m, (unsigned)i, &app.perm, argv[2], args,
		    strlen(args), &out) != 0)
			return cmd_nomem("calling the tool");
		printf("%.*s\n", (int)out.len, out.text != NULL ? out.text :
		    "");
		rc = out.is_error ? EXIT_FAIL : EXIT_OK;
	}
	agent_close(ag);
	return rc;
}
