/* cmd_sandbox.c - what confinement this kernel gives skill scripts
 * usage: skillbox sandbox check [--json] [--require LAYER[,LAYER]]...
 *        skillbox sandbox bench [N]
 *
 * check     each layer as active or unavailable, with the reason, and the
 *           Landlock ABI. Layers: rlimit nnp landlock landlock-net netns
 *           seccomp seccomp-net seccomp-unix userdrop privtmp env. Then
 *           the user scripts run as, from the configuration (-c): as root
 *           65534 unless sandbox.user names another; ROOT when it says
 *           root.
 * bench     the median time of N (default 1000) runs of /bin/true, plain
 *           fork/exec against sandboxed with every layer and with each
 *           layer off, as a Markdown table (tools/bench/sandbox.sh).
 *
 * --require LAYER  exit 1 when a named layer is unavailable
 * --json    machine-readable output
 *
 * Exit status: 0 ok, 1 a required layer is unavailable, 2 usage. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/cfg.h"
#include "cmd/cmd.h"
#include "fmt/json.h"
#include "base/log.h"
#include "sandbox/sandbox.h"
#include "base/str.h"

/* Display order: the way a child narrows itself. */
static const unsigned order[SBX_NLAYERS] = {
	SBX_L_ENV, SBX_L_RLIMIT, SBX_L_USERDROP, SBX_L_PRIVTMP, SBX_L_NNP,
	SBX_L_LANDLOCK, SBX_L_LANDLOCK_NET, SBX_L_NETNS, SBX_L_SECCOMP,
	SBX_L_SECCOMP_NET, SBX_L_SECCOMP_UNIX,
};

/* Who scripts run as under the configuration, in words ("uid 65534 ...",
 * or "ROOT ..."); *root is set when that is uid 0. */
static const char *
script_user(int *root)
{
	struct cfg c;
	char why[256];
	uid_t uid;
	gid_t gid;

	*root = 0;
	if (geteuid() != 0)
		return "this user (skillbox is not running as root)";
	if (cfg_load(&c, &app.perm, app.config, why, sizeof(why)) != 0)
		return arena_printf(&app.perm, "unknown: %s", why);
	if (cfg_script_user(&c, &uid, &gid) != 0)
		return arena_printf(&app.perm, "unknown: sandbox.user '%s': no "
		    "such user", c.sandbox.user);
	if ((*root = uid == 0))
		return "ROOT: sandbox.user is root, so scripts and model-written "
		    "command lines run with every capability";
	return arena_printf(&app.perm, "uid %u (%s)", (unsigned)uid,
	    c.sandbox.user != NULL ? "sandbox.user" : "nobody: no sandbox.user "
	    "is set");
}

static int
do_check(int json, unsigned require)
{
	struct sbx_probe pr;
	struct json_writer w;
	struct sbuf sb;
	const char *name, *user;
	unsigned i, b;
	int root;

	sbx_probe(&pr);
	user = script_user(&root);
	if (json) {
		sbuf_init(&sb, &app.perm, 0);
		json_writer_init(&w, &sb);
		json_begin_obj(&w);
		json_key(&w, "landlock_abi");
		json_put_int(&w, pr.landlock_abi);
		json_key(&w, "layers");
		json_begin_obj(&w);
		for (i = 0; i < SBX_NLAYERS; i++) {
			b = (unsigned)__builtin_ctz(order[i]);
			json_key(&w, sbx_layer_name(order[i]));
			json_begin_obj(&w);
			json_key(&w, "active");
			json_put_bool(&w, !!(pr.available & order[i]));
			if (!(pr.available & order[i])) {
				json_kstr(&w, "why",
				    pr.why[b] != NULL ? pr.why[b] :
				    "unavailable");
			}
			json_end_obj(&w);
		}
		json_end_obj(&w);
		json_key(&w, "rlimit_as_by_shell");
		json_put_bool(&w, pr.mem_ignored);
		json_kstr(&w, "scripts_run_as", user != NULL ? user : "?");
		json_key(&w, "as_root");
		json_put_bool(&w, root);
		json_end_obj(&w);
		sbuf_addc(&sb, '\n');
		if (sb.err)
			return cmd_nomem("writing the sandbox report");
		if (cmd_write(1, sb.p, sb.len) != 0)
			return EXIT_FAIL;
	} else {
		for (i = 0; i < SBX_NLAYERS; i++) {
			b = (unsigned)__builtin_ctz(order[i]);
			name = sbx_layer_name(order[i]);
			if (pr.available & order[i])
				printf("%-13s active", name);
			else
				printf("%-13s unavailable: %s", name,
				    pr.why[b] != NULL ? pr.why[b] : "?");
			if (order[i] == SBX_L_LANDLOCK && pr.landlock_abi > 0)
				printf(" (ABI %d)", pr.landlock_abi);
			if (order[i] == SBX_L_RLIMIT && pr.mem_ignored)
				printf(" (memory through sh ulimit: "
				    "setrlimit ignores it here)");
			putchar('\n');
		}
		printf("%s%s\n", root ? "WARNING: scripts run as " :
		    "scripts run as: ", user != NULL ? user : "?");
	}
	for (i = 0; i < SBX_NLAYERS; i++)
		if (require & ~pr.available & 1u << i)
			log_err("sandbox: required layer %s is unavailable: %s",
			    sbx_layer_name(1u << i), pr.why[i] != NULL ?
			    pr.why[i] : "?");
	return require & ~pr.available ? EXIT_FAIL : EXIT_OK;
}

