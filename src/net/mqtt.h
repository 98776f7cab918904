/* mqtt.h - an MQTT client: MQTT 5.0, and 3.1.1 for a broker without 5.
 *
 * Three parts, each usable without the ones after it:
 *
 *   the codec    mqtt_decode and mqtt_enc_*: one packet at a time, no
 *                state, no I/O (what the fuzz harness drives)
 *   the session  struct mqtt: one connection from CONNECT to its end:
 *                bytes in (mqtt_feed), bytes out (mqtt_out, mqtt_sent),
 *                keepalive (mqtt_tick), QoS 1 both ways. No I/O.
 *   the link     struct mqtt_link: a session over a socket, mqtt:// or
 *                mqtts:// (BearSSL, a CA, optionally a client certificate),
 *                non-blocking, driven by the caller's poll(); it connects
 *                again after a loss, with backoff and jitter.
 *
 * Only QoS 0 and 1 are used: subscriptions ask for 1, so a broker never
 * sends QoS 2. Delivery across reconnects is the user's: a message is
 * acknowledged (mqtt_ack) only once the user has it safe, and what the
 * user publishes at QoS 1 is theirs to publish again until MQE_ACKED.
 */
#ifndef MQTT_H
#define MQTT_H

#include <poll.h>
#include <stddef.h>

#include "base/arena.h"
#include "base/base.h"
#include "base/str.h"

#define MQTT_V311	4		/* protocol level of 3.1.1 */
#define MQTT_V5		5
#define MQTT_PORT	1883
#define MQTT_TLS_PORT	8883
#define MQTT_MAX_REMAIN	268435455u	/* the largest remaining length */

enum mqtt_type {
	MQ_CONNECT = 1, MQ_CONNACK, MQ_PUBLISH, MQ_PUBACK, MQ_PUBREC,
	MQ_PUBREL, MQ_PUBCOMP, MQ_SUBSCRIBE, MQ_SUBACK, MQ_UNSUBSCRIBE,
	MQ_UNSUBACK, MQ_PINGREQ, MQ_PINGRESP, MQ_DISCONNECT, MQ_AUTH
};

/* One decoded packet. Slices point into the decoder's input. */
struct mqtt_pkt {
	unsigned	 type;		/* MQ_* */
	unsigned	 qos, retain, dup;	/* PUBLISH */
	unsigned	 id;		/* packet identifier, 0 none */
	unsigned	 code;		/* reason code (3.1.1: return code) of
					 * CONNACK, PUBACK, DISCONNECT; SUBACK:
					 * its first; CONNECT: its flags */
	unsigned	 present;	/* CONNACK: the session was kept */
	struct str	 topic, payload;	/* PUBLISH */
	struct str	 reason;	/* 5: the reason string, or empty */
	/* 5, CONNACK: what the broker says; 0 when it did not say */
	unsigned long	 expiry;	/* session expiry it grants, s */
	unsigned	 keepalive;	/* server keep alive, s */
	unsigned	 recv_max;	/* receive maximum */
	unsigned long	 max_packet;	/* maximum packet size */
	struct str	 assigned;	/* assigned client identifier */
	const unsigned char *subcodes;	/* SUBACK: one code a filter */
	unsigned	 nsub;		/* SUBACK: codes; SUBSCRIBE: filters
					 * (topic the first, qos its QoS) */
	/* CONNECT (decoded for tests and the fuzzer): assigned is the
	 * client id; topic, payload, qos and retain the will's */
	struct str	 user, pass;
};

/* Decode the packet at the start of buf[0..n) as protocol level ver.
 * Returns the bytes it took (>0), 0 when more bytes are needed, -E_LIMIT
 * as soon as the fixed header announces a packet over max bytes, or
 * -E_PARSE for a malformed packet; *why says what, in words. */
long	mqtt_decode(unsigned ver, const void *buf, size_t n, size_t max,
	    struct mqtt_pkt *p, const char **why);

/* --- encoders: each appends one packet to sb (its sticky error says
 * when it did not fit). */

struct mqtt_will {
	const char	*topic;
	const void	*msg;
	size_t		 n;
	unsigned	 qos, retain;
};

struct mqtt_opts {
	unsigned	 ver;		/* MQTT_V5 or MQTT_V311; 0: 5, and 3.1.1
					 * when the broker refuses 5 */
	const char	*client_id;
	const char	*user;		/* NULL: none */
	const char	*pass;		/* NULL: none */
	size_t		 pass_len;
	unsigned	 keepalive;	/* seconds, 0 none */
	unsigned	 clean;		/* 1 clean start; 0 resume the session */
	unsigned long	 expiry;	/* 5: session expiry interval, s */
	const struct mqtt_will *will;	/* NULL: none */
	size_t		 max_in;	/* the largest packet taken; 5 tells
					 * the broker (the session: 0 is
					 * MQTT_DEFAULT_MAX_IN) */
};

