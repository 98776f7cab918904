/* test_llm.c - the wire protocols: recorded streams and whole replies from
 * tests/data/streams/PROTO-CASE.txt, decoded at once and in pieces of 1, 2,
 * 3 and 7 bytes (so UTF-8 characters and lines split across reads), with
 * CRLF line ends and without the last blank line; request bodies; and the
 * transport against a server on 127.0.0.1 that answers badly. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "fmt/json.h"
#include "llm/llm.h"
#include "net/net.h"
#include "base/str.h"
#include "unit.h"

#define HELLO	"H\xc3\xa9llo, w\xc3\xb6rld \xf0\x9f\x9a\x80"

enum { AS_IS, CRLF = 1, NO_END = 2 };	/* how to change a file */

/* A recorded reply; `how` turns LF into CRLF and/or trims the end to one
 * line end (no blank line after the last event). */
static char *
load(const char *name, int how, size_t *n)
{
	char path[256], buf[4096];
	struct sbuf sb;
	size_t k, i;
	FILE *f;

	snprintf(path, sizeof(path), "tests/data/streams/%s.txt", name);
	if ((f = fopen(path, "rb")) == NULL) {
		t_fail(__FILE__, __LINE__, "cannot open %s", path);
		return NULL;
	}
	sbuf_init(&sb, &t_arena, 0);
	while ((k = fread(buf, 1, sizeof(buf), f)) > 0)
		for (i = 0; i < k; i++) {
			if ((how & CRLF) && buf[i] == '\n')
				sbuf_addc(&sb, '\r');
			sbuf_addc(&sb, buf[i]);
		}
	fclose(f);
	if (how & NO_END) {
		while (sb.len > 0 && (sb.p[sb.len - 1] == '\n' ||
		    sb.p[sb.len - 1] == '\r'))
			sbuf_truncate(&sb, sb.len - 1);
		sbuf_adds(&sb, how & CRLF ? "\r\n" : "\n");
	}
	T(sb.err == 0);
	*n = sb.len;
	return sb.p;
}

/* Everything a decode gave, as one string to compare runs with. */
static const char *
summary(int e, const struct llm_reply *r, const char *why, int tokens)
{
	struct sbuf sb;
	unsigned i;

	sbuf_init(&sb, &t_arena, 0);
	sbuf_printf(&sb, "e=%d why=%s", e, why);
	if (e != 0)
		return sb.p;
	sbuf_printf(&sb, " text=[%.*s] stop=%d/%s", (int)r->text_len,
	    r->text, r->stop, r->stop_raw != NULL ? r->stop_raw : "-");
	if (tokens)
		sbuf_printf(&sb, " tokens=%lu/%lu", r->in_tokens,
		    r->out_tokens);
	for (i = 0; i < r->ncalls; i++)
		sbuf_printf(&sb, " call=%s,%s,[%.*s],%d", r->calls[i].id,
		    r->calls[i].name, (int)r->calls[i].args_len,
		    r->calls[i].args, r->calls[i].bad_args);
	return sb.p;
}

/* What the sink saw. */
struct seen {
	struct sbuf	text;
	unsigned	ncalls;
};

static void
on_text(void *ctx, const char *s, size_t n)
{
	sbuf_add(&((struct seen *)ctx)->text, s, n);
}

static void
on_call(void *ctx, const struct llm_call *c)
{
	((struct seen *)ctx)->ncalls++;
}

/* Decode in one piece into *r and why, then in small pieces: every run
 * must give the same, and the sink must see what the reply holds.
 * Returns the error. */
static int
decode_how(const struct llm_proto *p, const char *name, int stream, int how,
    struct llm_reply *r, char *why)
{
	static const size_t steps[] = { 0, 1, 2, 3, 7 };
	struct llm_reply r2, *rr;
	char why2[256], *w;
	const char *first = NULL, *s;
	size_t n, i;
	char *data = load(name, how, &n);
	int e = -E_IO, e2;

