/* mqtt_link.c - an MQTT session over a socket: mqtt:// or mqtts://,
 * non-blocking, driven by the caller's poll(), connecting again after a
 * loss with backoff and jitter so that a fleet does not come back all at
 * once after its broker restarts. */
#include "net/mqtt.h"

#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/net.h"
#include "net/tls.h"

enum { PH_IDLE, PH_CONNECT, PH_UP };

#define LINK_CONNECT_MS	10000
#define LINK_MIN_MS	1000
#define LINK_MAX_MS	60000
/* A session that lasted this long resets the backoff. One that ends
 * sooner does not: two devices given the same client id, which the
 * broker lets only one of at a time, then take the session from each
 * other ever more slowly instead of every second. */
#define LINK_STABLE_MS	30000

/* see mqtt.h */
int
mqtt_url_parse(const char *url, struct mqtt_url *u)
{
	const char *h, *e;
	unsigned long port = 0;
	size_t n;

	memset(u, 0, sizeof(*u));
	if (strncmp(url, "mqtt://", 7) == 0)
		h = url + 7;
	else if (strncmp(url, "mqtts://", 8) == 0)
		h = url + 8, u->tls = 1;
	else
		return -E_INVAL;
	if (*h == '[') {
		if ((e = strchr(++h, ']')) == NULL)
			return -E_INVAL;
		n = e++ - h;
	} else
		n = (e = h + strcspn(h, ":")) - h;
	if (n == 0 || n >= sizeof(u->host) || strcspn(h, "/@?# []") < n)
		return -E_INVAL;
	memcpy(u->host, h, n);
	if (*e == ':') {
		if (e[1] == '\0')
			return -E_INVAL;
		for (e++; *e >= '0' && *e <= '9' && port <= 65535; e++)
			port = port * 10 + (*e - '0');
		if (port == 0 || port > 65535)
			return -E_INVAL;
	}
	if (*e != '\0')
		return -E_INVAL;
	u->port = port ? port : u->tls ? MQTT_TLS_PORT : MQTT_PORT;
	return 0;
}

/* The session's events reach the user; a session that came up is
 * remembered (see fail). */
static void
link_ev(void *arg, struct mqtt *m, enum mqtt_ev ev, const struct mqtt_pkt *p)
{
	struct mqtt_link *l = arg;

	if (ev == MQE_UP) {
		l->tries = 0;
		l->up_at = m->last_in;
	}
	l->fn(l->arg, m, ev, p);
}

static int
cfg_err(char *why, size_t wn, int e, const char *fmt, const char *arg)
{
	snprintf(why, wn, fmt, arg);
	return e;
}

/* The CA and the client certificate, for mqtts. */
static int
tls_setup(struct mqtt_link *l, struct arena *a, char *why, size_t wn)
{
	const char *ca = l->lo.ca ? l->lo.ca : tls_default_ca();
	int e;

	if (ca == NULL)
		return cfg_err(why, wn, -E_NOENT, "mqtt: no CA bundle found%s: "
		    "set mqtt.ca", "");
	if ((e = tls_anchors_load(a, ca, &l->ta, NULL)) != 0)
		return cfg_err(why, wn, e, e == -E_NOENT ? "mqtt.ca %s: no "
		    "such file or folder" : e == -E_PARSE ? "mqtt.ca %s: no "
		    "certificate in it" : "mqtt.ca %s: cannot load it", ca);
	if (l->lo.cert != NULL && (e = tls_cred_load_as(a, l->lo.cert,
	    l->lo.key, "mqtt.cert", "mqtt.key", &l->cred, why, wn)) != 0)
		return e;
	if ((l->tls = arena_alloc(a, tls_cli_size())) == NULL)
		return cfg_err(why, wn, -E_NOMEM, "mqtt: out of memory%s", "");
	return 0;
}