void	mqtt_enc_connect(struct sbuf *sb, const struct mqtt_opts *o,
	    unsigned ver);
void	mqtt_enc_publish(struct sbuf *sb, unsigned ver, const char *topic,
	    const void *msg, size_t n, unsigned qos, unsigned retain,
	    unsigned dup, unsigned id);
/* One SUBSCRIBE for n filters, each at qos. A filter "$share/G/T" is a
 * shared subscription (5 only). */
void	mqtt_enc_subscribe(struct sbuf *sb, unsigned ver, unsigned id,
	    const char *const *filters, unsigned n, unsigned qos);
/* PUBACK (and the other acks that carry an id and a code). */
void	mqtt_enc_ack(struct sbuf *sb, unsigned ver, unsigned type,
	    unsigned id, unsigned code);
/* PINGREQ, PINGRESP, or DISCONNECT with reason 0 (no will). */
void	mqtt_enc_bare(struct sbuf *sb, unsigned ver, unsigned type);

/* --- the session */

enum mqtt_state { MQS_IDLE, MQS_CONNECTING, MQS_UP, MQS_DOWN };

/* What the session tells its user, with the packet it came with:
 *   MQE_UP      CONNACK accepted (p->present, p->expiry, ...)
 *   MQE_MSG     a PUBLISH: QoS 0 needs nothing; QoS 1 needs mqtt_ack(p->id)
 *               once the message is safe (it is delivered again until
 *               then, after a reconnect, with p->dup set)
 *   MQE_ACKED   PUBACK of the user's QoS 1 publish p->id, p->code its
 *               reason (>= 0x80: the broker refused it: not authorized,
 *               ...: it is not delivered, and must not be sent again)
 *   MQE_SUBACK  p->subcodes: >= 0x80 a refused filter
 *   MQE_DOWN    the session ended (p NULL or the broker's DISCONNECT);
 *               mqtt_why() says why */
enum mqtt_ev { MQE_UP, MQE_MSG, MQE_ACKED, MQE_SUBACK, MQE_DOWN };

struct mqtt;
typedef void mqtt_fn(void *arg, struct mqtt *m, enum mqtt_ev ev,
    const struct mqtt_pkt *p);

struct mqtt {
	struct mqtt_opts o;
	unsigned	 ver;		/* the level in use */
	enum mqtt_state	 st;
	mqtt_fn		*fn;
	void		*arg;
	struct sbuf	 out;		/* bytes to write, heap */
	size_t		 out_off;
	unsigned char	*in;		/* bytes read, not yet a whole packet */
	size_t		 in_len, in_cap;
	unsigned	 next_id;
	unsigned	 inflight;	/* our QoS 1 publishes not acked */
	unsigned	 send_max;	/* the broker's receive maximum */
	unsigned long	 max_out;	/* the broker's maximum packet size */
	unsigned	 keepalive;	/* in use (the broker may set it) */
	long long	 last_in, last_out, ping_at;
	unsigned	 fallback;	/* 5 was refused: next time 3.1.1 */
	char		 why[128];
	unsigned	*ids;		/* ids in flight (SUBSCRIBE: | 1 << 16) */
	unsigned	 nids, ids_cap;
	unsigned	 wrote;		/* bytes went out since the last tick */
};

/* Our own bound on QoS 1 publishes in flight, whatever the broker takes. */
#define MQTT_MAX_INFLIGHT	256u
/* The largest packet taken when mqtt_opts.max_in is 0. */
#define MQTT_DEFAULT_MAX_IN	(256u << 10)

/* Make m ready; o's strings must outlive m. The buffers come from
 * mem_realloc and go at mqtt_free. */
void	mqtt_init(struct mqtt *m, const struct mqtt_opts *o, mqtt_fn *fn,
	    void *arg);
void	mqtt_free(struct mqtt *m);
/* A new connection: forget the old one's bytes, queue CONNECT. */
void	mqtt_begin(struct mqtt *m, long long now_ms);
/* Bytes read from the connection: decodes and reports each whole packet.
 * 0, or <0 when the connection must end (malformed or oversized packet,
 * a protocol error, a refused CONNACK, DISCONNECT): then MQE_DOWN was
 * reported and mqtt_why() says why. */