	if (data == NULL)
		return e;
	for (i = 0; i < ARRAY_LEN(steps); i++) {
		struct seen sn = { .ncalls = 0 };
		struct llm_sink sink = { on_text, on_call, &sn };

		rr = i == 0 ? r : &r2;
		w = i == 0 ? why : why2;
		w[0] = '\0';
		sbuf_init(&sn.text, &t_arena, 0);
		e2 = llm_decode(p, &t_arena, stream, data, n, steps[i], &sink,
		    rr, w, 256);
		s = summary(e2, rr, w, 1);
		if (i == 0)
			first = s, e = e2;
		else if (strcmp(first, s) != 0)
			t_fail(__FILE__, __LINE__, "%s (how %d) in steps of "
			    "%zu: %s\n  at once: %s", name, how, steps[i], s,
			    first);
		if (e2 == 0 && (sn.text.len != rr->text_len ||
		    memcmp(sn.text.p, rr->text, rr->text_len) != 0 ||
		    sn.ncalls != rr->ncalls))
			t_fail(__FILE__, __LINE__, "%s: the sink saw [%s] and "
			    "%u calls", name, sn.text.p, sn.ncalls);
	}
	return e;
}

static int
decode(const struct llm_proto *p, const char *name, struct llm_reply *r,
    char *why)
{
	return decode_how(p, name, 1, AS_IS, r, why);
}

static void
call_is(const struct llm_reply *r, unsigned i, const char *id,
    const char *name, const char *args, int bad)
{
	if (i >= r->ncalls) {
		t_fail(__FILE__, __LINE__, "no call %u of %u", i, r->ncalls);
		return;
	}
	T_EQS(r->calls[i].id, id);
	T_EQS(r->calls[i].name, name);
	T_EQS(r->calls[i].args, args);
	T_EQI(r->calls[i].args_len, strlen(args));
	T_EQI(r->calls[i].bad_args, bad);
}

static void
text_is(const struct llm_reply *r, const char *text)
{
	T_EQI(r->text_len, strlen(text));
	T_EQS(r->text, text);
}

/* The error's words contain a and b. */
static void
why_has(const char *why, const char *a, const char *b)
{
	if (strstr(why, a) == NULL || (b != NULL && strstr(why, b) == NULL))
		t_fail(__FILE__, __LINE__, "\"%s\" lacks \"%s\" or \"%s\"",
		    why, a, b != NULL ? b : "");
}

/* A plain answer, with each of the four line-end variants. */
static void
text_reply(const struct llm_proto *p, const char *name, const char *raw)
{
	struct llm_reply r;
	char why[256];
	int how;

	for (how = 0; how < 4; how++) {
		T_EQI(decode_how(p, name, 1, how, &r, why), 0);
		if (why[0] != '\0')
			t_fail(__FILE__, __LINE__, "%s: %s", name, why);
		text_is(&r, HELLO);
		T_EQI(r.ncalls, 0);
		T_EQI(r.stop, LLM_STOP_END);
		T_EQS(r.stop_raw, raw);
		T_EQI(r.in_tokens, 12);
		T_EQI(r.out_tokens, 5);
	}
}

/* Every prefix of a stream either fails or gives the whole reply (less
 * the usage, which may come after the end for openai). */
static void
prefixes(const struct llm_proto *p, const char *name)
{
	struct llm_reply r;
	char why[256];
	const char *full;
	size_t n, k;
	char *data = load(name, AS_IS, &n);

	if (data == NULL)
		return;
	T_EQI(llm_decode(p, &t_arena, 1, data, n, 0, NULL, &r, why, 256), 0);
	full = summary(0, &r, "", 0);
	for (k = 0; k < n; k++) {
		struct arena_mark m = arena_mark(&t_arena);
		int e = llm_decode(p, &t_arena, 1, data, k, 0, NULL, &r, why,
		    256);

		if (e == 0 && strcmp(summary(0, &r, "", 0), full) != 0)
			t_fail(__FILE__, __LINE__, "%s cut at %zu: %s", name,
			    k, summary(0, &r, "", 0));
		arena_reset_to(&t_arena, m);
	}
}

/* The same whole reply from every protocol. */
static void
whole_reply(const struct llm_proto *p, const char *name, const char *id,
    const char *args)
{
	struct llm_reply r;
	char why[256];

	T_EQI(decode_how(p, name, 0, AS_IS, &r, why), 0);
	text_is(&r, HELLO);
	T_EQI(r.ncalls, 1);
	call_is(&r, 0, id, "get_weather", args, 0);
	T_EQI(r.stop, LLM_STOP_TOOLS);
	T_EQI(r.in_tokens, 12);
	T_EQI(r.out_tokens, 5);
}

