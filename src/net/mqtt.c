/* mqtt.c - the MQTT codec and session (OASIS MQTT 5.0 and 3.1.1).
 *
 * The decoder checks what the specifications make a malformed packet: the
 * fixed header's flags, variable byte integers of at most 4 bytes in their
 * shortest form, lengths that stay inside the packet, properties the spec
 * defines (each at most once, but user properties and subscription ids),
 * and UTF-8 strings (well formed, no U+0000). A client that advertises no
 * topic alias maximum takes no alias, so a PUBLISH needs its topic.
 */
#include "net/mqtt.h"

#include <stdio.h>
#include <string.h>

/* --- decoding */

/* A cursor over one packet; the first fault is kept and ends reading. */
struct cur {
	const unsigned char *p, *e;
	const char	*why;
};

static unsigned
bad(struct cur *c, const char *why)
{
	if (c->why == NULL)
		c->why = why;
	c->p = c->e;
	return 0;
}

static unsigned
get8(struct cur *c)
{
	if (c->p >= c->e)
		return bad(c, "packet ends too soon");
	return *c->p++;
}

static unsigned
get16(struct cur *c)
{
	unsigned v = get8(c) << 8;

	return v | get8(c);
}

static unsigned long
get32(struct cur *c)
{
	unsigned long v = (unsigned long)get16(c) << 16;

	return v | get16(c);
}

/* The shortest form is the only valid one (5.0 1.5.5). */
static unsigned long
getvbi(struct cur *c)
{
	unsigned long v = 0;
	unsigned i, b;

	for (i = 0; i < 4; i++) {
		b = get8(c);
		v |= (unsigned long)(b & 0x7f) << 7 * i;
		if (!(b & 0x80))
			return i > 0 && b == 0 ?
			    bad(c, "variable byte integer not minimal") : v;
	}
	return bad(c, "variable byte integer over 4 bytes");
}

static struct str
getbin(struct cur *c)
{
	struct str s = { "", 0 };
	size_t n = get16(c);

	if ((size_t)(c->e - c->p) < n)
		bad(c, "length past the end of the packet");
	else {
		s.p = (const char *)c->p;
		s.n = n;
		c->p += n;
	}
	return s;
}

static int
utf8_ok(struct str s)
{
	return str_is_utf8(s.p, s.n) && memchr(s.p, 0, s.n) == NULL;
}

static struct str
getstr(struct cur *c)
{
	struct str s = getbin(c);

	if (!utf8_ok(s))
		bad(c, "string not valid UTF-8");
	return s;
}

/* Property value types, by property id (5.0 2.2.2.2). */
enum { PT_NONE, PT_1, PT_2, PT_4, PT_VBI, PT_STR, PT_BIN, PT_PAIR };
static const unsigned char prop_type[] = {
	[0x01] = PT_1, [0x02] = PT_4, [0x03] = PT_STR, [0x08] = PT_STR,
	[0x09] = PT_BIN, [0x0b] = PT_VBI, [0x11] = PT_4, [0x12] = PT_STR,
	[0x13] = PT_2, [0x15] = PT_STR, [0x16] = PT_BIN, [0x17] = PT_1,
	[0x18] = PT_4, [0x19] = PT_1, [0x1a] = PT_STR, [0x1c] = PT_STR,
	[0x1f] = PT_STR, [0x21] = PT_2, [0x22] = PT_2, [0x23] = PT_2,
	[0x24] = PT_1, [0x25] = PT_1, [0x26] = PT_PAIR, [0x27] = PT_4,
	[0x28] = PT_1, [0x29] = PT_1, [0x2a] = PT_1,
};

/* One property's value; keeps what struct mqtt_pkt holds. */
static void
prop_one(struct cur *c, unsigned id, struct mqtt_pkt *p)
{
	unsigned long v = 0;
	struct str s = { "", 0 };

	switch (prop_type[id]) {
	case PT_1:	v = get8(c); break;
	case PT_2:	v = get16(c); break;
	case PT_4:	v = get32(c); break;
	case PT_VBI:	v = getvbi(c); break;
	case PT_STR:	s = getstr(c); break;
	case PT_BIN:	s = getbin(c); break;
	default:	getstr(c); getstr(c); break;
	}
	if ((id == 0x21 || id == 0x27) && v == 0)
		bad(c, "receive maximum or maximum packet size 0");
	switch (id) {
	case 0x11: p->expiry = v; break;
	case 0x12: p->assigned = s; break;
	case 0x13: p->keepalive = v; break;
	case 0x1f: p->reason = s; break;
	case 0x21: p->recv_max = v; break;
	case 0x23: bad(c, "topic alias, which this client does not take");
		break;
	case 0x27: p->max_packet = v; break;
	}
}

