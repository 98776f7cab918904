/* test_mqtt.c - the MQTT codec (every encoder through the decoder, both
 * versions, and the malformed packets it must refuse) and the session
 * driven by fed bytes and a fake clock. */
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "base/str.h"
#include "net/mqtt.h"
#include "unit.h"

static const unsigned vers[] = { MQTT_V311, MQTT_V5 };

/* Decode the whole of sb as one packet. */
static void
dec_all(unsigned ver, const struct sbuf *sb, struct mqtt_pkt *p)
{
	const char *why = NULL;
	size_t i;

	T(sb->err == 0);
	T_EQI(mqtt_decode(ver, sb->p, sb->len, 0, p, &why), sb->len);
	T(why == NULL);
	/* every prefix asks for more */
	for (i = 0; i < sb->len; i++)
		T_EQI(mqtt_decode(ver, sb->p, i, 0, p, &why), 0);
	mqtt_decode(ver, sb->p, sb->len, 0, p, &why);
}

static void
t_connect(void)
{
	static const struct mqtt_will w = { "a/status", "off", 3, 1, 1 };
	struct mqtt_opts o = { 0 };
	struct mqtt_pkt p;
	struct sbuf sb;
	unsigned i;

	for (i = 0; i < ARRAY_LEN(vers); i++) {
		sbuf_init(&sb, &t_arena, 0);
		o.client_id = "dev1";
		o.user = "u";
		o.pass = "p\0w";
		o.pass_len = 3;
		o.keepalive = 60;
		o.expiry = 86400;
		o.max_in = 65536;
		o.will = &w;
		o.clean = 0;
		mqtt_enc_connect(&sb, &o, vers[i]);
		dec_all(vers[i], &sb, &p);
		T_EQI(p.type, MQ_CONNECT);
		T(str_eqz(p.assigned, "dev1"));
		T(str_eqz(p.user, "u"));
		T(p.pass.n == 3 && memcmp(p.pass.p, "p\0w", 3) == 0);
		T(str_eqz(p.topic, "a/status") && str_eqz(p.payload, "off"));
		T_EQI(p.qos, 1);
		T_EQI(p.retain, 1);
		T_EQI(p.keepalive, 60);
		T_EQI(p.code & 2, 0);		/* not clean */
		T_EQI(p.expiry, vers[i] == MQTT_V5 ? 86400 : 0);
		T_EQI(p.max_packet, vers[i] == MQTT_V5 ? 65536 : 0);
		/* the other level does not take it */
		T_EQI(mqtt_decode(vers[!i], sb.p, sb.len, 0, &p,
		    &(const char *){ 0 }), -E_PARSE);

		sbuf_init(&sb, &t_arena, 0);
		memset(&o, 0, sizeof(o));
		o.client_id = "x";
		o.clean = 1;
		mqtt_enc_connect(&sb, &o, vers[i]);
		dec_all(vers[i], &sb, &p);
		T_EQI(p.code, 2);
		T(p.user.n == 0 && p.topic.n == 0);
	}
}

static void
t_publish(void)
{
	struct mqtt_pkt p;
	struct sbuf sb;
	static char big[20000];
	unsigned i;

	memset(big, 'b', sizeof(big));
	for (i = 0; i < ARRAY_LEN(vers); i++) {
		sbuf_init(&sb, &t_arena, 0);
		mqtt_enc_publish(&sb, vers[i], "s/d/jobs", "{}", 2, 1, 0, 1,
		    513);
		dec_all(vers[i], &sb, &p);
		T_EQI(p.type, MQ_PUBLISH);
		T(str_eqz(p.topic, "s/d/jobs") && str_eqz(p.payload, "{}"));
		T(p.qos == 1 && p.dup == 1 && p.retain == 0 && p.id == 513);

		sbuf_init(&sb, &t_arena, 0);	/* QoS 0: no id, no dup */
		mqtt_enc_publish(&sb, vers[i], "t", big, sizeof(big), 0, 1,
		    1, 7);
		T_EQI(sb.len, 1 + 3 + 3 + (vers[i] == MQTT_V5) + sizeof(big));
		dec_all(vers[i], &sb, &p);
		T(p.qos == 0 && p.dup == 0 && p.retain == 1 && p.id == 0);
		T_EQI(p.payload.n, sizeof(big));
		/* over max: known from the header alone */
		T_EQI(mqtt_decode(vers[i], sb.p, 4, 1000, &p,
		    &(const char *){ 0 }), -E_LIMIT);
		T_EQI(mqtt_decode(vers[i], sb.p, sb.len, sb.len, &p,
		    &(const char *){ 0 }), (long)sb.len);
	}
}

