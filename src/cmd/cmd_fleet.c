/* cmd_fleet.c - the fleet's controller: jobs to devices over MQTT
 * usage: skillbox fleet send [--group G | --device D | --queue Q]
 *          [--to AGENT] [--id ID] [--wait SECS] [--json] PROMPT
 *        skillbox fleet list [--json]
 *        skillbox fleet watch [--json]
 *        skillbox fleet answer ID --device D (TEXT | --approve | --deny [WHY])
 * Talks to the broker of the configuration's mqtt: section (README,
 * "A fleet"), as its username, never to a device itself.
 *
 * send    publishes the job (QoS 1; title: PROMPT's first line) to
 *         ROOT/D/jobs, ROOT/group/G/jobs or ROOT/queue/Q, then prints each
 *         result as it comes, "DEVICE STATUS: RESULT" (on one line;
 *         --json: as the device sent it): one for --device
 *         and --queue, for --group one from each device of G that its
 *         retained status shows online now
 * list    the devices from their retained statuses: id, online or
 *         offline, version, load, jobs running, groups, queues
 * watch   statuses, job events and results as they come, until SIGINT or
 *         SIGTERM; its session (mqtt.client_id) stays with the broker in
 *         between, so the results that came meanwhile are shown when it
 *         starts again
 * answer  answers job ID's question on device D (TEXT, or stdin without
 *         it), or approves or denies its waiting call
 *
 * --group G    every device of group G     --device D  device D only
 * --queue Q    one device of queue Q       --to AGENT  who does the job
 * --id ID      the job's id [A-Za-z0-9_.-] (default: time and random)
 * --wait SECS  how long send waits for results (default 300; 0: only
 *              until the broker has the job)
 * --json       one JSON object a line
 *
 * Each result is printed once. send, list and answer use sessions of
 * their own (CLIENT_ID-PID), so they run beside a watch; a result that
 * comes after a send stopped waiting goes to the watch's session, once a
 * watch has run.
 * Exit status: 0 done, 1 a job failed, 2 usage, 3 the wait ended before
 * every result came (those that came are printed; also SIGINT or
 * SIGTERM, and --group with no device of G online), 4 the broker is
 * unreachable or refused the connection, a subscription or the job. */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "agent/cfg.h"
#include "base/log.h"
#include "base/str.h"
#include "cmd/cmd.h"
#include "fmt/json.h"
#include "net/mqtt.h"
#include "net/net.h"

#define FLEET_DEVS	4096	/* statuses kept by list and send */
#define FLEET_SEEN	4096	/* results remembered, to print each once */
#define FLEET_MSG	(1u << 20)	/* the largest message taken */

enum { F_SEND, F_LIST, F_WATCH, F_ANSWER };

struct fleet_dev {
	char		*id;
	char		*status;	/* its JSON, canonical */
	int		 online, member;
};

struct fleet {
	struct mqtt_link l;
	const char	*root, *cid;
	int		 cmd, json;
	int		 rc;		/* the exit status once done, else -1 */
	int		 ever_up, synced, closing;
	char		 sync[24];	/* the marker that ends the statuses */
	char		 sync_topic[200];
	/* send and answer: the one publish that must reach the broker */
	char		*topic, *msg;
	size_t		 msg_n;
	long		 pub_id;	/* in flight, else 0 */
	int		 pub_sent, pub_done;
	const char	*group, *device, *job_id;
	unsigned	 want, got, failed;
	long		 wait;		/* send --wait, s */
	struct fleet_dev *devs;
	unsigned	 ndevs;
	unsigned long long seen[FLEET_SEEN];
	unsigned	 nseen;
};

static volatile sig_atomic_t fleet_stop;

static void
on_signal(int sig)
{
	(void)sig;
	fleet_stop = 1;
}

/* A device, group or queue name, or a job id (dots allowed). */
static int
name_ok(const char *s, int dots)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > 64)
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] | 32) >= 'a' && (s[i] | 32) <= 'z') &&
		    !(s[i] >= '0' && s[i] <= '9') && s[i] != '_' &&
		    s[i] != '-' && !(dots && s[i] == '.'))
			return 0;
	return 1;
}

