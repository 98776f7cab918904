/* cmd_eval.c - grade agents: run the cases of an evals file
 * usage: skillbox eval [--json] [--junit FILE] [--markdown FILE]
 *        [--threshold P] [--no-cache] FILE
 * FILE is YAML, a list of cases; each runs as a fresh agent turn with no
 * session log, and passes when every check it names holds:
 *
 *   - name: disk            # [case N]
 *     prompt: how full is /tmp?
 *     skill: disk           # only this skill is offered (or: agent: NAME,
 *                           # the turn starts at that skill's agent)
 *     expect: TEXT          # the answer is exactly this (line ends at
 *                           # the end aside)
 *     contains: [TEXT, ...] # ... holds each
 *     regex: 'ERE'          # ... matches (POSIX extended)
 *     json: {a.b: 1, list.0: x}  # the answer is JSON with these values
 *                           # at these paths (json: true, any JSON)
 *     tools: [Read, ...]    # these tools were called
 *     max_steps: 3          # at most this many model calls
 *     judge: {rubric: TEXT, pass: 7}  # another model call scores the
 *                           # answer 0-10 against the rubric (or judge:
 *                           # TEXT, passing at 7)
 *
 * Each case's latency, model calls, tokens and money (the judge's
 * included) are recorded; a reply from the response cache counts none. A table goes to
 * stdout, or with --json one JSON object.
 * --junit FILE      a JUnit XML report too
 * --markdown FILE   a Markdown table too
 * --threshold P     the percentage of cases that must pass [100]
 * --no-cache        ask the model even when the response cache has it
 * Exit status: 0 enough cases passed, 1 fewer than the threshold, 2 usage
 * or a malformed evals file (file:line says where). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/cfg.h"
#include "base/ere.h"
#include "cmd/cmd.h"
#include "fmt/fm.h"
#include "fmt/json.h"
#include "base/log.h"
#include "net/net.h"
#include "base/str.h"

#define EVAL_FILE_MAX	(1u << 20)
#define EVAL_MAX_CASES	1000

struct ecase {
	const char		*name, *prompt, *skill, *agent, *expect, *regex;
	const char		*rubric;
	const struct fm_node	*contains, *json, *tools;	/* as given */
	unsigned		 max_steps, pass, line;		/* 0: none */
};

struct result {
	int		 ok;
	char		 why[200];
	long long	 ms;
	unsigned	 steps, hits;
	unsigned long	 tokens;
	double		 cost;
};

/* What one case's turn did, from its events. */
struct seen {
	unsigned	steps, hits;
	struct sbuf	tools;		/* " name name " */
};

static const char *evfile;

static int
bad(unsigned line, const char *fmt, ...) ATTR_PRINTF(2, 3);

/* A malformed evals file: file:line: what. */
static int
bad(unsigned line, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_err("eval: %s:%u: %s", evfile, line, msg);
	return EXIT_USAGE;
}

static const char *
scalar(const struct fm_node *nd)
{
	return nd->kind == FM_SCALAR ? nd->s : NULL;
}

/* A scalar, or a list of scalars. */
static int
scalars(const struct fm_node *nd)
{
	const struct fm_node *k;

	if (nd->kind == FM_SCALAR)
		return 1;
	if (nd->kind != FM_SEQ)
		return 0;
	for (k = nd->kids; k != NULL; k = k->next)
		if (k->kind != FM_SCALAR)
			return 0;
	return 1;
}

