/* test_mqtt.c - the MQTT codec (every encoder through the decoder, both
 * versions, and the malformed packets it must refuse) and the session
 * driven by fed bytes and a fake clock. */
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

static const struct unit_case cases[] = {
	{ "connect", t_connect },
	{ "publish", t_publish },
	{ "subscribe", t_subscribe },
	{ "acks", t_acks },
	{ "bare", t_bare },
	{ "server_packets", t_server_packets },
	{ "malformed", t_malformed },
	{ "enc_limits", t_enc_limits },
};

const struct unit_suite suite_mqtt = { "mqtt", cases, ARRAY_LEN(cases) };
