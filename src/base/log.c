/* log.c - diagnostics. Formats into a fixed stack buffer and writes once,
 * so lines from concurrent processes do not interleave. */
#include "base/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/str.h"

static enum log_level level = LOG_WARN;
static const char *prog = "skillbox";

void log_set_level(enum log_level l) { level = l; }
enum log_level log_get_level(void) { return level; }
void log_set_prog(const char *p) { prog = p; }

void
log_msg(enum log_level l, const char *fmt, ...)
{
	static const char *tag[] = { "", "warning: ", "", "debug: " };
	char buf[1024];
	va_list ap;
	int n, m;

	if (l > level)
		return;
	n = snprintf(buf, sizeof(buf), "%s: %s", prog, tag[l]);
	if (n < 0 || (size_t)n >= sizeof(buf))
		n = 0;
	va_start(ap, fmt);
	m = vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		m = 0;
	n += m;
	if ((size_t)n > sizeof(buf) - 2) {	/* keep the cut visible */
		n = sizeof(buf) - 2;
		memcpy(buf + n - 3, "...", 3);
	}
	/* Messages carry text from servers and models: on a terminal it
	 * must not drive it. */
	if (isatty(2))
		str_ctl_clean(buf, (size_t)n);
	buf[n++] = '\n';
	(void)!write(2, buf, (size_t)n);
}

const char *
err_str(int e)
{
	static const char *const s[E__COUNT] = {
		[E_OK] = "success",
		[E_NOMEM] = "out of memory",
		[E_IO] = "input/output error",
		[E_TLS] = "TLS error",
		[E_PROTO] = "protocol error",
		[E_PARSE] = "parse error",
		[E_LIMIT] = "limit exceeded",
		[E_TIMEOUT] = "timed out",
		[E_DENIED] = "denied",
		[E_PART] = "incomplete input",
		[E_NOENT] = "not found",
		[E_INVAL] = "invalid argument",
		[E_BUSY] = "in use by another process",
	};

	if (e < 0)
		e = -e;
	return e < E__COUNT ? s[e] : "unknown error";
}