/* A property list: its length, then id and value pairs. */
static void
props(struct cur *c, struct mqtt_pkt *p)
{
	struct cur pc;
	unsigned long n = getvbi(c);
	unsigned long long seen = 0;
	unsigned id;

	if ((unsigned long)(c->e - c->p) < n) {
		bad(c, "properties past the end of the packet");
		return;
	}
	pc.p = c->p;
	pc.e = c->p + n;
	pc.why = c->why;
	c->p += n;
	while (pc.p < pc.e) {
		id = getvbi(&pc);
		if (id >= sizeof(prop_type) || prop_type[id] == PT_NONE)
			bad(&pc, "unknown property");
		else if (seen >> id & 1 && id != 0x26 && id != 0x0b)
			bad(&pc, "property given twice");
		else
			prop_one(&pc, id, p);
		seen |= 1ull << (id & 63);
	}
	if (pc.why != NULL)
		bad(c, pc.why);
}

static void
dec_connect(struct cur *c, struct mqtt_pkt *p, unsigned ver)
{
	struct str name = getstr(c);
	unsigned fl;

	if (!str_eqz(name, "MQTT") || get8(c) != ver) {
		bad(c, "not MQTT at this protocol level");
		return;
	}
	p->code = fl = get8(c);	/* the connect flags */
	p->keepalive = get16(c);
	if (fl & 1 || (fl >> 3 & 3) == 3 || (!(fl & 4) && fl & 0x38) ||
	    (ver == MQTT_V311 && fl & 0x40 && !(fl & 0x80)))
		bad(c, "bad connect flags");
	if (ver == MQTT_V5)
		props(c, p);
	p->assigned = getstr(c);	/* the client id */
	if (fl & 4) {
		if (ver == MQTT_V5)
			props(c, &(struct mqtt_pkt){ 0 });
		p->topic = getstr(c);
		p->payload = getbin(c);
		p->qos = fl >> 3 & 3;
		p->retain = fl >> 5 & 1;
	}
	if (fl & 0x80)
		p->user = getstr(c);
	if (fl & 0x40)
		p->pass = getbin(c);
}

static void
dec_connack(struct cur *c, struct mqtt_pkt *p, unsigned ver)
{
	unsigned fl = get8(c);

	if (fl & 0xfe)
		bad(c, "bad connack flags");
	p->present = fl & 1;
	p->code = get8(c);
	/* A 3.1.1 broker answers a 5 CONNECT in its own format. */
	if (ver == MQTT_V5 && c->p < c->e)
		props(c, p);
}

static int
topic_ok(struct str t)
{
	return t.n > 0 && memchr(t.p, '+', t.n) == NULL &&
	    memchr(t.p, '#', t.n) == NULL;
}

static void
dec_publish(struct cur *c, struct mqtt_pkt *p, unsigned ver, unsigned fl)
{
	p->dup = fl >> 3 & 1;
	p->qos = fl >> 1 & 3;
	p->retain = fl & 1;
	if (p->qos == 0 && p->dup)
		bad(c, "DUP set on a QoS 0 PUBLISH");
	p->topic = getstr(c);
	if (!topic_ok(p->topic))
		bad(c, "PUBLISH topic empty or with a wildcard");
	if (p->qos > 0 && (p->id = get16(c)) == 0)
		bad(c, "packet identifier 0");
	if (ver == MQTT_V5)
		props(c, p);
	p->payload.p = (const char *)c->p;
	p->payload.n = c->e - c->p;
	c->p = c->e;
}

/* PUBACK, PUBREC, PUBREL, PUBCOMP; 5 may leave out the code and
 * properties (5.0 3.4.2.1). */
