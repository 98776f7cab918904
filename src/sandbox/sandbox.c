/* sandbox.c - spawn and supervision of confined runs (see sandbox.h);
 * the probe, the plan of layers and allowed-tools are in sandbox_policy.c,
 * output capture and the audit record in sandbox_output.c, the layers in
 * sandbox_{rlimit,landlock,seccomp}.c.
 *
 * The child narrows itself in the order of DESIGN.md: new session and
 * process group, fds, chdir, rlimits, network namespace, the Landlock
 * ruleset (made while every path it names can still be opened), uid and
 * gid, no_new_privs, Landlock, seccomp, then execve with the scrubbed
 * environment (built, like the private tmp, by the parent). The network
 * namespace comes before the uid drop because root needs no user
 * namespace for it; no_new_privs before Landlock and seccomp because the
 * kernel wants it for an unprivileged caller. The child tells the parent
 * through a close-on-exec pipe what is in force, or which step failed:
 * EOF after the report means execve worked.
 *
 * The parent feeds stdin and reads stdout and stderr in one poll loop (a
 * pidfd, where the kernel has them, tells when the child exits), kills the
 * whole process group on timeout and again once the child has exited, and
 * reaps what the child left behind (it comes to us as its subreaper), so
 * that nothing survives a run. The child leads a new session and seccomp
 * refuses setsid and setpgid, so every descendant stays in that group;
 * without seccomp a descendant that calls setsid escapes the final kill
 * (reported: the seccomp layer is missing). */
#include "sandbox/sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "sandbox/sandbox_int.h"
#include "base/sha256.h"
#include "base/str.h"
#include "config.h"

/* The uid drop happens in the single-threaded child: raw calls do, where
 * musl's would add their every-thread machinery (about 2 KB). On 32-bit
 * ARM the calls with 32-bit ids are the *32 ones. */
#ifdef SYS_setuid32
#define SYS_SETUID	SYS_setuid32
#define SYS_SETGID	SYS_setgid32
#define SYS_SETGROUPS	SYS_setgroups32
#else
#define SYS_SETUID	SYS_setuid
#define SYS_SETGID	SYS_setgid
#define SYS_SETGROUPS	SYS_setgroups
#endif

#define SAFE_PATH	"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:" \
			"/sbin:/bin"
#define MAX_ENV		(14 + SBX_MAX_SECRETS)
#define GRACE_MS	200	/* for pipes still held after the exit */
#define TICK_MS		100	/* longest poll: signals, exits without pidfd */
#define NET_LAYERS	(SBX_L_LANDLOCK_NET | SBX_L_NETNS | SBX_L_SECCOMP_NET)
#define BIT(l)		(__builtin_ctz(l))

enum step { ST_NONE = -1, ST_OK, ST_SETUP, ST_CHDIR, ST_USER, ST_REQUIRE,
	ST_LAYER, ST_EXEC };

/* The child's report. EOF after ST_OK: execve worked. */
struct report {
	int		step;
	int		err;		/* errno of the failed step */
	unsigned	layers;		/* in force */
	int		lerr[SBX_NLAYERS];	/* errno of a failed layer */
};

struct child {
	const struct sbx_policy	*p;
	char *const		*argv, *const *envp;
	const char		*root, *ws, *cwd, *tmp;	/* absolute */
	int			 fd[4];	/* stdin, stdout, stderr, report */
	unsigned		 want, require;
	int			 abi;
	uid_t			 uid;	/* the user to drop to */
	gid_t			 gid;
	gid_t			 groups[SBX_MAX_GROUPS];	/* kept */
	unsigned		 ngroups;
	const char *const	*reads;	/* Read(/PATH) */
	unsigned		 nreads;
	pid_t			 parent;
};

/* We are a child subreaper: orphans come to us. */
static int subreaper;

static volatile sig_atomic_t got_signal;

static long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Child side. */

static void ATTR_NORETURN
child_fail(int fd, struct report *rep, int step)
{
	rep->step = step;
	rep->err = errno;
	(void)!write(fd, rep, sizeof(*rep));
	_exit(127);
}

static void
put_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		(void)!write(fd, text, strlen(text));
		close(fd);
	}
}

/* A network namespace of our own: only a loopback that is down. Root
 * unshares it directly; anyone else inside a user namespace that maps
 * their own ids, so files and `id` look the same. */
static int
netns(void)
{
	char map[48];
	unsigned uid = getuid(), gid = getgid();

	if (geteuid() == 0)
		return unshare(CLONE_NEWNET) != 0 ? errno : 0;
	if (unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0)
		return errno;
	/* Our /proc/self files belong to root while we are not dumpable
	 * (inherited from the parent, which hides its secrets that way). */
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	put_file("/proc/self/setgroups", "deny");
	snprintf(map, sizeof(map), "%u %u 1\n", uid, uid);
	put_file("/proc/self/uid_map", map);
	snprintf(map, sizeof(map), "%u %u 1\n", gid, gid);
	put_file("/proc/self/gid_map", map);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	return 0;
}

