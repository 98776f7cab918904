/* schedule.c - cron, periods, intervals, POSIX TZ rules (schedule.h). */
#include <string.h>

#include "fmt/schedule.h"
#include "base/str.h"

static const char months[] = "janfebmaraprmayjunjulaugsepoctnovdec";
static const char wdays[] = "sunmontuewedthufrisat";

/* A number or (names != NULL) a three-letter name at *p; -1 if none. */
static long
number(const char **p, const char *names, int base)
{
	const char *s = *p;
	long v = 0;
	int i;

	if (names != NULL)
		for (i = 0; names[i * 3] != '\0'; i++)
			if (strncasecmp(s, names + i * 3, 3) == 0) {
				*p = s + 3;
				return i + base;
			}
	if (*s < '0' || *s > '9')
		return -1;
	while (*s >= '0' && *s <= '9' && v < 100000)
		v = v * 10 + (*s++ - '0');
	*p = s;
	return v;
}

/* One cron field ending at a space or NUL into the bit set *bits. */
static int
field(const char **p, int lo, int hi, const char *names, uint64_t *bits,
    int *any)
{
	const char *s = *p;
	long a, b, step, v;

	*bits = 0;
	*any = *s == '*' && (s[1] == ' ' || s[1] == '\0');
	for (;;) {
		if (*s == '*') {
			a = lo, b = hi, s++;
		} else {
			if ((a = number(&s, names, lo)) < 0)
				return -E_INVAL;
			b = *s == '/' ? hi : a;	/* "5/15": from 5 on */
			if (*s == '-' && (s++, (b = number(&s, names, lo)) < 0))
				return -E_INVAL;
		}
		step = 1;
		if (*s == '/' && (s++, (step = number(&s, NULL, 0)) <= 0))
			return -E_INVAL;
		if (a < lo || b > hi || a > b)
			return -E_INVAL;
		for (v = a; v <= b; v += step)
			*bits |= 1ULL << v;
		if (*s != ',')
			break;
		s++;
	}
	if (hi == 7 && (*bits >> 7) & 1)	/* 7 is Sunday too */
		*bits = (*bits & 0x7f) | 1;
	if (*s != ' ' && *s != '\t' && *s != '\0')
		return -E_INVAL;
	while (*s == ' ' || *s == '\t')
		s++;
	*p = s;
	return 0;
}

/* "@every N[smhd]": at least a minute, at most SCHED_EVERY_MAX, whose
 * seconds a 32-bit long holds (number() gives up to 999999 units). */
static int
every(const char *s, struct sched *out)
{
	long long v = number(&s, NULL, 0);

	switch (*s) {
	case 's': break;
	case 'm': v *= 60; break;
	case 'h': v *= 3600; break;
	case 'd': v *= 86400; break;
	default: return -E_INVAL;
	}
	if (s[1] != '\0' || v < 60 || v > SCHED_EVERY_MAX)
		return -E_INVAL;
	out->every = (long)v;
	return 0;
}

/* see sched.h */
int
sched_parse(const char *s, struct sched *out)
{
	static const char *const named[][2] = {
		{ "hourly", "0 * * * *" }, { "daily", "0 0 * * *" },
		{ "weekly", "0 0 * * 0" }, { "monthly", "0 0 1 * *" },
	};
	uint64_t b;
	size_t i;
	int any, e;

	memset(out, 0, sizeof(*out));
	while (*s == ' ')
		s++;
	if (strncmp(s, "@every ", 7) == 0)
		return every(s + 7, out);
	for (i = 0; i < ARRAY_LEN(named); i++)
		if (strcmp(s + (*s == '@'), named[i][0]) == 0)
			s = named[i][1];
	if ((e = field(&s, 0, 59, NULL, &out->min, &any)) ||
	    (e = field(&s, 0, 23, NULL, &b, &any)))
		return e;
	out->hour = (uint32_t)b;
	if ((e = field(&s, 1, 31, NULL, &b, &any)))
		return e;
	out->mday = (uint32_t)b, out->dom_any = (unsigned char)any;
	if ((e = field(&s, 1, 12, months, &b, &any)))
		return e;
	out->mon = (uint16_t)b;
	if ((e = field(&s, 0, 7, wdays, &b, &any)))
		return e;
	out->wday = (uint8_t)b, out->dow_any = (unsigned char)any;
	return *s == '\0' ? 0 : -E_INVAL;
}

/* [+-]hh[:mm[:ss]] at *p into seconds; -1 on error. */
static long
hms(const char **p)
{
	const char *s = *p;
	long v, t = 0;
	int sign = 1, i;

	if (*s == '+' || *s == '-')
		sign = *s++ == '-' ? -1 : 1;
	for (i = 0; i < 3; i++) {
		if ((v = number(&s, NULL, 0)) < 0 || v > (i ? 59 : 167))
			return -1;
		t += v * (i == 0 ? 3600 : i == 1 ? 60 : 1);
		if (*s != ':')
			break;
		s++;
	}
	*p = s;
	return sign * t;
}

