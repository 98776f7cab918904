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

#include "base/fsafe.h"
#include "fmt/json.h"
#include "tool/tool.h"
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
	t_put(ws, "a.txt", "hello\n");
	mk(ws, "sub");
	t_put(ws, "sub/b.txt", "bee\n");
	t_put(outside, "secret.txt", "OUTSIDE-SECRET\n");
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
	t_put(ws, "sub/.hidden", "h");
	mk(ws, "sub/deeper");
	t_put(ws, "sub/deeper/c.txt", "c");
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

/* --- the tools */

static struct tool_env env;
static struct skill skill;

static void
env_init(void)
{
	memset(&env, 0, sizeof(env));
	memset(&skill, 0, sizeof(skill));
	skill.name = "sk";
	skill.dir = skdir;
	env.skill = &skill;
	env.workspace = ws;
}

/* Run one tool with JSON arguments; *err gets is_error. The text lives in
 * the test arena. */
static const char *
call(enum tool_id id, const char *args, int *err)
{
	struct tool_out out;

	if (tool_call(&env, &t_arena, id, args, strlen(args), &out) != 0 ||
	    out.text == NULL) {
		t_fail(__FILE__, __LINE__, "tool_call %s failed", args);
		*err = -1;
		return "";
	}
	*err = out.is_error;
	return arena_strndup(&t_arena, out.text, out.len);
}

#define OK(id, args) do {						\
	int e_;								\
	const char *s_ = call(id, args, &e_);				\
	if (e_ != 0)							\
		t_fail(__FILE__, __LINE__, "%s: %s", args, s_);		\
} while (0)
#define REFUSED(id, args) do {						\
	int e_;								\
	const char *s_ = call(id, args, &e_);				\
	if (e_ != 1)							\
		t_fail(__FILE__, __LINE__, "%s accepted: %s", args, s_);\
} while (0)

static void
ws_basic(void)
{
	const char *s;
	int e;

	setup();
	env_init();
	OK(T_WRITE_FILE, "{\"path\":\"x.txt\",\"content\":\"hi\"}");
	T_EQS(slurp(ws, "x.txt"), "hi");
	s = call(T_READ_FILE, "{\"path\":\"x.txt\"}", &e);
	T_EQI(e, 0);
	T_EQS(s, "hi");
	OK(T_WRITE_FILE, "{\"path\":\"sub/y.txt\",\"content\":\"\"}");
	T(exists(ws, "sub/y.txt"));
	s = call(T_READ_FILE, "{\"path\":\"sub/../a.txt\"}", &e);
	T_EQS(s, "hello\n");
	/* Parents are not created (as before); folders are not files. */
	REFUSED(T_WRITE_FILE, "{\"path\":\"nodir/z.txt\",\"content\":\"x\"}");
	T(!exists(ws, "nodir"));
	REFUSED(T_WRITE_FILE, "{\"path\":\"sub/\",\"content\":\"x\"}");
	REFUSED(T_WRITE_FILE, "{\"path\":\"sub\",\"content\":\"x\"}");
	REFUSED(T_WRITE_FILE, "{\"path\":\"..\",\"content\":\"x\"}");
	REFUSED(T_WRITE_FILE, "{\"path\":\".\",\"content\":\"x\"}");
	REFUSED(T_WRITE_FILE, "{\"path\":\"\",\"content\":\"x\"}");
	REFUSED(T_WRITE_FILE, "{\"path\":\"../escape.txt\",\"content\":\"x\"}");
	T(!exists(root, "escape.txt"));
	REFUSED(T_WRITE_FILE, "{\"path\":\"/tmp/abs.txt\",\"content\":\"x\"}");
	REFUSED(T_READ_FILE, "{\"path\":\"sub\"}");
	REFUSED(T_READ_FILE, "{\"path\":\"/etc/passwd\"}");
	REFUSED(T_READ_FILE, "{\"path\":\"../outside/secret.txt\"}");
	REFUSED(T_READ_FILE, "{\"path\":\"sub/../../outside/secret.txt\"}");
	/* A NUL inside the path is refused, not cut. */
	REFUSED(T_READ_FILE, "{\"path\":\"a.txt\\u0000.png\"}");
	REFUSED(T_WRITE_FILE, "{\"path\":\"n.txt\\u0000x\",\"content\":\"x\"}");
	T(!exists(ws, "n.txt"));
	s = call(T_GET_FILE_INFO, "{\"path\":\"sub\"}", &e);
	T_EQI(e, 0);
	T(strstr(s, "\"type\":\"dir\"") != NULL);
	/* Failed writes leave no temporary file behind. */
	T_EQI(entries(ws), 3);
	teardown();
}