static void
t_subscribe(void)
{
	static const char *const f[] = { "a/+/jobs", "$share/q/s/queue/q",
	    "b/#" };
	struct mqtt_pkt p;
	struct sbuf sb;
	unsigned i;

	for (i = 0; i < ARRAY_LEN(vers); i++) {
		sbuf_init(&sb, &t_arena, 0);
		mqtt_enc_subscribe(&sb, vers[i], 65535, f, 3, 1);
		dec_all(vers[i], &sb, &p);
		T_EQI(p.type, MQ_SUBSCRIBE);
		T(p.id == 65535 && p.nsub == 3 && p.qos == 1);
		T(str_eqz(p.topic, "a/+/jobs"));
	}
}

static void
t_acks(void)
{
	static const unsigned types[] = { MQ_PUBACK, MQ_PUBREC, MQ_PUBREL,
	    MQ_PUBCOMP };
	struct mqtt_pkt p;
	struct sbuf sb;
	unsigned i, k;

	for (i = 0; i < ARRAY_LEN(vers); i++)
		for (k = 0; k < ARRAY_LEN(types); k++) {
			sbuf_init(&sb, &t_arena, 0);
			mqtt_enc_ack(&sb, vers[i], types[k], 42,
			    vers[i] == MQTT_V5 ? 0x87 : 0);
			dec_all(vers[i], &sb, &p);
			T_EQI(p.type, types[k]);
			T_EQI(p.id, 42);
			T_EQI(p.code, vers[i] == MQTT_V5 ? 0x87 : 0);
			sbuf_init(&sb, &t_arena, 0);
			mqtt_enc_ack(&sb, vers[i], types[k], 1, 0);
			T_EQI(sb.len, 4);
			dec_all(vers[i], &sb, &p);
			T(p.id == 1 && p.code == 0);
		}
}

static void
t_bare(void)
{
	static const unsigned types[] = { MQ_PINGREQ, MQ_PINGRESP,
	    MQ_DISCONNECT };
	struct mqtt_pkt p;
	struct sbuf sb;
	unsigned i, k;

	for (i = 0; i < ARRAY_LEN(vers); i++)
		for (k = 0; k < ARRAY_LEN(types); k++) {
			sbuf_init(&sb, &t_arena, 0);
			mqtt_enc_bare(&sb, vers[i], types[k]);
			T_EQI(sb.len, 2);
			dec_all(vers[i], &sb, &p);
			T_EQI(p.type, types[k]);
			T_EQI(p.code, 0);
		}
}

/* Packets as bytes: "\x20\x03..." literals with their length. */
#define DEC(ver, lit, max) \
	mqtt_decode(ver, lit, sizeof(lit) - 1, max, &p, &why)

static void
t_server_packets(void)
{
	struct mqtt_pkt p;
	const char *why;

	/* CONNACK 5 with properties */
	T_EQI(DEC(5, "\x20\x1f\x01\x00\x1c"
	    "\x11\x00\x00\x0e\x10"		/* session expiry 3600 */
	    "\x13\x00\x1e"			/* server keep alive 30 */
	    "\x21\x00\x05"			/* receive maximum 5 */
	    "\x27\x00\x01\x00\x00"		/* maximum packet 65536 */
	    "\x12\x00\x02id"			/* assigned id */
	    "\x26\x00\x01k\x00\x01v"		/* a user property: skipped */
	    , 0), 33);
	T(p.type == MQ_CONNACK && p.present == 1 && p.code == 0);
	T(p.expiry == 3600 && p.keepalive == 30 && p.recv_max == 5);
	T(p.max_packet == 65536 && str_eqz(p.assigned, "id"));
	/* 3.1.1 CONNACK, and a 3.1.1 refusal read as 5 */
	T_EQI(DEC(4, "\x20\x02\x00\x05", 0), 4);
	T(p.code == 5 && p.present == 0);
	T_EQI(DEC(5, "\x20\x02\x00\x01", 0), 4);
	T_EQI(p.code, 1);
	/* SUBACK, with a refused filter */
	T_EQI(DEC(5, "\x90\x06\x00\x07\x00\x01\x80\x00", 0), 8);
	T(p.type == MQ_SUBACK && p.id == 7 && p.nsub == 3);
	T(p.subcodes[0] == 1 && p.subcodes[1] == 0x80 && p.code == 1);
	T_EQI(DEC(4, "\x90\x03\x00\x07\x01", 0), 5);
	/* DISCONNECT 5 with a reason string */
	T_EQI(DEC(5, "\xe0\x07\x8e\x05\x1f\x00\x02hi", 0), 9);
	T(p.type == MQ_DISCONNECT && p.code == 0x8e &&
	    str_eqz(p.reason, "hi"));
	/* PUBACK 5 with a code and a reason */
	T_EQI(DEC(5, "\x40\x08\x00\x03\x87\x04\x1f\x00\x01x", 0), 10);
	T(p.id == 3 && p.code == 0x87 && str_eqz(p.reason, "x"));
	/* UNSUBACK; AUTH in 5 */
	T_EQI(DEC(4, "\xb0\x02\x00\x09", 0), 4);
	T_EQI(DEC(5, "\xb0\x04\x00\x09\x00\x00", 0), 6);
	T_EQI(DEC(5, "\xf0\x00", 0), 2);
	/* a 4-byte remaining length, which is fine */
	T_EQI(DEC(5, "\x30\xff\xff\xff\x7f", 0), 0);
}

