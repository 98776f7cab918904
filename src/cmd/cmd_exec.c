/* cmd_exec.c - run one skill script in the sandbox, as the agent would
 * usage: skillbox exec [OPTIONS] SKILL SCRIPT [ARGS...]
 *
 * Runs SCRIPT, a path inside the skill's folder, confined by the skill's
 * allowed-tools: the input JSON on its stdin and in $SKILL_INPUT, its
 * stdout on stdout and its stderr on stderr, each capped (head and tail
 * kept). For debugging skills and for cron. The script runs in the
 * workspace; $SKILL_ROOT is its (read-only) skill folder. A script
 * without execute permission runs through its #! line; one without #!
 * by its extension (.py python3, .js node), else /bin/sh. The options
 * below go before SCRIPT; everything after SCRIPT is the script's,
 * options included (a `--` right after SCRIPT is dropped: `-- --` passes
 * one).
 *
 * --input JSON      the input (default: stdin unless it is a terminal;
 *                   empty: {})
 * -d DIR            a skills folder (repeatable); default as in
 *                   `skills list`
 * --timeout S       wall-clock limit in seconds (default 30)
 * --workspace DIR   the writable folder, which the script's user must be
 *                   able to write (default: a fresh one in $TMPDIR, removed
 *                   afterwards)
 * --keep            keep the fresh workspace and say where it is
 * --no-net          no network even for a skill that asks for it
 * --allow-net       network for a skill that asks for it (the default)
 * --require LAYER   refuse to run unless LAYER is in force (repeatable or
 *                   comma-separated; see `skillbox sandbox check`)
 * --user UID[:GID]  started as root: the user to run as (default
 *                   65534:65534; 0 runs the script as root, said in
 *                   its confinement as AS-ROOT)
 * -e NAME           pass the environment variable NAME (a secret)
 * --json            print the result and the audit record as JSON
 * --stats           a last line on stderr: status, time, confinement (also
 *                   with -v)
 *
 * $SKILLBOX_SANDBOX_DISABLE=LAYER,... switches layers off, for tests.
 * Exit status: the script's; 124 timed out, 125 refused or could not
 * start, 126 not executable, 127 not found, 128+N killed by signal N;
 * 2 usage, 3 memory budget. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/cfg.h"
#include "cmd/cmd.h"
#include "fmt/json.h"
#include "base/log.h"
#include "sandbox/sandbox.h"
#include "skill/skill.h"
#include "base/str.h"
#include "tool/tool.h"

#define INPUT_MAX	(1u << 20)
#define EXIT_TIMEOUT	124
#define EXIT_REFUSED	125

struct opts {
	const char	*roots[SKILL_MAX_ROOTS];
	unsigned	 nroots;
	const char	*input, *workspace;
	int		 json, keep, nonet, user_set;
	struct sbx_policy p;
};

static void
diag(void *ctx, enum skill_sev sev, const char *file, unsigned line,
    const char *rule, const char *msg)
{
	if (sev == SKILL_FATAL && !app.quiet)
		log_warn("%s:%u: %s: %s (skipped)", file, line, rule, msg);
}

static int
add_root(struct opts *o, const char *dir)
{
	if (o->nroots == SKILL_MAX_ROOTS)
		return cmd_usage("exec", "at most %d skills folders",
		    SKILL_MAX_ROOTS);
	o->roots[o->nroots++] = dir;
	return 0;
}

static int
parse_user(struct sbx_policy *p, const char *s)
{
	char *end;
	unsigned long u, g;

	u = strtoul(s, &end, 10);
	g = u;
	if (*end == ':')
		g = strtoul(end + 1, &end, 10);
	if (end == s || *end != '\0' || u > 0x7fffffff || g > 0x7fffffff)
		return -1;
	p->uid = (uid_t)u;
	p->gid = (gid_t)g;
	p->as_root = u == 0;
	return 0;
}

enum { O_INPUT = 256, O_TIMEOUT, O_WORKSPACE, O_KEEP, O_NONET, O_NET,
	O_REQUIRE, O_USER, O_JSON, O_STATS };

static int
parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "input", required_argument, NULL, O_INPUT },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "workspace", required_argument, NULL, O_WORKSPACE },
		{ "keep", no_argument, NULL, O_KEEP },
		{ "no-net", no_argument, NULL, O_NONET },
		{ "allow-net", no_argument, NULL, O_NET },
		{ "require", required_argument, NULL, O_REQUIRE },
		{ "user", required_argument, NULL, O_USER },
		{ "json", no_argument, NULL, O_JSON },
		{ "stats", no_argument, NULL, O_STATS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *bad = NULL;
	unsigned l;
	double t;
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, "+d:e:h", lo, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (add_root(o, optarg) != 0)
				return -EXIT_USAGE;
			break;
		case 'e':
			if (o->p.nsecrets == SBX_MAX_SECRETS)
				return -cmd_usage("exec", "at most %d -e",
				    SBX_MAX_SECRETS);
			o->p.secrets[o->p.nsecrets++] = optarg;
			break;
		case O_INPUT: o->input = optarg; break;
		case O_TIMEOUT:
			if (str_decimal(optarg, &t) != 0 || !(t > 0) ||
			    t > 86400)
				return -cmd_usage("exec", "--timeout: seconds "
				    "from 0.001 to 86400");
			o->p.timeout_ms = (unsigned)(t * 1000 + 0.5);
			break;
		case O_WORKSPACE: o->workspace = optarg; break;
		case O_KEEP: o->keep = 1; break;
		case O_NONET: o->nonet = 1; break;
		case O_NET: o->nonet = 0; break;
		case O_REQUIRE:
			if (sbx_layers_parse(optarg, &l, &bad) != 0)
				return -cmd_usage("exec", "--require: no layer "
				    "'%s'", bad);
			o->p.require |= l;
			break;
		case O_USER:
			if (parse_user(&o->p, optarg) != 0)
				return -cmd_usage("exec", "--user: want UID or "
				    "UID:GID");
			o->user_set = 1;
			break;
		case O_JSON: o->json = 1; break;
		case O_STATS: app.stats = 1; break;
		case 'h': return -(cmd_help("exec") + 100);
		default: return -cmd_usage("exec", "bad option");
		}
	}
	return optind;
}

/* Options before SKILL and between SKILL and SCRIPT are ours, the rest
 * the script's: getopt stops at SKILL ("+"), then runs again from there.
 * Sets *skill; returns the index of SCRIPT (argc when missing), or a
 * negative exit status as parse_opts does. */