static void
close_from(int lowfd)
{
	struct rlimit rl;
	int fd, max = 65536;

	if (syscall(__NR_close_range, lowfd, ~0u, 0) == 0)
		return;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)max)
		max = (int)rl.rlim_cur;
	for (fd = lowfd; fd < max; fd++)
		close(fd);
}

/* Record layer l as in force when e == 0, else its errno. */
static void
layer(struct report *rep, unsigned l, int e)
{
	if (e == 0)
		rep->layers |= l;
	else
		rep->lerr[BIT(l)] = e;
}

static void ATTR_NORETURN
run_child(const struct child *c)
{
	const struct sbx_policy *p = c->p;
	struct report rep;
	struct sigaction sa;
	sigset_t none;
	int i, fd[4], rfd = c->fd[3], rs = -1;

	memset(&rep, 0, sizeof(rep));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (i = 1; i < _NSIG; i++)
		sigaction(i, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (setsid() < 0)
		child_fail(rfd, &rep, ST_SETUP);
	/* The pipes become 0-3, through fds above them so none clobbers
	 * another; then everything else is closed. */
	for (i = 0; i < 4; i++)
		if ((fd[i] = fcntl(c->fd[i], F_DUPFD_CLOEXEC, 10)) < 0)
			child_fail(rfd, &rep, ST_SETUP);
	for (i = 0; i < 4; i++)
		if (dup2(fd[i], i) < 0)
			child_fail(rfd, &rep, ST_SETUP);
	rfd = 3;
	if (fcntl(rfd, F_SETFD, FD_CLOEXEC) != 0)
		child_fail(rfd, &rep, ST_SETUP);
	close_from(4);
	if (chdir(c->cwd) != 0)
		child_fail(rfd, &rep, ST_CHDIR);
	if (c->want & SBX_L_RLIMIT)
		layer(&rep, SBX_L_RLIMIT, -sbx_rlimit_apply(p, c->want &
		    SBX_L_USERDROP ? c->uid : getuid()));
	if (c->want & SBX_L_NETNS)
		layer(&rep, SBX_L_NETNS, netns());
	if ((c->want & SBX_L_LANDLOCK) && (rs = sbx_landlock_prepare(c->root,
	    c->ws, c->tmp, c->reads, c->nreads, p->crew, p->ncrew, c->abi,
	    !!(c->want & SBX_L_LANDLOCK_NET))) < 0)
		layer(&rep, SBX_L_LANDLOCK, -rs);
	if (c->want & SBX_L_USERDROP) {
		/* Our pipes, so that /dev/stdout can be opened again. */
		for (i = 0; i < 3; i++)
			(void)!fchown(i, c->uid, c->gid);
		if (syscall(SYS_SETGROUPS, c->ngroups, c->groups) != 0 ||
		    syscall(SYS_SETGID, c->gid) != 0 ||
		    syscall(SYS_SETUID, c->uid) != 0)
			child_fail(rfd, &rep, ST_USER);
		if (syscall(SYS_SETUID, 0) == 0) {
			errno = EPERM;
			child_fail(rfd, &rep, ST_USER);
		}
		rep.layers |= SBX_L_USERDROP;
	}
	/* After the uid change, which clears it. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == 0 &&
	    getppid() != c->parent)
		_exit(127);
	if (c->want & SBX_L_NNP)
		layer(&rep, SBX_L_NNP, prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ?
		    errno : 0);
	if ((c->want & SBX_L_LANDLOCK) && rs >= 0) {
		layer(&rep, SBX_L_LANDLOCK, -sbx_landlock_restrict(rs));
		if (rep.layers & SBX_L_LANDLOCK)
			rep.layers |= c->want & SBX_L_LANDLOCK_NET;
	}
	if (c->want & SBX_L_SECCOMP) {
		layer(&rep, SBX_L_SECCOMP, -sbx_seccomp_apply(!!(c->want &
		    SBX_L_SECCOMP_NET), !!(c->want & SBX_L_SECCOMP_UNIX)));
		if (rep.layers & SBX_L_SECCOMP)
			rep.layers |= c->want & (SBX_L_SECCOMP_NET |
			    SBX_L_SECCOMP_UNIX);
	}
	rep.layers |= c->want & (SBX_L_ENV | SBX_L_PRIVTMP);
	/* A layer this kernel offers that did not apply is a refusal, never
	 * a quiet downgrade. */
	if (c->require & ~rep.layers) {
		errno = 0;
		child_fail(rfd, &rep, ST_REQUIRE);
	}
	if (c->want & ~rep.layers) {
		errno = 0;
		child_fail(rfd, &rep, ST_LAYER);
	}
	if (write(rfd, &rep, sizeof(rep)) != sizeof(rep))
		_exit(127);
	execve(c->argv[0], c->argv, c->envp);
	child_fail(rfd, &rep, ST_EXEC);
}

/* Parent side. */

static void
on_signal(int sig)
{
	got_signal = sig;
}

static int
env_add(struct arena *a, char **env, size_t *n, const char *k,
    const char *v)
{
	return (env[(*n)++] = arena_printf(a, "%s=%s", k, v)) == NULL ?
	    -E_NOMEM : 0;
}

/* A secret may not replace what the sandbox sets, nor steer the loader. */
static int
secret_ok(const char *name)
{
	static const char *const ours[] = { "PATH", "HOME", "TMPDIR", "LANG",
	    NULL };
	const char *const *o;

	if (*name == '\0' || strchr(name, '=') != NULL ||
	    strncmp(name, "SKILL_", 6) == 0 || strncmp(name, "LD_", 3) == 0)
		return 0;
	for (o = ours; *o != NULL; o++)
		if (strcmp(name, *o) == 0)
			return 0;
	return 1;
}

static char **
build_env(struct arena *a, const struct child *c, const char *ws,
    const char *input, size_t input_len)
{
	extern char **environ;
	const struct sbx_policy *p = c->p;
	size_t n = 0, extra = 0, i;
	const char *v;
	char **env;
	int e;

	if (!(c->want & SBX_L_ENV))
		while (environ[extra] != NULL)
			extra++;
	if ((env = arena_alloc(a, (MAX_ENV + extra + 1) * sizeof(*env))) ==
	    NULL)
		return NULL;
	e = env_add(a, env, &n, "PATH", SAFE_PATH);
	e |= env_add(a, env, &n, "HOME", ws != NULL ? ws : c->tmp != NULL ?
	    c->tmp : "/");
	e |= env_add(a, env, &n, "SKILL_ROOT", c->root);
	e |= env_add(a, env, &n, "SKILL_NAME", p->skill_name != NULL ?
	    p->skill_name : "");
	if (ws != NULL)
		e |= env_add(a, env, &n, "SKILL_WORKSPACE", ws);
	if (c->tmp != NULL)
		e |= env_add(a, env, &n, "TMPDIR", c->tmp);
	e |= env_add(a, env, &n, "LANG", "C");
	/* Under Bash(prefix:*) rules, git reads no configuration the
	 * model could have written (HOME is the workspace): an alias or a
	 * pager there would run any command behind an allowed "git". */
	if (p->nshell_allow > 0) {
		e |= env_add(a, env, &n, "GIT_CONFIG_GLOBAL", "/dev/null");
		e |= env_add(a, env, &n, "GIT_CONFIG_NOSYSTEM", "1");
	}
	if (input_len <= SBX_ENV_INPUT_MAX &&
	    memchr(input, '\0', input_len) == NULL &&
	    (env[n++] = arena_printf(a, "SKILL_INPUT=%.*s", (int)input_len,
	    input)) == NULL)
		e = -E_NOMEM;
	for (i = 0; i < p->nsecrets && i < SBX_MAX_SECRETS; i++) {
		/* NAME=VALUE (an MCP server's env): set as it is. */
		if (HAVE_MCP && (v = strchr(p->secrets[i], '=')) != NULL) {
			char k[64];

			snprintf(k, sizeof(k), "%.*s", (int)(v -
			    p->secrets[i]), p->secrets[i]);
			if (secret_ok(k))
				env[n++] = (char *)p->secrets[i];
			continue;
		}
		if (secret_ok(p->secrets[i]) &&
		    (v = getenv(p->secrets[i])) != NULL)
			e |= env_add(a, env, &n, p->secrets[i], v);
	}
	for (i = 0; i < extra; i++)
		env[n++] = environ[i];
	env[n] = NULL;
	return e != 0 ? NULL : env;
}

struct sup {
	pid_t		 pid;
	int		 fd[3];		/* stdin (we write), stdout, stderr */
	int		 pidfd;
	const char	*in;
	size_t		 in_len, in_off;
	struct sbx_cap	 cap[2];
	struct sha256	 sha;		/* of stdout */
	int		 status, exited, killed, reaped, timed_out;
};

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void
pump(struct sup *s, int i)
{
	char buf[4096];		/* a pipe page at a time: stack stays small */
	ssize_t k;

	if (i == 0) {
		k = write(s->fd[0], s->in + s->in_off, s->in_len - s->in_off);
		if (k > 0)
			s->in_off += (size_t)k;
		if (s->in_off == s->in_len || (k < 0 && errno != EAGAIN &&
		    errno != EINTR))
			close_fd(&s->fd[0]);
		return;
	}
	k = read(s->fd[i], buf, sizeof(buf));
	if (k > 0) {
		sbx_cap_feed(&s->cap[i - 1], buf, (size_t)k);
		if (i == 1)
			sha256_feed(&s->sha, buf, (size_t)k);
	} else if (k == 0 || (errno != EAGAIN && errno != EINTR))
		close_fd(&s->fd[i]);
}

/* Has the child exited? It stays a zombie, so that its pid keeps
 * naming the process group until the group is reaped. */
static int
has_exited(pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) ==
	    0 && si.si_pid == pid;
}

