/* fsafe.c - open and replace files beneath a folder, by descriptor.
 * openat2(2) and its RESOLVE_* flags: Linux 5.6,
 * include/uapi/linux/openat2.h. The walk is the fallback for older
 * kernels (most routers) and for filters that refuse the call. */
#include "base/fsafe.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* musl has neither an openat2() wrapper nor <linux/openat2.h>. */
struct openat2_how {
	uint64_t	flags;
	uint64_t	mode;
	uint64_t	resolve;
};
#define RESOLVE_NO_MAGICLINKS	0x02
#define RESOLVE_NO_SYMLINKS	0x04
#define RESOLVE_BENEATH		0x08

#define NO_OPENAT2	INT_MIN	/* open2(): use the walk */
#define MAX_LINKS	40	/* the kernel's MAXSYMLINKS */

/* Set errno and say what it means here. */
static int
fail(int en)
{
	errno = en;
	switch (en) {
	case ENOENT:
		return -E_NOENT;
	case EXDEV:		/* openat2: beneath was left */
	case ELOOP:		/* a link that may not be followed */
		return -E_DENIED;
	case ENAMETOOLONG:
		return -E_LIMIT;
	case EINVAL:
		return -E_INVAL;
	default:
		return -E_IO;
	}
}

/* The kernel resolves beneath dirfd and checks every step itself. */
static int
open2(int dirfd, const char *rel, int flags, int mode, unsigned how)
{
	struct openat2_how oh;
	long fd;
	int i;

	memset(&oh, 0, sizeof(oh));
	oh.flags = (unsigned)(flags | O_CLOEXEC);
	if (flags & O_CREAT)	/* openat2 refuses a mode without it */
		oh.mode = (unsigned)mode;
	oh.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
	if (how & FSAFE_NO_SYMLINKS)
		oh.resolve |= RESOLVE_NO_SYMLINKS;
	/* EAGAIN: a rename raced a ".." step, and the kernel asks us to
	 * try again rather than guess. */
	for (i = 0; i < 8; i++) {
		if ((fd = syscall(SYS_openat2, dirfd, rel, &oh, sizeof(oh))) >= 0)
			return (int)fd;
		if (errno != EAGAIN && errno != EINTR)
			break;
	}
	/* EPERM: a seccomp filter that does not know the call (Docker's
	 * older profiles); the walk gives the real answer. */
	if (errno == ENOSYS || errno == EPERM)
		return NO_OPENAT2;
	return fail(errno);
}

/* Without openat2: one component at a time, each opened with O_NOFOLLOW
 * relative to the folder before it, which stays open; ".." goes back to
 * that descriptor (never to the folder's current parent, which a rename
 * may have changed) and cannot pass the top. A link is read and its
 * target put in place of its name in the path still to walk. The path
 * is buf + off, NUL-terminated; the bytes before it are scratch for link
 * targets. */
static int
walk(int dirfd, char *buf, size_t off, int flags, int mode, unsigned how)
{
	int fds[FSAFE_MAX_DEPTH + 1], n = 0, links = 0, fd, r, en, last;
	struct stat st;
	const char *name;
	ssize_t len;
	size_t e;
	char c;

	fds[0] = dirfd;
	for (;;) {
		while (buf[off] == '/')
			off++;
		for (e = off; buf[e] != '\0' && buf[e] != '/'; e++)
			;
		/* A trailing "/" leaves an empty last component: the folder. */
		last = buf[e] == '\0';
		c = buf[e];
		buf[e] = '\0';
		name = e == off ? "." : buf + off;
		if (strcmp(name, ".") == 0 && !last)
			goto next;
		if (strcmp(name, "..") == 0) {
			if (n == 0) {
				r = fail(EXDEV);
				goto out;
			}
			close(fds[n--]);
			if (!last)
				goto next;
			name = ".";
		}
		if (!last) {
			fd = openat(fds[n], name, O_PATH | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC);
			if (fd >= 0 && n == FSAFE_MAX_DEPTH) {
				close(fd);
				r = fail(ENAMETOOLONG);
				goto out;
			}
			if (fd >= 0) {
				fds[++n] = fd;
				goto next;
			}
		} else {
			fd = openat(fds[n], name, flags | O_NOFOLLOW |
			    O_CLOEXEC, mode);
			/* O_PATH | O_NOFOLLOW opens a link itself. */
			if (fd >= 0 && (flags & (O_PATH | O_NOFOLLOW)) ==
			    O_PATH && fstat(fd, &st) == 0 &&
			    S_ISLNK(st.st_mode)) {
				close(fd);
				fd = -1;
				errno = ELOOP;
			}
			if (fd >= 0) {
				r = fd;
				goto out;
			}
			if (flags & O_NOFOLLOW) {
				r = fail(errno);
				goto out;
			}
		}
		/* O_NOFOLLOW met a link (ELOOP, or ENOTDIR with O_DIRECTORY),
		 * or this is a plain error: only readlinkat can tell. */
		en = errno;
		if ((en != ELOOP && en != ENOTDIR) ||
		    (len = readlinkat(fds[n], name, buf, off)) < 0) {
			r = fail(en);
			goto out;
		}
		if ((how & FSAFE_NO_SYMLINKS) || ++links > MAX_LINKS) {
			r = fail(ELOOP);
			goto out;
		}
		if ((size_t)len >= off) {
			r = fail(ENAMETOOLONG);
			goto out;
		}
		if (len == 0 || buf[0] == '/') {
			r = fail(len == 0 ? ENOENT : EXDEV);
			goto out;
		}
		buf[e] = c;
		memmove(buf + e - len, buf, (size_t)len);
		off = e - (size_t)len;
		continue;
next:
		buf[e] = c;
		off = e;
	}
out:
	en = errno;
	while (n > 0)
		close(fds[n--]);
	errno = en;
	return r;
}

