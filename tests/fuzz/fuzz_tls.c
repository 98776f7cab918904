/* fuzz_tls.c - libFuzzer harness for trust anchors from a CA bundle: our
 * PEM reader and the DER walk that takes each certificate's subject and key.
 *
 * An input whose first byte is even is the bundle file as it is; an odd one
 * has the rest of the input wrapped as the base64 of one CERTIFICATE, so
 * mutations reach the DER walk directly. Every anchor must be well formed:
 * a DN inside the input, an RSA or EC key with its parts. The rest of the
 * input is also read as a DER private key (serve's tls_key), which must
 * not read outside it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bearssl.h>

#include "base/arena.h"
#include "net/tls.h"

#define CHECK(c) do {							\
	if (!(c))							\
		abort();						\
} while (0)

static void
put_b64(FILE *f, const uint8_t *p, size_t n)
{
	static const char al[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i, col = 0;
	unsigned v;

	for (i = 0; i < n; i += 3) {
		v = (unsigned)p[i] << 16 | (i + 1 < n ? p[i + 1] : 0) << 8 |
		    (i + 2 < n ? p[i + 2] : 0);
		fputc(al[v >> 18 & 63], f);
		fputc(al[v >> 12 & 63], f);
		fputc(i + 1 < n ? al[v >> 6 & 63] : '=', f);
		fputc(i + 2 < n ? al[v & 63] : '=', f);
		if ((col += 4) == 64) {
			fputc('\n', f);
			col = 0;
		}
	}
	fputc('\n', f);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct arena a;
	struct tls_anchors *ta;
	const br_x509_trust_anchor *t;
	char path[64];
	unsigned count = 0, i;
	int fd, e;
	FILE *f;

	if (size == 0)
		return 0;
	e = tls_key_kind(data + 1, size - 1);
	CHECK(e == 0 || e == BR_KEYTYPE_RSA || e == BR_KEYTYPE_EC);
	if ((fd = memfd_create("bundle", 0)) < 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	f = fdopen(dup(fd), "w");
	CHECK(f != NULL);
	if (data[0] % 2 == 0) {
		fwrite(data + 1, 1, size - 1, f);
	} else {
		fputs("-----BEGIN CERTIFICATE-----\n", f);
		put_b64(f, data + 1, size - 1);
		fputs("-----END CERTIFICATE-----\n", f);
	}
	fclose(f);
	arena_init(&a, "fuzz");
	e = tls_anchors_load(&a, path, &ta, &count);
	close(fd);
	CHECK(e == 0 || e == -E_PARSE || e == -E_NOMEM || e == -E_LIMIT);
	for (i = 0; e == 0 && i < count; i++) {
		CHECK((t = tls_anchor_at(ta, i)) != NULL);
		CHECK(t->dn.len >= 2 && t->dn.len <= size);
		CHECK(t->dn.data[0] == 0x30);
		if (t->pkey.key_type == BR_KEYTYPE_RSA) {
			CHECK(t->pkey.key.rsa.nlen > 0 &&
			    t->pkey.key.rsa.nlen <= size);
			CHECK(t->pkey.key.rsa.elen > 0 &&
			    t->pkey.key.rsa.elen <= size);
		} else {
			CHECK(t->pkey.key_type == BR_KEYTYPE_EC);
			CHECK(t->pkey.key.ec.curve == BR_EC_secp256r1 ||
			    t->pkey.key.ec.curve == BR_EC_secp384r1 ||
			    t->pkey.key.ec.curve == BR_EC_secp521r1);
			CHECK(t->pkey.key.ec.qlen > 0 &&
			    t->pkey.key.ec.qlen <= size);
		}
	}
	if (e == 0)
		CHECK(tls_anchor_at(ta, count) == NULL);
	arena_reset(&a);
	return 0;
}
