/* fuzz_mqtt.c - libFuzzer harness for the MQTT codec and session.
 *
 * The first byte picks the level (3.1.1, 5, or auto for the session), a
 * packet size limit, and whether the session gets a CONNACK first; the
 * rest is what a broker sends. The decoder runs over it packet by packet
 * for both levels: every accepted packet must keep the promises of
 * mqtt.h (slices inside the input, a PUBLISH topic with no wildcard and
 * valid UTF-8, ...), every shorter prefix of it must ask for more, and a
 * PUBLISH must come back the same through its encoder. The session is
 * fed the bytes whole and in pieces (split points from the input), with
 * a clock that moves: both must report the same events.
 */
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "net/mqtt.h"

#define CHECK(c) do {							\
	if (!(c))							\
		abort();						\
} while (0)

static void
check_pkt(const struct mqtt_pkt *p, const unsigned char *b, long r)
{
	const char *lo = (const char *)b, *hi = lo + r;

	CHECK(p->type >= MQ_CONNECT && p->type <= MQ_AUTH);
	CHECK(p->topic.n == 0 || (p->topic.p >= lo &&
	    p->topic.p + p->topic.n <= hi));
	CHECK(p->payload.n == 0 || (p->payload.p >= lo &&
	    p->payload.p + p->payload.n <= hi));
	CHECK(p->reason.n == 0 || str_is_utf8(p->reason.p, p->reason.n));
	if (p->type == MQ_PUBLISH) {
		CHECK(p->qos < 3 && p->topic.n > 0);
		CHECK(memchr(p->topic.p, '+', p->topic.n) == NULL);
		CHECK(memchr(p->topic.p, '#', p->topic.n) == NULL);
		CHECK(str_is_utf8(p->topic.p, p->topic.n));
		CHECK(memchr(p->topic.p, 0, p->topic.n) == NULL);
		CHECK((p->qos == 0) == (p->id == 0));
	}
	if (p->type == MQ_SUBACK)
		CHECK(p->nsub > 0 && (const char *)p->subcodes >= lo &&
		    (const char *)p->subcodes + p->nsub <= hi);
}

/* A PUBLISH through its encoder comes back the same. */
static void
republish(unsigned ver, const struct mqtt_pkt *p)
{
	struct mqtt_pkt q;
	struct sbuf sb;
	const char *why;
	char topic[65536];

	memcpy(topic, p->topic.p, p->topic.n);
	topic[p->topic.n] = '\0';
	sbuf_init(&sb, NULL, 0);
	mqtt_enc_publish(&sb, ver, topic, p->payload.p, p->payload.n, p->qos,
	    p->retain, p->dup, p->id);
	CHECK(sb.err == 0);
	CHECK(mqtt_decode(ver, sb.p, sb.len, 0, &q, &why) == (long)sb.len);
	CHECK(q.qos == p->qos && q.retain == p->retain && q.dup == p->dup &&
	    q.id == p->id && str_eq(q.topic, p->topic) &&
	    str_eq(q.payload, p->payload));
	sbuf_release(&sb);
}

static void
decode_all(unsigned ver, const unsigned char *b, size_t n, size_t max)
{
	struct mqtt_pkt p, q;
	const char *why;
	long r, k;

	while (n > 0) {
		r = mqtt_decode(ver, b, n, max, &p, &why);
		if (r <= 0) {
			CHECK(r == 0 || r == -E_PARSE || r == -E_LIMIT);
			CHECK(r == 0 || why != NULL);
			CHECK(r != -E_LIMIT || max != 0);
			return;
		}
		CHECK((size_t)r <= n && (max == 0 || (size_t)r <= max));
		check_pkt(&p, b, r);
		for (k = r - 1; k >= 0 && k > r - 8; k--)
			CHECK(mqtt_decode(ver, b, k, max, &q, &why) == 0);
		if (p.type == MQ_PUBLISH)
			republish(ver, &p);
		b += r;
		n -= r;
	}
}

/* What the session reported, as a hash. */
struct seen {
	unsigned long long	 h;
	unsigned		 n;
};

static void
ev(void *arg, struct mqtt *m, enum mqtt_ev e, const struct mqtt_pkt *p)
{
	struct seen *s = arg;

	s->h = (s->h ^ (e + 1)) * 1099511628211u;
	if (p != NULL)
		s->h = (s->h ^ (p->type << 16 | p->id)) * 1099511628211u;
	if (e == MQE_MSG && p->qos == 1)
		mqtt_ack(m, p->id);
	if (e == MQE_UP || (e == MQE_MSG && ++s->n % 3 == 0))
		(void)mqtt_publish(m, "r/x", "y", 1, 1, 0, 0);
}

/* Feed the session whole (step 0) or in pieces from the input. */
static unsigned long long
session(unsigned ver, size_t max, int connack, const unsigned char *b,
    size_t n, const unsigned char *steps, size_t nsteps)
{
	struct mqtt_opts o = { 0 };
	struct seen s = { 14695981039346656037u, 0 };
	struct mqtt m;
	const void *out;
	size_t at = 0, k, i = 0;
	long long now = 0;

	o.ver = ver;
	o.client_id = "fuzz";
	o.keepalive = 5;
	o.max_in = max;
	mqtt_init(&m, &o, ev, &s);
	mqtt_begin(&m, now);
	if (connack)
		(void)mqtt_feed(&m, "\x20\x02\x00\x00", 4, now);
	while (at < n && m.st != MQS_DOWN) {
		k = nsteps ? steps[i++ % nsteps] % 64 + 1 : n;
		k = k < n - at ? k : n - at;
		now += 700;
		if (mqtt_feed(&m, b + at, k, now) < 0)
			CHECK(m.st == MQS_DOWN && m.why[0] != '\0');
		at += k;
		mqtt_sent(&m, mqtt_out(&m, &out));
		(void)mqtt_tick(&m, now);
	}
	mqtt_free(&m);
	return s.h;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t maxes[] = { 0, 16, 300, 5000 };
	unsigned ver;
	size_t max, half;

	if (size < 1)
		return 0;
	ver = (data[0] & 3) == 0 ? 0 : (data[0] & 1) ? MQTT_V5 : MQTT_V311;
	max = maxes[data[0] >> 2 & 3];
	decode_all(MQTT_V311, data + 1, size - 1, max);
	decode_all(MQTT_V5, data + 1, size - 1, max);
	/* the session: whole, and in pieces (lengths from the input's end,
	 * which the decoder sees as packet bytes too) */
	half = (size - 1) / 2;
	if (session(ver, max, data[0] & 16, data + 1, size - 1, NULL, 0) !=
	    session(ver, max, data[0] & 16, data + 1, size - 1,
	    data + 1 + half, size - 1 - half))
		abort();
	return 0;
}