static void
dec_ack(struct cur *c, struct mqtt_pkt *p, unsigned ver)
{
	if ((p->id = get16(c)) == 0)
		bad(c, "packet identifier 0");
	if (ver == MQTT_V5 && c->p < c->e)
		p->code = get8(c);
	if (ver == MQTT_V5 && c->p < c->e)
		props(c, p);
}

/* SUBSCRIBE and UNSUBSCRIBE: topic is the first filter, qos its QoS, nsub
 * the number of filters, payload all of them. */
static void
dec_sub(struct cur *c, struct mqtt_pkt *p, unsigned ver, unsigned type)
{
	struct str f;
	unsigned o;

	if ((p->id = get16(c)) == 0)
		bad(c, "packet identifier 0");
	if (ver == MQTT_V5)
		props(c, p);
	p->payload.p = (const char *)c->p;
	p->payload.n = c->e - c->p;
	do {
		f = getstr(c);
		if (f.n == 0)
			bad(c, "empty topic filter");
		o = type == MQ_SUBSCRIBE ? get8(c) : 0;
		if ((o & 3) == 3 || o & (ver == MQTT_V5 ? 0xc0 : 0xfc) ||
		    (o >> 4 & 3) == 3)
			bad(c, "bad subscription options");
		if (p->nsub++ == 0) {
			p->topic = f;
			p->qos = o & 3;
		}
	} while (c->p < c->e);
}

/* SUBACK and UNSUBACK: one code a filter (3.1.1's UNSUBACK has none). */
static void
dec_suback(struct cur *c, struct mqtt_pkt *p, unsigned ver, unsigned type)
{
	const unsigned char *q;

	if ((p->id = get16(c)) == 0)
		bad(c, "packet identifier 0");
	if (ver == MQTT_V5)
		props(c, p);
	if (ver == MQTT_V311 && type == MQ_UNSUBACK)
		return;
	if (c->p >= c->e) {
		bad(c, "no reason codes");
		return;
	}
	p->subcodes = c->p;
	p->nsub = c->e - c->p;
	p->code = *c->p;
	for (q = c->p; q < c->e; q++)
		if (*q > 2 && *q < 0x80 && type == MQ_SUBACK)
			bad(c, "bad SUBACK code");
	c->p = c->e;
}

/* DISCONNECT and AUTH: 5 may leave out the code and properties. */
static void
dec_end(struct cur *c, struct mqtt_pkt *p, unsigned ver)
{
	if (ver == MQTT_V5 && c->p < c->e)
		p->code = get8(c);
	if (ver == MQTT_V5 && c->p < c->e)
		props(c, p);
}

/* The flags each type must have: PUBLISH's are its own, 0xff. */
static const unsigned char type_flags[16] = {
	[MQ_PUBLISH] = 0xff, [MQ_PUBREL] = 2, [MQ_SUBSCRIBE] = 2,
	[MQ_UNSUBSCRIBE] = 2,
};

/* The fixed header: 0 more bytes needed, <0 malformed, else its size. */
static long
fixed_head(unsigned ver, const unsigned char *b, size_t n,
    unsigned long *rem, const char **why)
{
	unsigned type = b[0] >> 4, fl = b[0] & 15, i;

	*rem = 0;
	if (type == 0 || (type == MQ_AUTH && ver != MQTT_V5))
		*why = "reserved packet type";
	else if (type_flags[type] != 0xff && fl != type_flags[type])
		*why = "wrong fixed header flags";
	else if (type == MQ_PUBLISH && (fl & 6) == 6)
		*why = "PUBLISH with QoS 3";
	if (*why != NULL)
		return -E_PARSE;
	for (i = 1; i < 5 && i < n; i++) {
		*rem |= (unsigned long)(b[i] & 0x7f) << 7 * (i - 1);
		if (b[i] & 0x80)
			continue;
		if (i > 1 && b[i] == 0)
			break;
		return i + 1;
	}
	if (i < n || i == 5) {
		*why = i == 5 ? "remaining length over 4 bytes" :
		    "remaining length not minimal";
		return -E_PARSE;
	}
	return 0;
}

/* see mqtt.h */
long
mqtt_decode(unsigned ver, const void *buf, size_t n, size_t max,
    struct mqtt_pkt *p, const char **why)
{
	const unsigned char *b = buf;
	unsigned long rem;
	long h;
	struct cur c;