/* see mqtt.h */
int
mqtt_link_init(struct mqtt_link *l, struct arena *a,
    const struct mqtt_link_opts *lo, const struct mqtt_opts *o,
    mqtt_fn *fn, void *arg, char *why, size_t wn)
{
	unsigned seed = 0;
	int e;

	memset(l, 0, sizeof(*l));
	l->fd = -1;
	l->lo = *lo;
	l->fn = fn;
	l->arg = arg;
	if (l->lo.connect_ms == 0)
		l->lo.connect_ms = LINK_CONNECT_MS;
	if (l->lo.backoff_min_ms == 0)
		l->lo.backoff_min_ms = LINK_MIN_MS;
	if (l->lo.backoff_max_ms < l->lo.backoff_min_ms)
		l->lo.backoff_max_ms = MAX(LINK_MAX_MS, l->lo.backoff_min_ms);
	if (lo->url == NULL || mqtt_url_parse(lo->url, &l->u) != 0)
		return cfg_err(why, wn, -E_INVAL, "mqtt.broker %s: not "
		    "mqtt://HOST[:PORT] or mqtts://HOST[:PORT]",
		    lo->url ? lo->url : "(none)");
	if ((lo->cert == NULL) != (lo->key == NULL))
		return cfg_err(why, wn, -E_INVAL, "mqtt.cert and mqtt.key go "
		    "together%s", "");
	if (lo->cert != NULL && !l->u.tls)
		return cfg_err(why, wn, -E_INVAL, "mqtt.cert needs an "
		    "mqtts:// broker, not %s", lo->url);
	if (l->u.tls && (e = tls_setup(l, a, why, wn)) != 0)
		return e;
	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
		seed = (unsigned)getpid() * 2654435761u;
	l->rnd = seed | 1;
	mqtt_init(&l->m, o, link_ev, l);
	return 0;
}

static void
drop_addrs(struct mqtt_link *l)
{
	if (l->ai != NULL)
		freeaddrinfo(l->ai);
	l->ai = l->ai_cur = l->ai_try = NULL;
}

static void
close_fd(struct mqtt_link *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	l->phase = PH_IDLE;
	drop_addrs(l);
}

/* xorshift: jitter needs no more */
static unsigned
rnd(struct mqtt_link *l)
{
	l->rnd ^= l->rnd << 13;
	l->rnd ^= l->rnd >> 17;
	l->rnd ^= l->rnd << 5;
	return l->rnd;
}

/* A try failed or a session ended: close, and the next try is due after
 * a delay drawn from [backoff/2, backoff], backoff doubling from twice
 * the minimum up to the maximum; after a session of LINK_STABLE_MS or
 * more it starts again from twice the minimum. */
static void
fail(struct mqtt_link *l, long long now, const char *what, const char *why)
{
	unsigned lo = l->lo.backoff_min_ms, hi = l->lo.backoff_max_ms;

	snprintf(l->why, sizeof(l->why), "%s:%u: %s%s%s", l->u.host,
	    l->u.port, what, why ? ": " : "", why ? why : "");
	if (l->tls != NULL && l->phase == PH_UP)
		tls_cli_close(l->tls, l->fd);
	close_fd(l);
	mqtt_lost(&l->m, -E_IO, why ? why : what);
	if (l->up_at != 0 && now - l->up_at >= LINK_STABLE_MS)
		l->backoff = 0;
	l->up_at = 0;
	l->backoff = l->backoff == 0 ? MIN(2 * lo, hi) :
	    (unsigned)MIN(2ull * l->backoff, hi);
	l->tries++;
	l->retry_at = now + l->backoff / 2 + rnd(l) % (l->backoff / 2 + 1);
	if (l->retry_at < now + lo)
		l->retry_at = now + lo;
}

/* TCP is up: TLS, if any, and CONNECT. */
static void
connected(struct mqtt_link *l, long long now)
{
	int one = 1;

	drop_addrs(l);
	setsockopt(l->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	l->phase = PH_UP;
	if (l->tls != NULL && tls_cli_start(l->tls, l->ta, l->u.host,
	    l->cred) != 0) {
		fail(l, now, "TLS", tls_cli_why(l->tls));
		return;
	}
	mqtt_begin(&l->m, now);
	l->due = now;
}

/* Connect to the next address of the try; the last one's failure fails
 * the try. */
static void
next_addr(struct mqtt_link *l, long long now)
{
	struct addrinfo *ai;
	int err = ECONNREFUSED;

	while ((ai = l->ai_cur) != NULL) {
		l->ai_cur = ai->ai_next;
		l->ai_try = ai;
		l->fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, 0);
		if (l->fd < 0) {
			err = errno;
			continue;
		}
		if (connect(l->fd, ai->ai_addr, ai->ai_addrlen) == 0) {
			connected(l, now);
			return;
		}
		if (errno == EINPROGRESS) {
			l->phase = PH_CONNECT;
			return;
		}
		err = errno;
		close(l->fd);
		l->fd = -1;
	}
	fail(l, now, "cannot connect", strerror(err));
}