static void
cut(const struct llm_proto *p, const char *name)
{
	struct llm_reply r;
	char why[256];

	T_EQI(decode(p, name, &r, why), -E_PROTO);
	why_has(why, "ended before the reply was complete", NULL);
}

static void
t_openai(void)
{
	struct llm_reply r;
	char why[256];

	text_reply(&llm_openai, "openai-text", "stop");
	prefixes(&llm_openai, "openai-text");
	prefixes(&llm_openai, "openai-parallel");
	T_EQI(decode(&llm_openai, "openai-tool", &r, why), 0);
	T_EQI(r.text_len, 0);
	T_EQI(r.ncalls, 1);
	call_is(&r, 0, "call_abc", "get_weather", "{\"city\": \"Paris\"}", 0);
	T_EQI(r.stop, LLM_STOP_TOOLS);
	T_EQI(r.in_tokens, 40);
	T_EQI(r.out_tokens, 9);
	T_EQI(decode(&llm_openai, "openai-parallel", &r, why), 0);
	T_EQI(r.ncalls, 2);
	call_is(&r, 0, "call_a", "get_weather", "{\"city\":\"Paris\"}", 0);
	call_is(&r, 1, "call_b", "get_time", "{\"tz\":\"CET\"}", 0);
	T_EQI(r.stop, LLM_STOP_TOOLS);
	T_EQI(r.in_tokens, 50);
	T_EQI(r.out_tokens, 20);
	T_EQI(decode(&llm_openai, "openai-error", &r, why), -E_PROTO);
	why_has(why, "the model crashed while loading", NULL);
	cut(&llm_openai, "openai-cut");
	T_EQI(decode(&llm_openai, "openai-badargs", &r, why), 0);
	call_is(&r, 0, "call_bad", "get_weather", "{\"a\":", 1);
	T_EQI(r.stop, LLM_STOP_TOOLS);
	whole_reply(&llm_openai, "openai-whole", "call_w",
	    "{\"city\":\"Paris\"}");
}

/* Local servers: no index, arguments as an object, reasoning_content, no
 * [DONE] after finish_reason; a first call at index 1. */
static void
t_openai_quirks(void)
{
	struct llm_reply r;
	char why[256];

	T_EQI(decode(&llm_openai, "openai-quirks", &r, why), 0);
	text_is(&r, "Checking.");
	T_EQI(r.ncalls, 2);
	call_is(&r, 0, "call_q1", "get_weather", "{\"city\":\"Paris\"}", 0);
	call_is(&r, 1, "call_q2", "get_time", "{\"tz\":\"CET\"}", 0);
	T_EQI(r.stop, LLM_STOP_TOOLS);
	T_EQI(r.in_tokens, 7);
	T_EQI(r.out_tokens, 3);
	T_EQI(decode(&llm_openai, "openai-index1", &r, why), 0);
	text_is(&r, "Let me look.");
	T_EQI(r.ncalls, 1);
	call_is(&r, 0, "call_i1", "uptime", "{}", 0);
}

