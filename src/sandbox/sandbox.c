/* sandbox.c - policy, spawn and supervision of confined runs (see
 * sandbox.h); the layers are in sandbox_{rlimit,landlock,seccomp}.c.
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

#include "fmt/json.h"
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
#define SBX_NODE_AS	((size_t)1 << 30)	/* node's address space */
#define BIT(l)		(__builtin_ctz(l))

static const char *const layer_names[SBX_NLAYERS] = {
	"rlimit", "nnp", "landlock", "landlock-net", "netns", "seccomp",
	"userdrop", "privtmp", "env", "seccomp-net", "seccomp-unix",
};

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
	pid_t			 parent;
};

/* What the process learnt about this kernel: probed once. */
static struct {
	struct sbx_probe	pr;
	int			probed;
	unsigned		warned;
	int			subreaper;	/* orphans come to us */
	char			why[SBX_NLAYERS][80];
} st;

static volatile sig_atomic_t got_signal;

static long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
set_why(unsigned layer, const char *fmt, const char *arg)
{
	snprintf(st.why[BIT(layer)], sizeof(st.why[0]), fmt, arg);
	st.pr.why[BIT(layer)] = st.why[BIT(layer)];
}

/* In a throw-away child: can we unshare a network namespace, install the
 * seccomp filter, and does RLIMIT_AS hold? */
static void ATTR_NORETURN
probe_child(int fd)
{
	int res[3];

	res[0] = unshare(geteuid() == 0 ? CLONE_NEWNET :
	    CLONE_NEWUSER | CLONE_NEWNET) != 0 ? errno : 0;
	res[1] = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ? errno :
	    -sbx_seccomp_apply(1, 0);
	res[2] = sbx_rlimit_as_works();
	(void)!write(fd, res, sizeof(res));
	_exit(0);
}

static void
do_probe(void)
{
	struct sbx_probe *pr = &st.pr;
	int res[3] = { ECHILD, ECHILD, 1 }, pfd[2], abi;
	pid_t pid;

	pr->available = SBX_L_RLIMIT | SBX_L_ENV | SBX_L_PRIVTMP;
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) >= 0)
		pr->available |= SBX_L_NNP;
	else
		set_why(SBX_L_NNP, "prctl: %s", strerror(errno));
	if ((abi = sbx_landlock_abi()) > 0) {
		pr->landlock_abi = abi;
		pr->available |= SBX_L_LANDLOCK;
		if (abi >= 4)
			pr->available |= SBX_L_LANDLOCK_NET;
		else
			set_why(SBX_L_LANDLOCK_NET, "%sLandlock ABI < 4 has no "
			    "network rules (Linux 6.7)", "");
	} else {
		set_why(SBX_L_LANDLOCK, "%s", abi == -ENOSYS ?
		    "not in this kernel (ENOSYS)" : abi == -EOPNOTSUPP ?
		    "disabled at boot (EOPNOTSUPP; lsm= lacks landlock)" :
		    strerror(-abi));
		set_why(SBX_L_LANDLOCK_NET, "%s", "no Landlock");
	}
	if (getuid() == 0)
		pr->available |= SBX_L_USERDROP;
	else
		set_why(SBX_L_USERDROP, "%s", "not started as root");
	if (pipe2(pfd, O_CLOEXEC) == 0) {
		if ((pid = fork()) == 0)
			probe_child(pfd[1]);
		close(pfd[1]);
		if (pid > 0) {
			if (read(pfd[0], res, sizeof(res)) != sizeof(res))
				res[0] = res[1] = ECHILD;
			waitpid(pid, NULL, 0);
		}
		close(pfd[0]);
	}
	if (res[0] == 0)
		pr->available |= SBX_L_NETNS;
	else
		set_why(SBX_L_NETNS, "unshare: %s", res[0] == EPERM ?
		    "user namespaces are not allowed (EPERM)" : res[0] ==
		    EINVAL ? "no user or network namespaces (EINVAL)" :
		    strerror(res[0]));
	if (res[1] == 0)
		pr->available |= SBX_L_SECCOMP | SBX_L_SECCOMP_NET |
		    SBX_L_SECCOMP_UNIX;
	else {
		set_why(SBX_L_SECCOMP, "%s", res[1] == EINVAL ?
		    "no seccomp filters here (EINVAL)" : strerror(res[1]));
		set_why(SBX_L_SECCOMP_NET, "%s", "no seccomp");
		set_why(SBX_L_SECCOMP_UNIX, "%s", "no seccomp: unix sockets "
		    "reach local daemons");
	}
	pr->as_ignored = !res[2];
}

