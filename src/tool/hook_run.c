/* hook_run.c - approval rules and hooks at work (see hook.h). A command
 * hook runs confined like a skill's command line (Read and Bash, no
 * network), its context on stdin and in HOOK_INPUT; an http hook POSTs
 * the context with our own client (http.c, tls.c for https), no proxy. */
#include "skill/hook.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fmt/fm.h"
#include "net/http.h"
#include "fmt/json.h"
#include "net/net.h"
#include "sandbox/sandbox.h"
#include "skill/skill.h"
#include "base/str.h"
#include "net/tls.h"
#include "config.h"

#define HOOK_REASON_MAX	1000		/* bytes of a reason kept */

/* A skill's own rules, from its front-matter, read again: only skills
 * that have some (SKILL_GATED) pay for it. */
static int
skill_rules(const struct skill *sk, struct arena *a, struct hook_rules *r)
{
	struct fm_node *root;
	struct fm_error fe;
	char *fm, *body, err[8];
	unsigned bl, line;
	int e;

	if ((e = skill_load(sk, a, &fm, &body, &bl)) != 0)
		return e;
	if (fm == NULL || (e = fm_parse(a, fm, strlen(fm), 1, &root,
	    &fe)) != 0)
		return fm == NULL ? -E_PARSE : e;
	return hook_rules_fm(a, root, sk->dir, r, &line, err, sizeof(err));
}

static int
matches(const char *pat, const struct hook_step *st)
{
	return pat == NULL || (st->tool != NULL && hook_glob(pat, st->tool)) ||
	    (st->skill != NULL && hook_glob(pat, st->skill)) ||
	    (st->agent != NULL && hook_glob(pat, st->agent));
}

static void
put(struct json_writer *w, const char *k, const char *v)
{
	if (v == NULL)
		return;
	json_key(w, k);
	json_put_str(w, v);
}

/* The context a hook gets, as JSON. The arguments are the values the
 * tool will read, written again in the writer's one form (compact, "b"
 * never "\u0062"): a hook judges what runs, not the model's spelling. */
static struct str
context(struct arena *a, const struct hook_step *st)
{
	struct json_writer w;
	struct json_doc d;
	struct sbuf sb;

	sbuf_init(&sb, a, 0);
	json_writer_init(&w, &sb);
	json_begin_obj(&w);
	put(&w, "event", hook_event_name(st->ev));
	put(&w, "session", st->session);
	json_key(&w, "turn");
	json_put_uint(&w, st->turn);
	put(&w, "agent", st->agent);
	put(&w, "tool", st->tool);
	put(&w, "skill", st->skill);
	put(&w, "id", st->id);
	if (st->args != NULL) {
		/* Refused before this (llm.c): here too, as the copy would
		 * keep both keys and a hook read the other one. */
		if (json_parse(a, st->args, st->args_len, 1u << 16, &d) != 0 ||
		    json_dup_key(&d, a) != 0)
			return (struct str){ NULL, 0 };
		json_key(&w, "args");
		json_put_tok(&w, &d, 0);
	}
	if (st->result != NULL) {
		json_key(&w, st->ev & 1 ? "result" : "input");
		json_put_strn(&w, st->result, st->result_len);
	}
	if (st->ev & 1) {
		json_key(&w, "ok");
		json_put_bool(&w, !st->is_error);
	}
	put(&w, "status", st->status);
	json_end_obj(&w);
	return json_writer_err(&w) ? (struct str){ NULL, 0 } :
	    (struct str){ sb.p, sb.len };
}

/* Text a hook gave as its reason: trimmed, capped. */
static const char *
why(struct arena *a, const char *s, size_t n)
{
	struct str t = str_trim((struct str){ s != NULL ? s : "", n });

	return arena_strndup(a, t.p, MIN(t.n, HOOK_REASON_MAX));
}

static enum hook_verdict
run_command(const struct hook_env *env, struct arena *a, const struct hook *h,
    struct str in, const char **reason)
{
	/* The context in HOOK_INPUT too: sbx_run gives it as SKILL_INPUT. */
	static const char wrap[] = "HOOK_INPUT=$SKILL_INPUT exec /bin/sh -c "
	    "\"$1\"";
	const char *argv[] = { "/bin/sh", "-c", wrap, "hook", h->target, NULL };
	struct sbx_policy p;
	struct sbx_result r;