static void
t_anthropic(void)
{
	struct llm_reply r;
	char why[256];

	text_reply(&llm_anthropic, "anthropic-text", "end_turn");
	prefixes(&llm_anthropic, "anthropic-text");
	prefixes(&llm_anthropic, "anthropic-parallel");
	T_EQI(decode(&llm_anthropic, "anthropic-tool", &r, why), 0);
	text_is(&r, "Let me check.");
	T_EQI(r.ncalls, 1);
	call_is(&r, 0, "toolu_01", "get_weather", "{\"city\": \"Paris\"}", 0);
	T_EQI(r.stop, LLM_STOP_TOOLS);
	T_EQS(r.stop_raw, "tool_use");
	T_EQI(r.in_tokens, 40);
	T_EQI(r.out_tokens, 9);
	T_EQI(decode(&llm_anthropic, "anthropic-parallel", &r, why), 0);
	T_EQI(r.text_len, 0);	/* thinking is not text */
	T_EQI(r.ncalls, 2);
	call_is(&r, 0, "toolu_a", "get_weather", "{\"city\":\"Paris\"}", 0);
	call_is(&r, 1, "toolu_b", "get_time", "{\"tz\":\"CET\"}", 0);
	T_EQI(r.in_tokens, 50);
	T_EQI(r.out_tokens, 20);
	T_EQI(decode(&llm_anthropic, "anthropic-error", &r, why), -E_PROTO);
	why_has(why, "Overloaded", "overloaded_error");
	cut(&llm_anthropic, "anthropic-cut");
	T_EQI(decode(&llm_anthropic, "anthropic-badargs", &r, why), 0);
	call_is(&r, 0, "toolu_bad", "get_weather", "{\"a\":", 1);
	whole_reply(&llm_anthropic, "anthropic-whole", "toolu_w",
	    "{\"city\":\"Paris\"}");
	T_EQI(decode_how(&llm_anthropic, "anthropic-whole-error", 0, AS_IS,
	    &r, why), -E_PROTO);
	why_has(why, "max_tokens: Field required", "invalid_request_error");
}

static void
t_responses(void)
{
	struct llm_reply r;
	char why[256];

	text_reply(&llm_responses, "responses-text", "completed");
	prefixes(&llm_responses, "responses-text");
	prefixes(&llm_responses, "responses-parallel");
	T_EQI(decode(&llm_responses, "responses-tool", &r, why), 0);
	T_EQI(r.ncalls, 1);
	call_is(&r, 0, "call_r1", "get_weather", "{\"city\": \"Paris\"}", 0);
	T_EQI(r.stop, LLM_STOP_TOOLS);
	T_EQI(r.in_tokens, 40);
	T_EQI(r.out_tokens, 9);
	T_EQI(decode(&llm_responses, "responses-parallel", &r, why), 0);
	T_EQI(r.ncalls, 2);
	call_is(&r, 0, "call_a", "get_weather", "{\"city\":\"Paris\"}", 0);
	call_is(&r, 1, "call_b", "get_time", "{\"tz\":\"CET\"}", 0);
	T_EQI(r.stop, LLM_STOP_TOOLS);
	T_EQI(decode(&llm_responses, "responses-argsdone", &r, why), 0);
	call_is(&r, 0, "call_d", "uptime", "{\"verbose\":true}", 0);
	T_EQI(decode(&llm_responses, "responses-error", &r, why), -E_PROTO);
	why_has(why, "The server had an error", "server_error");
	T_EQI(decode(&llm_responses, "responses-failed", &r, why), -E_PROTO);
	why_has(why, "Rate limit reached", "rate_limit_exceeded");
	T_EQI(decode(&llm_responses, "responses-incomplete", &r, why), 0);
	text_is(&r, "A long story that");
	T_EQI(r.stop, LLM_STOP_LENGTH);
	T_EQI(r.out_tokens, 16);
	cut(&llm_responses, "responses-cut");
	T_EQI(decode(&llm_responses, "responses-crlf", &r, why), 0);
	text_is(&r, "Two\r\nlines");
	T_EQI(r.out_tokens, 2);
	whole_reply(&llm_responses, "responses-whole", "call_w",
	    "{\"city\":\"Paris\"}");
	T_EQI(decode_how(&llm_responses, "responses-whole-error", 0, AS_IS,
	    &r, why), -E_PROTO);
	why_has(why, "Incorrect API key provided", "invalid_api_key");
}

