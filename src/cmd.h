/* cmd.h - what the applets share: exit codes, the applet signature and
 * start-up helpers. Only main.c and cmd_*.c include this. */
#ifndef CMD_H
#define CMD_H

#include "arena.h"
#include "base.h"

/* Exit statuses, documented in --help and README.md. */
enum {
	EXIT_OK		= 0,
	EXIT_FAIL	= 1,	/* the work failed: invalid skill, error */
	EXIT_USAGE	= 2,	/* bad command line */
	EXIT_NOMEM	= 3,	/* the memory budget ran out */
};

/* Process-wide state of one invocation: the one mutable global. */
struct app {
	struct arena	 perm;		/* lives until exit */
	int		 json;		/* --json where an applet takes it */
	int		 stats;		/* --stats: print memory use at exit */
	int		 quiet;
	const char	*prog;
};

extern struct app app;

/* Report the exhausted budget, naming what was being done. */
int	cmd_nomem(const char *doing);

/* Print the applet's help (from its opening comment) to stdout. */
int	cmd_help(const char *applet);

/* Report a usage error and point to --help; returns EXIT_USAGE. */
int	cmd_usage(const char *applet, const char *fmt, ...) ATTR_PRINTF(2, 3);

/* Write all of buf to fd; returns 0 or -E_IO (EPIPE included). */
int	cmd_write(int fd, const char *buf, size_t n);

int	cmd_llm(int argc, char **argv);
int	cmd_skills(int argc, char **argv);
int	cmd_version(int argc, char **argv);

#endif
