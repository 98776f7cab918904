/* main.c - the multi-call entry: `skillbox [OPTIONS] APPLET [ARGS]`, or an
 * applet called through a link of its own name. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "help.h"
#include "helpz.h"
#include "base/log.h"
#include "base/str.h"
#include "config.h"

struct app app;

struct applet {
	const char	*name;
	int		(*fn)(int, char **);	/* NULL: left out of this build */
	const char	*summary;		/* then its switch */
	unsigned	 help;		/* which text of help_lz */
	const char	*own;		/* global letters it keeps (see
					 * cmd_global_take), or NULL */
};

/* Sorted by name. An applet of a feature left out (make EVAL=0) stays,
 * to say so: OFF(name, switch). */
#define OFF(n, s)	{ n, NULL, s, 0, NULL }
static const struct applet applets[] = {
	{ "answer", cmd_answer, SUMMARY_ANSWER, HELP_ANSWER, NULL },
	{ "chat", cmd_chat, SUMMARY_CHAT, HELP_CHAT, NULL },
	{ "config", cmd_config, SUMMARY_CONFIG, HELP_CONFIG, NULL },
#if HAVE_EVAL
	{ "eval", cmd_eval, SUMMARY_EVAL, HELP_EVAL, NULL },
#else
	OFF("eval", "EVAL"),
#endif
	{ "exec", cmd_exec, SUMMARY_EXEC, HELP_EXEC, "+d:S" },
#if HAVE_FLEET
	{ "fleet", cmd_fleet, SUMMARY_FLEET, HELP_FLEET, NULL },
#else
	OFF("fleet", "FLEET"),
#endif
#if HAVE_JOBS
	{ "jobs", cmd_jobs, SUMMARY_JOBS, HELP_JOBS, NULL },
#else
	OFF("jobs", "JOBS"),
#endif
	{ "llm", cmd_llm, SUMMARY_LLM, HELP_LLM, "m:" },
#if HAVE_MCP
	{ "mcp", cmd_mcp, SUMMARY_MCP, HELP_MCP, NULL },
#else
	OFF("mcp", "MCP"),
#endif
	{ "run", cmd_run, SUMMARY_RUN, HELP_RUN, NULL },
	{ "sandbox", cmd_sandbox, SUMMARY_SANDBOX, HELP_SANDBOX, NULL },
	{ "serve", cmd_serve, SUMMARY_SERVE, HELP_SERVE, NULL },
	{ "session", cmd_session, SUMMARY_SESSION, HELP_SESSION, NULL },
	{ "skills", cmd_skills, SUMMARY_SKILLS, HELP_SKILLS, "d:q" },
#if HAVE_PERSIST
	{ "state", cmd_state, SUMMARY_STATE, HELP_STATE, NULL },
#else
	OFF("state", "PERSIST"),
#endif
	{ "version", cmd_version, SUMMARY_VERSION, HELP_VERSION, NULL },
};

static const struct applet *
find(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(applets); i++)
		if (strcmp(applets[i].name, name) == 0)
			return &applets[i];
	return NULL;
}

static void
usage(FILE *f)
{
	size_t i;

	fprintf(f,
	    "usage: skillbox [OPTIONS] APPLET [ARGS...]\n"
	    "Run LLM agents built from skills, in one static binary.\n\n"
	    "Applets:\n");
	for (i = 0; i < ARRAY_LEN(applets); i++)
		if (applets[i].fn != NULL)
			fprintf(f, "  %-10s %s\n", applets[i].name,
			    applets[i].summary);
	fprintf(f,
	    "\nOptions (before or after the applet):\n"
	    "  -c, --config FILE  skillbox.yaml or a crew (default\n"
	    "                     $SKILLBOX_CONFIG, ./skillbox.yaml,\n"
	    "                     /etc/skillbox/skillbox.yaml)\n"
	    "  -d, --dir DIR      a skills folder, as $SKILLBOX_SKILLS\n"
	    "  -m, --memory SIZE  memory budget, e.g. 512k, 4M (default %uk;\n"
	    "                     also $SKILLBOX_MEMORY, or memory: in the\n"
	    "                     configuration)\n"
	    "  -v, --verbose      more diagnostics (twice: debug)\n"
	    "  -q, --quiet        errors only\n"
	    "      --stats        print memory use at exit\n"
	    "  -h, --help         this text; `skillbox APPLET --help` for one\n"
	    "  -V, --version      same as `skillbox version`\n"
	    "(llm's -m, exec's -d, --stats, skills' -d, -q are their own)\n"
	    "\nExit status: 0 ok, 1 failure (a configuration error too), 2 "
	    "usage error (or an\napplet not in this build), 3 memory budget "
	    "exhausted, 4 a limit (turns, time,\ntokens, budget) stopped the "
	    "turn, 5 the turn waits on an answer.\n", MEM_DEFAULT >> 10);
}