static void
t_ollama(void)
{
	struct llm_reply r;
	char why[256];

	text_reply(&llm_ollama, "ollama-text", "stop");	/* no last LF */
	prefixes(&llm_ollama, "ollama-text");
	T_EQI(decode(&llm_ollama, "ollama-tool", &r, why), 0);
	T_EQI(r.text_len, 0);
	T_EQI(r.ncalls, 1);
	call_is(&r, 0, "call_0", "get_weather", "{\"city\":\"Paris\"}", 0);
	T_EQI(r.stop, LLM_STOP_TOOLS);
	T_EQI(r.in_tokens, 40);
	T_EQI(r.out_tokens, 9);
	T_EQI(decode(&llm_ollama, "ollama-parallel", &r, why), 0);
	T_EQI(r.ncalls, 2);
	call_is(&r, 0, "call_0", "get_weather", "{\"city\":\"Paris\"}", 0);
	call_is(&r, 1, "call_1", "get_time", "{\"tz\":\"CET\"}", 0);
	T_EQI(decode(&llm_ollama, "ollama-error", &r, why), -E_PROTO);
	why_has(why, "unexpected EOF", NULL);
	cut(&llm_ollama, "ollama-cut");
	T_EQI(decode(&llm_ollama, "ollama-badargs", &r, why), 0);
	call_is(&r, 0, "call_0", "get_weather", "{\"a\":", 1);
	whole_reply(&llm_ollama, "ollama-whole", "call_0",
	    "{\"city\":\"Paris\"}");
}

/* Streams broken in ways the recordings do not show. */
static void
t_broken(void)
{
	static const struct {
		const struct llm_proto	*p;
		const char		*in;
		const char		*why;
	} v[] = {
		{ &llm_anthropic, "event: content_block_delta\ndata: {\"type\":"
		    "\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
		    "\"input_json_delta\",\"partial_json\":\"{}\"}}\n\n",
		    "not a tool call" },
		{ &llm_responses, "event: response.function_call_arguments."
		    "delta\ndata: {\"output_index\":3,\"delta\":\"{}\"}\n\n",
		    "not a tool call" },
		{ &llm_openai, "data: {\"choices\":[{\"delta\":{\"tool_calls\":"
		    "[{\"index\":99,\"id\":\"x\"}]}}]}\n\n", "out of range" },
		{ &llm_ollama, "{\"message\":{\"content\":\"a\"}}\nnot json\n",
		    "malformed JSON" },
		{ &llm_anthropic, "data: {\"type\":\"message_stop\"}\n",
		    NULL },
		{ &llm_openai, "data: [DONE]", "cut in the middle" },
	};
	static const char call[] = "{\"message\":{\"tool_calls\":[{"
	    "\"function\":{\"name\":\"f\",\"arguments\":{}}}]}}\n";
	struct llm_reply r;
	struct sbuf sb;
	char why[256];
	size_t i;
	int e;

	for (i = 0; i < ARRAY_LEN(v); i++) {
		why[0] = '\0';
		e = llm_decode(v[i].p, &t_arena, 1, v[i].in, strlen(v[i].in),
		    0, NULL, &r, why, sizeof(why));
		if (v[i].why == NULL)
			T_EQI(e, 0);
		else if (e == 0 || strstr(why, v[i].why) == NULL)
			t_fail(__FILE__, __LINE__, "case %zu: %d %s", i, e,
			    why);
	}
	/* Whole bodies that are JSON but no reply. */
	for (i = 0; i < 3; i++)
		T_EQI(llm_decode(i == 0 ? &llm_anthropic : i == 1 ?
		    &llm_responses : &llm_ollama, &t_arena, 0, "{\"id\":1}", 8,
		    0, NULL, &r, why, sizeof(why)), -E_PROTO);
	/* One tool call too many; without the first, just enough. */
	sbuf_init(&sb, &t_arena, 0);
	for (i = 0; i <= LLM_MAX_CALLS; i++)
		sbuf_adds(&sb, call);
	sbuf_adds(&sb, "{\"done\":true}\n");
	T_EQI(llm_decode(&llm_ollama, &t_arena, 1, sb.p, sb.len, 0, NULL, &r,
	    why, sizeof(why)), -E_LIMIT);
	why_has(why, "more than", NULL);
	T_EQI(llm_decode(&llm_ollama, &t_arena, 1, sb.p + strlen(call),
	    sb.len - strlen(call), 0, NULL, &r, why, sizeof(why)), 0);
	T_EQI(r.ncalls, LLM_MAX_CALLS);
}

/* Request bodies: a system prompt, a question, an answer with two calls
 * (the second with arguments that are not JSON), both results (the
 * second a failure), and a follow-up question. */
