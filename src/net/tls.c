/* tls.c - BearSSL glue: trust anchors from PEM, a small client profile,
 * entropy from getrandom(2), and an engine loop over net_conn with the
 * failures named in words. */
#include "net/tls.h"
#include "config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
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
	struct tls_anchors	*ta;	/* anchors are loaded, or */
	struct tls_cred		*cr;	/* a server's chain or key */
	unsigned char		*der;
	size_t			 der_len, der_cap;
	int			 err;
	int			 enc;	/* an encrypted key was seen */
	int			 big;	/* a file or object over its size */
	size_t			 max;	/* bytes a file may have */
};

enum { PEM_NONE, PEM_CERT, PEM_KEY };
/* A server's certificate chain or key file (a CA bundle: 16 times that) */
#define PEM_MAX		(256u << 10)

static void	pem_object(struct load *l, int kind);

static int
grow(struct load *l, unsigned char **p, size_t *cap, size_t need)
{
	unsigned char *np;
	size_t ncap = *cap ? *cap : 1024;

	while (ncap < need)
		ncap *= 2;
	if (ncap == *cap)
		return 0;
	if ((l->big = ncap > (64u << 10)) ||
	    (np = mem_realloc(*p, ncap)) == NULL)	/* scratch, freed */
		return l->err = l->big ? -E_LIMIT : -E_NOMEM;
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
#define OID_SAN		OID("\x55\x1d\x11")

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

/* The value of the extension oid among a certificate's: 0, or -1. */
static int
der_ext(struct der ext, const char *oid, size_t on, struct der *val)
{
	struct der seq, e, o, b;

	if (der_take(&ext, 0x30, &seq, NULL) != 0)
		return -1;
	while (der_take(&seq, 0x30, &e, NULL) == 0) {
		if (der_take(&e, 0x06, &o, NULL) != 0)
			return -1;
		if (der_take(&e, 0x01, &b, NULL) == 0 && b.n != 1)
			return -1;			/* critical */
		if (der_take(&e, 0x04, val, NULL) != 0)
			return -1;
		if (der_is_oid(&o, oid, on))
			return 0;
	}
	return -1;
}

/* basicConstraints in the extensions: is cA TRUE? */
static int
der_is_ca(struct der ext)
{
	struct der val, bc, b;

	return der_ext(ext, OID_BASIC, &val) == 0 &&
	    der_take(&val, 0x30, &bc, NULL) == 0 &&
	    der_take(&bc, 0x01, &b, NULL) == 0 && b.n == 1 && b.p[0] != 0;
}

/* BearSSL's number for a named curve's OID; 0 for one it lacks. */
static int
curve_id(const struct der *oid)
{
	return der_is_oid(oid, OID_P256) ? BR_EC_secp256r1 :
	    der_is_oid(oid, OID_P384) ? BR_EC_secp384r1 :
	    der_is_oid(oid, OID_P521) ? BR_EC_secp521r1 : 0;
}

/* What a certificate says of its subject: DN and public key. */
struct certkey {
	struct der	 dn, n, e, q;	/* RSA: n, e; EC: q */
	struct der	 rest;		/* the TBS after the key */
	int		 ec, curve;
};

/* Parse a DER certificate far enough for its key: 0, or -1 when it does
 * not parse or holds another kind of key. */
static int
cert_key(const unsigned char *p, size_t len, struct certkey *ck)
{
	struct der d = { p, len }, cert, tbs, x, spki, alg, oid, bits, key;
	struct der curve;

	memset(ck, 0, sizeof(*ck));
	if (der_take(&d, 0x30, &cert, NULL) != 0 ||
	    der_take(&cert, 0x30, &tbs, NULL) != 0)
		return -1;
	der_take(&tbs, 0xa0, &x, NULL);			/* version */
	if (der_take(&tbs, 0x02, &x, NULL) != 0 ||	/* serial */
	    der_take(&tbs, 0x30, &x, NULL) != 0 ||	/* signature */
	    der_take(&tbs, 0x30, &x, NULL) != 0 ||	/* issuer */
	    der_take(&tbs, 0x30, &x, NULL) != 0 ||	/* validity */
	    der_take(&tbs, 0x30, &x, &ck->dn) != 0 ||	/* subject */
	    der_take(&tbs, 0x30, &spki, NULL) != 0 ||
	    der_take(&spki, 0x30, &alg, NULL) != 0 ||
	    der_take(&alg, 0x06, &oid, NULL) != 0 ||
	    der_take(&spki, 0x03, &bits, NULL) != 0 ||
	    bits.n < 2 || bits.p[0] != 0)		/* whole bytes */
		return -1;
	bits.p++;
	bits.n--;
	if (der_is_oid(&oid, OID_RSA)) {
		if (der_take(&bits, 0x30, &key, NULL) != 0 ||
		    der_uint(&key, &ck->n) != 0 || der_uint(&key, &ck->e) != 0)
			return -1;
	} else if (der_is_oid(&oid, OID_EC)) {
		ck->ec = 1;
		ck->q = bits;
		if (der_take(&alg, 0x06, &curve, NULL) != 0 ||
		    (ck->curve = curve_id(&curve)) == 0)
			return -1;
	} else
		return -1;
	der_take(&tbs, 0x81, &x, NULL);		/* issuerUniqueID */
	der_take(&tbs, 0x82, &x, NULL);		/* subjectUniqueID */
	ck->rest = tbs;
	return 0;
}

/* One certificate in l->der: keep its subject DN and public key. Those
 * that do not parse, or hold another kind of key, are skipped: a bundle
 * may have odd ones. */
static void
add_cert(struct load *l)
{
	struct certkey ck;
	struct der x;
	br_x509_trust_anchor *ta, *nv;
	struct tls_anchors *s = l->ta;

	if (cert_key(l->der, l->der_len, &ck) != 0)
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
	ta->dn.data = copy_bytes(l, ck.dn.p, ck.dn.n);
	ta->dn.len = ck.dn.n;
	ta->flags = der_take(&ck.rest, 0xa3, &x, NULL) == 0 && der_is_ca(x) ?
	    BR_X509_TA_CA : 0;
	if (!ck.ec) {
		ta->pkey.key_type = BR_KEYTYPE_RSA;
		ta->pkey.key.rsa.n = copy_bytes(l, ck.n.p, ck.n.n);
		ta->pkey.key.rsa.nlen = ck.n.n;
		ta->pkey.key.rsa.e = copy_bytes(l, ck.e.p, ck.e.n);
		ta->pkey.key.rsa.elen = ck.e.n;
	} else {
		ta->pkey.key_type = BR_KEYTYPE_EC;
		ta->pkey.key.ec.curve = ck.curve;
		ta->pkey.key.ec.q = copy_bytes(l, ck.q.p, ck.q.n);
		ta->pkey.key.ec.qlen = ck.q.n;
	}
	if (!l->err)
		s->n++;
}

/* PEM (RFC 7468), read a line at a time: between "-----BEGIN
 * CERTIFICATE-----" (or "-----BEGIN ... PRIVATE KEY-----") and an
 * "-----END" line, base64 lines are DER. An object
 * with a line that is not base64 is dropped and reading goes on; other
 * kinds of object are skipped. This is BearSSL's PEM decoder's job, but
 * that one is an interpreted state machine spending ~1,400 instructions a
 * byte: 300 M for a system bundle, at every start. */
struct pem {
	char		 line[256];
	size_t		 n;
	int		 toolong;
	int		 in;		/* PEM_*: the object we are in */
	unsigned	 bits, nbits;
};

static int
has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);

	return n >= m && strcmp(s + n - m, suf) == 0;
}

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
		s += 11;
		pm->in = strcmp(s, "CERTIFICATE-----") == 0 ||
		    strcmp(s, "X509 CERTIFICATE-----") == 0 ? PEM_CERT :
		    has_suffix(s, "PRIVATE KEY-----") ? PEM_KEY : PEM_NONE;
		if (strncmp(s, "ENCRYPTED ", 10) == 0) {
			l->enc = 1;
			pm->in = PEM_NONE;
		}
		pm->bits = pm->nbits = 0;
		l->der_len = 0;
		return;
	}
	if (!pm->in)
		return;
	if (strncmp(s, "-----END ", 9) == 0) {
		pem_object(l, pm->in);
		pm->in = PEM_NONE;
		return;
	}
	for (i = 0; i < n && pm->in; i++) {
		if (s[i] == '=')	/* padding: the object's data ends */
			break;
		if ((v = b64((unsigned char)s[i])) < 0) {
			/* not base64: drop the object ("Proc-Type: 4,
			 * ENCRYPTED" opens an encrypted key) */
			if (pm->in == PEM_KEY && strchr(s, ':') != NULL)
				l->enc = 1;
			pm->in = PEM_NONE;
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

/* Read the PEM file at path, at most l->max bytes of it: /dev/zero or a
 * huge file is an error (-E_LIMIT, l->big), not a start that never ends.
 * Non-blocking: a FIFO without a writer is an empty file. */
static int
load_file(struct load *l, const char *path)
{
	struct pem pm;
	char buf[2048];
	ssize_t r, i;
	size_t total = 0;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return errno == ENOENT ? -E_NOENT : -E_IO;
	memset(&pm, 0, sizeof(pm));
	while (!l->err && (r = read(fd, buf, sizeof(buf))) > 0) {
		if ((total += (size_t)r) > l->max) {
			l->big = 1;
			l->err = -E_LIMIT;
			break;
		}
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
	l.max = PEM_MAX * 16;
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
int
tls_anchors_shared(struct arena *perm, const char *path,
    struct tls_anchors **out)
{
	static struct tls_anchors *kept;
	static const char *kept_path;
	int e;

	if (kept != NULL && strcmp(path, kept_path) == 0) {
		*out = kept;
		return 0;
	}
	if ((e = tls_anchors_load(perm, path, out, NULL)) != 0)
		return e;
	if (kept == NULL && (kept_path = arena_strdup(perm, path)) != NULL)
		kept = *out;
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

static const br_hash_class *const hashes[] = {
	&br_sha1_vtable, &br_sha224_vtable, &br_sha256_vtable,
	&br_sha384_vtable, &br_sha512_vtable,
};

static int
hash_id(const br_hash_class *h)
{
	return (int)((h->desc >> BR_HASHDESC_ID_OFF) & BR_HASHDESC_ID_MASK);
}

/* What client and server share: TLS 1.2, ECDHE with AEAD suites, the
 * hashes and PRFs they need. */
static void
engine_profile(br_ssl_engine_context *eng)
{
	static const uint16_t suites[] = {
		BR_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
		BR_TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
		BR_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
		BR_TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
		BR_TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
		BR_TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	};
	size_t i;

	br_ssl_engine_set_versions(eng, BR_TLS12, BR_TLS12);
	br_ssl_engine_set_suites(eng, suites, ARRAY_LEN(suites));
	for (i = 0; i < ARRAY_LEN(hashes); i++)
		br_ssl_engine_set_hash(eng, hash_id(hashes[i]), hashes[i]);
	br_ssl_engine_set_prf_sha256(eng, &br_tls12_sha256_prf);
	br_ssl_engine_set_prf_sha384(eng, &br_tls12_sha384_prf);
	br_ssl_engine_set_default_aes_gcm(eng);
	br_ssl_engine_set_default_chapol(eng);
	br_ssl_engine_set_default_ec(eng);
}

/* BearSSL seeds only from /dev/urandom, which a chroot may lack. */
static void
engine_seed(br_ssl_engine_context *eng)
{
	unsigned char seed[32];
	size_t got = 0;
	ssize_t r;

	while (got < sizeof(seed)) {
		r = getrandom(seed + got, sizeof(seed) - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	if (got == sizeof(seed))
		br_ssl_engine_inject_entropy(eng, seed, sizeof(seed));
}

static void
profile(struct tls_conn *t, const struct tls_anchors *ta)
{
	br_ssl_engine_context *eng = &t->cc.eng;
	long long now = tls_check_time();
	size_t i;

	br_ssl_client_zero(&t->cc);
	engine_profile(eng);
	br_x509_minimal_init(&t->xc, &br_sha256_vtable, ta->v, ta->n);
	br_ssl_engine_set_default_rsavrfy(eng);
	br_ssl_engine_set_default_ecdsa(eng);
	br_x509_minimal_set_rsa(&t->xc, br_ssl_engine_get_rsavrfy(eng));
	br_x509_minimal_set_ecdsa(&t->xc, br_ssl_engine_get_ec(eng),
	    br_ssl_engine_get_ecdsa(eng));
	for (i = 0; i < ARRAY_LEN(hashes); i++)
		br_x509_minimal_set_hash(&t->xc, hash_id(hashes[i]),
		    hashes[i]);
	br_ssl_engine_set_x509(eng, &t->xc.vtable);
	/* days since 0000-01-01 (proleptic Gregorian): 1970 is day 719528 */
	br_x509_minimal_set_time(&t->xc, (uint32_t)(719528 + now / 86400),
	    (uint32_t)(now % 86400));
	br_ssl_engine_set_buffers_bidi(eng, t->ibuf, sizeof(t->ibuf), t->obuf,
	    sizeof(t->obuf));
}

/* A BearSSL error in words; NULL for none or a plain I/O error. `peer` is
 * "server" or "client": who sent an alert. */
static const char *
err_words(int be, const char *peer, char *buf, size_t n)
{
	if (be == BR_ERR_X509_NOT_TRUSTED)
		return "certificate not trusted: unknown CA";
	if (be == BR_ERR_X509_BAD_SERVER_NAME)
		return "certificate name mismatch";
	if (be == BR_ERR_X509_EXPIRED)
		return "certificate expired or not yet valid";
	if (be == BR_ERR_UNSUPPORTED_VERSION || be == BR_ERR_BAD_VERSION ||
	    be == BR_ERR_RECV_FATAL_ALERT + 70)
		snprintf(buf, n, "protocol version refused: the %s wants a "
		    "TLS version other than 1.2 (TLS 1.3 only?)", peer);
	else if (be == BR_ERR_RECV_FATAL_ALERT + 40 ||
	    be == BR_ERR_BAD_HANDSHAKE)
		return "handshake failure: no cipher suite or key exchange "
		    "in common";
	else if (be >= BR_ERR_RECV_FATAL_ALERT && be < BR_ERR_SEND_FATAL_ALERT)
		snprintf(buf, n, "the %s sent fatal alert %d", peer,
		    be - BR_ERR_RECV_FATAL_ALERT);
	else if (be >= BR_ERR_SEND_FATAL_ALERT)
		snprintf(buf, n, "handshake failure (alert %d sent)",
		    be - BR_ERR_SEND_FATAL_ALERT);
	else if (be >= 32 && be < 64)
		snprintf(buf, n, "certificate rejected (X.509 error %d)", be);
	else if (be == BR_ERR_IO || be == BR_ERR_OK)
		return NULL;
	else
		snprintf(buf, n, "TLS error %d", be);
	return buf;
}

static int
set_err(struct tls_conn *t, int e)
{
	int be = br_ssl_engine_last_error(&t->cc.eng);

	t->br_err = be;
	t->why = err_words(be, "server", t->whybuf, sizeof(t->whybuf));
	if (t->why == NULL)
		t->why = t->net != NULL && t->net->why != NULL ? t->net->why :
		    "connection lost";
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
	memset(t, 0, offsetof(struct tls_conn, ibuf));
	t->net = net;
	profile(t, ta);
	engine_seed(&t->cc.eng);
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

/* --- the server side, for skillbox serve
 *
 * The same suites as the client: ECDHE with AEAD, TLS 1.2. One chain and
 * one key, EC (P-256/384/521) or RSA, loaded once; a connection is driven
 * by a poll() loop over a non-blocking socket. */

#define CHAIN_MAX	8

struct tls_cred {
	br_x509_certificate	 chain[CHAIN_MAX];
	size_t			 n;
	int			 nkeys;
	int			 type;		/* BR_KEYTYPE_EC or _RSA */
	br_ec_private_key	 ec;		/* into a copy of the DER */
	br_rsa_private_key	 rsa;
	unsigned char		*der;
	size_t			 der_len;
};

struct tls_srv {
	br_ssl_server_context	 sc;
	const struct tls_cred	*cr;
	int			 heard;		/* the client sent a byte */
	char			 whybuf[96];
	unsigned char		 ibuf[BR_SSL_BUFSIZE_INPUT];
	unsigned char		 obuf[4096 + 85];
};

static void
cred_object(struct load *l, int kind)
{
	struct tls_cred *cr = l->cr;
	br_x509_certificate *c;

	if (kind == PEM_CERT) {
		if (cr->n == CHAIN_MAX) {
			l->err = -E_LIMIT;
			return;
		}
		c = &cr->chain[cr->n];
		if ((c->data = copy_bytes(l, l->der, l->der_len)) == NULL)
			return;
		c->data_len = l->der_len;
		cr->n++;
	} else if (kind == PEM_KEY && cr->nkeys++ == 0) {
		cr->der = copy_bytes(l, l->der, l->der_len);
		cr->der_len = l->der_len;
	}
}

/* A private key: PKCS#8 (RFC 5208) holding one of the others, SEC1
 * (RFC 5915) or PKCS#1 (RFC 8017). `curve` comes from PKCS#8's algorithm,
 * `want` is the type it names (0: any). 0, or -1 for anything else. */
static int
key_parse(struct tls_cred *cr, struct der d, int want, int curve)
{
	struct der seq, v, alg, oid, x, ctx;
	struct der f[8];	/* n e d p q dp dq iq */
	unsigned b;
	int i;

	if (der_take(&d, 0x30, &seq, NULL) != 0 ||
	    der_take(&seq, 0x02, &v, NULL) != 0 || v.n != 1 || v.p[0] > 1)
		return -1;
	if (want == 0 && v.p[0] == 0 &&
	    der_take(&seq, 0x30, &alg, NULL) == 0) {
		if (der_take(&alg, 0x06, &oid, NULL) != 0 ||
		    der_take(&seq, 0x04, &x, NULL) != 0)
			return -1;
		if (der_is_oid(&oid, OID_RSA))
			return key_parse(cr, x, BR_KEYTYPE_RSA, 0);
		if (!der_is_oid(&oid, OID_EC) ||
		    der_take(&alg, 0x06, &oid, NULL) != 0 ||
		    (curve = curve_id(&oid)) == 0)
			return -1;
		return key_parse(cr, x, BR_KEYTYPE_EC, curve);
	}
	if (v.p[0] == 1 && want != BR_KEYTYPE_RSA) {
		if (der_take(&seq, 0x04, &x, NULL) != 0 || x.n == 0)
			return -1;
		if (der_take(&seq, 0xa0, &ctx, NULL) == 0 &&
		    (der_take(&ctx, 0x06, &oid, NULL) != 0 ||
		    (curve = curve_id(&oid)) == 0))
			return -1;
		if (curve == 0)
			return -1;
		cr->ec.curve = curve;
		cr->ec.x = (unsigned char *)x.p;
		cr->ec.xlen = x.n;
		cr->type = BR_KEYTYPE_EC;
		return 0;
	}
	if (v.p[0] != 0 || want == BR_KEYTYPE_EC)
		return -1;
	for (i = 0; i < 8; i++)
		if (der_uint(&seq, &f[i]) != 0)
			return -1;
	for (b = f[0].p[0], cr->rsa.n_bitlen = (uint32_t)(f[0].n - 1) * 8;
	    b != 0; b >>= 1)
		cr->rsa.n_bitlen++;
	cr->rsa.p = (unsigned char *)f[3].p;
	cr->rsa.plen = f[3].n;
	cr->rsa.q = (unsigned char *)f[4].p;
	cr->rsa.qlen = f[4].n;
	cr->rsa.dp = (unsigned char *)f[5].p;
	cr->rsa.dplen = f[5].n;
	cr->rsa.dq = (unsigned char *)f[6].p;
	cr->rsa.dqlen = f[6].n;
	cr->rsa.iq = (unsigned char *)f[7].p;
	cr->rsa.iqlen = f[7].n;
	cr->type = BR_KEYTYPE_RSA;
	return 0;
}

/* Does the key belong to the first certificate of the chain? */
static int
cred_match(const struct tls_cred *cr)
{
	const br_ec_private_key *ek = cr->type == BR_KEYTYPE_EC ? &cr->ec :
	    NULL;
	const br_rsa_private_key *rk = &cr->rsa;
	unsigned char pub[BR_EC_KBUF_PUB_MAX_SIZE];
	unsigned char *n;
	struct certkey ck;
	size_t len;

	if (cert_key(cr->chain[0].data, cr->chain[0].data_len, &ck) != 0)
		return -1;
	if (ek != NULL) {
		if (!ck.ec || ck.curve != ek->curve)
			return -1;
		len = br_ec_compute_pub(br_ec_get_default(), NULL, pub, ek);
		return len == ck.q.n && memcmp(pub, ck.q.p, len) == 0 ? 0 : -1;
	}
	if (ck.ec || ck.n.n != (rk->n_bitlen + 7) / 8 ||
	    (n = mem_alloc(ck.n.n)) == NULL)
		return -1;
	len = br_rsa_compute_modulus_get_default()(n, rk);
	len = len == ck.n.n && memcmp(n, ck.n.p, len) == 0 ? 0 : 1;
	mem_free(n);
	return len ? -1 : 0;
}

/* see tls.h */
int
tls_cred_load(struct arena *a, const char *cert, const char *key,
    struct tls_cred **out, char *why, size_t wn)
{
	return tls_cred_load_as(a, cert, key, "serve.tls_cert",
	    "serve.tls_key", out, why, wn);
}

/* see tls.h */
int
tls_cred_load_as(struct arena *a, const char *cert, const char *key,
    const char *cname, const char *kname, struct tls_cred **out, char *why,
    size_t wn)
{
	struct load l;
	int e;

	memset(&l, 0, sizeof(l));
	l.a = a;
	l.max = PEM_MAX;
	if ((l.cr = arena_zalloc(a, sizeof(*l.cr))) == NULL)
		return -E_NOMEM;
	e = load_file(&l, cert);
	if (e == 0 && l.cr->n == 0)
		e = -E_PARSE;
	if (e != 0) {
		snprintf(why, wn, "%s %s: %s", cname, cert,
		    e == -E_NOENT ? "no such file" : e == -E_PARSE ? "no "
		    "PEM certificate in it" : l.big ? "over 256 KiB, or a "
		    "PEM object over 64 KiB: not a certificate chain" :
		    e == -E_LIMIT ? "a chain of more than 8 certificates" :
		    e == -E_IO ? "cannot read it" : "out of memory");
		mem_free(l.der);
		return e;
	}
	l.enc = 0;
	e = load_file(&l, key);
	mem_free(l.der);
	if (e == 0 && l.cr->nkeys != 1)
		e = -E_PARSE;
	if (e != 0) {
		snprintf(why, wn, "%s %s: %s", kname, key,
		    e == -E_NOENT ? "no such file" : e == -E_IO ? "cannot "
		    "read it" : l.big ? "over 256 KiB, or a PEM object over "
		    "64 KiB: not a key file" : l.enc ? "the key is encrypted: store it "
		    "unencrypted (openssl pkey -in KEY -out PLAIN), readable "
		    "by root only" : l.cr->nkeys > 1 ? "more than one key "
		    "in it" : e == -E_PARSE ? "no PEM private key in it" :
		    "out of memory");
		return e;
	}
	if (key_parse(l.cr, (struct der){ l.cr->der, l.cr->der_len }, 0,
	    0) != 0) {
		snprintf(why, wn, "%s %s: not an RSA or EC (P-256, "
		    "P-384, P-521) private key", kname, key);
		return -E_PARSE;
	}
	if (cred_match(l.cr) != 0) {
		snprintf(why, wn, "%s %s does not belong to the first "
		    "certificate of %s %s", kname, key, cname, cert);
		return -E_PARSE;
	}
	*out = l.cr;
	return 0;
}

/* see tls.h */
int
tls_key_kind(const void *p, size_t n)
{
	struct tls_cred cr;

	memset(&cr, 0, sizeof(cr));
	return key_parse(&cr, (struct der){ p, n }, 0, 0) == 0 ? cr.type : 0;
}

/* see tls.h */
const char *
tls_cred_kind(const struct tls_cred *cr)
{
	const br_ec_private_key *ek = &cr->ec;

	if (cr->type == BR_KEYTYPE_RSA)
		return "RSA";
	return ek->curve == BR_EC_secp256r1 ? "EC P-256" :
	    ek->curve == BR_EC_secp384r1 ? "EC P-384" : "EC P-521";
}

/* see tls.h */
void
tls_cred_wipe(struct tls_cred *cr)
{
	explicit_bzero(cr->der, cr->der_len);
}

/* see tls.h */
size_t
tls_srv_size(void)
{
	return sizeof(struct tls_srv);
}

/* see tls.h */
void
tls_srv_start(struct tls_srv *t, const struct tls_cred *cr)
{
	br_ssl_engine_context *eng = &t->sc.eng;

	t->cr = cr;
	t->heard = 0;
	t->whybuf[0] = '\0';
	br_ssl_server_zero(&t->sc);
	engine_profile(eng);
	br_ssl_engine_add_flags(eng, BR_OPT_NO_RENEGOTIATION);
	if (cr->type == BR_KEYTYPE_EC)
		br_ssl_server_set_single_ec(&t->sc, cr->chain, cr->n, &cr->ec,
		    BR_KEYTYPE_SIGN, BR_KEYTYPE_EC, br_ec_get_default(),
		    br_ecdsa_sign_asn1_get_default());
	else
		br_ssl_server_set_single_rsa(&t->sc, cr->chain, cr->n,
		    &cr->rsa, BR_KEYTYPE_SIGN,
		    br_rsa_private_get_default(),
		    br_rsa_pkcs1_sign_get_default());
	br_ssl_engine_set_buffers_bidi(eng, t->ibuf, sizeof(t->ibuf), t->obuf,
	    sizeof(t->obuf));
	engine_seed(eng);
	br_ssl_server_reset(&t->sc);
}

/* Non-blocking I/O for both sides, over a socket the caller polls. */

/* Send the records that wait: 1 all sent, 0 the socket is full, -1 the
 * connection is gone. */
static int
eng_flush(br_ssl_engine_context *eng, int fd)
{
	unsigned char *b;
	size_t len;
	ssize_t k;

	while (br_ssl_engine_current_state(eng) & BR_SSL_SENDREC) {
		b = br_ssl_engine_sendrec_buf(eng, &len);
		k = send(fd, b, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (k <= 0)
			return -1;
		br_ssl_engine_sendrec_ack(eng, (size_t)k);
	}
	return 1;
}

/* Plaintext in, handshaking as needed: >0 bytes, 0 would block, -1 over. */
static long
eng_read(br_ssl_engine_context *eng, int fd, void *buf, size_t n)
{
	unsigned char *b;
	unsigned st;
	size_t len;
	ssize_t k;

	for (;;) {
		if (eng_flush(eng, fd) < 0)
			return -1;
		st = br_ssl_engine_current_state(eng);
		if (st & BR_SSL_CLOSED)
			return -1;
		if (st & BR_SSL_RECVAPP) {
			b = br_ssl_engine_recvapp_buf(eng, &len);
			len = MIN(len, n);
			memcpy(buf, b, len);
			br_ssl_engine_recvapp_ack(eng, len);
			return (long)len;
		}
		if (!(st & BR_SSL_RECVREC))
			return 0;	/* records to send first */
		b = br_ssl_engine_recvrec_buf(eng, &len);
		k = recv(fd, b, len, MSG_DONTWAIT);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (k <= 0)
			return -1;	/* gone, or closed without a word */
		br_ssl_engine_recvrec_ack(eng, (size_t)k);
	}
}

/* Plaintext out: the bytes taken, 0 when the socket is full (or, with
 * early, the handshake is not done), -1 over. */
static long
eng_write(br_ssl_engine_context *eng, int fd, const void *buf, size_t n,
    int early)
{
	unsigned char *b;
	size_t len, done = 0;
	int f;

	for (;;) {
		if ((f = eng_flush(eng, fd)) < 0 ||
		    (br_ssl_engine_current_state(eng) & BR_SSL_CLOSED))
			return -1;
		if (done == n || f == 0)
			break;
		if ((b = br_ssl_engine_sendapp_buf(eng, &len)) == NULL)
			return early ? (long)done : -1;
		len = MIN(len, n - done);
		memcpy(b, (const unsigned char *)buf + done, len);
		br_ssl_engine_sendapp_ack(eng, len);
		done += len;
		if (done == n)
			br_ssl_engine_flush(eng, 0);
	}
	return (long)done;
}

static void
eng_close(br_ssl_engine_context *eng, int fd)
{
	if (br_ssl_engine_current_state(eng) & BR_SSL_CLOSED)
		return;
	br_ssl_engine_close(eng);
	(void)eng_flush(eng, fd);
}

/* see tls.h */
long
tls_srv_read(struct tls_srv *t, int fd, void *buf, size_t n)
{
	unsigned char c;
	ssize_t k;

	if (!t->heard) {	/* a TLS record starts 0x16 */
		k = recv(fd, &c, 1, MSG_DONTWAIT | MSG_PEEK);
		if (k == 1 && c >= 'A' && c <= 'Z')
			return -2;
		t->heard = k == 1;
	}
	return eng_read(&t->sc.eng, fd, buf, n);
}

/* see tls.h */
long
tls_srv_write(struct tls_srv *t, int fd, const void *buf, size_t n)
{
	/* no handshake: it waits for the client */
	return eng_write(&t->sc.eng, fd, buf, n, 0);
}

/* see tls.h */
int
tls_srv_unsent(const struct tls_srv *t)
{
	return (br_ssl_engine_current_state(&t->sc.eng) & BR_SSL_SENDREC) != 0;
}

/* see tls.h */
int
tls_srv_pending(const struct tls_srv *t)
{
	return (br_ssl_engine_current_state(&t->sc.eng) & BR_SSL_RECVAPP) != 0;
}

/* see tls.h */
void
tls_srv_close(struct tls_srv *t, int fd)
{
	eng_close(&t->sc.eng, fd);
}

/* see tls.h */
const char *
tls_srv_why(struct tls_srv *t)
{
	int be = br_ssl_engine_last_error(&t->sc.eng);

	if (be == BR_ERR_OK || be == BR_ERR_IO)
		return NULL;
	return err_words(be, "client", t->whybuf, sizeof(t->whybuf));
}

/* --- the non-blocking client (the MQTT link): the blocking client's
 * profile, the server's loop, and a client certificate when given. */

struct tls_cli {
	struct tls_conn	 c;	/* c.net NULL: the caller's socket */
	/* A server named by its IP address: BearSSL matches DNS names
	 * only, so its checks run without a name, through ipx, which then
	 * looks for the address among the leaf's subjectAltNames. */
	const br_x509_class *ipx;
	unsigned char	 ip[16];
	size_t		 iplen, leaf_len;
	unsigned	 ncert;
	unsigned char	 leaf[4096];
};

#define IPX(ctx)	((struct tls_cli *)(void *)((char *)(ctx) - \
			    offsetof(struct tls_cli, ipx)))
#define IPX_IN(ctx)	(&IPX(ctx)->c.xc.vtable)

static void
ipx_start_chain(const br_x509_class **ctx, const char *server_name)
{
	IPX(ctx)->ncert = 0;
	IPX(ctx)->leaf_len = 0;
	(*IPX_IN(ctx))->start_chain(IPX_IN(ctx), NULL);
}

static void
ipx_start_cert(const br_x509_class **ctx, uint32_t length)
{
	IPX(ctx)->ncert++;
	(*IPX_IN(ctx))->start_cert(IPX_IN(ctx), length);
}

static void
ipx_append(const br_x509_class **ctx, const unsigned char *buf, size_t len)
{
	struct tls_cli *t = IPX(ctx);

	if (t->ncert == 1 && len <= sizeof(t->leaf) - t->leaf_len) {
		memcpy(t->leaf + t->leaf_len, buf, len);
		t->leaf_len += len;
	} else if (t->ncert == 1)
		t->leaf_len = sizeof(t->leaf) + 1;	/* too big: no match */
	(*IPX_IN(ctx))->append(IPX_IN(ctx), buf, len);
}

static void
ipx_end_cert(const br_x509_class **ctx)
{
	(*IPX_IN(ctx))->end_cert(IPX_IN(ctx));
}

/* Is the address an iPAddress of the leaf's subjectAltName? */
static int
leaf_has_ip(const struct tls_cli *t)
{
	struct certkey ck;
	struct der x, val, names, name;
	unsigned tag;

	if (t->leaf_len > sizeof(t->leaf) ||
	    cert_key(t->leaf, t->leaf_len, &ck) != 0 ||
	    der_take(&ck.rest, 0xa3, &x, NULL) != 0 ||
	    der_ext(x, OID_SAN, &val) != 0 ||
	    der_take(&val, 0x30, &names, NULL) != 0)
		return 0;
	while (names.n > 0) {
		tag = names.p[0];
		if (der_take(&names, tag, &name, NULL) != 0)
			return 0;
		if (tag == 0x87 && name.n == t->iplen &&
		    memcmp(name.p, t->ip, t->iplen) == 0)
			return 1;
	}
	return 0;
}

static unsigned
ipx_end_chain(const br_x509_class **ctx)
{
	unsigned r = (*IPX_IN(ctx))->end_chain(IPX_IN(ctx));

	if (r == BR_ERR_OK && !leaf_has_ip(IPX(ctx)))
		r = BR_ERR_X509_BAD_SERVER_NAME;
	return r;
}

static const br_x509_pkey *
ipx_get_pkey(const br_x509_class *const *ctx, unsigned *usages)
{
	const struct tls_cli *t = (const struct tls_cli *)(const void *)
	    ((const char *)ctx - offsetof(struct tls_cli, ipx));

	return t->c.xc.vtable->get_pkey(&t->c.xc.vtable, usages);
}

static const br_x509_class ipx_class = {
	sizeof(struct tls_cli), ipx_start_chain, ipx_start_cert, ipx_append,
	ipx_end_cert, ipx_end_chain, ipx_get_pkey,
};

/* see tls.h */
size_t
tls_cli_size(void)
{
	return sizeof(struct tls_cli);
}

/* see tls.h */
int
tls_cli_start(struct tls_cli *t, const struct tls_anchors *ta,
    const char *server_name, const struct tls_cred *cr)
{
	br_ssl_client_context *cc = &t->c.cc;

	memset(&t->c, 0, offsetof(struct tls_conn, ibuf));
	profile(&t->c, ta);
	t->iplen = inet_pton(AF_INET, server_name, t->ip) == 1 ? 4 :
	    inet_pton(AF_INET6, server_name, t->ip) == 1 ? 16 : 0;
	if (t->iplen != 0) {		/* no SNI for an address either */
		t->ipx = &ipx_class;
		br_ssl_engine_set_x509(&cc->eng, &t->ipx);
		server_name = NULL;
	}
	if (cr != NULL && cr->type == BR_KEYTYPE_EC)
		br_ssl_client_set_single_ec(cc, cr->chain, cr->n, &cr->ec,
		    BR_KEYTYPE_SIGN, BR_KEYTYPE_EC, br_ec_get_default(),
		    br_ecdsa_sign_asn1_get_default());
	else if (cr != NULL)
		br_ssl_client_set_single_rsa(cc, cr->chain, cr->n, &cr->rsa,
		    br_rsa_pkcs1_sign_get_default());
	engine_seed(&cc->eng);
	if (!br_ssl_client_reset(cc, server_name, 0))
		return set_err(&t->c, -E_TLS);
	return 0;
}

/* see tls.h */
long
tls_cli_read(struct tls_cli *t, int fd, void *buf, size_t n)
{
	return eng_read(&t->c.cc.eng, fd, buf, n);
}

/* see tls.h */
long
tls_cli_write(struct tls_cli *t, int fd, const void *buf, size_t n)
{
	return eng_write(&t->c.cc.eng, fd, buf, n, 1);
}

/* see tls.h */
int
tls_cli_unsent(const struct tls_cli *t)
{
	return (br_ssl_engine_current_state(&t->c.cc.eng) &
	    BR_SSL_SENDREC) != 0;
}

/* see tls.h */
int
tls_cli_ready(const struct tls_cli *t)
{
	return (br_ssl_engine_current_state(&t->c.cc.eng) &
	    BR_SSL_SENDAPP) != 0;
}

/* see tls.h */
int
tls_cli_pending(const struct tls_cli *t)
{
	return (br_ssl_engine_current_state(&t->c.cc.eng) &
	    BR_SSL_RECVAPP) != 0;
}

/* see tls.h */
void
tls_cli_close(struct tls_cli *t, int fd)
{
	eng_close(&t->c.cc.eng, fd);
}

/* see tls.h */
const char *
tls_cli_why(struct tls_cli *t)
{
	int be = br_ssl_engine_last_error(&t->c.cc.eng);

	if (be == BR_ERR_OK || be == BR_ERR_IO)
		return NULL;
	return err_words(be, "server", t->c.whybuf, sizeof(t->c.whybuf));
}

static void
pem_object(struct load *l, int kind)
{
	if (l->ta != NULL) {
		if (kind == PEM_CERT)
			add_cert(l);
	}
	else if (l->cr != NULL)
		cred_object(l, kind);
}
