/* test_sched.c - schedules and POSIX TZ rules against a fake clock. */
#include <string.h>

#include "fmt/schedule.h"
#include "base/str.h"
#include "unit.h"

static long long
at(int y, int mon, int d, int h, int mi)
{
	return utc_days(y, mon, d) * 86400 + h * 3600 + mi * 60;
}

static const char cet[] = "CET-1CEST,M3.5.0,M10.5.0/3";

/* The next due time of `spec` in zone `tz` after t. */
static long long
next(const char *spec, const char *tz, long long t)
{
	struct sched s;
	struct tz z;

	if (sched_parse(spec, &s) != 0 || tz_parse(tz, &z) != 0) {
		t_fail(__FILE__, __LINE__, "parse %s / %s", spec, tz);
		return -2;
	}
	return sched_next(&s, &z, t);
}

static void
t_tz(void)
{
	struct tz z;

	T_EQI(tz_parse(cet, &z), 0);
	T_EQI(tz_offset(&z, at(2024, 3, 31, 0, 59)), 3600);
	T_EQI(tz_offset(&z, at(2024, 3, 31, 1, 0)), 7200);
	T_EQI(tz_offset(&z, at(2024, 10, 27, 0, 59)), 7200);
	T_EQI(tz_offset(&z, at(2024, 10, 27, 1, 0)), 3600);
	T_EQI(tz_offset(&z, at(2025, 3, 30, 1, 0)), 7200);
	T_EQI(tz_offset(&z, at(2025, 3, 30, 0, 59)), 3600);
	/* Southern: DST over the new year. */
	T_EQI(tz_parse("AEST-10AEDT,M10.1.0,M4.1.0/3", &z), 0);
	T_EQI(tz_offset(&z, at(2024, 1, 15, 0, 0)), 39600);
	T_EQI(tz_offset(&z, at(2024, 7, 15, 0, 0)), 36000);
	/* n counts Feb 29, Jn never does; <+05> quoted names, explicit
	 * DST offset, rule times. */
	T_EQI(tz_parse("AAA0BBB,59,300", &z), 0);
	T_EQI(tz_offset(&z, at(2024, 2, 29, 1, 59)), 0);
	T_EQI(tz_offset(&z, at(2024, 2, 29, 2, 0)), 3600);
	T_EQI(tz_parse("AAA0BBB-2,J60/0,J300", &z), 0);
	T_EQI(tz_offset(&z, at(2024, 2, 29, 12, 0)), 0);
	T_EQI(tz_offset(&z, at(2024, 3, 1, 0, 0)), 7200);
	T_EQI(tz_parse("<+0530>-5:30", &z), 0);
	T_EQI(z.std, 19800);
	T_EQI(z.has_dst, 0);
	T_EQI(tz_parse("EST5EDT", &z), 0);		/* US rules */
	T_EQI(tz_offset(&z, at(2024, 3, 10, 6, 59)), -18000);
	T_EQI(tz_offset(&z, at(2024, 3, 10, 7, 0)), -14400);
	T_EQI(tz_parse("UTC", &z), 0);
	T_EQI(tz_offset(&z, 1700000000), 0);
	T_EQI(tz_parse("", &z), 0);
	T_EQI(tz_parse("C", &z), -E_INVAL);
	T_EQI(tz_parse("CET-1CEST,M13.5.0,M10.5.0", &z), -E_INVAL);
	T_EQI(tz_parse("CET-1CEST,M3.5.0", &z), -E_INVAL);
	T_EQI(tz_parse("CET-1CEST,M3.6.0,M10.5.0", &z), -E_INVAL);
}

static void
t_dst(void)
{
	/* 02:30 does not exist on 2024-03-31 in CET: 03:30 CEST. */
	T_EQI(next("30 2 * * *", cet, at(2024, 3, 30, 12, 0)),
	    at(2024, 3, 31, 1, 30));
	T_EQI(next("30 2 * * *", cet, at(2024, 3, 31, 1, 30)),
	    at(2024, 4, 1, 0, 30));
	/* 02:30 happens twice on 2024-10-27: once, the first time. */
	T_EQI(next("30 2 * * *", cet, at(2024, 10, 26, 12, 0)),
	    at(2024, 10, 27, 0, 30));
	T_EQI(next("30 2 * * *", cet, at(2024, 10, 27, 0, 30)),
	    at(2024, 10, 28, 1, 30));
	/* Hourly over the switches. */
	T_EQI(next("hourly", cet, at(2024, 3, 31, 0, 30)),
	    at(2024, 3, 31, 1, 0));
	T_EQI(next("hourly", cet, at(2024, 3, 31, 1, 0)),
	    at(2024, 3, 31, 2, 0));
	T_EQI(next("daily", cet, at(2024, 6, 1, 12, 0)),
	    at(2024, 6, 1, 22, 0));
	T_EQI(next("daily", cet, at(2024, 12, 1, 12, 0)),
	    at(2024, 12, 1, 23, 0));
}

static void
t_calendar(void)
{
	T_EQI(next("0 0 29 2 *", "UTC", at(2024, 3, 1, 0, 0)),
	    at(2028, 2, 29, 0, 0));
	T_EQI(next("0 0 29 2 *", "UTC", at(2024, 2, 28, 23, 59)),
	    at(2024, 2, 29, 0, 0));
	T_EQI(next("0 0 31 * *", "UTC", at(2024, 1, 31, 0, 0)),
	    at(2024, 3, 31, 0, 0));
	T_EQI(next("0 12 30 * *", "UTC", at(2024, 1, 31, 0, 0)),
	    at(2024, 3, 30, 12, 0));
	T_EQI(next("monthly", "UTC", at(2024, 12, 31, 23, 59)),
	    at(2025, 1, 1, 0, 0));
	T_EQI(next("0 0 30 2 *", "UTC", at(2024, 1, 1, 0, 0)), -1);
	T_EQI(next("weekly", "UTC", at(2024, 3, 1, 0, 0)),	/* Friday */
	    at(2024, 3, 3, 0, 0));
	T_EQI(next("0 0 * * 7", "UTC", at(2024, 3, 1, 0, 0)),
	    at(2024, 3, 3, 0, 0));
}

