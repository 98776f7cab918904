/* api.c - the native API: the bearer token, /health, the skills, the
 * sessions and their logs, the chat page, and the router. */
#include "serve/serve_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/sha256.h"
#include "config.h"
#include "session/slog.h"
#include "web.h"

/* --- auth */

/* The token index for "Bearer T", compared in constant time against
 * every hash; -1 none matches. */
static int
auth_token(const struct srv *s, const char *hdr)
{
	unsigned char d[32];
	struct sha256 h;
	unsigned i, k, diff;
	int hit = -1;

	if (hdr == NULL || strncasecmp(hdr, "Bearer ", 7) != 0)
		return -1;
	hdr += 7;
	while (*hdr == ' ')
		hdr++;
	sha256_init(&h);
	sha256_feed(&h, hdr, strlen(hdr));
	sha256_final(&h, d);
	for (i = 0; i < s->ntok; i++) {
		for (diff = k = 0; k < 32; k++)
			diff |= d[k] ^ s->hash[i][k];
		if (diff == 0)
			hit = (int)i;
	}
	return hit;
}

/* see serve_int.h */
int
api_token(const struct srv *s, const struct conn *c)
{
	return auth_token(s, http_header(&c->h, "Authorization"));
}

/* see serve_int.h */
const char *
api_stored_name(struct srv *s, struct conn *c, const char *name)
{
	const char *n;

	if (name == NULL)
		return NULL;
	if (c->tok < 0)
		n = name;
	else if ((n = arena_printf(&c->a, "%s.%s", s->tag[c->tok], name)) ==
	    NULL)
		return NULL;
	return slog_name_ok(n) ? n : NULL;
}

/* --- cheap endpoints */

/* see serve_int.h */
int
api_send_json(struct srv *s, struct conn *c, struct sbuf *sb)
{
	sbuf_addc(sb, '\n');
	if (sb->err)
		return httpd_respond_err(s, c, 503, "server_error", "out of memory "
		    "in the server", "Retry-After: " RETRY_AFTER "\r\n");
	return httpd_respond(s, c, 200, "application/json", sb->p, sb->len, NULL);
}

static int
ep_health(struct srv *s, struct conn *c)
{
	char b[160];
	int n;

	n = snprintf(b, sizeof(b), "{\"status\":\"%s\",\"version\":\"%s\","
	    "\"turns\":%u,\"queued\":%u}\n", got_term ? "draining" : "ok",
	    SKILLBOX_VERSION, s->turns, s->queued);
	return httpd_respond(s, c, 200, "application/json", b, (size_t)n, NULL);
}

/* see serve_int.h */
int
api_in_words(const char *list, const char *name)
{
	return list == NULL || str_word_in(list, name);
}

static int
each_skill(void *ctx, const struct skill *sk)
{
	struct skills_ctx *x = ctx;

	if ((sk->flags & SKILL_NO_MODEL) || !api_in_words(x->only, sk->name))
		return 0;
	json_begin_obj(x->w);
	json_kstr(x->w, "name", sk->name);
	json_kstr(x->w, "description", sk->description);
	json_end_obj(x->w);
	return 0;
}

/* see serve_int.h */
int
api_walk_skills(struct srv *s, struct conn *c, struct skills_ctx *x,
    int (*fn)(void *, const struct skill *))
{
	struct skill_reg reg;
	int e;

	x->only = c->tok >= 0 ? s->only[c->tok] : NULL;
	x->created = s->started;
	if ((e = skill_reg_init(&reg, s->cfg->skills, s->cfg->nskills, NULL,
	    NULL)) == 0)
		e = skill_reg_each(&reg, fn, x);
	skill_reg_free(&reg);
	return e;
}

static int
ep_skills(struct srv *s, struct conn *c)
{
	struct skills_ctx x;
	struct json_writer w;
	struct sbuf sb;
	int e;

	memset(&x, 0, sizeof(x));
	sbuf_init(&sb, &c->a, 0);
	json_writer_init(&w, &sb);
	json_begin_obj(&w);
	json_key(&w, "skills");
	json_begin_arr(&w);
	x.w = &w;
	e = api_walk_skills(s, c, &x, each_skill);
	json_end_arr(&w);
	json_end_obj(&w);
	if (e != 0)
		return httpd_respond_err(s, c, 503, "server_error", "cannot list the "
		    "skills", NULL);
	return api_send_json(s, c, &sb);
}

