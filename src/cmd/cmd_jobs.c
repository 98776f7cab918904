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
#include <signal.h>
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

static struct cfg jcfg;
static struct board board;

static int
fail(const char *what, int e)
{
	if (e == -E_NOMEM)
		return cmd_nomem(what);
	log_err("jobs: %s: %s", what, e == -E_NOENT ? "no such job" :
	    e == -E_INVAL ? "invalid" : strerror(errno));
	return EXIT_FAIL;
}

/* Open the board of configuration c (NULL: load it) into `board`. */
static int
open_board(const struct cfg *c)
{
	char why[320], *dir;
	int e;

	if (c == NULL && (e = cfg_load(&jcfg, &app.perm, app.config, why,
	    sizeof(why)))) {
		if (e == -E_NOMEM)
			return cmd_nomem("loading the configuration");
		log_err("%s", why);
		return EXIT_FAIL;
	}
	c = c ? c : &jcfg;
	if ((dir = arena_printf(&app.perm, "%s/jobs", c->state_dir)) == NULL)
		return cmd_nomem("opening the board");
	if ((e = board_open(&board, dir, c->jobs.compact_at)) != 0)
		return fail(dir, e);
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
		printf("answer: skillbox answer %s %s\n", j->session,
		    j->wait == JOB_WAIT_APPROVAL ? "--approve (or --deny "
		    "'REASON')" : "'TEXT'");
	else if (j->st == JOB_BLOCKED)
		printf("answer: skillbox jobs unblock %u 'TEXT'\n", j->id);
}

static void
print_job(const struct job *j)
{
	const struct job_event *e;
	unsigned i;

	printf("job %u: %s\nstatus: %s\n", j->id, j->title,
	    job_status_name(job_status(&board, j)));
	if (*j->to)
		printf("to: %s\n", j->to);
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
		printf("why: %s\n", j->why);
	print_answer_hint(j);
	printf("input: %s\n", j->input);
	if (j->result)
		printf("result: %s\n", j->result);
	for (e = j->ev; e != NULL; e = e->next)
		printf("[%lld] %s%s%s\n", e->t, e->kind, e->text ? ": " : "",
		    e->text ? e->text : "");
}

static int
show(const struct jopt *o, unsigned id)
{
	struct job *j = board_job(&board, id);
	struct sbuf sb;

	if (j == NULL)
		return fail("show", -E_NOENT);
	if (!o->json) {
		print_job(j);
		return EXIT_OK;
	}
	sbuf_init(&sb, &app.perm, 0);
	job_json(&sb, j, &board);
	if (sb.err)
		return cmd_nomem("printing the job");
	puts(sb.p);
	return EXIT_OK;
}

static int
list(const struct jopt *o)
{
	struct sbuf sb;
	unsigned i;

	sbuf_init(&sb, &app.perm, 0);
	for (i = 0; i < board.njobs; i++) {
		const struct job *j = board.jobs[i];

		if (j->st == JOB_ARCHIVED && !o->all)
			continue;
		if (o->json) {
			sbuf_truncate(&sb, 0);
			job_json(&sb, j, &board);
			if (sb.err)
				return cmd_nomem("printing the jobs");
			puts(sb.p);
		} else
			printf("%u\t%s\t%s\n", j->id,
			    job_status_name(job_status(&board, j)), j->title);
	}
	return EXIT_OK;
}

static int
add(const struct jopt *o, int argc, char **argv)
{
	struct job j;
	int e;

	if (argc < 1 || argc > 2)
		return cmd_usage("jobs", "add: TITLE [INPUT]");
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
	if ((e = board_add(&board, &j, jcfg.jobs.retries + 1,
	    jcfg.jobs.backoff_s)) == -E_PARSE)
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
change(const char *sub, unsigned id, const char *text)
{
	int e = board_change(&board, id, sub, text, job_now());

	if (e == -E_DENIED) {
		log_err("jobs: %s: job %u is %s", sub, id,
		    job_status_name(board_job(&board, id)->st));
		return EXIT_FAIL;
	}
	if (e == -E_BUSY) {
		log_err("jobs: unblock: job %u waits on an %s", id,
		    board_job(&board, id)->wait == JOB_WAIT_APPROVAL ?
		    "approval" : "answer");
		return EXIT_FAIL;
	}
	return e != 0 ? fail(sub, e) : EXIT_OK;
}

/* Drop old finished jobs from the board (board_prune), then their
 * session logs: the journal no longer names them, and nothing would
 * ever remove them from flash. */
static int
prune(const struct jopt *o)
{
	long days = o->older >= 0 ? o->older : 30;
	unsigned *gone;
	char name[16];
	int n, i;

	if ((gone = arena_alloc(&app.perm, (board.njobs + 1) *
	    sizeof(*gone))) == NULL)
		return cmd_nomem("pruning");
	if ((n = board_prune(&board, job_now() - days * 86400LL, gone)) < 0)
		return fail("prune", n);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "job-%u", gone[i]);
		(void)slog_remove(&app.perm, jcfg.state_dir, name);
	}
	printf("%d\n", n);
	return EXIT_OK;
}

