/* cmd_llm.c - send one request to a model and print the reply
 * usage: skillbox llm [OPTIONS] PROMPT      (or the prompt on stdin)
 * Talks to a model endpoint the way the agents do and prints the streamed
 * text and the assembled tool calls: the tool for a device that cannot
 * reach its model.
 *
 * -p PROTO          openai (Chat Completions; also llama.cpp, vLLM, LM
 *                   Studio, Ollama's /v1), responses, anthropic, ollama
 * -m MODEL          model name (required)
 * -u URL            base URL; default https://api.openai.com,
 *                   https://api.anthropic.com or http://127.0.0.1:11434
 * -k VAR            environment variable with the API key (default
 *                   OPENAI_API_KEY or ANTHROPIC_API_KEY; none for ollama)
 * -s TEXT           system prompt
 * --tools FILE      JSON array of {"name", "description", "parameters"}
 * --tool-result TEXT  answer every tool call with TEXT and ask again, up
 *                   to 8 rounds (a tool-call round trip)
 * --no-stream       ask for one whole reply instead of a stream
 * --json            NDJSON events on stdout instead of plain text
 * --ca PATH         trust anchors: PEM bundle or folder (default: system)
 * --bearer          anthropic: send the key as a Bearer token
 * --anthropic-version V   (default 2023-06-01)
 * --max-tokens N
 * --connect-timeout S, --first-byte-timeout S, --idle-timeout S
 *                   (defaults 10, 120, 60 seconds)
 * --deadline S      all of it, retries and every round included, within S
 *                   seconds, however the server trickles (default: none)
 * --retries N       extra attempts on 429/502/503/529 and failed
 *                   connections, before any output (default 3)
 * --max-backoff S   longest wait between attempts (default 30)
 *
 * Proxies: HTTPS_PROXY, HTTP_PROXY and NO_PROXY (CONNECT for https).
 * Exit status: 0 ok, 1 the request failed, 2 usage, 3 memory budget. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "fmt/json.h"
#include "llm/llm.h"
#include "base/log.h"
#include "net/net.h"
#include "base/str.h"

#define MAX_ROUNDS	8
#define MAX_TOOLS	64

struct out {
	int	json;
	int	text_open;	/* plain text printed without final newline */
};

static void
emit(struct sbuf *sb)
{
	sbuf_addc(sb, '\n');
	if (!sb->err)
		(void)cmd_write(1, sb->p, sb->len);
}

static void
on_text(void *ctx, const char *s, size_t n)
{
	struct out *o = ctx;
	struct arena_mark m;
	struct json_writer w;
	struct sbuf sb;

	if (!o->json) {
		fwrite(s, 1, n, stdout);
		fflush(stdout);
		o->text_open = n > 0 && s[n - 1] != '\n';
		return;
	}
	m = arena_mark(&app.perm);
	sbuf_init(&sb, &app.perm, 0);
	json_writer_init(&w, &sb);
	json_begin_obj(&w);
	json_kstr(&w, "type", "text");
	json_key(&w, "text");
	json_put_strn(&w, s, n);
	json_end_obj(&w);
	emit(&sb);
	arena_reset_to(&app.perm, m);
}

static void
on_call(void *ctx, const struct llm_call *c)
{
	struct out *o = ctx;
	struct arena_mark m;
	struct json_writer w;
	struct sbuf sb;

	if (!o->json) {
		if (o->text_open)
			putchar('\n');
		o->text_open = 0;
		printf("tool call %s: %s %.*s%s\n", c->id, c->name,
		    (int)c->args_len, c->args, c->bad_args == 2 ?
		    "  (a key appears twice in the arguments)" : c->bad_args ?
		    "  (arguments are not a JSON object)" : "");
		return;
	}
	m = arena_mark(&app.perm);
	sbuf_init(&sb, &app.perm, 0);
	json_writer_init(&w, &sb);
	json_begin_obj(&w);
	json_kstr(&w, "type", "tool_call");
	json_kstr(&w, "id", c->id);
	json_kstr(&w, "name", c->name);
	json_key(&w, "arguments");
	json_put_strn(&w, c->args, c->args_len);
	json_key(&w, "valid");
	json_put_bool(&w, !c->bad_args);
	json_end_obj(&w);
	emit(&sb);
	arena_reset_to(&app.perm, m);
}

