/* jobs.c - the durable job board: a journal of JSON lines (jobs.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent.h"
#include "base/fsafe.h"
#include "serve/jobs.h"
#include "fmt/json.h"
#include "base/log.h"
#include "session/slog.h"
#include "skill/skill.h"
#include "base/str.h"
#include "tool/tool.h"

#define JOURNAL		"journal"
#define LINE_TOKENS	256
#define JOURNAL_MAX	(16u << 20)

static const char *const status_names[] = { "todo", "ready", "running",
    "blocked", "done", "failed", "archived" };
static const char *const outcome_names[] = { "completed", "blocked",
    "crashed", "timed_out", "gave_up" };

const char *
job_status_name(enum job_status s)
{
	return status_names[s];
}

const char *
job_outcome_name(enum job_outcome o)
{
	return outcome_names[o];
}

/* see jobs.h */
/* see jobs.h */
long long
job_now(void)
{
	const char *s = getenv("SKILLBOX_NOW");

	return s != NULL ? job_num(s) : (long long)time(NULL);
}

long long
job_num(const char *s)
{
	long long v = 0;

	if (s == NULL || *s == '\0')
		return -1;
	for (; *s >= '0' && *s <= '9' && v < (1LL << 50); s++)
		v = v * 10 + (*s - '0');
	return *s == '\0' ? v : -1;
}

/* A control character in s: C0 (newline and tab too), DEL, or C1 as
 * UTF-8 (U+0080-U+009F): what str_ctl_clean neutralises, and more. */
static int
has_ctl(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f || (*p == 0xc2 && p[1] >= 0x80 &&
		    p[1] <= 0x9f))
			return 1;
	return 0;
}

struct find_ctx {
	const char	*name;
	int		 found;
};

static int
find_skill(void *ctx, const struct skill *sk)
{
	struct find_ctx *f = ctx;

	f->found |= strcmp(sk->name, f->name) == 0;
	return 0;
}

/* see jobs.h */
const char *
job_check_new(struct arena *a, const struct cfg *c, const char *title,
    const char *to)
{
	struct skill_reg reg;
	struct find_ctx f = { to, 0 };
	int e;

	if (title == NULL || *title == '\0')
		return "the title is empty";
	if (has_ctl(title))
		return "the title has a control character (a line break, an "
		    "escape, ...): it is shown on one line of a terminal";
	if (to == NULL || *to == '\0')
		return NULL;
	if (skill_name_rule(to, strlen(to)) != NULL)
		return arena_printf(a, "'%.80s' is not a skill's name (the "
		    "agent who does the job)", has_ctl(to) ? "?" : to);
	if ((e = skill_reg_init(&reg, c->skills, c->nskills, NULL,
	    NULL)) == 0)
		e = skill_reg_each(&reg, find_skill, &f);
	skill_reg_free(&reg);
	if (e == 0 && !f.found)
		return arena_printf(a, "no skill named '%s' is installed "
		    "(the agent who does the job)", to);
	return e == -E_NOMEM ? "out of memory looking for the skill" : NULL;
}

/* Test only: SKILLBOX_JOBS_CRASH_AT=N writes half of this process's Nth
 * journal line and dies as if killed (the fault matrix in jobs.test). */
static void
crash_point(int fd, const char *p, size_t n)
{
	static long left = -1;
	const char *s;

	if (left == -1)
		left = (s = getenv("SKILLBOX_JOBS_CRASH_AT")) != NULL ?
		    job_num(s) : 0;
	if (left <= 0 || --left > 0)
		return;
	if (write(fd, p, n / 2) < 0)
		_exit(137);
	_exit(137);
}

struct job *
board_job(const struct board *b, unsigned id)
{
	unsigned i;

	for (i = 0; i < b->njobs; i++)
		if (b->jobs[i]->id == id)
			return b->jobs[i];
	return NULL;
}

struct job_sched *
board_sched(const struct board *b, unsigned id)
{
	unsigned i;

	for (i = 0; i < b->nscheds; i++)
		if (b->scheds[i]->id == id)
			return b->scheds[i];
	return NULL;
}

enum job_status
job_status(const struct board *b, const struct job *j)
{
	const struct job *p;
	unsigned i;

	if (j->st != JOB_TODO)
		return j->st;
	for (i = 0; i < j->nparents; i++)
		if ((p = board_job(b, j->parents[i])) == NULL ||
		    p->st != JOB_DONE)
			return JOB_TODO;
	return JOB_READY;
}

/* Slot for id in a growing array of pointers; NULL on no memory. */
static void **
slot(struct arena *a, void ***v, unsigned *n, unsigned *cap, unsigned id,
    unsigned idoff)
{
	void **nv;
	unsigned i;

	for (i = 0; i < *n; i++)
		if (*(const unsigned *)((const char *)(*v)[i] + idoff) == id)
			return &(*v)[i];
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		if ((nv = arena_alloc(a, *cap * sizeof(*nv))) == NULL)
			return NULL;
		if (*n)
			memcpy(nv, *v, *n * sizeof(*nv));
		*v = nv;
	}
	(*v)[*n] = NULL;
	return &(*v)[(*n)++];
}

static const char *
str_of(const struct json_doc *d, struct arena *a, int obj, const char *key)
{
	char *s;

	if (json_get(d, obj, key) < 0 ||
	    json_str(d, a, json_get(d, obj, key), &s, NULL) != 0)
		return NULL;
	return s;
}

static long long
int_of(const struct json_doc *d, int obj, const char *key)
{
	long long v = 0;

	json_int(d, json_get(d, obj, key), &v);
	return v;
}