static const char *
request(const struct llm_proto *p, unsigned max_tokens)
{
	static const struct llm_tool tools[] = {
		{ "get_weather", "Weather in a city", "{\"type\":\"object\","
		    "\"properties\":{\"city\":{\"type\":\"string\"}}}" },
		{ "get_time", NULL, "{\"type\":\"object\"}" },
	};
	static struct llm_call calls[] = {
		{ "call_1", "get_weather", "{\"city\":\"Paris\"}", 16, 0 },
		{ "call_2", "get_time", "not json", 8, 1 },
	};
	static struct llm_msg m[5] = {
		{ LLM_USER, "Weather and time?", 17, NULL, 0, NULL, NULL, 0,
		    &m[1] },
		{ LLM_ASSISTANT, "Checking.", 9, calls, 2, NULL, NULL, 0,
		    &m[2] },
		{ LLM_TOOL, "sunny", 5, NULL, 0, "call_1", "get_weather", 0,
		    &m[3] },
		{ LLM_TOOL, "no clock", 8, NULL, 0, "call_2", "get_time", 1,
		    &m[4] },
		{ LLM_USER, "And tomorrow?", 13, NULL, 0, NULL, NULL, 0, NULL },
	};
	struct llm_req q = { "m1", "Be brief.", m, tools, 2, max_tokens, 1 };
	struct json_writer w;
	struct json_doc d;
	struct sbuf sb;

	sbuf_init(&sb, &t_arena, 0);
	json_writer_init(&w, &sb);
	p->body(&q, &w);
	T_EQI(json_writer_err(&w), 0);
	T_EQI(json_parse(&t_arena, sb.p, sb.len, 4096, &d), 0);
	return sb.p;
}

static void
has(const char *body, const char *s)
{
	if (strstr(body, s) == NULL)
		t_fail(__FILE__, __LINE__, "no %s in %s", s, body);
}

static void
t_request(void)
{
	const char *b;

	b = request(&llm_openai, 0);
	has(b, "{\"role\":\"system\",\"content\":\"Be brief.\"}");
	has(b, "{\"role\":\"tool\",\"tool_call_id\":\"call_2\",\"content\":"
	    "\"no clock\"}");
	has(b, "\"stream\":true");
	T(strstr(b, "max_tokens") == NULL);

	b = request(&llm_anthropic, 0);
	has(b, "\"model\":\"m1\",\"max_tokens\":4096,\"system\":"
	    "\"Be brief.\"");
	has(b, "\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":"
	    "\"text\",\"text\":\"Weather and time?\"}]},{\"role\":"
	    "\"assistant\",\"content\":[{\"type\":\"text\",\"text\":"
	    "\"Checking.\"},{\"type\":\"tool_use\",\"id\":\"call_1\","
	    "\"name\":\"get_weather\",\"input\":{\"city\":\"Paris\"}},"
	    "{\"type\":\"tool_use\",\"id\":\"call_2\",\"name\":\"get_time\","
	    "\"input\":{}}]},{\"role\":\"user\",\"content\":[{\"type\":"
	    "\"tool_result\",\"tool_use_id\":\"call_1\",\"content\":"
	    "\"sunny\"},{\"type\":\"tool_result\",\"tool_use_id\":\"call_2\","
	    "\"content\":\"no clock\",\"is_error\":true},{\"type\":\"text\","
	    "\"text\":\"And tomorrow?\"}]}]");
	has(b, "{\"name\":\"get_time\",\"description\":\"\",\"input_schema\":"
	    "{\"type\":\"object\"}}");
	has(request(&llm_anthropic, 100), "\"max_tokens\":100");

	b = request(&llm_responses, 0);
	has(b, "\"instructions\":\"Be brief.\",\"input\":[{\"role\":\"user\","
	    "\"content\":\"Weather and time?\"},{\"role\":\"assistant\","
	    "\"content\":\"Checking.\"},{\"type\":\"function_call\","
	    "\"call_id\":\"call_1\",\"name\":\"get_weather\",\"arguments\":"
	    "\"{\\\"city\\\":\\\"Paris\\\"}\"},{\"type\":\"function_call\","
	    "\"call_id\":\"call_2\",\"name\":\"get_time\",\"arguments\":"
	    "\"not json\"},{\"type\":\"function_call_output\",\"call_id\":"
	    "\"call_1\",\"output\":\"sunny\"},{\"type\":"
	    "\"function_call_output\",\"call_id\":\"call_2\",\"output\":"
	    "\"no clock\"},{\"role\":\"user\",\"content\":"
	    "\"And tomorrow?\"}]");
	has(b, "{\"type\":\"function\",\"name\":\"get_weather\","
	    "\"description\":\"Weather in a city\",\"parameters\":{");
	T(strstr(b, "max_output_tokens") == NULL);
	has(request(&llm_responses, 100), "\"max_output_tokens\":100");

	b = request(&llm_ollama, 0);
	has(b, "{\"role\":\"system\",\"content\":\"Be brief.\"}");
	has(b, "{\"role\":\"assistant\",\"content\":\"Checking.\","
	    "\"tool_calls\":[{\"function\":{\"name\":\"get_weather\","
	    "\"arguments\":{\"city\":\"Paris\"}}},{\"function\":{\"name\":"
	    "\"get_time\",\"arguments\":{}}}]}");
	has(b, "{\"role\":\"tool\",\"content\":\"sunny\",\"tool_name\":"
	    "\"get_weather\"}");
	has(b, "{\"type\":\"function\",\"function\":{\"name\":"
	    "\"get_weather\"");
	T(strstr(b, "options") == NULL);
	has(request(&llm_ollama, 100), "\"options\":{\"num_predict\":100}");
}

