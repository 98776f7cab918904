/* fleet.c - the device of a fleet: serve's MQTT client (net/mqtt.h) in
 * its poll loop. With P the prefix and R the root (cfg.h, mqtt:):
 *
 *   in   P/jobs, R/group/G/jobs, $share/Q/R/queue/Q: a job, as JSON like
 *        POST /api/v1/jobs plus "id", the fleet id; it goes on the job
 *        board (the journal line fsynced) before its PUBACK, so a device
 *        that dies after the PUBACK still has it, and one that dies before
 *        gets it again; the same fleet id again is not added twice.
 *        P/answer/ID: a person's answer to a blocked job (job_answer).
 *   out  P/status (retained; the will says offline), P/events (QoS 0: a
 *        fleet job's changes, read from the board), P/result/ID (QoS 1)
 *        from the outbox: jobs that ended and whose result the broker has
 *        not acknowledged (rep 0), sent again after every reconnect.
 *
 * The jobs run through serve's dispatcher (jobs_run_due); a job taken
 * asks it to run at once (srv.jnow). Everything that happens to a fleet
 * job is seen on the board, so runs by workers and by `skillbox jobs`
 * come out the same way. */
#include "serve/serve_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "config.h"
#include "net/mqtt.h"
#include "net/net.h"
#include "serve/jobs.h"

#define FLEET_FLIGHT	32		/* results in flight at once */
#define FLEET_STATUS_MS	60000		/* the status, this often */
#define FLEET_FID_MAX	64

/* A live fleet job and what of it went out already. */
struct track {
	unsigned	 id, nev;
	unsigned char	 st;
};

struct fleet {
	struct mqtt_link l;
	struct srv	*s;
	struct board	 b;
	struct arena	 tmp;		/* one message or pass */
	const char	*id, *root, *prefix;
	const char	*groups[CFG_MAX_LIST], *queues[CFG_MAX_LIST];
	unsigned	 ng, nq;
	struct mqtt_will will;
	char		*gone;		/* the will's message */
	unsigned	 fl_pkt[FLEET_FLIGHT], fl_job[FLEET_FLIGHT], nfl;
	unsigned	 prev[FLEET_FLIGHT], nprev;	/* sent before: dup */
	struct track	*tr;
	unsigned	 ntr, captr;
	unsigned	 running;	/* jobs running, at the last look */
	long long	 jsize;		/* the journal at the last look */
	unsigned long long jino;
	long long	 status_at;
	int		 up, primed, flush, stop;
};

static const char *const feature_names[] = {
	"serve_tls", "orch", "hooks", "mcp", "eval", "persist", "jobs", "crew"
};

/* --- output */

/* What the device did, one line in serve.log as a request is. */
static void ATTR_PRINTF(2, 3)
said(struct fleet *f, const char *fmt, ...)
{
	char line[320];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	httpd_log_line(f->s, line);
}

static long
publish(struct fleet *f, const char *topic, struct sbuf *sb, unsigned qos,
    unsigned retain, unsigned dup)
{
	if (sb->err || !mqtt_link_up(&f->l))
		return sb->err ? sb->err : -E_INVAL;
	return mqtt_publish(&f->l.m, topic, sb->p, sb->len, qos, retain, dup);
}

static const char *
topic(struct fleet *f, const char *what, const char *id)
{
	return arena_printf(&f->tmp, "%s/%s%s%s", f->prefix, what,
	    id ? "/" : "", id ? id : "");
}

static void
put_names(struct json_writer *w, const char *k, const char *const *v,
    unsigned n)
{
	unsigned i;

	json_key(w, k);
	json_begin_arr(w);
	for (i = 0; i < n; i++)
		json_put_str(w, v[i]);
	json_end_arr(w);
}

