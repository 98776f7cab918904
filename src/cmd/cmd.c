/* cmd.c - what several applets share (see cmd.h): messages, reading
 * text, and running the agents for run, chat, answer and serve. */
#include "cmd/cmd.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/cfg.h"
#include "config.h"
#include "base/log.h"
#include "base/str.h"
#include "serve/jobs.h"
#include "skill/skill.h"

/* see cmd.h */
int
cmd_off(const char *applet, const char *sw)
{
	log_err("%s: not in this build (%s=0)", applet, sw);
	return EXIT_USAGE;
}

/* see cmd.h */
int
cmd_usage(const char *applet, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_err("%s%s%s", applet ? applet : "", applet ? ": " : "", msg);
	fprintf(stderr, "Try 'skillbox %s%s--help'.\n", applet ? applet : "",
	    applet ? " " : "");
	return EXIT_USAGE;
}

/* see cmd.h */
int
cmd_global_set(struct cmd_global *g, int opt, const char *arg)
{
	switch (opt) {
	case 'c': g->config = arg; break;
	case 'm': g->memory = arg; break;
	case 'v': g->verbose++; break;
	case 'q': g->quiet = 1; break;
	case 'S': g->stats = 1; break;
	case 'd':
		if (g->ndirs == SKILL_MAX_ROOTS)
			return cmd_usage(NULL, "at most %d -d", SKILL_MAX_ROOTS);
		if (*arg == '\0' || strchr(arg, ':') != NULL)
			return cmd_usage(NULL, "-d '%s': want a folder name "
			    "without ':'", arg);
		g->dirs[g->ndirs++] = arg;
		break;
	}
	return 0;
}

/* The letter of a global option word ("-c", "--config", "--config=F"),
 * its value in *val when attached; 0 when not one. */
static int
global_letter(const char *w, const char **val)
{
	static const char *const longs[] = {
		"config", "dir", "memory", "verbose", "quiet", "stats",
	};
	static const char letters[] = "cdmvqS";
	size_t i, n;

	*val = NULL;
	if (w[0] == '-' && w[1] != '\0' && w[1] != '-' && w[2] == '\0')
		return strchr("cdmvq", w[1]) != NULL ? w[1] : 0;
	if (w[0] != '-' || w[1] != '-')
		return 0;
	for (i = 0; i < ARRAY_LEN(longs); i++) {
		n = strlen(longs[i]);
		if (strncmp(w + 2, longs[i], n) != 0)
			continue;
		if (w[2 + n] == '=' && i < 3)
			*val = w + 3 + n;
		else if (w[2 + n] != '\0')
			continue;
		return letters[i];
	}
	return 0;
}

/* see cmd.h */
int
cmd_global_take(struct cmd_global *g, const char *own, int *argc,
    char **argv)
{
	const char *w, *val, *o = NULL;
	int i, k = 1, c, after_opt = 0, e, pass = *own == '+';

	for (i = 1; i < *argc; i++) {
		w = argv[i];
		if (strcmp(w, "--") == 0)
			break;
		if (w[0] != '-' || w[1] == '\0') {
			/* An option's value, else an operand. */
			if (pass && !after_opt)
				break;
			after_opt = 0;
			argv[k++] = argv[i];
			continue;
		}
		c = global_letter(w, &val);
		if (c == 0 || ((o = strchr(own, c)) != NULL)) {
			/* The applet's: keep it, and its value when known. */
			argv[k++] = argv[i];
			after_opt = strchr(w, '=') == NULL;
			if (c != 0 && o[1] == ':' && val == NULL && i + 1 < *argc) {
				argv[k++] = argv[++i];
				after_opt = 0;
			}
			continue;
		}
		after_opt = 0;
		if (val == NULL && strchr("cdm", c) != NULL) {
			if (i + 1 == *argc)
				return cmd_usage(argv[0], "%s needs a value", w);
			val = argv[++i];
		}
		if ((e = cmd_global_set(g, c, val)) != 0)
			return e;
	}
	while (i < *argc)
		argv[k++] = argv[i++];
	argv[k] = NULL;
	*argc = k;
	return 0;
}

/* see cmd.h */
int
cmd_nomem(const char *doing)
{
	log_err("memory budget of %zu KiB exhausted while %s (%zu KiB in use "
	    "when a request for %zu bytes failed); raise it with --memory",
	    mem_budget() >> 10, doing, mem_failed_used() >> 10,
	    mem_failed_request());
	return EXIT_NOMEM;
}