static int
ep_sessions(struct srv *s, struct conn *c)
{
	struct slog_info *v;
	struct json_writer w;
	struct sbuf sb;
	unsigned n, i;
	size_t tl = c->tok >= 0 ? TAG_LEN + 1 : 0;
	int e;

	if ((e = slog_list(&c->a, s->cfg->state_dir, &v, &n)) != 0 &&
	    e != -E_NOENT)
		return httpd_respond_err(s, c, 503, "server_error", "cannot list the "
		    "sessions", NULL);
	if (e != 0)
		n = 0;
	sbuf_init(&sb, &c->a, 0);
	json_writer_init(&w, &sb);
	json_begin_obj(&w);
	json_key(&w, "sessions");
	json_begin_arr(&w);
	for (i = 0; i < n; i++) {
		if (tl > 0 && (strncmp(v[i].name, s->tag[c->tok], TAG_LEN) !=
		    0 || v[i].name[TAG_LEN] != '.'))
			continue;
		json_begin_obj(&w);
		json_kstr(&w, "name", v[i].name + tl);
		json_key(&w, "size");
		json_put_int(&w, v[i].size);
		json_key(&w, "mtime");
		json_put_int(&w, v[i].mtime);
		json_end_obj(&w);
	}
	json_end_arr(&w);
	json_end_obj(&w);
	return api_send_json(s, c, &sb);
}

/* see serve_int.h */
const char *
api_query(struct conn *c, const char *key)
{
	const char *q = strchr(c->h.target, '?'), *p, *e;
	size_t k = strlen(key);

	for (p = q; p != NULL; p = strchr(p + 1, '&')) {
		if (strncmp(p + 1, key, k) == 0 && p[1 + k] == '=') {
			e = strchr(p + 2 + k, '&');
			return arena_strndup(&c->a, p + 2 + k, e ? (size_t)(e -
			    (p + 2 + k)) : strlen(p + 2 + k));
		}
	}
	return NULL;
}

static int
ep_session(struct srv *s, struct conn *c, const char *name)
{
	const char *stored = api_stored_name(s, c, name), *from;
	struct slog lg;
	long long off = 0;
	char prev, *end;
	int e;

	if (stored == NULL)
		return httpd_respond_err(s, c, 404, "not_found", "no such session",
		    NULL);
	if (strcmp(c->h.method, "DELETE") == 0) {
		if ((e = slog_open(&lg, &c->a, s->cfg->state_dir, stored,
		    SLOG_APPEND)) == 0) {
			slog_close(&lg);
			e = slog_remove(&c->a, s->cfg->state_dir, stored);
		}
		if (e == -E_BUSY)
			return httpd_respond_err(s, c, 409, "conflict", "a turn of "
			    "this session is running", NULL);
		if (e != 0)
			return httpd_respond_err(s, c, 404, "not_found", "no such "
			    "session", NULL);
		return httpd_respond(s, c, 204, NULL, "", 0, NULL);
	}
	if ((from = api_query(c, "from")) == NULL)
		from = http_header(&c->h, "Last-Event-ID");
	if (from != NULL) {
		errno = 0;
		off = strtoll(from, &end, 10);
		if (errno != 0 || end == from || *end != '\0' || off < 0)
			return httpd_respond_err(s, c, 400, "invalid_request_error",
			    "'from' must be a log offset", NULL);
	}
	if ((e = slog_open(&lg, &c->a, s->cfg->state_dir, stored,
	    SLOG_READ)) != 0)
		return httpd_respond_err(s, c, 404, "not_found", "no such session",
		    NULL);
	/* An offset must be the start of an event: 0, or after a newline. */
	if (off > 0 && (off > lg.off || pread(lg.fd, &prev, 1, off - 1) != 1 ||
	    prev != '\n')) {
		slog_close(&lg);
		return httpd_respond_err(s, c, 400, "invalid_request_error", "that "
		    "offset is not the start of an event", NULL);
	}
	if (lseek(lg.fd, off, SEEK_SET) < 0 || httpd_head(c, 200,
	    "application/x-ndjson", -1, NULL) != 0) {
		slog_close(&lg);
		return -E_NOMEM;
	}
	c->kind = K_FILE;
	c->headed = 1;
	if (c->head) {		/* the head alone: no chunks, not even the last */
		slog_close(&lg);
		c->st = C_WRITE;
		return 0;
	}
	c->src = lg.fd;		/* the connection closes it */
	c->st = C_RELAY;
	return 0;
}

/* The page is kept gzip-compressed: every browser takes it so, and a
 * client that sends no Accept-Encoding takes any coding (RFC 9110
 * 12.5.3: busybox wget saves it, `| gunzip` reads it). One that lists
 * codings without gzip is told. It may not be framed by another site;
 * its icon is an empty data: URL (no request for /favicon.ico). */
static int
ep_page(struct srv *s, struct conn *c)
{
	static const char no[] = "the page is sent gzip-compressed: ask "
	    "with Accept-Encoding: gzip\n";
	const char *ae = http_header(&c->h, "Accept-Encoding");

	if (ae != NULL && strstr(ae, "gzip") == NULL)
		return httpd_respond(s, c, 406, "text/plain", no, sizeof(no) - 1,
		    NULL);
	return httpd_respond(s, c, 200, "text/html; charset=utf-8",
	    (const char *)web_index_gz, WEB_INDEX_GZ_LEN,
	    "Content-Encoding: gzip\r\nVary: Accept-Encoding\r\n"
	    "Content-Security-Policy: default-src 'self'; img-src data:; "
	    "script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
	    "frame-ancestors 'none'\r\nX-Frame-Options: DENY\r\n");
}

