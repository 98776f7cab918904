/* sandbox_policy.c - what this kernel offers (the probe, run once), which
 * layers a run gets from it (the plan), the words for layers and why one
 * is missing, and a skill's allowed-tools mapped to permissions (see
 * sandbox.h and sandbox_int.h). */
#include "sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "base/str.h"
#include "sandbox/sandbox_int.h"

#define BIT(l)		(__builtin_ctz(l))

static const char *const layer_names[SBX_NLAYERS] = {
	"rlimit", "nnp", "landlock", "landlock-net", "netns", "seccomp",
	"userdrop", "privtmp", "env", "seccomp-net", "seccomp-unix",
};

/* What the process learnt about this kernel: probed once. */
static struct {
	struct sbx_probe	pr;
	int			probed;
	unsigned		warned;
	char			why[SBX_NLAYERS][80];
} st;

static void
set_why(unsigned layer, const char *fmt, const char *arg)
{
	snprintf(st.why[BIT(layer)], sizeof(st.why[0]), fmt, arg);
	st.pr.why[BIT(layer)] = st.why[BIT(layer)];
}

/* In a throw-away child: can we unshare a network namespace, install the
 * seccomp filter, and does RLIMIT_DATA hold? */
static void ATTR_NORETURN
probe_child(int fd)
{
	int res[3];

	res[0] = unshare(geteuid() == 0 ? CLONE_NEWNET :
	    CLONE_NEWUSER | CLONE_NEWNET) != 0 ? errno : 0;
	res[1] = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ? errno :
	    -sbx_seccomp_apply(1, 0);
	res[2] = sbx_rlimit_data_works();
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
	pr->mem_ignored = !res[2];
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
/* see sandbox_int.h */
const struct sbx_probe *
sbx_probed(void)
{
	sbx_probe(NULL);
	return &st.pr;
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
	/* Memory, not address space: V8 (node) reserves gigabytes it
	 * never touches and dies at start under RLIMIT_AS. */
	p->mem_bytes = (size_t)256 << 20;
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

/* A Read(...) path as a folder Landlock can name: absolute, cut at the
 * first wildcard back to its folder, "//x" (Claude Code's absolute form)
 * as "/x", no trailing slash. {NULL, 0}: relative, adds nothing. */
static struct str
read_path(struct str w)
{
	size_t n;

	if (w.n == 0 || w.p[0] != '/')
		return (struct str){ NULL, 0 };
	while (w.n > 1 && w.p[1] == '/')
		w.p++, w.n--;
	for (n = 0; n < w.n && strchr("*?[", w.p[n]) == NULL; n++)
		;
	if (n < w.n)
		while (n > 1 && w.p[n - 1] != '/')
			n--;
	while (n > 1 && w.p[n - 1] == '/')
		n--;
	w.n = n;
	return w;
}

/* The words of Read(...) or Group(...) into p's reads or groups. */
static int
tool_args(struct sbx_policy *p, struct arena *a, struct str rule, int grp)
{
	const char **v = grp ? p->groups : p->reads;
	unsigned *n = grp ? &p->ngroups : &p->nreads;
	unsigned max = grp ? SBX_MAX_GROUPS : SBX_MAX_READS;
	struct str w;
	size_t k;
	int sep;

	for (; rule.n > 0; rule.p += k, rule.n -= k) {
		/* A run of separators, or a word up to the next one. */
		sep = strchr(" \t,", *rule.p) != NULL;
		for (k = 1; k < rule.n && (strchr(" \t,", rule.p[k]) != NULL) ==
		    sep; k++)
			;
		if (sep)
			continue;
		w.p = rule.p, w.n = k;
		if (!grp)
			w = read_path(w);
		if (w.n == 0)
			continue;
		if (*n == max)
			return -E_LIMIT;
		if ((v[(*n)++] = str_dup(a, w)) == NULL)
			return -E_NOMEM;
	}
	return 0;
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
	static const char *const gr[] = { "Group", NULL };
	const char *w, *paren;
	struct str rule, args;
	size_t n, len;
	int unknown = 0, open = 0, e;

	while ((w = sbx_tool_next(&s, &len)) != NULL) {
		paren = memchr(w, '(', len);
		n = (size_t)((paren != NULL ? paren : s) - w);
		args.p = paren != NULL ? paren + 1 : s;
		args.n = (size_t)(s - args.p);
		if (args.n > 0 && args.p[args.n - 1] == ')')
			args.n--;
		if (name_in(w, n, rd)) {
			p->perms |= SBX_READ;
			if ((e = tool_args(p, a, args, 0)) != 0)
				return e;
		} else if (name_in(w, n, gr)) {
			p->perms |= SBX_GROUP;
			if ((e = tool_args(p, a, args, 1)) != 0)
				return e;
		} else if (name_in(w, n, wr))
			p->perms |= SBX_WRITE | SBX_READ;
		else if (name_in(w, n, net))
			p->perms |= SBX_NET;
		else if (name_in(w, n, ux))
			p->perms |= SBX_UNIX;
		else if (name_in(w, n, sh)) {
			p->perms |= SBX_SHELL;
			rule = str_trim(args);
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

/* Plan the layers: what is there, not switched off, and applies. */
unsigned
sbx_plan(const struct sbx_policy *p, unsigned *expect)
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
const char *
sbx_reason(const struct sbx_policy *p, unsigned l, const int *lerr,
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

void
sbx_warn_missing(const struct sbx_policy *p, unsigned missing, const int *lerr,
    unsigned layers)
{
	unsigned i;

	for (i = 0; i < SBX_NLAYERS; i++)
		if (missing & ~st.warned & 1u << i)
			log_warn("sandbox: %s not in force (%s): scripts run "
			    "without it", layer_names[i], sbx_reason(p, 1u << i,
			    lerr, layers));
	st.warned |= missing;
}
