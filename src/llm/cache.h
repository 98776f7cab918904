/* cache.h - the response cache (EVAL=1 builds): model replies on disk,
 * one file per request, named by the request's SHA-256 in hex and holding
 * the raw reply body (SSE, NDJSON or JSON) as it came, so that a hit is
 * decoded by the same code as a reply from the network.
 *
 * Files are written whole (a temporary file renamed over the name) and
 * evicted least recently used first (a hit touches the file's times)
 * when the folder's files add up to more than the cap. Opt-in from
 * skillbox.yaml (cache:), off with $SKILLBOX_NO_CACHE or --no-cache.
 */
#ifndef CACHE_H
#define CACHE_H

#include "base/base.h"
#include "base/str.h"

/* The stored reply for key (64 hex digits) into out (its bound is the
 * most read), and mark it used now. 0, -E_NOENT (a miss), -E_LIMIT (over
 * out's bound) or -E_IO. */
int	cache_get(const char *dir, const char *key, struct sbuf *out);

/* Store n bytes at p for key, making dir if need be, then evict the least
 * recently used files until the folder holds at most max bytes. A reply
 * over max is not stored. 0 or -E_*. */
int	cache_put(const char *dir, size_t max, const char *key, const char *p,
	    size_t n);

/* Forget key (a stored reply that no longer decodes). */
void	cache_drop(const char *dir, const char *key);

#endif
