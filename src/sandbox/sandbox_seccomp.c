/* sandbox_seccomp.c - a seccomp-BPF deny-list for sandboxed children
 * (Documentation/userspace-api/seccomp_filter.rst). The syscall numbers
 * come from the libc headers of the arch being built (musl's
 * bits/syscall.h: x86_64, aarch64, arm EABI, mips o32 from 4000, riscv64),
 * the arch check from <linux/audit.h>, whose values are copied here. A
 * syscall made under another ABI (i386 or x32 on x86_64, arm32 on
 * aarch64) kills the process. Dangerous calls fail with EPERM; clone3 with
 * ENOSYS so that libcs fall back to clone, whose namespace flags are
 * checked. socket(AF_UNIX) is refused unless the skill may talk to local
 * daemons: Landlock (up to ABI 7) does not cover connecting to a socket
 * file, and a daemon that runs commands on request (tmux, systemd, ubus)
 * would act outside the sandbox. setsid and setpgid are refused so that every descendant stays
 * in the process group the parent kills at the end. */
#include "sandbox/sandbox_int.h"

#include <errno.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#if defined(__x86_64__)
#define AUDIT_ARCH	0xc000003eu
#define X32_CHECK	1	/* x32 syscalls: the same arch, nr | 1 << 30 */
#elif defined(__aarch64__)
#define AUDIT_ARCH	0xc00000b7u
#elif defined(__arm__) && defined(__ARMEL__)
#define AUDIT_ARCH	0x40000028u
#elif defined(__mips__) && defined(__MIPSEL__) && _MIPS_SIM == _ABIO32
#define AUDIT_ARCH	0x40000008u
#elif defined(__mips__) && defined(__MIPSEB__) && _MIPS_SIM == _ABIO32
#define AUDIT_ARCH	0x00000008u	/* EM_MIPS without the LE bit */
#elif defined(__riscv) && __riscv_xlen == 64
#define AUDIT_ARCH	0xc00000f3u
#else
#define AUDIT_ARCH	0u	/* unknown: the layer is reported missing */
#endif
#ifndef X32_CHECK
#define X32_CHECK	0
#endif

#define RET_KILL_PROCESS	0x80000000u
#define RET_ERRNO		0x00050000u
#define RET_ALLOW		0x7fff0000u
#define LD_ABS			0x20	/* BPF_LD | BPF_W | BPF_ABS */
#define JEQ			0x15	/* BPF_JMP | BPF_JEQ | BPF_K */
#define JGE			0x35
#define JSET			0x45
#define RET			0x06	/* BPF_RET | BPF_K */
#define OFF_NR			0
#define OFF_ARCH		4
/* The low word of the first argument, a 64-bit field at offset 16. */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define OFF_ARG0		20
#else
#define OFF_ARG0		16
#endif
#define CLONE_NEW_ANY		0x7e020000u	/* NEWNS CGROUP UTS IPC USER
						 * PID NET */

struct bpf_prog {
	unsigned short	 len;
	struct sbx_bpf	*filter;
};

static const unsigned short deny[] = {
	__NR_ptrace, __NR_process_vm_readv, __NR_process_vm_writev,
	__NR_mount, __NR_umount2, __NR_pivot_root, __NR_chroot, __NR_swapon,
	__NR_swapoff, __NR_reboot, __NR_kexec_load, __NR_init_module,
	__NR_finit_module, __NR_delete_module, __NR_bpf, __NR_keyctl,
	__NR_add_key, __NR_request_key, __NR_perf_event_open,
	__NR_userfaultfd, __NR_setns, __NR_unshare, __NR_open_by_handle_at,
	__NR_acct, __NR_quotactl, __NR_io_uring_setup, __NR_io_uring_enter,
	__NR_io_uring_register, __NR_open_tree, __NR_move_mount, __NR_fsopen,
	__NR_fsconfig, __NR_fsmount, __NR_fspick, __NR_mount_setattr,
	__NR_setsid, __NR_setpgid,
#ifdef __NR_kexec_file_load
	__NR_kexec_file_load,
#endif
#ifdef __NR_iopl
	__NR_iopl, __NR_ioperm,
#endif
#ifdef __NR_uselib
	__NR_uselib,
#endif
#ifdef __NR_socketcall
	__NR_socketcall,	/* would hide socket()'s family */
#endif
};