/* The job or schedule id at token t: 0 when missing or out of
 * 1..JOB_ID_MAX (a hand-edited 4294967297 must not become job 1). */
static unsigned
id_of(const struct json_doc *d, int t)
{
	long long v = 0;

	json_int(d, t, &v);
	return v > 0 && v <= JOB_ID_MAX ? (unsigned)v : 0;
}

static int
name_index(const char *const *names, unsigned n, const char *s)
{
	unsigned i;

	for (i = 0; s != NULL && i < n; i++)
		if (strcmp(names[i], s) == 0)
			return (int)i;
	return 0;
}

/* The fields of a journal line: a table drives both reading and writing.
 * Kinds: 'S' a string, 'U' unsigned, 'L' long, 'Q' long long. */
struct field {
	const char	*name;
	char		 kind;
	unsigned short	 off;
};

#define JF(k, m, n)	{ n, k, offsetof(struct job, m) }
static const struct field job_fields_t[] = {
	JF('U', id, "id"), JF('S', title, "title"), JF('S', input, "input"),
	JF('S', to, "to"), JF('S', schema, "schema"),
	JF('S', result, "result"), JF('S', why, "why"),
	JF('S', budget, "budget"), JF('U', tries, "tries"),
	JF('U', max_tries, "max_tries"), JF('L', timeout, "timeout"),
	JF('L', backoff, "backoff"), JF('Q', made, "made"),
	JF('Q', next, "next"), JF('Q', pid, "pid"), JF('Q', pstart, "pstart"),
	JF('U', sched, "sched"), JF('Q', due, "due"),
	JF('S', session, "session"), JF('U', wait, "wait"),
	JF('U', ans_kind, "ans_kind"), JF('S', ans, "answer"),
	JF('S', fid, "fid"), JF('S', from, "from"), JF('U', rep, "rep"),
};
#define SF(k, m, n)	{ n, k, offsetof(struct job_sched, m) }
static const struct field sched_fields_t[] = {
	SF('U', id, "id"), SF('U', gone, "gone"), SF('S', spec, "spec"),
	SF('S', tz, "tz"), SF('S', title, "title"), SF('S', input, "input"),
	SF('S', to, "to"), SF('Q', made, "made"), SF('Q', last, "last"),
};

/* Read the fields of table f from object 0 of d into struct p. */
static void
fields_get(const struct field *f, size_t n, const struct json_doc *d,
    struct arena *a, void *p)
{
	char *at, *s;
	long long v;
	size_t i;

	for (i = 0; i < n; i++) {
		int t = json_get(d, 0, f[i].name);

		at = (char *)p + f[i].off;
		if (f[i].kind == 'S') {
			if (t >= 0 && json_str(d, a, t, &s, NULL) == 0)
				*(const char **)(void *)at = s;
			continue;
		}
		v = 0;
		json_int(d, t, &v);
		if (f[i].kind == 'U')
			*(unsigned *)(void *)at = (unsigned)v;
		else if (f[i].kind == 'L')
			*(long *)(void *)at = (long)v;
		else
			*(long long *)(void *)at = v;
	}
}

/* Write the fields of table f of struct p (empty and 0 ones left out). */
static void
fields_put(const struct field *f, size_t n, struct json_writer *w,
    const void *p)
{
	const char *at, *s;
	long long v;
	size_t i;

	for (i = 0; i < n; i++) {
		at = (const char *)p + f[i].off;
		if (f[i].kind == 'S') {
			s = *(const char *const *)(const void *)at;
			if (s != NULL) {
				json_key(w, f[i].name);
				json_put_str(w, s);
			}
			continue;
		}
		v = f[i].kind == 'U' ? *(const unsigned *)(const void *)at :
		    f[i].kind == 'L' ? *(const long *)(const void *)at :
		    *(const long long *)(const void *)at;
		if (v != 0) {
			json_key(w, f[i].name);
			json_put_int(w, v);
		}
	}
}

static int
apply_job(struct board *b, const struct json_doc *d)
{
	struct arena *a = &b->a;
	struct job *j, **sp, *old;
	int arr, k, i;
	unsigned id = id_of(d, json_get(d, 0, "id"));

	if (id == 0 || (j = arena_zalloc(a, sizeof(*j))) == NULL)
		return id == 0 ? -E_PARSE : -E_NOMEM;
	if ((sp = (struct job **)slot(a, (void ***)&b->jobs, &b->njobs,
	    &b->capjobs, id, offsetof(struct job, id))) == NULL)
		return -E_NOMEM;
	old = *sp;
	fields_get(job_fields_t, ARRAY_LEN(job_fields_t), d, a, j);
	j->st = (enum job_status)name_index(status_names, 7,
	    str_of(d, a, 0, "st"));
	arr = json_get(d, 0, "parents");
	for (k = 0; k < JOB_MAX_PARENTS && (i = json_at(d, arr,
	    (unsigned)k)) >= 0; k++) {
		unsigned v = id_of(d, i);

		if (v == 0)
			return -E_PARSE;
		j->parents[j->nparents++] = v;
	}
	if (j->title == NULL || j->input == NULL || j->to == NULL)
		return -E_PARSE;
	j->len = (unsigned)d->len + 1;
	if (old != NULL) {
		j->ev = old->ev, j->ev_last = old->ev_last;
		b->dead += old->len;
	}
	*sp = j;
	return 0;
}

