/* schedule.h - recurring due times: cron, named periods and intervals,
 * in UTC or a POSIX TZ rule (routers have no tzdata: parsed here).
 *
 * Every function is pure: the caller passes the time. A schedule fires at
 * most once per due time (the caller records the due time it fired), and
 * after downtime it fires once, for the most recent missed due time, not
 * once per missed slot (sched_due). A clock before SCHED_EPOCH is taken as
 * "not set yet" (a router before NTP): nothing is due then.
 *
 * Local times that do not exist (the hour skipped when DST starts) fire
 * at the same wall-clock distance after the gap (02:30 becomes 03:30);
 * local times that happen twice (the hour repeated when DST ends) fire
 * once, the first time.
 */
#ifndef SCHEDULE_H
#define SCHEDULE_H

#include "base/base.h"

#define SCHED_EPOCH	1577836800LL	/* 2020-01-01T00:00:00Z */
#define SCHED_EVERY_MAX	(3660L * 86400)	/* "@every": about ten years */

/* Minute, hour, day of month, month, day of week as bit sets; or an
 * interval (every > 0), aligned to the epoch in UTC. */
struct sched {
	uint64_t	min;
	uint32_t	hour, mday;
	uint16_t	mon;
	uint8_t		wday;
	unsigned char	dom_any, dow_any;
	long		every;		/* seconds, or 0 */
};

/* A POSIX TZ rule: offsets are seconds east of UTC. */
struct tz_rule {
	char	kind;			/* 'J' (1-365, no Feb 29), 'D' (0-365), 'M' */
	int	m, w, d;		/* M: month, week 1-5, weekday 0-6 */
	long	time;			/* local seconds after midnight */
};
struct tz {
	long		std, dst;
	int		has_dst;
	struct tz_rule	start, end;
};

/* "hourly", "daily", "weekly", "monthly" (also with @), "@every 15m"
 * (s, m, h, d; at least a minute, at most SCHED_EVERY_MAX), or five cron
 * fields (minute hour day-of-month month day-of-week: *, lists, ranges,
 * steps, month and day names; 7 is Sunday too; when both day fields are
 * restricted either one matching is enough). Returns 0 or -E_INVAL. */
int	sched_parse(const char *s, struct sched *out);

/* "UTC", "" (also UTC), or a POSIX TZ string such as
 * "CET-1CEST,M3.5.0,M10.5.0/3" (Mm.w.d, Jn and n rules; a DST name
 * without rules takes M3.2.0,M11.1.0). 0 or -E_INVAL. */
int	tz_parse(const char *s, struct tz *out);

/* The offset east of UTC in effect at UTC time t. */
long	tz_offset(const struct tz *z, long long t);

/* The first due time strictly after t, or -1 (none within 8 years). */
long long sched_next(const struct sched *s, const struct tz *z, long long t);

/* What to fire at `now`: the most recent due time in (after, now], or 0
 * when there is none or the clock is not set (now < SCHED_EPOCH). `after`
 * is the due time last fired, or the time the schedule was made: so a
 * clock set back never fires a due time again, and downtime costs one
 * run, not one per missed slot. */
long long sched_due(const struct sched *s, const struct tz *z,
	    long long after, long long now);

#endif
