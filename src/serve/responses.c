/* responses.c - POST /v1/responses, OpenAI's Responses API over the same
 * turns as the chat completions: `input` a string or message items, the
 * reply one `response` object, or named Server-Sent Events (each data a
 * JSON object with its type and a sequence_number; no [DONE]). A stored
 * response's id carries its session, so previous_response_id goes on in
 * it. The shapes follow the openai package's resources/responses types. */
#include "serve/serve_int.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "session/slog.h"

#define NO_SUCH	"no such stored response: 'previous_response_id' and " \
	"item_reference must name a response (or its message) of this server " \
	"that was stored (not store: false)"

/* The session a response or message id names (resp_UNIQUE_HEX,
 * msg_UNIQUE_HEX), into c->tr: it holds the history. */
static int
previous(struct srv *s, struct conn *c, const char *id)
{
	char name[SLOG_NAME_MAX + 1], *u;
	const char *p;
	size_t n, k;

	if ((strncmp(id, "resp_", 5) != 0 && strncmp(id, "msg_", 4) != 0) ||
	    (p = strchr(strchr(id, '_') + 1, '_')) == NULL)
		return openai_bad(s, c, NO_SUCH);
	p++;
	if ((n = strlen(p)) == 0 || n % 2 != 0 || n / 2 >= sizeof(name) ||
	    strspn(p, "0123456789abcdef") != n)
		return openai_bad(s, c, NO_SUCH);
	for (k = 0; k < n / 2; k++)
		name[k] = (char)(str_hex_val(p[2 * k]) << 4 |
		    str_hex_val(p[2 * k + 1]));
	name[k] = '\0';
	if (!api_has_session(s, c, name) || (u = arena_strdup(&c->a, name)) ==
	    NULL)
		return openai_bad(s, c, NO_SUCH);
	c->tr.shown = u;
	c->tr.nseed = 0;	/* the session holds the history */
	return 0;
}

/* `input`: the text, or message items as chat's messages. */
static int
input(struct srv *s, struct conn *c, const struct json_doc *d)
{
	int t = json_get(d, 0, "input");
	char *str;
	size_t n;

	if (t < 0 || json_is_null(d, t))
		return openai_bad(s, c, "'input' is needed: a string or an array "
		    "of messages");
	if (d->t[t].type == JSON_ARR && d->t[t].size > 0)
		return openai_messages(s, c, d, t, 1);
	if (d->t[t].type != JSON_STR)
		return openai_bad(s, c, "'input' must be a string or a non-empty "
		    "array of messages");
	if (json_str(d, &c->a, t, &str, &n) != 0 || n == 0)
		return openai_bad(s, c, "'input' must not be empty");
	c->tr.input = str;
	c->tr.inlen = n;
	return 0;
}

/* A boolean field, absent or null: *v is left. 0 or -E_INVAL. */
static int
flag(const struct json_doc *d, const char *key, int *v)
{
	int t = json_get(d, 0, key);

	return t < 0 || json_is_null(d, t) || json_bool(d, t, v) == 0 ? 0 :
	    -E_INVAL;
}

/* see serve_int.h */
int
responses_parse(struct srv *s, struct conn *c, const struct json_doc *d)
{
	struct turnreq *tr = &c->tr;
	int t, stream = 0, store = 1;
	char *str;
	size_t n;

	if (flag(d, "stream", &stream) != 0)
		return openai_bad(s, c, "'stream' must be true or false");
	if (flag(d, "store", &store) != 0)
		return openai_bad(s, c, "'store' must be true or false");
	c->kind = stream ? K_RESP_SSE : K_RESP_JSON;
	/* The agent keeps its skills' instructions, as chat's system
	 * messages are left out: only the type is checked. */
	if ((t = json_get(d, 0, "instructions")) >= 0 && !json_is_null(d, t) &&
	    d->t[t].type != JSON_STR)
		return openai_bad(s, c, "'instructions' must be a string");
	if ((t = json_get(d, 0, "conversation")) >= 0 && !json_is_null(d, t))
		return openai_bad(s, c, "'conversation' is not supported: use "
		    "previous_response_id");
	if (json_str(d, &c->a, json_get(d, 0, "model"), &str, NULL) == 0)
		tr->model = tr->agent = str;
	if (input(s, c, d) != 0)
		return -E_INVAL;
	if ((t = json_get(d, 0, "user")) >= 0 && json_str(d, &c->a, t, &str,
	    &n) == 0 && n > 0) {
		tr->shown = openai_user_session(c, str);
		tr->nseed = 0;
	}
	if ((t = json_get(d, 0, "previous_response_id")) >= 0 &&
	    !json_is_null(d, t))
		return json_str(d, &c->a, t, &str, NULL) != 0 ? openai_bad(s, c,
		    "'previous_response_id' must be a string") :
		    previous(s, c, str);
	/* The AI SDK sends a stored answer back as a reference to it. */
	if (tr->ref != NULL)
		return previous(s, c, tr->ref);
	if (tr->shown == NULL && store &&
	    (tr->shown = openai_new_session(c, "resp")) == NULL) {
		(void)httpd_respond_err(s, c, 503, "server_error", "no random "
		    "bytes", NULL);
		return -E_IO;
	}
	return 0;
}