/* Each malformed packet and the words it gets. */
static const struct {
	unsigned	 ver;
	const char	*in;
	size_t		 n;
	const char	*why;
} bad_cases[] = {
#define B(v, lit, w) { v, lit, sizeof(lit) - 1, w }
	B(5, "\x00\x00", "reserved"),
	B(4, "\xf0\x00", "reserved"),
	B(5, "\x21\x02\x00\x00", "flags"),		/* CONNACK flags 1 */
	B(5, "\x80\x05\x00\x01\x00\x00\x01", "flags"),	/* SUBSCRIBE 0 */
	B(5, "\x60\x02\x00\x01", "flags"),		/* PUBREL 0 */
	B(5, "\x36\x04\x00\x01t\x00", "QoS 3"),
	B(5, "\x30\x80\x80\x80\x80\x01", "over 4 bytes"),
	B(5, "\x30\x80\x00", "not minimal"),
	B(4, "\x20\x01\x00", "too soon"),		/* truncated */
	B(4, "\x20\x03\x00\x00\x00", "extra bytes"),
	B(4, "\x22\x02\x00\x00", "flags"),
	B(5, "\x20\x02\x02\x00", "connack flags"),
	B(5, "\x20\x05\x00\x00\x02\x21\x00", "too soon"),
	B(5, "\x20\x06\x00\x00\x03\x21\x00\x00", "receive maximum"),
	B(5, "\x20\x05\x00\x00\x02\x7f\x00", "unknown property"),
	B(5, "\x20\x05\x00\x00\x09\x24\x00", "past the end"),
	B(5, "\x20\x07\x00\x00\x04\x24\x00\x24\x01", "twice"),
	B(5, "\x20\x07\x00\x00\x04\x1f\x00\x01\xff", "UTF-8"),
	B(5, "\x20\x07\x00\x00\x04\x1f\x00\x01\x00", "UTF-8"),
	B(5, "\x20\x08\x00\x00\x05\x1f\x00\x02\xc0\xaf", "UTF-8"),
	B(4, "\x30\x04\x00\x02\xed\xa0", "UTF-8"),	/* a surrogate */
	B(4, "\x30\x03\x00\x01+", "wildcard"),
	B(4, "\x30\x05\x00\x03" "a/#", "wildcard"),
	B(5, "\x30\x03\x00\x00\x00", "empty"),
	B(5, "\x30\x06\x00\x01t\x02\x23\x00", "too soon"),
	B(5, "\x30\x07\x00\x01t\x03\x23\x00\x01", "topic alias"),
	B(4, "\x38\x03\x00\x01t", "DUP"),
	B(4, "\x32\x05\x00\x01t\x00\x00", "identifier 0"),
	B(4, "\x40\x02\x00\x00", "identifier 0"),
	B(4, "\x40\x03\x00\x01\x00", "extra bytes"),
	B(4, "\x90\x02\x00\x01", "no reason codes"),
	B(4, "\x90\x02\x00\x00", "identifier 0"),	/* and no codes */
	B(5, "\x90\x04\x00\x01\x00\x05", "SUBACK code"),
	B(4, "\xc0\x01\x00", "extra bytes"),
	B(4, "\xe0\x01\x00", "extra bytes"),
	B(4, "\x82\x06\x00\x01\x00\x01t\x03", "options"),
	B(5, "\x82\x03\x00\x01\x00", "too soon"),
#undef B
};

