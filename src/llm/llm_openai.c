/* llm_openai.c - OpenAI Chat Completions, streamed and whole, and the
 * OpenAI-compatible local servers (llama.cpp, Ollama /v1, LM Studio, vLLM).
 *
 * Stream: SSE `data:` chunks ending with `data: [DONE]`. Tool calls arrive
 * as deltas keyed by `index` whose function.arguments fragments are
 * concatenated; parallel calls interleave; a last chunk with empty
 * `choices` carries usage. Local-server quirks handled: no `index` (a
 * delta with an id starts a new call, one without continues the last),
 * arguments sent as an object, `reasoning_content` (ignored), errors as
 * `data: {"error": ...}` without [DONE], no [DONE] after finish_reason.
 */
#include <string.h>

#include "llm/llm.h"

static void
put_call(struct json_writer *w, const struct llm_call *c)
{
	json_begin_obj(w);
	json_kstr(w, "id", c->id);
	json_kstr(w, "type", "function");
	json_key(w, "function");
	json_begin_obj(w);
	json_kstr(w, "name", c->name);
	json_key(w, "arguments");
	json_put_strn(w, c->args, c->args_len);
	json_end_obj(w);
	json_end_obj(w);
}

static void
body(const struct llm_req *q, struct json_writer *w)
{
	json_begin_obj(w);
	json_kstr(w, "model", q->model);
	llm_put_messages(w, q, LLM_CHAT_OPENAI, put_call);
	llm_put_tools(w, q, LLM_TOOLS_NESTED);
	if (q->max_tokens > 0) {
		json_key(w, "max_tokens");
		json_put_uint(w, q->max_tokens);
	}
	json_key(w, "stream");
	json_put_bool(w, q->stream);
	if (q->stream) {
		json_key(w, "stream_options");
		json_begin_obj(w);
		json_key(w, "include_usage");
		json_put_bool(w, 1);
		json_end_obj(w);
	}
	json_end_obj(w);
}

/* One entry of tool_calls (a delta, or a whole call). */
static void
put_tool_call(struct llm_acc *acc, const struct json_doc *d, int tc,
    unsigned pos)
{
	int t, fn = json_get(d, tc, "function");
	const char *id, *name = NULL;
	size_t idn = 0, namen = 0;
	long long idx;
	unsigned k;

	id = acc_str(acc, d, json_get(d, tc, "id"), &idn);
	if (fn >= 0)
		name = acc_str(acc, d, json_get(d, fn, "name"), &namen);
	if (json_int(d, json_get(d, tc, "index"), &idx) == 0 && idx >= 0 &&
	    idx < LLM_MAX_CALLS)
		k = (unsigned)idx;
	else if (json_get(d, tc, "index") >= 0) {
		acc_fail(acc, -E_PROTO, "tool call index out of range");
		return;
	} else if (id != NULL && idn > 0)	/* no index: a new call... */
		k = acc->ncalls;
	else					/* ...or more of the last */
		k = acc->ncalls > 0 ? acc->ncalls - 1 : pos;
	acc_call(acc, k, id, idn, name, namen);
	if (fn < 0 || (t = json_get(d, fn, "arguments")) < 0)
		return;
	if (d->t[t].type == JSON_STR) {
		size_t n;
		char *s = acc_str(acc, d, t, &n);

		if (s != NULL)
			acc_args(acc, k, s, n);
	} else if (d->t[t].type == JSON_OBJ)	/* quirk: an object */
		acc_args(acc, k, d->js + d->t[t].start,
		    (size_t)(d->t[t].end - d->t[t].start));
}

/* The error object of a reply, in the provider's words. */
static int
error(struct llm_acc *acc, const struct json_doc *d)
{
	int e = json_get(d, 0, "error");
	char *msg;

	if (e < 0 || json_is_null(d, e))
		return 0;
	msg = acc_str(acc, d, d->t[e].type == JSON_OBJ ?
	    json_get(d, e, "message") : e, NULL);
	acc_fail(acc, -E_PROTO, "the model server reported an error: %s",
	    msg != NULL ? msg : "(no message)");
	return 1;
}

static void
choices(struct llm_acc *acc, const struct json_doc *d, const char *part)
{
	int ch = json_get(d, 0, "choices"), c, delta, t, arr;
	long long v;
	unsigned i;
	size_t n;
	char *s;

	if ((c = json_at(d, ch, 0)) >= 0) {
		delta = json_get(d, c, part);
		if ((t = json_get(d, delta, "content")) >= 0 &&
		    d->t[t].type == JSON_STR && (s = acc_str(acc, d, t, &n)))
			acc_text(acc, s, n);
		arr = json_get(d, delta, "tool_calls");
		if (arr >= 0 && d->t[arr].type == JSON_ARR)
			for (i = 0, t = arr + 1; i < (unsigned)d->t[arr].size;
			    i++, t = json_skip(d, t))
				put_tool_call(acc, d, t, i);
		if ((s = acc_str(acc, d, json_get(d, c, "finish_reason"), &n)))
			acc_stop(acc, s, n);
	}
	if ((t = json_get(d, 0, "usage")) >= 0) {
		if (json_int(d, json_get(d, t, "prompt_tokens"), &v) == 0)
			acc->in_tokens = (unsigned long)v;
		if (json_int(d, json_get(d, t, "completion_tokens"), &v) == 0)
			acc->out_tokens = (unsigned long)v;
	}
}

static void
event(struct llm_acc *acc, const char *ev, const char *data, size_t n)
{
	struct json_doc d;

	if (n == 6 && memcmp(data, "[DONE]", 6) == 0) {
		acc->done = 1;
		return;
	}
	if (acc_parse(acc, data, n, &d) != 0 || error(acc, &d))
		return;
	choices(acc, &d, "delta");
}

static void
whole(struct llm_acc *acc, const char *body, size_t n)
{
	struct json_doc d;

	if (acc_parse(acc, body, n, &d) != 0 || error(acc, &d))
		return;
	choices(acc, &d, "message");
	acc->done = json_get(&d, 0, "choices") >= 0;
}

const struct llm_proto llm_openai = {
	.name = "openai",
	.base_url = "https://api.openai.com",
	.key_env = "OPENAI_API_KEY",
	.path = "/v1/chat/completions",
	.lax_end = 1,
	.body = body,
	.event = event,
	.whole = whole,
};