static int
parse_args(int argc, char **argv, struct opts *o, int *skill)
{
	const char *bad = NULL, *dis = getenv("SKILLBOX_SANDBOX_DISABLE");
	char *name;
	int i, j;

	if ((i = parse_opts(argc, argv, o)) < 0)
		return i;
	*skill = i;
	if (i >= argc)
		return argc;
	if (strcmp(argv[i - 1], "--") == 0)
		j = 1;			/* no options after `--` */
	else {
		/* getopt skips argv[0]: SKILL, named "exec" in messages. */
		name = argv[i];
		argv[i] = argv[0];
		j = parse_opts(argc - i, argv + i, o);
		argv[i] = name;
		if (j < 0)
			return j;
	}
	if (dis != NULL && *dis != '\0') {
		if (sbx_layers_parse(dis, &o->p.disable, &bad) != 0)
			return -cmd_usage("exec", "SKILLBOX_SANDBOX_DISABLE: "
			    "no layer '%s'", bad);
		log_warn("exec: sandbox layers switched off by "
		    "SKILLBOX_SANDBOX_DISABLE: %s", dis);
	}
	return i + j;
}

/* The input: --input, else stdin unless a terminal; must be JSON. */
static int
read_input(struct opts *o, const char **in, size_t *n)
{
	struct arena_mark m;
	struct json_doc d;
	struct sbuf sb;
	char buf[4096];
	ssize_t k;
	int e;

	if (o->input != NULL) {
		*in = o->input;
		*n = strlen(o->input);
	} else if (isatty(0)) {
		*in = "{}";
		*n = 2;
	} else {
		sbuf_init(&sb, &app.perm, INPUT_MAX);
		while ((k = read(0, buf, sizeof(buf))) > 0 ||
		    (k < 0 && errno == EINTR))
			if (k > 0)
				sbuf_add(&sb, buf, (size_t)k);
		if (sb.err == -E_NOMEM)
			return cmd_nomem("reading the input");
		if (sb.err || k < 0) {
			log_err("exec: input: %s", sb.err ? "over 1 MiB" :
			    strerror(errno));
			return EXIT_USAGE;
		}
		*in = sb.len > 0 ? sb.p : "{}";
		*n = sb.len > 0 ? sb.len : 2;
	}
	m = arena_mark(&app.perm);
	e = json_parse(&app.perm, *in, *n, 65536, &d);
	arena_reset_to(&app.perm, m);
	if (e == -E_NOMEM)
		return cmd_nomem("checking the input");
	if (e != 0)
		return cmd_usage("exec", "the input is not JSON (%s)",
		    err_str(e));
	return 0;
}

