/* tls.c - BearSSL glue: trust anchors from PEM, a small client profile,
 * entropy from getrandom(2), and an engine loop over net_conn with the
 * failures named in words. */
#include "tls.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bearssl.h>

#ifndef SKILLBOX_BUILD_EPOCH
#define SKILLBOX_BUILD_EPOCH 0
#endif

struct tls_anchors {
	br_x509_trust_anchor	*v;
	size_t			 n, cap;
};

struct tls_conn {
	br_ssl_client_context	 cc;
	br_x509_minimal_context	 xc;
	struct net_conn		*net;
	int			 err;		/* sticky -E_* */
	int			 br_err;
	const char		*why;
	char			 whybuf[160];
	unsigned char		 ibuf[BR_SSL_BUFSIZE_INPUT];
	unsigned char		 obuf[4096 + 85];	/* record + overhead */
};

/* Loading: PEM objects -> DER -> X.509 decoder -> trust anchor. */
struct load {
	struct arena		*a;
	struct tls_anchors	*ta;
	unsigned char		*der;
	size_t			 der_len, der_cap;
	unsigned char		*dn;
	size_t			 dn_len, dn_cap;
	int			 err;
};

static int
grow(struct load *l, unsigned char **p, size_t *cap, size_t need)
{
	unsigned char *np;
	size_t ncap = *cap ? *cap : 1024;

	while (ncap < need)
		ncap *= 2;
	if (ncap == *cap)
		return 0;
	if (ncap > (64u << 10) ||
	    (np = mem_realloc(*p, ncap)) == NULL)	/* scratch, freed */
		return l->err = ncap > (64u << 10) ? -E_LIMIT : -E_NOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}

static void
der_append(void *ctx, const void *buf, size_t n)
{
	struct load *l = ctx;

	if (l->err || grow(l, &l->der, &l->der_cap, l->der_len + n) != 0)
		return;
	memcpy(l->der + l->der_len, buf, n);
	l->der_len += n;
}

static void
dn_append(void *ctx, const void *buf, size_t n)
{
	struct load *l = ctx;

	if (l->err || grow(l, &l->dn, &l->dn_cap, l->dn_len + n) != 0)
		return;
	memcpy(l->dn + l->dn_len, buf, n);
	l->dn_len += n;
}

static void *
copy_bytes(struct load *l, const void *p, size_t n)
{
	void *q = arena_alloc(l->a, n ? n : 1);

	if (q == NULL)
		l->err = -E_NOMEM;
	else
		memcpy(q, p, n);
	return q;
}

/* One certificate in l->der: decode, keep its DN and key. Certificates
 * that do not decode are skipped, as a bundle may hold odd ones. */
static void
add_cert(struct load *l)
{
	br_x509_decoder_context dc;
	br_x509_pkey *pk;
	br_x509_trust_anchor *ta, *nv;
	struct tls_anchors *s = l->ta;

	l->dn_len = 0;
	br_x509_decoder_init(&dc, dn_append, l);
	br_x509_decoder_push(&dc, l->der, l->der_len);
	if (l->err || (pk = br_x509_decoder_get_pkey(&dc)) == NULL)
		return;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		if ((nv = arena_alloc(l->a, s->cap * sizeof(*nv))) == NULL) {
			l->err = -E_NOMEM;
			return;
		}
		if (s->n > 0)
			memcpy(nv, s->v, s->n * sizeof(*nv));
		s->v = nv;
	}
	ta = &s->v[s->n];
	memset(ta, 0, sizeof(*ta));
	ta->dn.data = copy_bytes(l, l->dn, l->dn_len);
	ta->dn.len = l->dn_len;
	ta->flags = br_x509_decoder_isCA(&dc) ? BR_X509_TA_CA : 0;
	ta->pkey.key_type = pk->key_type;
	if (pk->key_type == BR_KEYTYPE_RSA) {
		ta->pkey.key.rsa.n = copy_bytes(l, pk->key.rsa.n, pk->key.rsa.nlen);
		ta->pkey.key.rsa.nlen = pk->key.rsa.nlen;
		ta->pkey.key.rsa.e = copy_bytes(l, pk->key.rsa.e, pk->key.rsa.elen);
		ta->pkey.key.rsa.elen = pk->key.rsa.elen;
	} else if (pk->key_type == BR_KEYTYPE_EC) {
		ta->pkey.key.ec.curve = pk->key.ec.curve;
		ta->pkey.key.ec.q = copy_bytes(l, pk->key.ec.q, pk->key.ec.qlen);
		ta->pkey.key.ec.qlen = pk->key.ec.qlen;
	} else
		return;
	if (!l->err)
		s->n++;
}