static void
t_malformed(void)
{
	struct mqtt_pkt p;
	const char *why;
	size_t i;

	for (i = 0; i < ARRAY_LEN(bad_cases); i++) {
		why = NULL;
		if (mqtt_decode(bad_cases[i].ver, bad_cases[i].in,
		    bad_cases[i].n, 0, &p, &why) != -E_PARSE ||
		    why == NULL || strstr(why, bad_cases[i].why) == NULL)
			t_fail(__FILE__, __LINE__, "case %zu: %s", i,
			    why ? why : "(accepted)");
	}
}

/* A SUBACK with id 0 and no codes: nothing read past its end. */
static void
t_suback_end(void)
{
	struct mqtt_pkt p;
	const char *why;

	T_EQI(mqtt_decode(MQTT_V311, "\x90\x02\x00\x00\x55", 4, 0, &p, &why),
	    -E_PARSE);
	T(p.code == 0 && p.nsub == 0);
}

static void
t_enc_limits(void)
{
	struct sbuf sb;
	static char big[70000];

	sbuf_init(&sb, &t_arena, 0);
	memset(big, 'a', sizeof(big) - 1);
	mqtt_enc_publish(&sb, 5, big, "x", 1, 0, 0, 0, 0);
	T_EQI(sb.err, -E_LIMIT);
	sbuf_init(&sb, &t_arena, 10);
	mqtt_enc_publish(&sb, 5, "t", big, 100, 0, 0, 0, 0);
	T(sb.err != 0);
}


/* --- the session, fed bytes, with a fake clock */

/* What the callback saw, as "up msg:ID acked:ID:CODE suback:ID down ". */
static char seen[512];

static void
rec(void *arg, struct mqtt *m, enum mqtt_ev ev, const struct mqtt_pkt *p)
{
	size_t n = strlen(seen);
	char *s = seen + n;

	(void)arg;
	(void)m;
	switch (ev) {
	case MQE_UP:
		snprintf(s, sizeof(seen) - n, "up ");
		break;
	case MQE_MSG:
		snprintf(s, sizeof(seen) - n, "msg:%u:%.*s ", p->id,
		    (int)p->payload.n, p->payload.p);
		break;
	case MQE_ACKED:
		snprintf(s, sizeof(seen) - n, "acked:%u:%u ", p->id, p->code);
		break;
	case MQE_SUBACK:
		snprintf(s, sizeof(seen) - n, "suback:%u ", p->id);
		break;
	case MQE_DOWN:
		snprintf(s, sizeof(seen) - n, "down ");
		break;
	}
}

#define FEED(m, lit, now) mqtt_feed(m, lit, sizeof(lit) - 1, now)

/* Take what the session wants written; the packet types in order, as
 * a string of hex digits ("1" CONNECT, "c" PINGREQ, ...). */
static const char *
drain(struct mqtt *m, unsigned *ver)
{
	static char types[64];
	struct mqtt_pkt p;
	const char *why;
	const void *b;
	size_t n = mqtt_out(m, &b), k = 0;
	long r;

	while (n > 0 && k < sizeof(types) - 1) {
		r = mqtt_decode(m->ver, b, n, 0, &p, &why);
		T(r > 0);
		if (r <= 0)
			break;
		types[k++] = "0123456789abcdef"[p.type];
		if (ver != NULL && p.type == MQ_CONNECT)
			*ver = m->ver;
		b = (const char *)b + r;
		n -= r;
	}
	types[k] = '\0';
	mqtt_sent(m, mqtt_out(m, &b));
	return types;
}

static void
start(struct mqtt *m, struct mqtt_opts *o, unsigned ver, unsigned ka)
{
	memset(o, 0, sizeof(*o));
	o->ver = ver;
	o->client_id = "dev1";
	o->keepalive = ka;
	seen[0] = '\0';
	mqtt_init(m, o, rec, NULL);
	mqtt_begin(m, 0);
	T_EQS(drain(m, NULL), "1");
	mqtt_tick(m, 0);
}

