/* jobs.h - the durable job board in <state_dir>/jobs/.
 *
 * One file, `journal`: a JSON object a line, each the whole new state of
 * one job or schedule ({"k":"job",...}, {"k":"sched",...}) or one event of
 * a job ({"k":"ev",...}: a comment, a run's outcome). A change is written
 * and fsynced before it is acknowledged; replaying the lines in order
 * rebuilds the board (the last line of a thing wins). A torn last line (a
 * writer killed mid-write) is cut off by the next writer. When the file
 * outgrows compact_at and over half of it is lines that later ones
 * replaced, it is rewritten with one line per thing: to a new
 * file, synced, renamed over, the folder synced. Every change is made under
 * an flock(2) on `lock`, after re-reading the journal, so processes (the
 * CLI, run-due and its workers) see each other's changes.
 *
 * A job is `ready` (never stored) when it is todo, all its parents are
 * done and its next try is due. A running job records its worker's pid
 * and start time; a worker that is gone is reclaimed as crashed.
 *
 * A person in the loop: a run whose turn pauses on a person (the model's
 * ask_user, or a call that needs approval) blocks the job with `wait` set
 * and `why` the question (or "approval: TOOL ARGS ..."); the turn stays
 * paused in the job's session (`session`, job-ID). The person answers as
 * for any paused run: `skillbox answer job-ID TEXT|--approve|--deny
 * [REASON]` or serve's POST /api/v1/sessions/job-ID/answer. agent.c hands
 * that answer to job_answer, which does not resume the turn there (that
 * process has neither the job's tools nor its limits): it stores the
 * answer on the job, synced, and makes it todo. The next run-due's worker
 * resumes the paused turn with it (agent_answer or agent_decide: the model
 * is not asked again for the steps it took), and the job follows how that
 * turn ends. A run that only resumes is not a new try; a worker that dies
 * while resuming keeps the answer, and then its next run counts.
 */
#ifndef JOBS_H
#define JOBS_H

#include "base/arena.h"
#include "base/base.h"

#define JOB_MAX_PARENTS	16
/* Job and schedule ids run 1..JOB_ID_MAX, what the CLI and the API take.
 * Ids are never used twice: a board whose newest job has the last one
 * takes no new job (-E_LIMIT), and a journal line with an id out of the
 * range does not parse. */
#define JOB_ID_MAX	(1u << 30)

enum job_status {
	JOB_TODO, JOB_READY, JOB_RUNNING, JOB_BLOCKED, JOB_DONE, JOB_FAILED,
	JOB_ARCHIVED
};

/* How a run ended. */
enum job_outcome {
	RUN_COMPLETED, RUN_BLOCKED, RUN_CRASHED, RUN_TIMED_OUT, RUN_GAVE_UP
};

struct job_event {
	struct job_event *next;
	long long	 t;
	const char	*kind;		/* comment, run, block, unblock, ... */
	const char	*text;
};

struct job {
	unsigned	 id;
	enum job_status	 st;		/* as stored: never JOB_READY */
	const char	*title, *input, *to;	/* to: assignee, "" entry */
	const char	*schema;	/* JSON, or NULL */
	const char	*result, *why;	/* why: blocked or failed, or NULL */
	const char	*budget;	/* money, a decimal, or NULL */
	unsigned	 parents[JOB_MAX_PARENTS], nparents;
	unsigned	 tries, max_tries;
	long		 timeout;	/* seconds, 0 none */
	long		 backoff;	/* seconds before the 2nd try */
	long long	 made, next;	/* next: earliest next try */
	long long	 pid, pstart;	/* running: the worker */
	unsigned	 sched;		/* made by this schedule, at due */
	long long	 due;
	struct job_event *ev, *ev_last;
	unsigned	 len;		/* of its journal line */
	const char	*session;	/* where its runs are, once it ran */
	unsigned	 wait;		/* blocked on its paused turn: JOB_WAIT_* */
	unsigned	 ans_kind;	/* an answer not used yet: JOB_ANS_* */
	const char	*ans;		/* its text, or the reason to deny */
	const char	*fid;		/* a fleet job's id (fleet.h), or NULL */
	const char	*from;		/* where it came: the MQTT topic */
	unsigned	 rep;		/* its result was acknowledged */
};

