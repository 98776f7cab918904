/* test_tls.c - trust anchors from PEM: our reader against odd bundles. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bearssl.h>

#include "base/str.h"
#include "net/tls.h"
#include "unit.h"

#define BUNDLE	"/etc/ssl/certs/ca-certificates.crt"

/* The system bundle, NUL-terminated in the test arena, or NULL. */
static char *
slurp(const char *path, size_t *n)
{
	struct sbuf sb;
	char buf[4096];
	ssize_t r;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return NULL;
	sbuf_init(&sb, &t_arena, 4u << 20);
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		sbuf_add(&sb, buf, (size_t)r);
	close(fd);
	*n = sb.len;
	return sb.err ? NULL : sb.p;
}

static unsigned
count_of(const char *s, const char *what)
{
	unsigned k = 0;

	while ((s = strstr(s, what)) != NULL) {
		k++;
		s++;
	}
	return k;
}

/* Load text as a bundle file; the anchor count, or -1 with the error. */
static int
load_text(const char *text, size_t n, int *err)
{
	char path[] = "/tmp/skillbox-tls-XXXXXX";
	struct tls_anchors *ta;
	unsigned count = 0;
	int fd = mkstemp(path);

	T(fd >= 0);
	T(write(fd, text, n) == (ssize_t)n);
	close(fd);
	*err = tls_anchors_load(&t_arena, path, &ta, &count);
	unlink(path);
	return *err == 0 ? (int)count : -1;
}

/* The first certificate of the bundle, BEGIN to END line included. */
static char *
first_cert(const char *b)
{
	const char *s = strstr(b, "-----BEGIN CERTIFICATE-----");
	const char *e = s != NULL ? strstr(s, "-----END CERTIFICATE-----") :
	    NULL;

	if (e == NULL)
		return NULL;
	e += strlen("-----END CERTIFICATE-----");
	return arena_strndup(&t_arena, s, (size_t)(e - s));
}

static void
system_bundle(void)
{
	size_t n;
	char *b = slurp(BUNDLE, &n);
	int e;

	T(b != NULL);		/* tools/setup installs ca-certificates */
	if (b == NULL)
		return;
	/* Every certificate of Debian's bundle decodes. */
	T_EQI(load_text(b, n, &e), (int)count_of(b, "BEGIN CERTIFICATE"));
}

static void
odd_bundles(void)
{
	struct sbuf sb;
	size_t n, i;
	char *b = slurp(BUNDLE, &n), *c = NULL, *bad;
	int e;

	T(b != NULL && (c = first_cert(b)) != NULL);
	if (b == NULL || c == NULL)
		return;
	T_EQI(load_text(c, strlen(c), &e), 1);	/* no LF at the end */

	/* CRLF lines, trailing blanks, text around, an X509 CERTIFICATE, a
	 * key that is skipped, and a line too long to be PEM. */
	sbuf_init(&sb, &t_arena, 0);
	sbuf_adds(&sb, "Bundle for a test\r\n\r\n");
	for (i = 0; c[i] != '\0'; i++) {
		if (c[i] == '\n')
			sbuf_adds(&sb, "  \r");
		sbuf_addc(&sb, c[i]);
	}
	sbuf_adds(&sb, "\r\n-----BEGIN PRIVATE KEY-----\nAAAA\n"
	    "-----END PRIVATE KEY-----\n");
	sbuf_adds(&sb, "-----BEGIN X509 CERTIFICATE-----");
	sbuf_adds(&sb, strchr(c, '\n'));
	sbuf_addc(&sb, '\n');
	for (i = 0; i < 1000; i++)
		sbuf_addc(&sb, 'x');
	sbuf_adds(&sb, "\n");
	sbuf_adds(&sb, c);
	sbuf_addc(&sb, '\n');
	T_EQI(sb.err, 0);
	T_EQI(load_text(sb.p, sb.len, &e), 3);

	/* A certificate with a character that is not base64 is dropped; the
	 * next one still loads. */
	bad = arena_strdup(&t_arena, c);
	bad[strlen("-----BEGIN CERTIFICATE-----\n") + 10] = '*';
	sbuf_init(&sb, &t_arena, 0);
	sbuf_adds(&sb, bad);
	sbuf_addc(&sb, '\n');
	sbuf_adds(&sb, c);
	T_EQI(load_text(sb.p, sb.len, &e), 1);
	T_EQI(load_text(bad, strlen(bad), &e), -1);
	T_EQI(e, -E_PARSE);

	/* Cut in the middle: nothing, and no crash. */
	T_EQI(load_text(c, strlen(c) / 2, &e), -1);
	T_EQI(e, -E_PARSE);
	T_EQI(load_text("", 0, &e), -1);
	T_EQI(e, -E_PARSE);
}