static void
t_session_up(void)
{
	struct mqtt_opts o;
	struct mqtt m;
	static const char *const f[] = { "a/jobs", "b/jobs" };

	start(&m, &o, 0, 10);
	T_EQI(m.st, MQS_CONNECTING);
	T_EQI(m.ver, MQTT_V5);
	T_EQI(mqtt_publish(&m, "t", "x", 1, 1, 0, 0), -E_INVAL);
	/* receive maximum 2, server keep alive 20 */
	T_EQI(FEED(&m, "\x20\x09\x00\x00\x06\x21\x00\x02\x13\x00\x14", 5),
	    0);
	T_EQS(seen, "up ");
	T(m.st == MQS_UP && m.keepalive == 20 && m.send_max == 2);
	T_EQI(mqtt_publish(&m, "r/1", "a", 1, 1, 0, 0), 1);
	T_EQI(mqtt_publish(&m, "r/2", "b", 1, 1, 0, 0), 2);
	T_EQI(mqtt_publish(&m, "r/3", "c", 1, 1, 0, 0), -E_BUSY);
	T_EQI(mqtt_publish(&m, "r/0", "d", 1, 0, 0, 0), 0);	/* QoS 0 */
	T_EQI(mqtt_publish(&m, "r/+", "d", 1, 0, 0, 0), -E_INVAL);
	T_EQI(mqtt_publish(&m, "", "d", 1, 0, 0, 0), -E_INVAL);
	T_EQS(drain(&m, NULL), "333");
	T_EQI(FEED(&m, "\x40\x02\x00\x02", 6), 0);
	T_EQI(FEED(&m, "\x40\x02\x00\x02", 6), 0);	/* again: nothing */
	T_EQS(seen, "up acked:2:0 ");
	T_EQI(mqtt_publish(&m, "r/3", "c", 1, 1, 0, 0), 3);
	T_EQI(mqtt_subscribe(&m, f, 2), 4);
	T_EQS(drain(&m, NULL), "38");
	T_EQI(FEED(&m, "\x90\x05\x00\x04\x00\x01\x01", 7), 0);
	T_EQI(FEED(&m, "\x40\x04\x00\x03\x87\x00", 7), 0);
	T_EQS(seen, "up acked:2:0 suback:4 acked:3:135 ");
	mqtt_disconnect(&m);
	T_EQS(drain(&m, NULL), "e");
	T_EQS(seen, "up acked:2:0 suback:4 acked:3:135 down ");
	T(strstr(mqtt_why(&m), "disconnected") != NULL);
	T_EQI(FEED(&m, "\xd0\x00", 8), -E_INVAL);
	mqtt_free(&m);
}

static void
t_session_ids(void)
{
	struct mqtt_opts o;
	struct mqtt m;

	start(&m, &o, MQTT_V311, 0);
	T_EQI(FEED(&m, "\x20\x02\x00\x00", 1), 0);
	T_EQI(mqtt_publish(&m, "t", "x", 1, 1, 0, 0), 1);
	m.next_id = 65534;
	T_EQI(mqtt_publish(&m, "t", "x", 1, 1, 0, 0), 65534);
	T_EQI(mqtt_publish(&m, "t", "x", 1, 1, 0, 0), 65535);
	T_EQI(mqtt_publish(&m, "t", "x", 1, 1, 0, 0), 2);	/* not 0, 1 */
	T_EQI(FEED(&m, "\x40\x02\xff\xfe", 2), 0);
	m.next_id = 65534;
	T_EQI(mqtt_publish(&m, "t", "x", 1, 1, 0, 0), 65534);
	T_EQI(m.inflight, 4);
	/* our own bound */
	while (mqtt_publish(&m, "t", "x", 1, 1, 0, 0) > 0)
		;
	T_EQI(m.inflight, MQTT_MAX_INFLIGHT);
	T_EQI(mqtt_publish(&m, "t", "x", 1, 1, 0, 0), -E_BUSY);
	mqtt_free(&m);
}

static void
t_session_msg(void)
{
	static const char pub[] = "\x32\x09\x00\x03" "a/b\x00\x09" "hi"
	    "\x30\x06\x00\x01t" "q0x";
	struct mqtt_opts o;
	struct mqtt m;
	size_t i;

	start(&m, &o, MQTT_V311, 0);
	T_EQI(FEED(&m, "\x20\x02\x01\x00", 1), 0);
	for (i = 0; i < sizeof(pub) - 1; i++)	/* a byte at a time */
		T_EQI(mqtt_feed(&m, pub + i, 1, 2), 0);
	T_EQS(seen, "up msg:9:hi msg:0:q0x ");
	T_EQS(drain(&m, NULL), "");		/* no PUBACK on its own */
	mqtt_ack(&m, 9);
	T_EQS(drain(&m, NULL), "4");
	/* QoS 2 was never asked for */
	T(FEED(&m, "\x34\x05\x00\x01t\x00\x01", 3) < 0);
	T(strstr(mqtt_why(&m), "QoS 2") != NULL);
	mqtt_free(&m);
}