static int
tzname(const char **p)
{
	const char *s = *p;

	if (*s == '<') {
		while (*s != '>' && *s != '\0')
			s++;
		if (*s++ != '>')
			return -1;
	} else
		while ((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z'))
			s++;
	if (s - *p < 3)
		return -1;
	*p = s;
	return 0;
}

static int
rule(const char **p, struct tz_rule *r)
{
	const char *s = *p;
	long v;

	memset(r, 0, sizeof(*r));
	r->time = 7200;
	if (*s == 'M') {
		s++;
		r->kind = 'M';
		if ((r->m = (int)number(&s, NULL, 0)) < 1 || r->m > 12 ||
		    *s++ != '.' || (r->w = (int)number(&s, NULL, 0)) < 1 ||
		    r->w > 5 || *s++ != '.' ||
		    (r->d = (int)number(&s, NULL, 0)) < 0 || r->d > 6)
			return -1;
	} else {
		r->kind = *s == 'J' ? 'J' : 'D';
		s += *s == 'J';
		if ((v = number(&s, NULL, 0)) < (r->kind == 'J') || v > 365)
			return -1;
		r->d = (int)v;
	}
	if (*s == '/') {
		s++;
		if ((v = hms(&s)) == -1)
			return -1;
		r->time = v;
	}
	*p = s;
	return 0;
}

/* see sched.h */
int
tz_parse(const char *s, struct tz *out)
{
	memset(out, 0, sizeof(*out));
	if (*s == ':')
		s++;
	if (*s == '\0' || strcmp(s, "UTC") == 0)
		return 0;
	if (tzname(&s) || (*s != '+' && *s != '-' && (*s < '0' || *s > '9')))
		return -E_INVAL;
	out->std = -hms(&s);	/* POSIX: positive is west */
	if (*s == '\0')
		return 0;
	if (tzname(&s))
		return -E_INVAL;
	out->has_dst = 1;
	out->dst = out->std + 3600;
	if (*s != ',' && *s != '\0')
		out->dst = -hms(&s);
	if (*s == '\0')
		s = ",M3.2.0,M11.1.0";
	if (*s++ != ',' || rule(&s, &out->start) || *s++ != ',' ||
	    rule(&s, &out->end) || *s != '\0')
		return -E_INVAL;
	return 0;
}

static int
leap(long long y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int
mdays(long long y, int m)
{
	static const unsigned char n[] = { 31, 28, 31, 30, 31, 30, 31, 31,
	    30, 31, 30, 31 };

	return n[m - 1] + (m == 2 && leap(y));
}

/* The local time (seconds since the epoch, as if local were UTC) at which
 * rule r switches in year y. */
static long long
when(const struct tz_rule *r, long long y)
{
	long long d;
	int wd;

	if (r->kind == 'M') {
		d = utc_days(y, r->m, 1);
		wd = (int)((d + 4) % 7);
		d += (r->d - wd + 7) % 7 + (r->w - 1) * 7;
		while (d >= utc_days(y, r->m, 1) + mdays(y, r->m))
			d -= 7;
	} else {
		d = utc_days(y, 1, 1) + r->d;
		if (r->kind == 'J' && (r->d < 60 || !leap(y)))
			d--;
	}
	return d * 86400 + r->time;
}

/* see sched.h */
long
tz_offset(const struct tz *z, long long t)
{
	long long s, e;
	struct utc u;

	if (!z->has_dst)
		return z->std;
	utc_split(t + z->std, &u);
	s = when(&z->start, u.year) - z->std;
	e = when(&z->end, u.year) - z->dst;
	if (s < e)
		return t >= s && t < e ? z->dst : z->std;
	return t >= e && t < s ? z->std : z->dst;
}

/* The UTC time of local wall time l: the first when it happens twice,
 * the same distance past the gap when it does not happen. */
static long long
to_utc(const struct tz *z, long long l)
{
	if (tz_offset(z, l - z->dst) == z->dst)
		return l - z->dst;
	return l - z->std;
}

static int
day_ok(const struct sched *s, const struct utc *u, long long days)
{
	int dom = (s->mday >> u->day) & 1;
	int dow = (s->wday >> ((days + 4) % 7)) & 1;

	if (s->dom_any || s->dow_any)
		return dom && dow;
	return dom || dow;
}

/* see sched.h */
long long
sched_next(const struct sched *s, const struct tz *z, long long t)
{
	long long l, days, u;
	struct utc c;
	int n;

	if (s->every > 0)
		return (t / s->every + 1) * s->every;
	l = t + tz_offset(z, t);
	l = (l / 60 + 1) * 60;
	for (n = 0; n < 200000; n++) {
		utc_split(l, &c);
		days = l / 86400;
		if (c.year > 9999)
			break;
		if (!((s->mon >> c.mon) & 1))
			l = (utc_days(c.year, c.mon, 1) + mdays(c.year, c.mon)) *
			    86400;
		else if (!day_ok(s, &c, days))
			l = (days + 1) * 86400;
		else if (!((s->hour >> c.hour) & 1))
			l = (l / 3600 + 1) * 3600;
		else if (!((s->min >> c.min) & 1))
			l += 60;
		else if ((u = to_utc(z, l)) > t)
			return u;
		else
			l += 60;
	}
	return -1;
}

/* see sched.h */
long long
sched_due(const struct sched *s, const struct tz *z, long long after,
    long long now)
{
	static const long long back[] = { 2 * 86400, 40 * 86400,
	    400 * 86400, 3000LL * 86400 };
	long long d, n, from;
	size_t i;

	if (now < SCHED_EPOCH || now <= after)
		return 0;
	if (s->every > 0) {
		d = now / s->every * s->every;
		return d > after ? d : 0;
	}
	/* Walk forward from a little before now: widen only when nothing is
	 * due in the window, so long downtime costs no walk over every slot. */
	for (i = 0; i < ARRAY_LEN(back); i++) {
		from = MAX(after, now - back[i]);
		if ((d = sched_next(s, z, from)) < 0 || d > now) {
			if (from == after)
				return 0;
			continue;
		}
		while ((n = sched_next(s, z, d)) > 0 && n <= now)
			d = n;
		return d;
	}
	return 0;
}