/* Kill and reap the whole group: the child and whatever it left behind,
 * which comes to us as its subreaper (without one, as under qemu-user,
 * init reaps the orphans). Members that cannot die (stuck in the kernel)
 * are given up after a second. */
static void
reap_group(struct sup *s)
{
	struct timespec ms = { 0, 1000000 };
	long until = now_ms() + 1000;
	pid_t w;
	int wst;

	for (;;) {
		if ((w = waitpid(-s->pid, &wst, WNOHANG)) > 0) {
			if (w == s->pid) {
				s->status = wst;
				s->reaped = 1;
			}
			continue;
		}
		if ((w < 0 && !subreaper) || kill(-s->pid, SIGKILL) != 0 ||
		    now_ms() >= until)
			break;
		nanosleep(&ms, NULL);
	}
	if (!s->reaped && waitpid(s->pid, &s->status, 0) == s->pid)
		s->reaped = 1;
}

/* Feed stdin, drain stdout and stderr, until the child has exited and
 * its pipes are closed; kill the group on timeout, on a signal to us, and
 * once the child has exited. */
static void
supervise(struct sup *s, long deadline)
{
	struct pollfd pf[4];
	int idx[4], n, i, backoff = 1;
	long now, grace = 0, wait;

	for (;;) {
		now = now_ms();
		if (!s->exited && !s->killed && (now >= deadline ||
		    got_signal)) {
			s->timed_out = !got_signal;
			s->killed = 1;
			kill(-s->pid, SIGKILL);
		}
		if (!s->exited && has_exited(s->pid)) {
			s->exited = 1;
			kill(-s->pid, SIGKILL);
			grace = now + GRACE_MS;
		}
		if (s->exited && ((s->fd[1] < 0 && s->fd[2] < 0) ||
		    now >= grace))
			break;
		for (n = i = 0; i < 3; i++)
			if (s->fd[i] >= 0) {
				idx[n] = i;
				pf[n].fd = s->fd[i];
				pf[n++].events = i == 0 ? POLLOUT : POLLIN;
			}
		if (s->pidfd >= 0 && !s->exited) {
			idx[n] = 3;
			pf[n].fd = s->pidfd;
			pf[n++].events = POLLIN;
		}
		wait = MIN(s->exited ? grace - now : deadline - now, TICK_MS);
		if (!s->exited && s->pidfd < 0 && s->fd[1] < 0 &&
		    s->fd[2] < 0) {
			wait = MIN(wait, backoff);
			backoff = MIN(backoff * 2, TICK_MS);
		}
		if (s->killed)
			wait = MIN(wait, 10);
		if (poll(pf, (nfds_t)n, (int)MAX(wait, 0)) <= 0)
			continue;
		for (i = 0; i < n; i++)
			if (pf[i].revents != 0 && idx[i] < 3)
				pump(s, idx[i]);
	}
	reap_group(s);
}

