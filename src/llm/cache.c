/* cache.c - the response cache on disk (see cache.h). */
#include "llm/cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fsafe.h"
#include "session/slog.h"

#define CACHE_MAX_EVICT	4096	/* files removed by one put, at most */

static int
is_key(const char *s)
{
	return strlen(s) == 64 && strspn(s, "0123456789abcdef") == 64;
}

/* see cache.h */
int
cache_get(const char *dir, const char *key, struct sbuf *out)
{
	char path[4096], buf[4096];
	ssize_t k;
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", dir, key) >=
	    (int)sizeof(path))
		return -E_LIMIT;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
	    O_NONBLOCK)) < 0)
		return errno == ENOENT ? -E_NOENT : -E_IO;
	while ((k = read(fd, buf, sizeof(buf))) > 0 && !out->err)
		sbuf_add(out, buf, (size_t)k);
	close(fd);
	if (k < 0)
		return -E_IO;
	if (out->err)
		return out->err;
	/* Its times say when it was last used: eviction goes by them. */
	(void)utimensat(AT_FDCWD, path, NULL, 0);
	return 0;
}

/* see cache.h */
void
cache_drop(const char *dir, const char *key)
{
	char path[4096];

	if (snprintf(path, sizeof(path), "%s/%s", dir, key) <
	    (int)sizeof(path))
		(void)unlink(path);
}

/* Remove the least recently used file while the folder holds more than
 * max bytes. One scan per removal: the folder holds few files (a cap of
 * a few MiB), and a plain loop is smaller than a sorted list. */
static void
evict(int dfd, size_t max)
{
	struct timespec old = { 0, 0 };
	struct dirent *de;
	struct stat st;
	char victim[65];
	unsigned long long total;
	unsigned round;
	DIR *d;
	int fd;

	for (round = 0; round < CACHE_MAX_EVICT; round++) {
		if ((fd = dup(dfd)) < 0 || (d = fdopendir(fd)) == NULL) {
			if (fd >= 0)
				close(fd);
			return;
		}
		rewinddir(d);
		total = 0;
		victim[0] = '\0';
		while ((de = readdir(d)) != NULL) {
			if (!is_key(de->d_name) || fstatat(dfd, de->d_name,
			    &st, AT_SYMLINK_NOFOLLOW) != 0 ||
			    !S_ISREG(st.st_mode))
				continue;
			total += (unsigned long long)st.st_size;
			if (victim[0] == '\0' || st.st_mtim.tv_sec <
			    old.tv_sec || (st.st_mtim.tv_sec == old.tv_sec &&
			    st.st_mtim.tv_nsec < old.tv_nsec)) {
				old = st.st_mtim;
				memcpy(victim, de->d_name, 65);
			}
		}
		closedir(d);
		if (total <= max || victim[0] == '\0')
			return;
		if (unlinkat(dfd, victim, 0) != 0)
			return;
	}
}

/* see cache.h */
int
cache_put(const char *dir, size_t max, const char *key, const char *p,
    size_t n)
{
	char path[4096];
	int dfd, e;

	if (n > max || !is_key(key))
		return -E_LIMIT;
	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path))
		return -E_LIMIT;
	if (slog_mkdirs(path) != 0)
		return -E_IO;
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -E_IO;
	e = fsafe_write(dfd, key, p, n, 0600, FSAFE_NO_SYMLINKS);
	if (e == 0)
		evict(dfd, max);
	close(dfd);
	return e;
}
