/*
 * tools/bench/spawn.c - the launcher bench.py measures each process with.
 *
 * Built static with musl, so it is a few pages in size: Linux keeps the
 * RSS high-water mark of the memory a process had before execve in its
 * ru_maxrss, and a process started straight from Python (or Node) would
 * report the interpreter's size there. From this launcher it starts clean.
 *
 * usage: spawn [-t] -o REPORT -- COMMAND [ARG...]
 *   -t   stop the command at its exit (ptrace, PTRACE_O_TRACEEXIT) and read
 *        its VmHWM from /proc before its memory is gone; its children are
 *        not traced.
 * REPORT gets one line: t0_ns t1_ns pid exit utime_us stime_us maxrss_kb
 * hwm_kb, t0/t1 from CLOCK_MONOTONIC just before fork and just after the
 * command was reaped; rusage from wait4 (the command and every descendant
 * it reaped); hwm_kb is -1 without -t. The exit status is the command's
 * (128 + signal when killed).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long
vmhwm_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "VmHWM:", 6) == 0)
			kb = strtol(line + 6, NULL, 10);
	fclose(f);
	return kb;
}

int
main(int argc, char **argv)
{
	const char *report = NULL;
	int trace = 0, st = 0, c;
	long hwm = -1;
	long long t0, t1;
	struct rusage ru;
	pid_t pid, w;
	FILE *out;

	while ((c = getopt(argc, argv, "+to:")) != -1) {
		if (c == 't')
			trace = 1;
		else if (c == 'o')
			report = optarg;
		else
			return 2;
	}
	if (report == NULL || optind >= argc) {
		fprintf(stderr, "usage: spawn [-t] -o REPORT -- COMMAND [ARG...]\n");
		return 2;
	}
	t0 = now_ns();
	if ((pid = fork()) < 0) {
		perror("spawn: fork");
		return 125;
	}
	if (pid == 0) {
		if (trace && (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0 ||
		    raise(SIGSTOP) != 0))
			_exit(126);
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "spawn: %s: %s\n", argv[optind], strerror(errno));
		_exit(127);
	}
	for (;;) {
		memset(&ru, 0, sizeof(ru));
		w = wait4(pid, &st, 0, &ru);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			perror("spawn: wait4");
			return 125;
		}
		if (!WIFSTOPPED(st))
			break;
		/* Only with -t: the first stop, exec, exit, or a signal. */
		if (st >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8))) {
			hwm = vmhwm_kb(pid);
			ptrace(PTRACE_CONT, pid, NULL, NULL);
		} else if (WSTOPSIG(st) == SIGSTOP && hwm == -1 && trace == 1) {
			trace = 2;	/* our own stop, before execvp */
			ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(long)
			    (PTRACE_O_TRACEEXIT | PTRACE_O_TRACEEXEC |
			    PTRACE_O_EXITKILL));
			ptrace(PTRACE_CONT, pid, NULL, NULL);
		} else if (WSTOPSIG(st) == SIGTRAP) {
			ptrace(PTRACE_CONT, pid, NULL, NULL);	/* exec event */
		} else {
			ptrace(PTRACE_CONT, pid, NULL,
			    (void *)(long)WSTOPSIG(st));
		}
	}
	t1 = now_ns();
	if ((out = fopen(report, "w")) == NULL) {
		perror(report);
		return 125;
	}
	fprintf(out, "%lld %lld %d %d %ld %ld %ld %ld\n", t0, t1, (int)pid,
	    WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
	    (long)(ru.ru_utime.tv_sec * 1000000L + ru.ru_utime.tv_usec),
	    (long)(ru.ru_stime.tv_sec * 1000000L + ru.ru_stime.tv_usec),
	    ru.ru_maxrss, hwm);
	fclose(out);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