/* see serve_int.h */
int
api_has_session(struct srv *s, struct conn *c, const char *name)
{
	const char *stored = api_stored_name(s, c, name);
	struct slog lg;

	if (stored == NULL || slog_open(&lg, &c->a, s->cfg->state_dir, stored,
	    SLOG_READ) != 0)
		return 0;
	slog_close(&lg);
	return 1;
}

/* POST .../sessions/NAME/answer: the session must be there (another
 * token's is not); a job's paused turn is the job board's to find. */
static int
ep_answer(struct srv *s, struct conn *c, const char *name)
{
	if (!api_has_session(s, c, name) && (!HAVE_JOBS ||
	    strncmp(name, "job-", 4) != 0))
		return httpd_respond_err(s, c, 404, "not_found", "no such session",
		    NULL);
	c->tr.answer = 1;
	if ((c->tr.path_session = arena_strdup(&c->a, name)) == NULL)
		return httpd_respond_err(s, c, 503, "server_error", "out of memory "
		    "in the server", NULL);
	return worker_turn(s, c, API_RUN);
}

/* --- routing */

/* see serve_int.h */
int
api_route(struct srv *s, struct conn *c)
{
	const char *m = c->h.method, *t = c->h.target, *o;
	char path[256];
	size_t n = strcspn(t, "?");
	int get = strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0;
	int post = strcmp(m, "POST") == 0;

	c->head = strcmp(m, "HEAD") == 0;
	if (n >= sizeof(path))
		return httpd_respond_err(s, c, 404, "not_found", "no such path",
		    NULL);
	memcpy(path, t, n);
	path[n] = '\0';
	o = http_header(&c->h, "Origin");
	if (o != NULL && s->cfg->serve.cors_origin != NULL &&
	    strcmp(o, s->cfg->serve.cors_origin) == 0)
		c->origin = s->cfg->serve.cors_origin;
	if (strcmp(m, "OPTIONS") == 0) {
		if (c->origin == NULL)
			return httpd_respond_err(s, c, 403, "forbidden", "no CORS "
			    "for this origin", NULL);
		return httpd_respond(s, c, 204, NULL, "", 0,
		    "Access-Control-Allow-Methods: GET, POST, DELETE\r\n"
		    "Access-Control-Allow-Headers: authorization, "
		    "content-type, last-event-id\r\n"
		    "Access-Control-Max-Age: 600\r\n");
	}
	if (strcmp(path, "/health") == 0 && get)
		return ep_health(s, c);
	if (strcmp(path, "/") == 0 && get)
		return ep_page(s, c);
	c->tok = -1;
	if (s->ntok > 0 && (c->tok = auth_token(s,
	    http_header(&c->h, "Authorization"))) < 0)
		return httpd_respond_err(s, c, 401, "authentication_error", "a "
		    "valid bearer token is needed", "WWW-Authenticate: Bearer "
		    "realm=\"skillbox\"\r\n");
	if (strcmp(path, "/v1/models") == 0 && get)
		return openai_models(s, c);
	if (strcmp(path, "/api/v1/skills") == 0 && get)
		return ep_skills(s, c);
	if (strcmp(path, "/api/v1/sessions") == 0 && get)
		return ep_sessions(s, c);
	if (strncmp(path, "/api/v1/sessions/", 17) == 0 && path[17] != '\0' &&
	    (get || strcmp(m, "DELETE") == 0))
		return ep_session(s, c, path + 17);
	if (strcmp(path, "/api/v1/run") == 0 && post)
		return worker_turn(s, c, API_RUN);
	if (HAVE_JOBS && strncmp(path, "/api/v1/jobs", 12) == 0 &&
	    (path[12] == '\0' || path[12] == '/'))
		return jobs_api_route(s, c, path + 12, get, post);
	if (strncmp(path, "/api/v1/sessions/", 17) == 0 && post &&
	    (n = strlen(path)) > 24 && strcmp(path + n - 7, "/answer") == 0) {
		path[n - 7] = '\0';
		return ep_answer(s, c, path + 17);
	}
	if (strcmp(path, "/v1/chat/completions") == 0 && post)
		return worker_turn(s, c, API_CHAT);
	if (strcmp(path, "/v1/responses") == 0 && post)
		return worker_turn(s, c, API_RESP);
	if (strcmp(path, "/v1/models") == 0 || strcmp(path,
	    "/api/v1/run") == 0 || strcmp(path, "/v1/chat/completions") == 0 ||
	    strcmp(path, "/v1/responses") == 0 ||
	    strcmp(path, "/api/v1/sessions") == 0 || strcmp(path,
	    "/api/v1/skills") == 0)
		return httpd_respond_err(s, c, 405, "invalid_request_error",
		    "method not allowed here", NULL);
	return httpd_respond_err(s, c, 404, "not_found", "no such path", NULL);
}
