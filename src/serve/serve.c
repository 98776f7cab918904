/* serve.c - the server's setup: the listening socket, the tokens, the
 * configuration (reloaded on SIGHUP), each worker's memory slice, and the
 * loop with the job board's dispatcher and the flash sync. */
#include "serve/serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "serve/serve_int.h"
#include "base/log.h"
#include "config.h"
#include "net/net.h"
#include "serve/jobs.h"
#include "serve/persist.h"

volatile sig_atomic_t got_term, got_hup;

static void
on_signal(int sig)
{
	if (sig == SIGTERM || sig == SIGINT)
		got_term = 1;
	else
		got_hup = 1;
}

/* --- setup */

static int
parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *sl)
{
	struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
	char host[64];
	const char *colon;
	char *end;
	unsigned long port;
	size_t hl;

	memset(ss, 0, sizeof(*ss));
	if (spec[0] == '[') {
		if ((colon = strstr(spec, "]:")) == NULL)
			return -E_INVAL;
		hl = (size_t)(colon - spec - 1);
		colon++;
		memcpy(host, spec + 1, MIN(hl, sizeof(host) - 1));
	} else if ((colon = strrchr(spec, ':')) != NULL) {
		hl = (size_t)(colon - spec);
		memcpy(host, spec, MIN(hl, sizeof(host) - 1));
	} else {
		colon = spec - 1;
		hl = 0;
		memcpy(host, "127.0.0.1", 10);
		hl = 9;
	}
	if (hl >= sizeof(host))
		return -E_INVAL;
	host[hl] = '\0';
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno != 0 || end == colon + 1 || *end != '\0' || port > 65535)
		return -E_INVAL;
	if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons((unsigned short)port);
		*sl = sizeof(*v4);
	} else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((unsigned short)port);
		*sl = sizeof(*v6);
	} else
		return -E_INVAL;
	return 0;
}

static int
is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.
		    s_addr) >> 24) == 127;
	return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)ss)->
	    sin6_addr);
}

/* The tokens of the configuration into the server. Two tokens whose
 * hashes start alike would share sessions: refused. */
static int
take_tokens(struct srv *s)
{
	unsigned i, k;
	const char *t;

	s->ntok = s->cfg->serve.ntokens;
	for (i = 0; i < s->ntok; i++) {
		t = s->cfg->serve.tokens[i];
		for (k = 0; k < 32; k++)
			s->hash[i][k] = (unsigned char)(str_hex_val(t[2 * k]) << 4 |
			    str_hex_val(t[2 * k + 1]));
		for (k = 0; k < TAG_LEN; k++)
			s->tag[i][k] = (char)((t[k] | 0x20));
		s->tag[i][TAG_LEN] = '\0';
		s->only[i] = t[64] == ' ' ? t + 65 : NULL;
		for (k = 0; k < i; k++)
			if (strcmp(s->tag[k], s->tag[i]) == 0) {
				log_err("serve.tokens: two tokens' hashes start "
				    "with %s: they would share sessions; make "
				    "a new token", s->tag[i]);
				return -E_INVAL;
			}
	}
	return 0;
}