/* P/status, retained: online with what the device is, or offline. */
static void
status(struct fleet *f, int online)
{
	struct json_writer w;
	struct sbuf sb;
	double load = 0;
	char num[32];
	unsigned i;

	sbuf_init(&sb, &f->tmp, 0);
	json_writer_init(&w, &sb);
	json_begin_obj(&w);
	json_kstr(&w, "state", online ? "online" : "offline");
	json_kstr(&w, "id", f->id);
	if (online) {
		json_kstr(&w, "version", SKILLBOX_VERSION);
		json_key(&w, "features");
		json_begin_arr(&w);
		for (i = 0; i < ARRAY_LEN(feature_names); i++)
			if ((HAVE_SERVE_TLS << 0 | HAVE_ORCH << 1 |
			    HAVE_HOOKS << 2 | HAVE_MCP << 3 | HAVE_EVAL << 4 |
			    HAVE_PERSIST << 5 | HAVE_JOBS << 6 |
			    HAVE_CREW << 7) & (1u << i))
				json_put_str(&w, feature_names[i]);
		json_end_arr(&w);
		put_names(&w, "groups", f->groups, f->ng);
		put_names(&w, "queues", f->queues, f->nq);
		if (getloadavg(&load, 1) != 1)
			load = 0;
		snprintf(num, sizeof(num), "%.2f", load);
		json_key(&w, "load");
		json_put_raw(&w, num, strlen(num));
		json_key(&w, "running");
		json_put_uint(&w, f->running);
		json_key(&w, "t");
		json_put_int(&w, time(NULL));
	}
	json_end_obj(&w);
	(void)publish(f, topic(f, "status", NULL), &sb, 1, 1, 0);
}

/* One change of fleet job j on P/events. */
static void
event(struct fleet *f, const struct job *j, const char *ev, const char *text,
    long long t)
{
	struct json_writer w;
	struct sbuf sb;

	sbuf_init(&sb, &f->tmp, 0);
	json_writer_init(&w, &sb);
	json_begin_obj(&w);
	json_kstr(&w, "id", j->fid);
	json_key(&w, "job");
	json_put_uint(&w, j->id);
	json_kstr(&w, "ev", ev);
	if (text != NULL)
		json_kstr(&w, "text", text);
	if (strcmp(ev, "block") == 0 && j->wait)
		json_kstr(&w, "wait", j->wait == JOB_WAIT_QUESTION ?
		    "question" : "approval");
	json_key(&w, "t");
	json_put_int(&w, t);
	json_end_obj(&w);
	(void)publish(f, topic(f, "events", NULL), &sb, 0, 0, 0);
}

static int
in_list(const unsigned *v, unsigned n, unsigned x)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (v[i] == x)
			return 1;
	return 0;
}

/* The result of job j on P/result/FID, at QoS 1, remembered in flight.
 * Over the broker's packet size it is a failure saying so (never cut).
 * 0, or -E_BUSY: no room now (the next acknowledgement makes some). */
static int
result(struct fleet *f, const struct job *j)
{
	struct json_writer w;
	struct sbuf sb;
	int done = j->st == JOB_DONE || (j->st == JOB_ARCHIVED &&
	    j->result != NULL), big = 0;
	unsigned i;
	long pkt = 0;

	if (f->nfl == FLEET_FLIGHT)
		return -E_BUSY;
	do {
		sbuf_init(&sb, &f->tmp, 0);
		json_writer_init(&w, &sb);
		json_begin_obj(&w);
		json_kstr(&w, "id", j->fid);
		json_kstr(&w, "device", f->id);
		json_key(&w, "job");
		json_put_uint(&w, j->id);
		json_kstr(&w, "status", done && !big ? "done" : "failed");
		if (done && !big)
			json_kstr(&w, "result", j->result ? j->result : "");
		if (big)
			json_kstr(&w, "why", "the result is larger than the "
			    "broker takes");
		else if (!done)
			json_kstr(&w, "why", j->why ? j->why : j->st ==
			    JOB_ARCHIVED ? "cancelled" : "failed");
		json_end_obj(&w);
		pkt = publish(f, topic(f, "result", j->fid), &sb, 1, 0,
		    in_list(f->prev, f->nprev, j->id));
	} while (pkt == -E_LIMIT && !big++);
	if (pkt == -E_BUSY)
		return -E_BUSY;
	if (pkt <= 0) {
		log_warn("fleet: the result of job %s not sent: %s", j->fid,
		    pkt == -E_LIMIT ? "too large" : "no memory");
		return 0;
	}
	for (i = 0; i < f->nprev; i++)	/* its dup is spent */
		if (f->prev[i] == j->id)
			f->prev[i--] = f->prev[--f->nprev];
	f->fl_pkt[f->nfl] = (unsigned)pkt;
	f->fl_job[f->nfl++] = j->id;
	return 0;
}