static void
t_find(void)
{
	T(llm_proto_find("openai") == &llm_openai);
	T(llm_proto_find("responses") == &llm_responses);
	T(llm_proto_find("anthropic") == &llm_anthropic);
	T(llm_proto_find("ollama") == &llm_ollama);
	T(llm_proto_find("gemini") == NULL);
	T(llm_anthropic.anthropic_auth && llm_ollama.ndjson);
	T_EQS(llm_ollama.path, "/api/chat");
}

/* A listening socket on 127.0.0.1; its base URL in url[64]. */
static int
listen_local(char *url, size_t n)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	int fd;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(fd, 4) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) != 0) {
		t_fail(__FILE__, __LINE__, "cannot listen on 127.0.0.1");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	snprintf(url, n, "http://127.0.0.1:%u", ntohs(sa.sin_port));
	return fd;
}

enum bad { DRIP, ENDLESS_500 };

/* The server, in a child: accept one connection, read the request, then
 * answer as `how` says until the client goes (or 10 s pass). Exits 0 when
 * the client hung up within 8 MiB of an endless body, else 1. */
static void
serve_badly(int lfd, enum bad how)
{
	static const char drip[] = "HTTP/1.1 200 OK\r\nContent-Type: "
	    "text/event-stream\r\n\r\n";
	static const char e500[] = "HTTP/1.1 500 Oops\r\nTransfer-Encoding: "
	    "chunked\r\n\r\n";
	static char chunk[4096 + 8] = "1000\r\n";
	struct timespec ts = { 0, 20000000L };
	long long end = net_now_ms() + 10000;
	size_t sent = 0;
	char req[4096];
	int fd;

	alarm(15);
	if ((fd = accept(lfd, NULL, NULL)) < 0 ||
	    read(fd, req, sizeof(req)) <= 0)
		_exit(1);
	memset(chunk + 6, 'e', 4096);
	memcpy(chunk + 4102, "\r\n", 2);
	if (send(fd, how == DRIP ? drip : e500, how == DRIP ? sizeof(drip) -
	    1 : sizeof(e500) - 1, MSG_NOSIGNAL) < 0)
		_exit(1);
	while (net_now_ms() < end) {
		if (how == DRIP) {
			if (send(fd, ": keepalive\n\n", 13, MSG_NOSIGNAL) < 0)
				_exit(0);
			nanosleep(&ts, NULL);
			continue;
		}
		if (send(fd, chunk, 4104, MSG_NOSIGNAL) < 0)
			_exit(sent < (8u << 20) ? 0 : 1);
		sent += 4104;
	}
	_exit(1);
}

/* One request to a server that answers badly, within deadline_ms (0:
 * none); the result and the time it took. */