	if (env->base != NULL)
		p = *env->base;
	else
		sbx_policy_defaults(&p);
	p.perms = SBX_READ | SBX_SHELL;
	p.nshell_allow = 0;
	p.skill_name = "hook";
	p.skill_root = h->dir;
	p.workspace = env->workspace;
	p.timeout_ms = h->timeout_s * 1000u;
	p.out_cap = 4096;
	if (sbx_run(a, &p, argv, in.p, in.n, &r) != 0) {
		*reason = arena_printf(a, "not run: %s", r.why);
		return HOOK_ASK;	/* an error: logged, the step goes on */
	}
	if (r.status == 2) {
		*reason = r.err_len > 0 ? why(a, r.err, r.err_len) :
		    why(a, r.out, r.out_len);
		return HOOK_DENY;
	}
	if (r.status == 0)
		return HOOK_ALLOW;
	*reason = r.timed_out ? "timed out" : r.signal ? arena_printf(a,
	    "killed by signal %d", r.signal) : arena_printf(a, "exit %d%s%s",
	    r.status, r.err_len > 0 ? ": " : "", why(a, r.err, r.err_len));
	return HOOK_ASK;
}

struct hio {
	struct net_conn	 nc;
	struct tls_conn	*tls;
};

static long
hio_read(void *ctx, void *buf, size_t n)
{
	struct hio *h = ctx;

	return h->tls != NULL ? tls_read(h->tls, buf, n) :
	    net_read(&h->nc, buf, n);
}

static int
hio_write(void *ctx, const void *buf, size_t n)
{
	struct hio *h = ctx;

	return h->tls != NULL ? tls_write(h->tls, buf, n) :
	    net_write(&h->nc, buf, n);
}

/* An http hook's 2xx body: {"decision": "allow"} (or none) allows,
 * "deny" denies with its "reason", in any case; any other decision denies;
 * a body that is not a JSON object is an error (HOOK_ASK). */
static enum hook_verdict
decision(struct arena *a, const char *body, size_t n, const char **reason)
{
	struct json_doc d;
	char *s = NULL;
	int t;

	if (json_parse(a, body, n, 64, &d) != 0 || d.t[0].type != JSON_OBJ) {
		*reason = "the reply is not a JSON object";
		return HOOK_ASK;
	}
	if ((t = json_get(&d, 0, "decision")) < 0 || (json_str(&d, a, t, &s,
	    NULL) == 0 && strcasecmp(s, "allow") == 0))
		return HOOK_ALLOW;
	if (s != NULL && strcasecmp(s, "deny") == 0) {
		*reason = json_str(&d, a, json_get(&d, 0, "reason"), &s,
		    NULL) == 0 ? why(a, s, strlen(s)) : NULL;
		return HOOK_DENY;
	}
	*reason = "its decision was not understood (allow or deny)";
	return HOOK_DENY;
}

/* POST the context; a reply that cannot be had, or a non-2xx status, is
 * an error; a 2xx body as decision() reads it. */
static enum hook_verdict
run_http(const struct hook_env *env, struct arena *a, const struct hook *h,
    struct str in, const char **reason)
{
	static const struct http_header hd[] = {
		{ "Content-Type", "application/json" },
	};
	struct http_io io = { hio_read, hio_write, NULL };
	struct tls_anchors *ta;
	struct http_conn hc;
	struct http_head r;
	struct http_url u;
	struct sbuf sb;
	struct hio hx;
	const char *ca;
	char *buf;
	long k;
	size_t got = 0;
	int ms = h->timeout_s * 1000, e;
	enum hook_verdict v = HOOK_ASK;