/* see cmd.h */
int
cmd_default_roots(const char *applet, const char **roots, unsigned *n)
{
	unsigned k = cfg_default_skill_dirs(&app.perm, roots, SKILL_MAX_ROOTS);

	if (k == 0)
		return cmd_nomem("listing the skills folders");
	if (k > SKILL_MAX_ROOTS)
		return cmd_usage(applet, "at most %d skills folders",
		    SKILL_MAX_ROOTS);
	*n = k;
	return 0;
}

/* see cmd.h */
unsigned
cmd_warn_dirs(const char *const *dirs, unsigned n, const char *from)
{
	struct stat st;
	unsigned i, bad = 0;

	for (i = 0; i < n; i++) {
		if (stat(dirs[i], &st) == 0 && S_ISDIR(st.st_mode))
			continue;
		log_warn("skills folder %s (from %s): %s", dirs[i], from,
		    stat(dirs[i], &st) != 0 ? strerror(errno) : "not a folder");
		bad++;
	}
	return bad;
}

/* What a loaded configuration may get wrong without being invalid: a
 * named skills folder that does not exist, -d that its skills: overrides. */
static void
cmd_cfg_warn(const struct cfg *c)
{
	const char *src = cfg_source(c, "skills");

	if (app.dirs && strcmp(src, "$SKILLBOX_SKILLS") != 0)
		log_warn("-d is not used: %s gives the skills folders", src);
	/* The default folders need not exist; named ones should. */
	if (strcmp(src, "default") != 0)
		(void)cmd_warn_dirs(c->skills, c->nskills, src);
}

/* see cmd.h */
int
cmd_cfg_load(struct cfg **out)
{
	struct cfg *c;
	char why[320];
	int e;

	if ((*out = c = arena_zalloc(&app.perm, sizeof(*c))) == NULL ||
	    (e = cfg_load(c, &app.perm, app.config, why, sizeof(why))) ==
	    -E_NOMEM)
		return cmd_nomem("loading the configuration");
	if (e != 0) {
		log_err("%s", why);
		return EXIT_FAIL;
	}
	cmd_cfg_warn(c);
	return 0;
}

/* see cmd.h */
int
cmd_key_check(const struct cfg *c)
{
	char why[320];
	int e = cfg_key_check(c, why, sizeof(why));

	if (e == -E_NOENT)
		log_warn("%s", why);
	else if (e != 0) {
		log_err("%s", why);
		return EXIT_FAIL;
	}
	return 0;
}

