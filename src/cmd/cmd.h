/* cmd.h - what the applets share: exit codes, the applet signature and
 * the helpers in cmd.c. Only main.c, cmd.c and cmd_*.c include this. */
#ifndef CMD_H
#define CMD_H

#include "agent/agent.h"
#include "base/arena.h"
#include "base/base.h"
#include "skill/skill.h"

/* Exit statuses, documented in --help and README.md. */
enum {
	EXIT_OK		= 0,
	EXIT_FAIL	= 1,	/* the work failed: invalid skill, error */
	EXIT_USAGE	= 2,	/* bad command line, or an applet
				 * left out of this build */
	EXIT_NOMEM	= 3,	/* the memory budget ran out */
	EXIT_LIMIT	= 4,	/* a limit stopped the turn */
	EXIT_WAIT	= 5,	/* the turn waits on a person's answer */
};

/* Process-wide state of one invocation: the one mutable global. */
struct app {
	struct arena	 perm;		/* lives until exit */
	int		 json;		/* --json where an applet takes it */
	int		 stats;		/* --stats: print memory use at exit */
	int		 quiet;
	const char	*prog;
	const char	*config;	/* -c FILE */
	int		 dirs;		/* -d gave the skills folders */
};

/* The options every applet takes, before its name or after it: -c FILE,
 * -d DIR (repeatable: $SKILLBOX_SKILLS for this run), -m SIZE, -v, -q,
 * --stats. */
struct cmd_global {
	const char	*config;
	const char	*memory;
	const char	*dirs[SKILL_MAX_ROOTS];
	unsigned	 ndirs;
	int		 verbose;
	int		 quiet;
	int		 stats;
};

/* Take one global option: opt is its letter ('S' for --stats), arg its
 * value. 0, or EXIT_USAGE (said). */
int	cmd_global_set(struct cmd_global *g, int opt, const char *arg);

/* Take the global options out of an applet's arguments (argv[0] is its
 * name), closing the gaps in argv and *argc. `own` lists the letters the
 * applet keeps for itself (a colon after one that takes a value: "d:q").
 * Only whole words count (-c FILE, --config FILE, --config=FILE), up to
 * "--"; with `own` starting with '+' (exec), up to the first operand that
 * no option takes, since what follows belongs to another program. 0, or
 * EXIT_USAGE (said). */
int	cmd_global_take(struct cmd_global *g, const char *own, int *argc,
	    char **argv);

extern struct app app;

/* Report the exhausted budget, naming what was being done. */
int	cmd_nomem(const char *doing);

/* Print the applet's help (from its opening comment) to stdout. */
int	cmd_help(const char *applet);

/* An applet of a feature left out (main.c's table) says so, naming the
 * switch: "skillbox: mcp: not in this build (MCP=0)". Returns EXIT_USAGE:
 * this binary has no such applet. */
int	cmd_off(const char *applet, const char *sw);

/* Report a usage error and point to --help; returns EXIT_USAGE. */
int	cmd_usage(const char *applet, const char *fmt, ...) ATTR_PRINTF(2, 3);

/* The skills folders used without -d (cfg_default_skill_dirs) into
 * roots[0..SKILL_MAX_ROOTS), their count in *n. 0 or an exit status. */
int	cmd_default_roots(const char *applet, const char **roots, unsigned *n);

/* Warn about each of the skills folders dirs[0..n) that is not a folder,
 * naming `from` (where the list came from); returns how many are missing. */
unsigned cmd_warn_dirs(const char *const *dirs, unsigned n, const char *from);

/* Load the configuration (app.config) into *out, in app.perm, and warn
 * about what it may get wrong without being invalid: a named skills folder
 * that does not exist, -d that its skills: overrides. 0, or an exit status
 * (the error said). */
struct cfg;
int	cmd_cfg_load(struct cfg **out);

/* Write all of buf to fd; returns 0 or -E_IO (EPIPE included). */
int	cmd_write(int fd, const char *buf, size_t n);

/* Text from outside (a model, the HTTP API, a skill's file) as printed
 * to stdout: when that is a terminal, a copy in app.perm whose controls
 * str_ctl_clean neutralised (no escape sequence moves the cursor or
 * retitles the window), else s itself; NULL is "". */
const char *cmd_shown(const char *s);

/* How run and chat print what the agents do. */
struct cmd_printer {
	int	json;		/* NDJSON events */
	int	stream;		/* text as it arrives */
	int	progress;	/* progress lines on stderr */
	int	open;		/* streamed text: 1 without its newline,
				 * 2 with it */
	int	tty;		/* a terminal at stdout or stderr */
	char	said[160];	/* the start of the last error printed */
};

/* The text of run or answer: arg, or stdin without one (at most 1 MiB),
 * without its trailing line ends, in app.perm. 0, or the exit status to
 * return (the error said). */
struct sbuf;
int	cmd_read_text(const char *applet, const char *arg, struct sbuf *in);

/* Load the configuration and open the agent with its session (NULL: a
 * new one; resume: it must exist; nolog: none kept), in app.perm; with
 * `model`, the model's API key must be there (cmd_key_check); its
 * events go to printer p (set up here: json NDJSON, stream text as it
 * comes). Returns 0 or an exit status (the error said). */
int	cmd_agent_open(struct agent **out, const char *session, int resume,
	    int stream, int json, int nolog, int model, struct cmd_printer *p);

/* Before a model is asked: its API key, if it needs one (cfg_key_check).
 * 0 (maybe a warning said), or EXIT_FAIL with the variable to set said. */
int	cmd_key_check(const struct cfg *c);

/* Print the turn's final text as p prints (not again when it was
 * streamed or said as an error); status st of the turn. */
void	cmd_agent_answer(struct cmd_printer *p, enum agent_status st,
	    const char *final);

/* The exit status for a turn that ended with st (AG_NOMEM says so). */
int	cmd_agent_status(enum agent_status st);

/* On stderr: how to go on with the paused turn (answer or approve). */
void	cmd_wait_hint(struct agent *ag);

int	cmd_answer(int argc, char **argv);
int	cmd_chat(int argc, char **argv);
int	cmd_config(int argc, char **argv);
int	cmd_eval(int argc, char **argv);
int	cmd_exec(int argc, char **argv);
int	cmd_fleet(int argc, char **argv);
int	cmd_jobs(int argc, char **argv);
int	cmd_llm(int argc, char **argv);
int	cmd_mcp(int argc, char **argv);
int	cmd_run(int argc, char **argv);
int	cmd_sandbox(int argc, char **argv);
int	cmd_serve(int argc, char **argv);
int	cmd_session(int argc, char **argv);
int	cmd_skills(int argc, char **argv);
int	cmd_state(int argc, char **argv);
int	cmd_version(int argc, char **argv);

#endif