/* A try: the name lookup (it blocks), then the addresses in turn. */
static void
try_connect(struct mqtt_link *l, long long now)
{
	struct addrinfo hints;
	char port[8];
	int e;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(port, sizeof(port), "%u", l->u.port);
	l->phase_end = now + l->lo.connect_ms;
	if ((e = getaddrinfo(l->u.host, port, &hints, &l->ai)) != 0) {
		l->ai = NULL;
		fail(l, now, "cannot resolve the name", gai_strerror(e));
		return;
	}
	l->ai_cur = l->ai;
	next_addr(l, now);
}

/* What ended: the TLS handshake (a broker that wants a client
 * certificate hangs up in it), or the connection. */
static const char *
lost(const struct mqtt_link *l)
{
	return l->tls != NULL && !tls_cli_ready(l->tls) ?
	    "TLS handshake failed" : "connection lost";
}

/* Why, in TLS's words when it has some. A broker that refuses our
 * certificate sends an alert and hangs up while our handshake is still
 * going out, so a write may fail first with the alert still waiting to
 * be read, or lost to the reset. Unless we refused the broker's
 * certificate ourselves, say what a refusal in the handshake most likely
 * was about: our certificate, or the lack of one. */
static const char *
lost_why(struct mqtt_link *l, const char *sys, char *buf, size_t n)
{
	const char *w;
	char b[64];

	if (l->tls == NULL || tls_cli_ready(l->tls))
		return l->tls && tls_cli_why(l->tls) ? tls_cli_why(l->tls) :
		    sys;
	if (tls_cli_why(l->tls) == NULL)
		(void)tls_cli_read(l->tls, l->fd, b, sizeof(b));
	if ((w = tls_cli_why(l->tls)) == NULL)
		w = sys;
	if (strncmp(w, "certificate ", 12) == 0)
		return w;
	snprintf(buf, n, "%s (did the broker %s mqtt.cert?)", w,
	    l->cred == NULL ? "want" : "refuse");
	return buf;
}

/* Bytes from the socket into the session; 0, or -1 when it ended. */
static int
link_read(struct mqtt_link *l, long long now)
{
	char buf[4096], hint[128];
	long r;
	int i;

	for (i = 0; i < 16; i++) {
		errno = 0;	/* 0 after recv: the broker closed it */
		if (l->tls != NULL)
			r = tls_cli_read(l->tls, l->fd, buf, sizeof(buf));
		else if ((r = recv(l->fd, buf, sizeof(buf), MSG_DONTWAIT)) < 0)
			r = errno == EAGAIN || errno == EWOULDBLOCK ||
			    errno == EINTR ? 0 : -1;
		else if (r == 0)
			r = -1;
		if (r == 0)
			return 0;
		if (r < 0) {
			fail(l, now, lost(l), lost_why(l, errno ?
			    strerror(errno) : "closed by the broker", hint,
			    sizeof(hint)));
			return -1;
		}
		if (mqtt_feed(&l->m, buf, (size_t)r, now) < 0) {
			fail(l, now, "session ended", mqtt_why(&l->m));
			return -1;
		}
	}
	return 0;
}

/* The session's bytes to the socket; 0, or -1 when it ended. */
static int
link_write(struct mqtt_link *l, long long now)
{
	char hint[128];
	const void *p;
	size_t n;
	long w;

	while ((n = mqtt_out(&l->m, &p)) > 0) {
		if (l->tls != NULL)
			w = tls_cli_write(l->tls, l->fd, p, n);
		else if ((w = send(l->fd, p, n, MSG_DONTWAIT |
		    MSG_NOSIGNAL)) < 0)
			w = errno == EAGAIN || errno == EWOULDBLOCK ||
			    errno == EINTR ? 0 : -1;
		if (w < 0) {
			fail(l, now, lost(l), lost_why(l, strerror(errno),
			    hint, sizeof(hint)));
			return -1;
		}
		if (w == 0)
			break;
		mqtt_sent(&l->m, (size_t)w);
	}
	if (l->tls != NULL && tls_cli_unsent(l->tls))	/* records to flush */
		(void)tls_cli_write(l->tls, l->fd, "", 0);
	return 0;
}

