/* sandbox_rlimit.c - resource limits of a sandboxed child (prlimit(2), on
 * itself: the child has one thread, and musl's setrlimit would add its
 * every-thread machinery). Limits only go down: root without
 * CAP_SYS_RESOURCE could not raise a hard limit anyway, and a host that set
 * lower limits knows better. */
#include "sandbox/sandbox_int.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>

/* The tasks (threads) user uid runs now, from the owners of /proc/PID/task
 * and their link counts (2 + threads); 0 without /proc. */
static rlim_t
tasks_of(uid_t uid)
{
	char path[40];
	struct dirent *e;
	struct stat st;
	rlim_t n = 0;
	DIR *d;

	if ((d = opendir("/proc")) == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] <= '0' || e->d_name[0] > '9')
			continue;	/* not a process */
		snprintf(path, sizeof(path), "/proc/%.16s/task", e->d_name);
		if (stat(path, &st) == 0 && st.st_uid == uid)
			n += st.st_nlink > 2 ? st.st_nlink - 2 : 1;
	}
	closedir(d);
	return n;
}

/* see sandbox_int.h */
int
sbx_rlimit_apply(const struct sbx_policy *p, uid_t uid)
{
	static const int res[] = { RLIMIT_CPU, RLIMIT_DATA, RLIMIT_NOFILE,
	    RLIMIT_NPROC, RLIMIT_FSIZE, RLIMIT_CORE };
	/* RLIMIT_NPROC counts every task of the user, not the child's
	 * alone: p->nproc more than the user runs now, or a script run as a
	 * busy user, or as nobody beside daemons and other scripts, could
	 * not fork at all. */
	const rlim_t want[] = { p->cpu_s, p->mem_bytes, p->nofile, p->nproc ?
	    p->nproc + tasks_of(uid) : 0, p->fsize, 0 };
	struct rlimit rl;
	unsigned i;

	for (i = 0; i < ARRAY_LEN(res); i++) {
		if (want[i] == 0 && res[i] != RLIMIT_CORE)
			continue;
		if (getrlimit(res[i], &rl) != 0)
			return -errno;
		if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want[i])
			rl.rlim_max = want[i];
		rl.rlim_cur = rl.rlim_max;
		if (prlimit(0, res[i], &rl, NULL) == 0)
			continue;
		/* A kernel always lets a hard limit come down; valgrind's
		 * prlimit refuses any NOFILE hard limit but its own. There
		 * the soft limit alone holds the script (which could raise
		 * it back: under valgrind only). */
		if (errno != EPERM || res[i] != RLIMIT_NOFILE ||
		    getrlimit(res[i], &rl) != 0)
			return -errno;
		rl.rlim_cur = want[i] < rl.rlim_max ? want[i] : rl.rlim_max;
		if (prlimit(0, res[i], &rl, NULL) != 0)
			return -errno;
	}
	return 0;
}

/* see sandbox_int.h; call it in a child that may lose memory */
int
sbx_rlimit_data_works(void)
{
	struct rlimit rl;
	rlim_t want = (rlim_t)1 << 40;

	if (getrlimit(RLIMIT_DATA, &rl) != 0)
		return 0;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max <= want)
		want = rl.rlim_max - 1;
	rl.rlim_cur = rl.rlim_max = want;
	if (prlimit(0, RLIMIT_DATA, &rl, NULL) != 0 ||
	    getrlimit(RLIMIT_DATA, &rl) != 0)
		return 0;
	return rl.rlim_max == want;
}
