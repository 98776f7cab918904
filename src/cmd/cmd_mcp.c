/* cmd_mcp.c - MCP: the configured servers' tools; the skills as a server
 * usage: skillbox mcp list [--json] [SERVER]
 *        skillbox mcp call SERVER TOOL [JSON]
 *        skillbox mcp serve [-c FILE] [-d DIR]...
 *
 * list   start each server (or SERVER) as an agent would, in its sandbox,
 *        and print its tools as the model sees them (mcp__SERVER__TOOL),
 *        the agents that may use them and the confinement it runs under.
 * call   call one tool with JSON arguments (an object; default {}) and
 *        print its result as the model would get it.
 * serve  be an MCP server on stdin and stdout (JSON-RPC, one message a
 *        line) for another agent: each skill is a tool that runs one of
 *        its scripts in the sandbox ({"script", "args", "input"}), and
 *        read_skill_file and list_skill_files show its instructions.
 *        Calls that approve: rules would hold are refused; hooks apply.
 *        No model is needed. Ends at end of input. MCP clients pass
 *        few environment variables: -c FILE or -d DIR (a skills
 *        folder, repeatable) say where the skills are.
 *
 * Servers are configured under mcp_servers: in skillbox.yaml (README,
 * "MCP servers"). Each is stopped when the command ends.
 *
 * Exit status: 0 ok, 1 a server did not start or the tool reported an
 * error, 2 usage. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "fmt/json.h"
#include "base/log.h"
#include "tool/mcp.h"
#include "skill/skill.h"
#include "base/str.h"
#include "tool/tool.h"

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
		json_kstr(&w, "server", s->name);
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

/* --- serve */

#define LINE_MAX_IN	(1u << 20)	/* one message from the client */

static void
put_line(struct sbuf *sb)
{
	sbuf_addc(sb, '\n');
	if (sb->err == 0)
		(void)cmd_write(1, sb->p, sb->len);
}

/* The start of a reply to request id (raw JSON text). */
static void
reply_begin(struct json_writer *w, struct sbuf *sb, const char *id, size_t n)
{
	sbuf_init(sb, &app.perm, 0);
	json_writer_init(w, sb);
	json_begin_obj(w);
	json_kstr(w, "jsonrpc", "2.0");
	json_key(w, "id");
	json_put_raw(w, id, n);
}

static void
reply_error(const char *id, size_t n, int code, const char *msg)
{
	struct json_writer w;
	struct sbuf sb;

	reply_begin(&w, &sb, id, n);
	json_key(&w, "error");
	json_begin_obj(&w);
	json_key(&w, "code");
	json_put_int(&w, code);
	json_kstr(&w, "message", msg);
	json_end_obj(&w);
	json_end_obj(&w);
	put_line(&sb);
}

static void
raw(struct json_writer *w, const char *s)
{
	json_put_raw(w, s, strlen(s));
}

/* A tool's input schema: a skill's script (skill 0), or the file tools'
 * (skill and, for 2, path). */
static void
schema(struct json_writer *w, int skill)
{
	json_key(w, "inputSchema");
	json_begin_obj(w);
	json_kstr(w, "type", "object");
	json_key(w, "properties");
	raw(w, skill == 0 ? "{\"script\":{\"type\":\"string\","
	    "\"description\":\"Path in the skill folder, e.g. scripts/"
	    "overview.sh\"},\"args\":{\"type\":\"array\",\"items\":{"
	    "\"type\":\"string\"}},\"input\":{\"description\":\"JSON "
	    "for its stdin\"}}" : skill == 2 ? "{\"skill\":{\"type\":"
	    "\"string\"},\"path\":{\"type\":\"string\"}}" :
	    "{\"skill\":{\"type\":\"string\"}}");
	json_key(w, "required");
	raw(w, skill == 0 ? "[\"script\"]" : skill == 2 ?
	    "[\"skill\",\"path\"]" : "[\"skill\"]");
	json_end_obj(w);
}

static void
tool(struct json_writer *w, const char *name, const char *desc, int skill)
{
	json_begin_obj(w);
	json_kstr(w, "name", name);
	json_kstr(w, "description", desc);
	schema(w, skill);
	json_end_obj(w);
}

static void
tools_list(struct agent *ag, struct json_writer *w)
{
	const struct skill_reg *reg = agent_reg(ag);
	struct arena tmp;
	unsigned i;

	json_key(w, "tools");
	json_begin_arr(w);
	tool(w, "read_skill_file", "Read a file of a skill: its SKILL.md "
	    "says what its scripts do.", 2);
	tool(w, "list_skill_files", "List the files of a skill.", 1);
	arena_init(&tmp, "mcp tools");
	for (i = 0; i < reg->n; i++) {
		/* An index reads each skill again: in tmp, gone once
		 * written. */
		const struct skill *sk = skill_reg_get(reg, i, &tmp);

		if (sk != NULL && !(sk->flags & SKILL_NO_MODEL) &&
		    skill_osk(sk) == NULL && skill_name_is_ascii(sk->name) &&
		    strlen(sk->name) <= 64)
			tool(w, sk->name, arena_printf(&tmp, "%s (Runs one of "
			    "the skill's scripts on this device, in the "
			    "sandbox.)", sk->description), 0);
		arena_reset(&tmp);
	}
	json_end_arr(w);
}