/* see sandbox.h */
void
sbx_probe(struct sbx_probe *pr)
{
	if (!st.probed) {
		do_probe();
		st.probed = 1;
	}
	if (pr != NULL)
		*pr = st.pr;
}

/* see sandbox.h */
void
sbx_policy_defaults(struct sbx_policy *p)
{
	const char *t = getenv("TMPDIR");

	memset(p, 0, sizeof(*p));
	p->tmp_parent = t != NULL && *t == '/' ? t : "/tmp";
	p->timeout_ms = 30000;
	p->cpu_s = 10;
	p->as_bytes = (size_t)256 << 20;
	p->nofile = 64;
	p->nproc = 64;		/* above what the user runs: sbx_rlimit_apply */
	p->fsize = (size_t)16 << 20;
	p->out_cap = 32u << 10;
}

/* see sandbox.h */
const char *
sbx_layers_str(struct arena *a, unsigned layers)
{
	struct sbuf sb;
	unsigned i;

	sbuf_init(&sb, a, 0);
	for (i = 0; i < SBX_NLAYERS; i++) {
		if (!(layers & 1u << i))
			continue;
		sbuf_printf(&sb, "%s%s", sb.len > 0 ? " " : "", layer_names[i]);
		if (1u << i == SBX_L_LANDLOCK && st.pr.landlock_abi > 0)
			sbuf_printf(&sb, "(abi %d)", st.pr.landlock_abi);
	}
	if (sb.len == 0)
		sbuf_adds(&sb, "none");
	return sb.err ? NULL : sb.p;
}

/* see sandbox.h */
const char *
sbx_layer_name(unsigned layer)
{
	return layer != 0 && BIT(layer) < SBX_NLAYERS ?
	    layer_names[BIT(layer)] : "?";
}

/* see sandbox.h */
int
sbx_layers_parse(const char *s, unsigned *out, const char **bad)
{
	size_t n;
	unsigned i;

	*out = 0;
	for (;;) {
		s += strspn(s, ", \t");
		if ((n = strcspn(s, ", \t")) == 0)
			return 0;
		for (i = 0; i < SBX_NLAYERS; i++)
			if (strlen(layer_names[i]) == n &&
			    memcmp(layer_names[i], s, n) == 0)
				break;
		if (i == SBX_NLAYERS) {
			if (bad != NULL)
				*bad = s;
			return -E_INVAL;
		}
		*out |= 1u << i;
		s += n;
	}
}

static int
name_in(const char *s, size_t n, const char *const *names)
{
	for (; *names != NULL; names++)
		if (strlen(*names) == n && strncasecmp(*names, s, n) == 0)
			return 1;
	return 0;
}

/* see sandbox.h */
const char *
sbx_tool_next(const char **sp, size_t *len)
{
	const char *s = *sp, *w;
	int depth = 0;

	if (s == NULL)
		return NULL;
	s += strspn(s, " \t\r\n,");
	if (*s == '\0')
		return NULL;
	for (w = s; *s != '\0' && (depth > 0 || strchr(" \t\r\n,", *s) ==
	    NULL); s++)
		depth += *s == '(' ? 1 : *s == ')' ? -1 : 0;
	*len = (size_t)(s - w);
	*sp = s;
	return w;
}

/* see sandbox.h */
int
sbx_from_allowed_tools(struct sbx_policy *p, struct arena *a,
    const char *s)
{
	static const char *const rd[] = { "Read", "Grep", "Glob", "LS", NULL };
	static const char *const wr[] = { "Write", "Edit", "MultiEdit", NULL };
	static const char *const net[] = { "WebFetch", "WebSearch", "Fetch",
	    NULL };
	static const char *const sh[] = { "Bash", "Terminal", NULL };
	static const char *const ux[] = { "UnixSocket", NULL };
	const char *w, *paren;
	struct str rule;
	size_t n, len;
	int unknown = 0, open = 0;

	while ((w = sbx_tool_next(&s, &len)) != NULL) {
		paren = memchr(w, '(', len);
		n = (size_t)((paren != NULL ? paren : s) - w);
		if (name_in(w, n, rd))
			p->perms |= SBX_READ;
		else if (name_in(w, n, wr))
			p->perms |= SBX_WRITE | SBX_READ;
		else if (name_in(w, n, net))
			p->perms |= SBX_NET;
		else if (name_in(w, n, ux))
			p->perms |= SBX_UNIX;
		else if (name_in(w, n, sh)) {
			p->perms |= SBX_SHELL;
			rule.p = paren != NULL ? paren + 1 : s;
			rule.n = (size_t)(s - rule.p);
			if (rule.n > 0 && rule.p[rule.n - 1] == ')')
				rule.n--;
			rule = str_trim(rule);
			if (rule.n == 0)
				open = 1;
			else if (p->nshell_allow == SBX_MAX_RULES)
				return -E_LIMIT;
			else if ((p->shell_allow[p->nshell_allow++] =
			    str_dup(a, rule)) == NULL)
				return -E_NOMEM;
		} else
			unknown++;
	}
	if (open)
		p->nshell_allow = 0;	/* plain Bash: any command line */
	return unknown;
}

