/* str.h - slices and capped string builders. */
#ifndef STR_H
#define STR_H

#include <stdarg.h>

#include "base/arena.h"
#include "base/base.h"

/* A builder into an arena with a hard cap. Once a write fails the error is
 * sticky (sb->err): later writes do nothing, so callers check once at the
 * end. The buffer is always NUL-terminated. */
struct sbuf {
	struct arena	*a;
	char		*p;
	size_t		 len, cap, max;
	int		 err;		/* 0, -E_NOMEM or -E_LIMIT */
};

/* `max` bounds len (0 = no bound beyond the budget). With a == NULL the
 * buffer lives on the heap (mem_realloc): it grows in place when it can and
 * must be given back with sbuf_release(). Use that for big buffers. */
void	sbuf_init(struct sbuf *sb, struct arena *a, size_t max);
void	sbuf_release(struct sbuf *sb);
void	sbuf_add(struct sbuf *sb, const char *s, size_t n);
void	sbuf_adds(struct sbuf *sb, const char *s);
void	sbuf_addc(struct sbuf *sb, char c);
void	sbuf_printf(struct sbuf *sb, const char *fmt, ...) ATTR_PRINTF(2, 3);
void	sbuf_vprintf(struct sbuf *sb, const char *fmt, va_list ap);
/* Drop everything after the first `len` bytes. */
void	sbuf_truncate(struct sbuf *sb, size_t len);

int	str_eq(struct str a, struct str b);
int	str_eqz(struct str a, const char *z);
int	str_has_prefix(struct str s, const char *prefix);
struct str str_z(const char *z);
/* Trim ASCII spaces, tabs, CR and LF from both ends. */
struct str str_trim(struct str s);
/* Copy a slice into the arena with a NUL. */
char	*str_dup(struct arena *a, struct str s);
/* 1 when s is one of v[0..n) (a NULL in v ends it sooner; v may be NULL:
 * SIZE_MAX for a NULL-terminated list), else 0. */
int	str_in(const char *const *v, size_t n, const char *s);
/* 1 when word is one of the space-separated words of list, else 0. */
int	str_word_in(const char *list, const char *word);

/* The value of hex digit c (either case), or -1. */
int	str_hex_val(int c);

/* True when s[0..n) is well-formed UTF-8 (no overlongs or surrogates). */
int	str_is_utf8(const char *s, size_t n);

/* Make text safe to show on a terminal, in place: C0 controls but
 * newline and tab, DEL, and C1 controls (U+0080-U+009F in UTF-8) become
 * '?', so that text from a model or a server cannot move the cursor,
 * retitle the window or fake a prompt. */
void	str_ctl_clean(char *s, size_t n);

/* Unpack text packed by tools/lzpack (the format is described there) into
 * out[cap]. Returns the bytes unpacked; a copy that reaches before the
 * start or past cap ends it early. */
size_t	str_unpack(const unsigned char *in, size_t n, char *out, size_t cap);

/* A plain decimal: "12", "0.25", ".5" (digits and at most one point; no
 * sign or exponent), as timeouts and prices are written. 0, or -1 when s
 * is not one. Needs no strtod, so no float scanner in the binary. */
int	str_decimal(const char *s, double *out);

/* UTC calendar arithmetic without gmtime (and its time-zone code). */
struct utc {
	long long	year;
	int		mon, day, hour, min, sec;	/* mon 1-12, day 1-31 */
};
/* Days from 1970-01-01 to y-mon-day (proleptic Gregorian). */
long long utc_days(long long y, int mon, int day);
/* Seconds since the epoch to a calendar date and time. */
void	utc_split(long long t, struct utc *u);

#endif
