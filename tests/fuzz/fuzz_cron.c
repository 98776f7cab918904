/* fuzz_cron.c - libFuzzer harness for the job schedules: cron fields,
 * named periods, "@every", POSIX TZ rules, and the due-time walks.
 *
 * Bytes 0-7 are the clock `now` (below 2^42 s: a real clock, and one set
 * far ahead), bytes 8-11 how long before it the schedule last fired. The
 * rest is the schedule, then after a newline the TZ string (each a C
 * string, so ASan sees a read past its end). Whatever the text: the
 * parsers say 0 or -E_INVAL, an offset stays within what POSIX allows,
 * "@every" fits a 32-bit long, the next due time is after the time asked
 * about, and the due time to fire is in (after, now], with no later one
 * before now.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "fmt/schedule.h"

#define CHECK(c) do {							\
	if (!(c))							\
		abort();						\
} while (0)

/* hh up to 167, mm and ss up to 59, and DST's default hour on top */
#define OFF_MAX	(167L * 3600 + 59 * 60 + 59 + 3600)

static unsigned long long
le(const uint8_t *p, int n)
{
	unsigned long long v = 0;

	while (n-- > 0)
		v = v << 8 | p[n];
	return v;
}

static void
check_tz(const struct tz *z, long long t)
{
	long off = tz_offset(z, t);

	CHECK(off >= -OFF_MAX && off <= OFF_MAX);
	CHECK(off == z->std || (z->has_dst && off == z->dst));
}

static void
check_sched(const struct sched *s, const struct tz *z, long long now,
    long long after)
{
	long long n, d;

	n = sched_next(s, z, now);
	CHECK(n == -1 || n > now);
	d = sched_due(s, z, after, now);
	if (now < SCHED_EPOCH || now <= after) {
		CHECK(d == 0);
		return;
	}
	CHECK(d == 0 || (d > after && d <= now));
	if (d > 0) {
		n = sched_next(s, z, d);
		CHECK(n == -1 || n > now);
	}
}

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sched s;
	struct tz z;
	long long now, after;
	char *spec, *tz, *nl;
	int rs, rz;

	if (size < 12)
		return 0;
	now = (long long)(le(data, 8) & ((1ULL << 42) - 1));
	after = now - (long long)le(data + 8, 4);
	if ((spec = malloc(size - 12 + 1)) == NULL)
		return 0;
	memcpy(spec, data + 12, size - 12);
	spec[size - 12] = '\0';
	tz = "UTC";
	if ((nl = strchr(spec, '\n')) != NULL) {
		*nl = '\0';
		tz = nl + 1;
	}
	rs = sched_parse(spec, &s);
	rz = tz_parse(tz, &z);
	CHECK(rs == 0 || rs == -E_INVAL);
	CHECK(rz == 0 || rz == -E_INVAL);
	if (rz == 0)
		check_tz(&z, now);
	if (rs == 0) {
		/* long is 32 bits on armv7 and mipsel: what fits there */
		CHECK(s.every == 0 || (s.every >= 60 && s.every <= INT32_MAX));
		CHECK(s.every > 0 || (s.min != 0 && s.hour != 0 &&
		    s.mday != 0 && s.mon != 0 && s.wday != 0));
	}
	if (rs == 0 && rz == 0)
		check_sched(&s, &z, now, after);
	free(spec);
	return 0;
}