enum { JOB_WAIT_QUESTION = 1, JOB_WAIT_APPROVAL };
/* JOB_ANS_TRIED: a worker resuming with the answer died; the next run
 * counts as a try. */
enum { JOB_ANS_TEXT = 1, JOB_ANS_APPROVE, JOB_ANS_DENY, JOB_ANS_TRIED = 4 };

struct job_sched {
	unsigned	 id;
	unsigned	 gone;
	const char	*spec, *tz, *title, *input, *to;
	long long	 made, last;	/* last: due time last fired */
	unsigned	 len;
};

struct board {
	struct arena	 a;		/* the state, rebuilt by each load */
	int		 dirfd, lockfd;
	size_t		 size;		/* of the journal */
	size_t		 dead;		/* bytes of lines a later one replaced */
	size_t		 compact_at;
	struct job	**jobs;
	unsigned	 njobs, capjobs;
	struct job_sched **scheds;
	unsigned	 nscheds, capscheds;
};

/* Open (creating) the board in folder dir, and load it. 0, -E_IO or
 * -E_NOMEM. */
int	board_open(struct board *b, const char *dir, size_t compact_at);
/* The board of configuration c: <state_dir>/jobs, as board_open. */
struct cfg;
int	board_open_cfg(struct board *b, const struct cfg *c);
void	board_close(struct board *b);

/* Take the lock and re-read the journal (every earlier pointer into the
 * board is stale then); unlock. */
int	board_lock(struct board *b);
void	board_unlock(struct board *b);

struct job *board_job(const struct board *b, unsigned id);
struct job_sched *board_sched(const struct board *b, unsigned id);

/* The status to show: JOB_READY for a todo job whose parents are all
 * done (its next try may still be ahead). */
enum job_status job_status(const struct board *b, const struct job *j);
const char *job_status_name(enum job_status s);
const char *job_outcome_name(enum job_outcome o);

/* Write the whole job (id 0: a new one, its id set) or schedule, or an
 * event, synced. The board is reloaded from the new line, so j's strings
 * may be anything's. 0, -E_IO, -E_NOMEM, -E_INVAL (a new job whose
 * parents do not exist or would make a cycle), -E_LIMIT (a new one when
 * JOB_ID_MAX is used). */
int	board_put(struct board *b, struct job *j);
int	board_put_sched(struct board *b, struct job_sched *s);
int	board_event(struct board *b, unsigned id, const char *kind,
	    const char *text, long long now);

/* What is wrong with a new job's or schedule's title and assignee (the
 * CLI's add and schedule add, serve's POST /api/v1/jobs): a title that
 * is empty or has a control character (it is printed as one line to a
 * terminal), an assignee (to; "" or NULL: the entry agent) that is not a
 * skill's name or not one of c's skills. NULL when fine, else why, in a
 * or static. */
struct cfg;
const char *job_check_new(struct arena *a, const struct cfg *c,
	    const char *title, const char *to);

/* A new job (the CLI's and serve's add): a schema that is not JSON is
 * -E_PARSE; max_tries 0 takes tries, backoff < 0 takes backoff; then as
 * board_put. */
int	board_add(struct board *b, struct job *j, unsigned tries,
	    long backoff);

/* kind "block", "unblock", "comment", "cancel" or "archive" job id, with
 * text (the reason, the comment, what unblock adds: the answer to the
 * question a paused turn waits on; NULL none): an event, then the job's
 * new status. -E_NOENT, -E_DENIED when its status does not allow it
 * (blocking a done job, unblocking one neither blocked nor failed,
 * cancelling an archived one, archiving one not done or failed),
 * -E_BUSY for unblocking a paused turn's approval (skillbox answer) or
 * its question without text, else as board_put. */
int	board_change(struct board *b, unsigned id, const char *kind,
	    const char *text, long long now);

/* The end of a run: the outcome, with the result or why; a failure is
 * retried after backoff * 2^(tries-1) while tries remain, else the job
 * failed. A schema violation of a completed result fails the run. */
int	board_finish(struct board *b, unsigned id, enum job_outcome o,
	    const char *text, long long now);

/* board_finish for a run whose turn paused on a person: blocked, with
 * wait (JOB_WAIT_*) and why the question. */
