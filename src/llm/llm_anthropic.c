/* llm_anthropic.c - Anthropic Messages (POST /v1/messages), streamed and
 * whole.
 *
 * Stream: named SSE events, each also naming itself in `type`:
 * message_start (input usage), content_block_start (a text, tool_use or
 * thinking block at `index`), content_block_delta (text_delta, or
 * input_json_delta whose partial_json fragments are concatenated),
 * content_block_stop, message_delta (stop_reason, output usage),
 * message_stop (the end), ping, and error. Unknown events are ignored.
 * A tool_use block keeps its content block index as its call slot: the
 * slots of text and thinking blocks stay unused and are skipped.
 *
 * Requests: the system prompt is a top-level field, max_tokens is
 * required, and roles must alternate, so the results of one round of
 * tool calls (and a user message after them) go into one user message.
 */
#include <string.h>

#include "llm/llm.h"

static void
text_block(struct json_writer *w, const char *s, size_t n)
{
	json_begin_obj(w);
	json_kstr(w, "type", "text");
	json_key(w, "text");
	json_put_strn(w, s, n);
	json_end_obj(w);
}

static void
put_call(struct json_writer *w, const struct llm_call *c)
{
	json_begin_obj(w);
	json_kstr(w, "type", "tool_use");
	json_kstr(w, "id", c->id);
	json_kstr(w, "name", c->name);
	json_key(w, "input");
	if (c->bad_args || c->args_len == 0)
		json_put_raw(w, "{}", 2);
	else
		json_put_raw(w, c->args, c->args_len);
	json_end_obj(w);
}

/* A run of tool results, and the user message after it, as one user
 * message. Returns the message after those. */
static const struct llm_msg *
put_results(struct json_writer *w, const struct llm_msg *m)
{
	json_begin_obj(w);
	json_kstr(w, "role", "user");
	json_key(w, "content");
	json_begin_arr(w);
	for (; m != NULL && m->role == LLM_TOOL; m = m->next) {
		json_begin_obj(w);
		json_kstr(w, "type", "tool_result");
		json_kstr(w, "tool_use_id",
		    m->call_id != NULL ? m->call_id : "");
		json_key(w, "content");
		json_put_strn(w, m->text, m->text_len);
		if (m->is_error) {
			json_key(w, "is_error");
			json_put_bool(w, 1);
		}
		json_end_obj(w);
	}
	if (m != NULL && m->role == LLM_USER) {
		if (m->text_len > 0)
			text_block(w, m->text, m->text_len);
		m = m->next;
	}
	json_end_arr(w);
	json_end_obj(w);
	return m;
}

static void
body(const struct llm_req *q, struct json_writer *w)
{
	const struct llm_msg *m;
	unsigned i;

	json_begin_obj(w);
	json_kstr(w, "model", q->model);
	json_key(w, "max_tokens");
	json_put_uint(w, q->max_tokens > 0 ? q->max_tokens : 4096);
	if (q->system != NULL) {
		json_kstr(w, "system", q->system);
	}
	json_key(w, "messages");
	json_begin_arr(w);
	for (m = q->msgs; m != NULL;) {
		if (m->role == LLM_TOOL) {
			m = put_results(w, m);
			continue;
		}
		json_begin_obj(w);
		json_kstr(w, "role",
		    m->role == LLM_USER ? "user" : "assistant");
		json_key(w, "content");
		json_begin_arr(w);
		if (m->text_len > 0 || m->ncalls == 0)
			text_block(w, m->text, m->text_len);
		for (i = 0; m->role == LLM_ASSISTANT && i < m->ncalls; i++)
			put_call(w, &m->calls[i]);
		json_end_arr(w);
		json_end_obj(w);
		m = m->next;
	}
	json_end_arr(w);
	llm_put_tools(w, q, LLM_TOOLS_ANTHROPIC);
	json_key(w, "stream");
	json_put_bool(w, q->stream);
	json_end_obj(w);
}

/* {"type": "error", "error": {"type": ..., "message": ...}} */
static int
error(struct llm_acc *acc, const struct json_doc *d)
{
	int e = json_get(d, 0, "error");
	char *msg, *type;

	if (e < 0 || d->t[e].type != JSON_OBJ)
		return 0;
	msg = acc_str(acc, d, json_get(d, e, "message"), NULL);
	type = acc_str(acc, d, json_get(d, e, "type"), NULL);
	acc_fail(acc, -E_PROTO, "the model server reported an error: %s (%s)",
	    msg != NULL ? msg : "(no message)", type != NULL ? type : "error");
	return 1;
}

static void
usage(struct llm_acc *acc, const struct json_doc *d, int u)
{
	long long v;

	if (json_int(d, json_get(d, u, "input_tokens"), &v) == 0 && v >= 0)
		acc->in_tokens = (unsigned long)v;
	if (json_int(d, json_get(d, u, "output_tokens"), &v) == 0 && v >= 0)
		acc->out_tokens = (unsigned long)v;
}

