/* jobs_run.c - the job board's runner: due schedules become jobs, dead
 * runs are reclaimed, ready jobs run, each in a worker process of its own
 * (`skillbox jobs run-due`, and serve's timer). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/cfg.h"
#include "base/log.h"
#include "base/str.h"
#include "fmt/schedule.h"
#include "serve/jobs.h"
#include "tool/tool.h"

/* One run-due: what its steps share. */
struct jrun {
	struct arena	*perm;
	const struct cfg *c;
	struct board	*b;
};

/* Log what failed (not a spent budget: the caller reports that); e. */
static int
fail(const char *what, int e)
{
	if (e != -E_NOMEM)
		log_err("jobs: %s: %s", what, e == -E_NOENT ? "no such job" :
		    e == -E_INVAL ? "invalid" : strerror(errno));
	return e;
}

/* The schedules that are due become jobs: one per due time, even when a
 * crash came between the job and the schedule's record. */
static int
materialize(struct jrun *r, long long t)
{
	struct board *b = r->b;
	struct sched sc;
	struct tz z;
	struct job j;
	long long due;
	unsigned i, k;
	int e;

	for (i = 0; i < b->nscheds; i++) {
		struct job_sched s = *b->scheds[i];

		if (s.gone)
			continue;
		if (sched_parse(s.spec, &sc) != 0 || tz_parse(s.tz, &z) != 0) {
			log_warn("jobs: schedule %u: bad '%s'", s.id, s.spec);
			continue;
		}
		if ((due = sched_due(&sc, &z, MAX(s.last, s.made), t)) == 0)
			continue;
		for (k = 0; k < b->njobs; k++)
			if (b->jobs[k]->sched == s.id &&
			    b->jobs[k]->due == due)
				break;
		if (k == b->njobs) {
			memset(&j, 0, sizeof(j));
			j.title = s.title, j.input = s.input, j.to = s.to;
			j.max_tries = r->c->jobs.retries + 1;
			j.backoff = r->c->jobs.backoff_s, j.made = t;
			j.sched = s.id, j.due = due;
			if ((e = board_put(b, &j)) != 0)
				return e;
		}
		s.last = due;
		if ((e = board_put_sched(b, &s)) != 0)
			return e;
	}
	return 0;
}