int
cmd_help(const char *name)
{
	const struct applet *a = find(name);

	char *t, *p;
	unsigned i;

	if (a == NULL)
		return cmd_usage(NULL, "no applet '%s'", name);
	if ((t = arena_alloc(&app.perm, help_lz_LEN)) == NULL ||
	    str_unpack(help_lz, sizeof(help_lz), t, help_lz_LEN) !=
	    help_lz_LEN)
		return cmd_nomem("unpacking the help");
	for (p = t, i = 0; i < a->help; i++)
		p += strlen(p) + 1;
	fputs(p, stdout);
	return EXIT_OK;
}

/* From /proc/self/status, in KiB (0 if unknown): the peak resident set,
 * and the resident set now, split into file pages (the binary's code and
 * read-only data: RssFile, or RssShmem when it runs from a tmpfs) and
 * anonymous ones (budget, stack, data). */
static void
vm_kib(long kb[4])
{
	static const char *const key[5] = { "VmHWM:", "VmRSS:", "RssFile:",
	    "RssAnon:", "RssShmem:" };
	char line[128];
	FILE *f = fopen("/proc/self/status", "r");
	long v;
	int i;

	memset(kb, 0, 4 * sizeof(*kb));
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL)
		for (i = 0; i < 5; i++)
			if (strncmp(line, key[i], strlen(key[i])) == 0) {
				v = strtol(line + strlen(key[i]), NULL, 10);
				kb[i == 4 ? 2 : i] += v;
			}
	fclose(f);
}

static void
print_stats(void)
{
	long kb[4];

	vm_kib(kb);
	fprintf(stderr, "skillbox: memory: budget %zu KiB, peak %zu bytes, "
	    "in use %zu bytes, peak RSS (VmHWM) %ld KiB; RSS at exit %ld KiB: "
	    "%ld KiB file pages (code), %ld KiB anonymous\n", mem_budget() >>
	    10, mem_peak(), mem_used(), kb[0], kb[1], kb[2], kb[3]);
}

/* The `memory:` of the configuration, read before the budget exists (so
 * with a stack buffer and no stdio): a top-level line "memory: SIZE". The
 * full parse later checks it. */
static const char *
config_memory(const char *path)
{
	static char val[32];
	const char *env = getenv("SKILLBOX_CONFIG");
	const char *cand[] = { path, env, "skillbox.yaml",
	    "/etc/skillbox/skillbox.yaml" };
	char buf[8192], *p, *e;
	size_t i, k;
	ssize_t n = -1;
	int fd = -1;

	for (i = 0; i < ARRAY_LEN(cand) && fd < 0; i++)
		if (cand[i] != NULL && *cand[i] != '\0') {
			fd = open(cand[i], O_RDONLY | O_CLOEXEC);
			if (i < 2)	/* named: no fallback */
				break;
		}
	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	for (p = buf; p != NULL; p = (p = strchr(p, '\n')) ? p + 1 : NULL) {
		if (strncmp(p, "memory:", 7) != 0)
			continue;
		for (p += 7; *p == ' ' || *p == '\t' || *p == '"' ||
		    *p == '\''; p++)
			;
		for (e = p, k = 0; *e != '\0' && *e != '\n' && *e != ' ' &&
		    *e != '#' && *e != '"' && *e != '\'' && *e != '\r' &&
		    k < sizeof(val) - 1; e++)
			val[k++] = *e;
		val[k] = '\0';
		return k > 0 ? val : NULL;
	}
	return NULL;
}

