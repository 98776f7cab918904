/* openai.c - the OpenAI-compatible side: /v1/models, and the
 * chat.completions request and reply shapes (streamed as chunks, or one
 * chat.completion). */
#include "serve/serve_int.h"

#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "base/sha256.h"
#include "config.h"
#include "net/net.h"
#include "session/slog.h"

/* A model entry (a skill's name is escaped: the lenient loader takes
 * names the format does not allow). */
static void
put_model(struct json_writer *w, const char *id, long long created)
{
	json_begin_obj(w);
	json_kstr(w, "id", id);
	json_kstr(w, "object", "model");
	json_key(w, "created");
	json_put_int(w, created);
	json_kstr(w, "owned_by", "skillbox");
	json_end_obj(w);
}

/* An orchestration skill the token may use is a model of its own. */
static int
each_model(void *ctx, const struct skill *sk)
{
	struct skills_ctx *x = ctx;

	if ((sk->flags & (SKILL_NO_MODEL | SKILL_OSKILL)) == SKILL_OSKILL &&
	    api_in_words(x->only, sk->name))
		x->found |= strcmp(sk->name, x->find) == 0;
	return 0;
}

/* see serve_int.h */
int
openai_find_agent(struct srv *s, struct conn *c, const char *name)
{
	struct skills_ctx x;

	if (name == NULL || *name == '\0' || strcmp(name, "skillbox") == 0)
		return 0;
	memset(&x, 0, sizeof(x));
	x.find = name;
	return api_walk_skills(s, c, &x, each_model) == 0 && x.found ? 0 :
	    -E_NOENT;
}

/* The orchestration skills /v1/models lists. Finding them parses every
 * skill file (0.3 ms a request with the bundled skills, 30 times what
 * /health costs), so their names are kept here and found again only when
 * the skill files' fingerprint (a stat each) or the skills folders
 * changed; the fingerprint is compared once a second at most, so a new,
 * edited or removed skill shows within a second. Tokens are applied to
 * the kept names on each request. */
static struct {
	struct sbuf	 roots;		/* the folders, each NUL-ended */
	struct sbuf	 names;		/* each NUL-ended */
	uint64_t	 stamp;
	long long	 seen;		/* net_now_ms() of the last look */
	int		 ok;
} models;

#define MODELS_LOOK_MS	1000

static int
keep_model(void *ctx, const struct skill *sk)
{
	(void)ctx;
	if ((sk->flags & (SKILL_NO_MODEL | SKILL_OSKILL)) == SKILL_OSKILL)
		sbuf_add(&models.names, sk->name, strlen(sk->name) + 1);
	return models.names.err;
}

/* 1 when the configuration's skills folders are the kept ones. */
static int
same_roots(const struct cfg *cfg)
{
	const char *p = models.roots.p, *end = p + models.roots.len;
	unsigned i;

	for (i = 0; i < cfg->nskills; i++, p += strlen(p) + 1)
		if (p >= end || strcmp(p, cfg->skills[i]) != 0)
			return 0;
	return p == end;
}

/* Keep the names current: 0, or -E_* (nothing is kept then). */
static int
models_fresh(struct srv *s)
{
	struct skill_reg reg;
	long long now = net_now_ms();
	uint64_t stamp = 0;
	unsigned i;
	int e;

	if (models.ok && now - models.seen < MODELS_LOOK_MS &&
	    same_roots(s->cfg))
		return 0;
	if ((e = skill_reg_init(&reg, s->cfg->skills, s->cfg->nskills, NULL,
	    NULL)) == 0 && (e = skill_reg_stamp(&reg, &stamp)) == 0 &&
	    models.ok && stamp == models.stamp && same_roots(s->cfg)) {
		models.seen = now;
		return 0;
	}
	sbuf_release(&models.roots);
	sbuf_release(&models.names);
	sbuf_init(&models.roots, NULL, 0);
	sbuf_init(&models.names, NULL, 0);
	models.ok = 0;
	for (i = 0; e == 0 && i < s->cfg->nskills; i++)
		sbuf_add(&models.roots, s->cfg->skills[i],
		    strlen(s->cfg->skills[i]) + 1);
	if (e == 0 && (e = models.roots.err) == 0)
		e = skill_reg_each(&reg, keep_model, NULL);
	skill_reg_free(&reg);
	if (e != 0)
		return e;
	models.stamp = stamp;
	models.seen = now;
	models.ok = 1;
	return 0;
}