	memset(p, 0, sizeof(*p));
	p->topic = p->payload = p->reason = p->assigned = STR("");
	p->user = p->pass = p->topic;
	*why = NULL;
	if (n == 0 || (h = fixed_head(ver, b, n, &rem, why)) == 0)
		return 0;
	if (h < 0)
		return h;
	if (max != 0 && rem + h > max) {
		*why = "packet over the maximum size";
		return -E_LIMIT;
	}
	if (n < rem + h)
		return 0;
	c.p = b + h;
	c.e = c.p + rem;
	c.why = NULL;
	p->type = b[0] >> 4;
	switch (p->type) {
	case MQ_CONNECT:	dec_connect(&c, p, ver); break;
	case MQ_CONNACK:	dec_connack(&c, p, ver); break;
	case MQ_PUBLISH:	dec_publish(&c, p, ver, b[0] & 15); break;
	case MQ_SUBSCRIBE:
	case MQ_UNSUBSCRIBE:	dec_sub(&c, p, ver, p->type); break;
	case MQ_SUBACK:
	case MQ_UNSUBACK:	dec_suback(&c, p, ver, p->type); break;
	case MQ_PINGREQ:
	case MQ_PINGRESP:	break;
	case MQ_DISCONNECT:
	case MQ_AUTH:		dec_end(&c, p, ver); break;
	default:		dec_ack(&c, p, ver); break;
	}
	if (c.p != c.e)
		bad(&c, "extra bytes at the end of the packet");
	if ((*why = c.why) != NULL)
		return -E_PARSE;
	return rem + h;
}

/* --- encoding: the body goes after room for the longest fixed header,
 * which then moves up against it. */

static size_t
enc_open(struct sbuf *sb)
{
	size_t at = sb->len;

	sbuf_add(sb, "\0\0\0\0\0", 5);
	return at;
}

static void
enc_close(struct sbuf *sb, size_t at, unsigned first)
{
	unsigned char h[5];
	size_t rem, k = 1;

	if (sb->err)
		return;
	rem = sb->len - at - 5;
	if (rem > MQTT_MAX_REMAIN) {
		sb->err = -E_LIMIT;
		sbuf_truncate(sb, at);
		return;
	}
	h[0] = first;
	do {
		h[k] = rem & 0x7f;
		if ((rem >>= 7) != 0)
			h[k] |= 0x80;
	} while (h[k++] & 0x80);
	rem = sb->len - at - 5;
	memmove(sb->p + at + k, sb->p + at + 5, rem);
	memcpy(sb->p + at, h, k);
	sbuf_truncate(sb, at + k + rem);
}

static void
put8(struct sbuf *sb, unsigned v)
{
	sbuf_addc(sb, (char)v);
}

static void
put16(struct sbuf *sb, unsigned v)
{
	put8(sb, v >> 8 & 0xff);
	put8(sb, v & 0xff);
}

static void
putbin(struct sbuf *sb, const void *p, size_t n)
{
	if (n > 0xffff && sb->err == 0)
		sb->err = -E_LIMIT;
	put16(sb, n);
	sbuf_add(sb, p, n);
}

static void
putstr(struct sbuf *sb, const char *s)
{
	putbin(sb, s, s ? strlen(s) : 0);
}

/* A 4-byte property (session expiry, maximum packet size). */
static void
put_prop4(struct sbuf *sb, unsigned id, unsigned long v)
{
	put8(sb, id);
	put16(sb, v >> 16 & 0xffff);
	put16(sb, v & 0xffff);
}

/* see mqtt.h */
void
mqtt_enc_connect(struct sbuf *sb, const struct mqtt_opts *o, unsigned ver)
{
	const struct mqtt_will *w = o->will;
	size_t at = enc_open(sb);
	unsigned fl = o->clean ? 2 : 0;
	unsigned long maxin = o->max_in > 0xffffffffu ? 0xffffffffu :
	    o->max_in;

	if (w != NULL)
		fl |= 4 | (w->qos & 3) << 3 | (w->retain ? 0x20 : 0);
	if (o->user != NULL)
		fl |= 0x80;
	if (o->pass != NULL)
		fl |= 0x40;
	putstr(sb, "MQTT");
	put8(sb, ver);
	put8(sb, fl);
	put16(sb, o->keepalive);
	if (ver == MQTT_V5) {
		put8(sb, (o->expiry ? 5 : 0) + (maxin ? 5 : 0));
		if (o->expiry)
			put_prop4(sb, 0x11, o->expiry);
		if (maxin)
			put_prop4(sb, 0x27, maxin);
	}
	putstr(sb, o->client_id);
	if (w != NULL) {
		if (ver == MQTT_V5)
			put8(sb, 0);
		putstr(sb, w->topic);
		putbin(sb, w->msg, w->n);
	}
	if (o->user != NULL)
		putstr(sb, o->user);
	if (o->pass != NULL)
		putbin(sb, o->pass, o->pass_len);
	enc_close(sb, at, MQ_CONNECT << 4);
}