/* --- what the board says */

static struct track *
track_find(struct fleet *f, unsigned id)
{
	unsigned i;

	for (i = 0; i < f->ntr; i++)
		if (f->tr[i].id == id)
			return &f->tr[i];
	return NULL;
}

static unsigned
nevents(const struct job *j)
{
	const struct job_event *e;
	unsigned n = 0;

	for (e = j->ev; e != NULL; e = e->next)
		n++;
	return n;
}

static int
ended(enum job_status st)
{
	return st == JOB_DONE || st == JOB_FAILED || st == JOB_ARCHIVED;
}

/* Start following job j (from its current state); -E_NOMEM. */
static int
track_add(struct fleet *f, const struct job *j)
{
	struct track *n;

	if (f->ntr == f->captr) {
		n = mem_realloc(f->tr, (f->captr * 2 + 8) * sizeof(*n));
		if (n == NULL)
			return -E_NOMEM;
		f->tr = n;
		f->captr = f->captr * 2 + 8;
	}
	f->tr[f->ntr].id = j->id;
	f->tr[f->ntr].nev = nevents(j);
	f->tr[f->ntr++].st = (unsigned char)j->st;
	return 0;
}

/* What changed on fleet job j since the last look, on P/events: its new
 * journal events, then its new status. 1 when it ended (stop following). */
static int
changes(struct fleet *f, const struct job *j, struct track *t)
{
	const struct job_event *e;
	unsigned k = 0;

	for (e = j->ev; e != NULL; e = e->next)
		if (k++ >= t->nev)
			event(f, j, e->kind, e->text, e->t);
	t->nev = k;
	if (t->st == j->st)
		return 0;
	t->st = (unsigned char)j->st;
	if (j->st == JOB_RUNNING)
		event(f, j, "run", "started", time(NULL));
	else if (j->st == JOB_BLOCKED && j->wait)
		event(f, j, "block", j->why, time(NULL));
	else if (j->st == JOB_DONE)
		event(f, j, "done", j->result, time(NULL));
	else if (j->st == JOB_FAILED || j->st == JOB_ARCHIVED)
		event(f, j, "failed", j->why ? j->why : "cancelled",
		    time(NULL));
	return ended(j->st);
}

/* The journal changed (or a result waits): publish what fleet jobs did,
 * and the outbox. The first look only learns where things stand. */