static void
put(struct sbx_bpf *f, unsigned *n, uint16_t code, uint32_t k, unsigned jt,
    unsigned jf)
{
	f[*n].code = code;
	f[*n].jt = (uint8_t)jt;
	f[*n].jf = (uint8_t)jf;
	f[*n].k = k;
	(*n)++;
}

_Static_assert(ARRAY_LEN(deny) + 24 <= SBX_BPF_MAX, "SBX_BPF_MAX too small");

/* see sandbox_int.h */
unsigned
sbx_seccomp_build(struct sbx_bpf *f, int cut_net, int cut_unix)
{
	unsigned n = 0, i, nd = ARRAY_LEN(deny), fam = cut_net || cut_unix;
	/* After the checks: allow, eperm, enosys, then the clone flags
	 * (4 instructions) and the socket family block. */
	unsigned allow = 4 + X32_CHECK + nd + 2 + fam;
	unsigned eperm = allow + 1, enosys = allow + 2, clone = allow + 3;
	unsigned sock = clone + 4;

	if (AUDIT_ARCH == 0)
		return 0;
	put(f, &n, LD_ABS, OFF_ARCH, 0, 0);
	put(f, &n, JEQ, AUDIT_ARCH, 1, 0);
	put(f, &n, RET, RET_KILL_PROCESS, 0, 0);
	put(f, &n, LD_ABS, OFF_NR, 0, 0);
	if (X32_CHECK)
		put(f, &n, JGE, 0x40000000u, eperm - n - 1, 0);
	for (i = 0; i < nd; i++)
		put(f, &n, JEQ, deny[i], eperm - n - 1, 0);
	put(f, &n, JEQ, __NR_clone, clone - n - 1, 0);
	put(f, &n, JEQ, __NR_clone3, enosys - n - 1, 0);
	if (fam)
		put(f, &n, JEQ, __NR_socket, sock - n - 1, 0);
	put(f, &n, RET, RET_ALLOW, 0, 0);
	put(f, &n, RET, RET_ERRNO | EPERM, 0, 0);
	put(f, &n, RET, RET_ERRNO | ENOSYS, 0, 0);
	put(f, &n, LD_ABS, OFF_ARG0, 0, 0);		/* clone flags */
	put(f, &n, JSET, CLONE_NEW_ANY, 0, 1);
	put(f, &n, RET, RET_ERRNO | EPERM, 0, 0);
	put(f, &n, RET, RET_ALLOW, 0, 0);
	if (fam) {
		/* socket(): AF_UNIX as cut_unix says, AF_NETLINK always (ip,
		 * ss: reading needs no privilege, changing needs what the
		 * uid drop took away), any other family as cut_net says. */
		put(f, &n, LD_ABS, OFF_ARG0, 0, 0);
		put(f, &n, JEQ, AF_UNIX, 0, 1);
		put(f, &n, RET, cut_unix ? RET_ERRNO | EACCES : RET_ALLOW, 0, 0);
		put(f, &n, JEQ, AF_NETLINK, 0, 1);
		put(f, &n, RET, RET_ALLOW, 0, 0);
		put(f, &n, RET, cut_net ? RET_ERRNO | EACCES : RET_ALLOW, 0, 0);
	}
	return n;
}

/* see sandbox_int.h */
int
sbx_seccomp_apply(int cut_net, int cut_unix)
{
	struct sbx_bpf f[SBX_BPF_MAX];
	struct bpf_prog prog = { 0, f };

	if ((prog.len = (unsigned short)sbx_seccomp_build(f, cut_net,
	    cut_unix)) == 0)
		return -ENOSYS;
	if (prctl(PR_SET_SECCOMP, 2 /* SECCOMP_MODE_FILTER */, &prog, 0, 0))
		return -errno;
	return 0;
}