/* see mqtt.h */
void
mqtt_enc_publish(struct sbuf *sb, unsigned ver, const char *topic,
    const void *msg, size_t n, unsigned qos, unsigned retain, unsigned dup,
    unsigned id)
{
	size_t at = enc_open(sb);

	putstr(sb, topic);
	if (qos > 0)
		put16(sb, id);
	if (ver == MQTT_V5)
		put8(sb, 0);
	sbuf_add(sb, msg, n);
	enc_close(sb, at, MQ_PUBLISH << 4 | (dup && qos ? 8 : 0) |
	    (qos & 3) << 1 | (retain ? 1 : 0));
}

/* see mqtt.h */
void
mqtt_enc_subscribe(struct sbuf *sb, unsigned ver, unsigned id,
    const char *const *filters, unsigned n, unsigned qos)
{
	size_t at = enc_open(sb);
	unsigned i;

	put16(sb, id);
	if (ver == MQTT_V5)
		put8(sb, 0);
	for (i = 0; i < n; i++) {
		putstr(sb, filters[i]);
		put8(sb, qos & 3);
	}
	enc_close(sb, at, MQ_SUBSCRIBE << 4 | 2);
}

/* see mqtt.h */
void
mqtt_enc_ack(struct sbuf *sb, unsigned ver, unsigned type, unsigned id,
    unsigned code)
{
	size_t at = enc_open(sb);

	put16(sb, id);
	if (ver == MQTT_V5 && code != 0)
		put8(sb, code);
	enc_close(sb, at, type << 4 | (type == MQ_PUBREL ? 2 : 0));
}

/* see mqtt.h */
void
mqtt_enc_bare(struct sbuf *sb, unsigned ver, unsigned type)
{
	size_t at = enc_open(sb);

	enc_close(sb, at, type << 4);
}

/* --- the session */

/* Words for reason codes, each a code byte and its words: 3.1.1's
 * CONNACK return codes are 1-5; 5's codes that end a connection are 0x80
 * and up. One string: no table of pointers. */
static const char reasons[] =
	"\x01" "unacceptable protocol version\0"
	"\x02" "client identifier rejected\0"
	"\x03" "server unavailable\0"
	"\x04" "bad user name or password\0"
	"\x05" "not authorized\0"
	"\x80" "unspecified error\0"
	"\x81" "malformed packet\0"
	"\x82" "protocol error\0"
	"\x83" "implementation specific error\0"
	"\x84" "unsupported protocol version\0"
	"\x85" "client identifier not valid\0"
	"\x86" "bad user name or password\0"
	"\x87" "not authorized\0"
	"\x88" "server unavailable\0"
	"\x89" "server busy\0"
	"\x8a" "banned\0"
	"\x8b" "server shutting down\0"
	"\x8c" "bad authentication method\0"
	"\x8d" "keep alive timeout\0"
	"\x8e" "session taken over: another client connected with this client id\0"
	"\x8f" "topic filter invalid\0"
	"\x90" "topic name invalid\0"
	"\x93" "receive maximum exceeded\0"
	"\x95" "packet too large\0"
	"\x97" "quota exceeded\0"
	"\x98" "administrative action\0"
	"\x99" "payload format invalid\0"
	"\x9a" "retain not supported\0"
	"\x9b" "QoS not supported\0"
	"\x9c" "use another server\0"
	"\x9d" "server moved\0"
	"\x9e" "shared subscriptions not supported\0"
	"\x9f" "connection rate exceeded\0"
	"\xa0" "maximum connect time\0"
	"\xa2" "wildcard subscriptions not supported\0";