static void
look(struct fleet *f)
{
	struct stat st;
	struct track *t;
	const struct job *j;
	unsigned i;

	if (fstatat(f->b.dirfd, "journal", &st, 0) != 0)
		st.st_size = 0, st.st_ino = 0;
	if (f->primed && !f->flush && st.st_size == f->jsize &&
	    st.st_ino == f->jino)
		return;
	if (board_lock(&f->b) != 0) {
		log_warn("fleet: cannot read the job board");
		return;
	}
	f->jsize = (long long)st.st_size, f->jino = st.st_ino;
	f->flush = 0;
	f->running = 0;
	for (i = 0; i < f->b.njobs; i++) {
		j = f->b.jobs[i];
		f->running += j->st == JOB_RUNNING;
		if (j->fid == NULL)
			continue;
		if ((t = track_find(f, j->id)) == NULL && !ended(j->st) &&
		    track_add(f, j) != 0)
			log_warn("fleet: out of memory following job %u", j->id);
		if (t != NULL && f->primed && changes(f, j, t))
			*t = f->tr[--f->ntr];
		if (job_unreported(j) && mqtt_link_up(&f->l) &&
		    !in_list(f->fl_job, f->nfl, j->id) && result(f, j) != 0)
			f->flush = 1;	/* room comes with an ack */
	}
	/* Jobs followed that are gone (pruned) are followed no more. */
	for (i = 0; i < f->ntr; i++)
		if (board_job(&f->b, f->tr[i].id) == NULL)
			f->tr[i--] = f->tr[--f->ntr];
	board_unlock(&f->b);
	f->primed = 1;
	arena_reset(&f->tmp);
}

/* The broker has the result in flight as pkt: reported, or refused. */
static void
acked(struct fleet *f, unsigned pkt, unsigned code)
{
	struct job *j, n;
	char why[48];
	unsigned i;

	for (i = 0; i < f->nfl && f->fl_pkt[i] != pkt; i++)
		;
	if (i == f->nfl)
		return;		/* a status */
	f->flush = 1;
	if (board_lock(&f->b) != 0)
		return;		/* sent again after a reconnect */
	if ((j = board_job(&f->b, f->fl_job[i])) != NULL) {
		if (code >= 0x80) {
			log_warn("fleet: the broker refused the result of job "
			    "%s (reason 0x%02x): not sent again", j->fid, code);
			snprintf(why, sizeof(why), "the broker refused its "
			    "result (reason 0x%02x)", code);
			(void)board_event(&f->b, j->id, "comment", why,
			    job_now());
			j = board_job(&f->b, f->fl_job[i]);
		}
		n = *j;
		n.rep = 1;
		if (board_put(&f->b, &n) != 0)
			log_warn("fleet: cannot write the job board");
	}
	board_unlock(&f->b);
	f->fl_pkt[i] = f->fl_pkt[f->nfl - 1];
	f->fl_job[i] = f->fl_job[--f->nfl];
}

/* --- input */

