/* jobs_api.c - /api/v1/jobs: the job board (jobs.h) over HTTP, each
 * request opening and locking the board for itself, and the journal's new
 * lines as Server-Sent Events. */
#include "serve/serve_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "net/net.h"
#include "serve/jobs.h"

/* --- the job board */

#define JOBS_STREAMS	8	/* clients of /api/v1/jobs/events at once */
#define JOBS_BEAT_MS	15000	/* a comment line this often keeps proxies */

/* The board, opened, locked and loaded for this request alone (a
 * SIGHUP's state_dir holds at once, and the board's memory is given back
 * after); NULL when it cannot be (a 503 was made). */
static struct board *
jb_open(struct srv *s, struct conn *c, struct board *b)
{
	if (board_open_cfg(b, s->cfg) == 0) {
		if (board_lock(b) == 0)
			return b;
		board_close(b);
	}
	(void)httpd_respond_err(s, c, 503, "server_error", "cannot open the job "
	    "board", NULL);
	return NULL;
}

static void
jb_close(struct board *b)
{
	board_unlock(b);
	board_close(b);
}

/* Reply with job id as job_json gives it (status st), and close b. */
static int
jb_reply(struct srv *s, struct conn *c, struct board *b, unsigned id, int st)
{
	const struct job *j = board_job(b, id);
	struct sbuf sb;

	sbuf_init(&sb, &c->a, 0);
	if (j != NULL)
		job_json(&sb, j, b);
	sbuf_addc(&sb, '\n');
	jb_close(b);
	if (j == NULL)
		return httpd_respond_err(s, c, 404, "not_found", "no such job", NULL);
	if (sb.err)
		return httpd_respond_err(s, c, 503, "server_error", "out of memory "
		    "in the server", "Retry-After: " RETRY_AFTER "\r\n");
	return httpd_respond(s, c, st, "application/json", sb.p, sb.len, NULL);
}

static int
jb_bad(struct srv *s, struct conn *c, const char *msg)
{
	return httpd_respond_err(s, c, 400, "invalid_request_error", msg, NULL);
}

/* GET /api/v1/jobs[?status=NAME]: archived (cancelled) jobs only when
 * asked for by status. */
static int
jb_list(struct srv *s, struct conn *c)
{
	const char *want = api_query(c, "status"), *name;
	struct board b;
	struct sbuf sb;
	unsigned i, k = 0;

	for (i = JOB_TODO; want != NULL && i <= JOB_ARCHIVED; i++)
		if (strcmp(job_status_name((enum job_status)i), want) == 0)
			break;
	if (i > JOB_ARCHIVED)
		return jb_bad(s, c, "'status' must be todo, ready, running, "
		    "blocked, done, failed or archived");
	if (jb_open(s, c, &b) == NULL)
		return 0;
	sbuf_init(&sb, &c->a, 0);
	sbuf_addc(&sb, '[');
	for (i = 0; i < b.njobs; i++) {
		name = job_status_name(job_status(&b, b.jobs[i]));
		if (want != NULL ? strcmp(name, want) != 0 :
		    b.jobs[i]->st == JOB_ARCHIVED)
			continue;
		if (k++ > 0)
			sbuf_addc(&sb, ',');
		job_json(&sb, b.jobs[i], &b);
	}
	sbuf_addc(&sb, ']');
	jb_close(&b);
	return api_send_json(s, c, &sb);
}

/* A field of the body that is a string when there; 0, or -1 when it is
 * something else. */
static int
jb_str(struct conn *c, const struct json_doc *d, const char *key,
    const char **out)
{
	int t = json_get(d, 0, key);
	char *v;

	if (t < 0 || json_is_null(d, t))
		return 0;
	if (json_str(d, &c->a, t, &v, NULL) != 0)
		return -1;
	*out = v;
	return 0;
}

/* POST /api/v1/jobs */
static int
jb_add(struct srv *s, struct conn *c)
{
	struct json_doc d;
	struct board b;
	struct job j;
	const char *why;
	int e;

	if (json_parse(&c->a, c->body ? c->body : "", c->body_len, REQ_TOKENS,
	    &d) != 0 || d.n == 0 || d.t[0].type != JSON_OBJ)
		return jb_bad(s, c, "the body must be a JSON object");
	memset(&j, 0, sizeof(j));
	j.to = "";
	j.backoff = -1;
	if ((why = job_parse_json(&c->a, &d, &j)) != NULL || (why = job_check_new(&c->a,
	    s->cfg, j.title, j.to)) != NULL)
		return jb_bad(s, c, why);
	j.made = time(NULL);
	if (jb_open(s, c, &b) == NULL)
		return 0;
	if ((e = board_add(&b, &j, s->cfg->jobs.retries + 1,
	    s->cfg->jobs.backoff_s)) != 0) {
		jb_close(&b);
		if (e == -E_LIMIT)
			return httpd_respond_err(s, c, 409, "conflict", "the board "
			    "has used its last job id (ids are never used twice)",
			    NULL);
		if (e == -E_PARSE || e == -E_INVAL)
			return jb_bad(s, c, e == -E_PARSE ? "'schema' is not "
			    "JSON" : "'parents' names a job that does not "
			    "exist, or one twice");
		return httpd_respond_err(s, c, 503, "server_error", "cannot write "
		    "the job board", NULL);
	}
	return jb_reply(s, c, &b, j.id, 201);
}