static void
stop(struct llm_acc *acc, const struct json_doc *d, int obj)
{
	size_t n;
	char *s = acc_str(acc, d, json_get(d, obj, "stop_reason"), &n);

	if (s != NULL)
		acc_stop(acc, s, n);
}

/* A string member as text, or nothing. */
static void
text(struct llm_acc *acc, const struct json_doc *d, int obj, const char *key)
{
	size_t n;
	char *s = acc_str(acc, d, json_get(d, obj, key), &n);

	if (s != NULL)
		acc_text(acc, s, n);
}

/* A tool_use block's id and name into call slot k. */
static void
tool_use(struct llm_acc *acc, const struct json_doc *d, int b, long long k)
{
	size_t idn = 0, namen = 0;
	char *id = acc_str(acc, d, json_get(d, b, "id"), &idn);
	char *name = acc_str(acc, d, json_get(d, b, "name"), &namen);

	if (k < 0 || k >= LLM_MAX_CALLS)
		acc_fail(acc, -E_LIMIT, "a tool call in content block %lld, "
		    "past the limit of %d", k, LLM_MAX_CALLS);
	else
		acc_call(acc, (unsigned)k, id, idn, name, namen);
}

static void
event(struct llm_acc *acc, const char *ev, const char *data, size_t n)
{
	struct json_doc d;
	const char *type;
	long long k = -1;
	size_t len;
	int b;
	char *s;

	if (acc_parse(acc, data, n, &d) != 0 || error(acc, &d))
		return;
	if ((type = acc_str(acc, &d, json_get(&d, 0, "type"), NULL)) == NULL &&
	    (type = ev) == NULL)
		return;
	json_int(&d, json_get(&d, 0, "index"), &k);
	if (strcmp(type, "message_start") == 0)
		usage(acc, &d, json_get(&d, json_get(&d, 0, "message"),
		    "usage"));
	else if (strcmp(type, "content_block_start") == 0) {
		b = json_get(&d, 0, "content_block");
		if (json_eq(&d, json_get(&d, b, "type"), "tool_use"))
			tool_use(acc, &d, b, k);
		else if (json_eq(&d, json_get(&d, b, "type"), "text"))
			text(acc, &d, b, "text");
	} else if (strcmp(type, "content_block_delta") == 0) {
		b = json_get(&d, 0, "delta");
		if (json_eq(&d, json_get(&d, b, "type"), "text_delta"))
			text(acc, &d, b, "text");
		else if (!json_eq(&d, json_get(&d, b, "type"),
		    "input_json_delta"))
			return;
		else if (k < 0 || k >= LLM_MAX_CALLS || !acc->calls[k].used)
			acc_fail(acc, -E_PROTO, "tool input for content block "
			    "%lld, which is not a tool call", k);
		else if ((s = acc_str(acc, &d, json_get(&d, b, "partial_json"),
		    &len)) != NULL)
			acc_args(acc, (unsigned)k, s, len);
	} else if (strcmp(type, "message_delta") == 0) {
		stop(acc, &d, json_get(&d, 0, "delta"));
		usage(acc, &d, json_get(&d, 0, "usage"));
	} else if (strcmp(type, "message_stop") == 0)
		acc->done = 1;
}

static void
whole(struct llm_acc *acc, const char *body, size_t n)
{
	struct json_doc d;
	int arr, b, t;
	unsigned i, k, nb;

	if (acc_parse(acc, body, n, &d) != 0 || error(acc, &d))
		return;
	arr = json_get(&d, 0, "content");
	nb = arr >= 0 && d.t[arr].type == JSON_ARR ?
	    (unsigned)d.t[arr].size : 0;
	for (i = 0, b = arr + 1; i < nb && !acc->err; i++, b = json_skip(&d, b))
		if (json_eq(&d, json_get(&d, b, "type"), "text"))
			text(acc, &d, b, "text");
		else if (json_eq(&d, json_get(&d, b, "type"), "tool_use")) {
			tool_use(acc, &d, b, k = acc->ncalls);
			if ((t = json_get(&d, b, "input")) >= 0)
				acc_args(acc, k, d.js + d.t[t].start,
				    (size_t)(d.t[t].end - d.t[t].start));
		}
	stop(acc, &d, 0);
	usage(acc, &d, json_get(&d, 0, "usage"));
}

const struct llm_proto llm_anthropic = {
	.name = "anthropic",
	.base_url = "https://api.anthropic.com",
	.key_env = "ANTHROPIC_API_KEY",
	.path = "/v1/messages",
	.anthropic_auth = 1,
	.body = body,
	.event = event,
	.whole = whole,
};