/* tools/call: a skill's script, or one of the two file tools. */
static int
tools_call(struct agent *ag, struct json_writer *w, const struct json_doc *d,
    int params)
{
	struct tool_out out;
	char *name = NULL, *sk = NULL;
	int a = json_get(d, params, "arguments");
	const char *args = a >= 0 ? d->js + d->t[a].start : "{}";
	size_t n = a >= 0 ? (size_t)(d->t[a].end - d->t[a].start) : 2;
	int file;

	if (json_str(d, &app.perm, json_get(d, params, "name"), &name,
	    NULL) != 0 || (a >= 0 && d->t[a].type != JSON_OBJ))
		return -E_INVAL;
	file = strcmp(name, "read_skill_file") == 0 ||
	    strcmp(name, "list_skill_files") == 0;
	if (file)
		(void)json_str(d, &app.perm, json_get(d, a, "skill"), &sk,
		    NULL);
	if (agent_tool(ag, file ? (sk != NULL ? sk : "") : name, file ? name :
	    "run_skill_script", args, n, &out) != 0)
		return -E_NOMEM;
	json_key(w, "content");
	json_begin_arr(w);
	json_begin_obj(w);
	json_kstr(w, "type", "text");
	json_key(w, "text");
	json_put_strn(w, out.text != NULL ? out.text : "", out.text != NULL ?
	    (out.len > 0 ? out.len : strlen(out.text)) : 0);
	json_end_obj(w);
	json_end_arr(w);
	json_key(w, "isError");
	json_put_bool(w, out.is_error);
	return 0;
}

/* One message from the client. */
static void
handle(struct agent *ag, const char *line, size_t len)
{
	struct json_writer w;
	struct json_doc d;
	struct sbuf sb;
	char *method = NULL, *asked = NULL;
	const char *id;
	size_t idn;
	int t, p;

	if (json_parse(&app.perm, line, len, 1u << 16, &d) != 0 ||
	    d.t[0].type != JSON_OBJ) {
		reply_error("null", 4, -32700, "Parse error");
		return;
	}
	t = json_get(&d, 0, "id");
	if (json_str(&d, &app.perm, json_get(&d, 0, "method"), &method,
	    NULL) != 0) {
		if (t < 0 || json_get(&d, 0, "result") >= 0 ||
		    json_get(&d, 0, "error") >= 0)
			return;		/* a reply, or nothing we can answer */
		id = json_raw(&d, t, &idn);
		reply_error(id, idn, -32600, "Invalid Request");
		return;
	}
	if (t < 0)
		return;		/* a notification */
	id = json_raw(&d, t, &idn);
	p = json_get(&d, 0, "params");
	reply_begin(&w, &sb, id, idn);
	json_key(&w, "result");
	json_begin_obj(&w);
	if (strcmp(method, "initialize") == 0) {
		(void)json_str(&d, &app.perm, json_get(&d, p,
		    "protocolVersion"), &asked, NULL);
		json_kstr(&w, "protocolVersion", mcp_version(asked));
		json_key(&w, "capabilities");
		raw(&w, "{\"tools\":{}}");
		json_key(&w, "serverInfo");
		json_begin_obj(&w);
		json_kstr(&w, "name", "skillbox");
		json_kstr(&w, "version", SKILLBOX_VERSION);
		json_end_obj(&w);
	} else if (strcmp(method, "tools/list") == 0)
		tools_list(ag, &w);
	else if (strcmp(method, "tools/call") == 0) {
		int e = tools_call(ag, &w, &d, p);

		if (e != 0) {
			reply_error(id, idn, e == -E_NOMEM ? -32603 : -32602,
			    e == -E_NOMEM ? "out of memory" : "Invalid params: "
			    "name and an object of arguments");
			return;
		}
	} else if (strcmp(method, "ping") != 0) {
		reply_error(id, idn, -32601, "Method not found");
		return;
	}
	json_end_obj(&w);
	json_end_obj(&w);
	if (json_writer_err(&w) != 0) {
		reply_error(id, idn, -32603, "out of memory");
		return;
	}
	put_line(&sb);
}

static int
serve(struct agent *ag)
{
	struct sbuf in;
	char buf[8192], *nl;
	size_t n;
	ssize_t k;
	int skipping = 0;

	sbuf_init(&in, NULL, LINE_MAX_IN + 1);
	for (;;) {
		while ((nl = in.len > 0 ? memchr(in.p, '\n', in.len) : NULL)
		    != NULL) {
			struct arena_mark m = arena_mark(&app.perm);

			n = (size_t)(nl - in.p);
			if (skipping)
				reply_error("null", 4, -32700, "Parse error: a "
				    "message over 1 MiB");
			else if (n > 0 && !(n == 1 && in.p[0] == '\r'))
				handle(ag, in.p, n);
			skipping = 0;
			memmove(in.p, nl + 1, in.len - n - 1);
			sbuf_truncate(&in, in.len - n - 1);
			arena_reset_to(&app.perm, m);
		}
		if (in.len >= LINE_MAX_IN) {
			skipping = 1;
			sbuf_truncate(&in, 0);
		}
		k = read(0, buf, skipping ? sizeof(buf) : MIN(sizeof(buf),
		    LINE_MAX_IN - in.len));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		if (skipping && memchr(buf, '\n', (size_t)k) == NULL)
			continue;
		sbuf_add(&in, buf, (size_t)k);
		if (in.err != 0)
			return cmd_nomem("reading a message");
	}
	sbuf_release(&in);
	return EXIT_OK;
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
	    strcmp(argv[0], "serve") == 0 ? argc > 1 :
	    strcmp(argv[0], "call") != 0 || argc < 3 || argc > 4))
		return cmd_usage("mcp", "list [SERVER], call SERVER TOOL "
		    "[JSON] or serve");
	if ((rc = cmd_agent_open(&ag, NULL, 0, 0, json, 1, 0, &p)) != 0)
		return rc;
	if (argv[0][0] == 's') {
		rc = serve(ag);
		agent_close(ag);
		return rc;
	}
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
