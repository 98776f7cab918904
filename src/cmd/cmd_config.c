/* cmd_config.c - check and show the configuration (skillbox.yaml)
 * usage: skillbox config check [-c FILE] [--json]
 *        skillbox config path [-c FILE]
 *
 * check     load the configuration as the agents would and print every
 *           setting with where it came from: the file, the environment
 *           or "default". API keys are never printed, only whether the
 *           variable that holds one is set.
 * path      print the file that would be used
 *
 * -c FILE   this file, instead of the search: $SKILLBOX_CONFIG, then
 *           ./skillbox.yaml, then /etc/skillbox/skillbox.yaml
 * --json    one JSON object: "file", "settings" (each key with its "value"
 *           and "source") and "api_key" ("env", "set")
 *
 * $SKILLBOX_PROVIDER, $SKILLBOX_MODEL and $SKILLBOX_BASE_URL override the
 * file.
 * Exit status: 0 valid, 1 invalid (FILE:LINE: message on stderr) or no
 * file for `path`, 2 usage, 3 memory budget exhausted. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/cfg.h"
#include "cmd/cmd.h"
#include "fmt/json.h"
#include "skill/mcp_spec.h"
#include "base/log.h"
#include "base/str.h"
#include "config.h"

#define SRC_COL	40	/* where "# source" starts in text output */

struct out {
	const struct cfg	*c;
	struct sbuf		 sb;
	struct json_writer	 w;
	int			 json;
	size_t			 start;		/* of the current text row */
};

/* Open a row: the key, then the caller writes the value. */
static void
begin(struct out *o, const char *key)
{
	if (o->json) {
		json_key(&o->w, key);
		json_begin_obj(&o->w);
		json_key(&o->w, "value");
		return;
	}
	o->start = o->sb.len;
	sbuf_printf(&o->sb, "%s: ", key);
}

static void
end(struct out *o, const char *key)
{
	const char *src = cfg_source(o->c, key);

	if (o->json) {
		json_kstr(&o->w, "source", src);
		json_end_obj(&o->w);
		return;
	}
	do
		sbuf_addc(&o->sb, ' ');
	while (o->sb.len - o->start < SRC_COL && !o->sb.err);
	sbuf_printf(&o->sb, "# %s\n", src);
}

/* A string; NULL prints `none` in text and null in JSON. */
static void
put_str(struct out *o, const char *key, const char *s, const char *none)
{
	begin(o, key);
	if (o->json && s != NULL)
		json_put_str(&o->w, s);
	else if (o->json)
		json_put_null(&o->w);
	else
		sbuf_adds(&o->sb, s != NULL ? s : none);
	end(o, key);
}

/* A number; `zero` (when not NULL) says what 0 means. */
static void
put_num(struct out *o, const char *key, unsigned long v, const char *zero)
{
	begin(o, key);
	if (o->json)
		json_put_uint(&o->w, v);
	else
		sbuf_printf(&o->sb, "%lu%s%s", v, v == 0 && zero ? " " : "",
		    v == 0 && zero ? zero : "");
	end(o, key);
}

/* A size: bytes in JSON, "64k" or "4M" in text when exact. */
static void
put_size(struct out *o, const char *key, size_t v, const char *zero)
{
	begin(o, key);
	if (o->json)
		json_put_uint(&o->w, v);
	else if (v == 0 && zero != NULL)
		sbuf_adds(&o->sb, zero);
	else if (v >= (1u << 20) && v % (1u << 20) == 0)
		sbuf_printf(&o->sb, "%zuM", v >> 20);
	else if (v >= 1024 && v % 1024 == 0)
		sbuf_printf(&o->sb, "%zuk", v >> 10);
	else
		sbuf_printf(&o->sb, "%zu", v);
	end(o, key);
}

static void
put_bool(struct out *o, const char *key, int v)
{
	begin(o, key);
	if (o->json)
		json_put_bool(&o->w, v);
	else
		sbuf_adds(&o->sb, v ? "true" : "false");
	end(o, key);
}

static void
put_money(struct out *o, double v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%g", v);
	if (o->json)
		json_put_raw(&o->w, buf, strlen(buf));
	else
		sbuf_adds(&o->sb, buf);
}