/* FNV-1a of the device and the job id: results are remembered by it. */
static unsigned long long
seen_key(struct str dev, struct str id)
{
	unsigned long long h = 1469598103934665603ull;
	size_t i;

	for (i = 0; i < dev.n; i++)
		h = (h ^ (unsigned char)dev.p[i]) * 1099511628211ull;
	h = (h ^ '/') * 1099511628211ull;
	for (i = 0; i < id.n; i++)
		h = (h ^ (unsigned char)id.p[i]) * 1099511628211ull;
	return h;
}

/* 1 when the result was printed before; else remembers it. */
static int
seen(struct fleet *f, struct str dev, struct str id)
{
	unsigned long long k = seen_key(dev, id);
	unsigned i, n = f->nseen < FLEET_SEEN ? f->nseen : FLEET_SEEN;

	for (i = 0; i < n; i++)
		if (f->seen[i] == k)
			return 1;
	f->seen[f->nseen++ % FLEET_SEEN] = k;
	return 0;
}

/* Split ROOT/DEV/KIND[/ID] into its parts: 0, or -1 when the topic is
 * not one of a device's. */
static int
topic_split(const struct fleet *f, struct str t, struct str *dev,
    struct str *kind, struct str *id)
{
	size_t r = strlen(f->root), i;
	const char *e = t.p + t.n, *p;

	if (t.n <= r + 1 || memcmp(t.p, f->root, r) != 0 || t.p[r] != '/')
		return -1;
	dev->p = t.p + r + 1;
	for (p = dev->p; p < e && *p != '/'; p++)
		;
	dev->n = (size_t)(p - dev->p);
	if (p == e || dev->n == 0)
		return -1;
	kind->p = ++p;
	for (; p < e && *p != '/'; p++)
		;
	kind->n = (size_t)(p - kind->p);
	id->p = p < e ? p + 1 : e;
	id->n = (size_t)(e - id->p);
	for (i = 0; i < id->n; i++)
		if (id->p[i] == '/')
			return -1;
	return 0;
}

/* The string member key of object 0 in d, in a; "" when missing. */
static char *
jstr(const struct json_doc *d, struct arena *a, const char *key)
{
	char *s;

	if (json_str(d, a, json_get(d, 0, key), &s, NULL) != 0)
		return "";
	return s;
}

/* s on one line, in place: each run of line ends, tabs and spaces is one
 * space, so that a result is one line of `send` and `watch`. */
static char *
one_line(char *s)
{
	char *r, *w;

	for (r = w = s; *r != '\0'; r++)
		if (*r != '\n' && *r != '\r' && *r != '\t' && *r != ' ')
			*w++ = *r;
		else if (w > s && w[-1] != ' ')
			*w++ = ' ';
	while (w > s && w[-1] == ' ')
		w--;
	*w = '\0';
	return s;
}

static void
finish(struct fleet *f, int rc)
{
	if (f->rc < 0)
		f->rc = rc;
}

/* Publish the one message of send or answer (again, dup, after a loss). */
static void
publish_job(struct fleet *f)
{
	long id;

	id = mqtt_publish(&f->l.m, f->topic, f->msg, f->msg_n, 1, 0,
	    f->pub_sent);
	if (id < 0) {
		log_err("fleet: cannot publish to %s: %s", f->topic,
		    id == -E_LIMIT ? "over the broker's packet size" :
		    "the session would not take it");
		finish(f, id == -E_LIMIT ? EXIT_FAIL : 4);
		return;
	}
	f->pub_id = id;
	f->pub_sent = 1;
}

/* The statuses are in (the marker came after them): send knows how many
 * results to wait for, list prints them. */
static int
dev_cmp(const void *a, const void *b)
{
	return strcmp(((const struct fleet_dev *)a)->id,
	    ((const struct fleet_dev *)b)->id);
}

/* Token key of object 0 as it stands (a number), or "-". */
static const char *
jraw(const struct json_doc *d, const char *key)
{
	const char *s;
	size_t n;

	if ((s = json_raw(d, json_get(d, 0, key), &n)) == NULL || *s == '"')
		return "-";
	return arena_strndup(&app.perm, s, n);
}