static void
final(struct out *o, const struct llm_reply *r, unsigned rounds)
{
	static const char *const stops[] = { "none", "end", "tool_calls",
	    "length", "other" };
	struct json_writer w;
	struct sbuf sb;

	if (!o->json) {
		if (o->text_open)
			putchar('\n');
		if (app.stats)
			fprintf(stderr, "skillbox: stop %s, tokens in %lu out "
			    "%lu\n", stops[r->stop], r->in_tokens,
			    r->out_tokens);
		return;
	}
	sbuf_init(&sb, &app.perm, 0);
	json_writer_init(&w, &sb);
	json_begin_obj(&w);
	json_kstr(&w, "type", "final");
	json_key(&w, "text");
	json_put_strn(&w, r->text, r->text_len);
	json_kstr(&w, "stop", stops[r->stop]);
	json_key(&w, "rounds");
	json_put_uint(&w, rounds);
	json_key(&w, "usage");
	json_begin_obj(&w);
	json_key(&w, "input_tokens");
	json_put_uint(&w, r->in_tokens);
	json_key(&w, "output_tokens");
	json_put_uint(&w, r->out_tokens);
	json_end_obj(&w);
	json_end_obj(&w);
	emit(&sb);
}

static void
error_event(struct out *o, struct llm_client *cl)
{
	struct json_writer w;
	struct sbuf sb;

	if (o->text_open)
		putchar('\n');
	fflush(stdout);
	log_err("llm: %s", llm_why(cl));
	if (!o->json)
		return;
	sbuf_init(&sb, &app.perm, 0);
	json_writer_init(&w, &sb);
	json_begin_obj(&w);
	json_kstr(&w, "type", "error");
	json_kstr(&w, "message", llm_why(cl));
	json_key(&w, "status");
	json_put_int(&w, llm_status(cl));
	json_end_obj(&w);
	emit(&sb);
}

/* Read a whole file (or stdin for "-") into perm, NUL-terminated. */
static int
slurp(const char *path, size_t max, char **out, size_t *len)
{
	struct sbuf sb;
	char buf[4096];
	ssize_t r;
	int fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -E_IO;
	sbuf_init(&sb, &app.perm, max);
	while ((r = read(fd, buf, sizeof(buf))) > 0 && !sb.err)
		sbuf_add(&sb, buf, (size_t)r);
	if (fd != 0)
		close(fd);
	if (r < 0)
		return -E_IO;
	if (sb.err)
		return sb.err;
	*out = sb.p;
	*len = sb.len;
	return 0;
}

static int
load_tools(const char *path, struct llm_tool **out, unsigned *n)
{
	struct llm_tool *v;
	struct json_doc d;
	char *text;
	size_t len;
	unsigned i;
	int e, t, p;

	if ((e = slurp(path, 256u << 10, &text, &len)) != 0) {
		log_err("llm: --tools %s: %s", path, e == -E_IO ?
		    strerror(errno) : err_str(e));
		return e == -E_NOMEM ? EXIT_NOMEM : EXIT_USAGE;
	}
	if (json_parse(&app.perm, text, len, 1u << 16, &d) != 0 || d.n == 0 ||
	    d.t[0].type != JSON_ARR || d.t[0].size > MAX_TOOLS) {
		log_err("llm: --tools %s: want a JSON array of at most %d "
		    "tools", path, MAX_TOOLS);
		return EXIT_USAGE;
	}
	if ((v = arena_zalloc(&app.perm, (size_t)(d.t[0].size + 1) *
	    sizeof(*v))) == NULL)
		return cmd_nomem("loading the tools");
	for (i = 0; (t = json_at(&d, 0, i)) >= 0; i++) {
		char *s;

		p = json_get(&d, t, "parameters");
		if (json_str(&d, &app.perm, json_get(&d, t, "name"), &s,
		    NULL) != 0 || p < 0 || d.t[p].type != JSON_OBJ) {
			log_err("llm: --tools %s: tool %u needs a name and "
			    "a parameters object", path, i);
			return EXIT_USAGE;
		}
		v[i].name = s;
		if (json_str(&d, &app.perm, json_get(&d, t, "description"),
		    &s, NULL) != 0)
			s = "";
		v[i].description = s;
		v[i].params = arena_strndup(&app.perm, d.js + d.t[p].start,
		    (size_t)(d.t[p].end - d.t[p].start));
		if (v[i].params == NULL)
			return cmd_nomem("loading the tools");
	}
	*out = v;
	*n = i;
	return 0;
}