/* A fresh workspace, owned by the user the script runs as. */
static char *
make_workspace(const struct sbx_policy *p)
{
	char *t = arena_printf(&app.perm, "%s/skillbox-ws.XXXXXX",
	    p->tmp_parent);

	if (t == NULL)
		return NULL;
	if (mkdtemp(t) == NULL) {
		log_err("exec: workspace in %s: %s", p->tmp_parent,
		    strerror(errno));
		return NULL;
	}
	if (p->uid != 0 && getuid() == 0 && chown(t, p->uid, p->gid) != 0) {
		log_err("exec: workspace %s: %s", t, strerror(errno));
		rmdir(t);
		return NULL;
	}
	return t;
}

static int
print_json(const struct opts *o, const struct sbx_result *r,
    const char *const *argv, const char *in, size_t inlen, const char *ws)
{
	struct json_writer w;
	struct sbuf sb;
	struct str out;

	sbuf_init(&sb, &app.perm, 0);
	json_writer_init(&w, &sb);
	json_begin_obj(&w);
	json_key(&w, "status");
	if (r->status >= 0)
		json_put_int(&w, r->status);
	else
		json_put_null(&w);
	json_key(&w, "signal");
	json_put_int(&w, r->signal);
	json_key(&w, "timed_out");
	json_put_bool(&w, r->timed_out);
	json_key(&w, "denied");
	json_put_bool(&w, r->denied);
	json_key(&w, "why");
	if (r->why[0] != '\0')
		json_put_str(&w, r->why);
	else
		json_put_null(&w);
	json_key(&w, "ms");
	json_put_int(&w, r->ms);
	json_kstr(&w, "confinement",
	    r->confinement != NULL ? r->confinement : "none");
	json_kstr(&w, "missing", r->missing != 0 ? sbx_layers_str(&app.perm,
	    r->missing) : "");
	json_key(&w, "stdout");
	json_put_strn(&w, r->out != NULL ? r->out : "", r->out_len);
	json_key(&w, "stderr");
	json_put_strn(&w, r->err != NULL ? r->err : "", r->err_len);
	json_key(&w, "stdout_bytes");
	json_put_uint(&w, r->out_total);
	json_key(&w, "stderr_bytes");
	json_put_uint(&w, r->err_total);
	json_key(&w, "structured");
	json_put_bool(&w, sbx_output_json(r));
	if (sbx_output_json(r)) {
		out = str_trim((struct str){ r->out, r->out_len });
		json_key(&w, "output");
		json_put_raw(&w, out.p, out.n);
	}
	if (o->keep && ws != NULL) {
		json_kstr(&w, "workspace", ws);
	}
	json_key(&w, "audit");
	sbx_audit_json(r, &o->p, argv, in, inlen, &w);
	json_end_obj(&w);
	sbuf_addc(&sb, '\n');
	if (sb.err)
		return cmd_nomem("writing the result");
	return cmd_write(1, sb.p, sb.len) == 0 ? 0 : EXIT_FAIL;
}

static int
exit_status(const struct sbx_result *r, int e)
{
	if (e != 0 || r->denied)
		return EXIT_REFUSED;
	if (r->timed_out)
		return EXIT_TIMEOUT;
	if (r->signal != 0)
		return 128 + r->signal;
	return r->status;
}