/* see sandbox_int.h */
void
sbx_cap_init(struct sbx_cap *c, char *buf, size_t cap)
{
	memset(c, 0, sizeof(*c));
	c->buf = buf;
	c->cap = cap;
}

/* see sandbox_int.h */
void
sbx_cap_feed(struct sbx_cap *c, const char *p, size_t n)
{
	size_t h = c->cap / 2, t = c->cap - h, k;
	char *ring = c->buf + h;

	c->total += n;
	if (c->head < h) {
		k = MIN(n, h - c->head);
		memcpy(c->buf + c->head, p, k);
		c->head += k;
		p += k;
		n -= k;
	}
	if (n == 0 || t == 0)
		return;
	if (n > t) {
		p += n - t;
		n = t;
	}
	while (n > 0) {
		k = MIN(n, t - c->pos);
		memcpy(ring + c->pos, p, k);
		c->pos = (c->pos + k) % t;
		c->len = MIN(c->len + k, t);
		p += k;
		n -= k;
	}
}

static void
reverse(char *a, size_t n)
{
	size_t i;
	char x;

	for (i = 0; i < n / 2; i++) {
		x = a[i];
		a[i] = a[n - 1 - i];
		a[n - 1 - i] = x;
	}
}

/* see sandbox_int.h */
size_t
sbx_cap_finish(struct sbx_cap *c)
{
	size_t h = c->cap / 2, cut = c->total - c->head - c->len, m;
	char *ring = c->buf + h, mark[SBX_MARK_MAX];

	if (c->len == c->cap - h && c->pos != 0) {	/* oldest first */
		reverse(ring, c->pos);
		reverse(ring + c->pos, c->len - c->pos);
		reverse(ring, c->len);
		c->pos = 0;
	}
	if (cut == 0) {
		c->buf[c->head + c->len] = '\0';
		return c->head + c->len;
	}
	m = (size_t)snprintf(mark, sizeof(mark), "\n[... %zu bytes cut ...]\n",
	    cut);
	memmove(ring + m, ring, c->len);
	memcpy(ring, mark, m);
	c->buf[h + m + c->len] = '\0';
	return h + m + c->len;
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
	    c->ws, c->tmp, c->abi, !!(c->want & SBX_L_LANDLOCK_NET))) < 0)
		layer(&rep, SBX_L_LANDLOCK, -rs);
	if (c->want & SBX_L_USERDROP) {
		/* Our pipes, so that /dev/stdout can be opened again. */
		for (i = 0; i < 3; i++)
			(void)!fchown(i, c->uid, c->gid);
		if (syscall(SYS_SETGROUPS, 0, NULL) != 0 ||
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

/* Plan the layers: what is there, not switched off, and applies. */
static unsigned
plan(const struct sbx_policy *p, unsigned *expect)
{
	unsigned off = p->disable, avail, want;
	int cut = !(p->perms & SBX_NET);

	if (off & SBX_L_LANDLOCK)
		off |= SBX_L_LANDLOCK_NET;
	if (off & SBX_L_SECCOMP)
		off |= SBX_L_SECCOMP_NET;
	avail = st.pr.available & ~off;
	want = avail & (SBX_L_RLIMIT | SBX_L_NNP | SBX_L_LANDLOCK |
	    SBX_L_SECCOMP | SBX_L_ENV | SBX_L_PRIVTMP);
	*expect = SBX_L_RLIMIT | SBX_L_NNP | SBX_L_LANDLOCK | SBX_L_SECCOMP |
	    SBX_L_ENV | SBX_L_PRIVTMP;
	if (getuid() == 0 || (p->uid != 0 && p->uid != getuid()))
		*expect |= SBX_L_USERDROP;
	if (getuid() == 0 && !p->as_root)
		want |= avail & SBX_L_USERDROP;
	if (!(p->perms & SBX_UNIX)) {
		*expect |= SBX_L_SECCOMP_UNIX;
		if (want & SBX_L_SECCOMP)
			want |= avail & SBX_L_SECCOMP_UNIX;
	}
	/* Without no_new_privs an unprivileged process can apply neither
	 * Landlock nor seccomp: they are missing, not failed. */
	if (!(want & SBX_L_NNP) && (getuid() != 0 || (want & SBX_L_USERDROP)))
		want &= ~(SBX_L_LANDLOCK | SBX_L_SECCOMP | SBX_L_SECCOMP_UNIX);
	if (cut) {
		*expect |= SBX_L_LANDLOCK_NET | SBX_L_SECCOMP_NET;
		if (want & SBX_L_LANDLOCK)
			want |= avail & SBX_L_LANDLOCK_NET;
		/* Root keeps the namespace even under Landlock's network
		 * rules: it takes CAP_NET_ADMIN over the host's interfaces
		 * away. */
		if (!(want & SBX_L_LANDLOCK_NET) || (p->require & SBX_L_NETNS) ||
		    (getuid() == 0 && !(want & SBX_L_USERDROP)))
			want |= avail & SBX_L_NETNS;
		if (!(want & SBX_L_LANDLOCK_NET))
			*expect |= SBX_L_NETNS;
		if (want & SBX_L_SECCOMP)
			want |= avail & SBX_L_SECCOMP_NET;
	}
	return want;
}

/* Why layer l is not in force. */
static const char *
reason(const struct sbx_policy *p, unsigned l, const int *lerr,
    unsigned layers)
{
	int e = lerr != NULL ? lerr[BIT(l)] : 0;

	if (p->disable & l || (l == SBX_L_LANDLOCK_NET && p->disable &
	    SBX_L_LANDLOCK) || ((l & (SBX_L_SECCOMP_NET |
	    SBX_L_SECCOMP_UNIX)) && p->disable & SBX_L_SECCOMP))
		return "switched off";
	if (l == SBX_L_USERDROP && getuid() == 0 && p->as_root)
		return "scripts run as root: the configuration asks for it "
		    "(sandbox.user: root)";
	if ((l & (SBX_L_LANDLOCK_NET | SBX_L_SECCOMP_NET |
	    SBX_L_SECCOMP_UNIX)) && st.pr.available & l)
		e = lerr != NULL ? lerr[l == SBX_L_LANDLOCK_NET ?
		    BIT(SBX_L_LANDLOCK) : BIT(SBX_L_SECCOMP)] : 0;
	if ((e == EPERM || (e == 0 && st.pr.available & l)) &&
	    !(layers & SBX_L_NNP) && (l & (SBX_L_LANDLOCK | SBX_L_SECCOMP |
	    SBX_L_LANDLOCK_NET | SBX_L_SECCOMP_NET | SBX_L_SECCOMP_UNIX)))
		return "needs no_new_privs";
	if (e != 0)
		return strerror(e);
	return st.pr.why[BIT(l)] != NULL ? st.pr.why[BIT(l)] : "unavailable";
}

static void
warn_missing(const struct sbx_policy *p, unsigned missing, const int *lerr,
    unsigned layers)
{
	unsigned i;

	for (i = 0; i < SBX_NLAYERS; i++)
		if (missing & ~st.warned & 1u << i)
			log_warn("sandbox: %s not in force (%s): scripts run "
			    "without it", layer_names[i], reason(p, 1u << i,
			    lerr, layers));
	st.warned |= missing;
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
		if ((w < 0 && !st.subreaper) || kill(-s->pid, SIGKILL) != 0 ||
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
		    layer_names[i], reason(p, 1u << i, rep->lerr, rep->layers),
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

static const char *
base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s != NULL ? s + 1 : path;
}

static char *
abspath(struct arena *a, const char *path)
{
	char buf[PATH_MAX];

	return realpath(path, buf) != NULL ? arena_strdup(a, buf) : NULL;
}

/* One child being started: what sbx_run and sbx_spawn share. */
struct launch {
	struct child	 c;
	struct sbx_policy pc;		/* p, with node's address space */
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
	char tmpl[PATH_MAX], **av = (char **)argv;
	unsigned i;
	size_t argc;

	memset(&L->c, 0, sizeof(L->c));
	L->tmp = NULL;
	L->ws = NULL;
	L->pc = *p;
	sbx_probe(NULL);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (!st.subreaper)
		st.subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
	/* V8 reserves about 1 GiB of address space up front: node dies at
	 * start below that. What it touches is still bounded by RLIMIT_CPU
	 * and the timeout, not by this. */
	if (L->pc.as_bytes > 0 && L->pc.as_bytes < SBX_NODE_AS &&
	    strcmp(base_name(argv[0]), "node") == 0)
		L->pc.as_bytes = SBX_NODE_AS;
	c->p = &L->pc;
	c->abi = st.pr.landlock_abi;
	c->parent = getpid();
	c->want = plan(p, &L->expect);
	/* What a permission lifts cannot be required of its run. */
	L->req = p->require & ~(p->perms & SBX_NET ? NET_LAYERS : 0) &
	    ~(p->perms & SBX_UNIX ? SBX_L_SECCOMP_UNIX : 0);
	c->require = L->req;
	if (L->req & ~c->want) {
		i = BIT(L->req & ~c->want);
		snprintf(r->why, sizeof(r->why), "required layer %s not in "
		    "force: %s", layer_names[i], reason(p, 1u << i, NULL, 0));
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
	if (st.pr.as_ignored && (c->want & SBX_L_RLIMIT) &&
	    L->pc.as_bytes > 0) {
		/* qemu-user ignores RLIMIT_AS: let the shell set it. */
		if ((av = arena_alloc(a, (argc + 4) * sizeof(*av))) == NULL)
			return -E_NOMEM;
		av[0] = "/bin/sh";
		av[1] = "-c";
		av[2] = arena_printf(a, "ulimit -v %zu && exec \"$0\" \"$@\"",
		    L->pc.as_bytes >> 10);
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
		warn_missing(p, r->missing, rep->lerr, rep->layers);
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
	if ((e = launch_prepare(a, p, argv, "", 0, L, r)) != 0 ||
	    (pr->pid = launch(L, fd, r)) < 0) {
		launch_cleanup(L);
		return e != 0 ? e : -E_IO;
	}
	pr->in = fd[0];
	pr->out = fd[1];
	pr->err = fd[2];
	pr->tmp = L->tmp;
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
	if (pr->tmp != NULL && sbx_rmtree(pr->tmp) != 0)
		log_warn("sandbox: cannot remove %s", pr->tmp);
	pr->tmp = NULL;
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

/* see sandbox.h */
int
sbx_output_json(const struct sbx_result *r)
{
	struct arena scratch;
	struct json_doc d;
	struct str t;
	int ok;

	if (r->out == NULL || r->out_total != r->out_len)
		return 0;
	t = str_trim((struct str){ r->out, r->out_len });
	if (t.n == 0)
		return 0;
	arena_init(&scratch, "scratch");
	ok = json_parse(&scratch, t.p, t.n, (unsigned)MIN(t.n + 1, 1u << 20),
	    &d) == 0;
	arena_reset(&scratch);
	return ok;
}

/* see sandbox.h */
int
sbx_audit_json(const struct sbx_result *r, const struct sbx_policy *p,
    const char *const *argv, const char *input, size_t input_len,
    struct json_writer *w)
{
	struct sha256 h;
	unsigned char d[32];
	char hex[65];

	json_begin_obj(w);
	json_kstr(w, "skill", p->skill_name != NULL ? p->skill_name : "");
	json_key(w, "command");
	json_begin_arr(w);
	for (; *argv != NULL; argv++)
		json_put_str(w, *argv);
	json_end_arr(w);
	sha256_init(&h);
	sha256_feed(&h, input != NULL ? input : "", input_len);
	sha256_final(&h, d);
	sha256_hex(d, hex);
	json_kstr(w, "input_sha256", hex);
	sha256_hex(r->out_sha256, hex);
	json_kstr(w, "output_sha256", hex);
	json_key(w, "output_bytes");
	json_put_uint(w, r->out_total);
	json_key(w, "exit");
	if (r->status >= 0)
		json_put_int(w, r->status);
	else
		json_put_null(w);
	json_key(w, "signal");
	json_put_int(w, r->signal);
	json_key(w, "timed_out");
	json_put_bool(w, r->timed_out);
	json_key(w, "denied");
	json_put_bool(w, r->denied);
	json_key(w, "ms");
	json_put_int(w, r->ms);
	json_kstr(w, "confinement",
	    r->confinement != NULL ? r->confinement : "none");
	json_end_obj(w);
	return w->sb->err;
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