static int
number(const struct fm_node *nd, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	if (nd->kind != FM_SCALAR || nd->s[0] < '0' || nd->s[0] > '9')
		return -1;
	v = strtoul(nd->s, &end, 10);
	if (*end != '\0' || v > max)
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int
parse_judge(struct ecase *c, const struct fm_node *nd)
{
	const struct fm_node *k;

	c->pass = 7;
	if ((c->rubric = scalar(nd)) != NULL)
		return 0;
	if (nd->kind != FM_MAP)
		return bad(nd->line, "judge: a rubric, or {rubric: TEXT, "
		    "pass: 0-10}");
	for (k = nd->kids; k != NULL; k = k->next) {
		if (strcmp(k->key, "rubric") == 0 && scalar(k) != NULL)
			c->rubric = k->s;
		else if (strcmp(k->key, "pass") != 0 || number(k, 10,
		    &c->pass) != 0)
			return bad(k->line, "judge: '%s' is not rubric: TEXT "
			    "or pass: 0-10", k->key);
	}
	if (c->rubric == NULL)
		return bad(nd->line, "judge: no rubric");
	return 0;
}

/* One case from its map; 0 or an exit status (said). */
static int
parse_case(struct ecase *c, const struct fm_node *map, unsigned idx,
    struct arena *a)
{
	const struct fm_node *k;
	const char *s, *why;
	struct arena_mark m;
	struct ere re;
	int e;

	memset(c, 0, sizeof(*c));
	c->line = map->line;
	if (map->kind != FM_MAP)
		return bad(map->line, "a case is a map (name, prompt, checks)");
	for (k = map->kids; k != NULL; k = k->next) {
		s = scalar(k);
		if (strcmp(k->key, "contains") == 0 || strcmp(k->key,
		    "tools") == 0) {
			if (!scalars(k))
				return bad(k->line, "%s: text or a list of "
				    "texts", k->key);
			*(k->key[0] == 'c' ? &c->contains : &c->tools) = k;
		} else if (strcmp(k->key, "json") == 0) {
			if (k->kind != FM_MAP && !(s != NULL &&
			    strcmp(s, "true") == 0))
				return bad(k->line, "json: true, or a map of "
				    "paths to values");
			c->json = k;
		} else if (strcmp(k->key, "max_steps") == 0) {
			if (number(k, 1000, &c->max_steps) != 0)
				return bad(k->line, "max_steps: 0-1000");
		} else if (strcmp(k->key, "judge") == 0) {
			if ((e = parse_judge(c, k)) != 0)
				return e;
		} else if (s == NULL) {
			return bad(k->line, "%s: want text", k->key);
		} else if (strcmp(k->key, "name") == 0) {
			c->name = s;
		} else if (strcmp(k->key, "prompt") == 0) {
			c->prompt = s;
		} else if (strcmp(k->key, "skill") == 0) {
			c->skill = s;
		} else if (strcmp(k->key, "agent") == 0) {
			c->agent = s;
		} else if (strcmp(k->key, "expect") == 0) {
			c->expect = s;
		} else if (strcmp(k->key, "regex") == 0) {
			m = arena_mark(a);
			e = ere_comp(&re, a, s, &why);
			arena_reset_to(a, m);
			if (e == -E_NOMEM)
				return bad(k->line, "regex: out of memory");
			if (e != 0)
				return bad(k->line, "regex: %s", why);
			c->regex = s;
		} else {
			return bad(k->line, "unknown key '%.40s'", k->key);
		}
	}
	if (c->prompt == NULL || c->prompt[0] == '\0')
		return bad(map->line, "a case needs a prompt");
	if (c->name == NULL && (c->name = arena_printf(a, "case %u",
	    idx + 1)) == NULL)
		return cmd_nomem("reading the evals");
	return 0;
}

/* The evals file into cases (in a); 0 or an exit status (said). */
static int
load(struct arena *a, struct ecase **out, unsigned *n)
{
	struct fm_node *root, *k;
	struct fm_error fe;
	struct sbuf sb;
	char buf[4096];
	ssize_t r;
	unsigned i = 0;
	int fd, e;

	if ((fd = open(evfile, O_RDONLY | O_CLOEXEC)) < 0) {
		log_err("eval: %s: %s", evfile, strerror(errno));
		return EXIT_USAGE;
	}
	sbuf_init(&sb, a, EVAL_FILE_MAX);
	while ((r = read(fd, buf, sizeof(buf))) > 0 && !sb.err)
		sbuf_add(&sb, buf, (size_t)r);
	close(fd);
	if (r < 0 || sb.err)
		return bad(0, "%s", r < 0 ? strerror(errno) :
		    "over 1 MiB, or out of memory");
	if ((e = fm_parse(a, sb.p != NULL ? sb.p : "", sb.len, 1, &root,
	    &fe)) != 0)
		return e == -E_NOMEM ? cmd_nomem("reading the evals") :
		    bad(fe.line, "%s", fe.msg);
	if (root->kind != FM_SEQ || root->nkids == 0)
		return bad(root->line ? root->line : 1, "want a list of cases");
	if (root->nkids > EVAL_MAX_CASES)
		return bad(root->line, "more than %d cases", EVAL_MAX_CASES);
	if ((*out = arena_zalloc(a, root->nkids * sizeof(**out))) == NULL)
		return cmd_nomem("reading the evals");
	for (k = root->kids; k != NULL; k = k->next, i++)
		if ((e = parse_case(&(*out)[i], k, i, a)) != 0)
			return e;
	*n = i;
	return 0;
}

static void
on_event(void *ctx, const struct agent_event *e)
{
	struct seen *s = ctx;

	if (strcmp(e->type, "usage") == 0) {
		s->steps++;
		/* count_usage puts it last */
		if (e->n >= 14 && memcmp(e->json + e->n - 14,
		    "\"cache\":\"hit\"}", 14) == 0)
			s->hits++;
	} else if (e->name != NULL && (strcmp(e->type, "tool_start") == 0 ||
	    strcmp(e->type, "handoff") == 0)) {
		sbuf_adds(&s->tools, e->name);
		sbuf_addc(&s->tools, ' ');
	}
}

static int
fail(struct result *r, const char *fmt, ...) ATTR_PRINTF(2, 3);

static int
fail(struct result *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
	r->ok = 0;
	return -1;
}

/* Each text of a scalar or list, for `want`. */
static int
each(const struct fm_node *nd, struct result *r, const char *what,
    int (*want)(const char *hay, const char *s), const char *hay)
{
	const struct fm_node *k = nd->kind == FM_SEQ ? nd->kids : nd;

	for (; k != NULL; k = nd->kind == FM_SEQ ? k->next : NULL)
		if (!want(hay, k->s))
			return fail(r, "%s: no '%.60s'", what, k->s);
	return 0;
}

static int
has_text(const char *hay, const char *s)
{
	return strstr(hay, s) != NULL;
}

static int
has_tool(const char *hay, const char *s)
{
	const char *p;
	size_t n = strlen(s);

	for (p = hay; (p = strstr(p, s)) != NULL; p += n)
		if ((p == hay || p[-1] == ' ') && p[n] == ' ')
			return 1;
	return 0;
}

/* The token at a dotted path ("a.b.0") in d, or -1. */
static int
json_path(const struct json_doc *d, const char *path)
{
	char key[128];
	const char *p = path, *dot;
	size_t n;
	int t = 0;

	while (t >= 0 && *p != '\0') {
		dot = strchr(p, '.');
		n = dot != NULL ? (size_t)(dot - p) : strlen(p);
		if (n >= sizeof(key))
			return -1;
		memcpy(key, p, n);
		key[n] = '\0';
		if (d->t[t].type == JSON_ARR && n > 0 &&
		    strspn(key, "0123456789") == n)
			t = json_at(d, t, (unsigned)strtoul(key, NULL, 10));
		else if (d->t[t].type == JSON_OBJ)
			t = json_get(d, t, key);
		else
			t = -1;
		p += n + (dot != NULL);
	}
	return t;
}

static int
check_json(const struct ecase *c, const char *ans, struct arena *a,
    struct result *r)
{
	const struct fm_node *k;
	struct json_doc d;
	char *v;
	int t;

	if (json_parse(a, ans, strlen(ans), 1u << 16, &d) != 0 || d.n == 0)
		return fail(r, "json: the answer is not JSON");
	if (c->json->kind != FM_MAP)
		return 0;
	for (k = c->json->kids; k != NULL; k = k->next) {
		const char *want = scalar(k) != NULL ? k->s : "";

		if ((t = json_path(&d, k->key)) < 0)
			return fail(r, "json: no %.60s", k->key);
		if (d.t[t].type == JSON_STR) {
			if (json_str(&d, a, t, &v, NULL) != 0)
				return fail(r, "json: %.60s: bad string",
				    k->key);
		} else if ((v = arena_strndup(a, ans + d.t[t].start,
		    (size_t)(d.t[t].end - d.t[t].start))) == NULL)
			return fail(r, "out of memory");
		if (strcmp(v, want) != 0)
			return fail(r, "json: %.40s is %.40s, want %.40s",
			    k->key, v, want);
	}
	return 0;
}

/* The judge: one more model call, through the case's agent's client, that
 * scores the answer 0-10 against the rubric. */
static int
check_judge(const struct ecase *c, struct llm_client *cl,
    const struct cfg *cf, const char *ans, struct arena *a,
    struct result *r)
{
	struct llm_req q;
	struct llm_msg m;
	struct llm_reply rp;
	const struct cfg_price *pr;
	const char *p;
	unsigned score = 0;
	int e;

	if (cl == NULL)
		return fail(r, "judge: no model (provider offline)");
	memset(&q, 0, sizeof(q));
	memset(&m, 0, sizeof(m));
	q.model = cf->model;
	q.stream = 1;
	q.system = "You grade an assistant's answer against a rubric. Reply "
	    "with one whole number from 0 (fails the rubric) to 10 (meets "
	    "it fully), and nothing else.";
	m.role = LLM_USER;
	m.text = arena_printf(a, "Rubric:\n%s\n\nTask:\n%s\n\nAnswer:\n%s",
	    c->rubric, c->prompt, ans);
	if (m.text == NULL)
		return fail(r, "out of memory");
	m.text_len = strlen(m.text);
	q.msgs = &m;
	llm_set_deadline(cl, net_now_ms() + (long long)cf->limits.time_s *
	    1000);
	if ((e = llm_send(cl, a, &q, NULL, &rp)) != 0)
		return fail(r, "judge: %.150s", llm_why(cl));
	/* The judge's tokens and money are the case's too (not a hit's). */
	if (llm_cached(cl) != 1 && (pr = cfg_price(cf, cf->model)) != NULL)
		r->cost += ((double)rp.in_tokens * pr->input +
		    (double)rp.out_tokens * pr->output) / 1e6;
	if (llm_cached(cl) != 1)
		r->tokens += rp.in_tokens + rp.out_tokens;
	p = rp.text;
	while (*p != '\0' && (*p < '0' || *p > '9'))
		p++;
	e = *p == '\0';
	for (; *p >= '0' && *p <= '9' && score <= 10; p++)
		score = score * 10 + (unsigned)(*p - '0');
	llm_reply_release(&rp);
	if (e || score > 10)
		return fail(r, "judge: no score 0-10 in its reply");
	if (score < c->pass)
		return fail(r, "judge: %u/10, below %u", score, c->pass);
	snprintf(r->why, sizeof(r->why), "judge: %u/10", score);
	return 0;
}

/* Grade the answer; the first failing check is the reason. */
static void
grade(const struct ecase *c, struct agent *ag, const struct cfg *cf,
    enum agent_status st, const char *ans, struct seen *s,
    struct arena *a, struct result *r)
{
	const char *t;
	size_t n, k;
	struct ere re;
	int e;

	r->ok = 1;
	if (st != AG_OK)
		return (void)fail(r, "the turn did not end well: %.150s",
		    ans != NULL ? ans : "?");
	if (ans == NULL)
		ans = "";
	if (c->expect != NULL) {
		/* Line ends at the end are no part of the comparison. */
		n = strlen(c->expect);
		while (n > 0 && c->expect[n - 1] == '\n')
			n--;
		t = ans;
		k = strlen(t);
		while (k > 0 && t[k - 1] == '\n')
			k--;
		if (k != n || strncmp(t, c->expect, n) != 0)
			return (void)fail(r, "expect: the answer differs");
	}
	if (c->contains != NULL &&
	    each(c->contains, r, "contains", has_text, ans) != 0)
		return;
	if (c->regex != NULL) {
		const char *why;

		if (ere_comp(&re, a, c->regex, &why) != 0 ||
		    (e = ere_match(&re, a, ans, strlen(ans))) < 0)
			return (void)fail(r, "regex: out of memory");
		if (e == 0)
			return (void)fail(r, "regex: no match");
	}
	if (c->json != NULL && check_json(c, ans, a, r) != 0)
		return;
	if (c->tools != NULL) {
		if (s->tools.err)
			return (void)fail(r, "tools: out of memory");
		if (each(c->tools, r, "tools", has_tool, s->tools.p != NULL ?
		    s->tools.p : " ") != 0)
			return;
	}
	if (c->max_steps > 0 && s->steps > c->max_steps)
		return (void)fail(r, "max_steps: %u model calls", s->steps);
	if (c->rubric != NULL)
		(void)check_judge(c, agent_llm(ag), cf, ans, a, r);
}

/* One case as a fresh agent turn; everything it used is given back. */
static int
run_case(const struct ecase *c, const struct cfg *cf, struct result *r)
{
	struct arena_mark m = arena_mark(&app.perm);
	struct agent_opts o;
	struct seen s;
	struct agent *ag;
	enum agent_status st;
	const char *ans = NULL;
	unsigned long in, out;
	char why[320];
	long long t0;
	int e;

	memset(r, 0, sizeof(*r));
	memset(&s, 0, sizeof(s));
	sbuf_init(&s.tools, &app.perm, 64u << 10);
	sbuf_addc(&s.tools, ' ');
	memset(&o, 0, sizeof(o));
	o.ephemeral = 1;
	o.only = c->skill;
	o.on_event = on_event;
	o.ctx = &s;
	t0 = net_now_ms();
	if ((ag = agent_new(&app.perm, cf, &o, &e, why, sizeof(why))) ==
	    NULL) {
		arena_reset_to(&app.perm, m);
		if (e == -E_NOMEM)
			return cmd_nomem("starting an agent");
		log_err("eval: %s", why);
		return EXIT_FAIL;
	}
	agent_entry(ag, c->agent, 0);
	st = agent_turn(ag, c->prompt, strlen(c->prompt), &ans);
	r->ms = net_now_ms() - t0;
	agent_usage(ag, &in, &out, &r->cost);
	r->tokens = in + out;
	r->steps = s.steps;
	r->hits = s.hits;
	grade(c, ag, cf, st, ans, &s, &app.perm, r);
	agent_free(ag);
	arena_reset_to(&app.perm, m);
	return 0;
}

/* Text for XML: the five specials as entities, controls as spaces. */
static void
xml(FILE *f, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '"')
			fputs("&quot;", f);
		else if (*s == '\'')
			fputs("&apos;", f);
		else
			fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
	}
}