/* POST /api/v1/jobs/ID/KIND {"text": "..."} (the body optional, but for
 * a comment): as `skillbox jobs KIND ID TEXT`. */
static int
jb_change(struct srv *s, struct conn *c, unsigned id, const char *kind)
{
	struct json_doc d;
	struct board b;
	const char *text = NULL;
	int e;

	if (c->body_len > 0 && (json_parse(&c->a, c->body, c->body_len,
	    REQ_TOKENS, &d) != 0 || d.n == 0 || d.t[0].type != JSON_OBJ ||
	    jb_str(c, &d, "text", &text) != 0))
		return jb_bad(s, c, "the body must be a JSON object with "
		    "'text' a string");
	if (strcmp(kind, "comment") == 0 && (text == NULL || *text == '\0'))
		return jb_bad(s, c, "a comment needs 'text'");
	if (jb_open(s, c, &b) == NULL)
		return 0;
	if ((e = board_change(&b, id, kind, text, time(NULL))) == 0)
		return jb_reply(s, c, &b, id, 200);
	if (e == -E_DENIED)
		text = arena_printf(&c->a, "job %u is %s", id,
		    job_status_name(board_job(&b, id)->st));
	if (e == -E_BUSY)	/* a paused turn's: its answer endpoint */
		text = arena_printf(&c->a, "job %u waits on a person: POST "
		    "/api/v1/sessions/job-%u/answer", id, id);
	jb_close(&b);
	if (e == -E_NOENT)
		return httpd_respond_err(s, c, 404, "not_found", "no such job", NULL);
	if (e == -E_DENIED || e == -E_BUSY)
		return httpd_respond_err(s, c, 409, "conflict", text ? text :
		    "not now", NULL);
	return httpd_respond_err(s, c, 503, "server_error", "cannot write the job "
	    "board", NULL);
}

/* GET /api/v1/jobs/events[?from=OFFSET]: the journal's lines as they
 * come (jb_feed), from the start or OFFSET (Last-Event-ID too). */
static int
jb_events(struct srv *s, struct conn *c)
{
	const char *from = api_query(c, "from");
	long long off = 0;
	unsigned i, n = 0;
	char *end;

	if (from == NULL)
		from = http_header(&c->h, "Last-Event-ID");
	if (from != NULL) {
		errno = 0;
		off = strtoll(from, &end, 10);
		if (errno != 0 || end == from || *end != '\0' || off < 0)
			return jb_bad(s, c, "'from' must be a journal offset");
	}
	for (i = 0; i < s->nc; i++)
		n += s->c[i].st == C_RELAY && s->c[i].kind == K_JOBS;
	if (n >= JOBS_STREAMS)
		return httpd_respond_err(s, c, 503, "server_error", "too many "
		    "streams of the job board", "Retry-After: " RETRY_AFTER
		    "\r\n");
	if (httpd_head(c, 200, "text/event-stream", -1, NULL) != 0)
		return -E_NOMEM;
	c->kind = K_JOBS;
	c->headed = 1;
	c->st = c->head ? C_WRITE : C_RELAY;
	c->joff = off;
	c->jino = 0;
	c->jmore = 1;		/* the first lines at once */
	c->jbeat = net_now_ms();
	return 0;
}

/* The event of the line from c->joff to end (its newline's end): from
 * buf when it holds it (held), else read again in pieces. */
static void
jb_event(struct conn *c, int fd, char *buf, int held, long long end)
{
	long long p;
	ssize_t k;
	char id[40];

	snprintf(id, sizeof(id), "id: %lld\ndata: ", end);
	(void)httpd_chunk(c, id, strlen(id));
	if (held)
		(void)httpd_chunk(c, buf, (size_t)(end - 1 - c->joff));
	for (p = c->joff; !held && p < end - 1; p += k)
		if ((k = pread(fd, buf, (size_t)MIN(end - 1 - p,
		    (long long)RELAY_BUF), p)) <= 0 ||
		    httpd_chunk(c, buf, (size_t)k) != 0)
			break;
	(void)httpd_chunk(c, "\n\n", 2);
	c->joff = end;
}

/* The end of a line longer than buf (its newline's end) whose bytes go
 * on at off; -1 when it is not whole yet. */
static long long
jb_line_end(int fd, char *buf, long long off)
{
	ssize_t k;
	char *nl;

	while ((k = pread(fd, buf, RELAY_BUF, off)) > 0) {
		if ((nl = memchr(buf, '\n', (size_t)k)) != NULL)
			return off + (nl - buf) + 1;
		off += k;
	}
	return -1;
}