static void
t_session_refused(void)
{
	struct mqtt_opts o;
	struct mqtt m;
	unsigned ver = 0;

	start(&m, &o, MQTT_V311, 0);
	T(FEED(&m, "\x20\x02\x00\x05", 1) < 0);
	T_EQS(seen, "down ");
	T_EQS(mqtt_why(&m), "broker refused the connection: not authorized "
	    "(0x05)");
	T_EQI(m.fallback, 0);
	mqtt_free(&m);

	start(&m, &o, MQTT_V5, 0);
	T(FEED(&m, "\x20\x09\x00\x86\x06\x1f\x00\x03" "bad", 1) < 0);
	T_EQS(mqtt_why(&m), "broker refused the connection: bad user name "
	    "or password (0x86), bad");
	mqtt_free(&m);

	/* 5 asked for, not auto: no fallback */
	start(&m, &o, MQTT_V5, 0);
	T(FEED(&m, "\x20\x02\x00\x01", 1) < 0);
	T_EQI(m.fallback, 0);
	mqtt_free(&m);

	/* auto: a 3.1.1 refusal of level 5, then 3.1.1 */
	start(&m, &o, 0, 0);
	T(FEED(&m, "\x20\x02\x00\x01", 1) < 0);
	T_EQI(m.fallback, 1);
	T(strstr(mqtt_why(&m), "MQTT 5") != NULL);
	mqtt_begin(&m, 2);
	T_EQS(drain(&m, &ver), "1");
	T_EQI(ver, MQTT_V311);
	T_EQI(FEED(&m, "\x20\x02\x00\x00", 3), 0);
	T_EQS(seen, "down up ");
	mqtt_free(&m);

	/* auto: 5's "unsupported protocol version" */
	start(&m, &o, 0, 0);
	T(FEED(&m, "\x20\x03\x00\x84\x00", 1) < 0);
	T_EQI(m.fallback, 1);
	mqtt_free(&m);
}

static void
t_session_errors(void)
{
	struct mqtt_opts o;
	struct mqtt m;

	start(&m, &o, MQTT_V5, 0);
	T(FEED(&m, "\xd0\x00", 1) < 0);		/* before CONNACK */
	T(strstr(mqtt_why(&m), "before CONNACK") != NULL);
	mqtt_free(&m);

	start(&m, &o, MQTT_V5, 0);
	T_EQI(FEED(&m, "\x20\x03\x00\x00\x00", 1), 0);
	T(FEED(&m, "\x20\x03\x00\x00\x00", 1) < 0);
	T(strstr(mqtt_why(&m), "second CONNACK") != NULL);
	mqtt_free(&m);

	start(&m, &o, MQTT_V5, 0);
	T_EQI(FEED(&m, "\x20\x03\x00\x00\x00", 1), 0);
	T(FEED(&m, "\x30\x80\x80\x80\x80", 1) == -E_PARSE);
	T_EQS(mqtt_why(&m), "malformed packet from the broker: remaining "
	    "length over 4 bytes");
	mqtt_free(&m);

	/* over max_in, from the header alone */
	start(&m, &o, MQTT_V5, 0);
	m.o.max_in = 100;
	T_EQI(FEED(&m, "\x20\x03\x00\x00\x00", 1), 0);
	T(FEED(&m, "\x30\xe8\x07", 1) == -E_LIMIT);
	T_EQS(mqtt_why(&m), "broker sent a packet: over 100 bytes");
	mqtt_free(&m);

	start(&m, &o, MQTT_V5, 0);
	T_EQI(FEED(&m, "\x20\x03\x00\x00\x00", 1), 0);
	T(FEED(&m, "\xe0\x01\x8e", 1) < 0);
	T_EQS(mqtt_why(&m), "broker disconnected: session taken over: "
	    "another client connected with this client id (0x8e)");
	T_EQS(seen, "up down ");
	mqtt_free(&m);

	start(&m, &o, MQTT_V5, 0);
	T_EQI(FEED(&m, "\x20\x03\x00\x00\x00", 1), 0);
	T(FEED(&m, "\x50\x02\x00\x01", 1) < 0);		/* PUBREC */
	T(strstr(mqtt_why(&m), "protocol error") != NULL);
	mqtt_free(&m);

	/* the broker's maximum packet size */
	start(&m, &o, MQTT_V5, 0);
	T_EQI(FEED(&m, "\x20\x08\x00\x00\x05\x27\x00\x00\x00\x20", 1), 0);
	T_EQI(mqtt_publish(&m, "t", "0123456789012345678901234567890",
	    31, 1, 0, 0), -E_LIMIT);
	T_EQI(mqtt_publish(&m, "t", "01", 2, 1, 0, 0), 1);
	T_EQS(drain(&m, NULL), "3");
	mqtt_lost(&m, -E_IO, "reset by peer");
	T_EQS(mqtt_why(&m), "connection lost: reset by peer");
	T_EQS(seen, "up down ");
	mqtt_free(&m);
}

