/* sandbox.h - confined execution of skill scripts and command lines.
 *
 * Every run forks a child that narrows itself step by step before execve:
 * own process group, closed fds, chdir, scrubbed environment, rlimits, uid
 * and gid drop (when started as root and a user is configured), a private
 * tmp, Landlock (read set, write set, network rules where the ABI has
 * them), the network cut when not allowed (Landlock, else a network
 * namespace, else a seccomp filter on socket families), a seccomp
 * deny-list, no_new_privs. The parent enforces the timeout on the whole
 * process group and caps the captured output (head and tail kept).
 * Layers the kernel lacks are reported, never skipped in silence; a policy
 * may require a layer and then fails closed. One backend per file:
 * sandbox_landlock.c, sandbox_seccomp.c, sandbox_rlimit.c; the probe and
 * the policy are in sandbox_policy.c, output and audit in sandbox_output.c.
 */
#ifndef SANDBOX_H
#define SANDBOX_H

#include <sys/types.h>

#include "base/arena.h"
#include "base/base.h"

/* Permissions, from a skill's allowed-tools narrowed by the host policy.
 * A script always reads its skill folder (never writes it: a skill cannot
 * rewrite its own SKILL.md or scripts) and writes its workspace and
 * private tmp. SBX_NET lifts the network cut, SBX_SHELL allows command
 * lines (sbx_run_shell), SBX_UNIX allows socket(AF_UNIX) (talking to
 * local daemons: ubus, D-Bus, systemd; refused by seccomp otherwise).
 * Read(/PATH ...) adds folders the scripts may read (never write or
 * execute) to the system folders: storage's Read(/) measures the whole
 * tree. SBX_GROUP keeps the supplementary groups Group(NAME ...) names
 * through the uid drop (the journal's systemd-journal or adm): file
 * permissions still decide what the script's user may open. */
enum sbx_perm {
	SBX_READ	= 1 << 0,	/* Read Grep Glob LS */
	SBX_WRITE	= 1 << 1,	/* Write Edit */
	SBX_NET		= 1 << 2,	/* WebFetch WebSearch Fetch */
	SBX_SHELL	= 1 << 3,	/* Bash Terminal */
	SBX_UNIX	= 1 << 4,	/* UnixSocket (a skillbox extension) */
	SBX_GROUP	= 1 << 5,	/* Group(NAME ...) (skillbox's too) */
};

/* Confinement layers. */
enum sbx_layer {
	SBX_L_RLIMIT	= 1 << 0,
	SBX_L_NNP	= 1 << 1,	/* no_new_privs */
	SBX_L_LANDLOCK	= 1 << 2,
	SBX_L_LANDLOCK_NET = 1 << 3,
	SBX_L_NETNS	= 1 << 4,
	SBX_L_SECCOMP	= 1 << 5,
	SBX_L_USERDROP	= 1 << 6,	/* setuid/setgid to a configured user */
	SBX_L_PRIVTMP	= 1 << 7,
	SBX_L_ENV	= 1 << 8,	/* environment scrubbed */
	SBX_L_SECCOMP_NET = 1 << 9,	/* seccomp filter on socket families */
	SBX_L_SECCOMP_UNIX = 1 << 10,	/* seccomp refuses AF_UNIX sockets */
};
#define SBX_NLAYERS	11

/* The user scripts run as when skillbox runs as root and nobody is
 * configured: nobody/nogroup on Debian and OpenWrt. */
#define SBX_NOBODY	65534

#define SBX_MAX_SECRETS	16
#define SBX_MAX_RULES	16
#define SBX_MAX_READS	12
#define SBX_MAX_GROUPS	4