static void
result_status(struct sbx_result *r, int wst)
{
	if (WIFEXITED(wst))
		r->status = WEXITSTATUS(wst);
	else if (WIFSIGNALED(wst))
		r->signal = WTERMSIG(wst);
}

/* Read the child's reports until EOF; the last one counts. */
static void
read_report(int fd, struct report *rep)
{
	struct report x;
	size_t got = 0;
	ssize_t k;

	rep->step = ST_NONE;
	for (;;) {
		k = read(fd, (char *)&x + got, sizeof(x) - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		if ((got += (size_t)k) == sizeof(x)) {
			*rep = x;
			got = 0;
		}
	}
}

/* Refusals and failures of the child before execve into r->why. */
static int
child_failed(const struct sbx_policy *p, unsigned req, unsigned want,
    const struct report *rep, struct sbx_result *r)
{
	const char *what[] = { "setting up the child", "the working folder",
	    "dropping to an unprivileged user" };
	unsigned i;

	if (rep->step == ST_REQUIRE || rep->step == ST_LAYER) {
		i = BIT(((rep->step == ST_REQUIRE ? req : want) &
		    ~rep->layers) | 1u << (SBX_NLAYERS - 1));
		snprintf(r->why, sizeof(r->why), "%s layer %s not in force: "
		    "%s%s", rep->step == ST_REQUIRE ? "required" : "sandbox",
		    sbx_layer_name(1u << i), sbx_reason(p, 1u << i, rep->lerr,
		    rep->layers),
		    rep->step == ST_LAYER ? " (this kernel offers it and it "
		    "failed to apply: refusing to run without it)" : "");
		r->denied = 1;
		return -E_DENIED;
	}
	if (rep->step == ST_NONE) {
		snprintf(r->why, sizeof(r->why), "the child died before exec");
		return -E_IO;
	}
	snprintf(r->why, sizeof(r->why), "%s: %s", what[rep->step - 1],
	    strerror(rep->err));
	r->denied = rep->step == ST_USER;
	return r->denied ? -E_DENIED : -E_IO;
}

static char *
abspath(struct arena *a, const char *path)
{
	char buf[PATH_MAX];

	return realpath(path, buf) != NULL ? arena_strdup(a, buf) : NULL;
}

/* The id of group `name` in /etc/group (name:password:gid:members), or
 * -1: musl's getgrnam would bring its nscd client for this one look-up.
 * A line longer than the buffer comes in pieces; only a line's first
 * piece is matched. */
static long
group_id(const char *name)
{
	char line[256], *c;
	size_t n = strlen(name);
	long id = -1;
	int bol = 1;
	FILE *f;

	if ((f = fopen("/etc/group", "re")) == NULL)
		return -1;
	while (id < 0 && fgets(line, sizeof(line), f) != NULL) {
		if (bol && strncmp(line, name, n) == 0 && line[n] == ':' &&
		    (c = strchr(line + n + 1, ':')) != NULL && c[1] >= '0' &&
		    c[1] <= '9')
			id = strtol(c + 1, NULL, 10);
		bol = strchr(line, '\n') != NULL;
	}
	fclose(f);
	return id;
}

/* One child being started: what sbx_run and sbx_spawn share. */
struct launch {
	struct child	 c;
	struct sbx_policy pc;		/* p, as the child applies it */
	char		*tmp;		/* the private tmp, to remove */
	const char	*ws;
	unsigned	 expect, req;
	struct report	 rep;
};

/* Plan the layers, make the paths absolute, the private tmp, argv and
 * the environment of a child of p. 0, or -E_* with r->why. */
static int
launch_prepare(struct arena *a, const struct sbx_policy *p,
    const char *const *argv, const char *input, size_t input_len,
    struct launch *L, struct sbx_result *r)
{
	struct child *c = &L->c;
	const struct sbx_probe *k;
	long g;
	char tmpl[PATH_MAX], **av = (char **)argv;
	unsigned i;
	size_t argc;

	memset(&L->c, 0, sizeof(L->c));
	L->tmp = NULL;
	L->ws = NULL;
	L->pc = *p;
	k = sbx_probed();
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (!subreaper)
		subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
	c->p = &L->pc;
	c->abi = k->landlock_abi;
	c->parent = getpid();
	c->want = sbx_plan(p, &L->expect);
	/* What a permission lifts cannot be required of its run. */
	L->req = p->require & ~(p->perms & SBX_NET ? NET_LAYERS : 0) &
	    ~(p->perms & SBX_UNIX ? SBX_L_SECCOMP_UNIX : 0);
	c->require = L->req;
	if (L->req & ~c->want) {
		i = BIT(L->req & ~c->want);
		snprintf(r->why, sizeof(r->why), "required layer %s not in "
		    "force: %s", sbx_layer_name(1u << i), sbx_reason(p, 1u << i,
		    NULL, 0));
		r->denied = 1;
		return -E_DENIED;
	}
	/* Absolute before the child changes folder: a relative path
	 * would name something else there (and Landlock would lose it). */
	if ((c->root = abspath(a, p->skill_root)) == NULL ||
	    (p->workspace != NULL && (L->ws = abspath(a, p->workspace)) ==
	    NULL) || (p->cwd != NULL && (c->cwd = abspath(a, p->cwd)) ==
	    NULL)) {
		snprintf(r->why, sizeof(r->why), "%s: %s", c->root == NULL ?
		    p->skill_root : L->ws == NULL && p->workspace != NULL ?
		    p->workspace : p->cwd, strerror(errno));
		return errno == ENOMEM ? -E_NOMEM : -E_IO;
	}
	c->ws = L->ws;
	if (c->cwd == NULL)
		c->cwd = c->root;
	c->uid = p->uid != 0 ? p->uid : SBX_NOBODY;
	c->gid = p->uid != 0 ? p->gid : SBX_NOBODY;
	if (p->perms & SBX_READ) {
		c->reads = p->reads;
		c->nreads = MIN(p->nreads, SBX_MAX_READS);
	}
	/* Group(NAME): kept through the uid drop; a group this system lacks
	 * (adm on OpenWrt) is skipped. Without the drop the script has the
	 * groups of the user who runs skillbox, no more. */
	for (i = 0; (p->perms & SBX_GROUP) && i < p->ngroups &&
	    i < SBX_MAX_GROUPS; i++)
		if ((g = group_id(p->groups[i])) >= 0)
			c->groups[c->ngroups++] = (gid_t)g;
	if (c->want & SBX_L_PRIVTMP) {
		snprintf(tmpl, sizeof(tmpl), "%s/skillbox-tmp.XXXXXX",
		    p->tmp_parent != NULL ? p->tmp_parent : "/tmp");
		if (mkdtemp(tmpl) == NULL || ((c->want & SBX_L_USERDROP) &&
		    chown(tmpl, c->uid, c->gid) != 0)) {
			snprintf(r->why, sizeof(r->why), "private tmp in %s: "
			    "%s", p->tmp_parent, strerror(errno));
			rmdir(tmpl);
			return -E_IO;
		}
		if ((L->tmp = arena_strdup(a, tmpl)) == NULL) {
			rmdir(tmpl);
			return -E_NOMEM;
		}
		c->tmp = L->tmp;
	}
	for (argc = 0; argv[argc] != NULL; argc++)
		;
	if (k->mem_ignored && (c->want & SBX_L_RLIMIT) &&
	    L->pc.mem_bytes > 0) {
		/* qemu-user ignores RLIMIT_DATA: let the shell set it. */
		if ((av = arena_alloc(a, (argc + 4) * sizeof(*av))) == NULL)
			return -E_NOMEM;
		av[0] = "/bin/sh";
		av[1] = "-c";
		av[2] = arena_printf(a, "ulimit -d %zu && exec \"$0\" \"$@\"",
		    L->pc.mem_bytes >> 10);
		memcpy(av + 3, argv, (argc + 1) * sizeof(*av));
		if (av[2] == NULL)
			return -E_NOMEM;
	}
	c->argv = av;
	if ((c->envp = build_env(a, c, L->ws, input, input_len)) == NULL)
		return -E_NOMEM;
	return 0;
}

/* Fork the child with new pipes for its stdin, stdout and stderr, and
 * wait for its report (it has exec'd, or failed). Our ends (stdin's to
 * write, stdout's and stderr's to read) go to fd[0..3). The pid, or -1
 * with r->why and nothing left open. */
static pid_t
launch(struct launch *L, int *fd, struct sbx_result *r)
{
	int p[4][2] = { { -1, -1 }, { -1, -1 }, { -1, -1 }, { -1, -1 } }, i;
	pid_t pid = -1;

	for (i = 0; i < 4; i++)
		if (pipe2(p[i], O_CLOEXEC) != 0) {
			snprintf(r->why, sizeof(r->why), "pipe: %s",
			    strerror(errno));
			goto out;
		}
	L->c.fd[0] = p[0][0];
	for (i = 1; i < 4; i++)
		L->c.fd[i] = p[i][1];
	if ((pid = fork()) == 0)
		run_child(&L->c);
	close_fd(&p[0][0]);
	for (i = 1; i < 4; i++)
		close_fd(&p[i][1]);
	if (pid < 0) {
		snprintf(r->why, sizeof(r->why), "fork: %s", strerror(errno));
		goto out;
	}
	read_report(p[3][0], &L->rep);
	fd[0] = p[0][1], fd[1] = p[1][0], fd[2] = p[2][0];
	p[0][1] = p[1][0] = p[2][0] = -1;
out:
	for (i = 0; i < 8; i++)
		close_fd(&p[i / 2][i % 2]);
	return pid;
}

/* What the child's report says into r: the layers in force and missing,
 * a failure before execve. 0 or -E_*. */
static int
launch_result(struct arena *a, const struct sbx_policy *p,
    const struct launch *L, const char *prog, struct sbx_result *r)
{
	const struct report *rep = &L->rep;
	int e = 0;

	if (rep->step == ST_EXEC) {
		r->status = rep->err == ENOENT ? 127 : 126;
		snprintf(r->why, sizeof(r->why), "%s: %s", prog,
		    strerror(rep->err));
	} else if (rep->step != ST_OK)
		e = child_failed(p, L->req, L->c.want, rep, r);
	if (rep->step != ST_NONE) {
		r->layers = rep->layers;
		r->missing = L->expect & ~rep->layers;
		if (r->layers & SBX_L_LANDLOCK_NET)
			r->missing &= ~SBX_L_NETNS;
		sbx_warn_missing(p, r->missing, rep->lerr, rep->layers);
	}
	r->as_root = getuid() == 0 && rep->step != ST_NONE &&
	    !(r->layers & SBX_L_USERDROP);
	if ((r->confinement = (char *)sbx_layers_str(a, r->layers)) == NULL ||
	    (r->as_root && (r->confinement = arena_printf(a, "%s AS-ROOT",
	    r->confinement)) == NULL))
		e = e != 0 ? e : -E_NOMEM;
	return e;
}

static void
launch_cleanup(struct launch *L)
{
	if (L->tmp != NULL && sbx_rmtree(L->tmp) != 0)
		log_warn("sandbox: cannot remove %s", L->tmp);
	L->tmp = NULL;
}

/* see sandbox.h */
int
sbx_run(struct arena *a, const struct sbx_policy *p,
    const char *const *argv, const char *input, size_t input_len,
    struct sbx_result *r)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
	struct sigaction sa, old[ARRAY_LEN(sigs)];
	struct launch L;
	struct sup s;
	size_t cap = p->out_cap;
	unsigned i;
	long t0;
	int e;

	memset(r, 0, sizeof(*r));
	memset(&s, 0, sizeof(s));
	r->status = -1;
	if (input == NULL)
		input = "";
	if ((e = launch_prepare(a, p, argv, input, input_len, &L, r)) != 0)
		goto out;
	if ((r->out = arena_alloc(a, cap + SBX_MARK_MAX + 1)) == NULL ||
	    (r->err = arena_alloc(a, cap + SBX_MARK_MAX + 1)) == NULL) {
		e = -E_NOMEM;
		goto out;
	}
	sbx_cap_init(&s.cap[0], r->out, cap);
	sbx_cap_init(&s.cap[1], r->err, cap);
	sha256_init(&s.sha);
	memset(&sa, 0, sizeof(sa));
	got_signal = 0;
	for (i = 0; i < ARRAY_LEN(sigs); i++) {
		sa.sa_handler = sigs[i] == SIGPIPE ? SIG_IGN : on_signal;
		sigaction(sigs[i], &sa, &old[i]);
	}
	t0 = now_ms();
	if ((s.pid = launch(&L, s.fd, r)) < 0) {
		e = -E_IO;
		goto restore;
	}
	s.pidfd = (int)syscall(__NR_pidfd_open, s.pid, 0);
	for (i = 0; i < 3; i++)
		fcntl(s.fd[i], F_SETFL, O_NONBLOCK);
	if (L.rep.step != ST_OK || input_len == 0)
		close_fd(&s.fd[0]);
	s.in = input;
	s.in_len = input_len;
	supervise(&s, t0 + (long)(p->timeout_ms > 0 ? p->timeout_ms : 30000));
	r->ms = now_ms() - t0;
	for (i = 0; i < 3; i++)
		close_fd(&s.fd[i]);
	close_fd(&s.pidfd);
	result_status(r, s.status);
	r->timed_out = s.timed_out;
	if (s.timed_out)
		snprintf(r->why, sizeof(r->why), "timed out after %u ms: the "
		    "process group was killed", p->timeout_ms);
	else if (r->signal == SIGSYS)
		snprintf(r->why, sizeof(r->why), "killed by seccomp: a system "
		    "call through another ABI");
	r->out_len = sbx_cap_finish(&s.cap[0]);
	r->err_len = sbx_cap_finish(&s.cap[1]);
	r->out_total = s.cap[0].total;
	r->err_total = s.cap[1].total;
	sha256_final(&s.sha, r->out_sha256);
	e = launch_result(a, p, &L, argv[0], r);
restore:
	for (i = 0; i < ARRAY_LEN(sigs); i++)
		sigaction(sigs[i], &old[i], NULL);
out:
	launch_cleanup(&L);
	if ((i = (unsigned)got_signal) != 0) {
		got_signal = 0;
		raise((int)i);
	}
	return e;
}

