/* tls.h - TLS client over a net_conn: the only user of BearSSL.
 *
 * BearSSL 0.6 speaks TLS 1.0-1.2; skillbox enables TLS 1.2 with ECDHE and
 * AEAD suites only. The server certificate is checked against the trust
 * anchors and the host name (DNS names only: BearSSL does not match IP
 * addresses; the non-blocking client below matches them itself). Boards often boot with the clock at 1970: the time used for
 * certificate checks is the later of the system clock and the build date.
 */
#ifndef TLS_H
#define TLS_H

#include "base/arena.h"
#include "base/base.h"
#include "net/net.h"

struct tls_anchors;
struct tls_conn;

/* Load trust anchors from a PEM bundle, or from every *.pem / *.crt file of
 * a folder. Anchors live in `a`. Returns 0, -E_NOENT (no such path),
 * -E_PARSE (no certificate in it), -E_IO or -E_NOMEM. *count may be NULL. */
int	tls_anchors_load(struct arena *a, const char *path,
	    struct tls_anchors **out, unsigned *count);

/* The same, loaded once per process: the first bundle loaded this way is
 * kept (in `perm`, which must live as long as the process) and given
 * again for the same path, so the model client, a server's workers and
 * https hooks parse it once. Another path is loaded each time. */
int	tls_anchors_shared(struct arena *perm, const char *path,
	    struct tls_anchors **out);

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

/* --- the server side (skillbox serve): compiled in every build, linked
 * only when serve calls it (SERVE_TLS=1).
 *
 * One certificate chain and its key, loaded once; then one tls_srv per
 * connection over a non-blocking socket, driven by the caller's poll(). */
struct tls_cred;
struct tls_srv;

/* Load a PEM chain (leaf first, at most 8) and a PEM private key: EC
 * (P-256/384/521) or RSA, as SEC1, PKCS#1 or unencrypted PKCS#8; the key
 * must belong to the leaf. 0, or -E_* with the reason in why[wn]. */
int	tls_cred_load(struct arena *a, const char *cert, const char *key,
	    struct tls_cred **out, char *why, size_t wn);

/* The same, naming the files as the configuration does ("mqtt.cert"). */
int	tls_cred_load_as(struct arena *a, const char *cert, const char *key,
	    const char *cert_name, const char *key_name, struct tls_cred **out,
	    char *why, size_t wn);

/* The kind of a DER private key as tls_cred_load reads it: 2 EC, 1 RSA
 * (BearSSL's BR_KEYTYPE_*), 0 none it can use. For tests. */
int	tls_key_kind(const void *der, size_t n);

/* "RSA", "EC P-256", ... for the log. */
const char *tls_cred_kind(const struct tls_cred *cr);

/* Forget the key (a forked worker has no use for it). */
void	tls_cred_wipe(struct tls_cred *cr);

/* Bytes a connection needs (about 24 KiB: one 16 KiB record in). */
size_t	tls_srv_size(void);

/* Make t (tls_srv_size() bytes) ready for a new client's handshake. */
void	tls_srv_start(struct tls_srv *t, const struct tls_cred *cr);

/* Read plaintext, handshaking first as needed: >0 bytes, 0 nothing yet
 * (the socket would block), -1 the connection is over, -2 the client
 * speaks plain HTTP (its first byte is a capital letter). */
long	tls_srv_read(struct tls_srv *t, int fd, void *buf, size_t n);

/* Take up to n bytes of plaintext and send what records it can: the bytes
 * taken (0 when the socket is full), or -1 when the connection is over. */
long	tls_srv_write(struct tls_srv *t, int fd, const void *buf, size_t n);

/* Records wait for the socket (poll for POLLOUT); plaintext waits to be
 * read without the socket being readable. */
int	tls_srv_unsent(const struct tls_srv *t);
int	tls_srv_pending(const struct tls_srv *t);

/* Send close_notify, as far as the socket takes it now. */
void	tls_srv_close(struct tls_srv *t, int fd);

/* Why the connection failed, in words; NULL when the client just left. */
const char *tls_srv_why(struct tls_srv *t);

/* --- a non-blocking client over the caller's socket (the MQTT link),
 * driven by poll() as tls_srv is: the same profile and checks as
 * tls_connect. */
struct tls_cli;

/* Bytes a connection needs (about 26 KiB). */
size_t	tls_cli_size(void);

/* Make t (tls_cli_size() bytes) ready to handshake with server_name (SNI
 * and the certificate's name), presenting cr's certificate when the
 * server asks for one (cr NULL: none). An IP address as server_name must
 * be an iPAddress of the certificate's subjectAltName (and goes without
 * SNI). 0 or -E_TLS. */
int	tls_cli_start(struct tls_cli *t, const struct tls_anchors *ta,
	    const char *server_name, const struct tls_cred *cr);

/* Read plaintext, handshaking first as needed: >0 bytes, 0 nothing yet
 * (the socket would block), -1 the connection is over (tls_cli_why). */
long	tls_cli_read(struct tls_cli *t, int fd, void *buf, size_t n);

/* Take up to n bytes of plaintext and send what records it can: the bytes
 * taken (0 while the socket is full or the handshake is not done), or -1
 * when the connection is over. */
long	tls_cli_write(struct tls_cli *t, int fd, const void *buf, size_t n);

/* Records wait for the socket (poll for POLLOUT); plaintext waits to be
 * read without the socket being readable; the handshake is done, so
 * plaintext can go out. */
int	tls_cli_unsent(const struct tls_cli *t);
int	tls_cli_ready(const struct tls_cli *t);
int	tls_cli_pending(const struct tls_cli *t);

/* Send close_notify, as far as the socket takes it now. */
void	tls_cli_close(struct tls_cli *t, int fd);

/* Why the connection failed, in words (a certificate refused, an alert);
 * NULL when TLS saw no error (the socket closed or failed). */
const char *tls_cli_why(struct tls_cli *t);

#endif