static void
put_list(struct out *o, const char *key, const char *const *v, unsigned n,
    const char *none)
{
	unsigned i;

	begin(o, key);
	if (o->json)
		json_begin_arr(&o->w);
	else if (n == 0)
		sbuf_adds(&o->sb, none);
	else
		sbuf_addc(&o->sb, '[');
	for (i = 0; i < n; i++) {
		if (o->json)
			json_put_str(&o->w, v[i]);
		else
			sbuf_printf(&o->sb, "%s%s", i ? ", " : "", v[i]);
	}
	if (o->json)
		json_end_arr(&o->w);
	else if (n > 0)
		sbuf_addc(&o->sb, ']');
	end(o, key);
}

static void
put_prices(struct out *o)
{
	const struct cfg *c = o->c;
	unsigned i;

	begin(o, "prices");
	if (o->json)
		json_begin_obj(&o->w);
	else if (c->nprices == 0)
		sbuf_adds(&o->sb, "none");
	for (i = 0; i < c->nprices; i++) {
		if (o->json) {
			json_key(&o->w, c->prices[i].model);
			json_begin_obj(&o->w);
			json_key(&o->w, "input");
		} else
			sbuf_printf(&o->sb, "%s%s: input ", i ? ", " : "",
			    c->prices[i].model);
		put_money(o, c->prices[i].input);
		if (o->json)
			json_key(&o->w, "output");
		else
			sbuf_adds(&o->sb, ", output ");
		put_money(o, c->prices[i].output);
		if (o->json)
			json_end_obj(&o->w);
	}
	if (o->json)
		json_end_obj(&o->w);
	end(o, "prices");
}

/* The MCP servers (a crew's among them), each with its command line:
 * "NAME: PROG ARG..." in text, {"name", "command": [...]} in JSON. */
static void
put_mcp(struct out *o)
{
	const struct cfg *c = o->c;
	const char *const *a;
	unsigned i;

	begin(o, "mcp_servers");
	if (o->json)
		json_begin_arr(&o->w);
	else
		sbuf_adds(&o->sb, c->nmcp == 0 ? "none" : "[");
	for (i = 0; i < c->nmcp; i++) {
		if (o->json) {
			json_begin_obj(&o->w);
			json_kstr(&o->w, "name", c->mcp[i].name);
			json_key(&o->w, "command");
			json_begin_arr(&o->w);
		} else
			sbuf_printf(&o->sb, "%s%s:", i ? ", " : "",
			    c->mcp[i].name);
		for (a = c->mcp[i].argv; *a != NULL; a++) {
			if (o->json)
				json_put_str(&o->w, *a);
			else
				sbuf_printf(&o->sb, " %s", *a);
		}
		if (o->json) {
			json_end_arr(&o->w);
			json_end_obj(&o->w);
		}
	}
	if (o->json)
		json_end_arr(&o->w);
	else if (c->nmcp > 0)
		sbuf_addc(&o->sb, ']');
	end(o, "mcp_servers");
}

/* The fleet's section; the password only as where it comes from. */
static void
put_mqtt(struct out *o)
{
	const struct cfg_mqtt *m = &o->c->mqtt;
	const char *env = m->password_env, *v;

	put_str(o, "mqtt.broker", m->broker, "none (no fleet)");
	if (m->broker == NULL)
		return;
	put_str(o, "mqtt.ca", m->ca, o->c->ca_file ? o->c->ca_file :
	    "(the system bundle)");
	put_str(o, "mqtt.cert", m->cert, "none");
	put_str(o, "mqtt.username", m->username, "none");
	if (m->password_file != NULL)
		put_str(o, "mqtt.password_file", m->password_file, "");
	if (env != NULL) {
		v = getenv(env);
		put_str(o, "mqtt.password_env", arena_printf(o->sb.a, "%s (%s)",
		    env, v != NULL && *v != '\0' ? "set" : "not set"), env);
	}
	put_str(o, "mqtt.client_id", m->client_id, "");
	put_num(o, "mqtt.keepalive", m->keepalive, NULL);
	put_str(o, "mqtt.root", m->root, "");
	put_str(o, "mqtt.prefix", m->prefix, "");
	put_list(o, "mqtt.groups", m->groups, m->ngroups, "none");
	put_list(o, "mqtt.queues", m->queues, m->nqueues, "none");
	put_str(o, "mqtt.version", m->version == 5 ? "5" : m->version == 4 ?
	    "3.1.1" : "auto", "");
	put_num(o, "mqtt.session_expiry", m->session_expiry, NULL);
}