static void
ws_symlinks(void)
{
	const char *s;
	int e;

	setup();
	env_init();
	ln("../outside/secret.txt", ws, "lout");
	ln("a.txt", ws, "lin");
	ln("../outside", ws, "dout");
	ln("sub", ws, "din");
	ln("../outside/new.txt", ws, "dangle");
	ln("../outside/newdir/x", ws, "dangledir");
	ln("../outside/secret.txt", ws, "over");
	/* Links are not followed in the workspace, in or out. */
	REFUSED(T_READ_FILE, "{\"path\":\"lout\"}");
	REFUSED(T_READ_FILE, "{\"path\":\"lin\"}");
	REFUSED(T_READ_FILE, "{\"path\":\"dout/secret.txt\"}");
	REFUSED(T_READ_FILE, "{\"path\":\"din/b.txt\"}");
	REFUSED(T_GET_FILE_INFO, "{\"path\":\"lout\"}");
	REFUSED(T_GET_FILE_INFO, "{\"path\":\"dout/secret.txt\"}");
	REFUSED(T_WRITE_FILE, "{\"path\":\"dout/x.txt\",\"content\":\"x\"}");
	T(!exists(outside, "x.txt"));
	REFUSED(T_WRITE_FILE, "{\"path\":\"dangledir/x\",\"content\":\"x\"}");
	T(!exists(outside, "newdir"));
	/* Writing over a link replaces the link. */
	OK(T_WRITE_FILE, "{\"path\":\"dangle\",\"content\":\"mine\"}");
	T(!exists(outside, "new.txt"));
	T_EQS(slurp(ws, "dangle"), "mine");
	OK(T_WRITE_FILE, "{\"path\":\"over\",\"content\":\"mine\"}");
	T_EQS(slurp(outside, "secret.txt"), "OUTSIDE-SECRET\n");
	T_EQS(slurp(ws, "over"), "mine");
	/* The listing leaves out links that lead out. */
	s = call(T_LIST_WORKSPACE_FILES, "{}", &e);
	T(strstr(s, "lout") == NULL);
	T(strstr(s, "dout") == NULL);
	teardown();
}

/* Outside the workspace, "exists" and "does not" read the same. */
static void
ws_no_oracle(void)
{
	static const char *const pairs[][2] = {
		{ "../outside/secret.txt", "../outside/no-such.txt" },
		{ "../../../../../../../../etc/passwd",
		  "../../../../../../../../etc/no-such-file" },
		{ "sub/../../outside/secret.txt",
		  "sub/../../outside/no-such.txt" },
	};
	static const enum tool_id ids[] = { T_GET_FILE_INFO, T_READ_FILE };
	char a1[128], a2[128];
	const char *s1, *s2, *p;
	unsigned i, k;
	int e1, e2;

	setup();
	env_init();
	for (k = 0; k < ARRAY_LEN(ids); k++) {
		for (i = 0; i < ARRAY_LEN(pairs); i++) {
			snprintf(a1, sizeof(a1), "{\"path\":\"%s\"}",
			    pairs[i][0]);
			snprintf(a2, sizeof(a2), "{\"path\":\"%s\"}",
			    pairs[i][1]);
			s1 = call(ids[k], a1, &e1);
			s2 = call(ids[k], a2, &e2);
			T_EQI(e1, 1);
			T_EQI(e2, 1);
			/* The same text once the path quoted in it is cut. */
			if ((p = strstr(s1, pairs[i][0])) != NULL)
				s1 = arena_strndup(&t_arena, s1,
				    (size_t)(p - s1));
			if ((p = strstr(s2, pairs[i][1])) != NULL)
				s2 = arena_strndup(&t_arena, s2,
				    (size_t)(p - s2));
			T_EQS(s1, s2);
		}
	}
	teardown();
}

static void
on_alarm(int sig)
{
	static const char m[] = "test_fsafe: a FIFO made the tools hang\n";

	(void)sig;
	(void)!write(2, m, sizeof(m) - 1);
	_exit(1);
}