static int
sched_cmd(const struct jopt *o, int argc, char **argv)
{
	struct job_sched s;
	struct sched sc;
	struct tz z;
	unsigned i;
	long id;
	int e;

	if (argc >= 3 && argc <= 4 && strcmp(argv[0], "add") == 0) {
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
		if ((e = board_put_sched(&board, &s)) != 0)
			return fail("schedule", e);
		printf("%u\n", s.id);
		return EXIT_OK;
	}
	if (argc == 1 && strcmp(argv[0], "list") == 0) {
		for (i = 0; i < board.nscheds; i++) {
			const struct job_sched *p = board.scheds[i];

			if (p->gone)
				continue;
			if (o->json)
				printf("{\"id\":%u,\"last\":%lld}\n", p->id,
				    p->last);
			else
				printf("%u\t%s\t%s\t%s\n", p->id, p->spec,
				    p->tz, p->title);
		}
		return EXIT_OK;
	}
	if (argc == 2 && strcmp(argv[0], "rm") == 0) {
		if ((id = num(argv[1], 1L << 30)) <= 0 ||
		    board_sched(&board, (unsigned)id) == NULL ||
		    board_sched(&board, (unsigned)id)->gone)
			return fail("schedule rm", -E_NOENT);
		s = *board_sched(&board, (unsigned)id);
		s.gone = 1;
		if ((e = board_put_sched(&board, &s)) != 0)
			return fail("schedule", e);
		return EXIT_OK;
	}
	return cmd_usage("jobs", "schedule add|list|rm");
}

/* The schedules that are due become jobs: one per due time, even when a
 * crash came between the job and the schedule's record. */
static int
materialize(long long t)
{
	struct sched sc;
	struct tz z;
	struct job j;
	long long due;
	unsigned i, k;
	int e;

	for (i = 0; i < board.nscheds; i++) {
		struct job_sched s = *board.scheds[i];

		if (s.gone)
			continue;
		if (sched_parse(s.spec, &sc) != 0 || tz_parse(s.tz, &z) != 0) {
			log_warn("jobs: schedule %u: bad '%s'", s.id, s.spec);
			continue;
		}
		if ((due = sched_due(&sc, &z, MAX(s.last, s.made), t)) == 0)
			continue;
		for (k = 0; k < board.njobs; k++)
			if (board.jobs[k]->sched == s.id &&
			    board.jobs[k]->due == due)
				break;
		if (k == board.njobs) {
			memset(&j, 0, sizeof(j));
			j.title = s.title, j.input = s.input, j.to = s.to;
			j.max_tries = jcfg.jobs.retries + 1;
			j.backoff = jcfg.jobs.backoff_s, j.made = t;
			j.sched = s.id, j.due = due;
			if ((e = board_put(&board, &j)) != 0)
				return e;
		}
		s.last = due;
		if ((e = board_put_sched(&board, &s)) != 0)
			return e;
	}
	return 0;
}

/* The text a run starts with: the input, then the comments. */
static char *
job_text(const struct job *j)
{
	const struct job_event *e;
	struct sbuf sb;
	int first = 1;

	sbuf_init(&sb, &app.perm, 0);
	sbuf_adds(&sb, j->input);
	for (e = j->ev; e != NULL; e = e->next) {
		if (e->text == NULL || (strcmp(e->kind, "comment") != 0 &&
		    strcmp(e->kind, "unblock") != 0))
			continue;
		if (first)
			sbuf_adds(&sb, "\n\nComments on this job:");
		first = 0;
		sbuf_printf(&sb, "\n- %s", e->text);
	}
	return sb.err ? NULL : sb.p;
}

static void
quiet(void *ctx, const struct agent_event *e)
{
	(void)ctx, (void)e;
}

/* What a paused turn waits on, for the job's why. */
static const char *
wait_why(struct agent *ag)
{
	const char *q = agent_question(ag);
	size_t n = strlen(q);

	/* "Approve TOOL ARGS (agent A; RULE)?" (agent.c's gate) */
	if (!agent_approval(ag) || n < 10)
		return q;
	return arena_printf(&app.perm, "approval: %.*s", (int)n - 9, q + 8);
}