static void
put_settings(struct out *o)
{
	const struct cfg *c = o->c;

	put_str(o, "provider", c->provider, "");
	put_str(o, "model", c->model, "none");
	put_str(o, "base_url", c->base_url, "the provider's default");
	put_str(o, "api_key_env", c->api_key_env, "by provider");
	put_str(o, "anthropic_version", c->anthropic_version, "");
	put_bool(o, "anthropic_bearer", c->anthropic_bearer);
	put_str(o, "ca_file", c->ca_file, "the system bundle");
	put_size(o, "memory", c->memory, "not set (--memory, else 2M)");
	put_list(o, "skills", c->skills, c->nskills, "none");
	put_str(o, "state_dir", c->state_dir, "");
	put_str(o, "workspace", c->workspace, "");
	put_str(o, "commands_dir", c->commands_dir, "none");
	if (HAVE_CREW)
		put_str(o, "crew", c->crew, "none");
	put_str(o, "agents_file", c->agents_file, "none");
	begin(o, "instructions");
	if (o->json && c->instructions != NULL)
		json_put_str(&o->w, c->instructions);
	else if (o->json)
		json_put_null(&o->w);
	else if (c->instructions != NULL)
		sbuf_printf(&o->sb, "%zu bytes", strlen(c->instructions));
	else
		sbuf_adds(&o->sb, "built in");
	end(o, "instructions");
	put_str(o, "skill_mode", c->skill_inline ? "inline" : "handoff", "");
	if (c->nhandoff_pairs == 0)
		put_str(o, "handoffs", c->handoffs_all ? "all" : "none", "");
	else
		put_list(o, "handoffs", c->handoff_pairs, c->nhandoff_pairs, "");
	put_list(o, "approve", c->approve, c->napprove, "none");
	put_num(o, "hooks", c->nhooks, "(none)");
	if (HAVE_MCP)
		put_mcp(o);
	put_num(o, "limits.turns", c->limits.turns, NULL);
	put_num(o, "limits.time", c->limits.time_s, NULL);
	put_num(o, "limits.tokens", c->limits.tokens, "(no limit)");
	begin(o, "limits.budget");
	put_money(o, c->limits.budget);
	if (!o->json && c->limits.budget == 0)
		sbuf_adds(&o->sb, " (no limit)");
	end(o, "limits.budget");
	put_num(o, "limits.tool_timeout", c->limits.tool_timeout_s, NULL);
	put_size(o, "limits.output_cap", c->limits.output_cap, NULL);
	put_num(o, "limits.context_window", c->limits.context_window, NULL);
	put_num(o, "limits.compact_after", c->limits.compact_after, NULL);
	put_num(o, "limits.connect_timeout", c->limits.connect_s, NULL);
	put_num(o, "limits.first_byte_timeout", c->limits.first_byte_s, NULL);
	put_num(o, "limits.idle_timeout", c->limits.idle_s, NULL);
	put_num(o, "limits.retries", c->limits.retries, NULL);
	if (HAVE_ORCH) {
		put_num(o, "limits.depth", c->limits.depth, NULL);
		put_num(o, "limits.steps", c->limits.steps, NULL);
		put_num(o, "limits.step_errors", c->limits.step_errors, NULL);
		put_num(o, "limits.plans", c->limits.plans, NULL);
		put_num(o, "limits.parallel", c->limits.parallel, NULL);
	}
	put_prices(o);
	put_list(o, "sandbox.allow", c->sandbox.allow, c->sandbox.nallow,
	    "any (no narrowing)");
	put_list(o, "sandbox.deny", c->sandbox.deny, c->sandbox.ndeny, "none");
	put_list(o, "sandbox.require", c->sandbox.require, c->sandbox.nrequire,
	    "none");
	put_str(o, "sandbox.user", c->sandbox.user, "none");
	put_list(o, "sandbox.secrets", c->sandbox.secrets, c->sandbox.nsecrets,
	    "none");
	put_bool(o, "create_skill", c->create_skill);
	put_str(o, "serve.listen", c->serve.listen, "");
	put_num(o, "serve.tokens", c->serve.ntokens, "(none: no token asked, "
	    "loopback only)");
	put_str(o, "serve.cors_origin", c->serve.cors_origin, "none");
	put_list(o, "serve.hosts", c->serve.hosts, c->serve.nhosts, "none");
	put_num(o, "serve.max_connections", c->serve.max_conns, NULL);
	put_num(o, "serve.max_turns", c->serve.max_turns, NULL);
	put_num(o, "serve.queue", c->serve.queue, NULL);
	put_size(o, "serve.head_max", c->serve.head_max, NULL);
	put_num(o, "serve.header_timeout", c->serve.header_s, NULL);
	put_size(o, "serve.body_max", c->serve.body_max, NULL);
	put_num(o, "serve.idle_timeout", c->serve.idle_s, NULL);
	put_size(o, "serve.turn_memory", c->serve.turn_memory, "(what the "
	    "server leaves, shared by max_turns)");
	put_str(o, "serve.tls_cert", c->serve.tls_cert, "none");
	put_str(o, "serve.log", c->serve.syslog ? "syslog" : "stderr", "");
	if (HAVE_PERSIST) {
		put_str(o, "persist.dir", c->persist.dir, "none (off)");
		put_num(o, "persist.interval", c->persist.interval, NULL);
		put_size(o, "persist.max", c->persist.max, NULL);
	}
	put_mqtt(o);
}