static const char *
reason_words(unsigned code)
{
	const char *s;

	for (s = reasons; *s != '\0'; s += strlen(s) + 1)
		if ((unsigned char)*s == code)
			return s + 1;
	return "reason unknown";
}

/* The session ends: once, with words, and MQE_DOWN. */
static int
down(struct mqtt *m, int err, const struct mqtt_pkt *p, const char *what,
    const char *detail)
{
	if (m->st == MQS_DOWN || m->st == MQS_IDLE)
		return err;
	m->st = MQS_DOWN;
	m->nids = m->inflight = 0;
	snprintf(m->why, sizeof(m->why), "%s%s%s", what,
	    detail && *detail ? ": " : "", detail ? detail : "");
	m->fn(m->arg, m, MQE_DOWN, p);
	return err;
}

/* A broker's refusal or DISCONNECT, with its code and reason string. */
static int
down_code(struct mqtt *m, const struct mqtt_pkt *p, const char *what)
{
	char d[96];

	snprintf(d, sizeof(d), "%s (0x%02x)%s%.*s", reason_words(p->code),
	    p->code, p->reason.n ? ", " : "", (int)MIN(p->reason.n, 40),
	    p->reason.p);
	return down(m, p->type == MQ_DISCONNECT ? -E_PROTO : -E_DENIED, p,
	    what, d);
}

/* see mqtt.h */
void
mqtt_init(struct mqtt *m, const struct mqtt_opts *o, mqtt_fn *fn,
    void *arg)
{
	memset(m, 0, sizeof(*m));
	m->o = *o;
	if (m->o.max_in == 0)
		m->o.max_in = MQTT_DEFAULT_MAX_IN;
	m->fn = fn;
	m->arg = arg;
	sbuf_init(&m->out, NULL, 0);
	m->next_id = 1;
}

/* see mqtt.h */
void
mqtt_free(struct mqtt *m)
{
	sbuf_release(&m->out);
	mem_free(m->in);
	mem_free(m->ids);
	m->in = NULL;
	m->ids = NULL;
	m->in_cap = m->in_len = m->ids_cap = m->nids = 0;
}

/* see mqtt.h */
void
mqtt_begin(struct mqtt *m, long long now_ms)
{
	if (m->out.cap > (64u << 10))
		sbuf_release(&m->out);
	sbuf_init(&m->out, NULL, 0);
	m->out_off = m->in_len = m->nids = m->inflight = m->wrote = 0;
	m->ver = m->o.ver ? m->o.ver : m->fallback ? MQTT_V311 : MQTT_V5;
	m->send_max = MQTT_MAX_INFLIGHT;
	m->max_out = MQTT_MAX_REMAIN + 5ul;
	m->keepalive = m->o.keepalive;
	m->last_in = m->last_out = now_ms;
	m->ping_at = 0;
	m->why[0] = '\0';
	m->st = MQS_CONNECTING;
	mqtt_enc_connect(&m->out, &m->o, m->ver);
}

static int
on_connack(struct mqtt *m, const struct mqtt_pkt *p)
{
	if (m->st != MQS_CONNECTING)
		return down(m, -E_PROTO, NULL, "protocol error",
		    "a second CONNACK");
	/* A 3.1.1 broker refuses level 5 with its return code 1. */
	if (p->code != 0 && m->o.ver == 0 && m->ver == MQTT_V5 &&
	    (p->code == 1 || p->code == 0x84)) {
		m->fallback = 1;
		return down(m, -E_PROTO, p, "broker refused MQTT 5",
		    "trying 3.1.1 next");
	}
	if (p->code != 0)
		return down_code(m, p, "broker refused the connection");
	m->st = MQS_UP;
	if (p->keepalive)
		m->keepalive = p->keepalive;
	if (p->recv_max)
		m->send_max = MIN(p->recv_max, MQTT_MAX_INFLIGHT);
	if (p->max_packet)
		m->max_out = p->max_packet;
	m->fn(m->arg, m, MQE_UP, p);
	return 0;
}

/* Take id out of the set in flight: 1 when it was there. */
static int
id_drop(struct mqtt *m, unsigned key)
{
	unsigned i;

	for (i = 0; i < m->nids; i++)
		if (m->ids[i] == key) {
			m->ids[i] = m->ids[--m->nids];
			return 1;
		}
	return 0;
}

