/* llm_ollama.c - Ollama's native chat API (POST /api/chat), streamed and
 * whole.
 *
 * Stream: newline-delimited JSON, one object per line:
 * {"message": {"content", "tool_calls": [{"function": {"name",
 * "arguments": {...}}}]}, "done": false} and a last line with
 * "done": true, done_reason, prompt_eval_count and eval_count; a failure
 * is {"error": "..."}. Tool calls come whole, arguments as an object,
 * usually without ids (llm.c makes them up). A whole reply is one such
 * object. Ollama says "stop" also when the model called tools.
 */
#include <string.h>

#include "llm/llm.h"

static void
put_call(struct json_writer *w, const struct llm_call *c)
{
	json_begin_obj(w);
	json_key(w, "function");
	json_begin_obj(w);
	json_kstr(w, "name", c->name);
	json_key(w, "arguments");
	if (c->bad_args || c->args_len == 0)
		json_put_raw(w, "{}", 2);
	else
		json_put_raw(w, c->args, c->args_len);
	json_end_obj(w);
	json_end_obj(w);
}

static void
body(const struct llm_req *q, struct json_writer *w)
{
	json_begin_obj(w);
	json_kstr(w, "model", q->model);
	llm_put_messages(w, q, LLM_CHAT_OLLAMA, put_call);
	llm_put_tools(w, q, LLM_TOOLS_NESTED);
	json_key(w, "stream");
	json_put_bool(w, q->stream);
	if (q->max_tokens > 0) {
		json_key(w, "options");
		json_begin_obj(w);
		json_key(w, "num_predict");
		json_put_uint(w, q->max_tokens);
		json_end_obj(w);
	}
	json_end_obj(w);
}

/* One whole tool call into a new slot. */
static void
put_tool_call(struct llm_acc *acc, const struct json_doc *d, int tc)
{
	int fn = json_get(d, tc, "function"), t;
	size_t idn = 0, namen = 0, n;
	char *id = acc_str(acc, d, json_get(d, tc, "id"), &idn);
	char *name = acc_str(acc, d, json_get(d, fn, "name"), &namen), *s;
	unsigned k = acc->ncalls;

	acc_call(acc, k, id, idn, name, namen);
	if ((t = json_get(d, fn, "arguments")) < 0)
		return;
	if (d->t[t].type == JSON_STR) {
		if ((s = acc_str(acc, d, t, &n)) != NULL)
			acc_args(acc, k, s, n);
	} else
		acc_args(acc, k, d->js + d->t[t].start,
		    (size_t)(d->t[t].end - d->t[t].start));
}

/* One line of the stream, or the whole reply. */
static void
line(struct llm_acc *acc, const char *data, size_t n)
{
	struct json_doc d;
	int e, m, arr, tc, done = 0;
	unsigned i, nc;
	long long v;
	size_t len;
	char *s;

	if (acc_parse(acc, data, n, &d) != 0)
		return;
	if ((e = json_get(&d, 0, "error")) >= 0 && !json_is_null(&d, e)) {
		s = acc_str(acc, &d, d.t[e].type == JSON_OBJ ?
		    json_get(&d, e, "message") : e, NULL);
		acc_fail(acc, -E_PROTO, "the model server reported an error: "
		    "%s", s != NULL ? s : "(no message)");
		return;
	}
	m = json_get(&d, 0, "message");
	if ((s = acc_str(acc, &d, json_get(&d, m, "content"), &len)) != NULL)
		acc_text(acc, s, len);
	arr = json_get(&d, m, "tool_calls");
	nc = arr >= 0 && d.t[arr].type == JSON_ARR ?
	    (unsigned)d.t[arr].size : 0;
	for (i = 0, tc = arr + 1; i < nc && !acc->err;
	    i++, tc = json_skip(&d, tc))
		put_tool_call(acc, &d, tc);
	if (json_bool(&d, json_get(&d, 0, "done"), &done) != 0 || !done)
		return;
	if (json_int(&d, json_get(&d, 0, "prompt_eval_count"), &v) == 0 &&
	    v >= 0)
		acc->in_tokens = (unsigned long)v;
	if (json_int(&d, json_get(&d, 0, "eval_count"), &v) == 0 && v >= 0)
		acc->out_tokens = (unsigned long)v;
	s = acc_str(acc, &d, json_get(&d, 0, "done_reason"), &len);
	if (acc->ncalls > 0 && (s == NULL || strcmp(s, "stop") == 0))
		s = "tool_calls", len = 10;
	else if (s == NULL)
		s = "stop", len = 4;
	acc_stop(acc, s, len);
	acc->done = 1;
}

static void
event(struct llm_acc *acc, const char *ev, const char *data, size_t n)
{
	line(acc, data, n);
}

static void
whole(struct llm_acc *acc, const char *body, size_t n)
{
	line(acc, body, n);
	if (!acc->err && !acc->done)
		acc_fail(acc, -E_PROTO, "a reply without \"done\": true");
}

const struct llm_proto llm_ollama = {
	.name = "ollama",
	.base_url = "http://127.0.0.1:11434",
	.path = "/api/chat",
	.ndjson = 1,
	.body = body,
	.event = event,
	.whole = whole,
};
