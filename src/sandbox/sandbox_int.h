/* sandbox_int.h - what the files of the sandbox share with each other
 * and the unit tests; nothing else includes it. */
#ifndef SANDBOX_INT_H
#define SANDBOX_INT_H

#include "sandbox/sandbox.h"

/* sandbox_policy.c: the probe's findings (probed on first use, as
 * sbx_probe does), valid for the life of the process. */
const struct sbx_probe *sbx_probed(void);

/* The layers a run under p gets here: there, not switched off in
 * p->disable, and applying to its perms. *expect gets the layers a run
 * under p should have; those not in force are reported missing. */
unsigned sbx_plan(const struct sbx_policy *p, unsigned *expect);

/* Why layer l is not in force, in words (static or strerror's): switched
 * off, root by the configuration, lerr[bit of l] (lerr may be NULL: not
 * run yet), needs no_new_privs (not in layers), or the probe's reason. */
const char *sbx_reason(const struct sbx_policy *p, unsigned l,
	    const int *lerr, unsigned layers);

/* Log a warning for each layer of missing, once per process. */
void	sbx_warn_missing(const struct sbx_policy *p, unsigned missing,
	    const int *lerr, unsigned layers);

/* sandbox_rlimit.c: lower CPU, DATA, NOFILE, NPROC, FSIZE to p's values
 * (a 0 leaves one as it is; NPROC is p->nproc more tasks than user uid,
 * who runs the script, has now) and CORE to 0; a limit is never raised.
 * Returns 0 or -errno. */
int	sbx_rlimit_apply(const struct sbx_policy *p, uid_t uid);

/* 1 when setrlimit(RLIMIT_DATA) takes effect (it does not under
 * qemu-user). */
int	sbx_rlimit_data_works(void);

/* sandbox_landlock.c: the ABI version (> 0), or -errno (-ENOSYS: not in
 * this kernel, -EOPNOTSUPP: disabled at boot). */
int	sbx_landlock_abi(void);

/* The ruleset for this process: read and execute the system folders, the
 * skill folder `root` and the ncrew `crew` folders (never write them),
 * read the nreads `reads` (a skill's Read(/PATH)), read and write the workspace `ws`, tmp and
 * /dev/null (paths absolute; ws and tmp may be NULL); with
 * cut_net (ABI 4+) no TCP bind or connect. Made before the uid drop, so
 * that what it names is reachable whatever the script's user may open. A
 * system folder that does not exist is skipped; any other failure fails
 * the whole layer. Returns the ruleset fd or -errno. */
int	sbx_landlock_prepare(const char *root, const char *ws, const char *tmp,
	    const char *const *reads, unsigned nreads, const char *const *crew,
	    unsigned ncrew, int abi, int cut_net);

/* Restrict this process to the ruleset rs (closed here). Needs
 * no_new_privs (or CAP_SYS_ADMIN). Returns 0 or -errno. */
int	sbx_landlock_restrict(int rs);

/* sandbox_seccomp.c: install the deny-list filter for this arch (EPERM for
 * dangerous syscalls, ENOSYS for clone3, kill on a foreign arch); with
 * cut_net also EACCES for socket() of any family but AF_UNIX and
 * AF_NETLINK; with cut_unix EACCES for socket(AF_UNIX) (socketpair stays:
 * it reaches nothing outside). Needs no_new_privs. Returns 0 or -errno. */
int	sbx_seccomp_apply(int cut_net, int cut_unix);

/* One classic BPF instruction (struct sock_filter's layout). */
struct sbx_bpf {
	uint16_t	code;
	uint8_t		jt, jf;
	uint32_t	k;
};
#define SBX_BPF_MAX	80

/* The filter sbx_seccomp_apply installs, into f[SBX_BPF_MAX]; the unit
 * tests run it on every arch, qemu-user included, where it cannot be
 * installed. Returns its length, 0 for an arch without a filter. */
unsigned sbx_seccomp_build(struct sbx_bpf *f, int cut_net, int cut_unix);

/* sandbox_output.c: output capture: the first half of cap bytes and the last half kept, a
 * marker between when more came. buf holds cap + SBX_MARK_MAX + 1. */
#define SBX_MARK_MAX	48

struct sbx_cap {
	char	*buf;
	size_t	 cap, head, len, pos;	/* head bytes, tail ring length, pos */
	size_t	 total;
};

void	sbx_cap_init(struct sbx_cap *c, char *buf, size_t cap);
void	sbx_cap_feed(struct sbx_cap *c, const char *p, size_t n);
/* Put the kept bytes in order with the marker; returns their length
 * (buf is NUL-terminated). */
size_t	sbx_cap_finish(struct sbx_cap *c);

#endif
