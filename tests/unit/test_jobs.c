/* test_jobs.c - the job board's journal (replay, torn lines, compaction,
 * outcomes and backoff) and the result schema check. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fmt/json.h"
#include "serve/jobs.h"
#include "base/log.h"
#include "unit.h"

static char root[64];

static int
mkroot(void)
{
	snprintf(root, sizeof(root), "/tmp/skillbox-ujobs.XXXXXX");
	if (mkdtemp(root) == NULL) {
		t_fail(__FILE__, __LINE__, "mkdtemp");
		return -1;
	}
	return 0;
}

static void
rmroot(void)
{
	char p[128];

	snprintf(p, sizeof(p), "%s/journal", root);
	unlink(p);
	snprintf(p, sizeof(p), "%s/lock", root);
	unlink(p);
	rmdir(root);
}

static unsigned
add(struct board *b, const char *title, unsigned parent)
{
	struct job j;

	memset(&j, 0, sizeof(j));
	j.title = j.input = title;
	j.to = "";
	j.max_tries = 2;
	j.backoff = 10;
	if (parent)
		j.parents[j.nparents++] = parent;
	T_EQI(board_put(b, &j), 0);
	return j.id;
}

static void
t_journal(void)
{
	struct board b;
	char p[128];
	int fd;

	if (mkroot() != 0)
		return;
	T_EQI(board_open(&b, root, 0), 0);
	T_EQI(board_lock(&b), 0);
	T_EQI(add(&b, "a", 0), 1);
	T_EQI(add(&b, "b", 1), 2);
	T(board_put(&b, &(struct job){ .title = "c", .input = "c", .to = "",
	    .parents = { 9 }, .nparents = 1 }) == -E_INVAL);
	T_EQI(job_status(&b, board_job(&b, 1)), JOB_READY);
	T_EQI(job_status(&b, board_job(&b, 2)), JOB_TODO);
	T_EQI(board_event(&b, 1, "comment", "hi", 5), 0);
	board_unlock(&b);
	/* A torn line at the end: cut off on the next load. */
	snprintf(p, sizeof(p), "%s/journal", root);
	fd = open(p, O_WRONLY | O_APPEND);
	T(fd >= 0);
	T_EQI(write(fd, "{\"k\":\"job\",\"id\":3,\"ti", 21), 21);
	close(fd);
	log_set_level(LOG_ERR);		/* "cutting off a torn line" */
	T_EQI(board_lock(&b), 0);
	log_set_level(LOG_WARN);
	T_EQI(b.njobs, 2);
	T_EQS(board_job(&b, 1)->ev->text, "hi");
	T_EQI(add(&b, "c", 0), 3);
	board_unlock(&b);
	board_close(&b);
	T_EQI(board_open(&b, root, 0), 0);
	T_EQI(b.njobs, 3);
	T_EQS(board_job(&b, 3)->title, "c");
	board_close(&b);
	rmroot();
}

static void
t_outcomes(void)
{
	struct board b;
	struct job n;

	if (mkroot() != 0)
		return;
	T_EQI(board_open(&b, root, 4096), 0);
	T_EQI(board_lock(&b), 0);
	add(&b, "a", 0);
	n = *board_job(&b, 1);
	n.st = JOB_RUNNING, n.tries = 1;
	T_EQI(board_put(&b, &n), 0);
	T_EQI(board_finish(&b, 1, RUN_CRASHED, "boom", 100), 0);
	T_EQI(board_job(&b, 1)->st, JOB_TODO);
	T_EQI(board_job(&b, 1)->next, 110);
	n = *board_job(&b, 1);
	n.st = JOB_RUNNING, n.tries = 2;
	T_EQI(board_put(&b, &n), 0);
	T_EQI(board_finish(&b, 1, RUN_GAVE_UP, "again", 200), 0);
	T_EQI(board_job(&b, 1)->st, JOB_FAILED);
	/* A running job whose worker is gone is reclaimed. */
	add(&b, "b", 0);
	n = *board_job(&b, 2);
	n.st = JOB_RUNNING, n.tries = 1, n.pid = 999999999;
	T_EQI(board_put(&b, &n), 0);
	T_EQI(board_reclaim(&b, 300), 1);
	T_EQI(board_job(&b, 2)->st, JOB_TODO);
	/* Many changes: the journal is compacted, keeping every event; a
	 * journal of live lines only is left alone. */
	for (int i = 0; i < 100; i++) {
		T_EQI(board_event(&b, 2, "comment", "a note of some length",
		    i), 0);
		n = *board_job(&b, 2);
		n.next = i;
		T_EQI(board_put(&b, &n), 0);
	}
	T(b.size < 2 * 100 * 60);
	T(b.dead <= b.size / 2);
	board_unlock(&b);
	T_EQI(board_lock(&b), 0);
	{
		const struct job_event *e;
		int k = 0;

		for (e = board_job(&b, 2)->ev; e != NULL; e = e->next)
			k++;
		T_EQI(k, 101);
	}
	board_unlock(&b);
	board_close(&b);
	rmroot();
}

