/* unit.c - runs the unit suites: `unit-tests [all | SUITE[.CASE]...]`.
 * Prints one line per failed check and ends with "N passed, N failed". */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "unit.h"
#include "suites.h"

struct arena t_arena;
static int case_failed;

void
t_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s:%d: check failed: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	case_failed = 1;
}

/* see unit.h */
void
t_put(const char *root, const char *rel, const char *text)
{
	char path[512], *s;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (s = path + strlen(root) + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	if ((f = fopen(path, "w")) == NULL) {
		t_fail(__FILE__, __LINE__, "cannot write %s", path);
		return;
	}
	fputs(text, f);
	fclose(f);
}

static int
selected(int argc, char **argv, const char *suite, const char *name)
{
	char full[256];
	int i;

	if (argc < 2)
		return 1;
	snprintf(full, sizeof(full), "%s.%s", suite, name);
	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "all") == 0 || strcmp(argv[i], suite) == 0 ||
		    strcmp(argv[i], full) == 0)
			return 1;
	return 0;
}

int
main(int argc, char **argv)
{
	unsigned pass = 0, fail = 0;
	size_t s, c;

	if (mem_init(8u << 20) != 0) {
		fprintf(stderr, "unit: cannot reserve memory\n");
		return 1;
	}
	arena_init(&t_arena, "test");
	for (s = 0; s < ARRAY_LEN(suites); s++) {
		const struct unit_suite *su = suites[s];

		for (c = 0; c < su->ncases; c++) {
			if (!selected(argc, argv, su->name, su->cases[c].name))
				continue;
			arena_reset(&t_arena);
			case_failed = 0;
			su->cases[c].fn();
			if (case_failed) {
				fprintf(stderr, "FAIL %s.%s\n", su->name,
				    su->cases[c].name);
				fail++;
			} else
				pass++;
		}
	}
	printf("%u passed, %u failed\n", pass, fail);
	return fail != 0;
}