static int
seconds(const char *s, int *ms)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v < 0 || v > 86400)
		return -1;
	*ms = (int)(v * 1000);
	return 0;
}

/* Append an assistant turn and one tool result per call. */
static int
add_round(struct llm_msg ***tail, const struct llm_reply *r,
    const char *result)
{
	struct llm_msg *m;
	unsigned i;

	if ((m = arena_zalloc(&app.perm, sizeof(*m))) == NULL)
		return -E_NOMEM;
	m->role = LLM_ASSISTANT;
	m->text = r->text;
	m->text_len = r->text_len;
	m->calls = r->calls;
	m->ncalls = r->ncalls;
	**tail = m;
	*tail = &m->next;
	for (i = 0; i < r->ncalls; i++) {
		if ((m = arena_zalloc(&app.perm, sizeof(*m))) == NULL)
			return -E_NOMEM;
		m->role = LLM_TOOL;
		m->call_id = r->calls[i].id;
		m->tool_name = r->calls[i].name;
		m->text = result;
		m->text_len = strlen(result);
		**tail = m;
		*tail = &m->next;
	}
	return 0;
}

int
cmd_llm(int argc, char **argv)
{
	enum { O_TOOLS = 256, O_RESULT, O_NOSTREAM, O_JSON, O_CA, O_BEARER,
	    O_AVER, O_MAXTOK, O_CTO, O_FTO, O_ITO, O_RETRIES, O_BACKOFF,
	    O_DEADLINE };
	static const struct option lo[] = {
		{ "tools", required_argument, NULL, O_TOOLS },
		{ "tool-result", required_argument, NULL, O_RESULT },
		{ "no-stream", no_argument, NULL, O_NOSTREAM },
		{ "json", no_argument, NULL, O_JSON },
		{ "ca", required_argument, NULL, O_CA },
		{ "bearer", no_argument, NULL, O_BEARER },
		{ "anthropic-version", required_argument, NULL, O_AVER },
		{ "max-tokens", required_argument, NULL, O_MAXTOK },
		{ "connect-timeout", required_argument, NULL, O_CTO },
		{ "first-byte-timeout", required_argument, NULL, O_FTO },
		{ "idle-timeout", required_argument, NULL, O_ITO },
		{ "retries", required_argument, NULL, O_RETRIES },
		{ "max-backoff", required_argument, NULL, O_BACKOFF },
		{ "deadline", required_argument, NULL, O_DEADLINE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *proto = "openai", *keyvar = NULL, *tools = NULL;
	const char *result = NULL;
	struct llm_msg *msgs = NULL, **tail = &msgs, *um;
	struct llm_client *cl;
	struct llm_reply r;
	struct llm_conf conf;
	struct llm_req q;
	struct llm_sink sink;
	struct out o = { 0, 0 };
	unsigned round;
	char *prompt;
	size_t plen;
	int c, e, ms, deadline = 0;

	llm_conf_defaults(&conf);
	memset(&q, 0, sizeof(q));
	q.stream = 1;
	optind = 0;
	while ((c = getopt_long(argc, argv, "p:m:u:k:s:h", lo, NULL)) != -1) {
		switch (c) {
		case 'p': proto = optarg; break;
		case 'm': q.model = optarg; break;
		case 'u': conf.base_url = optarg; break;
		case 'k': keyvar = optarg; break;
		case 's': q.system = optarg; break;
		case O_TOOLS: tools = optarg; break;
		case O_RESULT: result = optarg; break;
		case O_NOSTREAM: q.stream = 0; break;
		case O_JSON: o.json = 1; break;
		case O_CA: conf.ca_file = optarg; break;
		case O_BEARER: conf.bearer = 1; break;
		case O_AVER: conf.anthropic_version = optarg; break;
		case O_MAXTOK:
			q.max_tokens = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case O_CTO: case O_FTO: case O_ITO: case O_BACKOFF:
		case O_DEADLINE:
			if (seconds(optarg, &ms) != 0)
				return cmd_usage("llm", "bad number of "
				    "seconds '%s'", optarg);
			if (c == O_CTO) conf.connect_ms = ms;
			else if (c == O_FTO) conf.first_ms = ms;
			else if (c == O_ITO) conf.idle_ms = ms;
			else if (c == O_DEADLINE) deadline = ms;
			else conf.max_backoff_ms = (unsigned)ms;
			break;
		case O_RETRIES:
			conf.retries = (unsigned)strtoul(optarg, NULL, 10);
			if (conf.retries > 20)
				return cmd_usage("llm", "at most 20 retries");
			break;
		case 'h': return cmd_help("llm");
		default: return cmd_usage("llm", "bad option");
		}
	}
	if ((conf.proto = llm_proto_find(proto)) == NULL)
		return cmd_usage("llm", "unknown protocol '%s' (openai, "
		    "responses, anthropic, ollama)", proto);
	if (q.model == NULL)
		return cmd_usage("llm", "-m MODEL is required");
	if (optind + 1 < argc)
		return cmd_usage("llm", "one prompt, quoted");
	if (optind < argc)
		prompt = argv[optind], plen = strlen(prompt);
	else if ((e = slurp("-", 1u << 20, &prompt, &plen)) != 0) {
		log_err("llm: reading the prompt: %s", err_str(e));
		return EXIT_FAIL;
	}
	if (plen == 0)
		return cmd_usage("llm", "empty prompt");
	if (conf.base_url == NULL)
		conf.base_url = conf.proto->base_url;
	if (keyvar == NULL)
		keyvar = conf.proto->key_env;
	if (keyvar != NULL && (conf.api_key = getenv(keyvar)) != NULL &&
	    *conf.api_key == '\0')
		conf.api_key = NULL;
	if (tools != NULL && (e = load_tools(tools, (struct llm_tool **)
	    &q.tools, &q.ntools)) != 0)
		return e;
	if ((um = arena_zalloc(&app.perm, sizeof(*um))) == NULL)
		return cmd_nomem("starting");
	um->role = LLM_USER;
	um->text = prompt;
	um->text_len = plen;
	*tail = um;
	tail = &um->next;
	q.msgs = msgs;
	if ((cl = llm_client_new(&app.perm, &conf)) == NULL)
		return cmd_nomem("starting");
	if (deadline > 0)
		llm_set_deadline(cl, net_now_ms() + deadline);
	sink.text = on_text;
	sink.call = on_call;
	sink.ctx = &o;
	for (round = 1;; round++) {
		e = llm_send(cl, &app.perm, &q, &sink, &r);
		if (e != 0) {
			if (e == -E_NOMEM)
				return cmd_nomem("receiving the reply");
			error_event(&o, cl);
			return EXIT_FAIL;
		}
		if (result == NULL || r.ncalls == 0 || round == MAX_ROUNDS)
			break;
		if (add_round(&tail, &r, result) != 0)
			return cmd_nomem("keeping the conversation");
	}
	final(&o, &r, round);
	return EXIT_OK;
}