	memset(&hx, 0, sizeof(hx));
	hx.nc.fd = -1;
	hx.nc.first_ms = hx.nc.idle_ms = ms;
	hx.nc.deadline = net_now_ms() + ms;
	io.ctx = &hx;
	if ((buf = arena_alloc(a, 8192)) == NULL ||
	    http_url_parse(a, h->target, &u) != 0)
		return HOOK_ASK;
	if ((e = net_connect(&hx.nc, u.host, u.port, ms)) != 0) {
		*reason = hx.nc.why;
		return HOOK_ASK;
	}
	if (u.https) {
		ca = env->ca_file != NULL ? env->ca_file : tls_default_ca();
		if (ca == NULL || tls_anchors_shared(env->perm, ca, &ta) != 0 ||
		    (hx.tls = tls_new(a)) == NULL ||
		    tls_connect(hx.tls, ta, &hx.nc, u.host) != 0) {
			*reason = hx.tls != NULL ? tls_why(hx.tls) :
			    "no CA bundle";
			goto out;
		}
	}
	http_conn_init(&hc, &io, buf, 4096);
	sbuf_init(&sb, a, 0);
	if ((e = http_write_request(&sb, "POST", &u, 0, hd, 1, in.n)) != 0 ||
	    (e = http_send(&hc, &sb, in.p, in.n)) != 0 ||
	    (e = http_read_head(&hc, a, &r)) != 0) {
		*reason = hx.nc.why != NULL ? hx.nc.why : err_str(e);
		goto out;
	}
	while (got < 4095 && (k = http_read_body(&hc, buf + 4096 + got,
	    4095 - got)) > 0)
		got += (size_t)k;
	if (r.status < 200 || r.status > 299) {
		*reason = arena_printf(a, "HTTP %d from %s", r.status, u.host);
		goto out;
	}
	v = got == 0 ? HOOK_ALLOW : decision(a, buf + 4096, got, reason);
out:
	if (hx.tls != NULL && v != HOOK_ASK)
		tls_close(hx.tls);
	net_close(&hx.nc);
	return v;
}

/* Run one hook and log it. HOOK_ASK from a runner means it failed: then
 * the hook's on_error decides. */
static enum hook_verdict
run_one(const struct hook_env *env, struct arena *a, const struct hook_step *st,
    const struct hook *h, struct str *ctx, const char **reason)
{
	long long t0 = net_now_ms();
	enum hook_verdict v = HOOK_ASK;

	*reason = NULL;
	if (ctx->p == NULL && (*ctx = context(a, st)).p == NULL)
		*reason = "its context cannot be written";
	else
		v = h->kind == HOOK_COMMAND ? run_command(env, a, h, *ctx,
		    reason) : run_http(env, a, h, *ctx, reason);
	if (v == HOOK_DENY && *reason == NULL)
		*reason = "denied by a hook";
	if (v == HOOK_ASK && h->deny_on_error && (*reason = arena_printf(a,
	    "%s; on_error: deny", *reason != NULL ? *reason : "it failed")) ==
	    NULL)
		*reason = "on_error: deny";
	if (env->log != NULL)
		env->log(env->ctx, st, h, v == HOOK_ALLOW ? "allow" :
		    v == HOOK_DENY ? "deny" : "error", *reason,
		    net_now_ms() - t0);
	if (v == HOOK_ASK)
		return h->deny_on_error ? HOOK_DENY : HOOK_ALLOW;
	return v;
}

/* see hook.h */
enum hook_verdict
hook_check(const struct hook_env *env, struct arena *a,
    const struct hook_step *st, int approved, const char **reason)
{
	struct hook_rules sr;
	const struct hook_rules *src[2] = { &env->cfg, NULL };
	const char *ask = NULL;
	int pre = !(st->ev & 1);
	unsigned i, k;
	struct str ctx = { NULL, 0 };
	const struct hook *h;
	int sub;

	*reason = NULL;
	if (st->sk != NULL && (st->sk->flags & SKILL_GATED)) {
		if (skill_rules(st->sk, a, &sr) != 0) {
			/* Its rules guard it: unreadable, nothing runs. */
			*reason = "the skill's approve: and hooks: cannot be "
			    "read";
			return pre ? HOOK_DENY : HOOK_ALLOW;
		}
		src[1] = &sr;
	}
	/* A handoff starts a child agent: its pre/post_skill step is its
	 * pre/post_subagent one too. */
	sub = st->child ? (int)st->ev + HOOK_PRE_SUBAGENT - HOOK_PRE_SKILL :
	    -1;
	for (i = 0; i < 2 && src[i] != NULL; i++) {
		for (k = 0; HAVE_HOOKS && k < src[i]->nhooks; k++) {
			h = &src[i]->hooks[k];
			if ((h->event != st->ev && h->event != sub) ||
			    !matches(h->match, st))
				continue;
			if (h->kind == HOOK_PENDING)
				ask = "a pending hook";
			else if (run_one(env, a, st, h, &ctx, reason) ==
			    HOOK_DENY && pre)
				return HOOK_DENY;
		}
		for (k = 0; pre && st->tool != NULL && k < src[i]->napprove;
		    k++)
			if (matches(src[i]->approve[k], st))
				ask = arena_printf(a, "approve: %s",
				    src[i]->approve[k]);
	}
	*reason = NULL;
	if (!pre || approved || ask == NULL)
		return HOOK_ALLOW;
	*reason = ask;
	return HOOK_ASK;
}
