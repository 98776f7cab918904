/* llm_responses.c - OpenAI Responses (POST /v1/responses), streamed and
 * whole.
 *
 * Stream: named SSE events, each also naming itself in `type`, and no
 * [DONE]: response.output_item.added starts an item (a function_call has
 * call_id and name), response.function_call_arguments.delta carries
 * argument fragments for the item at output_index (.done the whole
 * arguments), response.output_text.delta the text; the reply ends with
 * response.completed, response.incomplete or response.failed, all three
 * carrying the response object (status, usage, error), or with an
 * `error` event. Other events are ignored. A function_call keeps its
 * output_index as its call slot: the slots of message and reasoning items
 * stay unused and are skipped.
 *
 * Requests: the system prompt is `instructions`; the conversation is a
 * list of input items, tool calls and their results being items of their
 * own (function_call, function_call_output) linked by call_id.
 */
#include <string.h>

#include "llm/llm.h"

static void
put_item(struct json_writer *w, const char *type, const char *id)
{
	json_begin_obj(w);
	json_kstr(w, "type", type);
	json_kstr(w, "call_id", id != NULL ? id : "");
}

static void
put_msg(struct json_writer *w, const char *role, const char *s, size_t n)
{
	json_begin_obj(w);
	json_kstr(w, "role", role);
	json_key(w, "content");
	json_put_strn(w, s, n);
	json_end_obj(w);
}

static void
body(const struct llm_req *q, struct json_writer *w)
{
	const struct llm_msg *m;
	unsigned i;

	json_begin_obj(w);
	json_kstr(w, "model", q->model);
	if (q->system != NULL) {
		json_kstr(w, "instructions", q->system);
	}
	json_key(w, "input");
	json_begin_arr(w);
	for (m = q->msgs; m != NULL; m = m->next) {
		if (m->role == LLM_TOOL) {
			put_item(w, "function_call_output", m->call_id);
			json_key(w, "output");
			json_put_strn(w, m->text, m->text_len);
			json_end_obj(w);
			continue;
		}
		if (m->role == LLM_USER || m->text_len > 0)
			put_msg(w, m->role == LLM_USER ? "user" : "assistant",
			    m->text, m->text_len);
		for (i = 0; m->role == LLM_ASSISTANT && i < m->ncalls; i++) {
			put_item(w, "function_call", m->calls[i].id);
			json_kstr(w, "name", m->calls[i].name);
			json_key(w, "arguments");
			json_put_strn(w, m->calls[i].args,
			    m->calls[i].args_len);
			json_end_obj(w);
		}
	}
	json_end_arr(w);
	llm_put_tools(w, q, LLM_TOOLS_FLAT);
	if (q->max_tokens > 0) {
		json_key(w, "max_output_tokens");
		json_put_uint(w, q->max_tokens);
	}
	json_key(w, "stream");
	json_put_bool(w, q->stream);
	json_end_obj(w);
}

/* An error object {"code", "message"} (or an `error` event, which may
 * have them at the top). */
static void
fail(struct llm_acc *acc, const struct json_doc *d, int e)
{
	char *msg = acc_str(acc, d, json_get(d, e, "message"), NULL);
	char *code = acc_str(acc, d, json_get(d, e, "code"), NULL);

	if (code == NULL)
		code = acc_str(acc, d, json_get(d, e, "type"), NULL);
	acc_fail(acc, -E_PROTO, "the model server reported an error: %s%s%s%s",
	    msg != NULL ? msg : "(no message)", code != NULL ? " (" : "",
	    code != NULL ? code : "", code != NULL ? ")" : "");
}

/* A string member, unescaped, as the arguments of call k. */
static void
args(struct llm_acc *acc, const struct json_doc *d, int obj, const char *key,
    unsigned k)
{
	size_t n;
	char *s = acc_str(acc, d, json_get(d, obj, key), &n);

	if (s != NULL && n > 0)
		acc_args(acc, k, s, n);
}

/* A function_call item into call slot k. */
static void
call(struct llm_acc *acc, const struct json_doc *d, int it, long long k)
{
	size_t idn = 0, namen = 0;
	char *id = acc_str(acc, d, json_get(d, it, "call_id"), &idn);
	char *name = acc_str(acc, d, json_get(d, it, "name"), &namen);

	if (k < 0 || k >= LLM_MAX_CALLS) {
		acc_fail(acc, -E_LIMIT, "a tool call at output %lld, past the "
		    "limit of %d", k, LLM_MAX_CALLS);
		return;
	}
	acc_call(acc, (unsigned)k, id, idn, name, namen);
	args(acc, d, it, "arguments", (unsigned)k);
}

/* The response object at the end: usage, then how it ended (its status,
 * else st; neither: not a reply). */
