/* cmd_jobs.c - a durable job board, schedules, and the runner for timers
 * usage: skillbox jobs add [--json] [--to AGENT] [--after ID]... [--tries N]
 *          [--backoff SECS] [--timeout SECS] [--budget MONEY]
 *          [--schema JSON] TITLE [INPUT]
 *        skillbox jobs list [--json] [--all]
 *        skillbox jobs show [--json] ID
 *        skillbox jobs block ID [REASON]
 *        skillbox jobs unblock ID [TEXT]
 *        skillbox jobs comment ID TEXT
 *        skillbox jobs cancel ID
 *        skillbox jobs archive ID
 *        skillbox jobs prune [--older DAYS]
 *        skillbox jobs schedule add [--tz TZ] [--to AGENT] SPEC TITLE [INPUT]
 *        skillbox jobs schedule list [--json]
 *        skillbox jobs schedule rm ID
 *        skillbox jobs run-due [--max N]
 * The board lives in <state_dir>/jobs/journal (JSON lines, each change
 * synced before the command returns). A job runs once every job named by
 * --after is done (ready); its INPUT (the TITLE without one) is one turn
 * of the entry agent, or of AGENT (a skill or orchestration skill), in the
 * session job-ID, with the job's comments after it.
 *
 * --to AGENT      who does the job (default: the entry agent)
 * --after ID      a parent: wait until job ID is done (repeatable)
 * --tries N       runs before the job fails (default: jobs.retries + 1)
 * --backoff SECS  wait before the 2nd run, doubling after (jobs.backoff)
 * --timeout SECS  time budget of each run (default: limits.time)
 * --budget MONEY  money budget of each run (default: limits.budget)
 * --schema JSON   the result must be JSON matching this JSON-Schema subset
 *                 (type, required, properties with type)
 * --all           list archived (cancelled) jobs too
 * --tz TZ         a POSIX TZ string, e.g. CET-1CEST,M3.5.0,M10.5.0/3
 *                 (default UTC)
 * --max N         run-due: jobs run at once, each in its own process
 *                 (default: jobs.max_parallel)
 * --older DAYS    prune: archived jobs, and finished ones older than DAYS
 *                 (30), leave the journal; their session logs go too
 *
 * SPEC: hourly, daily, weekly, monthly, "@every 15m", or five cron fields
 * ("0,30 9-17 * * mon-fri"). run-due (from cron or a procd timer) turns
 * the schedules that are due into jobs, reclaims runs whose worker died,
 * then runs the ready jobs. After downtime a schedule fires once, for its
 * most recent due time; before the clock is set (before 2020) none fires.
 * A run reports through the tools job_show, job_complete (the result,
 * checked against --schema), job_block (what it needs from a person) and
 * job_comment. A run that completes makes the job done; one that blocks
 * blocks it (unblock TEXT goes on, TEXT added to the input), as one that
 * waits on a person does: show says how to answer, the next run-due goes
 * on with the answer; one that fails, crashes, breaks the schema or ends
 * without job_complete or job_block is tried again after the backoff, and
 * the job fails when its tries are spent; one out of time fails it.
 * SKILLBOX_NOW=SECONDS (tests only) sets the clock the board uses.
 * Exit status: 0 ok, 1 no such job or an I/O error, 2 usage. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/cfg.h"
#include "cmd/cmd.h"
#include "fmt/json.h"
#include "base/log.h"
#include "base/str.h"
#include "serve/jobs.h"
#include "fmt/schedule.h"
#include "session/slog.h"

struct jopt {
	int		 json, all, max, tries;
	long		 older;
	long		 backoff, timeout;
	const char	*to, *budget, *schema, *tz;
	unsigned	 parents[JOB_MAX_PARENTS], nparents;
};

/* What the sub-commands share: the configuration and its board. */
struct jctx {
	struct cfg	 cfg;
	struct board	 board;
};

static int
fail(const char *what, int e)
{
	if (e == -E_NOMEM)
		return cmd_nomem(what);
	log_err("jobs: %s: %s", what, e == -E_NOENT ? "no such job" :
	    e == -E_INVAL ? "invalid" : e == -E_LIMIT ? "the board has "
	    "used its last id, and ids are never used twice: start a new "
	    "state_dir" : strerror(errno));
	return EXIT_FAIL;
}

