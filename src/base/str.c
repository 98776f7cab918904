/* str.c - slices and capped builders. */
#include "base/str.h"

#include <stdio.h>
#include <string.h>

void
sbuf_init(struct sbuf *sb, struct arena *a, size_t max)
{
	sb->a = a;
	sb->p = "";
	sb->len = sb->cap = 0;
	sb->max = max != 0 ? max : (size_t)-1 / 2;
	sb->err = 0;
}

/* Make room for n more bytes and the NUL. */
static int
grow(struct sbuf *sb, size_t n)
{
	size_t want, ncap;
	char *np;

	if (sb->err)
		return sb->err;
	if (n > sb->max - sb->len)
		return sb->err = -E_LIMIT;
	want = sb->len + n + 1;
	if (want <= sb->cap)
		return 0;
	ncap = sb->cap < 64 ? 64 : sb->cap * 2;
	while (ncap < want)
		ncap *= 2;
	if (ncap > sb->max + 1)
		ncap = sb->max + 1;
	if (sb->a == NULL) {
		np = mem_realloc(sb->cap ? sb->p : NULL, ncap);
		if (np == NULL && ncap > want) {	/* tight fit instead */
			ncap = (want + 4095) & ~(size_t)4095;
			if (ncap > sb->max + 1)
				ncap = sb->max + 1;
			np = mem_realloc(sb->cap ? sb->p : NULL, ncap);
		}
		if (np == NULL)
			return sb->err = -E_NOMEM;
		if (sb->cap == 0)
			np[0] = '\0';
	} else {
		if ((np = arena_alloc(sb->a, ncap)) == NULL)
			return sb->err = -E_NOMEM;
		memcpy(np, sb->p, sb->len + 1);
	}
	sb->p = np;
	sb->cap = ncap;
	return 0;
}

void
sbuf_release(struct sbuf *sb)
{
	if (sb->a == NULL && sb->cap != 0)
		mem_free(sb->p);
	sb->p = "";
	sb->len = sb->cap = 0;
}

void
sbuf_add(struct sbuf *sb, const char *s, size_t n)
{
	/* Room already (the usual case): no call to grow. */
	if ((sb->err != 0 || n >= sb->cap - sb->len) && grow(sb, n) != 0)
		return;
	memcpy(sb->p + sb->len, s, n);
	sb->len += n;
	sb->p[sb->len] = '\0';
}

void
sbuf_adds(struct sbuf *sb, const char *s)
{
	sbuf_add(sb, s, strlen(s));
}

void
sbuf_addc(struct sbuf *sb, char c)
{
	sbuf_add(sb, &c, 1);
}

