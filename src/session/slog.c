/* slog.c - session logs (JSONL). */
#include "session/slog.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/str.h"

int
slog_name_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > SLOG_NAME_MAX || s[0] == '.')
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' &&
		    s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		    s[i] == '.' || s[i] == '_' || s[i] == '-'))
			return 0;
	return 1;
}

/* see slog.h */
int
slog_mkdirs(char *p)
{
	char *s;

	for (s = p + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0700) != 0 && errno != EEXIST)
			return -E_IO;
		*s = '/';
	}
	if (mkdir(p, 0700) != 0 && errno != EEXIST)
		return -E_IO;
	return 0;
}

/* see slog.h */
int
slog_open(struct slog *s, struct arena *a, const char *dir, const char *name,
    int mode)
{
	struct stat st;
	char *d;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	if (!slog_name_ok(name))
		return -E_INVAL;
	if ((d = arena_printf(a, "%s/sessions", dir)) == NULL ||
	    (s->path = arena_printf(a, "%s/%s.jsonl", d, name)) == NULL ||
	    (s->name = arena_strdup(a, name)) == NULL)
		return -E_NOMEM;
	if (mode == SLOG_CREATE && slog_mkdirs(d) != 0) {
		s->err_no = errno;
		return -E_IO;
	}
	s->fd = open(s->path, (mode == SLOG_READ ? O_RDONLY : O_RDWR |
	    O_APPEND) | O_CLOEXEC | (mode == SLOG_CREATE ? O_CREAT : 0), 0600);
	if (s->fd < 0) {
		s->err_no = errno;
		return errno == ENOENT ? -E_NOENT : -E_IO;
	}
	if ((mode != SLOG_READ && flock(s->fd, LOCK_EX | LOCK_NB) != 0) ||
	    fstat(s->fd, &st) != 0) {
		s->err_no = errno;
		close(s->fd);
		s->fd = -1;
		return s->err_no == EWOULDBLOCK ? -E_BUSY : -E_IO;
	}
	s->off = st.st_size;
	return 0;
}

/* see slog.h */
int
slog_append(struct slog *s, const char *json, size_t n)
{
	char small[512], *buf = small;
	ssize_t w;
	int e = 0;

	if (s->err || s->fd < 0)
		return s->err ? s->err : -E_IO;
	if (n + 1 > SLOG_LINE_MAX)
		return -E_LIMIT;	/* not sticky: the caller reports it */
	if (n + 1 > sizeof(small) && (buf = mem_alloc(n + 1)) == NULL)
		return -E_NOMEM;	/* not sticky: the next may fit */
	memcpy(buf, json, n);
	buf[n] = '\n';
	do
		w = write(s->fd, buf, n + 1);
	while (w < 0 && errno == EINTR);
	if (w != (ssize_t)(n + 1)) {
		s->err_no = w < 0 ? errno : ENOSPC;
		/* A short write leaves a torn line: end it so the next
		 * replay sees one bad line, not a merged one. */
		if (w > 0)
			(void)!write(s->fd, "\n", 1);
		e = s->err = -E_IO;
	} else
		s->off += w;
	if (buf != small)
		mem_free(buf);
	return e;
}

int
slog_sync(struct slog *s)
{
	if (s->fd < 0)
		return -E_IO;
	if (fsync(s->fd) != 0 && errno != EINVAL) {
		s->err_no = errno;
		return s->err = -E_IO;
	}
	return s->err;
}