/* The turn of a run: a paused one goes on with the person's answer
 * (resume: JOB_ANS_*), or waits again without asking the model; else the
 * job's text is a new turn. */
static enum agent_status
job_turn(struct agent *ag, unsigned resume, const char *ans, const char *in,
    const char **final)
{
	if (agent_question(ag) == NULL)
		return agent_turn(ag, in, strlen(in), final);
	if (resume == JOB_ANS_TEXT && !agent_approval(ag))
		return agent_answer(ag, ans ? ans : "", ans ? strlen(ans) : 0,
		    final);
	if (resume > JOB_ANS_TEXT && agent_approval(ag))
		return agent_decide(ag, resume == JOB_ANS_APPROVE, ans, final);
	*final = agent_question(ag);
	return AG_WAIT;
}

/* A worker: claim job id, run one turn, record the outcome. The exit
 * status says nothing the board does not: a killed worker is the case the
 * parent handles. */
static int
worker(unsigned id)
{
	struct job_worker jw;
	struct tool_ext x;
	struct agent_opts o;
	struct agent *ag;
	struct job *j, n;
	enum agent_status st;
	enum job_outcome out;
	const char *final = NULL, *to, *ans;
	char why[320], *in;
	unsigned resume;
	double money;
	int e;

	if (board_lock(&board) != 0)
		return 1;
	j = board_job(&board, id);
	if (j == NULL || job_status(&board, j) != JOB_READY || j->next > job_now()) {
		board_unlock(&board);
		return 0;
	}
	n = *j;
	/* Resuming a paused turn with its answer is the same try. */
	resume = n.ans_kind & 3;
	if (resume == 0 || (n.ans_kind & JOB_ANS_TRIED))
		n.tries++;
	n.st = JOB_RUNNING;
	n.pid = getpid(), n.pstart = job_pid_start(n.pid);
	n.session = arena_printf(&app.perm, "job-%u", id);
	if (n.session == NULL || board_put(&board, &n) != 0 ||
	    (in = job_text(board_job(&board, id))) == NULL) {
		board_unlock(&board);
		return 1;
	}
	/* Out of the board's arena: every later lock rebuilds it. */
	n = *board_job(&board, id);
	to = arena_strdup(&app.perm, n.to);
	ans = n.ans ? arena_strdup(&app.perm, n.ans) : NULL;
	board_unlock(&board);
	if (to == NULL || (n.ans && ans == NULL))
		return 1;
	if (n.timeout > 0) {
		jcfg.limits.time_s = (unsigned)n.timeout;
		alarm((unsigned)n.timeout + 30);	/* a hard stop too */
	}
	if (n.budget != NULL && str_decimal(n.budget, &money) == 0)
		jcfg.limits.budget = money;
	memset(&o, 0, sizeof(o));
	o.session = arena_printf(&app.perm, "job-%u", id);
	o.agent = *to ? to : NULL;
	o.on_event = quiet;
	memset(&jw, 0, sizeof(jw));
	jw.b = &board, jw.id = id, jw.now = job_now;
	jw.agent = *to ? to : "entry";
	job_worker_ext(&jw, &x);
	o.ext = &x;
	ag = agent_new(&app.perm, &jcfg, &o, &e, why, sizeof(why));
	st = ag == NULL ? AG_FAIL : job_turn(ag, resume, ans, in, &final);
	if (ag == NULL)
		final = why;
	switch (st) {
	case AG_OK: case AG_EXIT:
		out = jw.done == 1 ? RUN_COMPLETED : jw.done == 2 ?
		    RUN_BLOCKED : RUN_GAVE_UP;
		final = jw.done ? jw.text : "the run ended without job_complete "
		    "or job_block";
		break;
	case AG_WAIT: out = RUN_BLOCKED; final = wait_why(ag); break;
	case AG_LIMIT: out = RUN_TIMED_OUT; break;
	default: out = RUN_GAVE_UP; break;
	}
	if (board_lock(&board) != 0)
		return 1;
	/* (AG_WAIT comes from a turn: ag is not NULL then) */
	e = st == AG_WAIT && ag != NULL ? board_pause(&board, id,
	    agent_approval(ag) ? JOB_WAIT_APPROVAL : JOB_WAIT_QUESTION, final,
	    job_now()) : board_finish(&board, id, out, final, job_now());
	board_unlock(&board);
	if (ag != NULL)
		agent_close(ag);
	return e != 0;
}