struct sbx_policy {
	unsigned	 perms;		/* enum sbx_perm */
	unsigned	 require;	/* enum sbx_layer: fail closed without */
	unsigned	 disable;	/* enum sbx_layer: switched off (tests) */
	const char	*skill_name;
	const char	*skill_root;	/* readable, never writable */
	const char	*workspace;	/* writable; NULL: none */
	const char	*cwd;		/* NULL: the skill folder */
	const char	*tmp_parent;	/* where the private tmp is made,
					 * removed after the run */
	/* Names of environment variables passed on (not PATH, HOME, TMPDIR,
	 * LANG, SKILL_* or LD_*). */
	const char	*secrets[SBX_MAX_SECRETS];
	unsigned	 nsecrets;
	/* Bash(cmd:*) rules: every command of the line must start with the
	 * words of one of these ("git:*", "npm run test:*"; without ":*"
	 * the whole command); none = any. */
	const char	*shell_allow[SBX_MAX_RULES];
	unsigned	 nshell_allow;
	/* Read(/PATH ...): absolute paths read-only beneath (with
	 * SBX_READ); Group(NAME ...): group names kept (with SBX_GROUP). */
	const char	*reads[SBX_MAX_READS];
	unsigned	 nreads;
	const char	*groups[SBX_MAX_GROUPS];
	unsigned	 ngroups;
	/* A crew's own folders (absolute), read and run, never written, by
	 * every script whatever its allowed-tools: the code and
	 * node_modules its skills share (`npx tsx ../../_src/x.ts`). */
	const char *const *crew;
	unsigned	 ncrew;
	/* Started as root, scripts run as uid/gid; uid 0 means SBX_NOBODY
	 * unless as_root, the explicit opt-in to run them as root (then
	 * reported as "AS-ROOT" in every confinement string). */
	uid_t		 uid;
	gid_t		 gid;
	int		 as_root;
	unsigned	 timeout_ms;	/* default 30000 */
	unsigned	 cpu_s;		/* RLIMIT_CPU */
	size_t		 mem_bytes;	/* RLIMIT_DATA: heap and private
					 * writable mappings, not the address
					 * space V8 reserves by gigabytes */
	unsigned	 nofile;	/* RLIMIT_NOFILE */
	unsigned	 nproc;		/* RLIMIT_NPROC */
	size_t		 fsize;		/* RLIMIT_FSIZE */
	size_t		 out_cap;	/* bytes kept of stdout and of stderr */
};

/* Fill a policy with the defaults: 30 s, 10 s CPU, 256 MiB of memory
 * (RLIMIT_DATA), 64 files, 64 processes, 16 MiB file size, 32 KiB output
 * each. */
void	sbx_policy_defaults(struct sbx_policy *p);

struct sbx_result {
	int		 status;	/* exit status, or -1 */
	int		 signal;	/* killing signal, or 0 */
	int		 timed_out;
	int		 denied;	/* refused before running (policy) */
	char		*out, *err;	/* captured, NUL-terminated, in arena */
	size_t		 out_len, err_len;
	size_t		 out_total, err_total;	/* bytes the child wrote */
	unsigned	 layers;	/* what was actually in force */
	char		*confinement;	/* the same in words, in arena */
	long		 ms;		/* wall time */
	char		 why[160];	/* a refusal or failure in words */
	unsigned	 missing;	/* layers wanted but not in force */
	int		 as_root;	/* the script ran as uid 0 (opt-in) */
	unsigned char	 out_sha256[32];	/* of all out_total bytes */
};

/* Run argv[0] (a path) with argv, the input on stdin and in SKILL_INPUT,
 * under p. Returns 0 when the child ran (whatever its exit status), or
 * -E_DENIED (policy refused, or a layer this kernel offers failed to
 * apply: the run fails closed; r->why says which), -E_IO, -E_NOMEM.
 * Paths in p may be relative to the current folder: they are made
 * absolute before the child changes folder. SKILL_INPUT is set only for
 * inputs up to SBX_ENV_INPUT_MAX bytes without NUL; stdin always carries
 * the input. When execve fails the result is status 127 (not found) or
 * 126 (not executable) with r->why, as in shells. Started as root, the
 * script runs as p->uid, or SBX_NOBODY, or as root only with p->as_root.
 * The process makes itself non-dumpable (prctl) so that scripts of the
 * same user cannot read its environment from /proc, and a child
 * subreaper so that everything a script leaves behind is killed and
 * reaped before sbx_run returns. */
int	sbx_run(struct arena *a, const struct sbx_policy *p,
	    const char *const *argv, const char *input, size_t input_len,
	    struct sbx_result *r);

/* A confined process that stays up (an MCP server): its stdin and
 * stdout are ours to talk on, stderr ours to drain. It holds its own
 * copy of every path it needs at the end: the arena sbx_spawn was given
 * may be gone by then. */
#define SBX_TMP_MAX	256
struct sbx_proc {
	pid_t		 pid;		/* -1: none */
	int		 in, out, err;	/* our ends; -1 closed */
	char		 tmp[SBX_TMP_MAX]; /* its private tmp, removed at
					 * end; "" none */
};

/* Start argv under p as sbx_run does (the same layers, the same refusal
 * when one the kernel offers fails to apply), but return once it runs:
 * p->timeout_ms does not apply, RLIMIT_CPU does. r says what is in force
 * (layers, confinement, as_root) or why it did not start. `a` is needed
 * only during the call. Returns 0, -E_DENIED, -E_IO (exec failed too:
 * r->status 126/127), -E_LIMIT (the private tmp's path is longer than
 * SBX_TMP_MAX), -E_NOMEM. */
int	sbx_spawn(struct arena *a, const struct sbx_policy *p,
	    const char *const *argv, struct sbx_proc *pr,
	    struct sbx_result *r);