void
slog_close(struct slog *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

/* see slog.h */
int
slog_replay(struct slog *s, long long from, struct arena *a, slog_fn fn,
    void *ctx, int *torn, unsigned *bad)
{
	struct sbuf line;
	struct json_doc d;
	char buf[4096];
	unsigned ln = 0;
	ssize_t r, i, start;
	int e = 0;

	*torn = 0;
	*bad = 0;
	if (lseek(s->fd, from, SEEK_SET) < 0)
		return -E_IO;
	sbuf_init(&line, NULL, SLOG_LINE_MAX);
	while (e == 0 && (r = read(s->fd, buf, sizeof(buf))) > 0) {
		for (start = 0, i = 0; i < r && e == 0; i++) {
			if (buf[i] != '\n')
				continue;
			sbuf_add(&line, buf + start, (size_t)(i - start));
			start = i + 1;
			ln++;
			if (line.err) {
				e = line.err;
				break;
			}
			if (line.len > 0) {
				struct arena_mark m = arena_mark(a);

				if (json_parse(a, line.p, line.len, 1u << 20,
				    &d) != 0 || d.t[0].type != JSON_OBJ)
					(*bad)++;
				else
					e = fn(ctx, &d, ln);
				arena_reset_to(a, m);
			}
			sbuf_truncate(&line, 0);
		}
		if (e == 0 && start < r)
			sbuf_add(&line, buf + start, (size_t)(r - start));
	}
	if (e == 0 && line.len > 0)
		*torn = 1;
	sbuf_release(&line);
	return e;
}

static int
cmp_info(const void *x, const void *y)
{
	const struct slog_info *a = x, *b = y;

	if (a->mtime != b->mtime)
		return a->mtime > b->mtime ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* see slog.h */
int
slog_list(struct arena *a, const char *dir, struct slog_info **out,
    unsigned *n)
{
	struct slog_info *v = NULL, *nv;
	struct dirent *de;
	struct stat st;
	unsigned cap = 0;
	char *d, *p;
	size_t len;
	DIR *dh;

	*n = 0;
	*out = NULL;
	if ((d = arena_printf(a, "%s/sessions", dir)) == NULL)
		return -E_NOMEM;
	if ((dh = opendir(d)) == NULL)
		return errno == ENOENT ? 0 : -E_IO;
	while ((de = readdir(dh)) != NULL) {
		len = strlen(de->d_name);
		if (len < 7 || strcmp(de->d_name + len - 6, ".jsonl") != 0)
			continue;
		if ((p = arena_printf(a, "%s/%s", d, de->d_name)) == NULL ||
		    stat(p, &st) != 0)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			if ((nv = arena_alloc(a, cap * sizeof(*nv))) == NULL)
				break;
			if (*n > 0)
				memcpy(nv, v, *n * sizeof(*nv));
			v = nv;
		}
		v[*n].name = arena_strndup(a, de->d_name, len - 6);
		v[*n].size = st.st_size;
		v[*n].mtime = st.st_mtime;
		if (v[*n].name != NULL)
			(*n)++;
	}
	closedir(dh);
	if (*n > 1)
		qsort(v, *n, sizeof(*v), cmp_info);
	*out = v;
	return 0;
}

/* see slog.h */
int
slog_remove(struct arena *a, const char *dir, const char *name)
{
	char *p;

	if (!slog_name_ok(name))
		return -E_INVAL;
	if ((p = arena_printf(a, "%s/sessions/%s.jsonl", dir, name)) == NULL)
		return -E_NOMEM;
	if (unlink(p) != 0)
		return errno == ENOENT ? -E_NOENT : -E_IO;
	if ((p = arena_printf(a, "%s.ckpt", p)) != NULL)
		(void)unlink(p);
	return 0;
}

/* see slog.h */
int
slog_ckpt_write(struct slog *s, struct arena *a, long long off,
    const char *text)
{
	char *p, *tmp, *line;
	int fd, ok;

	if ((p = arena_printf(a, "%s.ckpt", s->path)) == NULL ||
	    (tmp = arena_printf(a, "%s.tmp", p)) == NULL ||
	    (line = arena_printf(a, "%lld %s\n", off, text)) == NULL)
		return -E_IO;
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) < 0)
		return -E_IO;
	ok = write(fd, line, strlen(line)) == (ssize_t)strlen(line) &&
	    fsync(fd) == 0;
	ok = close(fd) == 0 && ok;
	if (!ok || rename(tmp, p) != 0) {
		unlink(tmp);
		return -E_IO;
	}
	return 0;
}

/* see slog.h */
long long
slog_ckpt_read(struct slog *s, struct arena *a, const char *head,
    const char **text)
{
	char buf[128], got[64], *end, *p;
	size_t hl = strlen(head);
	long long off;
	ssize_t n;
	int fd;

	if (hl > sizeof(got) || (p = arena_printf(a, "%s.ckpt", s->path)) ==
	    NULL || (fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || buf[n - 1] != '\n')
		return 0;
	buf[n - 1] = '\0';
	errno = 0;
	off = strtoll(buf, &end, 10);
	if (errno != 0 || end == buf || *end != ' ' || off <= 0 ||
	    off >= s->off || pread(s->fd, got, 1, off - 1) != 1 ||
	    got[0] != '\n' || pread(s->fd, got, hl, off) != (ssize_t)hl ||
	    memcmp(got, head, hl) != 0 || (*text = arena_strdup(a, end +
	    1)) == NULL)
		return 0;
	return off;
}