/* see mqtt.h */
int
mqtt_link_poll(struct mqtt_link *l, struct pollfd *pfd, long long now_ms)
{
	long long until = l->retry_at;
	const void *p;

	pfd->fd = l->fd;
	pfd->events = pfd->revents = 0;
	if (l->phase == PH_CONNECT) {
		pfd->events = POLLOUT;
		until = l->phase_end;
	} else if (l->phase == PH_UP) {
		pfd->events = POLLIN;
		if (l->tls != NULL ? tls_cli_unsent(l->tls) ||
		    (tls_cli_ready(l->tls) && mqtt_out(&l->m, &p) > 0) :
		    mqtt_out(&l->m, &p) > 0)
			pfd->events |= POLLOUT;
		if (l->tls != NULL && tls_cli_pending(l->tls))
			return 0;
		until = l->due;
		if (l->m.st != MQS_UP && l->phase_end < until)
			until = l->phase_end;
	}
	if (until == LLONG_MAX)
		return -1;
	return until <= now_ms ? 0 : until - now_ms > INT_MAX ? INT_MAX :
	    (int)(until - now_ms);
}

/* The connection completed or failed. */
static void
connect_done(struct mqtt_link *l, short revents, long long now)
{
	int err = 0;

	if (revents == 0) {
		if (now >= l->phase_end)
			fail(l, now, "cannot connect", "timed out");
		return;
	}
	/* connect() again says how it ended (EISCONN: connected), as
	 * SO_ERROR would; but qemu-user hands SO_ERROR's number to its guest
	 * untranslated, and MIPS numbers its errors its own way. */
	if (connect(l->fd, l->ai_try->ai_addr, l->ai_try->ai_addrlen) != 0 &&
	    errno != EISCONN)
		err = errno;
	if (err == EALREADY || err == EINPROGRESS)
		return;			/* not yet after all */
	if (err == 0) {
		connected(l, now);
		return;
	}
	close(l->fd);
	l->fd = -1;
	errno = err;
	if (l->ai_cur != NULL)
		next_addr(l, now);
	else
		fail(l, now, "cannot connect", strerror(err));
}

/* see mqtt.h */
void
mqtt_link_run(struct mqtt_link *l, short revents, long long now_ms)
{
	long t;

	if (l->phase == PH_IDLE && l->retry_at <= now_ms)
		try_connect(l, now_ms);
	else if (l->phase == PH_CONNECT)
		connect_done(l, revents, now_ms);
	if (l->phase != PH_UP)
		return;
	if (link_read(l, now_ms) < 0 || link_write(l, now_ms) < 0)
		return;
	if ((t = mqtt_tick(&l->m, now_ms)) < 0 && l->m.st == MQS_DOWN) {
		fail(l, now_ms, "session ended", mqtt_why(&l->m));
		return;
	}
	if (l->m.st != MQS_UP && now_ms >= l->phase_end) {
		fail(l, now_ms, l->tls != NULL && !tls_cli_ready(l->tls) ?
		    "TLS handshake" : "no CONNACK", "timed out");
		return;
	}
	if (link_write(l, now_ms) < 0)		/* a PINGREQ */
		return;
	l->due = t < 0 ? LLONG_MAX : now_ms + t;
}

/* see mqtt.h */
int
mqtt_link_up(const struct mqtt_link *l)
{
	return l->phase == PH_UP && l->m.st == MQS_UP;
}

/* see mqtt.h */
void
mqtt_link_close(struct mqtt_link *l, int ms)
{
	long long end = net_now_ms() + ms;
	struct pollfd pfd;
	const void *p;

	if (mqtt_link_up(l)) {
		mqtt_disconnect(&l->m);
		while (link_write(l, net_now_ms()) == 0 &&
		    (mqtt_out(&l->m, &p) > 0 ||
		    (l->tls != NULL && tls_cli_unsent(l->tls))) &&
		    net_now_ms() < end) {
			pfd.fd = l->fd;
			pfd.events = POLLOUT;
			if (poll(&pfd, 1, (int)MAX(end - net_now_ms(), 0)) <= 0)
				break;
		}
	}
	if (l->tls != NULL && l->phase == PH_UP)
		tls_cli_close(l->tls, l->fd);
	close_fd(l);
	mqtt_lost(&l->m, 0, "closed");
	mqtt_free(&l->m);
	l->retry_at = LLONG_MAX;
}