/* -d DIR...: $SKILLBOX_SKILLS for this run, so every applet (and serve's
 * reloads) finds the folders where it would look for them. */
static int
set_dirs(const struct cmd_global *g)
{
	struct sbuf sb;
	unsigned i;

	sbuf_init(&sb, &app.perm, 64u << 10);
	for (i = 0; i < g->ndirs; i++) {
		if (i > 0)
			sbuf_addc(&sb, ':');
		sbuf_adds(&sb, g->dirs[i]);
	}
	if (sb.err != 0 || sb.p == NULL)
		return cmd_nomem("taking -d");
	if (setenv("SKILLBOX_SKILLS", sb.p, 1) != 0)
		return cmd_nomem("taking -d");
	app.dirs = 1;
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "memory", required_argument, NULL, 'm' },
		{ "config", required_argument, NULL, 'c' },
		{ "dir", required_argument, NULL, 'd' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "stats", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct cmd_global g;
	const struct applet *a;
	const char *base, *mem;
	size_t budget = MEM_DEFAULT;
	int c, r;

	memset(&g, 0, sizeof(g));

	base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	signal(SIGPIPE, SIG_IGN);
	if ((a = find(base)) == NULL) {
		/* "+": stop at the applet name, its options are its own. */
		while ((c = getopt_long(argc, argv, "+m:c:d:vqhV", opts,
		    NULL)) != -1) {
			switch (c) {
			case 'm': case 'c': case 'd': case 'v': case 'q':
			case 'S':
				if (cmd_global_set(&g, c, optarg) != 0)
					return EXIT_USAGE;
				break;
			case 'h': usage(stdout); return EXIT_OK;
			case 'V': a = find("version"); break;
			default: return cmd_usage(NULL, "bad option");
			}
		}
		if (a == NULL && optind >= argc) {
			usage(stderr);
			return EXIT_USAGE;
		}
		if (a == NULL && (a = find(argv[optind])) == NULL)
			return cmd_usage(NULL, "no applet '%s'", argv[optind]);
		if (optind < argc)
			argc -= optind, argv += optind;
		optind = 0;	/* musl: reset getopt for the applet */
	}
	if (a->fn == NULL)
		return cmd_off(a->name, a->summary);
	if (cmd_global_take(&g, a->own != NULL ? a->own : "", &argc,
	    argv) != 0)
		return EXIT_USAGE;
	app.config = g.config;
	app.quiet = g.quiet;
	app.stats = g.stats;
	if (g.verbose)
		log_set_level(g.verbose > 1 ? LOG_DEBUG : LOG_INFO);
	if (app.quiet)
		log_set_level(LOG_ERR);
	if ((mem = g.memory) == NULL)
		mem = getenv("SKILLBOX_MEMORY");
	if (mem == NULL) {
		/* A bad value here is left for the configuration check to
		 * report with its file:line; the default applies meanwhile. */
		const char *cm = config_memory(app.config);
		size_t v;

		if (cm != NULL && mem_parse_size(cm, &v) == 0 && v >= MEM_MIN &&
		    v <= MEM_MAX)
			budget = v;
	}
	if (mem != NULL && (mem_parse_size(mem, &budget) != 0 ||
	    budget < MEM_MIN || budget > MEM_MAX))
		return cmd_usage(NULL, "--memory '%s': want a size from %uk to "
		    "%zuM, like 512k or 4M", mem, MEM_MIN >> 10, MEM_MAX >> 20);
	if (mem_init(budget) != 0) {
		log_err("cannot reserve a memory budget of %zu KiB", budget >> 10);
		return EXIT_FAIL;
	}
	arena_init(&app.perm, "perm");
	app.prog = "skillbox";
	if (g.ndirs > 0 && (r = set_dirs(&g)) != 0)
		return r;
	if (argc > 1 && strcmp(argv[1], "--help") == 0)
		return cmd_help(a->name);
	r = a->fn(argc, argv);
	if (fflush(stdout) != 0 && r == EXIT_OK) {
		log_err("write error on standard output: %s", strerror(errno));
		r = EXIT_FAIL;
	}
	if (app.stats)
		print_stats();
	return r;
}