int	mqtt_feed(struct mqtt *m, const void *buf, size_t n, long long now_ms);
/* The bytes waiting to be written, and how many were written. */
size_t	mqtt_out(const struct mqtt *m, const void **p);
void	mqtt_sent(struct mqtt *m, size_t n);
/* Timers: PINGREQ when the connection was quiet for keepalive; a broker
 * silent for 1.5 keepalives (or a CONNACK not come in that time, 30 s
 * without a keepalive) ends the session (-E_TIMEOUT, MQE_DOWN reported).
 * Else the ms until the next call is due (-1: none). Bytes count as sent
 * at the first tick after mqtt_sent. */
long	mqtt_tick(struct mqtt *m, long long now_ms);
/* Publish (only while MQS_UP): the packet id for QoS 1, 0 for QoS 0, or
 * <0: -E_BUSY (the broker's receive maximum of QoS 1 publishes are in
 * flight: wait for MQE_ACKED), -E_LIMIT (over the broker's maximum packet
 * size), -E_NOMEM, -E_INVAL (not up). dup: this is a publish sent before,
 * on an earlier connection. */
long	mqtt_publish(struct mqtt *m, const char *topic, const void *msg,
	    size_t n, unsigned qos, unsigned retain, unsigned dup);
/* Subscribe to n filters at QoS 1: the packet id, or <0 as publish. */
long	mqtt_subscribe(struct mqtt *m, const char *const *filters, unsigned n);
/* Acknowledge the user's QoS 1 message id (from MQE_MSG). */
void	mqtt_ack(struct mqtt *m, unsigned id);
/* Queue DISCONNECT (normal: the broker does not send the will). */
void	mqtt_disconnect(struct mqtt *m);
/* The connection under the session ended (the link's: closed, reset, TLS
 * failed): MQE_DOWN with err and why, unless it was down already. */
void	mqtt_lost(struct mqtt *m, int err, const char *why);
const char *mqtt_why(const struct mqtt *m);

/* --- the link */

struct mqtt_url {
	int		 tls;		/* mqtts:// */
	char		 host[256];
	unsigned	 port;
};

/* mqtt://HOST[:PORT] or mqtts://HOST[:PORT] (IPv6 in brackets), no path,
 * no user info: 0 or -E_INVAL. */
int	mqtt_url_parse(const char *url, struct mqtt_url *u);

struct mqtt_link_opts {
	const char	*url;
	const char	*ca;		/* mqtts: PEM bundle or folder; NULL:
					 * the system's */
	const char	*cert, *key;	/* mqtts: client certificate; NULL none */
	unsigned	 connect_ms;	/* to connect and handshake */
	unsigned	 backoff_min_ms, backoff_max_ms;	/* between tries */
};

struct addrinfo;
struct tls_anchors;
struct tls_cred;
struct tls_cli;

struct mqtt_link {
	struct mqtt	 m;
	struct mqtt_url	 u;
	struct mqtt_link_opts lo;
	int		 fd;		/* -1: not connected */
	int		 phase;		/* waiting to try, connecting, up (TLS
					 * handshake and CONNACK included) */
	struct tls_anchors *ta;
	struct tls_cred	*cred;
	struct tls_cli	*tls;
	long long	 retry_at, phase_end;
	unsigned	 backoff;	/* ms, doubled after each failed try */
	unsigned	 tries;		/* failed tries since the last session */
	long long	 up_at;		/* when the session came up; 0: none */
	char		 why[160];
	mqtt_fn		*fn;		/* the user's */
	void		*arg;
	struct addrinfo	*ai, *ai_cur;	/* the addresses of this try */
	struct addrinfo	*ai_try;	/* the one being connected to */
	long long	 due;		/* the session's timers */
	unsigned	 rnd;		/* jitter */
};

/* Parse the URL and load the CA and client certificate (in a): errors here
 * are the configuration's, with words in why[wn]: -E_INVAL, -E_NOENT,
 * -E_PARSE, -E_NOMEM. The first try is due at once. */
int	mqtt_link_init(struct mqtt_link *l, struct arena *a,
	    const struct mqtt_link_opts *lo, const struct mqtt_opts *o,
	    mqtt_fn *fn, void *arg, char *why, size_t wn);
/* Fill pfd for the next poll() (fd -1 when there is nothing to wait on)
 * and return the longest the poll may wait, in ms. */
int	mqtt_link_poll(struct mqtt_link *l, struct pollfd *pfd,
	    long long now_ms);
/* After poll(): revents for the fd (0 when it timed out). Connects when a
 * try is due (the name lookup blocks, bounded by the resolver), reads,
 * writes, ticks, and after a loss schedules the next try. */
void	mqtt_link_run(struct mqtt_link *l, short revents, long long now_ms);
/* 1 while the session is up. */
int	mqtt_link_up(const struct mqtt_link *l);
/* Disconnect normally (flushing DISCONNECT for up to ms) and close; not
 * from inside the callback. */
void	mqtt_link_close(struct mqtt_link *l, int ms);

#endif