/* The strings of array key of object 0, joined by commas, or "-". */
static const char *
jlist(const struct json_doc *d, const char *key)
{
	const char *out = "";
	unsigned k;
	char *s;
	int j;

	for (k = 0; (j = json_at(d, json_get(d, 0, key), k)) >= 0; k++)
		if (json_str(d, &app.perm, j, &s, NULL) == 0)
			out = arena_printf(&app.perm, "%s%s%s", out,
			    *out ? "," : "", s);
	return out != NULL && *out ? out : "-";
}

static void
list_print(struct fleet *f)
{
	struct arena_mark mk;
	struct json_doc d;
	const char *v;
	unsigned i;

	qsort(f->devs, f->ndevs, sizeof(*f->devs), dev_cmp);
	for (i = 0; i < f->ndevs; i++) {
		if (f->json) {
			printf("%s\n", f->devs[i].status);
			continue;
		}
		mk = arena_mark(&app.perm);
		if (json_parse(&app.perm, f->devs[i].status,
		    strlen(f->devs[i].status), 512, &d) == 0) {
			v = jstr(&d, &app.perm, "version");
			printf("%s %s version=%s load=%s running=%s "
			    "groups=%s queues=%s\n", cmd_shown(f->devs[i].id),
			    f->devs[i].online ? "online" : "offline",
			    cmd_shown(*v ? v : "-"), cmd_shown(jraw(&d, "load")),
			    cmd_shown(jraw(&d, "running")),
			    cmd_shown(jlist(&d, "groups")),
			    cmd_shown(jlist(&d, "queues")));
		}
		arena_reset_to(&app.perm, mk);
	}
	fflush(stdout);
}

static void
synced(struct fleet *f)
{
	unsigned i;

	f->synced = 1;
	if (f->cmd == F_LIST) {
		list_print(f);
		finish(f, EXIT_OK);
		return;
	}
	if (f->group != NULL)
		for (i = 0; i < f->ndevs; i++)
			f->want += f->devs[i].online && f->devs[i].member;
	else
		f->want = 1;
	if (f->group != NULL && f->want == 0)
		log_warn("fleet: no device of group %s is online: the job "
		    "waits at the broker for those that come back", f->group);
	publish_job(f);
}

/* A retained status: kept by list and send. */
static void
on_status(struct fleet *f, struct str dev, struct str msg)
{
	struct fleet_dev *v = NULL;
	struct json_doc d;
	char *canon, *s;
	size_t n;
	unsigned i, k;
	int j;

	if (f->cmd == F_WATCH || f->synced || msg.n == 0)
		return;
	if ((canon = json_canon(&app.perm, msg.p, msg.n, &n)) == NULL ||
	    json_parse(&app.perm, canon, n, 512, &d) != 0 ||
	    d.t[0].type != JSON_OBJ) {
		log_warn("fleet: %.*s: a status that is not a JSON object",
		    (int)dev.n, dev.p);
		return;
	}
	for (i = 0; i < f->ndevs && v == NULL; i++)
		if (str_eqz(dev, f->devs[i].id))
			v = &f->devs[i];
	if (v == NULL) {
		if (f->ndevs == FLEET_DEVS)
			return;
		v = &f->devs[f->ndevs++];
		v->id = str_dup(&app.perm, dev);
	}
	v->status = canon;
	v->online = json_eq(&d, json_get(&d, 0, "state"), "online");
	v->member = 0;
	for (k = 0; f->group != NULL &&
	    (j = json_at(&d, json_get(&d, 0, "groups"), k)) >= 0; k++)
		if (json_str(&d, &app.perm, j, &s, NULL) == 0 &&
		    strcmp(s, f->group) == 0)
			v->member = 1;
}

/* Print a message as watch shows it: kind is status, event or result. */
static void
watch_print(struct fleet *f, const char *kind, struct str dev,
    struct str id, struct str msg)
{
	struct json_writer w;
	struct json_doc d;
	struct sbuf sb;
	char *canon, *ev, *st;
	size_t n;