/* Load the configuration and open its board, into x. */
static int
open_board(struct jctx *x)
{
	char why[320];
	int e;

	if ((e = cfg_load(&x->cfg, &app.perm, app.config, why,
	    sizeof(why)))) {
		if (e == -E_NOMEM)
			return cmd_nomem("loading the configuration");
		log_err("%s", why);
		return EXIT_FAIL;
	}
	if ((e = board_open_cfg(&x->board, &x->cfg)) != 0)
		return fail(x->cfg.state_dir, e);
	return 0;
}

static long
num(const char *s, long max)
{
	long v = 0;

	if (*s == '\0')
		return -1;
	for (; *s >= '0' && *s <= '9' && v <= max; s++)
		v = v * 10 + (*s - '0');
	return *s != '\0' || v > max ? -1 : v;
}

/* For a blocked job: the command that answers what it waits on. */
static void
print_answer_hint(const struct job *j)
{
	if (j->st == JOB_TODO && (j->ans_kind & 3))
		puts("answered: the next run-due goes on");
	if (j->st == JOB_BLOCKED && j->wait)
		printf("answer: skillbox answer %s %s\n", cmd_shown(j->session),
		    j->wait == JOB_WAIT_APPROVAL ? "--approve (or --deny "
		    "'REASON')" : "'TEXT'");
	else if (j->st == JOB_BLOCKED)
		printf("answer: skillbox jobs unblock %u 'TEXT'\n", j->id);
}

static void
print_job(struct jctx *x, const struct job *j)
{
	const struct job_event *e;
	unsigned i;

	printf("job %u: %s\nstatus: %s\n", j->id, cmd_shown(j->title),
	    job_status_name(job_status(&x->board, j)));
	if (*j->to)
		printf("to: %s\n", cmd_shown(j->to));
	if (j->nparents) {
		printf("after:");
		for (i = 0; i < j->nparents; i++)
			printf(" %u", j->parents[i]);
		putchar('\n');
	}
	printf("tries: %u of %u\n", j->tries, j->max_tries);
	if (j->next > job_now() && j->st == JOB_TODO)
		printf("next try in: %llds\n", j->next - job_now());
	if (j->why)
		printf("why: %s\n", cmd_shown(j->why));
	print_answer_hint(j);
	printf("input: %s\n", cmd_shown(j->input));
	if (j->result)
		printf("result: %s\n", cmd_shown(j->result));
	for (e = j->ev; e != NULL; e = e->next)
		printf("[%lld] %s%s%s\n", e->t, cmd_shown(e->kind), e->text ?
		    ": " : "", cmd_shown(e->text));
}

static int
show(struct jctx *x, const struct jopt *o, unsigned id)
{
	struct job *j = board_job(&x->board, id);
	struct sbuf sb;

	if (j == NULL)
		return fail("show", -E_NOENT);
	if (!o->json) {
		print_job(x, j);
		return EXIT_OK;
	}
	sbuf_init(&sb, &app.perm, 0);
	job_json(&sb, j, &x->board);
	if (sb.err)
		return cmd_nomem("printing the job");
	puts(sb.p);
	return EXIT_OK;
}

static int
list(struct jctx *x, const struct jopt *o)
{
	struct sbuf sb;
	unsigned i;

	sbuf_init(&sb, &app.perm, 0);
	for (i = 0; i < x->board.njobs; i++) {
		const struct job *j = x->board.jobs[i];

		if (j->st == JOB_ARCHIVED && !o->all)
			continue;
		if (o->json) {
			sbuf_truncate(&sb, 0);
			job_json(&sb, j, &x->board);
			if (sb.err)
				return cmd_nomem("printing the jobs");
			puts(sb.p);
		} else {
			struct arena_mark m = arena_mark(&app.perm);

			printf("%u\t%s\t%s\n", j->id,
			    job_status_name(job_status(&x->board, j)),
			    cmd_shown(j->title));
			arena_reset_to(&app.perm, m);
		}
	}
	return EXIT_OK;
}

static int
add(struct jctx *x, const struct jopt *o, int argc, char **argv)
{
	const char *why;
	struct job j;
	int e;

	if (argc < 1 || argc > 2)
		return cmd_usage("jobs", "add: TITLE [INPUT]");
	if ((why = job_check_new(&app.perm, &x->cfg, argv[0], o->to)) != NULL)
		return cmd_usage("jobs", "add: %s", why);
	memset(&j, 0, sizeof(j));
	j.title = argv[0];
	j.input = argc > 1 ? argv[1] : argv[0];
	j.to = o->to ? o->to : "";
	j.schema = o->schema;
	j.budget = o->budget;
	memcpy(j.parents, o->parents, sizeof(j.parents));
	j.nparents = o->nparents;
	j.max_tries = o->tries > 0 ? (unsigned)o->tries : 0;
	j.backoff = o->backoff;
	j.timeout = o->timeout;
	j.made = job_now();
	if ((e = board_add(&x->board, &j, x->cfg.jobs.retries + 1,
	    x->cfg.jobs.backoff_s)) == -E_PARSE)
		return cmd_usage("jobs", "--schema: not JSON");
	if (e != 0)
		return fail(e == -E_INVAL ? "add: --after names no job" :
		    "add", e);
	if (o->json)
		printf("{\"id\":%u}\n", j.id);
	else
		printf("%u\n", j.id);
	return EXIT_OK;
}