static int
on_packet(struct mqtt *m, const struct mqtt_pkt *p)
{
	if (p->type == MQ_CONNACK)
		return on_connack(m, p);
	if (m->st != MQS_UP)
		return down(m, -E_PROTO, NULL, "protocol error",
		    "a packet before CONNACK");
	switch (p->type) {
	case MQ_PUBLISH:
		if (p->qos > 1)
			return down(m, -E_PROTO, NULL, "protocol error",
			    "a QoS 2 PUBLISH, which no subscription asked for");
		m->fn(m->arg, m, MQE_MSG, p);
		return 0;
	case MQ_PUBACK:
		if (id_drop(m, p->id)) {
			m->inflight--;
			m->fn(m->arg, m, MQE_ACKED, p);
		}
		return 0;		/* an ack of an earlier connection's */
	case MQ_SUBACK:
		if (id_drop(m, p->id | 1u << 16))
			m->fn(m->arg, m, MQE_SUBACK, p);
		return 0;
	case MQ_PINGRESP:
	case MQ_UNSUBACK:
		return 0;
	case MQ_DISCONNECT:
		return down_code(m, p, "broker disconnected");
	}
	return down(m, -E_PROTO, NULL, "protocol error",
	    "a packet type a broker does not send");
}

/* Keep the bytes that are not a whole packet yet. */
static int
in_keep(struct mqtt *m, const void *buf, size_t n)
{
	unsigned char *np;
	size_t cap = m->in_cap ? m->in_cap : 1024;

	while (cap < m->in_len + n)
		cap *= 2;
	if (cap != m->in_cap) {
		if ((np = mem_realloc(m->in, cap)) == NULL)
			return -E_NOMEM;
		m->in = np;
		m->in_cap = cap;
	}
	memcpy(m->in + m->in_len, buf, n);
	m->in_len += n;
	return 0;
}

/* see mqtt.h */
int
mqtt_feed(struct mqtt *m, const void *buf, size_t n, long long now_ms)
{
	struct mqtt_pkt p;
	const char *why;
	size_t off = 0;
	long r = 0;
	char d[64];

	if (m->st != MQS_CONNECTING && m->st != MQS_UP)
		return -E_INVAL;
	m->last_in = now_ms;
	if (in_keep(m, buf, n) < 0)
		return down(m, -E_NOMEM, NULL, "out of memory", NULL);
	while (m->st != MQS_DOWN && off < m->in_len) {
		r = mqtt_decode(m->ver, m->in + off, m->in_len - off,
		    m->o.max_in, &p, &why);
		if (r == -E_LIMIT) {
			snprintf(d, sizeof(d), "over %zu bytes", m->o.max_in);
			return down(m, r, NULL, "broker sent a packet", d);
		}
		if (r < 0)
			return down(m, r, NULL, "malformed packet from the "
			    "broker", why);
		if (r == 0)
			break;
		off += r;
		if ((r = on_packet(m, &p)) < 0)
			return r;
	}
	if (m->st == MQS_DOWN)
		return -E_PROTO;	/* the user ended it meanwhile */
	memmove(m->in, m->in + off, m->in_len - off);
	m->in_len -= off;
	return 0;
}

/* see mqtt.h */
size_t
mqtt_out(const struct mqtt *m, const void **p)
{
	*p = m->out.p + m->out_off;
	return m->out.len - m->out_off;
}

/* see mqtt.h */
void
mqtt_sent(struct mqtt *m, size_t n)
{
	m->out_off += MIN(n, m->out.len - m->out_off);
	if (m->out_off == m->out.len) {
		sbuf_truncate(&m->out, 0);
		m->out_off = 0;
	}
	m->wrote |= n > 0;
}