static int
same_path(const char *a, const char *b)
{
	return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static int
load_cfg(struct srv *s, int first)
{
	struct arena *a = &s->cfga[s->cur ^ 1];
	struct cfg *c, *prev;
	char why[320];
	int e;

	arena_reset(a);
	if ((c = arena_zalloc(a, sizeof(*c))) == NULL)
		return s->o->nomem("loading the configuration");
	if ((e = cfg_load(c, a, s->o->config, why, sizeof(why))) != 0) {
		if (e == -E_NOMEM)
			return s->o->nomem("loading the configuration");
		log_err("%s%s", why, first ? "" : " (kept the old one)");
		return SERVE_FAIL;
	}
	if (!first) {
		prev = s->cfg;
		if (c->serve.max_conns != prev->serve.max_conns ||
		    strcmp(c->serve.listen, prev->serve.listen) != 0 ||
		    !same_path(c->serve.tls_cert, prev->serve.tls_cert) ||
		    !same_path(c->serve.tls_key, prev->serve.tls_key))
			log_warn("serve.listen, serve.max_connections, "
			    "serve.tls_cert and serve.tls_key take a restart");
		if (!same_path(c->mqtt.broker, prev->mqtt.broker) ||
		    !same_path(c->mqtt.client_id, prev->mqtt.client_id) ||
		    !same_path(c->mqtt.prefix, prev->mqtt.prefix))
			log_warn("mqtt: the fleet's broker, client id and "
			    "topics take a restart");
		c->serve.listen = prev->serve.listen;
		c->serve.max_conns = prev->serve.max_conns;
		c->serve.tls_cert = prev->serve.tls_cert;
		c->serve.tls_key = prev->serve.tls_key;
	}
	prev = s->cfg;
	s->cfg = c;
	if (take_tokens(s) != 0) {
		s->cfg = prev;
		if (!first)
			(void)take_tokens(s);
		return SERVE_FAIL;
	}
	s->cur ^= 1;
	return 0;
}

/* Each worker's memory: serve.turn_memory, else what the server leaves
 * shared by max_turns; the server keeps a quarter (at least 256 KiB). */
static int
budget_slices(struct srv *s)
{
	size_t total = mem_budget(), used = mem_used();
	size_t keep = MAX(total / 4, (size_t)256 << 10);
	unsigned nt = s->cfg->serve.max_turns;

	if (s->cfg->serve.turn_memory != 0)
		s->slice = s->cfg->serve.turn_memory;
	else
		s->slice = total > used + keep ? (total - used - keep) / nt : 0;
	if (s->slice < MEM_MIN || used + keep + s->slice * nt > total) {
		log_err("memory budget of %zu KiB too small for %u turns of "
		    "%zu KiB and the server (%zu KiB): raise memory, or lower "
		    "serve.max_turns or serve.turn_memory", total >> 10, nt,
		    s->slice >> 10, (used + keep) >> 10);
		return SERVE_FAIL;
	}
	if (HAVE_SERVE_TLS && s->cred != NULL) {
		/* each HTTPS connection has its buffers */
		size_t room = (total - used - s->slice * nt) / tls_srv_size();

		if (room < s->cfg->serve.max_conns)
			log_warn("HTTPS: the server's %zu KiB hold %zu of the "
			    "%u serve.max_connections (%zu KiB each); more are "
			    "closed at once: raise memory or lower "
			    "serve.max_connections", (total - used - s->slice *
			    nt) >> 10, room, s->cfg->serve.max_conns,
			    tls_srv_size() >> 10);
	}
	return 0;
}

/* The job board's dispatcher: every jobs.every seconds, jobs_run_due in
 * a child of its own (due schedules become jobs, dead runs are reclaimed,
 * ready jobs run, each in a worker it forks), so that the loop goes on,
 * one at a time, and none once the server is stopping. The child's exit
 * status is that of `skillbox jobs run-due`. */
static void
jobs_tick(struct srv *s, pid_t *pid, long long *next)
{
	int wst, n;

	if (*pid > 0 && waitpid(*pid, &wst, WNOHANG) == *pid) {
		if (!WIFEXITED(wst) || WEXITSTATUS(wst) != 0)
			log_warn("jobs run-due ended with %s %d", WIFEXITED(wst) ?
			    "status" : "signal", WIFEXITED(wst) ?
			    WEXITSTATUS(wst) : WTERMSIG(wst));
		*pid = 0;
	}
	/* A job the fleet took runs at once, even with every 0. */
	if (*pid > 0 || got_term || (!s->jnow && (s->cfg->jobs.every_s == 0 ||
	    time(NULL) < *next)))
		return;
	s->jnow = 0;
	*next = time(NULL) + s->cfg->jobs.every_s;
	if ((*pid = fork()) < 0) {
		log_warn("jobs run-due: fork: %s", strerror(errno));
		*pid = 0;
	}
	if (*pid != 0)
		return;
	worker_detach(s);
	if ((n = jobs_run_due(s->perm, s->cfg, NULL, 0)) == -E_NOMEM)
		_exit(s->o->nomem("running the due jobs"));
	_exit(n < 0 ? SERVE_FAIL : SERVE_OK);
}

/* see serve.h */
int
serve_main(struct arena *perm, const struct serve_opts *o)
{
	struct sockaddr_storage ss;
	struct sigaction sa;
	struct srv s;
	socklen_t sl;
	char why[320];
	int c, one = 1, r;
	long long psync = 0, jnext;
	pid_t jpid = 0;

	memset(&s, 0, sizeof(s));
	s.perm = perm;
	s.o = o;
	arena_init(&s.cfga[0], "config");
	arena_init(&s.cfga[1], "config");
	s.lfd = -1;
	if ((r = load_cfg(&s, 1)) != 0)
		return r;
	if (o->listen != NULL)
		s.cfg->serve.listen = o->listen;
	if (parse_listen(s.cfg->serve.listen, &ss, &sl) != 0)
		return o->usage("serve", "listen on HOST:PORT or [V6]:PORT, "
		    "not '%s'", s.cfg->serve.listen);
	if (s.ntok == 0 && !is_loopback(&ss)) {
		log_err("serve.listen %s is not a loopback address and no "
		    "serve.tokens are set: refusing to serve without a token "
		    "(add one: skillbox serve --hash-token TOKEN)",
		    s.cfg->serve.listen);
		return SERVE_FAIL;
	}
	if ((s.cfg->serve.tls_cert == NULL) != (s.cfg->serve.tls_key ==
	    NULL)) {
		log_err("serve.tls_cert and serve.tls_key go together: set "
		    "both for HTTPS, or neither");
		return SERVE_FAIL;
	}
	if (s.cfg->serve.tls_cert != NULL && !HAVE_SERVE_TLS) {
		log_err("serve.tls_cert: built without HTTPS (SERVE_TLS=0): "
		    "use a TLS proxy");
		return SERVE_FAIL;
	}
	if (HAVE_SERVE_TLS && s.cfg->serve.tls_cert != NULL &&
	    tls_cred_load(perm, s.cfg->serve.tls_cert,
	    s.cfg->serve.tls_key, &s.cred, why, sizeof(why)) != 0) {
		log_err("%s", why);
		return SERVE_FAIL;
	}
	/* The trust anchors once, for every worker. */
	if (strcmp(s.cfg->provider, "offline") != 0 && s.cfg->base_url !=
	    NULL && strncmp(s.cfg->base_url, "https:", 6) == 0 &&
	    llm_preload_anchors(perm, s.cfg->ca_file, why,
	    sizeof(why)) != 0) {
		log_err("%s", why);
		return SERVE_FAIL;
	}
	s.nc = s.cfg->serve.max_conns;
	s.c = arena_zalloc(perm, s.nc * sizeof(*s.c));
	/* each connection's socket and source, the listener, the broker */
	s.pfd = arena_zalloc(perm, (2 * s.nc + 2) * sizeof(*s.pfd));
	s.pc = arena_zalloc(perm, (2 * s.nc + 2) * sizeof(*s.pc));
	if (s.c == NULL || s.pfd == NULL || s.pc == NULL)
		return o->nomem("setting up the connections");
	for (c = 0; c < (int)s.nc; c++)
		s.c[c].fd = s.c[c].src = -1;
	if ((r = budget_slices(&s)) != 0)
		return r;
	s.lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0);
	if (s.lfd < 0 || setsockopt(s.lfd, SOL_SOCKET, SO_REUSEADDR, &one,
	    sizeof(one)) != 0 || bind(s.lfd, (struct sockaddr *)&ss, sl) != 0 ||
	    listen(s.lfd, 64) != 0) {
		log_err("cannot listen on %s: %s", s.cfg->serve.listen,
		    strerror(errno));
		return SERVE_FAIL;
	}
	sl = sizeof(ss);
	getsockname(s.lfd, (struct sockaddr *)&ss, &sl);
	s.port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->
	    sin_port : ((struct sockaddr_in6 *)&ss)->sin6_port);
	if (o->port_file != NULL) {
		FILE *f = fopen(o->port_file, "w");

		if (f == NULL || fprintf(f, "%u\n", s.port) < 0 ||
		    fclose(f) != 0) {
			log_err("%s: %s", o->port_file, strerror(errno));
			return SERVE_FAIL;
		}
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	s.started = time(NULL);
	jnext = s.started;
	if (HAVE_FLEET && s.cfg->mqtt.broker != NULL &&
	    (r = fleet_start(&s)) != 0)
		return r;
	if (HAVE_PERSIST) {	/* the first start after a boot */
		persist_run(s.cfg, perm, 0);
		psync = s.started + s.cfg->persist.interval;
	}
	log_info("serving on port %u (%s; %u turns at once, %zu KiB each; "
	    "%s)", s.port, s.cfg->serve.listen, s.cfg->serve.max_turns,
	    s.slice >> 10, s.ntok ? "tokens required" : "no tokens: "
	    "loopback only");
	if (HAVE_SERVE_TLS && s.cred != NULL)
		fprintf(stderr, "skillbox: listening on %s port %u (HTTPS, %s "
		    "key)\n", s.cfg->serve.listen, s.port,
		    tls_cred_kind(s.cred));
	else
		fprintf(stderr, "skillbox: listening on %s port %u\n",
		    s.cfg->serve.listen, s.port);
	for (;;) {
		if (got_hup) {
			got_hup = 0;
			if (load_cfg(&s, 0) == 0)
				fprintf(stderr, "skillbox: configuration "
				    "reloaded\n");
		}
		if (got_term && s.lfd >= 0) {
			close(s.lfd);
			s.lfd = -1;
			fprintf(stderr, "skillbox: stopping: %u turns to "
			    "finish\n", s.turns + s.queued);
		}
		if (got_term) {
			unsigned i, busy = 0;

			for (i = 0; i < s.nc; i++) {
				struct conn *k = &s.c[i];

				if (k->st == C_RELAY || k->st == C_QUEUED ||
				    (k->st == C_WRITE && !k->gone))
					busy++;
				else if (k->st == C_HEAD && k->in_len == 0 &&
				    k->h.nlines == 0)
					httpd_close(&s, k);
			}
			if (busy == 0)
				break;
		}
		if (HAVE_JOBS) {
			jobs_tick(&s, &jpid, &jnext);
			jobs_api_streams(&s);
		}
		/* to flash, only what changed */
		if (HAVE_PERSIST && time(NULL) >= psync) {
			persist_run(s.cfg, perm, 1);
			psync = time(NULL) + s.cfg->persist.interval;
		}
		httpd_step(&s);
	}
	if (HAVE_FLEET && s.fleet != NULL)
		fleet_stop(s.fleet);
	if (HAVE_PERSIST)
		persist_run(s.cfg, perm, 1);
	fprintf(stderr, "skillbox: stopped\n");
	return SERVE_OK;
}