/* The path copied to the end of buf (PATH_MAX bytes), for walk(). */
static int
load(char *buf, const char *rel, size_t *off)
{
	size_t n = strlen(rel);

	if (n == 0)
		return fail(EINVAL);
	if (rel[0] == '/')
		return fail(EXDEV);
	if (n >= PATH_MAX)
		return fail(ENAMETOOLONG);
	*off = PATH_MAX - n - 1;
	memcpy(buf + *off, rel, n + 1);
	return 0;
}

static int
open_in(int dirfd, char *buf, size_t off, int flags, int mode, unsigned how)
{
	int r;

	if (!(how & FSAFE_WALK) &&
	    (r = open2(dirfd, buf + off, flags, mode, how)) != NO_OPENAT2)
		return r;
	return walk(dirfd, buf, off, flags, mode, how);
}

/* see fsafe.h */
int
fsafe_open(int dirfd, const char *rel, int flags, int mode, unsigned how)
{
	char buf[PATH_MAX];
	size_t off;
	int r;

	if ((r = load(buf, rel, &off)) != 0)
		return r;
	return open_in(dirfd, buf, off, flags, mode, how);
}

/* A name nobody can know in advance, so nothing can be planted there
 * (O_EXCL would refuse it anyway, but a guessed name could block every
 * write). Without getrandom (Linux < 3.17) the clock will do. */
static void
tmp_name(char *s, size_t n)
{
	struct timespec ts;
	uint64_t v = 0;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v)) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		v ^= (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^
		    (uint64_t)ts.tv_sec << 32 ^ (uint64_t)getpid();
	}
	snprintf(s, n, ".tmp-%016llx", (unsigned long long)v);
}

/* see fsafe.h */
int
fsafe_write(int dirfd, const char *rel, const void *p, size_t n, int mode,
    unsigned how)
{
	char buf[PATH_MAX], tmp[32], *base;
	const char *q = p;
	struct stat st;
	size_t off;
	ssize_t w;
	int pfd = dirfd, fd = -1, r, i, en;

	if ((r = load(buf, rel, &off)) != 0)
		return r;
	if ((base = strrchr(buf + off, '/')) != NULL)
		*base++ = '\0';
	else
		base = buf + off;
	if (*base == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		return fail(EINVAL);
	if (base != buf + off && (pfd = open_in(dirfd, buf, off, O_PATH |
	    O_DIRECTORY, 0, how)) < 0)
		return pfd;
	for (i = 0; i < 8; i++) {
		tmp_name(tmp, sizeof(tmp));
		fd = openat(pfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_NONBLOCK | O_CLOEXEC, mode);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0) {
		r = fail(errno);
		goto out;
	}
	if (fstat(fd, &st) != 0)
		goto undo;
	if (!S_ISREG(st.st_mode)) {
		errno = EIO;
		goto undo;
	}
	while (n > 0) {
		if ((w = write(fd, q, n)) < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = ENOSPC;
			goto undo;
		}
		q += w;
		n -= (size_t)w;
	}
	if (fsync(fd) != 0)
		goto undo;
	/* close() reports what a network file system could not write. */
	i = close(fd);
	fd = -1;
	if (i != 0)
		goto undo;
	if (renameat(pfd, tmp, pfd, base) == 0) {
		r = 0;
		goto out;
	}
undo:
	en = errno;
	if (fd >= 0)
		close(fd);
	fd = -1;
	unlinkat(pfd, tmp, 0);
	r = fail(en);
out:
	if (pfd != dirfd)
		close(pfd);
	return r;
}