/* see serve_int.h */
void
responses_id(const struct wctx *w, char *buf, size_t size)
{
	const char *p = w->tr->shown;
	size_t n;

	n = (size_t)snprintf(buf, size, "resp_%llx%x",
	    (unsigned long long)w->created, (unsigned)getpid());
	if (w->tr->session == NULL || p == NULL || n + 2 + 2 * strlen(p) >
	    size)
		return;
	buf[n++] = '_';
	for (; *p != '\0'; p++, n += 2)
		snprintf(buf + n, size - n, "%02x", (unsigned char)*p);
}

/* The message item's id: msg_ and the rest of the response's, so that an
 * item_reference to it names the session as well. */
static void
put_item_id(struct json_writer *j, const struct wctx *w, const char *key)
{
	char b[168];

	snprintf(b, sizeof(b), "msg_%s", w->id + 5);
	json_kstr(j, key, b);
}

static void
put_part(struct json_writer *j, const char *text, size_t n)
{
	json_begin_obj(j);
	json_kstr(j, "type", "output_text");
	json_key(j, "text");
	json_put_strn(j, text, n);
	json_key(j, "annotations");
	json_begin_arr(j);
	json_end_arr(j);
	json_end_obj(j);
}

/* The assistant message: in progress and empty, or done with text. */
static void
put_message(struct json_writer *j, const struct wctx *w, const char *text,
    size_t n)
{
	json_begin_obj(j);
	put_item_id(j, w, "id");
	json_kstr(j, "type", "message");
	json_kstr(j, "status", text != NULL ? "completed" : "in_progress");
	json_kstr(j, "role", "assistant");
	json_key(j, "content");
	json_begin_arr(j);
	if (text != NULL)
		put_part(j, text, n);
	json_end_arr(j);
	json_end_obj(j);
}

/* The response object; text NULL: no output yet; err: failed, saying
 * that; usage when it is done. */
static void
put_response(struct json_writer *j, const struct wctx *w, const char *text,
    size_t n, const char *err, int done, unsigned long in, unsigned long out)
{
	json_begin_obj(j);
	json_kstr(j, "id", w->id);
	json_kstr(j, "object", "response");
	json_key(j, "created_at");
	json_put_int(j, w->created);
	json_kstr(j, "status", err != NULL ? "failed" : done ? "completed" :
	    "in_progress");
	json_key(j, "error");
	if (err != NULL) {
		json_begin_obj(j);
		json_kstr(j, "code", "server_error");
		json_kstr(j, "message", err);
		json_end_obj(j);
	} else
		json_put_null(j);
	json_key(j, "incomplete_details");
	json_put_null(j);
	json_key(j, "instructions");
	json_put_null(j);
	json_key(j, "metadata");
	json_begin_obj(j);
	json_end_obj(j);
	json_kstr(j, "model", w->tr->model ? w->tr->model : "skillbox");
	json_key(j, "output");
	json_begin_arr(j);
	if (text != NULL)
		put_message(j, w, text, n);
	json_end_arr(j);
	json_key(j, "parallel_tool_calls");
	json_put_bool(j, 0);
	json_key(j, "temperature");
	json_put_null(j);
	json_kstr(j, "tool_choice", "none");
	json_key(j, "tools");
	json_begin_arr(j);
	json_end_arr(j);
	json_key(j, "top_p");
	json_put_null(j);
	json_key(j, "store");
	json_put_bool(j, w->tr->session != NULL);
	if (done && err == NULL) {
		json_key(j, "usage");
		json_begin_obj(j);
		json_key(j, "input_tokens");
		json_put_uint(j, in);
		json_key(j, "output_tokens");
		json_put_uint(j, out);
		json_key(j, "total_tokens");
		json_put_uint(j, in + out);
		json_end_obj(j);
	}
	json_end_obj(j);
}

/* see serve_int.h */
void
responses_json(struct wctx *w, struct sbuf *sb, const char *final,
    unsigned long in, unsigned long out)
{
	struct json_writer j;

	if (final == NULL)
		final = "";
	json_writer_init(&j, sb);
	put_response(&j, w, final, strlen(final), NULL, 1, in, out);
}

/* --- the stream */

/* An event's object, its type and sequence_number first. */
static void
ev_begin(struct wctx *w, struct json_writer *j, struct sbuf *sb,
    const char *type)
{
	sbuf_init(sb, w->a, 0);
	json_writer_init(j, sb);
	json_begin_obj(j);
	json_kstr(j, "type", type);
	json_key(j, "sequence_number");
	json_put_uint(j, w->seq++);
}

static void
ev_end(struct wctx *w, struct json_writer *j, struct sbuf *sb,
    const char *type)
{
	json_end_obj(j);
	if (sb->err)
		return;
	worker_printf(w, "event: %s\ndata: ", type);
	worker_write(w, sb->p, sb->len);
	worker_write(w, "\n\n", 2);
}