static int
apply_ev(struct board *b, const struct json_doc *d)
{
	struct job *j = board_job(b, id_of(d, json_get(d, 0, "job")));
	struct job_event *e;

	if (j == NULL)
		return -E_PARSE;
	if ((e = arena_zalloc(&b->a, sizeof(*e))) == NULL)
		return -E_NOMEM;
	e->t = int_of(d, 0, "t");
	e->kind = str_of(d, &b->a, 0, "ev");
	e->text = str_of(d, &b->a, 0, "text");
	if (e->kind == NULL)
		return -E_PARSE;
	if (j->ev_last != NULL)
		j->ev_last->next = e;
	else
		j->ev = e;
	j->ev_last = e;
	return 0;
}

static int
apply_sched(struct board *b, const struct json_doc *d)
{
	struct arena *a = &b->a;
	struct job_sched *s, **sp;
	unsigned id = id_of(d, json_get(d, 0, "id"));

	if (id == 0 || (s = arena_zalloc(a, sizeof(*s))) == NULL)
		return id == 0 ? -E_PARSE : -E_NOMEM;
	if ((sp = (struct job_sched **)slot(a, (void ***)&b->scheds,
	    &b->nscheds, &b->capscheds, id, offsetof(struct job_sched, id))) ==
	    NULL)
		return -E_NOMEM;
	fields_get(sched_fields_t, ARRAY_LEN(sched_fields_t), d, a, s);
	if (s->spec == NULL || s->tz == NULL || s->title == NULL ||
	    s->input == NULL || s->to == NULL)
		return -E_PARSE;
	s->len = (unsigned)d->len + 1;
	b->dead += (*sp ? (*sp)->len : 0) + (s->gone ? s->len : 0);
	*sp = s;
	return 0;
}

/* Apply one journal line. A line that does not parse is skipped (and
 * said): the board goes on with the rest. */
static int
apply(struct board *b, const char *line, size_t n)
{
	struct arena tmp;
	struct json_doc d;
	int r;

	arena_init(&tmp, "jobs");
	r = json_parse(&tmp, line, n, LINE_TOKENS, &d);
	if (r == 0 && d.t[0].type == JSON_OBJ) {
		if (json_eq(&d, json_get(&d, 0, "k"), "job"))
			r = apply_job(b, &d);
		else if (json_eq(&d, json_get(&d, 0, "k"), "ev"))
			r = apply_ev(b, &d);
		else if (json_eq(&d, json_get(&d, 0, "k"), "sched"))
			r = apply_sched(b, &d);
		else
			r = -E_PARSE;
	} else if (r == 0)
		r = -E_PARSE;
	arena_reset(&tmp);
	if (r == -E_PARSE)
		log_warn("jobs: skipping a journal line that does not parse");
	return r == -E_PARSE ? 0 : r;
}