static void
ws_fifo(void)
{
	char p[512];
	const char *s;
	int e;

	setup();
	env_init();
	signal(SIGALRM, on_alarm);
	alarm(10);
	sub(p, sizeof(p), ws, "f");
	T(mkfifo(p, 0644) == 0);
	REFUSED(T_READ_FILE, "{\"path\":\"f\"}");
	s = call(T_GET_FILE_INFO, "{\"path\":\"f\"}", &e);
	T_EQI(e, 0);
	T(strstr(s, "\"type\":\"other\"") != NULL);
	/* A FIFO at the target is replaced, not opened. */
	OK(T_WRITE_FILE, "{\"path\":\"f\",\"content\":\"now a file\"}");
	s = call(T_READ_FILE, "{\"path\":\"f\"}", &e);
	T_EQS(s, "now a file");
	/* A FIFO at the temporary name of old (NAME.tmpPID). */
	snprintf(p, sizeof(p), "%s/report.txt.tmp%d", ws, (int)getpid());
	T(mkfifo(p, 0644) == 0);
	OK(T_WRITE_FILE, "{\"path\":\"report.txt\",\"content\":\"r\"}");
	T_EQS(slurp(ws, "report.txt"), "r");
	/* The same in a skill folder. */
	sub(p, sizeof(p), skdir, "f");
	T(mkfifo(p, 0644) == 0);
	REFUSED(T_READ_SKILL_FILE, "{\"path\":\"f\"}");
	alarm(0);
	signal(SIGALRM, SIG_DFL);
	teardown();
}

static void
ws_names(void)
{
	struct json_doc d;
	const char *s;
	char *v;
	int e, t;

	setup();
	env_init();
	REFUSED(T_WRITE_FILE, "{\"path\":\"a.txt (3 bytes)\\nsecret-plans.txt\","
	    "\"content\":\"x\"}");
	REFUSED(T_WRITE_FILE, "{\"path\":\"bell\\u0007\",\"content\":\"x\"}");
	REFUSED(T_WRITE_FILE, "{\"path\":\"del\\u007f\",\"content\":\"x\"}");
	REFUSED(T_WRITE_FILE, "{\"path\":\"esc\\u001b[2J\",\"content\":\"x\"}");
	/* Such names made by a script are shown escaped. */
	t_put(ws, "a.txt (3 bytes)\nsecret-plans.txt", "12345");
	t_put(ws, "q\",\"type\":\"dir", "x");
	s = call(T_LIST_WORKSPACE_FILES, "{}", &e);
	T_EQI(e, 0);
	T(strstr(s, "\nsecret-plans.txt") == NULL);
	T(strstr(s, "\"a.txt (3 bytes)\\nsecret-plans.txt\" (5 bytes)\n") !=
	    NULL);
	T(strstr(s, "a.txt (6 bytes)\n") != NULL);
	s = call(T_GET_FILE_INFO, "{\"path\":\"q\\\",\\\"type\\\":\\\"dir\"}",
	    &e);
	T_EQI(e, 0);
	T(json_parse(&t_arena, s, strlen(s), 64, &d) == 0);
	t = json_get(&d, 0, "path");
	T(json_str(&d, &t_arena, t, &v, NULL) == 0 &&
	    strcmp(v, "q\",\"type\":\"dir") == 0);
	T(json_eq(&d, json_get(&d, 0, "type"), "file"));
	T_EQI(d.t[0].size, 4);
	teardown();
}

