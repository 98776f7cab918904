/* persist.c - sessions kept on flash: see persist.h.
 *
 * A file is taken as unchanged when its size and mtime (seconds: jffs2
 * keeps no more) are those of the copy on flash, which gets the original's
 * mtime; so an unchanged session costs a stat, no write. No manifest file
 * to wear the flash. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "serve/persist.h"
#include "session/slog.h"
#include "config.h"

/* Test-only ($SKILLBOX_PERSIST_DIE=N, tests/e2e/persist.test): the sync
 * _exit(137)s halfway through the Nth file it writes, as a power cut
 * would stop it. */
static unsigned die_at;

/* The length of NAME in a session's files, NAME.jsonl and
 * NAME.jsonl.ckpt; 0 for anything else (temporary files start with '.'). */
static size_t
ours(const char *n)
{
	size_t l = strlen(n);

	if (n[0] == '.')
		return 0;
	if (l > 11 && strcmp(n + l - 11, ".jsonl.ckpt") == 0)
		return l - 11;
	if (l > 6 && strcmp(n + l - 6, ".jsonl") == 0)
		return l - 6;
	return 0;
}

/* `from` (as *sst says: its size, its times) to dir/name through
 * dir/.name.tmp, fsync'd when `sync`, then renamed over. */
static int
copy(struct arena *a, const char *from, const char *dir, const char *name,
    const struct stat *sst, int sync, struct persist_stats *st)
{
	struct timespec ts[2] = { sst->st_atim, sst->st_mtim };
	long long left = sst->st_size;
	char buf[8192], *to, *tmp;
	int in, out, ok = 1;
	ssize_t n;

	if ((to = arena_printf(a, "%s/%s", dir, name)) == NULL ||
	    (tmp = arena_printf(a, "%s/.%s.tmp", dir, name)) == NULL)
		return -E_NOMEM;
	if ((in = open(from, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return errno == ENOENT ? 0 : -E_IO;	/* removed meanwhile */
	if ((out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) < 0) {
		close(in);
		return -E_IO;
	}
	st->files++;
	/* A log appended to meanwhile: its first st_size bytes now, the
	 * rest (a newer mtime) at the next sync. */
	while (ok && left > 0 && (n = read(in, buf, (size_t)MIN(left,
	    (long long)sizeof(buf)))) > 0) {
		if (st->files == die_at) {
			ok = write(out, buf, (size_t)n / 2) >= 0;
			_exit(137);
		}
		ok = write(out, buf, (size_t)n) == n;
		st->bytes += (size_t)n;
		left -= n;
	}
	ok = ok && left == 0 && futimens(out, ts) == 0;
	if (ok && sync) {
		st->fsyncs++;
		ok = fsync(out) == 0;
	}
	ok = close(out) == 0 && ok;
	close(in);
	if (!ok || rename(tmp, to) != 0) {
		unlink(tmp);
		return -E_IO;
	}
	return 0;
}

static char *
last_path(const struct cfg *c, struct arena *a)
{
	return arena_printf(a, "%s/persist.last", c->state_dir);
}

/* see persist.h */
void
persist_last(const struct cfg *c, struct arena *a, struct persist_stats *st)
{
	char *p = last_path(c, a);
	int fd = p ? open(p, O_RDONLY | O_CLOEXEC) : -1;

	if (fd < 0 || read(fd, st, sizeof(*st)) != sizeof(*st))
		memset(st, 0, sizeof(*st));
	if (fd >= 0)
		close(fd);
}

/* Add this sync to the totals and keep both in <state_dir>/persist.last,
 * the struct as it is (RAM, this binary's own file: no fsync, no flash). */
static void
save(const struct cfg *c, struct arena *a, struct persist_stats *st)
{
	struct persist_stats o;
	char *p, *tmp;
	int fd, ok;

	persist_last(c, a, &o);
	st->syncs = o.syncs + 1;
	st->total_bytes = o.total_bytes + st->bytes;
	st->total_fsyncs = o.total_fsyncs + st->fsyncs;
	if ((p = last_path(c, a)) == NULL ||
	    (tmp = arena_printf(a, "%s.tmp", p)) == NULL ||
	    (fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) < 0)
		return;
	ok = write(fd, st, sizeof(*st)) == sizeof(*st);
	if (close(fd) != 0 || !ok || rename(tmp, p) != 0)
		unlink(tmp);
}

/* The job board's journal, <dir>/jobs/journal, and its lock (flock'd by
 * every change: jobs.h). 0, or -E_NOMEM. */
static int
jobs_paths(const char *dir, struct arena *a, char **d, char **j, char **l)
{
	if ((*d = arena_printf(a, "%s/jobs", dir)) == NULL ||
	    (*j = arena_printf(a, "%s/journal", *d)) == NULL ||
	    (*l = arena_printf(a, "%s/lock", *d)) == NULL)
		return -E_NOMEM;
	return 0;
}

/* The journal to flash when it changed (size or mtime), as a session is
 * (written aside, fsync'd, renamed, the folder fsync'd), under a shared
 * lock of the board so no change is half in the copy. Outside
 * persist.max (prune bounds it); never removed from flash by a sync. */
static int
sync_jobs(const struct cfg *c, struct arena *a, int dry,
    struct persist_stats *st)
{
	char *sd, *sj, *sl, *dd, *dj, *dl;
	struct stat ss, ds;
	int lk, dfd, e;

	if ((e = jobs_paths(c->state_dir, a, &sd, &sj, &sl)) != 0 ||
	    (e = jobs_paths(c->persist.dir, a, &dd, &dj, &dl)) != 0)
		return e;
	if ((lk = open(sl, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return 0;			/* no board */
	flock(lk, LOCK_SH);
	if (stat(sj, &ss) != 0 || !S_ISREG(ss.st_mode) || (stat(dj, &ds) ==
	    0 && ds.st_size == ss.st_size && ds.st_mtime == ss.st_mtime))
		;				/* none, or unchanged */
	else if (dry)
		st->files++, st->bytes += (unsigned long long)ss.st_size;
	else if (slog_mkdirs(dd) != 0 || (dfd = open(dd, O_RDONLY |
	    O_DIRECTORY | O_CLOEXEC)) < 0)
		e = -E_IO;
	else {
		if ((e = copy(a, sj, dd, "journal", &ss, 1, st)) == 0) {
			st->fsyncs++;
			if (fsync(dfd) != 0)
				e = -E_IO;
		}
		close(dfd);
	}
	close(lk);
	return e;
}

/* The journal back from flash when state_dir has none (after a boot),
 * under the board's lock: a board made meanwhile wins. */
static int
restore_jobs(const struct cfg *c, struct arena *a, struct persist_stats *st)
{
	char *sd, *sj, *sl, *dd, *dj, *dl;
	struct stat ss;
	int lk, e;

	if ((e = jobs_paths(c->persist.dir, a, &sd, &sj, &sl)) != 0 ||
	    (e = jobs_paths(c->state_dir, a, &dd, &dj, &dl)) != 0)
		return e;
	if (stat(sj, &ss) != 0 || !S_ISREG(ss.st_mode))
		return 0;
	if (slog_mkdirs(dd) != 0 || (lk = open(dl, O_RDWR | O_CREAT |
	    O_CLOEXEC | O_NOFOLLOW, 0600)) < 0)
		return -E_IO;
	flock(lk, LOCK_EX);
	if (access(dj, F_OK) != 0)
		e = copy(a, sj, dd, "journal", &ss, 0, st);
	close(lk);
	return e;
}

/* see persist.h */
int
persist_sync(const struct cfg *c, struct arena *a, int dry,
    struct persist_stats *st)
{
	const char *d = getenv("SKILLBOX_PERSIST_DIE");
	struct slog_info *v;
	struct dirent *de;
	struct stat ss, ds;
	char *src, *dst, *p, *q, *r;
	unsigned i, k, n;
	long long sz;
	int dfd = -1, e;
	size_t l;
	DIR *dh;

	memset(st, 0, sizeof(*st));
	st->time = time(NULL);
	for (die_at = 0; d != NULL && *d >= '0' && *d <= '9'; d++)
		die_at = die_at * 10 + (unsigned)(*d - '0');
	if ((src = arena_printf(a, "%s/sessions", c->state_dir)) == NULL ||
	    (dst = arena_printf(a, "%s/sessions", c->persist.dir)) == NULL)
		return -E_NOMEM;
	if ((e = slog_list(a, c->state_dir, &v, &n)) != 0)
		return e;
	if (!dry) {
		if (slog_mkdirs(dst) != 0 || (dfd = open(dst, O_RDONLY |
		    O_DIRECTORY | O_CLOEXEC)) < 0)
			return -E_IO;
		/* One sync at a time: serve's, cron's, the init script's. */
		flock(dfd, LOCK_EX);
	}
	/* persist.max: the newest sessions that fit (slog_list's order). */
	for (i = 0; i < n; i++) {
		if ((p = arena_printf(a, "%s/%s.jsonl.ckpt", src, v[i].name)) ==
		    NULL) {
			e = -E_NOMEM;
			break;
		}
		sz = v[i].size + (stat(p, &ss) == 0 ? ss.st_size : 0);
		if (st->kept + (unsigned long long)sz > c->persist.max)
			break;
		st->kept += (unsigned long long)sz;
	}
	st->sessions = i;
	st->skipped = n - i;
	for (i = 0; i < 2 * st->sessions && e == 0; i++) {
		if ((q = arena_printf(a, "%s.jsonl%s", v[i / 2].name, i & 1 ?
		    ".ckpt" : "")) == NULL || (p = arena_printf(a, "%s/%s",
		    src, q)) == NULL || (r = arena_printf(a, "%s/%s", dst,
		    q)) == NULL) {
			e = -E_NOMEM;
			break;
		}
		if (stat(p, &ss) != 0 || !S_ISREG(ss.st_mode))
			continue;
		if (stat(r, &ds) == 0 && ds.st_size == ss.st_size &&
		    ds.st_mtime == ss.st_mtime)
			continue;
		if (dry) {
			st->files++;
			st->bytes += (unsigned long long)ss.st_size;
		} else
			e = copy(a, p, dst, q, &ss, 1, st);
	}
	/* Off flash: what state_dir no longer has, what persist.max leaves
	 * out, and the temporary files of a sync that was cut short. Not
	 * after an error: the sessions to keep may not all be known. */
	if (e == 0 && (dh = opendir(dst)) != NULL) {
		while ((de = readdir(dh)) != NULL) {
			if ((l = ours(de->d_name)) == 0) {
				l = strlen(de->d_name);
				if (!dry && de->d_name[0] == '.' && l > 5 &&
				    strcmp(de->d_name + l - 4, ".tmp") == 0)
					unlinkat(dfd, de->d_name, 0);
				continue;
			}
			for (k = 0; k < st->sessions && (strlen(v[k].name) !=
			    l || memcmp(v[k].name, de->d_name, l) != 0); k++)
				;
			if (k < st->sessions && (p = arena_printf(a, "%s/%s",
			    src, de->d_name)) != NULL && lstat(p, &ss) == 0)
				continue;
			st->deleted++;
			if (!dry && unlinkat(dfd, de->d_name, 0) != 0 && e == 0)
				e = -E_IO;
		}
		closedir(dh);
	}
	if (dfd >= 0) {
		/* The renames and removals, durable at once. */
		if (st->files > 0 || st->deleted > 0) {
			st->fsyncs++;
			if (fsync(dfd) != 0 && e == 0)
				e = -E_IO;
		}
		close(dfd);
		if (!HAVE_JOBS)
			save(c, a, st);
	}
	if (HAVE_JOBS && e == 0)
		e = sync_jobs(c, a, dry, st);
	if (HAVE_JOBS && !dry)
		save(c, a, st);
	return e;
}

/* see persist.h */
int
persist_restore(const struct cfg *c, struct arena *a,
    struct persist_stats *st)
{
	struct slog_info *v;
	struct dirent *de;
	struct stat ss;
	char *src, *dst, *p;
	unsigned n;
	int e;
	DIR *dh;

	memset(st, 0, sizeof(*st));
	st->time = time(NULL);
	if (HAVE_JOBS && (e = restore_jobs(c, a, st)) != 0)
		return e;
	if ((e = slog_list(a, c->state_dir, &v, &n)) != 0)
		return e;
	if (n > 0)	/* 0 when the job board came back */
		return st->files ? 0 : -E_BUSY;
	if ((src = arena_printf(a, "%s/sessions", c->persist.dir)) == NULL ||
	    (dst = arena_printf(a, "%s/sessions", c->state_dir)) == NULL)
		return -E_NOMEM;
	if ((dh = opendir(src)) == NULL)
		return errno == ENOENT ? 0 : -E_IO;
	if (slog_mkdirs(dst) != 0) {
		closedir(dh);
		return -E_IO;
	}
	flock(dirfd(dh), LOCK_SH);	/* not while a sync writes */
	while (e == 0 && (de = readdir(dh)) != NULL) {
		if (ours(de->d_name) == 0)
			continue;
		if ((p = arena_printf(a, "%s/%s", src, de->d_name)) == NULL)
			e = -E_NOMEM;
		else if (stat(p, &ss) == 0 && S_ISREG(ss.st_mode))
			e = copy(a, p, dst, de->d_name, &ss, 0, st);
	}
	closedir(dh);
	return e;
}

/* see persist.h */
void
persist_run(const struct cfg *c, struct arena *a, int what)
{
	struct arena_mark m = arena_mark(a);
	struct persist_stats st;
	int e;

	if (!HAVE_PERSIST || c->persist.dir == NULL)
		return;
	e = what ? persist_sync(c, a, 0, &st) : persist_restore(c, a, &st);
	if (e != 0 && e != -E_BUSY)
		fprintf(stderr, "skillbox: persist %s %s: %s\n", what ? "to" :
		    "from", c->persist.dir, e == -E_IO ? strerror(errno) :
		    err_str(e));
	else if (st.files > 0 || st.deleted > 0)
		fprintf(stderr, "skillbox: persist: %s %u files, %llu bytes, "
		    "%llu fsyncs, %u removed\n", what ? "synced" : "restored",
		    st.files, st.bytes, st.fsyncs, st.deleted);
	arena_reset_to(a, m);
}