static void
t_schema(void)
{
	const char *s = "{\"type\":\"object\",\"required\":[\"a\"],"
	    "\"properties\":{\"a\":{\"type\":\"integer\"},"
	    "\"b\":{\"type\":\"array\"}}}";
	char why[100];

	T_EQI(job_schema_check(&t_arena, s, "{\"a\":1}", why, sizeof(why)), 0);
	T_EQI(job_schema_check(&t_arena, s, "{\"a\":1.5}", why, sizeof(why)),
	    -E_INVAL);
	T_EQS(why, "\"a\" is not of type integer");
	T_EQI(job_schema_check(&t_arena, s, "{\"b\":[]}", why, sizeof(why)),
	    -E_INVAL);
	T_EQS(why, "\"a\" is required");
	T_EQI(job_schema_check(&t_arena, s, "{\"a\":2,\"b\":{}}", why,
	    sizeof(why)), -E_INVAL);
	T_EQI(job_schema_check(&t_arena, s, "[1]", why, sizeof(why)),
	    -E_INVAL);
	T_EQI(job_schema_check(&t_arena, s, "plain text", why, sizeof(why)),
	    -E_INVAL);
	T_EQS(why, "the result is not JSON");
	T_EQI(job_schema_check(&t_arena, "{\"type\":\"boolean\"}", "true",
	    why, sizeof(why)), 0);
	T_EQI(job_schema_check(&t_arena, "{\"type\":\"null\"}", "1",
	    why, sizeof(why)), -E_INVAL);
	T_EQI(job_schema_check(&t_arena, "{\"type\":\"number\"}", "-1e3",
	    why, sizeof(why)), 0);
}

/* A fleet job's id, source and reported flag survive the journal and a
 * compaction; the outbox holds ended fleet jobs not reported, and prune
 * keeps them. */