/* End it: close its stdin, give it grace_ms to exit, SIGTERM its process
 * group and grace_ms more, then SIGKILL whatever is left, and reap. The
 * wait status. */
int	sbx_proc_end(struct sbx_proc *pr, unsigned grace_ms);

/* Run a shell command line through /bin/sh -c inside the child, after the
 * Bash(cmd:*) rules have been checked on the parsed line. */
int	sbx_run_shell(struct arena *a, const struct sbx_policy *p,
	    const char *cmdline, struct sbx_result *r);

/* The argv that runs the script at path with args (in `a`): the file
 * itself when it is executable and starts with "#!" (or is an ELF
 * binary); the interpreter of its "#!" line when it is not executable;
 * else the interpreter its extension names (.py python3, .js .mjs .cjs
 * node, anything else /bin/sh), found in the sandbox's PATH. Returns 0,
 * -E_NOENT when that interpreter is not installed (*missing names it),
 * -E_IO (the file cannot be read), or -E_NOMEM. */
int	sbx_script_argv(struct arena *a, const char *path,
	    const char *const *args, unsigned nargs, const char ***out,
	    const char **missing);

/* A program by name from the sandbox's PATH (in `a`), or NULL. */
const char *sbx_which(struct arena *a, const char *name);

/* What this kernel offers, layer by layer, with a reason for each that is
 * missing (for `skillbox sandbox check` and the first warning). */
struct sbx_probe {
	unsigned	 available;	/* enum sbx_layer */
	int		 landlock_abi;	/* 0: none */
	const char	*why[16];	/* per layer bit index, when missing */
	int		 mem_ignored;	/* setrlimit(RLIMIT_DATA) is a no-op
					 * (qemu-user): applied by sh ulimit */
};

#define SBX_ENV_INPUT_MAX	(64u << 10)

void	sbx_probe(struct sbx_probe *pr);

/* The next entry of an allowed-tools string ("Read Bash(git log:*)
 * WebFetch", separated by blanks or commas, parentheses kept whole) at
 * *s, with its length in *len; *s moves past it. NULL at the end. */
const char *sbx_tool_next(const char **s, size_t *len);

/* Map an allowed-tools string ("Read Bash(git:*) WebFetch") to perms,
 * shell rules, read paths and groups in p; unknown tools are ignored
 * (returned count). Read's relative patterns name the skill's or the
 * workspace's files, readable anyway: they add nothing. An absolute one
 * is cut back to the folder before its first wildcard; a leading "//"
 * (Claude Code's absolute form) is read as "/".
 * Returns -E_LIMIT past SBX_MAX_RULES, SBX_MAX_READS or SBX_MAX_GROUPS. */
int	sbx_from_allowed_tools(struct sbx_policy *p, struct arena *a,
	    const char *allowed_tools);

/* Words for a set of layers: "rlimit nnp landlock(abi 7) seccomp ...". */
const char *sbx_layers_str(struct arena *a, unsigned layers);

/* The name of one layer bit ("landlock"), or "?". */
const char *sbx_layer_name(unsigned layer);

/* Layer names ("landlock,seccomp" or "landlock seccomp") to bits. Returns
 * 0, or -E_INVAL naming nothing known (then *bad points at the word). */
int	sbx_layers_parse(const char *s, unsigned *out, const char **bad);

/* Check a command line against p: the shell permission, then the
 * Bash(cmd:*) rules on every command of the line (split on ; & && || |
 * and newlines, read as ash, dash and bash read it); what the checker
 * does not follow is refused in a restricted line, and so are git's and
 * find's command-running options (sandbox_shell.c). Returns 0 or
 * -E_DENIED with the reason in why. */
int	sbx_shell_check(const struct sbx_policy *p, const char *line,
	    char *why, size_t whylen);

/* 1 when the captured stdout is one whole JSON value (not cut). */
int	sbx_output_json(const struct sbx_result *r);

struct json_writer;

/* The audit record of a run as one JSON object: skill, command (argv),
 * input_sha256, output_sha256, output_bytes, exit, signal, timed_out, ms,
 * confinement. Returns the writer's sticky error. */
int	sbx_audit_json(const struct sbx_result *r, const struct sbx_policy *p,
	    const char *const *argv, const char *input, size_t input_len,
	    struct json_writer *w);

/* Remove a folder and everything below it without following symlinks
 * (works on fds, so a tree changed meanwhile cannot redirect it), at most
 * 64 levels deep. Returns 0, -E_IO or -E_LIMIT. */
int	sbx_rmtree(const char *dir);

/* The disk space a folder takes (allocated blocks, links not followed),
 * at most 100,000 entries 64 levels deep. Returns 0, -E_IO or -E_LIMIT
 * (*bytes then counts what was seen). */
int	sbx_disk_usage(const char *dir, unsigned long long *bytes);

#endif