static void
t_cron(void)
{
	struct sched s;

	T_EQI(next("*/15 9-17 * * mon-fri", "UTC", at(2024, 3, 1, 17, 45)),
	    at(2024, 3, 4, 9, 0));
	T_EQI(next("*/15 9-17 * * mon-fri", "UTC", at(2024, 3, 1, 9, 7)),
	    at(2024, 3, 1, 9, 15));
	/* Both day fields restricted: either one. */
	T_EQI(next("0 0 13 * fri", "UTC", at(2024, 1, 1, 0, 0)),
	    at(2024, 1, 5, 0, 0));
	T_EQI(next("0 0 13 * fri", "UTC", at(2024, 1, 12, 0, 0)),
	    at(2024, 1, 13, 0, 0));
	T_EQI(next("5/20 * * * *", "UTC", at(2024, 1, 1, 0, 26)),
	    at(2024, 1, 1, 0, 45));
	T_EQI(next("0,30 8 1-7 JAN,jul *", "UTC", at(2024, 1, 7, 8, 30)),
	    at(2024, 7, 1, 8, 0));
	T_EQI(next("0 0 * * */2", "UTC", at(2024, 3, 1, 0, 0)),	/* Fri */
	    at(2024, 3, 2, 0, 0));				/* Sat = 6 */
	T_EQI(next("@every 15m", "UTC", at(2024, 1, 1, 0, 7)),
	    at(2024, 1, 1, 0, 15));
	T_EQI(sched_parse("60 * * * *", &s), -E_INVAL);
	T_EQI(sched_parse("* * *", &s), -E_INVAL);
	T_EQI(sched_parse("* * * * * *", &s), -E_INVAL);
	T_EQI(sched_parse("1- * * * *", &s), -E_INVAL);
	T_EQI(sched_parse("*/0 * * * *", &s), -E_INVAL);
	T_EQI(sched_parse("5-1 * * * *", &s), -E_INVAL);
	T_EQI(sched_parse("* * 0 * *", &s), -E_INVAL);
	T_EQI(sched_parse("* * * 13 *", &s), -E_INVAL);
	T_EQI(sched_parse("* * * * 8", &s), -E_INVAL);
	T_EQI(sched_parse("@every 30s", &s), -E_INVAL);
	T_EQI(sched_parse("@every 2x", &s), -E_INVAL);
	/* found by fuzz_cron: the seconds must fit a 32-bit long */
	T_EQI(sched_parse("@every 99999d", &s), -E_INVAL);
	T_EQI(sched_parse("@every 999999h", &s), -E_INVAL);
	T_EQI(sched_parse("@every 3661d", &s), -E_INVAL);
	T_EQI(sched_parse("@every 3660d", &s), 0);
	T_EQI(s.every, 3660L * 86400);
	T_EQI(sched_parse("", &s), -E_INVAL);
}

static void
t_due(void)
{
	struct sched s;
	struct tz z;
	long long made = at(2024, 5, 1, 10, 5);

	T_EQI(sched_parse("hourly", &s), 0);
	T_EQI(tz_parse(cet, &z), 0);
	T_EQI(sched_due(&s, &z, made, at(2024, 5, 1, 10, 30)), 0);
	T_EQI(sched_due(&s, &z, made, at(2024, 5, 1, 11, 0)),
	    at(2024, 5, 1, 11, 0));
	/* Downtime: once, for the most recent slot. */
	T_EQI(sched_due(&s, &z, made, at(2024, 5, 1, 13, 20)),
	    at(2024, 5, 1, 13, 0));
	T_EQI(sched_due(&s, &z, at(2024, 5, 1, 13, 0),
	    at(2024, 5, 1, 13, 59)), 0);
	/* The clock set back: nothing fires again. */
	T_EQI(sched_due(&s, &z, at(2024, 5, 1, 13, 0),
	    at(2024, 5, 1, 12, 10)), 0);
	/* The clock not set yet (1970, before NTP). */
	T_EQI(sched_due(&s, &z, 0, 3600 * 5), 0);
	/* A jump forward over months: the last slot only. */
	T_EQI(sched_due(&s, &z, made, at(2025, 1, 1, 0, 40)),
	    at(2025, 1, 1, 0, 0));
	T_EQI(sched_parse("0 0 29 2 *", &s), 0);
	T_EQI(sched_due(&s, &z, made, at(2029, 1, 1, 0, 0)),
	    at(2028, 2, 28, 23, 0));
	T_EQI(sched_parse("@every 15m", &s), 0);
	T_EQI(sched_due(&s, &z, made, at(2024, 5, 1, 11, 1)),
	    at(2024, 5, 1, 11, 0));
	T_EQI(sched_due(&s, &z, at(2024, 5, 1, 11, 0), at(2024, 5, 1, 11, 14)),
	    0);
}

static const struct unit_case cases[] = {
	{ "tz", t_tz },
	{ "dst", t_dst },
	{ "calendar", t_calendar },
	{ "cron", t_cron },
	{ "due", t_due },
};

const struct unit_suite suite_sched = { "sched", cases, ARRAY_LEN(cases) };