	canon = json_canon(&app.perm, msg.p, msg.n, &n);
	if (f->json) {
		sbuf_init(&sb, &app.perm, FLEET_MSG + 256);
		json_writer_init(&w, &sb);
		json_begin_obj(&w);
		json_key(&w, "device");
		json_put_strn(&w, dev.p, dev.n);
		json_kstr(&w, "kind", kind);
		json_key(&w, "data");
		if (canon != NULL)
			json_put_raw(&w, canon, n);
		else
			json_put_strn(&w, msg.p, msg.n);
		json_end_obj(&w);
		if (json_writer_err(&w) == 0)
			printf("%.*s\n", (int)sb.len, sb.p);
		fflush(stdout);
		return;
	}
	if (canon == NULL || json_parse(&app.perm, canon, n, 512, &d) != 0 ||
	    d.t[0].type != JSON_OBJ) {
		printf("%s %s: %s\n", cmd_shown(str_dup(&app.perm, dev)), kind,
		    cmd_shown(str_dup(&app.perm, msg)));
	} else if (kind[0] == 's') {
		printf("%s status: %s\n", cmd_shown(str_dup(&app.perm, dev)),
		    cmd_shown(jstr(&d, &app.perm, "state")));
	} else if (kind[0] == 'e') {
		ev = jstr(&d, &app.perm, "ev");
		printf("%s event %s %s%s%s\n",
		    cmd_shown(str_dup(&app.perm, dev)),
		    cmd_shown(jstr(&d, &app.perm, "id")), cmd_shown(ev),
		    *jstr(&d, &app.perm, "text") ? ": " : "",
		    cmd_shown(one_line(jstr(&d, &app.perm, "text"))));
	} else {
		st = jstr(&d, &app.perm, "result");
		printf("%s result %s %s: %s\n",
		    cmd_shown(str_dup(&app.perm, dev)),
		    cmd_shown(str_dup(&app.perm, id)),
		    cmd_shown(jstr(&d, &app.perm, "status")), cmd_shown(one_line(
		    *st ? st : jstr(&d, &app.perm, "why"))));
	}
	fflush(stdout);
}

/* A result for send: printed once, counted. 0 when it is not this job's
 * (left unacknowledged, for the next watch). */
static int
on_result(struct fleet *f, struct str dev, struct str id, struct str msg)
{
	struct json_doc d;
	char *st, *txt;

	if (f->cmd == F_WATCH) {
		if (!seen(f, dev, id))
			watch_print(f, "result", dev, id, msg);
		return 1;
	}
	if (f->cmd != F_SEND || !str_eqz(id, f->job_id) || (f->device !=
	    NULL && !str_eqz(dev, f->device)))
		return 0;
	if (seen(f, dev, id))
		return 1;
	if (json_parse(&app.perm, msg.p, msg.n, 512, &d) != 0 ||
	    d.t[0].type != JSON_OBJ) {
		log_warn("fleet: %.*s: a result that is not a JSON object",
		    (int)dev.n, dev.p);
		d.n = 0;
	}
	st = jstr(&d, &app.perm, "status");
	txt = jstr(&d, &app.perm, "result");
	if (strcmp(st, "done") != 0) {
		f->failed++;
		if (*txt == '\0')
			txt = jstr(&d, &app.perm, "why");
	}
	if (f->json)
		watch_print(f, "result", dev, id, msg);
	else
		printf("%s %s: %s\n", cmd_shown(str_dup(&app.perm, dev)),
		    cmd_shown(*st ? st : "failed"), cmd_shown(one_line(txt)));
	fflush(stdout);
	if (++f->got >= f->want && f->pub_done)
		finish(f, f->failed ? EXIT_FAIL : EXIT_OK);
	return 1;
}