static void
result(struct llm_acc *acc, const struct json_doc *d, int r, const char *st)
{
	int e = json_get(d, r, "error"), u = json_get(d, r, "usage");
	long long v;
	size_t n;
	char *s;

	if (json_int(d, json_get(d, u, "input_tokens"), &v) == 0 && v >= 0)
		acc->in_tokens = (unsigned long)v;
	if (json_int(d, json_get(d, u, "output_tokens"), &v) == 0 && v >= 0)
		acc->out_tokens = (unsigned long)v;
	if (e >= 0 && d->t[e].type == JSON_OBJ) {
		fail(acc, d, e);
		return;
	}
	if ((s = acc_str(acc, d, json_get(d, r, "status"), NULL)) != NULL)
		st = s;
	if (st == NULL)
		return;
	if (strcmp(st, "failed") == 0) {
		fail(acc, d, -1);
		return;
	}
	if (strcmp(st, "incomplete") == 0) {
		s = acc_str(acc, d, json_get(d, json_get(d, r,
		    "incomplete_details"), "reason"), &n);
		if (s == NULL || strcmp(s, "max_output_tokens") == 0)
			s = "length", n = 6;
		acc_stop(acc, s, n);
	} else if (acc->ncalls > 0)
		acc_stop(acc, "tool_calls", 10);
	else
		acc_stop(acc, st, strlen(st));
	acc->done = 1;
}

static void
event(struct llm_acc *acc, const char *ev, const char *data, size_t n)
{
	struct json_doc d;
	const char *type;
	long long k = -1;
	int e;

	if (acc_parse(acc, data, n, &d) != 0)
		return;
	if ((type = acc_str(acc, &d, json_get(&d, 0, "type"), NULL)) == NULL &&
	    (type = ev) == NULL)
		return;
	json_int(&d, json_get(&d, 0, "output_index"), &k);
	if (strcmp(type, "response.output_item.added") == 0) {
		e = json_get(&d, 0, "item");
		if (json_eq(&d, json_get(&d, e, "type"), "function_call"))
			call(acc, &d, e, k);
	} else if (strncmp(type, "response.function_call_arguments.", 33)
	    == 0) {
		if (k < 0 || k >= LLM_MAX_CALLS || !acc->calls[k].used)
			acc_fail(acc, -E_PROTO, "tool arguments for output "
			    "%lld, which is not a tool call", k);
		else if (strcmp(type + 33, "delta") == 0)
			args(acc, &d, 0, "delta", (unsigned)k);
		else if (strcmp(type + 33, "done") == 0 &&
		    acc->calls[k].args.len == 0)
			args(acc, &d, 0, "arguments", (unsigned)k);
	} else if (strcmp(type, "response.output_text.delta") == 0 ||
	    strcmp(type, "response.refusal.delta") == 0) {
		size_t len;
		char *s = acc_str(acc, &d, json_get(&d, 0, "delta"), &len);

		if (s != NULL)
			acc_text(acc, s, len);
	} else if (strcmp(type, "response.completed") == 0 ||
	    strcmp(type, "response.incomplete") == 0 ||
	    strcmp(type, "response.failed") == 0)
		result(acc, &d, json_get(&d, 0, "response"), type + 9);
	else if (strcmp(type, "error") == 0) {
		e = json_get(&d, 0, "error");
		fail(acc, &d, e >= 0 && d.t[e].type == JSON_OBJ ? e : 0);
	}
}

static void
whole(struct llm_acc *acc, const char *body, size_t n)
{
	struct json_doc d;
	int arr, it, c, ct;
	unsigned i, j, ni, nc;

	if (acc_parse(acc, body, n, &d) != 0)
		return;
	arr = json_get(&d, 0, "output");
	ni = arr >= 0 && d.t[arr].type == JSON_ARR ?
	    (unsigned)d.t[arr].size : 0;
	for (i = 0, it = arr + 1; i < ni && !acc->err;
	    i++, it = json_skip(&d, it)) {
		if (json_eq(&d, json_get(&d, it, "type"), "function_call")) {
			call(acc, &d, it, acc->ncalls);
			continue;
		}
		if (!json_eq(&d, json_get(&d, it, "type"), "message"))
			continue;
		ct = json_get(&d, it, "content");
		nc = ct >= 0 && d.t[ct].type == JSON_ARR ?
		    (unsigned)d.t[ct].size : 0;
		for (j = 0, c = ct + 1; j < nc; j++, c = json_skip(&d, c)) {
			size_t len;
			char *s = acc_str(acc, &d, json_get(&d, c, "text"),
			    &len);

			if (s == NULL)
				s = acc_str(acc, &d, json_get(&d, c,
				    "refusal"), &len);
			if (s != NULL)
				acc_text(acc, s, len);
		}
	}
	result(acc, &d, 0, NULL);
}

const struct llm_proto llm_responses = {
	.name = "responses",
	.base_url = "https://api.openai.com",
	.key_env = "OPENAI_API_KEY",
	.path = "/v1/responses",
	.body = body,
	.event = event,
	.whole = whole,
};