int	board_pause(struct board *b, unsigned id, unsigned wait,
	    const char *why, long long now);

/* An answer to session's paused turn given outside the job's worker (see
 * the top): approve -1 for an answer to a question (text), 1 or 0 to
 * approve or deny a call (text the reason, may be NULL). 1 when the
 * session is a job's that waits on it, stored (*msg says what comes
 * next), -1 refused or failed (*msg why), 0 the session is no job's
 * (answer it as any). Text in a. An agent_take_fn (agent.h): the applets
 * and serve hand it to the agents they open, the job's worker does not
 * (it resumes the turn itself). */
struct cfg;
int	job_answer(struct arena *a, const struct cfg *c, const char *session,
	    int approve, const char *text, size_t n, const char **msg);

/* The time for the board: SKILLBOX_NOW (seconds since the epoch) when set,
 * for tests only; else time(). */
long long job_now(void);

/* Drop from the board, and rewrite the journal without them at once (as
 * a compaction does): archived jobs, and done or failed ones last changed
 * (their last event) before `before`; never one that a job still todo,
 * running or blocked has as a parent, nor the newest job (ids, and the
 * sessions named after them, are never used twice). Their ids go to
 * gone (room for b->njobs of them) unless it is NULL. Count or <0. */
int	board_prune(struct board *b, long long before, unsigned *gone);

/* Reclaim running jobs whose worker is gone (as crashed). Count or <0. */
int	board_reclaim(struct board *b, long long now);

/* A decimal of digits only (no sign), or -1. */
long long job_num(const char *s);

/* 1 when process pid still runs and started at `start` (<= 0: unknown);
 * job_pid_start: its start time from /proc, -1 unknown, -2 a zombie. */
int	job_pid_alive(long long pid, long long start);
long long job_pid_start(long long pid);

/* Check JSON text against a schema (type, required, properties with
 * type). 0, or -E_INVAL with words in why. */
int	job_schema_check(struct arena *a, const char *schema, const char *text,
	    char *why, size_t whylen);

/* The worker's tools for tool_ext (tool.h), offered to the agent the
 * run starts at ("entry", or the job's assignee): job_show, job_complete
 * (the result, checked against the schema at once), job_block (a reason)
 * and job_comment. A run that ends without job_complete or job_block broke
 * the protocol: it counts as a failed run. */
struct job_worker {
	struct board	*b;
	unsigned	 id;
	const char	*agent;		/* who gets the tools */
	int		 done;		/* 0, 1 completed, 2 blocked */
	char		*text;		/* the result or the reason (heap) */
	long long	 (*now)(void);
};
struct tool_ext;
void	job_worker_ext(struct job_worker *w, struct tool_ext *x);

/* Run what is due on the board of configuration c: the schedules that
 * are due become jobs, runs whose worker died are reclaimed, then the
 * ready jobs run, at most max at once (<= 0: jobs.max_parallel; at most
 * 64), each a forked worker that runs one turn of the job's agent with
 * the job's limits and records how it ended; jobs that become ready
 * meanwhile run too. b: that board, open and unlocked, or NULL to open
 * it here. Returns when the workers have ended: the number of jobs run,
 * or <0: -E_NOMEM (perm ran out; not logged), another error (logged). */
int	jobs_run_due(struct arena *perm, const struct cfg *c, struct board *b,
	    int max);

/* The job whose fleet id is fid, or NULL. */
struct job *board_find_fid(const struct board *b, const char *fid);

/* The outbox: 1 when job j is a fleet job that ended (done, failed, or
 * archived: cancelled) and whose result the broker has not acknowledged.
 * Such a job is never pruned. */
int	job_unreported(const struct job *j);

/* The fields of a new job as POST /api/v1/jobs and a fleet job's message
 * give them (title, input, to, schema, budget, tries, timeout, backoff,
 * parents), from object 0 of d into j (strings in a). NULL, or what is
 * wrong, in words. */
struct json_doc;
const char *job_parse_json(struct arena *a, const struct json_doc *d,
	    struct job *j);

/* One journal line of a job (to print --json): into sb. */
struct sbuf;
void	job_json(struct sbuf *sb, const struct job *j, const struct board *b);

#endif