static void
t_fleet(void)
{
	struct board b;
	struct job j, *p;
	unsigned gone[8], k;

	if (mkroot() != 0)
		return;
	T_EQI(board_open(&b, root, 0), 0);
	T_EQI(board_lock(&b), 0);
	memset(&j, 0, sizeof(j));
	j.title = j.input = "fleet";
	j.to = "";
	j.fid = "t1.a-B_2";
	j.from = "skillbox/dev1/jobs";
	T_EQI(board_add(&b, &j, 1, 0), 0);
	T_EQI(add(&b, "local", 0), 2);
	T(board_find_fid(&b, "t1.a-B_2") == board_job(&b, 1));
	T(board_find_fid(&b, "t1") == NULL);
	T(!job_unreported(board_job(&b, 1)));	/* not ended */
	for (k = 1; k <= 2; k++) {
		j = *board_job(&b, k);
		j.st = JOB_RUNNING;
		T_EQI(board_put(&b, &j), 0);
		T_EQI(board_finish(&b, k, RUN_COMPLETED, "42", 10), 0);
	}
	T(job_unreported(board_job(&b, 1)));
	T(!job_unreported(board_job(&b, 2)));	/* no fleet id */
	/* prune leaves the outbox alone; the newest job stays anyway */
	T_EQI(board_prune(&b, 1000, gone), 0);
	T(board_job(&b, 1) != NULL);
	board_unlock(&b);
	board_close(&b);
	T_EQI(board_open(&b, root, 0), 0);
	T_EQI(board_lock(&b), 0);
	p = board_find_fid(&b, "t1.a-B_2");
	T(p != NULL && p->id == 1 && !p->rep);
	T(p != NULL && p->from != NULL && strcmp(p->from,
	    "skillbox/dev1/jobs") == 0);
	j = *p;
	j.rep = 1;
	T_EQI(board_put(&b, &j), 0);
	board_unlock(&b);
	board_close(&b);
	T_EQI(board_open(&b, root, 0), 0);
	T_EQI(board_lock(&b), 0);
	T(board_job(&b, 1)->rep == 1 && !job_unreported(board_job(&b, 1)));
	T_EQI(add(&b, "newest", 0), 3);
	T_EQI(board_prune(&b, 1000, gone), 2);	/* reported: prunable */
	T(board_find_fid(&b, "t1.a-B_2") == NULL);
	board_unlock(&b);
	board_close(&b);
	rmroot();
}

/* POST /api/v1/jobs and a fleet job's message share one parser. */
static void
t_parse(void)
{
	static const struct {
		const char	*js, *why;	/* NULL: fine */
	} k[] = {
		{ "{\"title\":\"t\",\"input\":\"i\",\"to\":\"a\","
		    "\"tries\":3,\"timeout\":5,\"schema\":{\"type\":"
		    "\"object\"},\"budget\":0.5,\"parents\":[1]}", NULL },
		{ "{\"input\":\"i\"}", "'title' must be a non-empty string" },
		{ "{\"title\":\"\"}", "'title' must be a non-empty string" },
		{ "{\"title\":1}", "'title' must be a non-empty string" },
		{ "{\"title\":\"t\",\"tries\":-1}", "'tries' must be a "
		    "whole number" },
		{ "{\"title\":\"t\",\"schema\":[1]}", "'schema' must be a "
		    "JSON-Schema object" },
		{ "{\"title\":\"t\",\"parents\":[0]}", "'parents' must be "
		    "an array of job ids" },
	};
	struct json_doc d;
	struct job j;
	const char *why;
	size_t i;

	for (i = 0; i < ARRAY_LEN(k); i++) {
		memset(&j, 0, sizeof(j));
		T_EQI(json_parse(&t_arena, k[i].js, strlen(k[i].js), 256, &d),
		    0);
		why = job_parse_json(&t_arena, &d, &j);
		if (k[i].why == NULL)
			T(why == NULL);
		else
			T_EQS(why, k[i].why);
	}
	memset(&j, 0, sizeof(j));
	T_EQI(json_parse(&t_arena, k[0].js, strlen(k[0].js), 256, &d), 0);
	T(job_parse_json(&t_arena, &d, &j) == NULL);
	T_EQS(j.title, "t");
	T_EQS(j.input, "i");
	T_EQS(j.to, "a");
	T_EQS(j.schema, "{\"type\":\"object\"}");
	T_EQS(j.budget, "0.5");
	T(j.max_tries == 3 && j.timeout == 5 && j.nparents == 1 &&
	    j.parents[0] == 1);
	memset(&j, 0, sizeof(j));	/* input defaults to the title */
	T_EQI(json_parse(&t_arena, "{\"title\":\"x\"}", 13, 16, &d), 0);
	T(job_parse_json(&t_arena, &d, &j) == NULL);
	T_EQS(j.input, "x");
}

static const struct unit_case cases[] = {
	{ "journal", t_journal },
	{ "outcomes", t_outcomes },
	{ "schema", t_schema },
	{ "fleet", t_fleet },
	{ "parse", t_parse },
};

const struct unit_suite suite_jobs = { "jobs", cases, ARRAY_LEN(cases) };