/* see sandbox.h */
int
sbx_spawn(struct arena *a, const struct sbx_policy *p,
    const char *const *argv, struct sbx_proc *pr, struct sbx_result *r)
{
	struct launch *L;
	int e, fd[3];

	memset(r, 0, sizeof(*r));
	memset(pr, 0, sizeof(*pr));
	pr->pid = -1;
	pr->in = pr->out = pr->err = -1;
	r->status = -1;
	if ((L = arena_alloc(a, sizeof(*L))) == NULL)
		return -E_NOMEM;
	if ((e = launch_prepare(a, p, argv, "", 0, L, r)) != 0) {
		launch_cleanup(L);
		return e;
	}
	/* The tmp's path outlives `a` (the process may end in another
	 * turn): copied, or refused before anything runs. */
	if (L->tmp != NULL && strlen(L->tmp) >= sizeof(pr->tmp)) {
		snprintf(r->why, sizeof(r->why), "private tmp: %s is longer "
		    "than %d bytes", L->tmp, SBX_TMP_MAX - 1);
		launch_cleanup(L);
		return -E_LIMIT;
	}
	if ((pr->pid = launch(L, fd, r)) < 0) {
		launch_cleanup(L);
		return -E_IO;
	}
	pr->in = fd[0];
	pr->out = fd[1];
	pr->err = fd[2];
	if (L->tmp != NULL)
		memcpy(pr->tmp, L->tmp, strlen(L->tmp) + 1);
	if ((e = launch_result(a, p, L, argv[0], r)) != 0 ||
	    L->rep.step != ST_OK) {
		sbx_proc_end(pr, 0);
		return e != 0 ? e : -E_IO;
	}
	return 0;
}