static long
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int
cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

/* One timed run of /bin/true: plain (p == NULL) or under p; -1 on
 * failure. */
static long
time_one(const struct sbx_policy *p)
{
	static char *const argv[] = { "/bin/true", NULL };
	struct sbx_result r;
	struct arena_mark m;
	long t0 = now_us();
	pid_t pid;
	int st;

	if (p == NULL) {
		if ((pid = fork()) == 0) {
			execv(argv[0], argv);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid || st != 0)
			return -1;
	} else {
		m = arena_mark(&app.perm);
		st = sbx_run(&app.perm, p, (const char *const *)argv, "", 0,
		    &r);
		arena_reset_to(&app.perm, m);
		if (st != 0 || r.status != 0)
			return -1;
	}
	return now_us() - t0;
}

/* The configurations take turns, so that a load that comes and goes
 * weighs on all of them alike; then the median of each. */
static int
do_bench(unsigned n)
{
	static const unsigned off[] = { 0, SBX_L_LANDLOCK, SBX_L_SECCOMP,
	    SBX_L_NETNS, SBX_L_NNP, SBX_L_RLIMIT, SBX_L_PRIVTMP, SBX_L_ENV };
	enum { NC = 1 + ARRAY_LEN(off) };
	struct sbx_policy p[NC];
	struct sbx_result r;
	const char *words[NC];
	long *t, med[NC];
	unsigned i, c;
	char *ws;

	if ((t = arena_alloc(&app.perm, (size_t)n * NC * sizeof(*t))) == NULL)
		return cmd_nomem("timing the sandbox");
	for (c = 1; c < NC; c++) {
		sbx_policy_defaults(&p[c]);
		p[c].skill_name = "bench";
		p[c].skill_root = "/";
		if ((ws = arena_strdup(&app.perm, p[c].tmp_parent)) == NULL)
			return cmd_nomem("timing the sandbox");
		p[c].workspace = ws;
		if (getuid() == 0)
			p[c].uid = p[c].gid = 65534;
		p[c].disable = off[c - 1];
		if (sbx_run(&app.perm, &p[c], (const char *const *)(char *[]){
		    "/bin/true", NULL }, "", 0, &r) != 0) {
			log_err("sandbox bench: %s", r.why);
			return EXIT_FAIL;
		}
		words[c] = r.confinement;
	}
	for (i = 0; i < n; i++)
		for (c = 0; c < NC; c++)
			if ((t[c * n + i] = time_one(c > 0 ? &p[c] :
			    NULL)) < 0) {
				log_err("sandbox bench: /bin/true failed");
				return EXIT_FAIL;
			}
	for (c = 0; c < NC; c++) {
		qsort(t + c * n, n, sizeof(*t), cmp_long);
		med[c] = t[c * n + n / 2];
	}
	printf("| run of /bin/true (median of %u) | layers in force | "
	    "µs | overhead µs |\n|---|---|---:|---:|\n", n);
	printf("| plain fork/exec/wait | none | %ld | 0 |\n", med[0]);
	for (c = 1; c < NC; c++)
		printf("| sandboxed, %s%s | %s | %ld | %ld |\n", off[c - 1] ?
		    sbx_layer_name(off[c - 1]) : "every layer", off[c - 1] ?
		    " off" : "", words[c], med[c], med[c] - med[0]);
	return EXIT_OK;
}

int
cmd_sandbox(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "require", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sub, *bad = NULL;
	unsigned require = 0, l;
	long n = 1000;
	char *end;
	int c, json = 0;

	if (argc < 2)
		return cmd_usage("sandbox", "missing sub-command");
	sub = argv[1];
	if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0)
		return cmd_help("sandbox");
	argc--;
	argv++;
	optind = 0;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 'r':
			if (sbx_layers_parse(optarg, &l, &bad) != 0)
				return cmd_usage("sandbox", "no layer '%s'",
				    bad);
			require |= l;
			break;
		case 'h': return cmd_help("sandbox");
		default: return cmd_usage("sandbox", "bad option");
		}
	}
	if (strcmp(sub, "check") == 0 && optind == argc)
		return do_check(json, require);
	if (strcmp(sub, "bench") == 0 && argc - optind <= 1) {
		if (optind < argc && ((n = strtol(argv[optind], &end,
		    10)) < 1 || n > 100000 || *end != '\0'))
			return cmd_usage("sandbox", "bench: N from 1 to "
			    "100000");
		return do_bench((unsigned)n);
	}
	return cmd_usage("sandbox", "unknown sub-command or extra arguments");
}
