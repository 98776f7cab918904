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

/* Loading: PEM objects -> DER -> subject DN and key -> trust anchor. */
struct load {
	struct arena		*a;
	struct tls_anchors	*ta;
	unsigned char		*der;
	size_t			 der_len, der_cap;
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

/* --- the parts of an X.509 certificate (RFC 5280) an anchor needs
 *
 * BearSSL's decoder gives the same, but it is interpreted code at ~400,000
 * instructions a certificate; a system bundle has ~140 of them. */

struct der {
	const unsigned char	*p;
	size_t			 n;
};

/* The next element of d if its tag is `tag`: its contents in *c, and the
 * whole element (header included) in *all if not NULL. Definite lengths up
 * to 2^24 only, as certificates use. 0, or -1 with d unchanged. */
static int
der_take(struct der *d, unsigned tag, struct der *c, struct der *all)
{
	size_t len, i = 2, k;

	if (d->n < 2 || d->p[0] != tag)
		return -1;
	len = d->p[1];
	if (len & 0x80) {
		k = len & 0x7f;
		if (k == 0 || k > 3 || d->n < 2 + k)
			return -1;
		for (len = 0; k > 0; k--)
			len = len << 8 | d->p[i++];
	}
	if (len > d->n - i)
		return -1;
	if (all != NULL) {
		all->p = d->p;
		all->n = i + len;
	}
	c->p = d->p + i;
	c->n = len;
	d->p += i + len;
	d->n -= i + len;
	return 0;
}

static int
der_is_oid(const struct der *o, const char *enc, size_t n)
{
	return o->n == n && memcmp(o->p, enc, n) == 0;
}

#define OID(s)	s, sizeof(s) - 1
#define OID_RSA		OID("\x2a\x86\x48\x86\xf7\x0d\x01\x01\x01")
#define OID_EC		OID("\x2a\x86\x48\xce\x3d\x02\x01")
#define OID_P256	OID("\x2a\x86\x48\xce\x3d\x03\x01\x07")
#define OID_P384	OID("\x2b\x81\x04\x00\x22")
#define OID_P521	OID("\x2b\x81\x04\x00\x23")
#define OID_BASIC	OID("\x55\x1d\x13")

/* An INTEGER's magnitude, without the sign byte of a positive value. */
static int
der_uint(struct der *d, struct der *v)
{
	if (der_take(d, 0x02, v, NULL) != 0 || v->n == 0)
		return -1;
	while (v->n > 1 && v->p[0] == 0) {
		v->p++;
		v->n--;
	}
	return 0;
}

/* basicConstraints in the extensions: is cA TRUE? */
static int
der_is_ca(struct der ext)
{
	struct der seq, e, oid, val, bc, b;

	if (der_take(&ext, 0x30, &seq, NULL) != 0)
		return 0;
	while (der_take(&seq, 0x30, &e, NULL) == 0) {
		if (der_take(&e, 0x06, &oid, NULL) != 0)
			return 0;
		if (der_take(&e, 0x01, &b, NULL) == 0 && b.n != 1)
			return 0;			/* critical */
		if (der_take(&e, 0x04, &val, NULL) != 0)
			return 0;
		if (!der_is_oid(&oid, OID_BASIC))
			continue;
		return der_take(&val, 0x30, &bc, NULL) == 0 &&
		    der_take(&bc, 0x01, &b, NULL) == 0 && b.n == 1 &&
		    b.p[0] != 0;
	}
	return 0;
}

/* One certificate in l->der: keep its subject DN and public key. Those
 * that do not parse, or hold another kind of key, are skipped: a bundle
 * may have odd ones. */
static void
add_cert(struct load *l)
{
	struct der d = { l->der, l->der_len }, cert, tbs, x, dn, spki, alg;
	struct der oid, bits, key, n, e, curve;
	br_x509_trust_anchor *ta, *nv;
	struct tls_anchors *s = l->ta;
	int ec, id = 0;

	if (der_take(&d, 0x30, &cert, NULL) != 0 ||
	    der_take(&cert, 0x30, &tbs, NULL) != 0)
		return;
	der_take(&tbs, 0xa0, &x, NULL);			/* version */
	if (der_take(&tbs, 0x02, &x, NULL) != 0 ||	/* serial */
	    der_take(&tbs, 0x30, &x, NULL) != 0 ||	/* signature */
	    der_take(&tbs, 0x30, &x, NULL) != 0 ||	/* issuer */
	    der_take(&tbs, 0x30, &x, NULL) != 0 ||	/* validity */
	    der_take(&tbs, 0x30, &x, &dn) != 0 ||	/* subject */
	    der_take(&tbs, 0x30, &spki, NULL) != 0 ||
	    der_take(&spki, 0x30, &alg, NULL) != 0 ||
	    der_take(&alg, 0x06, &oid, NULL) != 0 ||
	    der_take(&spki, 0x03, &bits, NULL) != 0 ||
	    bits.n < 2 || bits.p[0] != 0)		/* whole bytes */
		return;
	bits.p++;
	bits.n--;
	if (der_is_oid(&oid, OID_RSA)) {
		ec = 0;
		if (der_take(&bits, 0x30, &key, NULL) != 0 ||
		    der_uint(&key, &n) != 0 || der_uint(&key, &e) != 0)
			return;
	} else if (der_is_oid(&oid, OID_EC)) {
		ec = 1;
		if (der_take(&alg, 0x06, &curve, NULL) != 0)
			return;
		if (der_is_oid(&curve, OID_P256))
			id = BR_EC_secp256r1;
		else if (der_is_oid(&curve, OID_P384))
			id = BR_EC_secp384r1;
		else if (der_is_oid(&curve, OID_P521))
			id = BR_EC_secp521r1;
		else
			return;
	} else
		return;
	der_take(&tbs, 0x81, &x, NULL);		/* issuerUniqueID */
	der_take(&tbs, 0x82, &x, NULL);		/* subjectUniqueID */
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
	ta->dn.data = copy_bytes(l, dn.p, dn.n);
	ta->dn.len = dn.n;
	ta->flags = der_take(&tbs, 0xa3, &x, NULL) == 0 && der_is_ca(x) ?
	    BR_X509_TA_CA : 0;
	if (!ec) {
		ta->pkey.key_type = BR_KEYTYPE_RSA;
		ta->pkey.key.rsa.n = copy_bytes(l, n.p, n.n);
		ta->pkey.key.rsa.nlen = n.n;
		ta->pkey.key.rsa.e = copy_bytes(l, e.p, e.n);
		ta->pkey.key.rsa.elen = e.n;
	} else {
		ta->pkey.key_type = BR_KEYTYPE_EC;
		ta->pkey.key.ec.curve = id;
		ta->pkey.key.ec.q = copy_bytes(l, bits.p, bits.n);
		ta->pkey.key.ec.qlen = bits.n;
	}
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
	if (e == 0 && l.ta->n == 0)
		e = -E_PARSE;
	if (e != 0)
		return e;
	*out = l.ta;
	if (count != NULL)
		*count = (unsigned)l.ta->n;
	return 0;
}

/* see tls.h */
const void *
tls_anchor_at(const struct tls_anchors *ta, size_t i)
{
	return i < ta->n ? &ta->v[i] : NULL;
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