/* The oracle: BearSSL's own X.509 decoder on each certificate, fed by a
 * base64 decoder of the test's own. */
struct want {
	unsigned char	dn[1024];
	size_t		dn_len;
};

static void
want_dn(void *ctx, const void *buf, size_t n)
{
	struct want *w = ctx;

	if (w->dn_len + n <= sizeof(w->dn))
		memcpy(w->dn + w->dn_len, buf, n);
	w->dn_len += n;
}

static size_t
unbase64(const char *s, const char *end, unsigned char *out)
{
	static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	unsigned bits = 0, nb = 0;
	size_t k = 0;
	const char *c;

	for (; s < end && *s != '='; s++) {
		if ((c = strchr(al, *s)) == NULL || *s == '\0')
			continue;		/* line ends */
		bits = bits << 6 | (unsigned)(c - al);
		if ((nb += 6) >= 8) {
			nb -= 8;
			out[k++] = (unsigned char)(bits >> nb);
		}
	}
	return k;
}

static void
same_as_bearssl(void)
{
	static const char B[] = "-----BEGIN CERTIFICATE-----";
	static const char E[] = "-----END CERTIFICATE-----";
	static unsigned char der[16384];
	struct tls_anchors *ta;
	const br_x509_trust_anchor *a;
	const br_x509_pkey *pk;
	br_x509_decoder_context dc;
	struct want w;
	unsigned count, i = 0, ca = 0, ec = 0;
	const char *s, *e;
	size_t n, k;
	char *b = slurp(BUNDLE, &n);

	T(b != NULL);
	if (b == NULL)
		return;
	T_EQI(tls_anchors_load(&t_arena, BUNDLE, &ta, &count), 0);
	for (s = b; (s = strstr(s, B)) != NULL; s = e, i++) {
		T((e = strstr(s, E)) != NULL);
		if (e == NULL)
			break;
		k = unbase64(s + sizeof(B) - 1, e, der);
		memset(&w, 0, sizeof(w));
		br_x509_decoder_init(&dc, want_dn, &w);
		br_x509_decoder_push(&dc, der, k);
		T((pk = br_x509_decoder_get_pkey(&dc)) != NULL);
		T((a = tls_anchor_at(ta, i)) != NULL);
		if (pk == NULL || a == NULL)
			continue;
		T_EQI(a->dn.len, w.dn_len);
		T(a->dn.len == w.dn_len && memcmp(a->dn.data, w.dn,
		    w.dn_len) == 0);
		T_EQI(a->flags, br_x509_decoder_isCA(&dc) ? BR_X509_TA_CA : 0);
		T_EQI(a->pkey.key_type, pk->key_type);
		if (pk->key_type == BR_KEYTYPE_RSA) {
			T(a->pkey.key.rsa.nlen == pk->key.rsa.nlen &&
			    memcmp(a->pkey.key.rsa.n, pk->key.rsa.n,
			    pk->key.rsa.nlen) == 0);
			T(a->pkey.key.rsa.elen == pk->key.rsa.elen &&
			    memcmp(a->pkey.key.rsa.e, pk->key.rsa.e,
			    pk->key.rsa.elen) == 0);
		} else {
			ec++;
			T_EQI(a->pkey.key.ec.curve, pk->key.ec.curve);
			T(a->pkey.key.ec.qlen == pk->key.ec.qlen &&
			    memcmp(a->pkey.key.ec.q, pk->key.ec.q,
			    pk->key.ec.qlen) == 0);
		}
		ca += (a->flags & BR_X509_TA_CA) != 0;
	}
	T_EQI(i, count);
	T(tls_anchor_at(ta, i) == NULL);
	T(ca > 100 && ec > 10);		/* both kinds were compared */
}

static const struct unit_case cases[] = {
	{ "system_bundle", system_bundle },
	{ "odd_bundles", odd_bundles },
	{ "same_as_bearssl", same_as_bearssl },
};

const struct unit_suite suite_tls = { "tls", cases, ARRAY_LEN(cases) };