/* The journal's new whole lines, each an event, until OUT_HIGH waits to
 * go out (c->jmore: feed again once it went). A journal that is another
 * file (compacted: renamed over) or shorter than the offset, or an
 * offset asked for that is not a line's start: `event: reset`, then on
 * from its start. */
static void
jb_feed(struct srv *s, struct conn *c)
{
	char buf[RELAY_BUF], *nl, prev = '\n';
	struct stat st;
	long long end;
	ssize_t k;
	int fd;

	snprintf(buf, sizeof(buf), "%s/jobs/journal", s->cfg->state_dir);
	memset(&st, 0, sizeof(st));
	if ((fd = open(buf, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) >= 0 &&
	    fstat(fd, &st) != 0)
		st.st_ino = 0;
	if (c->joff > 0 && c->jino == 0 && fd >= 0 && pread(fd, &prev, 1,
	    c->joff - 1) != 1)
		prev = 0;
	if ((c->jino != 0 && st.st_ino != c->jino) || st.st_size < c->joff ||
	    prev != '\n') {
		snprintf(buf, sizeof(buf), "event: reset\nid: 0\ndata: "
		    "{\"size\":%lld}\n\n", (long long)st.st_size);
		(void)httpd_chunk(c, buf, strlen(buf));
		c->joff = 0;
	}
	c->jino = st.st_ino;
	/* What waits goes to the front: a client that never takes all of
	 * it must not grow the buffer. */
	if (c->out_off > 0) {
		memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
		c->out_len -= c->out_off;
		c->out_off = 0;
	}
	while (fd >= 0 && !(c->jmore = c->out_len >= OUT_HIGH)) {
		if ((k = pread(fd, buf, sizeof(buf), c->joff)) <= 0)
			break;
		if ((nl = memchr(buf, '\n', (size_t)k)) != NULL)
			end = c->joff + (nl - buf) + 1;
		else if (k < (ssize_t)sizeof(buf) || (end = jb_line_end(fd, buf,
		    c->joff + k)) < 0)
			break;	/* a line being written */
		jb_event(c, fd, buf, nl != NULL, end);
		c->jbeat = net_now_ms();
	}
	if (fd >= 0)
		close(fd);
}

/* see serve_int.h */
void
jobs_api_streams(struct srv *s)
{
	long long now = net_now_ms();
	int tick = now - s->jlook >= 1000;
	struct conn *c;
	unsigned i;

	if (tick)
		s->jlook = now;
	for (i = 0; i < s->nc; i++) {
		c = &s->c[i];
		if (c->st != C_RELAY || c->kind != K_JOBS)
			continue;
		if (c->gone || got_term) {
			if (c->chunked)
				(void)httpd_out(c, "0\r\n\r\n", 5);
			c->close = 1;
			c->st = C_WRITE;
			continue;
		}
		if (tick || (c->jmore && c->out_len - c->out_off < OUT_HIGH / 2))
			jb_feed(s, c);
		if (now - c->jbeat >= JOBS_BEAT_MS && c->out_len == c->out_off) {
			(void)httpd_chunk(c, ": beat\n\n", 8);
			c->jbeat = now;
		}
	}
}

/* see serve_int.h */
int
jobs_api_route(struct srv *s, struct conn *c, const char *p, int get, int post)
{
	static const char *const kinds[] = { "block", "unblock", "comment",
	    "cancel" };
	struct board b;
	long long id = 0;
	const char *k;
	unsigned i;

	if (c->tok >= 0 && s->only[c->tok] != NULL)
		return httpd_respond_err(s, c, 403, "forbidden", "this token is "
		    "limited to some skills; a job may run any agent", NULL);
	if (*p == '\0')
		return get ? jb_list(s, c) : post ? jb_add(s, c) :
		    httpd_respond_err(s, c, 405, "invalid_request_error", "method "
		    "not allowed here", NULL);
	if (strcmp(p, "/events") == 0 && get)
		return jb_events(s, c);
	for (k = p + 1; *p == '/' && *k >= '0' && *k <= '9' && id <= JOB_ID_MAX;
	    k++)
		id = id * 10 + (*k - '0');
	if (id <= 0 || id > JOB_ID_MAX || (*k != '\0' && *k != '/'))
		return httpd_respond_err(s, c, 404, "not_found", "no such path",
		    NULL);
	if (*k == '\0' && get)
		return jb_open(s, c, &b) == NULL ? 0 : jb_reply(s, c, &b,
		    (unsigned)id, 200);
	for (i = 0; *k == '/' && i < ARRAY_LEN(kinds); i++)
		if (strcmp(k + 1, kinds[i]) == 0)
			return post ? jb_change(s, c, (unsigned)id, kinds[i]) :
			    httpd_respond_err(s, c, 405, "invalid_request_error",
			    "POST it", NULL);
	if (*k == '/')
		return httpd_respond_err(s, c, 404, "not_found", "no such path",
		    NULL);
	return httpd_respond_err(s, c, 405, "invalid_request_error", "method not "
	    "allowed here", NULL);
}