int
cmd_exec(int argc, char **argv)
{
	struct opts o;
	struct skill_reg reg;
	struct sbx_result r;
	struct skill *sk;
	const char **av, *in = "{}", *miss, *script;
	char *path = NULL, *ws = NULL;
	const char *env;
	size_t inlen = 2;
	int i, sc, nargs, e, rc;

	memset(&o, 0, sizeof(o));
	sbx_policy_defaults(&o.p);
	if ((sc = parse_args(argc, argv, &o, &i)) < 0)
		return sc <= -100 ? -sc - 100 : -sc;
	if (sc >= argc)
		return cmd_usage("exec", "want SKILL SCRIPT [ARGS...]");
	script = argv[sc];
	/* Older versions wanted `--` before the script's options. */
	nargs = argc - sc - 1;
	if (nargs > 0 && strcmp(argv[sc + 1], "--") == 0) {
		sc++;
		nargs--;
	}
	if (getuid() == 0 && !o.user_set)
		o.p.uid = o.p.gid = 65534;
	if (o.nroots > 0)
		(void)cmd_warn_dirs(o.roots, o.nroots, "-d");
	else if ((e = cmd_default_roots("exec", o.roots, &o.nroots)) != 0)
		return e;
	else if ((env = getenv("SKILLBOX_SKILLS")) != NULL &&
	    strspn(env, ":") != strlen(env))
		(void)cmd_warn_dirs(o.roots, o.nroots, "$SKILLBOX_SKILLS");
	if ((e = read_input(&o, &in, &inlen)) != 0)
		return e;
	skill_reg_init(&reg, o.roots, o.nroots, diag, NULL);
	if ((e = skill_reg_scan(&reg)) != 0) {
		if (e == -E_NOMEM)
			return cmd_nomem("loading the skills");
		log_err("exec: skills: %s", err_str(e));
		return EXIT_REFUSED;
	}
	if ((sk = skill_find(&reg, argv[i])) == NULL) {
		log_err("exec: no skill named '%s'", argv[i]);
		return EXIT_REFUSED;
	}
	if ((e = skill_path(sk, &app.perm, script, 1, &path)) != 0) {
		if (e == -E_NOMEM)
			return cmd_nomem("finding the script");
		log_err("exec: %s: %s: %s", sk->name, script, e ==
		    -E_NOENT ? "no such script" : "not a path inside the skill "
		    "folder");
		return e == -E_NOENT ? 127 : EXIT_REFUSED;
	}
	o.p.skill_name = sk->name;
	o.p.skill_root = sk->dir;
	if ((e = sbx_from_allowed_tools(&o.p, &app.perm,
	    sk->allowed_tools)) < 0) {
		log_err("exec: %s: allowed-tools: %s", sk->name, err_str(e));
		return EXIT_REFUSED;
	}
	if (o.nonet)
		o.p.perms &= ~(unsigned)SBX_NET;
	if ((e = sbx_script_argv(&app.perm, path, (const char *const *)argv +
	    sc + 1, (unsigned)nargs, &av, &miss)) != 0) {
		if (e == -E_NOMEM)
			return cmd_nomem("building the command");
		log_err("exec: %s %s: %s%s", sk->name, script, e == -E_NOENT ?
		    "needs an interpreter that is not installed: " :
		    "cannot read it", e == -E_NOENT ? miss : "");
		return e == -E_NOENT ? 127 : 126;
	}
	if (o.workspace != NULL)
		o.p.workspace = o.workspace;
	else if ((o.p.workspace = ws = make_workspace(&o.p)) == NULL)
		return EXIT_REFUSED;
	o.p.cwd = o.p.workspace;
	e = sbx_run(&app.perm, &o.p, av, in, inlen, &r);
	if (e == -E_NOMEM) {
		rc = cmd_nomem("running the script");
		goto out;
	}
	rc = exit_status(&r, e);
	if (o.json) {
		if ((i = print_json(&o, &r, av, in, inlen, ws)) != 0)
			rc = i;
	} else {
		if (r.out_len > 0 && cmd_write(1, r.out, r.out_len) != 0)
			rc = EXIT_FAIL;
		if (r.err_len > 0)
			(void)cmd_write(2, r.err, r.err_len);
	}
	if (e != 0 || r.denied || r.timed_out || (r.why[0] != '\0' &&
	    r.status >= 126))
		log_err("exec: %s %s: %s", sk->name, script, r.why);
	else if (e == 0 && (r.status > 0 || r.signal) &&
	    !(o.p.perms & SBX_NET))
		log_err("exec: %s %s failed; %s", sk->name, script,
		    tool_no_net_note);
	miss = r.missing ? sbx_layers_str(&app.perm, r.missing) : NULL;
	if (app.stats || log_get_level() >= LOG_INFO)
		fprintf(stderr, "skillbox: exec: %s %s: %s%d, %ld ms, "
		    "stdout %zu bytes, stderr %zu bytes; confinement: %s%s%s\n",
		    sk->name, script, r.signal ? "signal " : "exit ",
		    r.signal ? r.signal : rc, r.ms, r.out_total, r.err_total,
		    r.confinement != NULL ? r.confinement : "none",
		    miss != NULL ? "; missing: " : "", miss != NULL ? miss :
		    "");
out:
	if (ws != NULL && o.keep)
		log_warn("exec: workspace kept in %s", ws);
	else if (ws != NULL && sbx_rmtree(ws) != 0)
		log_warn("exec: cannot remove the workspace %s", ws);
	return rc;
}