/* block, unblock, comment, cancel, archive: an event, and the job's
 * status. */
static int
change(struct jctx *x, const char *sub, unsigned id, const char *text)
{
	int e = board_change(&x->board, id, sub, text, job_now());

	if (e == -E_DENIED) {
		log_err("jobs: %s: job %u is %s", sub, id,
		    job_status_name(board_job(&x->board, id)->st));
		return EXIT_FAIL;
	}
	if (e == -E_BUSY) {
		log_err("jobs: unblock: job %u waits on an %s", id,
		    board_job(&x->board, id)->wait == JOB_WAIT_APPROVAL ?
		    "approval" : "answer");
		return EXIT_FAIL;
	}
	return e != 0 ? fail(sub, e) : EXIT_OK;
}

/* Drop old finished jobs from the board (board_prune), then their
 * session logs: the journal no longer names them, and nothing would
 * ever remove them from flash. */
static int
prune(struct jctx *x, const struct jopt *o)
{
	long days = o->older >= 0 ? o->older : 30;
	unsigned *gone;
	char name[16];
	int n, i;

	if ((gone = arena_alloc(&app.perm, (x->board.njobs + 1) *
	    sizeof(*gone))) == NULL)
		return cmd_nomem("pruning");
	if ((n = board_prune(&x->board, job_now() - days * 86400LL,
	    gone)) < 0)
		return fail("prune", n);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "job-%u", gone[i]);
		(void)slog_remove(&app.perm, x->cfg.state_dir, name);
	}
	printf("%d\n", n);
	return EXIT_OK;
}

static int
sched_cmd(struct jctx *x, const struct jopt *o, int argc, char **argv)
{
	struct job_sched s;
	struct sched sc;
	const char *why;
	struct tz z;
	unsigned i;
	long id;
	int e;

	if (argc >= 3 && argc <= 4 && strcmp(argv[0], "add") == 0) {
		if ((why = job_check_new(&app.perm, &x->cfg, argv[2],
		    o->to)) != NULL)
			return cmd_usage("jobs", "schedule add: %s", why);
		if (sched_parse(argv[1], &sc) != 0)
			return cmd_usage("jobs", "'%s': not a schedule",
			    argv[1]);
		if (tz_parse(o->tz ? o->tz : "UTC", &z) != 0)
			return cmd_usage("jobs", "--tz '%s': not a POSIX TZ",
			    o->tz);
		memset(&s, 0, sizeof(s));
		s.spec = argv[1];
		s.tz = o->tz ? o->tz : "UTC";
		s.title = argv[2];
		s.input = argc > 3 ? argv[3] : argv[2];
		s.to = o->to ? o->to : "";
		s.made = job_now();
		if ((e = board_put_sched(&x->board, &s)) != 0)
			return fail("schedule add", e);
		printf("%u\n", s.id);
		return EXIT_OK;
	}
	if (argc == 1 && strcmp(argv[0], "list") == 0) {
		for (i = 0; i < x->board.nscheds; i++) {
			const struct job_sched *p = x->board.scheds[i];

			if (p->gone)
				continue;
			if (o->json)
				printf("{\"id\":%u,\"last\":%lld}\n", p->id,
				    p->last);
			else
				printf("%u\t%s\t%s\t%s\n", p->id,
				    cmd_shown(p->spec), cmd_shown(p->tz),
				    cmd_shown(p->title));
		}
		return EXIT_OK;
	}
	if (argc == 2 && strcmp(argv[0], "rm") == 0) {
		if ((id = num(argv[1], JOB_ID_MAX)) <= 0 ||
		    board_sched(&x->board, (unsigned)id) == NULL ||
		    board_sched(&x->board, (unsigned)id)->gone)
			return fail("schedule rm", -E_NOENT);
		s = *board_sched(&x->board, (unsigned)id);
		s.gone = 1;
		if ((e = board_put_sched(&x->board, &s)) != 0)
			return fail("schedule", e);
		return EXIT_OK;
	}
	return cmd_usage("jobs", "schedule add|list|rm");
}

