/* tls.h - TLS client over a net_conn: the only user of BearSSL.
 *
 * BearSSL 0.6 speaks TLS 1.0-1.2; skillbox enables TLS 1.2 with ECDHE and
 * AEAD suites only. The server certificate is checked against the trust
 * anchors and the host name (DNS names only: BearSSL does not match IP
 * addresses). Boards often boot with the clock at 1970: the time used for
 * certificate checks is the later of the system clock and the build date.
 */
#ifndef TLS_H
#define TLS_H

#include "arena.h"
#include "base.h"
#include "net.h"

struct tls_anchors;
struct tls_conn;

/* Load trust anchors from a PEM bundle, or from every *.pem / *.crt file of
 * a folder. Anchors live in `a`. Returns 0, -E_NOENT (no such path),
 * -E_PARSE (no certificate in it), -E_IO or -E_NOMEM. *count may be NULL. */
int	tls_anchors_load(struct arena *a, const char *path,
	    struct tls_anchors **out, unsigned *count);

/* Anchor i (a const br_x509_trust_anchor *, for tests that hold BearSSL's
 * header), or NULL past the last. */
const void *tls_anchor_at(const struct tls_anchors *ta, size_t i);

/* The first of the usual system bundle locations that exists, or NULL. */
const char *tls_default_ca(void);

/* A connection object (about 22 KiB with its buffers) in `a`, or NULL. */
struct tls_conn *tls_new(struct arena *a);

/* Handshake with `server_name` (SNI and certificate name). Returns 0 or
 * -E_TLS / -E_TIMEOUT / -E_IO, with tls_why() in words. */
int	tls_connect(struct tls_conn *t, const struct tls_anchors *ta,
	    struct net_conn *net, const char *server_name);

/* >0 bytes, 0 after the peer's close_notify, or a negative -E_*. A
 * connection that ends without close_notify is -E_TLS ("truncated"). */
long	tls_read(struct tls_conn *t, void *buf, size_t n);

/* Write and flush everything: 0 or a negative -E_*. */
int	tls_write(struct tls_conn *t, const void *buf, size_t n);

/* Send close_notify (best effort). */
void	tls_close(struct tls_conn *t);

/* Words for the last failure, and BearSSL's error code. */
const char *tls_why(const struct tls_conn *t);
int	tls_error(const struct tls_conn *t);

/* The time certificate checks use (seconds since 1970). */
long long tls_check_time(void);

#endif