/* The text a run starts with: the input, then the comments. */
static char *
job_text(struct jrun *r, const struct job *j)
{
	const struct job_event *e;
	struct sbuf sb;
	int first = 1;

	sbuf_init(&sb, r->perm, 0);
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
wait_why(struct jrun *r, struct agent *ag)
{
	const char *q = agent_question(ag);
	size_t n = strlen(q);

	/* "Approve TOOL ARGS (agent A; RULE)?" (agent.c's gate) */
	if (!agent_approval(ag) || n < 10)
		return q;
	return arena_printf(r->perm, "approval: %.*s", (int)n - 9, q + 8);
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
worker(struct jrun *r, unsigned id)
{
	struct board *b = r->b;
	struct cfg c = *r->c;
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

	if (board_lock(b) != 0)
		return 1;
	j = board_job(b, id);
	if (j == NULL || job_status(b, j) != JOB_READY || j->next > job_now()) {
		board_unlock(b);
		return 0;
	}
	n = *j;
	/* Resuming a paused turn with its answer is the same try. */
	resume = n.ans_kind & 3;
	if (resume == 0 || (n.ans_kind & JOB_ANS_TRIED))
		n.tries++;
	n.st = JOB_RUNNING;
	n.pid = getpid(), n.pstart = job_pid_start(n.pid);
	n.session = arena_printf(r->perm, "job-%u", id);
	if (n.session == NULL || board_put(b, &n) != 0 ||
	    (in = job_text(r, board_job(b, id))) == NULL) {
		board_unlock(b);
		return 1;
	}
	/* Out of the board's arena: every later lock rebuilds it. */
	n = *board_job(b, id);
	to = arena_strdup(r->perm, n.to);
	ans = n.ans ? arena_strdup(r->perm, n.ans) : NULL;
	board_unlock(b);
	if (to == NULL || (n.ans && ans == NULL))
		return 1;
	if (n.timeout > 0) {
		c.limits.time_s = (unsigned)n.timeout;
		alarm((unsigned)n.timeout + 30);	/* a hard stop too */
	}
	if (n.budget != NULL && str_decimal(n.budget, &money) == 0)
		c.limits.budget = money;
	memset(&o, 0, sizeof(o));
	o.session = arena_printf(r->perm, "job-%u", id);
	o.agent = *to ? to : NULL;
	o.on_event = quiet;
	memset(&jw, 0, sizeof(jw));
	jw.b = b, jw.id = id, jw.now = job_now;
	jw.agent = *to ? to : "entry";
	job_worker_ext(&jw, &x);
	o.ext = &x;
	ag = agent_new(r->perm, &c, &o, &e, why, sizeof(why));
	st = ag == NULL ? AG_FAIL : job_turn(ag, resume, ans, in, &final);
	if (ag == NULL)
		final = why;
	switch (st) {
	case AG_OK: case AG_EXIT:
		/* Offline there is no model to call job_complete: the report
		 * of the skill the request was routed to is the result. */
		if (jw.done == 0 && st == AG_OK && final != NULL &&
		    strcmp(c.provider, "offline") == 0) {
			out = RUN_COMPLETED;
			break;
		}
		out = jw.done == 1 ? RUN_COMPLETED : jw.done == 2 ?
		    RUN_BLOCKED : RUN_GAVE_UP;
		final = jw.done ? jw.text : "the run ended without job_complete "
		    "or job_block";
		break;
	case AG_WAIT: out = RUN_BLOCKED; final = wait_why(r, ag); break;
	case AG_LIMIT: out = RUN_TIMED_OUT; break;
	default: out = RUN_GAVE_UP; break;
	}
	if (board_lock(b) != 0)
		return 1;
	/* (AG_WAIT comes from a turn: ag is not NULL then) */
	e = st == AG_WAIT && ag != NULL ? board_pause(b, id,
	    agent_approval(ag) ? JOB_WAIT_APPROVAL : JOB_WAIT_QUESTION, final,
	    job_now()) : board_finish(b, id, out, final, job_now());
	board_unlock(b);
	if (ag != NULL)
		agent_close(ag);
	return e != 0;
}

/* A worker that ended without recording its outcome. */
static void
reap(struct jrun *r, pid_t pid, int status, unsigned id)
{
	struct board *b = r->b;
	struct job *j;

	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return;
	if (board_lock(b) != 0)
		return;
	j = board_job(b, id);
	if (j != NULL && j->st == JOB_RUNNING && j->pid == pid)
		board_finish(b, id, WIFSIGNALED(status) &&
		    WTERMSIG(status) == SIGALRM ? RUN_TIMED_OUT : RUN_CRASHED,
		    WIFSIGNALED(status) ? "the worker was killed" :
		    "the worker failed", job_now());
	board_unlock(b);
}

/* see jobs.h */
int
jobs_run_due(struct arena *perm, const struct cfg *c, struct board *bd,
    int max)
{
	struct board own;
	struct jrun jr, *r = &jr;
	struct board *b;
	unsigned ids[256], nids = 0, i, running = 0;
	unsigned who[64];
	pid_t pids[64], p;
	long long t = job_now();
	int e, status, k;

	max = max > 0 ? MIN(max, 64) : (int)c->jobs.max_parallel;
	if (bd == NULL) {
		if ((e = board_open_cfg(&own, c)) != 0)
			return fail(c->state_dir, e);
		bd = &own;
	}
	b = bd;
	jr.perm = perm, jr.c = c, jr.b = b;
	if ((e = board_lock(b)) != 0)
		return fail("run-due", e);
	if (t < SCHED_EPOCH)
		log_warn("jobs: the clock is not set: no schedule fires");
	else if ((e = materialize(r, t)) != 0) {
		board_unlock(b);
		return fail("run-due: schedules", e);
	}
	if ((e = board_reclaim(b, t)) < 0) {
		board_unlock(b);
		return fail("run-due: reclaim", e);
	}
	for (i = 0; i < b->njobs && nids < ARRAY_LEN(ids); i++)
		if (job_status(b, b->jobs[i]) == JOB_READY &&
		    b->jobs[i]->next <= t)
			ids[nids++] = b->jobs[i]->id;
	board_unlock(b);
	fflush(NULL);
	for (i = 0; i < nids || running > 0;) {
		if (i < nids && running < (unsigned)max) {
			if ((p = fork()) < 0)
				return fail("run-due: fork", -E_IO);
			if (p == 0)
				_exit(worker(r, ids[i]));
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
		reap(r, p, status, who[k]);
		pids[k] = pids[--running], who[k] = who[running];
		/* A job that became ready (its parent done) runs now too. */
		if (i == nids && board_lock(b) == 0) {
			for (k = 0; k < (int)b->njobs && nids <
			    ARRAY_LEN(ids); k++) {
				const struct job *j = b->jobs[k];
				unsigned q;

				for (q = 0; q < nids && ids[q] != j->id; q++)
					;
				if (q == nids && job_status(b, j) ==
				    JOB_READY && j->next <= job_now())
					ids[nids++] = j->id;
			}
			board_unlock(b);
		}
	}
	return (int)nids;
}