static int
run_due(struct jctx *x, const struct jopt *o)
{
	int n = jobs_run_due(&app.perm, &x->cfg, &x->board, o->max);

	if (n == -E_NOMEM)
		return cmd_nomem("running the due jobs");
	if (n < 0)
		return EXIT_FAIL;
	if (o->json)
		printf("{\"ran\":%d}\n", n);
	return EXIT_OK;
}

static int
jobs_main(struct jctx *x, const char *sub, struct jopt *o, int argc,
    char **argv)
{
	long id = argc > 0 ? num(argv[0], JOB_ID_MAX) : -1;
	int r;

	if ((r = open_board(x)) != 0)
		return r;
	if (strcmp(sub, "run-due") == 0)
		return argc ? cmd_usage("jobs", "run-due: no arguments") :
		    run_due(x, o);
	if ((r = board_lock(&x->board)) != 0)
		return fail(sub, r);
	if (strcmp(sub, "add") == 0)
		r = add(x, o, argc, argv);
	else if (strcmp(sub, "list") == 0)
		r = argc ? cmd_usage("jobs", "list: no arguments") : list(x, o);
	else if (strcmp(sub, "schedule") == 0)
		r = sched_cmd(x, o, argc, argv);
	else if (strcmp(sub, "prune") == 0)
		r = argc ? cmd_usage("jobs", "prune: no arguments") :
		    prune(x, o);
	else if (id <= 0)
		r = cmd_usage("jobs", "%s: want a job ID", sub);
	else if (strcmp(sub, "show") == 0 && argc == 1)
		r = show(x, o, (unsigned)id);
	else if ((strcmp(sub, "block") == 0 || strcmp(sub, "unblock") == 0) &&
	    argc <= 2)
		r = change(x, sub, (unsigned)id, argc > 1 ? argv[1] : NULL);
	else if (strcmp(sub, "comment") == 0 && argc == 2)
		r = change(x, sub, (unsigned)id, argv[1]);
	else if ((strcmp(sub, "cancel") == 0 || strcmp(sub, "archive") == 0) &&
	    argc == 1)
		r = change(x, sub, (unsigned)id, NULL);
	else
		r = cmd_usage("jobs", "'%s': bad sub-command or arguments",
		    sub);
	board_unlock(&x->board);
	return r;
}

int
cmd_jobs(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "all", no_argument, NULL, 'a' },
		{ "to", required_argument, NULL, 't' },
		{ "after", required_argument, NULL, 'p' },
		{ "tries", required_argument, NULL, 'n' },
		{ "backoff", required_argument, NULL, 'b' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "budget", required_argument, NULL, 'B' },
		{ "schema", required_argument, NULL, 's' },
		{ "tz", required_argument, NULL, 'z' },
		{ "max", required_argument, NULL, 'm' },
		{ "older", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct jctx x;
	struct jopt o;
	const char *sub;
	double d;
	long v = 0;
	int ch;

	memset(&o, 0, sizeof(o));
	o.backoff = o.older = -1;
	if (argc > 1 && strcmp(argv[1], "--help") == 0)
		return cmd_help("jobs");
	if (argc < 2)
		return cmd_usage("jobs", "missing sub-command");
	sub = argv[1];
	argc--, argv++;
	optind = 0;
	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (strchr("pnbTmo", ch) && (v = num(optarg, 1L << 30)) < 0)
			return cmd_usage("jobs", "'%s': not a number", optarg);
		switch (ch) {
		case 'j': o.json = 1; break;
		case 'a': o.all = 1; break;
		case 't': o.to = optarg; break;
		case 'p':
			if (o.nparents == JOB_MAX_PARENTS || v == 0)
				return cmd_usage("jobs", "--after: at most %d "
				    "job IDs", JOB_MAX_PARENTS);
			o.parents[o.nparents++] = (unsigned)v;
			break;
		case 'n': o.tries = (int)v; break;
		case 'b': o.backoff = v; break;
		case 'T': o.timeout = v; break;
		case 'B':
			if (str_decimal(optarg, &d) != 0)
				return cmd_usage("jobs", "--budget: a decimal");
			o.budget = optarg;
			break;
		case 's': o.schema = optarg; break;
		case 'z': o.tz = optarg; break;
		case 'm': o.max = (int)v; break;
		case 'o': o.older = v; break;
		case 'h': return cmd_help("jobs");
		default: return cmd_usage("jobs", "bad option");
		}
	}
	return jobs_main(&x, sub, &o, argc - optind, argv + optind);
}
