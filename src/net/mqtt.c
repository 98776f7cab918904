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
	if (c->p >= c->e)
		bad(c, "no reason codes");
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
