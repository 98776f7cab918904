/* sha256.h - SHA-256 (FIPS 180-4) for the audit records of sandboxed runs.
 * Not for TLS: that is BearSSL's, inside tls.c. */
#ifndef SHA256_H
#define SHA256_H

#include "base/base.h"

struct sha256 {
	uint32_t	 h[8];
	uint64_t	 n;		/* bytes fed */
	unsigned char	 buf[64];
};

void	sha256_init(struct sha256 *c);
void	sha256_feed(struct sha256 *c, const void *p, size_t n);
void	sha256_final(struct sha256 *c, unsigned char out[32]);
/* Lowercase hex of a digest, NUL-terminated. */
void	sha256_hex(const unsigned char d[32], char out[65]);

#endif
