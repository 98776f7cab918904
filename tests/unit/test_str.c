/* test_str.c - decimals and UTC dates without libc's scanners and tz code;
 * the packed help text's unpacker. */
#include <string.h>

#include "base/str.h"
#include "unit.h"

static void
decimal_ok(void)
{
	double d = -1;

	T(str_decimal("0", &d) == 0 && d == 0);
	T(str_decimal("12", &d) == 0 && d == 12);
	T(str_decimal("0.25", &d) == 0 && d == 0.25);
	T(str_decimal(".5", &d) == 0 && d == 0.5);
	T(str_decimal("7.", &d) == 0 && d == 7);
	T(str_decimal("0.15", &d) == 0 && d == 0.15);	/* correctly rounded */
	T(str_decimal("0.001", &d) == 0 && d == 0.001);
	T(str_decimal("86400", &d) == 0 && d == 86400);
	/* digits past the 19th of a fraction are dropped, not refused */
	T(str_decimal("0.33333333333333333333333", &d) == 0 &&
	    d > 0.3333333333333333 && d < 0.3333333333333334);
}

static void
decimal_bad(void)
{
	double d = 42;

	T(str_decimal("", &d) == -1);
	T(str_decimal(".", &d) == -1);
	T(str_decimal("-1", &d) == -1);
	T(str_decimal("+1", &d) == -1);
	T(str_decimal("1e3", &d) == -1);
	T(str_decimal("1.2.3", &d) == -1);
	T(str_decimal("0x10", &d) == -1);
	T(str_decimal(" 1", &d) == -1);
	T(str_decimal("1 ", &d) == -1);
	T(str_decimal("12345678901234567890", &d) == -1);	/* 20 digits */
	T(d == 42);
}

static void
utc_known(void)
{
	struct utc u;

	utc_split(0, &u);
	T(u.year == 1970 && u.mon == 1 && u.day == 1 && u.hour == 0 &&
	    u.min == 0 && u.sec == 0);
	utc_split(-1, &u);
	T(u.year == 1969 && u.mon == 12 && u.day == 31 && u.hour == 23 &&
	    u.min == 59 && u.sec == 59);
	utc_split(951782400, &u);			/* a leap day */
	T(u.year == 2000 && u.mon == 2 && u.day == 29);
	utc_split(4107542400LL, &u);			/* 2100 is no leap year */
	T(u.year == 2100 && u.mon == 3 && u.day == 1);
	utc_split(1795000000, &u);
	T(u.year == 2026 && u.mon == 11 && u.day == 18 && u.hour == 11 &&
	    u.min == 6 && u.sec == 40);
	T(utc_days(1970, 1, 1) == 0);
	T(utc_days(2000, 3, 1) == 11017);
	T(utc_days(1600, 1, 1) == -135140);
}

/* Every day of 1600..2400 (leap rules of all three kinds) both ways. */
static void
utc_round_trip(void)
{
	long long d, first = utc_days(1600, 1, 1), last = utc_days(2400, 12, 31);
	struct utc u, prev;
	int bad = 0;

	utc_split(first * 86400 - 1, &prev);
	for (d = first; d <= last; d++) {
		utc_split(d * 86400 + 43200, &u);
		if (utc_days(u.year, u.mon, u.day) != d || u.hour != 12)
			bad++;
		/* consecutive days: the day, month or year moves by one */
		if (!(u.year == prev.year && u.mon == prev.mon &&
		    u.day == prev.day + 1) && !(u.day == 1 &&
		    ((u.year == prev.year && u.mon == prev.mon + 1) ||
		    (u.year == prev.year + 1 && u.mon == 1 && prev.mon == 12))))
			bad++;
		prev = u;
	}
	T_EQI(bad, 0);
}

/* The tools/lzpack format: literals, copies (overlapping too), and
 * input that would copy from before the start or past the end. */
static void
unpack(void)
{
	/* "abc" then copy 3 from 3 back, then copy 4 from 1 back: "abcabccccc" */
	static const unsigned char p[] = { 'a', 'b', 'c', 0x80, 0x02, 0x90,
	    0x00 };
	static const unsigned char before[] = { 'a', 0x80, 0x05 };
	static const unsigned char cut[] = { 'a', 0x80 };
	char out[16];

	T_EQI((int)str_unpack(p, sizeof(p), out, sizeof(out)), 10);
	T(memcmp(out, "abcabccccc", 10) == 0);
	T_EQI((int)str_unpack(p, sizeof(p), out, 5), 3);	/* no room */
	T_EQI((int)str_unpack(p, sizeof(p), out, 6), 6);
	T_EQI((int)str_unpack(before, sizeof(before), out, sizeof(out)), 1);
	T_EQI((int)str_unpack(cut, sizeof(cut), out, sizeof(out)), 1);
}

/* str_in: a counted list, a NULL-terminated one, none. */
static void
in(void)
{
	static const char *const v[] = { "a", "bc", NULL, "d" };

	T(str_in(v, 2, "bc"));
	T(!str_in(v, 1, "bc"));
	T(!str_in(v, ARRAY_LEN(v), "d"));	/* the NULL ends it */
	T(str_in(v, SIZE_MAX, "a"));
	T(!str_in(v, SIZE_MAX, "b"));
	T(!str_in(NULL, SIZE_MAX, "a"));
}

static void
word_in(void)
{
	T(str_word_in("storage logs", "storage"));
	T(str_word_in("storage logs", "logs"));
	T(str_word_in("logs", "logs"));
	T(!str_word_in("storage logs", "log"));	/* a prefix of a word */
	T(!str_word_in("syslogs logs2", "logs"));	/* inside words */
	T(str_word_in("syslogs logs", "logs"));	/* after a near miss */
	T(!str_word_in("", "logs"));
}

static const struct unit_case cases[] = {
	{ "in", in },
	{ "word_in", word_in },
	{ "unpack", unpack },
	{ "decimal_ok", decimal_ok },
	{ "decimal_bad", decimal_bad },
	{ "utc_known", utc_known },
	{ "utc_round_trip", utc_round_trip },
};

const struct unit_suite suite_str = { "str", cases, ARRAY_LEN(cases) };
