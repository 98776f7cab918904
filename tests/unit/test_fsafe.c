/* test_fsafe.c - opening beneath a folder (fsafe, both with openat2 and
 * with the walk), and the workspace and skill file tools through
 * tool_call(): confinement, symbolic links, FIFOs, names that would spoof
 * the output, no existence oracle outside, and a real race (a folder
 * swapped with a symbolic link while the tools run). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fsafe.h"
#include "json.h"
#include "tool.h"
#include "unit.h"

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE	(1 << 1)
#endif

static char root[64], ws[96], outside[96], skdir[96];
static int low_fd;	/* the lowest free descriptor at setup */

/* The lowest free descriptor: higher after a case that leaked one. */
static int
free_fd(void)
{
	int fd = dup(0);

	if (fd >= 0)
		close(fd);
	return fd;
}

static void
put(const char *dir, const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	if ((f = fopen(path, "w")) == NULL) {
		t_fail(__FILE__, __LINE__, "cannot write %s", path);
		return;
	}
	fputs(text, f);
	fclose(f);
}

static void
sub(char *buf, size_t n, const char *dir, const char *rel)
{
	snprintf(buf, n, "%s/%s", dir, rel);
}

static void
mk(const char *dir, const char *rel)
{
	char p[512];

	sub(p, sizeof(p), dir, rel);
	if (mkdir(p, 0755) != 0)
		t_fail(__FILE__, __LINE__, "mkdir %s", p);
}

static void
ln(const char *target, const char *dir, const char *rel)
{
	char p[512];

	sub(p, sizeof(p), dir, rel);
	if (symlink(target, p) != 0)
		t_fail(__FILE__, __LINE__, "symlink %s", p);
}

static int
exists(const char *dir, const char *rel)
{
	char p[512];
	struct stat st;

	sub(p, sizeof(p), dir, rel);
	return lstat(p, &st) == 0;
}

/* The bytes of a file, or "" (in the test arena). */
static const char *
slurp(const char *dir, const char *rel)
{
	char p[512], *buf = arena_alloc(&t_arena, 4096);
	ssize_t r;
	int fd;

	sub(p, sizeof(p), dir, rel);
	if (buf == NULL || (fd = open(p, O_RDONLY | O_NONBLOCK)) < 0)
		return "";
	r = read(fd, buf, 4095);
	close(fd);
	buf[r > 0 ? r : 0] = '\0';
	return buf;
}