/* Re-read the journal; a torn last line is cut off (the lock is held). */
static int
load(struct board *b)
{
	struct sbuf sb;
	char buf[4096];
	size_t i, start;
	ssize_t n;
	int fd, r = 0;

	arena_reset(&b->a);
	b->jobs = NULL, b->njobs = b->capjobs = 0;
	b->scheds = NULL, b->nscheds = b->capscheds = 0;
	b->size = b->dead = 0;
	fd = openat(b->dirfd, JOURNAL, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -E_IO;
	sbuf_init(&sb, NULL, JOURNAL_MAX);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		sbuf_add(&sb, buf, (size_t)n);
	if (n < 0 || sb.err)
		r = n < 0 ? -E_IO : sb.err;
	for (i = start = 0; r == 0 && i < sb.len; i++)
		if (sb.p[i] == '\n') {
			if (i > start)
				r = apply(b, sb.p + start, i - start);
			start = i + 1;
		}
	if (r == 0 && start < sb.len) {
		log_warn("jobs: cutting off a torn journal line");
		if (ftruncate(fd, (off_t)start) != 0 || fsync(fd) != 0)
			r = -E_IO;
	}
	b->size = start;
	sbuf_release(&sb);
	close(fd);
	return r;
}

int
board_lock(struct board *b)
{
	int r;

	while ((r = flock(b->lockfd, LOCK_EX)) != 0 && errno == EINTR)
		;
	if (r != 0)
		return -E_IO;
	if ((r = load(b)) != 0)
		flock(b->lockfd, LOCK_UN);
	return r;
}

void
board_unlock(struct board *b)
{
	flock(b->lockfd, LOCK_UN);
}

int
board_open(struct board *b, const char *dir, size_t compact_at)
{
	char *d;
	int r;

	memset(b, 0, sizeof(*b));
	b->lockfd = b->dirfd = -1;
	arena_init(&b->a, "jobs");
	b->compact_at = compact_at ? compact_at : 64u << 10;
	if ((d = arena_strdup(&b->a, dir)) == NULL)
		return -E_NOMEM;
	if (slog_mkdirs(d) != 0 || (b->dirfd = open(dir, O_RDONLY |
	    O_DIRECTORY | O_CLOEXEC)) < 0 || (b->lockfd = openat(b->dirfd,
	    "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0) {
		board_close(b);
		return -E_IO;
	}
	if ((r = board_lock(b)) != 0) {
		board_close(b);
		return r;
	}
	board_unlock(b);
	return 0;
}

/* see jobs.h */
int
board_open_cfg(struct board *b, const struct cfg *c)
{
	char dir[PATH_MAX];

	if ((size_t)snprintf(dir, sizeof(dir), "%s/jobs", c->state_dir) >=
	    sizeof(dir))
		return -E_LIMIT;
	return board_open(b, dir, c->jobs.compact_at);
}

void
board_close(struct board *b)
{
	if (b->lockfd >= 0)
		close(b->lockfd);
	if (b->dirfd >= 0)
		close(b->dirfd);
	b->lockfd = b->dirfd = -1;
	arena_reset(&b->a);
}

static void
put_s(struct json_writer *w, const char *k, const char *v)
{
	if (v != NULL) {
		json_key(w, k);
		json_put_str(w, v);
	}
}

static void
put_i(struct json_writer *w, const char *k, long long v)
{
	if (v != 0) {
		json_key(w, k);
		json_put_int(w, v);
	}
}

static void
job_fields(struct json_writer *w, const struct job *j)
{
	unsigned i;

	fields_put(job_fields_t, ARRAY_LEN(job_fields_t), w, j);
	put_s(w, "st", status_names[j->st]);
	if (j->nparents) {
		json_key(w, "parents");
		json_begin_arr(w);
		for (i = 0; i < j->nparents; i++)
			json_put_uint(w, j->parents[i]);
		json_end_arr(w);
	}
}

static void
ev_line(struct sbuf *sb, unsigned id, const struct job_event *e)
{
	struct json_writer w;

	json_writer_init(&w, sb);
	json_begin_obj(&w);
	put_s(&w, "k", "ev");
	put_i(&w, "job", id);
	put_i(&w, "t", e->t);
	put_s(&w, "ev", e->kind);
	put_s(&w, "text", e->text);
	json_end_obj(&w);
	sbuf_addc(sb, '\n');
}

static void
job_line(struct sbuf *sb, const struct job *j)
{
	struct json_writer w;

	json_writer_init(&w, sb);
	json_begin_obj(&w);
	put_s(&w, "k", "job");
	job_fields(&w, j);
	json_end_obj(&w);
	sbuf_addc(sb, '\n');
}

static void
sched_line(struct sbuf *sb, const struct job_sched *s)
{
	struct json_writer w;

	json_writer_init(&w, sb);
	json_begin_obj(&w);
	put_s(&w, "k", "sched");
	fields_put(sched_fields_t, ARRAY_LEN(sched_fields_t), &w, s);
	json_end_obj(&w);
	sbuf_addc(sb, '\n');
}

/* see jobs.h */
void
job_json(struct sbuf *sb, const struct job *j, const struct board *b)
{
	struct json_writer w;
	const struct job_event *e;

	json_writer_init(&w, sb);
	json_begin_obj(&w);
	job_fields(&w, j);
	put_s(&w, "status", status_names[job_status(b, j)]);
	json_key(&w, "events");
	json_begin_arr(&w);
	for (e = j->ev; e != NULL; e = e->next) {
		json_begin_obj(&w);
		json_key(&w, "t");
		json_put_int(&w, e->t);
		put_s(&w, "ev", e->kind);
		put_s(&w, "text", e->text);
		json_end_obj(&w);
	}
	json_end_arr(&w);
	json_end_obj(&w);
}

/* Rewrite the journal with one line per thing (the lock is held). */
static int
compact(struct board *b)
{
	const struct job_event *e;
	struct sbuf sb;
	unsigned i;
	int r;

	sbuf_init(&sb, NULL, JOURNAL_MAX);
	for (i = 0; i < b->njobs; i++) {
		job_line(&sb, b->jobs[i]);
		for (e = b->jobs[i]->ev; e != NULL; e = e->next)
			ev_line(&sb, b->jobs[i]->id, e);
	}
	for (i = 0; i < b->nscheds; i++)
		if (!b->scheds[i]->gone)
			sched_line(&sb, b->scheds[i]);
	if ((r = sb.err) == 0 && (r = fsafe_write(b->dirfd, JOURNAL, sb.p,
	    sb.len, 0600, FSAFE_NO_SYMLINKS)) == 0 && fsync(b->dirfd) != 0)
		r = -E_IO;
	if (r == 0)
		b->size = sb.len, b->dead = 0;
	sbuf_release(&sb);
	return r;
}

/* Append one line (with its newline), synced; then apply it. */
static int
append(struct board *b, struct sbuf *sb)
{
	size_t off = 0;
	ssize_t w;
	int fd, r = 0, created;

	if (sb->err)
		return sb->err;
	created = b->size == 0;
	fd = openat(b->dirfd, JOURNAL, O_WRONLY | O_APPEND | O_CREAT |
	    O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -E_IO;
	crash_point(fd, sb->p, sb->len);
	while (off < sb->len) {
		if ((w = write(fd, sb->p + off, sb->len - off)) < 0 &&
		    errno == EINTR)
			continue;
		if (w <= 0) {
			r = -E_IO;
			break;
		}
		off += (size_t)w;
	}
	if (r == 0 && (fsync(fd) != 0 || (created && fsync(b->dirfd) != 0)))
		r = -E_IO;
	if (close(fd) != 0 && r == 0)
		r = -E_IO;
	if (r != 0) {
		/* Whatever part was written is cut off by the next load. */
		return r;
	}
	b->size += sb->len;
	if ((r = apply(b, sb->p, sb->len - 1)) != 0)
		return r;
	/* Only when it pays: a board of live lines is not rewritten on
	 * every change. */
	if (b->size > b->compact_at && b->dead > b->size / 2)
		return compact(b);
	return 0;
}

/* see jobs.h */
int
board_put(struct board *b, struct job *j)
{
	struct sbuf sb;
	unsigned i, k, id = 0;

	if (j->id == 0) {
		for (i = 0; i < b->njobs; i++)
			id = MAX(id, b->jobs[i]->id);
		/* Parents exist already, so no cycle can close through the
		 * new job; a parent named twice, or itself, is refused. */
		for (i = 0; i < j->nparents; i++) {
			if (board_job(b, j->parents[i]) == NULL)
				return -E_INVAL;
			for (k = 0; k < i; k++)
				if (j->parents[k] == j->parents[i])
					return -E_INVAL;
		}
		/* Ids are never used twice (sessions are named after them):
		 * at the top of the range the board takes no new job. */
		if (id >= JOB_ID_MAX)
			return -E_LIMIT;
		j->id = id + 1;
	}
	sbuf_init(&sb, &b->a, 0);
	job_line(&sb, j);
	return append(b, &sb);
}

int
board_put_sched(struct board *b, struct job_sched *s)
{
	struct sbuf sb;
	unsigned i, id = 0;

	if (s->id == 0) {
		for (i = 0; i < b->nscheds; i++)
			id = MAX(id, b->scheds[i]->id);
		if (id >= JOB_ID_MAX)
			return -E_LIMIT;
		s->id = id + 1;
	}
	sbuf_init(&sb, &b->a, 0);
	sched_line(&sb, s);
	return append(b, &sb);
}

int
board_event(struct board *b, unsigned id, const char *kind,
    const char *text, long long now)
{
	struct job_event e = { NULL, now, kind, text };
	struct sbuf sb;

	if (board_job(b, id) == NULL)
		return -E_NOENT;
	sbuf_init(&sb, &b->a, 0);
	ev_line(&sb, id, &e);
	return append(b, &sb);
}

/* board_finish, and wait for board_pause. */
static int
finish(struct board *b, unsigned id, enum job_outcome o,
    const char *text, long long now, unsigned wait)
{
	struct job *j = board_job(b, id), n;
	char why[200], *msg;
	int r;

	if (j == NULL)
		return -E_NOENT;
	n = *j;
	if (o == RUN_COMPLETED && j->schema != NULL && job_schema_check(&b->a,
	    j->schema, text ? text : "", why, sizeof(why)) != 0) {
		o = RUN_GAVE_UP;
		text = arena_printf(&b->a, "the result does not match the "
		    "schema: %s", why);
	}
	msg = arena_printf(&b->a, "%s%s%s", outcome_names[o], text ? ": " :
	    "", text ? text : "");
	if (msg == NULL)
		return -E_NOMEM;
	if ((r = board_event(b, id, "run", msg, now)) != 0)
		return r;
	if ((j = board_job(b, id)) == NULL)
		return -E_NOENT;
	n = *j;
	n.pid = n.pstart = 0;
	/* An answer is used once; a worker that died may not have used it. */
	n.wait = 0;
	if (o == RUN_CRASHED && n.ans_kind)
		n.ans_kind |= JOB_ANS_TRIED;
	else
		n.ans_kind = 0, n.ans = NULL;
	if (n.st != JOB_RUNNING)	/* cancelled meanwhile */
		return board_put(b, &n);
	if (o == RUN_COMPLETED) {
		n.st = JOB_DONE, n.result = text ? text : "", n.why = NULL;
	} else if (o == RUN_BLOCKED) {
		n.st = JOB_BLOCKED, n.why = text, n.wait = wait;
	} else if (o != RUN_TIMED_OUT && n.tries < n.max_tries) {
		n.st = JOB_TODO, n.why = text;
		n.next = now + (n.backoff << MIN(n.tries ? n.tries - 1 : 0,
		    20));
	} else {
		n.st = JOB_FAILED, n.why = text;
	}
	return board_put(b, &n);
}

/* see jobs.h */
int
board_finish(struct board *b, unsigned id, enum job_outcome o,
    const char *text, long long now)
{
	return finish(b, id, o, text, now, 0);
}

/* see jobs.h */
int
board_pause(struct board *b, unsigned id, unsigned wait, const char *why,
    long long now)
{
	return finish(b, id, RUN_BLOCKED, why, now, wait);
}

/* see jobs.h */
struct job *
board_find_fid(const struct board *b, const char *fid)
{
	unsigned i;

	for (i = 0; i < b->njobs; i++)
		if (b->jobs[i]->fid != NULL && strcmp(b->jobs[i]->fid, fid) == 0)
			return b->jobs[i];
	return NULL;
}

/* see jobs.h */
int
job_unreported(const struct job *j)
{
	return j->fid != NULL && !j->rep && (j->st == JOB_DONE ||
	    j->st == JOB_FAILED || j->st == JOB_ARCHIVED);
}

/* 1 when job j may be pruned (see board_prune). */
static int
prunable(const struct board *b, const struct job *j, long long before,
    unsigned newest)
{
	long long t = j->ev_last ? j->ev_last->t : j->made;
	unsigned i, k;

	if (j->id == newest || job_unreported(j) || !(j->st == JOB_ARCHIVED ||
	    ((j->st == JOB_DONE || j->st == JOB_FAILED) && t < before)))
		return 0;
	for (i = 0; i < b->njobs; i++) {
		const struct job *c = b->jobs[i];

		if (c->st == JOB_DONE || c->st == JOB_FAILED ||
		    c->st == JOB_ARCHIVED)
			continue;
		for (k = 0; k < c->nparents; k++)
			if (c->parents[k] == j->id)
				return 0;
	}
	return 1;
}

/* see jobs.h */
int
board_prune(struct board *b, long long before, unsigned *gone)
{
	unsigned i, k, newest = 0;
	int r, n = 0;

	for (i = 0; i < b->njobs; i++)
		newest = MAX(newest, b->jobs[i]->id);
	/* Decided on the whole board first: a pruned job's children count
	 * as they were. */
	for (i = 0; i < b->njobs; i++)
		if (prunable(b, b->jobs[i], before, newest)) {
			if (gone != NULL)
				gone[n] = b->jobs[i]->id;
			b->jobs[i]->len = 0, n++;
		}
	if (n == 0)
		return 0;
	for (i = k = 0; i < b->njobs; i++)
		if (b->jobs[i]->len != 0)
			b->jobs[k++] = b->jobs[i];
	b->njobs = k;
	return (r = compact(b)) != 0 ? r : n;
}

/* see jobs.h */
long long
job_pid_start(long long pid)
{
	char path[48], buf[512], *p;
	ssize_t n;
	long long v = 0;
	int fd, f;

	snprintf(path, sizeof(path), "/proc/%lld/stat", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ')
		return -1;
	p += 2;
	if (*p == 'Z' || *p == 'X')	/* a zombie has ended */
		return -2;
	for (f = 3; f < 22 && *p != '\0'; p++)	/* starttime is field 22 */
		f += *p == ' ';
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (*p++ - '0');
	return v;
}

int
job_pid_alive(long long pid, long long start)
{
	long long s;

	if (pid <= 0 || (kill((pid_t)pid, 0) != 0 && errno != EPERM))
		return 0;
	/* Without /proc the pid alone has to do. */
	s = job_pid_start(pid);
	return s != -2 && (start <= 0 || s < 0 || s == start);
}

/* see jobs.h */
int
board_reclaim(struct board *b, long long now)
{
	unsigned i, n = 0;
	int r;

	for (i = 0; i < b->njobs; i++) {
		struct job *j = b->jobs[i];

		if (j->st != JOB_RUNNING || job_pid_alive(j->pid, j->pstart))
			continue;
		if ((r = board_finish(b, j->id, RUN_CRASHED,
		    "the worker is gone", now)) != 0)
			return r;
		n++;
	}
	return (int)n;
}

/* Does token i have JSON-Schema type `type`? */
static int
type_ok(const struct json_doc *d, int i, const char *type)
{
	const struct json_tok *t = &d->t[i];
	char c = d->js[t->start];
	int k;

	if (strcmp(type, "object") == 0)
		return t->type == JSON_OBJ;
	if (strcmp(type, "array") == 0)
		return t->type == JSON_ARR;
	if (strcmp(type, "string") == 0)
		return t->type == JSON_STR;
	if (t->type != JSON_PRIM)
		return 0;
	if (strcmp(type, "boolean") == 0)
		return c == 't' || c == 'f';
	if (strcmp(type, "null") == 0)
		return c == 'n';
	if (c != '-' && (c < '0' || c > '9'))
		return 0;
	if (strcmp(type, "number") == 0)
		return 1;
	for (k = t->start; k < t->end; k++)
		if (d->js[k] == '.' || d->js[k] == 'e' || d->js[k] == 'E')
			return 0;
	return strcmp(type, "integer") == 0;
}

/* see jobs.h */
int
job_schema_check(struct arena *a, const char *schema, const char *text,
    char *why, size_t whylen)
{
	struct json_doc s, d;
	struct arena_mark m = arena_mark(a);
	char *type, *key;
	int i, k, v, props, r = -E_INVAL;

	if (json_parse(a, schema, strlen(schema), 4096, &s) != 0 ||
	    s.t[0].type != JSON_OBJ) {
		snprintf(why, whylen, "the schema is not a JSON object");
		goto out;
	}
	if (json_parse(a, text, strlen(text), 1 << 16, &d) != 0) {
		snprintf(why, whylen, "the result is not JSON");
		goto out;
	}
	if (json_str(&s, a, json_get(&s, 0, "type"), &type, NULL) == 0 &&
	    !type_ok(&d, 0, type)) {
		snprintf(why, whylen, "the result is not of type %s", type);
		goto out;
	}
	v = json_get(&s, 0, "required");
	for (k = 0; (i = json_at(&s, v, (unsigned)k)) >= 0; k++)
		if (json_str(&s, a, i, &key, NULL) == 0 &&
		    json_get(&d, 0, key) < 0) {
			snprintf(why, whylen, "\"%s\" is required", key);
			goto out;
		}
	props = json_get(&s, 0, "properties");
	if (props >= 0 && s.t[props].type == JSON_OBJ)
		for (i = props + 1; i < json_skip(&s, props);
		    i = json_skip(&s, i + 1)) {
			if (json_str(&s, a, i, &key, NULL) != 0 ||
			    (v = json_get(&d, 0, key)) < 0 ||
			    json_str(&s, a, json_get(&s, i + 1, "type"), &type,
			    NULL) != 0)
				continue;
			if (!type_ok(&d, v, type)) {
				snprintf(why, whylen, "\"%s\" is not of type "
				    "%s", key, type);
				goto out;
			}
		}
	r = 0;
out:
	arena_reset_to(a, m);
	return r;
}

static const struct {
	const char	*name, *desc, *params;
} wtools[] = {
	{ "job_show", "Show the job you are working on: its input, "
	    "comments, schema and earlier runs.",
	    "{\"type\":\"object\",\"properties\":{}}" },
	{ "job_complete", "Finish the job with its result (text, or JSON "
	    "when the job has a result schema). Then stop.",
	    "{\"type\":\"object\",\"properties\":{\"result\":{\"description\":"
	    "\"the result\"}},\"required\":[\"result\"]}" },
	{ "job_block", "Stop: the job cannot go on without a person (say "
	    "what you need).",
	    "{\"type\":\"object\",\"properties\":{\"reason\":{\"type\":"
	    "\"string\"}},\"required\":[\"reason\"]}" },
	{ "job_comment", "Add a note to the job for people and later runs.",
	    "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":"
	    "\"string\"}},\"required\":[\"text\"]}" },
};

static int
w_tools(void *ctx, struct arena *a, const char *agent, struct llm_tool *t,
    unsigned cap)
{
	struct job_worker *w = ctx;
	unsigned i;

	(void)a;
	if (strcmp(agent, w->agent) != 0)
		return 0;
	for (i = 0; i < ARRAY_LEN(wtools) && i < cap; i++) {
		t[i].name = wtools[i].name;
		t[i].description = wtools[i].desc;
		t[i].params = wtools[i].params;
	}
	return (int)i;
}

/* Argument `key` of a call: a string's text, or any other value as JSON. */
static char *
w_arg(struct arena *a, const char *args, size_t n, const char *key)
{
	struct json_doc d;
	char *s;
	int i;

	if (json_parse(a, args, n, 4096, &d) != 0 ||
	    (i = json_get(&d, 0, key)) < 0)
		return NULL;
	if (d.t[i].type == JSON_STR)
		return json_str(&d, a, i, &s, NULL) == 0 ? s : NULL;
	return arena_strndup(a, args + d.t[i].start,
	    (size_t)(d.t[i].end - d.t[i].start));
}

static int
w_keep(struct job_worker *w, int done, const char *text)
{
	mem_free(w->text);
	if ((w->text = mem_alloc(strlen(text) + 1)) == NULL)
		return -E_NOMEM;
	memcpy(w->text, text, strlen(text) + 1);
	w->done = done;
	return 0;
}

static int
w_call(void *ctx, struct arena *a, const char *agent, const char *name,
    const char *args, size_t n, struct tool_out *out)
{
	struct job_worker *w = ctx;
	struct job *j;
	struct sbuf sb;
	char why[200], *v = NULL;
	int r = 0;

	if (strcmp(agent, w->agent) != 0 || strncmp(name, "job_", 4) != 0)
		return 1;
	if (strcmp(name, "job_show") != 0 && (v = w_arg(a, args, n,
	    strcmp(name, "job_complete") == 0 ? "result" :
	    strcmp(name, "job_block") == 0 ? "reason" : "text")) == NULL) {
		out->text = "missing argument";
		out->is_error = 1;
		return 0;
	}
	if (board_lock(w->b) != 0 || (j = board_job(w->b, w->id)) == NULL) {
		out->text = "the job board cannot be read";
		out->is_error = 1;
		return 0;
	}
	out->text = "ok";
	if (strcmp(name, "job_show") == 0) {
		sbuf_init(&sb, a, 0);
		job_json(&sb, j, w->b);
		out->text = sb.err ? "out of memory" : sb.p;
		r = sb.err;
	} else if (strcmp(name, "job_complete") == 0) {
		if (j->schema != NULL && job_schema_check(a, j->schema, v, why,
		    sizeof(why)) != 0) {
			out->text = arena_printf(a, "not accepted: %s; call "
			    "job_complete again with a result that matches "
			    "the schema %s", why, j->schema);
			out->is_error = 1;
		} else
			r = w_keep(w, 1, v);
	} else if (strcmp(name, "job_block") == 0) {
		r = w_keep(w, 2, v);
	} else if (strcmp(name, "job_comment") == 0) {
		r = board_event(w->b, w->id, "comment", v, w->now());
	} else
		r = 1;
	board_unlock(w->b);
	if (r < 0 && r != -E_NOMEM) {
		out->text = "the job board cannot be written";
		out->is_error = 1;
		r = 0;
	}
	if (out->text == NULL)
		r = -E_NOMEM;
	if (r == 0)
		out->len = strlen(out->text);
	return r;
}

/* see jobs.h */
void
job_worker_ext(struct job_worker *w, struct tool_ext *x)
{
	memset(x, 0, sizeof(*x));
	x->tools = w_tools;
	x->call = w_call;
	x->ctx = w;
}

/* see jobs.h */
int
board_add(struct board *b, struct job *j, unsigned tries, long backoff)
{
	if (j->schema != NULL && job_schema_check(&b->a, "{}", j->schema,
	    NULL, 0) != 0)
		return -E_PARSE;
	if (j->max_tries == 0)
		j->max_tries = tries;
	if (j->backoff < 0)
		j->backoff = backoff;
	return board_put(b, j);
}

/* see jobs.h */
int
board_change(struct board *b, unsigned id, const char *kind,
    const char *text, long long now)
{
	struct job *j = board_job(b, id), n;
	int e, c = kind[1] == 'o';	/* comment */

	if (j == NULL)
		return -E_NOENT;
	if ((kind[0] == 'b' && (j->st == JOB_DONE || j->st == JOB_ARCHIVED)) ||
	    (kind[0] == 'u' && j->st != JOB_BLOCKED && j->st != JOB_FAILED) ||
	    (kind[0] == 'c' && !c && j->st == JOB_ARCHIVED) ||
	    (kind[0] == 'a' && j->st != JOB_DONE && j->st != JOB_FAILED))
		return -E_DENIED;
	/* A paused turn's approval is answered by `skillbox answer`; its
	 * question by that, or by unblock with the text. */
	if (kind[0] == 'u' && j->st == JOB_BLOCKED && j->wait &&
	    (j->wait == JOB_WAIT_APPROVAL || text == NULL))
		return -E_BUSY;
	if ((e = board_event(b, id, kind, text, now)) != 0 || c)
		return e;
	n = *board_job(b, id);
	if (kind[0] == 'b') {
		n.st = JOB_BLOCKED, n.why = text ? text : "blocked by hand";
	} else if (kind[0] == 'u') {
		/* TEXT answers the question its paused turn waits on. */
		if (n.wait == JOB_WAIT_QUESTION)
			n.ans_kind = JOB_ANS_TEXT, n.ans = text;
		n.st = JOB_TODO, n.why = NULL, n.next = 0, n.wait = 0;
		if (n.tries >= n.max_tries)
			n.max_tries = n.tries + 1;
	} else
		n.st = JOB_ARCHIVED;
	return board_put(b, &n);
}

/* Store the answer on job j (the lock is held): an event, then the job,
 * todo again. */
static int
answer_put(struct board *b, struct job *j, unsigned kind, const char *text)
{
	struct job n = *j;
	int r;

	if ((r = board_event(b, j->id, kind == JOB_ANS_APPROVE ?
	    "approved" : kind == JOB_ANS_DENY ? "denied" : "answered", text,
	    job_now())) != 0)
		return r;
	n.st = JOB_TODO, n.why = NULL, n.next = 0, n.wait = 0;
	n.ans_kind = kind, n.ans = text;
	return board_put(b, &n);
}

/* see jobs.h */
int
job_answer(struct arena *a, const struct cfg *c, const char *session,
    int approve, const char *text, size_t n, const char **msg)
{
	unsigned kind = approve < 0 ? JOB_ANS_TEXT : approve ?
	    JOB_ANS_APPROVE : JOB_ANS_DENY;
	struct board b;
	struct job *j;
	long long id;
	char *t = NULL;
	int r;

	if (strncmp(session, "job-", 4) != 0 ||
	    (id = job_num(session + 4)) <= 0 || id > 1L << 30)
		return 0;
	*msg = "the job board: an I/O error or no memory";
	if ((text != NULL && (t = arena_strndup(a, text, n)) == NULL) ||
	    board_open_cfg(&b, c) != 0)
		return -1;
	if (board_lock(&b) != 0) {
		board_close(&b);
		return -1;
	}
	j = board_job(&b, (unsigned)id);
	if (j == NULL || j->session == NULL || strcmp(j->session, session))
		r = 0;
	else if (!(j->st == JOB_BLOCKED && j->wait) &&
	    !(j->st == JOB_TODO && (j->ans_kind & 3))) {
		*msg = "this job waits on no answer";
		r = -1;
	} else if (answer_put(&b, j, kind, t) != 0)
		r = -1;
	else {
		*msg = arena_printf(a, "job %lld: the answer is stored; the "
		    "next run-due goes on with it", id);
		r = 1;
	}
	board_unlock(&b);
	board_close(&b);
	if (*msg == NULL)
		*msg = "no memory";
	return r;
}

/* A field of the body that is a string when there; 0, or -1 when it is
 * something else. */
static int
str_field(struct arena *a, const struct json_doc *d, const char *key,
    const char **out)
{
	int t = json_get(d, 0, key);
	char *v;

	if (t < 0 || json_is_null(d, t))
		return 0;
	if (json_str(d, a, t, &v, NULL) != 0)
		return -1;
	*out = v;
	return 0;
}

/* A whole number field up to max when there; 0, or -1. */
static int
num_field(const struct json_doc *d, const char *key, long long max, long *out)
{
	int t = json_get(d, 0, key);
	long long v;

	if (t < 0 || json_is_null(d, t))
		return 0;
	if (json_int(d, t, &v) != 0 || v < 0 || v > max)
		return -1;
	*out = (long)v;
	return 0;
}

/* see jobs.h: the fields and checks of `skillbox jobs add` */
const char *
job_parse_json(struct arena *a, const struct json_doc *d, struct job *j)
{
	const char *raw;
	long tries = 0;
	long long v;
	double m;
	size_t n;
	int t, p, i;

	if (str_field(a, d, "title", &j->title) != 0 || j->title == NULL ||
	    *j->title == '\0')
		return "'title' must be a non-empty string";
	j->input = j->title;
	if (str_field(a, d, "input", &j->input) != 0)
		return "'input' must be a string";
	if (str_field(a, d, "to", &j->to) != 0)
		return "'to' must be a string (an agent's name)";
	/* schema: JSON, or a string of JSON as --schema takes it */
	t = json_get(d, 0, "schema");
	if (t >= 0 && !json_is_null(d, t) && str_field(a, d, "schema",
	    &j->schema) != 0) {
		raw = json_raw(d, t, &n);
		if (d->t[t].type != JSON_OBJ || (j->schema = arena_strndup(a,
		    raw, n)) == NULL)
			return "'schema' must be a JSON-Schema object";
	}
	t = json_get(d, 0, "budget");
	if (t >= 0 && !json_is_null(d, t) && str_field(a, d, "budget",
	    &j->budget) != 0 && d->t[t].type == JSON_PRIM) {
		raw = json_raw(d, t, &n);
		j->budget = arena_strndup(a, raw, n);
	}
	if (j->budget != NULL && str_decimal(j->budget, &m) != 0)
		return "'budget' must be a decimal (money)";
	if (num_field(d, "tries", 1L << 30, &tries) != 0)
		return "'tries' must be a whole number";
	j->max_tries = (unsigned)tries;
	if (num_field(d, "timeout", 1L << 30, &j->timeout) != 0)
		return "'timeout' must be a whole number of seconds";
	if (num_field(d, "backoff", 1L << 30, &j->backoff) != 0)
		return "'backoff' must be a whole number of seconds";
	p = json_get(d, 0, "parents");
	if (p >= 0 && !json_is_null(d, p) && (d->t[p].type != JSON_ARR ||
	    d->t[p].size > JOB_MAX_PARENTS))
		return "'parents' must be an array of at most 16 job ids";
	for (i = 0; p >= 0 && (t = json_at(d, p, (unsigned)i)) >= 0; i++) {
		if (json_int(d, t, &v) != 0 || v <= 0 || v > JOB_ID_MAX)
			return "'parents' must be an array of job ids";
		j->parents[j->nparents++] = (unsigned)v;
	}
	return NULL;
}