/* see cmd.h */
int
cmd_write(int fd, const char *buf, size_t n)
{
	ssize_t r;

	while (n > 0) {
		r = write(fd, buf, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -E_IO;
		buf += r;
		n -= (size_t)r;
	}
	return 0;
}

/* n bytes of s (all of it: n 0) as shown to a person, in app.perm:
 * controls neutralised when tty. */
static const char *
clean_copy(const char *s, size_t n, int tty)
{
	char *c;

	if (s == NULL)
		return "";
	if ((c = arena_strndup(&app.perm, s, n ? n : strlen(s))) == NULL)
		return "";
	if (tty)
		str_ctl_clean(c, strlen(c));
	return c;
}

/* see cmd.h */
const char *
cmd_shown(const char *s)
{
	if (s == NULL)
		return "";
	return isatty(1) ? clean_copy(s, 0, 1) : s;
}

/* Text of an event shown to a person: controls are neutralised when a
 * terminal is at either end. */
static const char *
shown(const struct cmd_printer *p, const char *s, size_t n)
{
	return clean_copy(s, n, p->tty);
}

static void
on_event(void *ctx, const struct agent_event *e)
{
	struct cmd_printer *p = ctx;
	struct arena_mark m;

	if (p->json) {
		if (strcmp(e->type, "text") == 0 && !p->stream)
			return;
		fwrite(e->json, 1, e->n, stdout);
		putchar('\n');
		fflush(stdout);
		return;
	}
	m = arena_mark(&app.perm);
	if (strcmp(e->type, "text") == 0 && p->stream) {
		if (strcmp(e->agent, "entry") == 0 && e->len > 0) {
			const char *d = shown(p, e->text, e->len);

			fputs(d, stdout);
			fflush(stdout);
			p->open = *d != '\0' && d[strlen(d) - 1] != '\n' ?
			    1 : 2;
		}
	} else if (p->progress && strcmp(e->type, "handoff") == 0) {
		if (!e->back)
			fprintf(stderr, "  -> %s\n", shown(p, e->name, 0));
		else
			fprintf(stderr, "  <- %s\n", shown(p, e->from, 0));
	} else if (p->progress && strcmp(e->type, "tool_end") == 0) {
		fprintf(stderr, "  [%s] %s %s (%lld ms%s%s)\n",
		    shown(p, e->agent, 0), shown(p, e->name, 0), e->ok ? "ok" :
		    "failed", e->ms < 0 ? 0 : e->ms, e->confinement ? "; " :
		    "", shown(p, e->confinement, 0));
	} else if (strcmp(e->type, "error") == 0) {
		const char *msg = shown(p, e->text, e->len);

		if (p->open == 1)
			putchar('\n');
		p->open = 0;
		fflush(stdout);
		snprintf(p->said, sizeof(p->said), "%s", msg);
		log_err("%s", msg);
	}
	arena_reset_to(&app.perm, m);
}

/* see cmd.h */
int
cmd_agent_open(struct agent **out, const char *session, int resume,
    int stream, int json, int nolog, int model, struct cmd_printer *p)
{
	struct agent_opts o;
	struct cfg *c;
	char why[320];
	int e;

	if ((e = cmd_cfg_load(&c)) != 0 || (model && (e = cmd_key_check(c))
	    != 0))
		return e;
	memset(p, 0, sizeof(*p));
	p->json = json;
	p->stream = stream;
	p->progress = !json && (isatty(2) || log_get_level() >= LOG_INFO);
	p->tty = isatty(1) || isatty(2);
	memset(&o, 0, sizeof(o));
	o.session = session;
	o.resume = resume;
	o.stream = stream;
	o.ephemeral = nolog;
	o.json = json;
	o.take_answer = HAVE_JOBS ? job_answer : NULL;
	o.on_event = on_event;
	o.ctx = p;
	if ((*out = agent_new(&app.perm, c, &o, &e, why, sizeof(why))) ==
	    NULL) {
		if (e == -E_NOMEM)
			return cmd_nomem("starting the agent");
		log_err("%s", why);
		return EXIT_FAIL;
	}
	return 0;
}

/* see cmd.h */
int
cmd_read_text(const char *applet, const char *arg, struct sbuf *in)
{
	char buf[4096];
	ssize_t k;

	sbuf_init(in, &app.perm, 1u << 20);
	if (arg != NULL)
		sbuf_adds(in, arg);
	else
		while ((k = read(0, buf, sizeof(buf))) > 0)
			sbuf_add(in, buf, (size_t)k);
	if (in->err)
		return in->err == -E_LIMIT ? cmd_usage(applet, "text over 1 "
		    "MiB") : cmd_nomem("reading the text");
	while (in->len > 0 && (in->p[in->len - 1] == '\n' ||
	    in->p[in->len - 1] == '\r'))
		sbuf_truncate(in, in->len - 1);
	return 0;
}

/* see cmd.h */
int
cmd_agent_status(enum agent_status st)
{
	switch (st) {
	case AG_OK: case AG_EXIT: return EXIT_OK;
	case AG_LIMIT: return EXIT_LIMIT;
	case AG_WAIT: return EXIT_WAIT;
	case AG_NOMEM: return cmd_nomem("running the turn");
	default: return EXIT_FAIL;
	}
}

/* see cmd.h */
void
cmd_agent_answer(struct cmd_printer *p, enum agent_status st,
    const char *final)
{
	if (p->json || final == NULL)
		return;
	/* Streamed: said already, unless no text came (/help, a job's
	 * answer). */
	if (p->stream && st == AG_OK && p->open) {
		if (p->open == 1)
			putchar('\n');
		p->open = 0;
		return;
	}
	if (p->tty)
		final = clean_copy(final, 0, 1);
	if (st == AG_OK || st == AG_EXIT || st == AG_WAIT) {
		fputs(final, stdout);
		if (*final != '\0' && final[strlen(final) - 1] != '\n')
			putchar('\n');
	} else if ((st == AG_FAIL || st == AG_LIMIT) &&
	    strncmp(final, p->said, sizeof(p->said) - 1) != 0)
		fprintf(stderr, "skillbox: %s\n", final);	/* not said yet */
	p->said[0] = '\0';
	fflush(stdout);
}

/* see cmd.h */
void
cmd_wait_hint(struct agent *ag)
{
	if (agent_approval(ag))
		fprintf(stderr, "skillbox: waiting for approval: skillbox answer "
		    "%s --approve, or --deny 'REASON' (--call %s)\n",
		    agent_session(ag), agent_asked(ag) ? agent_asked(ag) : "?");
	else
		fprintf(stderr, "skillbox: waiting for an answer: skillbox "
		    "answer %s 'TEXT'\n", agent_session(ag));
}