/* see sandbox.h */
int
sbx_proc_end(struct sbx_proc *pr, unsigned grace_ms)
{
	struct timespec ms = { 0, 1000000 };
	struct sup s;
	long until;
	int wst = 0;

	close_fd(&pr->in);
	if (pr->pid > 0) {
		/* stdin closed: a well-behaved server exits by itself. */
		for (until = now_ms() + grace_ms; now_ms() < until &&
		    !has_exited(pr->pid); )
			nanosleep(&ms, NULL);
		if (!has_exited(pr->pid)) {
			kill(-pr->pid, SIGTERM);
			for (until = now_ms() + grace_ms; now_ms() < until &&
			    !has_exited(pr->pid); )
				nanosleep(&ms, NULL);
		}
		memset(&s, 0, sizeof(s));
		s.pid = pr->pid;
		reap_group(&s);
		wst = s.status;
		pr->pid = -1;
	}
	close_fd(&pr->out);
	close_fd(&pr->err);
	if (pr->tmp[0] != '\0' && sbx_rmtree(pr->tmp) != 0)
		log_warn("sandbox: cannot remove %s", pr->tmp);
	pr->tmp[0] = '\0';
	return wst;
}

/* see sandbox.h */
const char *
sbx_which(struct arena *a, const char *name)
{
	const char *d = SAFE_PATH, *e;
	char *path;

	for (; *d != '\0'; d = *e != '\0' ? e + 1 : e) {
		e = d + strcspn(d, ":");
		if ((path = arena_printf(a, "%.*s/%s", (int)(e - d), d,
		    name)) != NULL && access(path, X_OK) == 0)
			return path;
	}
	return NULL;
}