static void
t_session_keepalive(void)
{
	struct mqtt_opts o;
	struct mqtt m;

	start(&m, &o, MQTT_V311, 10);
	T_EQI(mqtt_tick(&m, 0), 15000);			/* CONNACK due */
	T_EQI(FEED(&m, "\x20\x02\x00\x00", 1000), 0);
	T_EQI(mqtt_tick(&m, 5000), 5000);		/* the ping due */
	T_EQI(mqtt_tick(&m, 10000), 6000);		/* silence first */
	T_EQS(drain(&m, NULL), "c");
	T_EQI(FEED(&m, "\xd0\x00", 11000), 0);
	/* the PINGREQ went out at the tick after the drain */
	T_EQI(mqtt_tick(&m, 11000), 10000);
	T_EQI(mqtt_tick(&m, 20000), 1000);
	T_EQS(drain(&m, NULL), "");
	T_EQI(mqtt_tick(&m, 21000), 5000);
	T_EQS(drain(&m, NULL), "c");
	T_EQI(mqtt_tick(&m, 25999), 1);
	T_EQS(seen, "up ");
	T_EQI(mqtt_tick(&m, 26000), -E_TIMEOUT);
	T_EQS(seen, "up down ");
	T_EQS(mqtt_why(&m), "broker silent past the keepalive: timed out");
	T_EQI(mqtt_tick(&m, 27000), -1);
	mqtt_free(&m);

	/* writes count as activity; no CONNACK ends it too */
	start(&m, &o, MQTT_V311, 10);
	T_EQI(mqtt_tick(&m, 14999), 1);
	T_EQI(mqtt_tick(&m, 15000), -E_TIMEOUT);
	T_EQS(mqtt_why(&m), "no CONNACK: timed out");
	mqtt_free(&m);

	start(&m, &o, MQTT_V311, 10);
	T_EQI(FEED(&m, "\x20\x02\x00\x00", 0), 0);
	T_EQI(mqtt_publish(&m, "t", "x", 1, 0, 0, 0), 0);
	T_EQS(drain(&m, NULL), "3");
	T_EQI(mqtt_tick(&m, 8000), 7000);	/* sent at 8 s */
	T_EQI(mqtt_tick(&m, 10000), 5000);	/* no ping before 18 s */
	T_EQS(drain(&m, NULL), "");
	mqtt_free(&m);
}

static void
t_url(void)
{
	static const char *const bad[] = { "", "mqtt://", "http://h",
	    "mqtt://h:", "mqtt://h:0", "mqtt://h:65536", "mqtt://h/x",
	    "mqtt://u@h", "mqtt://h:1883/", "mqtt://[::1", "mqtt://[]:1",
	    "mqtt://h:12a", "mqtt://h h", "mqtts//h" };
	struct mqtt_url u;
	size_t i;

	T_EQI(mqtt_url_parse("mqtt://broker.lan", &u), 0);
	T(!u.tls && u.port == MQTT_PORT && strcmp(u.host, "broker.lan") == 0);
	T_EQI(mqtt_url_parse("mqtts://10.0.0.1", &u), 0);
	T(u.tls && u.port == MQTT_TLS_PORT && strcmp(u.host, "10.0.0.1") == 0);
	T_EQI(mqtt_url_parse("mqtts://[fe80::1]:8884", &u), 0);
	T(u.tls && u.port == 8884 && strcmp(u.host, "fe80::1") == 0);
	T_EQI(mqtt_url_parse("mqtt://h:65535", &u), 0);
	T_EQI(u.port, 65535);
	for (i = 0; i < ARRAY_LEN(bad); i++)
		if (mqtt_url_parse(bad[i], &u) != -E_INVAL)
			t_fail(__FILE__, __LINE__, "accepted %s", bad[i]);
}