/* see mqtt.h */
long
mqtt_tick(struct mqtt *m, long long now_ms)
{
	long long ka = m->keepalive * 1000ll, quiet, ping;

	if (m->wrote)
		m->last_out = now_ms;
	m->wrote = 0;
	if (m->st != MQS_CONNECTING && m->st != MQS_UP)
		return -1;
	quiet = m->last_in + (ka ? ka * 3 / 2 : 30000) - now_ms;
	if (quiet <= 0)
		return down(m, -E_TIMEOUT, NULL, m->st == MQS_UP ?
		    "broker silent past the keepalive" : "no CONNACK",
		    "timed out");
	if (m->st == MQS_CONNECTING || ka == 0)
		return m->st == MQS_CONNECTING ? quiet : -1;
	if ((ping = m->last_out + ka - now_ms) <= 0) {
		mqtt_enc_bare(&m->out, m->ver, MQ_PINGREQ);
		m->last_out = m->ping_at = now_ms;
		ping = ka;
	}
	return MIN(quiet, ping);
}

/* Queue one packet encoded by the caller after `at`: a failure takes it
 * back out, and the buffer stays usable. */
static long
queued(struct mqtt *m, size_t at)
{
	int e = m->out.err;

	if (e == 0 && m->out.len - at > m->max_out)
		e = -E_LIMIT;
	if (e != 0) {
		m->out.err = 0;
		sbuf_truncate(&m->out, at);
	}
	return e;
}

/* A packet id not in flight; 0 when too many are. */
static unsigned
id_new(struct mqtt *m, unsigned flag)
{
	unsigned *np, i, id;

	if (m->nids == m->ids_cap) {
		if (m->ids_cap >= 2 * MQTT_MAX_INFLIGHT ||
		    (np = mem_realloc(m->ids, (m->ids_cap + 16) *
		    sizeof(*np))) == NULL)
			return 0;
		m->ids = np;
		m->ids_cap += 16;
	}
	for (id = m->next_id;; id = id % 65535 + 1) {
		for (i = 0; i < m->nids && (m->ids[i] & 0xffff) != id; i++)
			;
		if (i == m->nids)
			break;
	}
	m->next_id = id % 65535 + 1;
	m->ids[m->nids++] = id | flag;
	return id;
}

/* see mqtt.h */
long
mqtt_publish(struct mqtt *m, const char *topic, const void *msg, size_t n,
    unsigned qos, unsigned retain, unsigned dup)
{
	struct str t = str_z(topic);
	size_t at = m->out.len;
	unsigned id = 0;
	long e;

	if (m->st != MQS_UP || qos > 1 || !topic_ok(t) || !utf8_ok(t))
		return -E_INVAL;
	if (qos == 1 && m->inflight >= m->send_max)
		return -E_BUSY;
	if (qos == 1 && (id = id_new(m, 0)) == 0)
		return -E_NOMEM;
	mqtt_enc_publish(&m->out, m->ver, topic, msg, n, qos, retain, dup,
	    id);
	if ((e = queued(m, at)) < 0) {
		if (id_drop(m, id))
			m->next_id = id;
		return e;
	}
	m->inflight += qos;
	return id;
}

/* see mqtt.h */
long
mqtt_subscribe(struct mqtt *m, const char *const *filters, unsigned n)
{
	size_t at = m->out.len;
	unsigned id;
	long e;

	if (m->st != MQS_UP || n == 0)
		return -E_INVAL;
	if ((id = id_new(m, 1u << 16)) == 0)
		return -E_BUSY;
	mqtt_enc_subscribe(&m->out, m->ver, id, filters, n, 1);
	if ((e = queued(m, at)) < 0) {
		id_drop(m, id | 1u << 16);
		return e;
	}
	return id;
}

/* see mqtt.h */
void
mqtt_ack(struct mqtt *m, unsigned id)
{
	size_t at = m->out.len;

	if (m->st == MQS_UP && id != 0) {
		mqtt_enc_ack(&m->out, m->ver, MQ_PUBACK, id, 0);
		queued(m, at);
	}
}

/* see mqtt.h */
void
mqtt_disconnect(struct mqtt *m)
{
	if (m->st != MQS_UP && m->st != MQS_CONNECTING)
		return;
	mqtt_enc_bare(&m->out, m->ver, MQ_DISCONNECT);
	down(m, 0, NULL, "disconnected by this client", NULL);
}

/* see mqtt.h */
void
mqtt_lost(struct mqtt *m, int err, const char *why)
{
	down(m, err, NULL, "connection lost", why);
}

/* see mqtt.h */
const char *
mqtt_why(const struct mqtt *m)
{
	return m->why[0] ? m->why : "not connected";
}
