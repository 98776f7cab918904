/* unit.h - the unit test runner's interface.
 *
 * A suite is a file tests/unit/test_NAME.c that defines
 *	const struct unit_suite suite_NAME = { "NAME", cases, ARRAY_LEN(cases) };
 * Checks record file:line on failure and the run goes on.
 */
#ifndef UNIT_H
#define UNIT_H

#include <string.h>

#include "base/arena.h"
#include "base/base.h"

struct unit_case {
	const char	*name;
	void		(*fn)(void);
};

struct unit_suite {
	const char		*name;
	const struct unit_case	*cases;
	size_t			 ncases;
};

void	t_fail(const char *file, int line, const char *fmt, ...) ATTR_PRINTF(3, 4);

/* Write text to root/rel, making the folders on the way (a failure is
 * recorded). */
void	t_put(const char *root, const char *rel, const char *text);

/* A scratch arena, reset before every case. */
extern struct arena t_arena;

#define T(cond) do {							\
	if (!(cond))							\
		t_fail(__FILE__, __LINE__, "%s", #cond);		\
} while (0)
#define T_EQI(a, b) do {						\
	long long t_a_ = (long long)(a), t_b_ = (long long)(b);		\
	if (t_a_ != t_b_)						\
		t_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld",	\
		    #a, #b, t_a_, t_b_);				\
} while (0)
#define T_EQS(a, b) do {						\
	const char *t_a_ = (a), *t_b_ = (b);				\
	if (t_a_ == NULL || t_b_ == NULL || strcmp(t_a_, t_b_) != 0)	\
		t_fail(__FILE__, __LINE__, "%s == %s: \"%s\" != \"%s\"",\
		    #a, #b, t_a_ ? t_a_ : "(null)",			\
		    t_b_ ? t_b_ : "(null)");				\
} while (0)

#endif