/* see serve_int.h */
int
openai_models(struct srv *s, struct conn *c)
{
	const char *only = c->tok >= 0 ? s->only[c->tok] : NULL, *p, *end;
	struct json_writer w;
	struct sbuf sb;

	if (HAVE_ORCH && models_fresh(s) != 0)
		return httpd_respond_err(s, c, 503, "server_error", "cannot list the "
		    "skills", NULL);
	sbuf_init(&sb, &c->a, 0);
	json_writer_init(&w, &sb);
	json_begin_obj(&w);
	json_kstr(&w, "object", "list");
	json_key(&w, "data");
	json_begin_arr(&w);
	put_model(&w, "skillbox", s->started);	/* the default entry agent */
	p = models.names.p;
	end = HAVE_ORCH && p != NULL ? p + models.names.len : p;
	for (; p < end; p += strlen(p) + 1)
		if (api_in_words(only, p))
			put_model(&w, p, s->started);
	json_end_arr(&w);
	json_end_obj(&w);
	return api_send_json(s, c, &sb);
}

/* see serve_int.h */
int
openai_content_text(struct conn *c, const struct json_doc *d, int t, char **out,
    size_t *n)
{
	struct sbuf sb;
	unsigned i;
	int p;
	char *s;
	size_t k;

	if (t < 0)
		return -E_INVAL;
	if (d->t[t].type == JSON_STR)
		return json_str(d, &c->a, t, out, n);
	if (d->t[t].type != JSON_ARR)
		return -E_INVAL;
	sbuf_init(&sb, &c->a, 0);
	for (i = 0; (p = json_at(d, t, i)) >= 0; i++) {
		if (!json_eq(d, json_get(d, p, "type"), "text") &&
		    !json_eq(d, json_get(d, p, "type"), "input_text") &&
		    !json_eq(d, json_get(d, p, "type"), "output_text"))
			continue;	/* images, files: not for this agent */
		if (json_str(d, &c->a, json_get(d, p, "text"), &s, &k) != 0)
			return -E_INVAL;
		if (sb.len > 0)
			sbuf_addc(&sb, '\n');
		sbuf_add(&sb, s, k);
	}
	sbuf_addc(&sb, '\0');
	if (sb.err)
		return sb.err;
	*out = sb.p;
	*n = sb.len - 1;
	return 0;
}

/* see serve_int.h */
int
openai_bad(struct srv *s, struct conn *c, const char *msg)
{
	(void)httpd_respond_err(s, c, 400, "invalid_request_error", msg, NULL);
	return -E_INVAL;
}

/* see serve_int.h */
int
openai_messages(struct srv *s, struct conn *c, const struct json_doc *d,
    int m, int resp)
{
	struct turnreq *tr = &c->tr;
	char *role, *str;
	size_t n;
	int t, y, i, last = -1;

	tr->seed = arena_zalloc(&c->a, (size_t)d->t[m].size *
	    sizeof(*tr->seed));
	if (tr->seed == NULL) {
		(void)httpd_respond_err(s, c, 503, "server_error", "out of "
		    "memory in the server", NULL);
		return -E_NOMEM;
	}
	for (i = 0; (t = json_at(d, m, (unsigned)i)) >= 0; i++) {
		/* Tool calls, their outputs, reasoning: items of a client
		 * that runs tools of its own, which this agent is not. */
		y = resp ? json_get(d, t, "type") : -1;
		if (json_eq(d, y, "item_reference")) {
			if (json_str(d, &c->a, json_get(d, t, "id"), &tr->ref,
			    NULL) != 0)
				return openai_bad(s, c, "an item_reference "
				    "needs an 'id'");
			continue;
		}
		if (y >= 0 && !json_eq(d, y, "message"))
			return openai_bad(s, c, json_str(d, &c->a, y, &str,
			    NULL) == 0 ? arena_printf(&c->a, "input item type "
			    "'%s' is not supported: only messages are", str) :
			    "an input item's 'type' must be a string");
		if (d->t[t].type != JSON_OBJ || json_str(d, &c->a,
		    json_get(d, t, "role"), &role, NULL) != 0)
			return openai_bad(s, c, "each message needs a 'role'");
		if (strcmp(role, "user") != 0 && strcmp(role,
		    "assistant") != 0)
			continue;	/* system, developer, tool: ours rule */
		if (openai_content_text(c, d, json_get(d, t, "content"),
		    &str, &n) != 0) {
			if (strcmp(role, "assistant") == 0)
				continue;	/* only tool calls */
			return openai_bad(s, c, "a user message needs "
			    "'content': a string or text parts");
		}
		tr->seed[tr->nseed].role = role[0] == 'u' ? LLM_USER :
		    LLM_ASSISTANT;
		tr->seed[tr->nseed].s = str;
		tr->seed[tr->nseed].n = n;
		if (role[0] == 'u')
			last = (int)tr->nseed;
		tr->nseed++;
	}
	if (last < 0 || tr->seed[last].n == 0)
		return openai_bad(s, c, "no user message with text");
	tr->input = tr->seed[last].s;
	tr->inlen = tr->seed[last].n;
	if (last > 0 && tr->seed[last - 1].role == LLM_ASSISTANT)
		tr->prev = tr->seed[last - 1].s;
	tr->nseed = (unsigned)last;	/* what came before it */
	return 0;
}