/* PEM (RFC 7468), read a line at a time: between "-----BEGIN
 * CERTIFICATE-----" and an "-----END" line, base64 lines are DER. An object
 * with a line that is not base64 is dropped and reading goes on; other
 * kinds of object are skipped. This is BearSSL's PEM decoder's job, but
 * that one is an interpreted state machine spending ~1,400 instructions a
 * byte: 300 M for a system bundle, at every start. */
struct pem {
	char		 line[256];
	size_t		 n;
	int		 toolong;
	int		 in;		/* 1 in a certificate, 0 outside */
	unsigned	 bits, nbits;
};

static int
b64(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

static void
pem_line(struct load *l, struct pem *pm)
{
	char *s = pm->line;
	size_t n = pm->n, i;
	unsigned char out[192];
	size_t k = 0;
	int v;

	while (n > 0 && (s[n - 1] == '\r' || s[n - 1] == ' ' ||
	    s[n - 1] == '\t'))
		n--;
	s[n] = '\0';
	if (strncmp(s, "-----BEGIN ", 11) == 0) {
		pm->in = strcmp(s + 11, "CERTIFICATE-----") == 0 ||
		    strcmp(s + 11, "X509 CERTIFICATE-----") == 0;
		pm->bits = pm->nbits = 0;
		l->der_len = 0;
		return;
	}
	if (!pm->in)
		return;
	if (strncmp(s, "-----END ", 9) == 0) {
		add_cert(l);
		pm->in = 0;
		return;
	}
	for (i = 0; i < n && pm->in; i++) {
		if (s[i] == '=')	/* padding: the object's data ends */
			break;
		if ((v = b64((unsigned char)s[i])) < 0) {
			pm->in = 0;	/* not base64: drop the object */
			break;
		}
		pm->bits = pm->bits << 6 | (unsigned)v;
		if ((pm->nbits += 6) >= 8) {
			pm->nbits -= 8;
			out[k++] = (unsigned char)(pm->bits >> pm->nbits);
		}
	}
	if (k > 0)
		der_append(l, out, k);
}

static int
load_file(struct load *l, const char *path)
{
	struct pem pm;
	char buf[2048];
	ssize_t r, i;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return errno == ENOENT ? -E_NOENT : -E_IO;
	memset(&pm, 0, sizeof(pm));
	while (!l->err && (r = read(fd, buf, sizeof(buf))) > 0) {
		for (i = 0; i < r && !l->err; i++) {
			if (buf[i] != '\n') {
				if (pm.n < sizeof(pm.line) - 1)
					pm.line[pm.n++] = buf[i];
				else
					pm.toolong = 1;
				continue;
			}
			if (pm.toolong)
				pm.in = 0;	/* no PEM line is that long */
			else
				pem_line(l, &pm);
			pm.n = 0;
			pm.toolong = 0;
		}
	}
	if (!l->err && pm.n > 0 && !pm.toolong)
		pem_line(l, &pm);	/* a last line without LF */
	close(fd);
	return l->err;
}

static int
has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);

	return n >= m && strcmp(s + n - m, suf) == 0;
}

/* see tls.h */
int
tls_anchors_load(struct arena *a, const char *path, struct tls_anchors **out,
    unsigned *count)
{
	struct load l;
	struct stat st;
	struct dirent *de;
	char sub[1024];
	DIR *d;
	int e = 0;

	memset(&l, 0, sizeof(l));
	l.a = a;
	if (stat(path, &st) != 0)
		return errno == ENOENT ? -E_NOENT : -E_IO;
	if ((l.ta = arena_zalloc(a, sizeof(*l.ta))) == NULL)
		return -E_NOMEM;
	if (S_ISDIR(st.st_mode)) {
		if ((d = opendir(path)) == NULL)
			return -E_IO;
		while (e == 0 && (de = readdir(d)) != NULL) {
			if (!has_suffix(de->d_name, ".pem") &&
			    !has_suffix(de->d_name, ".crt"))
				continue;
			if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", path,
			    de->d_name) >= sizeof(sub))
				continue;
			e = load_file(&l, sub);
			if (e == -E_NOENT || e == -E_IO)
				e = 0;		/* dangling link: skip */
		}
		closedir(d);
	} else
		e = load_file(&l, path);
	mem_free(l.der);
	mem_free(l.dn);
	if (e == 0 && l.ta->n == 0)
		e = -E_PARSE;
	if (e != 0)
		return e;
	*out = l.ta;
	if (count != NULL)
		*count = (unsigned)l.ta->n;
	return 0;
}