/* An event of the message: its indexes, and key, the item's id. */
static void
ev_item(struct wctx *w, struct json_writer *j, struct sbuf *sb,
    const char *type, const char *key)
{
	ev_begin(w, j, sb, type);
	json_key(j, "output_index");
	json_put_uint(j, 0);
	if (key == NULL)
		return;
	json_key(j, "content_index");
	json_put_uint(j, 0);
	put_item_id(j, w, key);
}

/* response.created, .in_progress, .completed or .failed */
static void
ev_response(struct wctx *w, const char *type, const char *err, int done,
    unsigned long in, unsigned long out)
{
	struct arena_mark m = arena_mark(w->a);
	struct json_writer j;
	struct sbuf sb;

	ev_begin(w, &j, &sb, type);
	json_key(&j, "response");
	put_response(&j, w, done && err == NULL ? w->said.p : NULL,
	    w->said.len, err, done, in, out);
	ev_end(w, &j, &sb, type);
	arena_reset_to(w->a, m);
}

/* see serve_int.h */
void
responses_start(struct wctx *w)
{
	sbuf_init(&w->said, NULL, 0);
	sbuf_add(&w->said, "", 0);
	ev_response(w, "response.created", NULL, 0, 0, 0);
	ev_response(w, "response.in_progress", NULL, 0, 0, 0);
}

/* see serve_int.h */
void
responses_delta(struct wctx *w, const char *text, size_t n)
{
	struct arena_mark m = arena_mark(w->a);
	struct json_writer j;
	struct sbuf sb;

	if (!w->streamed) {
		ev_item(w, &j, &sb, "response.output_item.added", NULL);
		json_key(&j, "item");
		put_message(&j, w, NULL, 0);
		ev_end(w, &j, &sb, "response.output_item.added");
		ev_item(w, &j, &sb, "response.content_part.added", "item_id");
		json_key(&j, "part");
		put_part(&j, "", 0);
		ev_end(w, &j, &sb, "response.content_part.added");
		w->streamed = 1;
	}
	if (n > 0) {
		ev_item(w, &j, &sb, "response.output_text.delta", "item_id");
		json_key(&j, "delta");
		json_put_strn(&j, text, n);
		json_key(&j, "logprobs");
		json_begin_arr(&j);
		json_end_arr(&j);
		ev_end(w, &j, &sb, "response.output_text.delta");
		sbuf_add(&w->said, text, n);
	}
	arena_reset_to(w->a, m);
}

/* A failed turn: an error event (with the error object the openai
 * package throws on) and response.failed. */
static void
failed(struct wctx *w, const char *msg)
{
	struct json_writer j;
	struct sbuf sb;

	ev_begin(w, &j, &sb, "error");
	json_kstr(&j, "code", "server_error");
	json_kstr(&j, "message", msg);
	json_key(&j, "param");
	json_put_null(&j);
	json_key(&j, "error");
	json_begin_obj(&j);
	json_kstr(&j, "message", msg);
	json_kstr(&j, "type", "server_error");
	json_end_obj(&j);
	ev_end(w, &j, &sb, "error");
	ev_response(w, "response.failed", msg, 1, 0, 0);
}

/* see serve_int.h */
void
responses_end(struct wctx *w, enum agent_status st, const char *final,
    unsigned long in, unsigned long out)
{
	struct json_writer j;
	struct sbuf sb;
	size_t n = final != NULL ? strlen(final) : 0;

	if (st != AG_OK && st != AG_EXIT && st != AG_WAIT) {
		failed(w, final != NULL && *final != '\0' ? final :
		    "the turn failed");
		goto out;
	}
	/* The answer was streamed, or it is more than what was (a
	 * question, an offline answer): then it comes after. */
	if (!w->said.err && (!w->streamed || n > w->said.len ||
	    strcmp(w->said.p + w->said.len - n, final ? final : "") != 0)) {
		if (w->said.len > 0 && n > 0)
			responses_delta(w, "\n\n", 2);
		responses_delta(w, final, n);
	}
	if (w->said.err) {
		failed(w, "the answer ran out of the turn's memory");
		goto out;
	}
	ev_item(w, &j, &sb, "response.output_text.done", "item_id");
	json_key(&j, "text");
	json_put_strn(&j, w->said.p, w->said.len);
	json_key(&j, "logprobs");
	json_begin_arr(&j);
	json_end_arr(&j);
	ev_end(w, &j, &sb, "response.output_text.done");
	ev_item(w, &j, &sb, "response.content_part.done", "item_id");
	json_key(&j, "part");
	put_part(&j, w->said.p, w->said.len);
	ev_end(w, &j, &sb, "response.content_part.done");
	ev_item(w, &j, &sb, "response.output_item.done", NULL);
	json_key(&j, "item");
	put_message(&j, w, w->said.p, w->said.len);
	ev_end(w, &j, &sb, "response.output_item.done");
	ev_response(w, "response.completed", NULL, 1, in, out);
out:
	sbuf_release(&w->said);
}