/* see serve_int.h */
const char *
openai_new_session(struct conn *c, const char *prefix)
{
	unsigned char rnd[6];
	char hex[13];
	unsigned k;

	if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd))
		return NULL;
	for (k = 0; k < sizeof(rnd); k++)
		snprintf(hex + 2 * k, 3, "%02x", rnd[k]);
	return arena_printf(&c->a, "%s-%s", prefix, hex);
}

/* see serve_int.h */
const char *
openai_user_session(struct conn *c, const char *user)
{
	unsigned char d[32];
	char hex[65];
	struct sha256 h;

	if (slog_name_ok(user) && strlen(user) <= SLOG_NAME_MAX - TAG_LEN - 1)
		return user;
	sha256_init(&h);
	sha256_feed(&h, user, strlen(user));
	sha256_final(&h, d);
	sha256_hex(d, hex);
	return arena_printf(&c->a, "u-%.16s", hex);
}

/* see serve_int.h */
void
openai_chunk(struct wctx *w, const char *text, size_t n, const char *finish)
{
	struct arena_mark m = arena_mark(w->a);
	struct json_writer j;
	struct sbuf sb;

	sbuf_init(&sb, w->a, 0);
	json_writer_init(&j, &sb);
	json_begin_obj(&j);
	json_kstr(&j, "id", w->id);
	json_kstr(&j, "object", "chat.completion.chunk");
	json_key(&j, "created");
	json_put_int(&j, w->created);
	json_kstr(&j, "model", w->tr->model ? w->tr->model : "skillbox");
	json_key(&j, "choices");
	json_begin_arr(&j);
	json_begin_obj(&j);
	json_key(&j, "index");
	json_put_uint(&j, 0);
	json_key(&j, "delta");
	json_begin_obj(&j);
	if (text != NULL) {
		if (!w->streamed) {
			json_kstr(&j, "role", "assistant");
		}
		json_key(&j, "content");
		json_put_strn(&j, text, n);
	}
	json_end_obj(&j);
	json_key(&j, "finish_reason");
	if (finish != NULL)
		json_put_str(&j, finish);
	else
		json_put_null(&j);
	json_end_obj(&j);
	json_end_arr(&j);
	json_end_obj(&j);
	if (!sb.err) {
		worker_write(w, "data: ", 6);
		worker_write(w, sb.p, sb.len);
		worker_write(w, "\n\n", 2);
	}
	if (text != NULL)
		w->streamed = 1;
	arena_reset_to(w->a, m);
}

/* see serve_int.h */
void
openai_end(struct wctx *w, enum agent_status st, const char *final,
    unsigned long in, unsigned long out)
{
	struct sbuf sb;

	if (st != AG_OK && st != AG_EXIT && st != AG_WAIT) {
		sbuf_init(&sb, w->a, 0);
		worker_error_json(w, &sb, final);
		if (!sb.err) {
			worker_write(w, "data: ", 6);
			worker_write(w, sb.p, sb.len);
			worker_write(w, "\n\n", 2);
		}
		return;
	}
	if (!w->streamed)
		openai_chunk(w, final ? final : "", final ? strlen(final) : 0,
		    NULL);
	openai_chunk(w, NULL, 0, "stop");
	if (w->tr->include_usage)
		worker_printf(w, "data: {\"id\":\"%s\",\"object\":\"chat.completion."
		    "chunk\",\"created\":%lld,\"choices\":[],\"usage\":{"
		    "\"prompt_tokens\":%lu,\"completion_tokens\":%lu,"
		    "\"total_tokens\":%lu}}\n\n", w->id, w->created, in, out,
		    in + out);
	worker_write(w, "data: [DONE]\n\n", 14);
}