/* Text for a Markdown table cell. */
static void
md(FILE *f, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '|')
			fputs("\\|", f);
		else
			fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
	}
}

static int
report(const char *path, int junit, const struct ecase *c,
    const struct result *r, unsigned n, unsigned passed)
{
	long long ms = 0;
	unsigned i;
	FILE *f;

	if ((f = fopen(path, "w")) == NULL) {
		log_err("eval: %s: %s", path, strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++)
		ms += r[i].ms;
	if (junit) {
		fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		    "<testsuite name=\"");
		xml(f, evfile);
		fprintf(f, "\" tests=\"%u\" failures=\"%u\" errors=\"0\" "
		    "time=\"%lld.%03lld\">\n", n, n - passed, ms / 1000,
		    ms % 1000);
	} else {
		fprintf(f, "| case | result | steps | ms | tokens | cost | "
		    "note |\n|---|---|---:|---:|---:|---:|---|\n");
	}
	for (i = 0; i < n; i++) {
		if (junit) {
			fputs("  <testcase classname=\"skillbox.eval\" name=\"",
			    f);
			xml(f, c[i].name);
			fprintf(f, "\" time=\"%lld.%03lld\"", r[i].ms / 1000,
			    r[i].ms % 1000);
			if (r[i].ok) {
				fputs("/>\n", f);
				continue;
			}
			fputs(">\n    <failure message=\"", f);
			xml(f, r[i].why);
			fputs("\"/>\n  </testcase>\n", f);
			continue;
		}
		fputs("| ", f);
		md(f, c[i].name);
		fprintf(f, " | %s | %u | %lld | %lu | %.6f | ", r[i].ok ?
		    "pass" : "**fail**", r[i].steps, r[i].ms, r[i].tokens,
		    r[i].cost);
		md(f, r[i].why);
		fputs(" |\n", f);
	}
	if (junit)
		fputs("</testsuite>\n", f);
	else
		fprintf(f, "\n%u of %u passed.\n", passed, n);
	if (fclose(f) != 0) {
		log_err("eval: %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static void
print_json(const struct ecase *c, const struct result *r, unsigned n,
    unsigned passed)
{
	struct json_writer w;
	struct sbuf sb;
	char cost[32];
	unsigned i;

	sbuf_init(&sb, NULL, 0);
	json_writer_init(&w, &sb);
	json_begin_obj(&w);
	json_kstr(&w, "file", evfile);
	json_key(&w, "passed");
	json_put_uint(&w, passed);
	json_key(&w, "total");
	json_put_uint(&w, n);
	json_key(&w, "cases");
	json_begin_arr(&w);
	for (i = 0; i < n; i++) {
		json_begin_obj(&w);
		json_kstr(&w, "name", c[i].name);
		json_key(&w, "pass");
		json_put_bool(&w, r[i].ok);
		json_kstr(&w, "why", r[i].why);
		json_key(&w, "ms");
		json_put_int(&w, r[i].ms);
		json_key(&w, "steps");
		json_put_uint(&w, r[i].steps);
		json_key(&w, "tokens");
		json_put_uint(&w, r[i].tokens);
		json_key(&w, "cost");
		snprintf(cost, sizeof(cost), "%.6f", r[i].cost);
		json_put_raw(&w, cost, strlen(cost));
		json_key(&w, "cache_hits");
		json_put_uint(&w, r[i].hits);
		json_end_obj(&w);
	}
	json_end_arr(&w);
	json_end_obj(&w);
	if (!sb.err && json_writer_err(&w) == 0) {
		fwrite(sb.p, 1, sb.len, stdout);
		putchar('\n');
	}
	sbuf_release(&sb);
}

int
cmd_eval(int argc, char **argv)
{
	enum { O_JSON = 256, O_JUNIT, O_MD, O_THRESHOLD, O_NOCACHE };
	static const struct option lo[] = {
		{ "json", no_argument, NULL, O_JSON },
		{ "junit", required_argument, NULL, O_JUNIT },
		{ "markdown", required_argument, NULL, O_MD },
		{ "threshold", required_argument, NULL, O_THRESHOLD },
		{ "no-cache", no_argument, NULL, O_NOCACHE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *junit = NULL, *mdf = NULL;
	unsigned long threshold = 100;
	unsigned n = 0, i, passed = 0;
	struct ecase *cs;
	struct result *rs;
	struct cfg *cf;
	struct arena y;
	char why[320], *end;
	int c, json = 0, e;

	optind = 0;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case O_JSON: json = 1; break;
		case O_JUNIT: junit = optarg; break;
		case O_MD: mdf = optarg; break;
		case O_THRESHOLD:
			threshold = strtoul(optarg, &end, 10);
			if (*optarg < '0' || *optarg > '9' || *end != '\0' ||
			    threshold > 100)
				return cmd_usage("eval", "--threshold: a "
				    "percentage, 0-100");
			break;
		case O_NOCACHE: setenv("SKILLBOX_NO_CACHE", "1", 1); break;
		case 'h': return cmd_help("eval");
		default: return cmd_usage("eval", "bad option");
		}
	}
	if (optind + 1 != argc)
		return cmd_usage("eval", "one evals file");
	evfile = argv[optind];
	if ((e = cmd_cfg_load(&cf)) != 0 || (e = cmd_key_check(cf)) != 0)
		return e;
	/* The trust anchors once, before the first case's mark: a client
	 * keeps the first it loads for the whole process, and each case's
	 * memory is given back. */
	if (strcmp(cf->provider, "offline") != 0 && cf->base_url != NULL &&
	    strncmp(cf->base_url, "https:", 6) == 0 &&
	    llm_preload_anchors(&app.perm, cf->ca_file, why, sizeof(why)) != 0) {
		log_err("eval: %s", why);
		return EXIT_FAIL;
	}
	arena_init(&y, "evals");
	if ((e = load(&y, &cs, &n)) != 0 || (rs = arena_zalloc(&y,
	    n * sizeof(*rs))) == NULL) {
		arena_reset(&y);
		return e != 0 ? e : cmd_nomem("reading the evals");
	}
	if (!json)
		printf("%-6s %-24s %5s %7s %8s %10s  %s\n", "RESULT", "CASE",
		    "STEPS", "MS", "TOKENS", "COST", "NOTE");
	for (i = 0; i < n; i++) {
		if ((e = run_case(&cs[i], cf, &rs[i])) != 0) {
			arena_reset(&y);
			return e;
		}
		passed += rs[i].ok;
		if (!json) {
			printf("%-6s %-24.24s %5u %7lld %8lu %10.6f  %s\n",
			    rs[i].ok ? "pass" : "FAIL", cs[i].name,
			    rs[i].steps, rs[i].ms, rs[i].tokens, rs[i].cost,
			    rs[i].why);
			fflush(stdout);
		}
	}
	if (json)
		print_json(cs, rs, n, passed);
	else
		printf("%u of %u passed (%u%%), threshold %lu%%\n", passed, n,
		    passed * 100 / n, threshold);
	e = (junit != NULL && report(junit, 1, cs, rs, n, passed) != 0) ||
	    (mdf != NULL && report(mdf, 0, cs, rs, n, passed) != 0);
	arena_reset(&y);
	if (e)
		return EXIT_FAIL;
	return (unsigned long)passed * 100 < threshold * n ? EXIT_FAIL :
	    EXIT_OK;
}