/* see sandbox.h */
int
sbx_script_argv(struct arena *a, const char *path, const char *const *args,
    unsigned nargs, const char ***out, const char **missing)
{
	static const struct {
		const char	*ext, *prog;
	} by_ext[] = {
		{ ".py", "python3" }, { ".js", "node" }, { ".mjs", "node" },
		{ ".cjs", "node" },
	};
	const char *base = strrchr(path, '/'), *dot, *prog = NULL, **av;
	char head[256], *s, *e;
	ssize_t k;
	unsigned n = 0, i;
	int fd;

	*missing = NULL;
	if ((av = arena_alloc(a, (nargs + 4) * sizeof(*av))) == NULL)
		return -E_NOMEM;
	*out = av;
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
		return -E_IO;
	k = read(fd, head, sizeof(head) - 1);
	close(fd);
	head[k > 0 ? k : 0] = '\0';
	if (k >= 2 && head[0] == '#' && head[1] == '!') {
		/* Without the execute bit (zip archives lose it) the "#!"
		 * line is followed by hand: interpreter and one argument. */
		if (access(path, X_OK) != 0) {
			head[strcspn(head, "\r\n")] = '\0';
			s = head + 2 + strspn(head + 2, " \t");
			e = s + strcspn(s, " \t");
			if (*e != '\0')
				*e++ = '\0';
			e += strspn(e, " \t");
			if (*s == '\0' || (av[n++] = arena_strdup(a, s)) ==
			    NULL || (*e != '\0' && (av[n++] = arena_strdup(a,
			    e)) == NULL))
				return *s == '\0' ? -E_IO : -E_NOMEM;
		}
	} else if (k < 4 || memcmp(head, "\177ELF", 4) != 0) {
		/* Scripts in the wild often lack "#!" (python above all):
		 * the interpreter comes from the extension, as the clients
		 * of the Agent Skills format do, else sh, as shells do. */
		base = base != NULL ? base + 1 : path;
		if ((dot = strrchr(base, '.')) != NULL)
			for (i = 0; i < ARRAY_LEN(by_ext); i++)
				if (strcmp(dot, by_ext[i].ext) == 0)
					prog = by_ext[i].prog;
		if (prog == NULL)
			av[n++] = "/bin/sh";
		else if ((av[n++] = sbx_which(a, prog)) == NULL) {
			*missing = prog;
			return -E_NOENT;
		}
	}
	av[n++] = path;
	for (i = 0; i < nargs; i++)
		av[n++] = args[i];
	av[n] = NULL;
	return 0;
}