static void
nop(void *arg, struct mqtt *m, enum mqtt_ev ev, const struct mqtt_pkt *p)
{
	(void)arg;
	(void)m;
	(void)ev;
	(void)p;
}

/* A link to 127.0.0.1:1, where nothing listens (backoff 100..1000 ms). */
static void
link_refused(struct mqtt_link *l)
{
	static const struct mqtt_link_opts lo = { "mqtt://127.0.0.1:1", NULL,
	    NULL, NULL, 2000, 100, 1000 };
	static struct mqtt_opts o = { .client_id = "t" };
	char why[128];

	T_EQI(mqtt_link_init(l, &t_arena, &lo, &o, nop, NULL, why,
	    sizeof(why)), 0);
}

/* Tries against a port where nothing listens: each next try is due after
 * a delay in [backoff/2, backoff], backoff doubling from twice the
 * minimum to the maximum. */
static void
t_link_backoff(void)
{
	struct mqtt_link l;
	struct pollfd pfd;
	long long now = 1000000, d;
	unsigned k, hi = 200;

	link_refused(&l);
	T_EQI(mqtt_link_poll(&l, &pfd, now), 0);	/* due at once */
	for (k = 0; k < 6; k++) {
		mqtt_link_run(&l, 0, now);
		if (l.fd >= 0) {		/* the refusal comes later */
			T_EQI(mqtt_link_poll(&l, &pfd, now), 2000);
			T(poll(&pfd, 1, 2000) == 1);
			mqtt_link_run(&l, pfd.revents, now);
		}
		T_EQI(l.fd, -1);
		T_EQI(l.tries, k + 1);
		T(strstr(l.why, "cannot connect: Connection refused") != NULL);
		d = l.retry_at - now;
		if (d < 100 || d < hi / 2 || d > hi)
			t_fail(__FILE__, __LINE__, "try %u: %lld ms, not in "
			    "[%u, %u]", k, d, hi / 2, hi);
		T_EQI(mqtt_link_poll(&l, &pfd, now), d);
		T_EQI(pfd.fd, -1);
		now += d;
		hi = MIN(2 * hi, 1000);
	}
	mqtt_link_close(&l, 0);
	T_EQI(mqtt_link_poll(&l, &pfd, now), -1);
}

/* A session that ended within LINK_STABLE_MS (30 s) of coming up keeps
 * the backoff growing (two devices with one client id take the session
 * from each other); one that lasted longer starts it again. */
static void
t_link_stable(void)
{
	struct mqtt_link l;
	struct pollfd pfd;
	long long now = 1000000, d;
	int i;

	link_refused(&l);
	for (i = 0; i < 2; i++) {
		l.backoff = 400;		/* grown by earlier losses */
		l.up_at = now - (i == 0 ? 29999 : 30000);
		l.retry_at = now;
		mqtt_link_run(&l, 0, now);
		if (l.fd >= 0) {
			T(poll((mqtt_link_poll(&l, &pfd, now), &pfd), 1,
			    2000) == 1);
			mqtt_link_run(&l, pfd.revents, now);
		}
		T_EQI(l.fd, -1);
		T_EQI(l.up_at, 0);
		d = l.retry_at - now;
		T_EQI(l.backoff, i == 0 ? 800 : 200);
		T(d >= l.backoff / 2 && d <= l.backoff);
	}
	mqtt_link_close(&l, 0);
}

static const struct unit_case cases[] = {
	{ "connect", t_connect },
	{ "publish", t_publish },
	{ "subscribe", t_subscribe },
	{ "acks", t_acks },
	{ "bare", t_bare },
	{ "server_packets", t_server_packets },
	{ "malformed", t_malformed },
	{ "suback_end", t_suback_end },
	{ "enc_limits", t_enc_limits },
	{ "session_up", t_session_up },
	{ "session_ids", t_session_ids },
	{ "session_msg", t_session_msg },
	{ "session_refused", t_session_refused },
	{ "session_errors", t_session_errors },
	{ "session_keepalive", t_session_keepalive },
	{ "url", t_url },
	{ "link_backoff", t_link_backoff },
	{ "link_stable", t_link_stable },
};

const struct unit_suite suite_mqtt = { "mqtt", cases, ARRAY_LEN(cases) };