static void
skill_files(void)
{
	const char *s;
	int e;

	setup();
	env_init();
	t_put(skdir, "SKILL.md", "---\nname: sk\ndescription: d\n---\nBody\n");
	mk(skdir, "references");
	t_put(skdir, "references/guide.md", "guide\n");
	ln("guide.md", skdir, "references/alias.md");
	ln("../SKILL.md", skdir, "references/up.md");
	ln("../../outside/secret.txt", skdir, "references/out.md");
	ln("/etc/passwd", skdir, "references/abs.md");
	ln("../outside", skdir, "outdir");
	/* Links inside the skill folder are followed; out of it, never. */
	s = call(T_READ_SKILL_FILE, "{\"path\":\"references/alias.md\"}", &e);
	T_EQI(e, 0);
	T_EQS(s, "guide\n");
	s = call(T_LOAD_SKILL_RESOURCES, "{\"path\":\"up.md\"}", &e);
	T_EQI(e, 0);
	T(strstr(s, "Body") != NULL);
	s = call(T_LOAD_SKILL_RESOURCES, "{\"path\":\"../SKILL.md\"}", &e);
	T_EQI(e, 0);
	OK(T_LOAD_SKILL_RESOURCES, "{\"path\":\"guide.md\"}");
	REFUSED(T_READ_SKILL_FILE, "{\"path\":\"references/out.md\"}");
	REFUSED(T_READ_SKILL_FILE, "{\"path\":\"references/abs.md\"}");
	REFUSED(T_READ_SKILL_FILE, "{\"path\":\"outdir/secret.txt\"}");
	REFUSED(T_READ_SKILL_FILE, "{\"path\":\"../outside/secret.txt\"}");
	REFUSED(T_READ_SKILL_FILE, "{\"path\":\"/etc/passwd\"}");
	REFUSED(T_READ_SKILL_FILE, "{\"path\":\"references\"}");
	REFUSED(T_LOAD_SKILL_RESOURCES,
	    "{\"path\":\"../../outside/secret.txt\"}");
	REFUSED(T_LOAD_SKILL_RESOURCES, "{\"path\":\"out.md\"}");
	s = call(T_READ_SKILL_FILE, "{\"path\":\"references/nothing.md\"}",
	    &e);
	T(strstr(s, "no such file") != NULL);
	teardown();
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A child swaps the folder d and a link s (to ../outside) as fast as it
 * can while the tools read d/secret.txt and write d/wN.txt: nothing may
 * come from, or land in, outside/. Bounded: 2 s and at least 2,000
 * rounds, at most 20,000. */
static void
race(void)
{
	char d[512], s[512], args[96], b[16];
	struct arena_mark m;
	const char *r;
	double end;
	unsigned i, k, inside = 0, leaked = 0, refused = 0;
	pid_t pid;
	int e, st, dfd, fd;

	setup();
	env_init();
	mk(ws, "d");
	t_put(ws, "d/secret.txt", "inside\n");
	ln("../outside", ws, "s");
	sub(d, sizeof(d), ws, "d");
	sub(s, sizeof(s), ws, "s");
	if (syscall(SYS_renameat2, AT_FDCWD, d, AT_FDCWD, s,
	    RENAME_EXCHANGE) != 0 || syscall(SYS_renameat2, AT_FDCWD, d,
	    AT_FDCWD, s, RENAME_EXCHANGE) != 0) {
		fprintf(stderr, "test_fsafe: race: no RENAME_EXCHANGE here "
		    "(%s): not run\n", strerror(errno));
		teardown();
		return;
	}
	if ((pid = fork()) == 0) {
		end = now() + 5;
		for (i = 0; now() < end; i++)
			syscall(SYS_renameat2, AT_FDCWD, d, AT_FDCWD, s,
			    RENAME_EXCHANGE);
		_exit(0);
	}
	end = now() + 2;
	dfd = open(ws, O_PATH | O_DIRECTORY | O_CLOEXEC);
	m = arena_mark(&t_arena);
	for (i = 0; i < 20000 && (i < 2000 || now() < end); i++) {
		arena_reset_to(&t_arena, m);
		r = call(T_READ_FILE, "{\"path\":\"d/secret.txt\"}", &e);
		if (strstr(r, "OUTSIDE") != NULL)
			leaked++;
		else if (e == 0)
			inside++;
		else
			refused++;
		snprintf(args, sizeof(args), "{\"path\":\"d/w%u.txt\","
		    "\"content\":\"x\"}", i);
		(void)call(T_WRITE_FILE, args, &e);
		/* The walk, and links followed where they may be. */
		for (k = 0; k < 3; k++) {
			fd = fsafe_open(dfd, "d/secret.txt", O_RDONLY,
			    0, k == 0 ? FSAFE_WALK | FSAFE_NO_SYMLINKS :
			    k == 1 ? FSAFE_WALK : 0);
			if (fd < 0)
				continue;
			memset(b, 0, sizeof(b));
			if (read(fd, b, sizeof(b) - 1) > 0 && b[0] == 'O')
				leaked++;
			close(fd);
		}
		snprintf(args, sizeof(args), "d/v%u.txt", i);
		(void)fsafe_write(dfd, args, "x", 1, 0600, FSAFE_WALK |
		    FSAFE_NO_SYMLINKS);
	}
	close(dfd);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	arena_reset_to(&t_arena, m);
	fprintf(stderr, "test_fsafe: race: %u rounds: %u inside, %u refused, "
	    "%u leaked\n", i, inside, refused, leaked);
	T_EQI(leaked, 0);
	T_EQI(entries(outside), 1);		/* secret.txt alone */
	teardown();
}

static const struct unit_case cases[] = {
	{ "fsafe_paths", fsafe_paths },
	{ "fsafe_writes", fsafe_writes },
	{ "ws_basic", ws_basic },
	{ "ws_symlinks", ws_symlinks },
	{ "ws_no_oracle", ws_no_oracle },
	{ "ws_fifo", ws_fifo },
	{ "ws_names", ws_names },
	{ "skill_files", skill_files },
	{ "race", race },
};

const struct unit_suite suite_fsafe = { "fsafe", cases, ARRAY_LEN(cases) };
