/* mqttc.c - drives the MQTT link against a real broker for
 * tests/e2e/mqtt_link.test (built natively, or for the arch under test).
 *
 * usage: mqttc [-c CA] [-C CERT -K KEY] [-v 4|5] [-b MIN,MAX] [-k KEEPALIVE]
 *              [-t SECONDS] URL MODE [N]
 *   roundtrip  subscribe lt/#, publish "hello" to lt/x at QoS 1, take it
 *              back, acknowledge it, see the PUBACK; then close
 *   reconnect  stay connected until N sessions came up (each after a
 *              loss), printing each session and each failed try
 *   refused    the first try must fail: prints why
 *   stay       stay up for N seconds in one session (PINGREQs keep it)
 * Prints one line per event on stdout; exit 0 done, 1 a failure, 3 timed
 * out, 2 usage. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/arena.h"
#include "net/mqtt.h"
#include "net/net.h"

static struct mqtt_link l;
static const char *mode;
static unsigned ups, want = 1, done, failed;

static void
ev(void *arg, struct mqtt *m, enum mqtt_ev e, const struct mqtt_pkt *p)
{
	static const char *const f[] = { "lt/#" };

	(void)arg;
	switch (e) {
	case MQE_UP:
		printf("up %u v%u\n", ++ups, m->ver);
		if (strcmp(mode, "roundtrip") == 0 &&
		    mqtt_subscribe(m, f, 1) <= 0)
			failed = done = 1;
		if (strcmp(mode, "reconnect") == 0 && ups == want)
			done = 1;
		break;
	case MQE_SUBACK:
		printf("suback %u\n", p->subcodes[0]);
		if (mqtt_publish(m, "lt/x", "hello", 5, 1, 0, 0) <= 0)
			failed = done = 1;
		break;
	case MQE_MSG:
		printf("msg %.*s %.*s qos %u\n", (int)p->topic.n, p->topic.p,
		    (int)p->payload.n, p->payload.p, p->qos);
		mqtt_ack(m, p->id);
		break;
	case MQE_ACKED:
		printf("acked %u\n", p->code);
		done = 1;
		break;
	case MQE_DOWN:
		printf("down: %s\n", mqtt_why(m));
		break;
	}
	fflush(stdout);
}

static int
usage(void)
{
	fprintf(stderr, "usage: mqttc [-c CA] [-C CERT -K KEY] [-v 4|5] "
	    "[-b MIN,MAX] [-k KEEPALIVE] [-t SECONDS] URL "
	    "roundtrip|reconnect|refused|stay [N]\n");
	return 2;
}

int
main(int argc, char **argv)
{
	struct mqtt_link_opts lo = { 0 };
	struct mqtt_opts o = { 0 };
	struct arena a;
	struct pollfd pfd;
	long long end, now, retry = 0, stay_end = 0;
	char why[256];
	int c, w;

	o.client_id = "linktest";
	o.keepalive = 30;
	o.clean = 1;
	lo.backoff_min_ms = 200;
	lo.backoff_max_ms = 1000;
	lo.connect_ms = 10000;
	end = 20;
	while ((c = getopt(argc, argv, "c:C:K:v:b:k:t:")) != -1)
		switch (c) {
		case 'c': lo.ca = optarg; break;
		case 'C': lo.cert = optarg; break;
		case 'K': lo.key = optarg; break;
		case 'v': o.ver = (unsigned)atoi(optarg); break;
		case 'b':
			if (sscanf(optarg, "%u,%u", &lo.backoff_min_ms,
			    &lo.backoff_max_ms) != 2)
				return usage();
			break;
		case 'k': o.keepalive = (unsigned)atoi(optarg); break;
		case 't': end = atoi(optarg); break;
		default: return usage();
		}
	if (argc - optind < 2)
		return usage();
	lo.url = argv[optind];
	mode = argv[optind + 1];
	if (argc - optind > 2)
		want = (unsigned)atoi(argv[optind + 2]);
	mem_init(4u << 20);
	arena_init(&a, "perm");
	if (mqtt_link_init(&l, &a, &lo, &o, ev, NULL, why, sizeof(why))
	    != 0) {
		printf("config: %s\n", why);
		return 1;
	}
	end = net_now_ms() + end * 1000;
	while (!done && (now = net_now_ms()) < end) {
		w = mqtt_link_poll(&l, &pfd, now);
		if (w < 0 || w > end - now)
			w = (int)(end - now);
		if (poll(&pfd, 1, w) < 0)
			break;
		mqtt_link_run(&l, pfd.revents, net_now_ms());
		if (strcmp(mode, "stay") == 0 && ups == 1 && !stay_end)
			stay_end = net_now_ms() + want * 1000ll;
		if (stay_end && net_now_ms() >= stay_end) {
			done = 1;
			failed = ups != 1 || !mqtt_link_up(&l);
			printf("stayed: %u session, pings %s\n", ups,
			    l.m.ping_at ? "sent" : "none");
		}
		if (l.fd < 0 && l.retry_at != retry) {	/* a try failed */
			retry = l.retry_at;
			printf("try failed: %s (next in %lld ms)\n", l.why,
			    retry - net_now_ms());
			fflush(stdout);
			if (strcmp(mode, "refused") == 0)
				done = 1;
		}
	}
	mqtt_link_close(&l, 1000);
	if (!done)
		printf("timed out: %s\n", l.why);
	return !done ? 3 : failed;
}