static int
fid_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= FLEET_FID_MAX && strspn(s, "abcdefghijklmnopqrs"
	    "tuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

/* A job that cannot run (why) still goes on the board, failed, so that
 * its result goes out from the outbox and its id is not taken again. */
static int
add_failed(struct fleet *f, struct job *j, const char *why)
{
	struct job n;

	memset(&n, 0, sizeof(n));
	n.title = j->title && *j->title ? j->title : arena_printf(&f->tmp,
	    "fleet job %s", j->fid);
	n.input = j->input ? j->input : "";
	n.to = "";
	n.st = JOB_FAILED;
	n.why = why;
	n.fid = j->fid, n.from = j->from;
	n.made = job_now();
	log_warn("fleet: job %s from %s: %s", j->fid, j->from, why);
	if (n.title == NULL)
		return -E_NOMEM;
	return board_put(&f->b, &n);
}

/* Put job message d (of len bytes) on the board, locked. 0: done with it
 * (added, a known id, or refused), or <0: not safe (no PUBACK). */
static int
take(struct fleet *f, const char *from, const struct json_doc *d, size_t len)
{
	const struct cfg *c = f->s->cfg;
	const struct job *old;
	const char *why = NULL;
	struct job j;
	char *fid = NULL;
	int e, t = json_get(d, 0, "id");

	memset(&j, 0, sizeof(j));
	j.to = "";
	j.backoff = -1;
	if (t >= 0 && (json_str(d, &f->tmp, t, &fid, NULL) != 0 ||
	    !fid_ok(fid))) {
		log_warn("fleet: a job on %s has a bad \"id\" (want "
		    "[A-Za-z0-9_.-], at most 64): dropped", from);
		return 0;
	}
	if (fid != NULL && (old = board_find_fid(&f->b, fid)) != NULL) {
		said(f, "fleet: job %s from %s is job %u already", fid, from,
		    old->id);
		return 0;
	}
	j.fid = fid, j.from = from;
	if (len > c->serve.body_max)
		why = arena_printf(&f->tmp, "the job is %zu bytes, over "
		    "serve.body_max (%zu)", len, c->serve.body_max);
	else if ((why = job_parse_json(&f->tmp, d, &j)) == NULL)
		why = job_check_new(&f->tmp, c, j.title, j.to);
	if (why != NULL && fid == NULL) {
		log_warn("fleet: a job on %s without an id: %s: dropped",
		    from, why);
		return 0;
	}
	if (why != NULL)
		return add_failed(f, &j, why);
	j.made = job_now();
	e = board_add(&f->b, &j, c->jobs.retries + 1, c->jobs.backoff_s);
	if (e == -E_PARSE || e == -E_INVAL)
		return fid == NULL ? 0 : add_failed(f, &j, e == -E_PARSE ?
		    "'schema' is not JSON" : "'parents' names a job that "
		    "does not exist, or one twice");
	if (e == -E_LIMIT) {
		log_err("fleet: job %s: the board has used its last job id",
		    fid ? fid : "without an id");
		return 0;
	}
	if (e == 0 && fid == NULL) {	/* "local-N": not deduplicated */
		j = *board_job(&f->b, j.id);
		j.fid = arena_printf(&f->tmp, "local-%u", j.id);
		e = j.fid == NULL ? -E_NOMEM : board_put(&f->b, &j);
	}
	if (e != 0)
		return e;
	said(f, "fleet: job %s from %s is job %u", j.fid, from, j.id);
	f->s->jnow = 1;
	return 0;
}

/* A job message: onto the board, locked, then told on P/events. */
static int
job_msg(struct fleet *f, const char *from, const char *msg, size_t n)
{
	struct json_doc d;
	const struct job *j;
	unsigned before;
	int e;

	if (json_parse(&f->tmp, msg, n, REQ_TOKENS, &d) != 0 || d.n == 0 ||
	    d.t[0].type != JSON_OBJ) {
		log_warn("fleet: a job on %s is not a JSON object: dropped",
		    from);
		return 0;
	}
	if ((e = board_lock(&f->b)) != 0)
		return e;
	before = f->b.njobs;
	e = take(f, from, &d, n);
	j = f->b.njobs > before ? f->b.jobs[f->b.njobs - 1] : NULL;
	if (e == 0 && j != NULL && j->fid != NULL) {
		event(f, j, "added", j->title, j->made);
		if (ended(j->st))
			event(f, j, "failed", j->why, j->made);
		else if (track_add(f, j) != 0)
			log_warn("fleet: out of memory following job %u", j->id);
		f->flush = 1;
	}
	board_unlock(&f->b);
	if (e != 0)
		log_err("fleet: a job on %s not taken (sent again later): %s",
		    from, e == -E_NOMEM ? "out of memory" : "cannot write the "
		    "job board");
	return e;
}

/* An answer to blocked job fid: plain text, or {"answer": TEXT},
 * {"approve": true}, {"approve": false, "reason": TEXT}. */
static void
answer(struct fleet *f, const char *fid, const char *msg, size_t n)
{
	const struct job *j;
	const char *why = NULL;
	struct json_doc d;
	char *text, *session;
	int approve = -1, r, t;

	if (board_lock(&f->b) != 0)
		return;
	j = board_find_fid(&f->b, fid);
	session = j == NULL ? NULL : j->session ? arena_strdup(&f->tmp,
	    j->session) : arena_printf(&f->tmp, "job-%u", j->id);
	board_unlock(&f->b);
	if (j == NULL || session == NULL) {
		log_warn("fleet: an answer to job %s, which is not here", fid);
		return;
	}
	text = arena_strndup(&f->tmp, msg, n);
	if (n > 0 && msg[0] == '{' && json_parse(&f->tmp, msg, n, 64,
	    &d) == 0 && d.n > 0 && d.t[0].type == JSON_OBJ) {
		text = NULL;
		if ((t = json_get(&d, 0, "approve")) >= 0) {
			if (json_bool(&d, t, &approve) != 0)
				why = "'approve' must be true or false";
			t = json_get(&d, 0, "reason");
		} else
			t = json_get(&d, 0, "answer");
		if (t >= 0 && json_str(&d, &f->tmp, t, &text, NULL) != 0)
			why = "'answer' and 'reason' must be strings";
		if (approve < 0 && text == NULL)
			why = "want {\"answer\": TEXT} or {\"approve\": BOOL}";
	}
	if (why != NULL || (approve < 0 && text == NULL)) {
		log_warn("fleet: an answer to job %s: %s", fid, why ? why :
		    "out of memory");
		return;
	}
	r = job_answer(&f->tmp, f->s->cfg, session, approve, text,
	    text ? strlen(text) : 0, &why);
	if (r == 1) {
		f->s->jnow = 1;
		said(f, "fleet: job %s: %s", fid, why);
	} else
		log_warn("fleet: an answer to job %s: %s", fid, r < 0 ? why :
		    "it does not wait on one");
}

/* Which topic a message came on: 1 a job (from is set), 2 an answer
 * (*fid), 0 none of ours. */
static int
route(struct fleet *f, struct str t, const char **fid)
{
	size_t np = strlen(f->prefix), nr = strlen(f->root), k;
	unsigned i;

	if (t.n > np && memcmp(t.p, f->prefix, np) == 0 && t.p[np] == '/') {
		t.p += np + 1, t.n -= np + 1;
		if (t.n == 4 && memcmp(t.p, "jobs", 4) == 0)
			return 1;
		if (t.n > 7 && memcmp(t.p, "answer/", 7) == 0) {
			*fid = arena_strndup(&f->tmp, t.p + 7, t.n - 7);
			return *fid != NULL && fid_ok(*fid) ? 2 : 0;
		}
		return 0;
	}
	if (t.n <= nr || memcmp(t.p, f->root, nr) != 0 || t.p[nr] != '/')
		return 0;
	t.p += nr + 1, t.n -= nr + 1;
	for (i = 0; i < f->ng; i++) {
		k = strlen(f->groups[i]);
		if (t.n == k + 11 && memcmp(t.p, "group/", 6) == 0 &&
		    memcmp(t.p + 6, f->groups[i], k) == 0 &&
		    memcmp(t.p + 6 + k, "/jobs", 5) == 0)
			return 1;
	}
	for (i = 0; i < f->nq; i++) {
		k = strlen(f->queues[i]);
		if (t.n == k + 6 && memcmp(t.p, "queue/", 6) == 0 &&
		    memcmp(t.p + 6, f->queues[i], k) == 0)
			return 1;
	}
	return 0;
}

static void
message(struct fleet *f, const struct mqtt_pkt *p)
{
	const char *fid = NULL, *from;
	int kind = route(f, p->topic, &fid), e = 0;

	from = arena_strndup(&f->tmp, p->topic.p, p->topic.n);
	if (kind == 1)
		e = from == NULL ? -E_NOMEM : job_msg(f, from, p->payload.p,
		    p->payload.n);
	else if (kind == 2)
		answer(f, fid, p->payload.p, p->payload.n);
	else
		log_warn("fleet: a message on %.*s, not a topic of ours: "
		    "dropped", (int)MIN(p->topic.n, 200), p->topic.p);
	if (e == 0 && p->qos > 0)
		mqtt_ack(&f->l.m, p->id);
	arena_reset(&f->tmp);
}

/* --- the session */

static void
subscribe(struct fleet *f)
{
	const char *v[2 + 2 * CFG_MAX_LIST];
	unsigned n = 0, i;

	v[n++] = topic(f, "jobs", NULL);
	v[n++] = topic(f, "answer", "+");
	for (i = 0; i < f->ng; i++)
		v[n++] = arena_printf(&f->tmp, "%s/group/%s/jobs", f->root,
		    f->groups[i]);
	for (i = 0; i < f->nq && f->l.m.ver == MQTT_V5; i++)
		v[n++] = arena_printf(&f->tmp, "$share/%s/%s/queue/%s",
		    f->queues[i], f->root, f->queues[i]);
	if (f->nq > 0 && f->l.m.ver != MQTT_V5)
		log_warn("fleet: the broker speaks MQTT 3.1.1: no queues (they "
		    "need shared subscriptions)");
	for (i = 0; i < n; i++)
		if (v[i] == NULL)
			return;
	if (mqtt_subscribe(&f->l.m, v, n) < 0)
		log_warn("fleet: cannot subscribe");
}

static void
on_mqtt(void *arg, struct mqtt *m, enum mqtt_ev ev, const struct mqtt_pkt *p)
{
	struct fleet *f = arg;
	unsigned i;

	switch (ev) {
	case MQE_UP:
		said(f, "fleet: connected to %s as %s (MQTT %s%s)",
		    f->l.lo.url, f->id, f->l.m.ver == MQTT_V5 ? "5" : "3.1.1",
		    p != NULL && p->present ? ", session kept" : "");
		f->up = 1;
		break;
	case MQE_MSG:
		message(f, p);
		break;
	case MQE_ACKED:
		acked(f, p->id, p->code);
		break;
	case MQE_SUBACK:
		for (i = 0; i < p->nsub; i++)
			if (p->subcodes[i] >= 0x80)
				log_warn("fleet: the broker refused subscription "
				    "%u of %u (reason 0x%02x)", i + 1, p->nsub,
				    p->subcodes[i]);
		break;
	case MQE_DOWN:
		/* A broker away is said at the 1st, 2nd, 4th, 8th ... try. */
		if (f->stop)
			;
		else if (f->up)
			log_warn("fleet: the session with %s ended: %s",
			    f->l.lo.url, mqtt_why(m));
		else if ((f->l.tries & (f->l.tries + 1)) == 0)
			log_warn("fleet: no session with %s: %s (try %u; "
			    "serve goes on)", f->l.lo.url, mqtt_why(m),
			    f->l.tries + 1);
		/* what was in flight goes again, marked dup */
		memcpy(f->prev, f->fl_job, f->nfl * sizeof(*f->prev));
		f->nprev = f->nfl;
		f->nfl = 0;
		f->up = 0;
		break;
	}
}

/* see serve_int.h */
int
fleet_start(struct srv *s)
{
	const struct cfg_mqtt *m = &s->cfg->mqtt;
	struct mqtt_link_opts lo;
	struct mqtt_opts o;
	struct fleet *f;
	char why[200];
	unsigned i;
	int e;

	if (!HAVE_JOBS) {
		log_err("mqtt: a fleet device takes jobs: built without the "
		    "job board (JOBS=0)");
		return SERVE_FAIL;
	}
	if ((f = arena_zalloc(s->perm, sizeof(*f))) == NULL)
		return s->o->nomem("starting the fleet client");
	f->s = s;
	arena_init(&f->tmp, "fleet");
	if (cfg_mqtt_opts(s->cfg, &o, &lo, why, sizeof(why)) != 0) {
		log_err("%s", why);
		return SERVE_FAIL;
	}
	/* The configuration is reloaded on SIGHUP: the link keeps copies. */
	f->id = o.client_id = arena_strdup(s->perm, o.client_id);
	f->root = arena_strdup(s->perm, m->root);
	f->prefix = arena_strdup(s->perm, m->prefix);
	o.user = o.user ? arena_strdup(s->perm, o.user) : NULL;
	o.pass = o.pass ? arena_strndup(s->perm, o.pass, o.pass_len) : NULL;
	for (i = 0; i < m->ngroups; i++)
		f->groups[f->ng++] = arena_strdup(s->perm, m->groups[i]);
	for (i = 0; i < m->nqueues; i++)
		f->queues[f->nq++] = arena_strdup(s->perm, m->queues[i]);
	f->gone = arena_printf(s->perm, "{\"state\":\"offline\",\"id\":"
	    "\"%s\"}", f->id);
	f->will.topic = arena_printf(s->perm, "%s/status", f->prefix);
	lo.url = arena_strdup(s->perm, lo.url);
	lo.ca = lo.ca ? arena_strdup(s->perm, lo.ca) : NULL;
	lo.cert = lo.cert ? arena_strdup(s->perm, lo.cert) : NULL;
	lo.key = lo.key ? arena_strdup(s->perm, lo.key) : NULL;
	if (f->id == NULL || f->root == NULL || f->prefix == NULL ||
	    f->gone == NULL || f->will.topic == NULL || lo.url == NULL ||
	    (m->username && !o.user) || (o.pass_len && !o.pass) ||
	    (m->ngroups && !f->groups[f->ng - 1]) ||
	    (m->nqueues && !f->queues[f->nq - 1]))
		return s->o->nomem("starting the fleet client");
	f->will.msg = f->gone;
	f->will.n = strlen(f->gone);
	f->will.qos = f->will.retain = 1;
	o.will = &f->will;
	o.max_in = s->cfg->serve.body_max + (64u << 10);
	if ((e = board_open_cfg(&f->b, s->cfg)) != 0) {
		log_err("mqtt: cannot open the job board in %s/jobs",
		    s->cfg->state_dir);
		return SERVE_FAIL;
	}
	if ((e = mqtt_link_init(&f->l, s->perm, &lo, &o, on_mqtt, f, why,
	    sizeof(why))) != 0) {
		board_close(&f->b);
		if (e == -E_NOMEM)
			return s->o->nomem("starting the fleet client");
		log_err("mqtt: %s", why);
		return SERVE_FAIL;
	}
	look(f);
	s->fleet = f;
	said(f, "fleet: device %s, topics under %s/", f->id, f->prefix);
	return 0;
}

/* see serve_int.h */
long
fleet_poll(struct fleet *f, struct pollfd *pfd, long long now)
{
	long w = mqtt_link_poll(&f->l, pfd, now);

	if (f->up && f->status_at > now)
		w = w < 0 ? f->status_at - now : MIN(w, f->status_at - now);
	return w;
}

/* see serve_int.h */
void
fleet_run(struct fleet *f, short revents, long long now)
{
	mqtt_link_run(&f->l, revents, now);
	if (!mqtt_link_up(&f->l))
		return;
	if (f->up == 1) {	/* a new session */
		f->up = 2;
		subscribe(f);
		f->flush = 1;
		f->status_at = 0;
	}
	look(f);
	if (now >= f->status_at) {
		status(f, 1);
		f->status_at = now + FLEET_STATUS_MS;
	}
	arena_reset(&f->tmp);
}

/* see serve_int.h */
void
fleet_detach(struct fleet *f)
{
	if (f->l.fd >= 0)
		close(f->l.fd);
	if (f->l.cred != NULL)
		tls_cred_wipe(f->l.cred);
	close(f->b.lockfd);
	close(f->b.dirfd);
}

/* see serve_int.h */
void
fleet_stop(struct fleet *f)
{
	if (mqtt_link_up(&f->l)) {
		look(f);
		status(f, 0);
	}
	f->stop = 1;
	mqtt_link_close(&f->l, 2000);
	board_close(&f->b);
	mem_free(f->tr);
	arena_reset(&f->tmp);
}