/* A worker that ended without recording its outcome. */
static void
reap(pid_t pid, int status, unsigned id)
{
	struct job *j;

	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return;
	if (board_lock(&board) != 0)
		return;
	j = board_job(&board, id);
	if (j != NULL && j->st == JOB_RUNNING && j->pid == pid)
		board_finish(&board, id, WIFSIGNALED(status) &&
		    WTERMSIG(status) == SIGALRM ? RUN_TIMED_OUT : RUN_CRASHED,
		    WIFSIGNALED(status) ? "the worker was killed" :
		    "the worker failed", job_now());
	board_unlock(&board);
}

static int
run_due(const struct jopt *o)
{
	unsigned ids[256], nids = 0, i, running = 0;
	unsigned who[64];
	pid_t pids[64], p;
	long long t = job_now();
	int e, status, k, max = o->max > 0 ? MIN(o->max, 64) :
	    (int)jcfg.jobs.max_parallel;

	if ((e = board_lock(&board)) != 0)
		return fail("run-due", e);
	if (t < SCHED_EPOCH)
		log_warn("jobs: the clock is not set: no schedule fires");
	else if ((e = materialize(t)) != 0) {
		board_unlock(&board);
		return fail("run-due: schedules", e);
	}
	if ((e = board_reclaim(&board, t)) < 0) {
		board_unlock(&board);
		return fail("run-due: reclaim", e);
	}
	for (i = 0; i < board.njobs && nids < ARRAY_LEN(ids); i++)
		if (job_status(&board, board.jobs[i]) == JOB_READY &&
		    board.jobs[i]->next <= t)
			ids[nids++] = board.jobs[i]->id;
	board_unlock(&board);
	fflush(NULL);
	for (i = 0; i < nids || running > 0;) {
		if (i < nids && running < (unsigned)max) {
			if ((p = fork()) < 0)
				return fail("run-due: fork", -E_IO);
			if (p == 0)
				_exit(worker(ids[i]));
			pids[running] = p, who[running++] = ids[i++];
			continue;
		}
		if ((p = wait(&status)) < 0 && errno == EINTR)
			continue;
		if (p < 0)
			break;
		for (k = 0; k < (int)running && pids[k] != p; k++)
			;
		if (k == (int)running)
			continue;
		reap(p, status, who[k]);
		pids[k] = pids[--running], who[k] = who[running];
		/* A job that became ready (its parent done) runs now too. */
		if (i == nids && board_lock(&board) == 0) {
			for (k = 0; k < (int)board.njobs && nids <
			    ARRAY_LEN(ids); k++) {
				const struct job *j = board.jobs[k];
				unsigned q;

				for (q = 0; q < nids && ids[q] != j->id; q++)
					;
				if (q == nids && job_status(&board, j) ==
				    JOB_READY && j->next <= job_now())
					ids[nids++] = j->id;
			}
			board_unlock(&board);
		}
	}
	if (o->json)
		printf("{\"ran\":%u}\n", nids);
	return EXIT_OK;
}

static int
jobs_main(const char *sub, struct jopt *o, int argc, char **argv)
{
	long id = argc > 0 ? num(argv[0], 1L << 30) : -1;
	int r;

	if ((r = open_board(NULL)) != 0)
		return r;
	if (strcmp(sub, "run-due") == 0)
		return argc ? cmd_usage("jobs", "run-due: no arguments") :
		    run_due(o);
	if ((r = board_lock(&board)) != 0)
		return fail(sub, r);
	if (strcmp(sub, "add") == 0)
		r = add(o, argc, argv);
	else if (strcmp(sub, "list") == 0)
		r = argc ? cmd_usage("jobs", "list: no arguments") : list(o);
	else if (strcmp(sub, "schedule") == 0)
		r = sched_cmd(o, argc, argv);
	else if (strcmp(sub, "prune") == 0)
		r = argc ? cmd_usage("jobs", "prune: no arguments") : prune(o);
	else if (id <= 0)
		r = cmd_usage("jobs", "%s: want a job ID", sub);
	else if (strcmp(sub, "show") == 0 && argc == 1)
		r = show(o, (unsigned)id);
	else if ((strcmp(sub, "block") == 0 || strcmp(sub, "unblock") == 0) &&
	    argc <= 2)
		r = change(sub, (unsigned)id, argc > 1 ? argv[1] : NULL);
	else if (strcmp(sub, "comment") == 0 && argc == 2)
		r = change(sub, (unsigned)id, argv[1]);
	else if ((strcmp(sub, "cancel") == 0 || strcmp(sub, "archive") == 0) &&
	    argc == 1)
		r = change(sub, (unsigned)id, NULL);
	else
		r = cmd_usage("jobs", "'%s': bad sub-command or arguments",
		    sub);
	board_unlock(&board);
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
	return jobs_main(sub, &o, argc - optind, argv + optind);
}