const char *
tls_default_ca(void)
{
	static const char *const v[] = {
		"/etc/ssl/certs/ca-certificates.crt",	/* Debian, OpenWrt */
		"/etc/ssl/cert.pem",			/* Alpine, BSD */
		"/etc/pki/tls/certs/ca-bundle.crt",	/* Fedora */
		"/etc/ssl/certs",
	};
	size_t i;

	for (i = 0; i < ARRAY_LEN(v); i++)
		if (access(v[i], R_OK) == 0)
			return v[i];
	return NULL;
}

long long
tls_check_time(void)
{
	long long now = (long long)time(NULL);

	return now > SKILLBOX_BUILD_EPOCH ? now : SKILLBOX_BUILD_EPOCH;
}

/* see tls.h */
struct tls_conn *
tls_new(struct arena *a)
{
	return arena_alloc(a, sizeof(struct tls_conn));
}

static void
profile(struct tls_conn *t, const struct tls_anchors *ta)
{
	static const uint16_t suites[] = {
		BR_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
		BR_TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
		BR_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
		BR_TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
		BR_TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
		BR_TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	};
	static const br_hash_class *const hashes[] = {
		&br_sha1_vtable, &br_sha224_vtable, &br_sha256_vtable,
		&br_sha384_vtable, &br_sha512_vtable,
	};
	br_ssl_engine_context *eng = &t->cc.eng;
	long long now = tls_check_time();
	size_t i;

	br_ssl_client_zero(&t->cc);
	br_ssl_engine_set_versions(eng, BR_TLS12, BR_TLS12);
	br_x509_minimal_init(&t->xc, &br_sha256_vtable, ta->v, ta->n);
	br_ssl_engine_set_suites(eng, suites, ARRAY_LEN(suites));
	br_ssl_engine_set_default_rsavrfy(eng);
	br_ssl_engine_set_default_ecdsa(eng);
	br_x509_minimal_set_rsa(&t->xc, br_ssl_engine_get_rsavrfy(eng));
	br_x509_minimal_set_ecdsa(&t->xc, br_ssl_engine_get_ec(eng),
	    br_ssl_engine_get_ecdsa(eng));
	for (i = 0; i < ARRAY_LEN(hashes); i++) {
		int id = (int)((hashes[i]->desc >> BR_HASHDESC_ID_OFF) &
		    BR_HASHDESC_ID_MASK);

		br_ssl_engine_set_hash(eng, id, hashes[i]);
		br_x509_minimal_set_hash(&t->xc, id, hashes[i]);
	}
	br_ssl_engine_set_x509(eng, &t->xc.vtable);
	br_ssl_engine_set_prf_sha256(eng, &br_tls12_sha256_prf);
	br_ssl_engine_set_prf_sha384(eng, &br_tls12_sha384_prf);
	br_ssl_engine_set_default_aes_gcm(eng);
	br_ssl_engine_set_default_chapol(eng);
	/* days since 0000-01-01 (proleptic Gregorian): 1970 is day 719528 */
	br_x509_minimal_set_time(&t->xc, (uint32_t)(719528 + now / 86400),
	    (uint32_t)(now % 86400));
	br_ssl_engine_set_buffers_bidi(eng, t->ibuf, sizeof(t->ibuf), t->obuf,
	    sizeof(t->obuf));
}

static int
set_err(struct tls_conn *t, int e)
{
	int be = br_ssl_engine_last_error(&t->cc.eng);

	t->br_err = be;
	t->why = t->whybuf;
	if (be == BR_ERR_X509_NOT_TRUSTED)
		t->why = "certificate not trusted: unknown CA";
	else if (be == BR_ERR_X509_BAD_SERVER_NAME)
		t->why = "certificate name mismatch";
	else if (be == BR_ERR_X509_EXPIRED)
		t->why = "certificate expired or not yet valid";
	else if (be == BR_ERR_UNSUPPORTED_VERSION || be == BR_ERR_BAD_VERSION ||
	    be == BR_ERR_RECV_FATAL_ALERT + 70)
		t->why = "protocol version refused: the server wants a TLS "
		    "version other than 1.2 (TLS 1.3 only?)";
	else if (be == BR_ERR_RECV_FATAL_ALERT + 40 ||
	    be == BR_ERR_BAD_HANDSHAKE)
		t->why = "handshake failure: no cipher suite or key exchange "
		    "in common";
	else if (be >= BR_ERR_RECV_FATAL_ALERT && be < BR_ERR_SEND_FATAL_ALERT)
		snprintf(t->whybuf, sizeof(t->whybuf), "the server sent "
		    "fatal alert %d", be - BR_ERR_RECV_FATAL_ALERT);
	else if (be >= BR_ERR_SEND_FATAL_ALERT)
		snprintf(t->whybuf, sizeof(t->whybuf), "handshake failure "
		    "(alert %d sent)", be - BR_ERR_SEND_FATAL_ALERT);
	else if (be >= 32 && be < 64)
		snprintf(t->whybuf, sizeof(t->whybuf), "certificate "
		    "rejected (X.509 error %d)", be);
	else if (be == BR_ERR_IO || be == BR_ERR_OK)
		t->why = t->net->why != NULL ? t->net->why : "connection lost";
	else
		snprintf(t->whybuf, sizeof(t->whybuf), "TLS error %d", be);
	return t->err = e;
}