static void
on_msg(struct fleet *f, struct mqtt *m, const struct mqtt_pkt *p)
{
	struct arena_mark mk = arena_mark(&app.perm);
	struct str dev, kind, id;
	int ack = 1;

	if (str_eqz(p->topic, f->sync_topic)) {
		if (str_eqz(p->payload, f->sync) && !f->synced)
			synced(f);
	} else if (topic_split(f, p->topic, &dev, &kind, &id) != 0) {
		;
	} else if (str_eqz(kind, "status") && id.p == p->topic.p +
	    p->topic.n) {
		if (f->cmd == F_WATCH)
			watch_print(f, "status", dev, id, p->payload);
		else
			on_status(f, dev, p->payload);
	} else if (str_eqz(kind, "events") && f->cmd == F_WATCH) {
		watch_print(f, "event", dev, id, p->payload);
	} else if (str_eqz(kind, "result") && id.n > 0) {
		ack = on_result(f, dev, id, p->payload);
	}
	if (f->cmd != F_WATCH && f->cmd != F_SEND)
		ack = 1;
	if (p->qos > 0 && ack)
		mqtt_ack(m, p->id);
	if (f->cmd == F_WATCH)
		arena_reset_to(&app.perm, mk);
}

/* What each command subscribes to, when the session is up. */
static void
subscribe(struct fleet *f, struct mqtt *m)
{
	const char *flt[4];
	unsigned n = 0;

	if (f->cmd == F_ANSWER) {
		publish_job(f);
		return;
	}
	flt[n++] = arena_printf(&app.perm, "%s/+/status", f->root);
	if (f->cmd != F_LIST)
		flt[n++] = arena_printf(&app.perm, "%s/+/result/+", f->root);
	if (f->cmd == F_WATCH)
		flt[n++] = arena_printf(&app.perm, "%s/+/events", f->root);
	else
		flt[n++] = f->sync_topic;
	if (mqtt_subscribe(m, flt, n) < 0) {
		log_err("fleet: cannot subscribe");
		finish(f, 4);
	}
}

static void
on_mqtt(void *arg, struct mqtt *m, enum mqtt_ev ev, const struct mqtt_pkt *p)
{
	struct fleet *f = arg;
	unsigned i;

	switch (ev) {
	case MQE_UP:
		f->ever_up = 1;
		if (m->ver == MQTT_V5)	/* a new connection resumes it */
			m->o.clean = 0;
		subscribe(f, m);
		if (f->cmd == F_SEND && f->synced && !f->pub_done)
			publish_job(f);
		break;
	case MQE_SUBACK:
		for (i = 0; i < p->nsub; i++)
			if (p->subcodes[i] >= 0x80) {
				log_err("fleet: the broker refused a "
				    "subscription under %s/ (code 0x%02x): "
				    "does its ACL let %s read it?", f->root,
				    p->subcodes[i], f->cid);
				finish(f, 4);
				return;
			}
		if (f->cmd != F_WATCH && !f->synced &&
		    mqtt_publish(m, f->sync_topic, f->sync, strlen(f->sync),
		    1, 0, 0) < 0)
			finish(f, 4);
		break;
	case MQE_MSG:
		on_msg(f, m, p);
		break;
	case MQE_ACKED:
		if (f->pub_id == 0 || p->id != (unsigned)f->pub_id)
			break;
		f->pub_id = 0;
		if (p->code >= 0x80) {
			log_err("fleet: the broker refused %s (code 0x%02x): "
			    "does its ACL let this user publish there?",
			    f->topic, p->code);
			finish(f, 4);
			break;
		}
		f->pub_done = 1;
		if (f->cmd == F_ANSWER || f->wait == 0 || f->got >= f->want)
			finish(f, f->failed ? EXIT_FAIL : f->want == 0 &&
			    f->wait > 0 && f->cmd == F_SEND ? 3 : EXIT_OK);
		break;
	case MQE_DOWN:
		if (f->ever_up && !f->closing)
			log_warn("fleet: lost the broker (%s): connecting "
			    "again", mqtt_why(m));
		f->pub_id = 0;
		break;
	}
}

/* The poll loop: until the command is done, a signal, or end (ms, 0
 * none). The link connects again by itself after a loss; only a broker
 * never reached ends it. */