void
sbuf_vprintf(struct sbuf *sb, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0) {
		if (!sb->err)
			sb->err = -E_INVAL;
		return;
	}
	if (grow(sb, (size_t)n) != 0)
		return;
	vsnprintf(sb->p + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void
sbuf_printf(struct sbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sbuf_vprintf(sb, fmt, ap);
	va_end(ap);
}

void
sbuf_truncate(struct sbuf *sb, size_t len)
{
	if (len < sb->len) {
		sb->len = len;
		sb->p[len] = '\0';
	}
}

int
str_eq(struct str a, struct str b)
{
	return a.n == b.n && (a.n == 0 || memcmp(a.p, b.p, a.n) == 0);
}

int
str_eqz(struct str a, const char *z)
{
	return str_eq(a, str_z(z));
}

/* see str.h */
int
str_in(const char *const *v, size_t n, const char *s)
{
	size_t i;

	for (i = 0; v != NULL && i < n && v[i] != NULL; i++)
		if (strcmp(v[i], s) == 0)
			return 1;
	return 0;
}

/* see str.h */
int
str_word_in(const char *list, const char *word)
{
	const char *p = list;
	size_t len = strlen(word);

	while ((p = strstr(p, word)) != NULL) {
		if ((p == list || p[-1] == ' ') && (p[len] == '\0' ||
		    p[len] == ' '))
			return 1;
		p += len;
	}
	return 0;
}

int
str_has_prefix(struct str s, const char *prefix)
{
	size_t n = strlen(prefix);

	return s.n >= n && memcmp(s.p, prefix, n) == 0;
}

struct str
str_z(const char *z)
{
	struct str s = { z, z != NULL ? strlen(z) : 0 };

	return s;
}

static int
is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

struct str
str_trim(struct str s)
{
	while (s.n > 0 && is_blank(s.p[0]))
		s.p++, s.n--;
	while (s.n > 0 && is_blank(s.p[s.n - 1]))
		s.n--;
	return s;
}

char *
str_dup(struct arena *a, struct str s)
{
	return arena_strndup(a, s.p, s.n);
}

int
str_hex_val(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int
str_is_utf8(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *e = p + n;
	unsigned c, need;
	unsigned long cp, min;

	while (p < e) {
		c = *p++;
		if (c < 0x80)
			continue;
		if (c >= 0xc2 && c <= 0xdf)
			need = 1, cp = c & 0x1f, min = 0x80;
		else if (c >= 0xe0 && c <= 0xef)
			need = 2, cp = c & 0x0f, min = 0x800;
		else if (c >= 0xf0 && c <= 0xf4)
			need = 3, cp = c & 0x07, min = 0x10000;
		else
			return 0;
		if ((size_t)(e - p) < need)
			return 0;
		while (need-- > 0) {
			if ((*p & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (*p++ & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
	}
	return 1;
}

int
str_decimal(const char *s, double *out)
{
	static const double p10[] = {
		1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
		1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19
	};
	unsigned long long m = 0;
	unsigned nd = 0, frac = 0, point = 0;

	for (; *s != '\0'; s++) {
		if (*s == '.' && !point) {
			point = 1;
			continue;
		}
		if (*s < '0' || *s > '9')
			return -1;
		nd++;
		if (m >= 1000000000000000000ULL) {	/* 19 digits kept */
			if (!point)
				return -1;
			continue;
		}
		m = m * 10 + (unsigned)(*s - '0');
		frac += point;
	}
	if (nd == 0)
		return -1;
	/* Up to 15 digits both operands are exact: one rounding. */
	*out = (double)m / p10[frac];
	return 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date, counting in
 * 400-year eras of 146,097 days from a year that starts on 1 March, so
 * the leap day is the last day of its year. */
long long
utc_days(long long y, int mon, int day)
{
	long long era, yoe, doy;

	y -= mon <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (mon > 2 ? mon - 3 : mon + 9) + 2) / 5 + day - 1;
	return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

void
utc_split(long long t, struct utc *u)
{
	long long z = t / 86400, s = t % 86400, era, doe, yoe, doy, mp;

	if (s < 0)
		s += 86400, z--;
	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	u->day = (int)(doy - (153 * mp + 2) / 5 + 1);
	u->mon = (int)(mp < 10 ? mp + 3 : mp - 9);
	u->year = yoe + era * 400 + (u->mon <= 2);
	u->hour = (int)(s / 3600);
	u->min = (int)(s / 60 % 60);
	u->sec = (int)(s % 60);
}

/* see str.h */
void
str_ctl_clean(char *s, size_t n)
{
	unsigned char c;
	size_t i;

	for (i = 0; i < n; i++) {
		c = (unsigned char)s[i];
		if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
			s[i] = '?';
		else if (c == 0xc2 && i + 1 < n &&
		    (unsigned char)s[i + 1] >= 0x80 &&
		    (unsigned char)s[i + 1] <= 0x9f) {
			s[i] = '?';
			s[++i] = '?';
		}
	}
}

/* see str.h */
size_t
str_unpack(const unsigned char *in, size_t n, char *out, size_t cap)
{
	size_t i, o = 0, len, d;

	for (i = 0; i < n; i++) {
		if (in[i] < 0x80) {
			if (o == cap)
				break;
			out[o++] = (char)in[i];
			continue;
		}
		if (i + 1 == n)
			break;
		len = ((in[i] >> 4) & 7) + 3;
		d = ((size_t)(in[i] & 15) << 8 | in[i + 1]) + 1;
		i++;
		if (d > o || len > cap - o)
			break;
		for (; len > 0; len--, o++)
			out[o] = out[o - d];
	}
	return o;
}