/* see sandbox.h */
int
sbx_run_shell(struct arena *a, const struct sbx_policy *p,
    const char *cmdline, struct sbx_result *r)
{
	const char *argv[] = { "/bin/sh", "-c", cmdline, NULL };

	if (sbx_shell_check(p, cmdline, r->why, sizeof(r->why)) != 0) {
		char why[sizeof(r->why)];

		memcpy(why, r->why, sizeof(why));
		memset(r, 0, sizeof(*r));
		memcpy(r->why, why, sizeof(why));
		r->status = -1;
		r->denied = 1;
		return -E_DENIED;
	}
	return sbx_run(a, p, argv, "", 0, r);
}

static int
rm_at(int dfd, const char *name, int depth)
{
	struct dirent *de;
	DIR *d;
	int fd, e = 0, x;

	if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -E_IO;
	if (depth > 64)
		return -E_LIMIT;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd < 0 && errno == EACCES && fchmodat(dfd, name, 0700, 0) == 0)
		fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
	if (fd < 0)
		return -E_IO;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -E_IO;
	}
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0 &&
		    (x = rm_at(fd, de->d_name, depth + 1)) != 0)
			e = x;
	closedir(d);
	if (unlinkat(dfd, name, AT_REMOVEDIR) != 0 && e == 0)
		e = -E_IO;
	return e;
}

/* see sandbox.h */
int
sbx_rmtree(const char *dir)
{
	return rm_at(AT_FDCWD, dir, 0);
}

static int
du_at(int dfd, const char *name, int depth, unsigned long long *bytes,
    unsigned *left)
{
	struct dirent *de;
	struct stat sb;
	DIR *d;
	int fd, e = 0;

	if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT ? 0 : -E_IO;
	*bytes += (unsigned long long)sb.st_blocks * 512;
	if (!S_ISDIR(sb.st_mode))
		return 0;
	if (depth > 64 || *left == 0)
		return -E_LIMIT;
	if ((fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) < 0)
		return -E_IO;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -E_IO;
	}
	while (e == 0 && (de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0 && (*left)-- > 0)
			e = du_at(fd, de->d_name, depth + 1, bytes, left);
	closedir(d);
	return e;
}

/* see sandbox.h */
int
sbx_disk_usage(const char *dir, unsigned long long *bytes)
{
	unsigned left = 100000;

	*bytes = 0;
	return du_at(AT_FDCWD, dir, 0, bytes, &left);
}