static int
send_badly(enum bad how, long long deadline_ms, int *timed_out,
    long long *took, int *child_ok)
{
	struct llm_msg m = { LLM_USER, "hi", 2, NULL, 0, NULL, NULL, 0, NULL };
	struct llm_req q = { "m", NULL, &m, NULL, 0, 0, 1 };
	struct llm_client *cl;
	struct llm_reply r;
	struct llm_conf c;
	char url[64];
	long long t0;
	pid_t pid;
	int lfd, e, st;

	if ((lfd = listen_local(url, sizeof(url))) < 0)
		return -E_IO;
	if ((pid = fork()) == 0)
		serve_badly(lfd, how);
	close(lfd);
	llm_conf_defaults(&c);
	c.base_url = url;
	c.retries = 0;
	T((cl = llm_client_new(&t_arena, &c)) != NULL);
	t0 = net_now_ms();
	if (deadline_ms > 0)
		llm_set_deadline(cl, t0 + deadline_ms);
	e = llm_send(cl, &t_arena, &q, NULL, &r);
	*took = net_now_ms() - t0;
	*timed_out = llm_timed_out(cl);
	if (e == 0)
		llm_reply_release(&r);
	if (e == -E_TIMEOUT)
		T(strstr(llm_why(cl), "time limit was reached") != NULL);
	if (how == ENDLESS_500)
		T_EQI(llm_status(cl), 500);
	if (how == DRIP)
		kill(pid, SIGTERM);
	*child_ok = pid > 0 && waitpid(pid, &st, 0) == pid &&
	    WIFEXITED(st) && WEXITSTATUS(st) == 0;
	return e;
}

static void
t_deadline(void)
{
	struct llm_msg m = { LLM_USER, "hi", 2, NULL, 0, NULL, NULL, 0, NULL };
	struct llm_req q = { "m", NULL, &m, NULL, 0, 0, 1 };
	struct llm_client *cl;
	struct llm_reply r;
	struct llm_conf c;
	long long took;
	char url[64];
	int lfd, to, ok;

	/* A drip of SSE comments: the idle timeout never fires. */
	T_EQI(send_badly(DRIP, 300, &to, &took, &ok), -E_TIMEOUT);
	T(to == 1 && took >= 250 && took < 3000);

	/* Nobody accepts: the request sits in the backlog, no reply. */
	if ((lfd = listen_local(url, sizeof(url))) < 0)
		return;
	llm_conf_defaults(&c);
	c.base_url = url;
	c.retries = 0;
	T((cl = llm_client_new(&t_arena, &c)) != NULL);
	llm_set_deadline(cl, net_now_ms() + 200);
	took = net_now_ms();
	T_EQI(llm_send(cl, &t_arena, &q, NULL, &r), -E_TIMEOUT);
	took = net_now_ms() - took;
	T(llm_timed_out(cl) && took >= 150 && took < 3000);
	/* Already past: not even a connection. */
	llm_set_deadline(cl, net_now_ms() - 1);
	T_EQI(llm_send(cl, &t_arena, &q, NULL, &r), -E_TIMEOUT);
	T_EQI(llm_attempts(cl), 1);
	T(llm_timed_out(cl));
	/* No deadline again: an error that is not a timeout says so. */
	llm_set_deadline(cl, 0);
	close(lfd);
	T(llm_send(cl, &t_arena, &q, NULL, &r) != 0);
	T(!llm_timed_out(cl));
}

static void
t_error_body(void)
{
	long long took;
	int to, ok;

	/* An endless error body: its start is the message, the rest is
	 * not read; the server sees the connection go. */
	T_EQI(send_badly(ENDLESS_500, 0, &to, &took, &ok), -E_PROTO);
	T(!to && ok);
}

static const struct unit_case cases[] = {
	{ "openai", t_openai },
	{ "openai_quirks", t_openai_quirks },
	{ "anthropic", t_anthropic },
	{ "responses", t_responses },
	{ "ollama", t_ollama },
	{ "broken", t_broken },
	{ "request", t_request },
	{ "find", t_find },
	{ "deadline", t_deadline },
	{ "error_body", t_error_body },
};

const struct unit_suite suite_llm = { "llm", cases, ARRAY_LEN(cases) };