/* How many names a folder holds (".", ".." not counted). */
static int
entries(const char *dir)
{
	struct dirent *de;
	DIR *d;
	int n = 0;

	if ((d = opendir(dir)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		n += strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0;
	closedir(d);
	return n;
}

/* A workspace ws/ with a.txt and sub/b.txt, a folder outside/ next to it
 * with secret.txt, and a skill folder sk/. */
static void
setup(void)
{
	const char *t = getenv("TMPDIR");

	low_fd = free_fd();
	snprintf(root, sizeof(root), "%s/skillbox-fsafe.XXXXXX",
	    t != NULL && strlen(t) < 32 ? t : "/tmp");
	if (mkdtemp(root) == NULL) {
		t_fail(__FILE__, __LINE__, "mkdtemp");
		return;
	}
	sub(ws, sizeof(ws), root, "ws");
	sub(outside, sizeof(outside), root, "outside");
	sub(skdir, sizeof(skdir), root, "sk");
	mk(root, "ws");
	mk(root, "outside");
	mk(root, "sk");
	put(ws, "a.txt", "hello\n");
	mk(ws, "sub");
	put(ws, "sub/b.txt", "bee\n");
	put(outside, "secret.txt", "OUTSIDE-SECRET\n");
}

static void
teardown(void)
{
	char cmd[128];

	T_EQI(free_fd(), low_fd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	(void)!system(cmd);
}

/* fsafe_open() in both ways (openat2 where the kernel has it, and the
 * walk), expecting an error code, or a file whose first byte is `first`. */
static void
expect(int dfd, const char *rel, int flags, unsigned how, int want,
    int first, int line)
{
	unsigned k;
	char b = 0;
	int fd;

	for (k = 0; k < 2; k++) {
		fd = fsafe_open(dfd, rel, flags, 0, how | (k ? FSAFE_WALK : 0));
		if (fd >= 0) {
			if (first != 0 && (read(fd, &b, 1) != 1 || b != first))
				t_fail(__FILE__, line, "%s: read '%c' (walk %u)",
				    rel, b, k);
			close(fd);
			fd = 0;
		}
		if (fd != want)
			t_fail(__FILE__, line, "%s, how %u, walk %u: %d, not %d"
			    " (%s)", rel, how, k, fd, want, strerror(errno));
	}
}
#define EXPECT(rel, flags, how, want, first)				\
	expect(dfd, rel, flags, how, want, first, __LINE__)

static void
fsafe_paths(void)
{
	static char lng[PATH_MAX + 8], deep[FSAFE_MAX_DEPTH * 2 + 8];
	const unsigned S = FSAFE_NO_SYMLINKS;
	unsigned i;
	int dfd, fd;

	setup();
	dfd = open(ws, O_PATH | O_DIRECTORY | O_CLOEXEC);
	T(dfd >= 0);
	ln("a.txt", ws, "lin");
	ln("sub/b.txt", ws, "lsub");
	ln("sub", ws, "din");
	ln("../a.txt", ws, "sub/up");
	ln("../outside/secret.txt", ws, "lout");
	ln("sub/../../outside/secret.txt", ws, "lout2");
	ln("../outside", ws, "dout");
	ln("../ws/a.txt", ws, "lround");	/* out and back in: refused */
	ln("loop2", ws, "loop1");
	ln("loop1", ws, "loop2");
	put(ws, "sub/.hidden", "h");
	mk(ws, "sub/deeper");
	put(ws, "sub/deeper/c.txt", "c");
	/* Plain paths, "." and "..", beneath. */
	EXPECT("a.txt", O_RDONLY, S, 0, 'h');
	EXPECT("./sub//b.txt", O_RDONLY, S, 0, 'b');
	EXPECT("sub/deeper/../../a.txt", O_RDONLY, S, 0, 'h');
	EXPECT("sub/deeper/./c.txt", O_RDONLY, S, 0, 'c');
	EXPECT("sub/", O_RDONLY | O_DIRECTORY, S, 0, 0);
	EXPECT(".", O_RDONLY | O_DIRECTORY, S, 0, 0);
	EXPECT("sub/..", O_PATH, S, 0, 0);
	EXPECT("a.txt/", O_RDONLY, S, -E_IO, 0);
	EXPECT("a.txt/x", O_RDONLY, S, -E_IO, 0);
	EXPECT("none.txt", O_RDONLY, S, -E_NOENT, 0);
	EXPECT("none/x.txt", O_RDONLY, S, -E_NOENT, 0);
	EXPECT("", O_RDONLY, S, -E_INVAL, 0);
	/* Leaving the folder: the same answer whether the target exists. */
	EXPECT("..", O_PATH, 0, -E_DENIED, 0);
	EXPECT("../outside/secret.txt", O_RDONLY, 0, -E_DENIED, 0);
	EXPECT("../outside/none.txt", O_RDONLY, 0, -E_DENIED, 0);
	EXPECT("sub/../../ws/a.txt", O_RDONLY, 0, -E_DENIED, 0);
	EXPECT("/etc/passwd", O_RDONLY, 0, -E_DENIED, 0);
	EXPECT("/", O_PATH, 0, -E_DENIED, 0);
	/* Links: followed beneath unless strict; never out. */
	EXPECT("lin", O_RDONLY, 0, 0, 'h');
	EXPECT("lsub", O_RDONLY, 0, 0, 'b');
	EXPECT("din/b.txt", O_RDONLY, 0, 0, 'b');
	EXPECT("din/up", O_RDONLY, 0, 0, 'h');
	EXPECT("din/../a.txt", O_RDONLY, 0, 0, 'h');
	EXPECT("din/", O_RDONLY | O_DIRECTORY, 0, 0, 0);
	EXPECT("din", O_PATH | O_DIRECTORY, 0, 0, 0);
	EXPECT("lin", O_RDONLY, S, -E_DENIED, 0);
	EXPECT("din/b.txt", O_RDONLY, S, -E_DENIED, 0);
	EXPECT("din", O_PATH, S, -E_DENIED, 0);
	EXPECT("lin", O_RDONLY | O_NOFOLLOW, 0, -E_DENIED, 0);
	EXPECT("lout", O_RDONLY, 0, -E_DENIED, 0);
	EXPECT("lout2", O_RDONLY, 0, -E_DENIED, 0);
	EXPECT("lround", O_RDONLY, 0, -E_DENIED, 0);
	EXPECT("dout/secret.txt", O_RDONLY, 0, -E_DENIED, 0);
	EXPECT("dout/none.txt", O_RDONLY, 0, -E_DENIED, 0);
	EXPECT("loop1", O_RDONLY, 0, -E_DENIED, 0);
	/* Creating: O_EXCL never follows; otherwise as for reading. */
	EXPECT("lin", O_WRONLY | O_CREAT | O_EXCL, 0, -E_IO, 0);
	EXPECT("dout/new.txt", O_WRONLY | O_CREAT, 0, -E_DENIED, 0);
	T(!exists(outside, "new.txt"));
	/* Too long, too deep. */
	memset(lng, 'a', PATH_MAX);
	lng[PATH_MAX] = '\0';
	EXPECT(lng, O_RDONLY, S, -E_LIMIT, 0);
	for (i = 0; i < FSAFE_MAX_DEPTH + 2; i++)
		memcpy(deep + 2 * i, "./", 2);
	T((fd = fsafe_open(dfd, deep, O_PATH, 0, FSAFE_WALK)) >= 0);
	close(fd);
	for (i = 0; i < FSAFE_MAX_DEPTH + 2; i++) {
		memcpy(deep + 2 * i, "d/", 2);
		deep[2 * i + 1] = '\0';
		T(mkdirat(dfd, deep, 0755) == 0);
		deep[2 * i + 1] = '/';
	}
	T_EQI(fsafe_open(dfd, deep, O_PATH, 0, FSAFE_WALK), -E_LIMIT);
	deep[2 * FSAFE_MAX_DEPTH] = '\0';
	T((fd = fsafe_open(dfd, deep, O_PATH, 0, FSAFE_WALK)) >= 0);
	close(fd);
	close(dfd);
	teardown();
}

static void
fsafe_writes(void)
{
	char p[512];
	unsigned k, how;
	int dfd;

	setup();
	dfd = open(ws, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ln("../outside/secret.txt", ws, "lout");
	ln("../outside", ws, "dout");
	ln("sub", ws, "din");
	for (k = 0; k < 4; k++) {
		how = (k & 1 ? FSAFE_WALK : 0) | (k & 2 ? FSAFE_NO_SYMLINKS : 0);
		T_EQI(fsafe_write(dfd, "n.txt", "new", 3, 0600, how), 0);
		T_EQS(slurp(ws, "n.txt"), "new");
		T_EQI(fsafe_write(dfd, "sub/n.txt", "sub", 3, 0600, how), 0);
		T_EQS(slurp(ws, "sub/n.txt"), "sub");
		T_EQI(fsafe_write(dfd, "din/m.txt", "m", 1, 0600, how),
		    k & 2 ? -E_DENIED : 0);
		T_EQI(fsafe_write(dfd, "dout/n.txt", "x", 1, 0600, how),
		    -E_DENIED);
		T_EQI(fsafe_write(dfd, "../n.txt", "x", 1, 0600, how),
		    -E_DENIED);
		T_EQI(fsafe_write(dfd, "sub", "x", 1, 0600, how), -E_IO);
		T_EQI(fsafe_write(dfd, "sub/", "x", 1, 0600, how), -E_INVAL);
		T_EQI(fsafe_write(dfd, "sub/..", "x", 1, 0600, how), -E_INVAL);
		T_EQI(fsafe_write(dfd, "none/n.txt", "x", 1, 0600, how),
		    -E_NOENT);
		T_EQI(fsafe_write(dfd, "/tmp/n.txt", "x", 1, 0600, how),
		    -E_DENIED);
	}
	/* The link is replaced, its target untouched. */
	T_EQI(fsafe_write(dfd, "lout", "mine", 4, 0600, 0), 0);
	T_EQS(slurp(outside, "secret.txt"), "OUTSIDE-SECRET\n");
	T_EQS(slurp(ws, "lout"), "mine");
	T(!exists(outside, "n.txt"));
	/* Only what was written stays: no temporary files. */
	T_EQI(entries(ws), 6);
	sub(p, sizeof(p), ws, "sub");
	T_EQI(entries(p), 3);
	close(dfd);
	teardown();
}

static const struct unit_case cases[] = {
	{ "fsafe_paths", fsafe_paths },
	{ "fsafe_writes", fsafe_writes },
};

const struct unit_suite suite_fsafe = { "fsafe", cases, ARRAY_LEN(cases) };