static int
loop(struct fleet *f, long long end)
{
	struct pollfd pfd;
	long long now;
	unsigned grace;
	int to, n;

	while (f->rc < 0 && !fleet_stop) {
		now = net_now_ms();
		if (end > 0 && now >= end)
			return 3;
		to = mqtt_link_poll(&f->l, &pfd, now);
		if (to < 0 || to > 1000)
			to = 1000;
		if (end > 0 && end - now < to)
			to = (int)(end - now);
		n = poll(&pfd, pfd.fd >= 0 ? 1 : 0, to);
		if (n < 0 && errno != EINTR)
			return EXIT_FAIL;
		mqtt_link_run(&f->l, n > 0 ? pfd.revents : 0, net_now_ms());
		grace = f->l.m.fallback ? 1 : 0;	/* 5 refused: 3.1.1 */
		if (!f->ever_up && f->l.tries > grace) {
			log_err("fleet: %s: %s", f->l.lo.url, f->l.why[0] ?
			    f->l.why : mqtt_why(&f->l.m));
			return 4;
		}
	}
	return f->rc < 0 ? EXIT_OK : f->rc;
}

/* Connect to the configuration's broker: 0 or an exit status. */
static int
fleet_open(struct fleet *f, const struct cfg *c)
{
	static struct mqtt_opts o;
	struct mqtt_link_opts lo;
	unsigned char rnd[8];
	char why[256];
	int r;

	if (cfg_mqtt_opts(c, &o, &lo, why, sizeof(why)) != 0) {
		log_err("fleet: %s%s%s", why, c->file ? ": " : "",
		    c->file ? c->file : "");
		return EXIT_FAIL;
	}
	f->root = c->mqtt.root;
	f->cid = o.client_id;
	o.max_in = FLEET_MSG;
	if (f->cmd != F_WATCH) {	/* beside a watch: a session of its own */
		o.client_id = arena_printf(&app.perm, "%s-%ld", f->cid,
		    (long)getpid());
		o.clean = 1;
		o.expiry = 600;		/* for reconnects during the wait */
	}
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		memset(rnd, 0, sizeof(rnd));
	snprintf(f->sync, sizeof(f->sync), "%02x%02x%02x%02x%02x%02x%02x%02x",
	    rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
	snprintf(f->sync_topic, sizeof(f->sync_topic), "%s/%s/sync", f->root,
	    o.client_id);
	lo.backoff_min_ms = 250;	/* a person waits: try again soon */
	lo.backoff_max_ms = 5000;
	r = mqtt_link_init(&f->l, &app.perm, &lo, &o, on_mqtt, f, why,
	    sizeof(why));
	if (r == -E_NOMEM)
		return cmd_nomem("the broker's certificates");
	if (r != 0) {
		log_err("fleet: %s", why);
		return EXIT_FAIL;
	}
	return 0;
}

/* The job as POST /api/v1/jobs takes it, with its fleet id. */
static int
job_json(struct fleet *f, const char *to, const char *prompt)
{
	struct json_writer w;
	struct sbuf sb;
	char title[81];
	size_t n = strcspn(prompt, "\n");

	if (n > sizeof(title) - 1)
		n = sizeof(title) - 1;
	while (n > 0 && (prompt[n] & 0xc0) == 0x80)	/* whole UTF-8 */
		n--;
	memcpy(title, prompt, n);
	title[n] = '\0';
	sbuf_init(&sb, &app.perm, FLEET_MSG);
	json_writer_init(&w, &sb);
	json_begin_obj(&w);
	json_kstr(&w, "id", f->job_id);
	json_kstr(&w, "title", n ? title : "job");
	json_kstr(&w, "input", prompt);
	if (to != NULL)
		json_kstr(&w, "to", to);
	json_end_obj(&w);
	if (json_writer_err(&w) != 0) {
		log_err("fleet: the prompt is too long (at most %u bytes)",
		    FLEET_MSG / 2);
		return EXIT_FAIL;
	}
	f->msg = sb.p;
	f->msg_n = sb.len;
	return 0;
}

static const struct option fleet_lo[] = {
	{ "group", required_argument, NULL, 'g' },
	{ "device", required_argument, NULL, 'D' },
	{ "queue", required_argument, NULL, 'Q' },
	{ "to", required_argument, NULL, 't' },
	{ "id", required_argument, NULL, 'i' },
	{ "wait", required_argument, NULL, 'w' },
	{ "json", no_argument, NULL, 'j' },
	{ "approve", no_argument, NULL, 'a' },
	{ "deny", no_argument, NULL, 'n' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* The command line of send and answer, before the configuration: 0 or
 * EXIT_USAGE (said). */
static int
args_check(struct fleet *f, const char *queue, int decide, const char *arg)
{
	if (f->cmd == F_ANSWER) {
		if (!name_ok(f->job_id, 1))
			return cmd_usage("fleet", "answer: the job's id first");
		if (f->device == NULL || !name_ok(f->device, 0))
			return cmd_usage("fleet", "answer: --device D names "
			    "the device");
		if (decide == 1 && arg != NULL)
			return cmd_usage("fleet", "answer: --approve takes no "
			    "text");
		return 0;
	}
	if ((f->group != NULL) + (f->device != NULL) + (queue != NULL) != 1)
		return cmd_usage("fleet", "send: one of --group, --device, "
		    "--queue");
	if (!name_ok(f->group ? f->group : f->device ? f->device : queue, 0))
		return cmd_usage("fleet", "a name is 1 to 64 of A-Z a-z 0-9 "
		    "_ -");
	if (f->job_id != NULL && !name_ok(f->job_id, 1))
		return cmd_usage("fleet", "--id: 1 to 64 of A-Z a-z 0-9 _ . -");
	return 0;
}

/* The topic and message of send: 0 or an exit status. */
static int
send_setup(struct fleet *f, const char *queue, const char *to,
    const char *prompt)
{
	static char id[40];
	unsigned char rnd[4];

	if (f->job_id == NULL) {
		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			memset(rnd, 0, sizeof(rnd));
		snprintf(id, sizeof(id), "%llx-%02x%02x%02x%02x",
		    (unsigned long long)time(NULL), rnd[0], rnd[1], rnd[2],
		    rnd[3]);
		f->job_id = id;
	}
	if (f->group != NULL)
		f->topic = arena_printf(&app.perm, "%s/group/%s/jobs", f->root,
		    f->group);
	else if (f->device != NULL)
		f->topic = arena_printf(&app.perm, "%s/%s/jobs", f->root,
		    f->device);
	else
		f->topic = arena_printf(&app.perm, "%s/queue/%s", f->root,
		    queue);
	return job_json(f, to, prompt);
}

/* The message of answer: the text, or the decision as JSON. */
static int
answer_setup(struct fleet *f, int decide, const char *arg)
{
	struct json_writer w;
	struct sbuf sb;
	int r;

	f->topic = arena_printf(&app.perm, "%s/%s/answer/%s", f->root,
	    f->device, f->job_id);
	if (decide < 0) {
		if ((r = cmd_read_text("fleet", arg, &sb)) != 0)
			return r;
		f->msg = sb.p;
		f->msg_n = sb.len;
		return 0;
	}
	sbuf_init(&sb, &app.perm, 8192);
	json_writer_init(&w, &sb);
	json_begin_obj(&w);
	json_key(&w, "approve");
	json_put_bool(&w, decide);
	if (arg != NULL)
		json_kstr(&w, "reason", arg);
	json_end_obj(&w);
	if (json_writer_err(&w) != 0)
		return cmd_usage("fleet", "answer: the reason is too long");
	f->msg = sb.p;
	f->msg_n = sb.len;
	return 0;
}

int
cmd_fleet(int argc, char **argv)
{
	static struct fleet f;
	const char *sub, *queue = NULL, *to = NULL;
	struct sigaction sa;
	struct cfg *c;
	char *e;
	int ch, r, decide = -1;

	memset(&f, 0, sizeof(f));
	f.rc = -1;
	f.wait = 300;
	optind = 0;
	while ((ch = getopt_long(argc, argv, "+h", fleet_lo, NULL)) != -1 &&
	    ch == 'h')
		return cmd_help("fleet");
	if (optind >= argc)
		return cmd_usage("fleet", "send, list, watch or answer");
	sub = argv[optind];
	if (strcmp(sub, "send") == 0)
		f.cmd = F_SEND;
	else if (strcmp(sub, "list") == 0)
		f.cmd = F_LIST;
	else if (strcmp(sub, "watch") == 0)
		f.cmd = F_WATCH;
	else if (strcmp(sub, "answer") == 0)
		f.cmd = F_ANSWER;
	else
		return cmd_usage("fleet", "%s: not send, list, watch or answer",
		    sub);
	argc -= optind;
	argv += optind;
	optind = 0;
	while ((ch = getopt_long(argc, argv, "h", fleet_lo, NULL)) != -1) {
		switch (ch) {
		case 'g': f.group = optarg; break;
		case 'D': f.device = optarg; break;
		case 'Q': queue = optarg; break;
		case 't': to = optarg; break;
		case 'i': f.job_id = optarg; break;
		case 'j': f.json = 1; break;
		case 'a': decide = 1; break;
		case 'n': decide = 0; break;
		case 'w':
			f.wait = strtol(optarg, &e, 10);
			if (*optarg == '\0' || *e != '\0' || f.wait < 0 ||
			    f.wait > 86400)
				return cmd_usage("fleet", "--wait: seconds, "
				    "0 to 86400");
			break;
		case 'h': return cmd_help("fleet");
		default: return cmd_usage("fleet", "bad option");
		}
	}
	argc -= optind;
	argv += optind;
	if (f.cmd == F_SEND && argc != 1)
		return cmd_usage("fleet", "send: the prompt, quoted, once");
	if ((f.cmd == F_LIST || f.cmd == F_WATCH) && argc != 0)
		return cmd_usage("fleet", "%s takes no operand", sub);
	if (f.cmd == F_ANSWER && (argc < 1 || argc > 2))
		return cmd_usage("fleet", "answer ID --device D (TEXT | "
		    "--approve | --deny [WHY])");
	if (f.cmd != F_SEND && (queue != NULL || to != NULL ||
	    (f.group != NULL) || (f.job_id != NULL && f.cmd != F_ANSWER)))
		return cmd_usage("fleet", "%s: option of send", sub);
	if (f.cmd != F_ANSWER && (decide >= 0 || (f.device != NULL &&
	    f.cmd != F_SEND)))
		return cmd_usage("fleet", "%s: option of answer", sub);
	if (f.cmd == F_ANSWER)
		f.job_id = argv[0];
	if ((f.cmd == F_SEND || f.cmd == F_ANSWER) && (r = args_check(&f,
	    queue, decide, argc > 1 ? argv[1] : NULL)) != 0)
		return r;
	if ((r = cmd_cfg_load(&c)) != 0 || (r = fleet_open(&f, c)) != 0)
		return r;
	if (f.cmd == F_SEND && (r = send_setup(&f, queue, to, argv[0])) != 0)
		return r;
	if (f.cmd == F_ANSWER && (r = answer_setup(&f, decide, argc > 1 ?
	    argv[1] : NULL)) != 0)
		return r;
	if (f.cmd == F_SEND || f.cmd == F_LIST) {
		f.devs = arena_zalloc(&app.perm, FLEET_DEVS * sizeof(*f.devs));
		if (f.devs == NULL)
			return cmd_nomem("the devices");
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	r = loop(&f, f.cmd == F_WATCH ? 0 : net_now_ms() + 1000LL *
	    (f.cmd == F_SEND && f.wait > 0 ? f.wait : 30));
	if (fleet_stop && f.cmd != F_WATCH && f.rc < 0) {
		log_err("fleet: stopped by a signal%s", f.pub_done ? "" :
		    " before the broker had the message");
		r = 3;
	} else if (r == 3 && (f.cmd == F_LIST || !f.pub_done)) {
		log_err("fleet: the broker did not take %s in time",
		    f.cmd == F_LIST ? "the subscription" : "the message");
		r = 4;
	} else if (r == 3 && f.cmd == F_SEND && f.want > 0) {
		log_err("fleet: waited %ld s: %u of %u results", f.wait,
		    f.got, f.want);
	}
	f.closing = 1;
	mqtt_link_close(&f.l, 1000);
	return r;
}