/* Drive the engine until one of the `want` states is reached. */
static int
run_until(struct tls_conn *t, unsigned want)
{
	br_ssl_engine_context *eng = &t->cc.eng;
	unsigned char *buf;
	unsigned st;
	size_t len;
	long r;
	int e;

	for (;;) {
		if (t->err)
			return t->err;
		st = br_ssl_engine_current_state(eng);
		if (st & BR_SSL_CLOSED) {
			if (br_ssl_engine_last_error(eng) == BR_ERR_OK)
				return 0;	/* close_notify: EOF */
			return set_err(t, -E_TLS);
		}
		if (st & BR_SSL_SENDREC) {
			buf = br_ssl_engine_sendrec_buf(eng, &len);
			if ((e = net_write(t->net, buf, len)) != 0) {
				br_ssl_engine_close(eng);
				return set_err(t, e);
			}
			br_ssl_engine_sendrec_ack(eng, len);
			continue;
		}
		if (st & want)
			return 0;
		if (st & BR_SSL_RECVAPP)	/* app data before we asked */
			return 0;
		if (st & BR_SSL_RECVREC) {
			buf = br_ssl_engine_recvrec_buf(eng, &len);
			r = net_read(t->net, buf, len);
			if (r == 0) {
				t->why = "connection closed without TLS "
				    "close_notify (truncated)";
				return t->err = -E_TLS;
			}
			if (r < 0) {
				set_err(t, (int)r);
				t->why = t->net->why;
				return t->err;
			}
			br_ssl_engine_recvrec_ack(eng, (size_t)r);
			continue;
		}
		br_ssl_engine_flush(eng, 0);
	}
}

/* see tls.h */
int
tls_connect(struct tls_conn *t, const struct tls_anchors *ta,
    struct net_conn *net, const char *server_name)
{
	unsigned char seed[32];
	size_t got = 0;
	ssize_t r;

	memset(t, 0, offsetof(struct tls_conn, ibuf));
	t->net = net;
	profile(t, ta);
	/* BearSSL seeds only from /dev/urandom, which a chroot may lack. */
	while (got < sizeof(seed)) {
		r = getrandom(seed + got, sizeof(seed) - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	if (got == sizeof(seed))
		br_ssl_engine_inject_entropy(&t->cc.eng, seed, sizeof(seed));
	if (!br_ssl_client_reset(&t->cc, server_name, 0))
		return set_err(t, -E_TLS);
	return run_until(t, BR_SSL_SENDAPP);
}

/* see tls.h */
long
tls_read(struct tls_conn *t, void *buf, size_t n)
{
	br_ssl_engine_context *eng = &t->cc.eng;
	unsigned char *p;
	size_t len;
	int e;

	if ((e = run_until(t, BR_SSL_RECVAPP)) != 0)
		return e;
	if ((p = br_ssl_engine_recvapp_buf(eng, &len)) == NULL)
		return 0;			/* closed cleanly */
	if (len > n)
		len = n;
	memcpy(buf, p, len);
	br_ssl_engine_recvapp_ack(eng, len);
	return (long)len;
}

/* see tls.h */
int
tls_write(struct tls_conn *t, const void *buf, size_t n)
{
	br_ssl_engine_context *eng = &t->cc.eng;
	const unsigned char *s = buf;
	unsigned char *p;
	size_t len;
	int e;

	while (n > 0) {
		if ((e = run_until(t, BR_SSL_SENDAPP)) != 0)
			return e;
		if ((p = br_ssl_engine_sendapp_buf(eng, &len)) == NULL)
			return set_err(t, -E_TLS);
		if (len > n)
			len = n;
		memcpy(p, s, len);
		br_ssl_engine_sendapp_ack(eng, len);
		s += len;
		n -= len;
	}
	br_ssl_engine_flush(eng, 0);
	return run_until(t, BR_SSL_SENDAPP | BR_SSL_RECVAPP);
}

/* see tls.h */
void
tls_close(struct tls_conn *t)
{
	if (t->err)
		return;
	br_ssl_engine_close(&t->cc.eng);
	(void)run_until(t, 0);
}

const char *
tls_why(const struct tls_conn *t)
{
	return t->why != NULL ? t->why : "no error";
}

int
tls_error(const struct tls_conn *t)
{
	return t->br_err;
}