/* Only whether the key is there, and where: never the key. */
static void
put_api_key(struct out *o)
{
	const char *var = cfg_api_key_env(o->c);
	int set = cfg_api_key(o->c) != NULL;

	if (o->json) {
		json_key(&o->w, "api_key");
		json_begin_obj(&o->w);
		json_key(&o->w, "env");
		if (var != NULL)
			json_put_str(&o->w, var);
		else
			json_put_null(&o->w);
		json_key(&o->w, "set");
		json_put_bool(&o->w, set);
		json_end_obj(&o->w);
	} else if (var == NULL)
		sbuf_printf(&o->sb, "api_key: not needed (%s)\n",
		    o->c->provider);
	else
		sbuf_printf(&o->sb, "api_key: %s ($%s)\n", set ? "set" :
		    "not set", var);
}

static int
do_check(int json)
{
	struct cfg *c;
	struct out o;
	int e;

	if ((e = cmd_cfg_load(&c)) != 0)
		return e;
	if (cfg_secret_is_key(c) != NULL)
		log_warn("sandbox.secrets names %s, the model's own API key: "
		    "every script (and so the model) can read it",
		    cfg_secret_is_key(c));
	memset(&o, 0, sizeof(o));
	o.c = c;
	o.json = json;
	sbuf_init(&o.sb, &app.perm, 0);
	if (json) {
		json_writer_init(&o.w, &o.sb);
		json_begin_obj(&o.w);
		json_key(&o.w, "file");
		if (c->file != NULL)
			json_put_str(&o.w, c->file);
		else
			json_put_null(&o.w);
		put_api_key(&o);
		json_key(&o.w, "settings");
		json_begin_obj(&o.w);
		put_settings(&o);
		json_end_obj(&o.w);
		json_end_obj(&o.w);
		sbuf_addc(&o.sb, '\n');
	} else {
		sbuf_printf(&o.sb, "file: %s\n", c->file != NULL ? c->file :
		    "none (built-in defaults)");
		put_settings(&o);
		put_api_key(&o);
	}
	if (o.sb.err)
		return cmd_nomem("printing the configuration");
	return cmd_write(1, o.sb.p, o.sb.len) == 0 ? EXIT_OK : EXIT_FAIL;
}

static int
do_path(const char *path)
{
	const char *f = cfg_find(path);

	if (f == NULL) {
		log_err("config: no configuration file; the built-in defaults "
		    "apply");
		return EXIT_FAIL;
	}
	if (access(f, R_OK) != 0) {
		log_err("config: %s: cannot read it", f);
		return EXIT_FAIL;
	}
	printf("%s\n", f);
	return EXIT_OK;
}

int
cmd_config(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sub;
	int c, json = 0;

	if (argc < 2)
		return cmd_usage("config", "missing sub-command");
	sub = argv[1];
	if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0)
		return cmd_help("config");
	argc--, argv++;
	optind = 0;
	/* -c FILE is a global option (main.c), before or after `config`. */
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 'h': return cmd_help("config");
		default: return cmd_usage("config", "bad option");
		}
	}
	if (optind < argc)
		return cmd_usage("config", "unexpected argument '%s'",
		    argv[optind]);
	if (strcmp(sub, "check") == 0)
		return do_check(json);
	if (strcmp(sub, "path") == 0 && !json)
		return do_path(app.config);
	if (strcmp(sub, "path") == 0)
		return cmd_usage("config", "path takes no --json");
	return cmd_usage("config", "unknown sub-command '%s'", sub);
}
