/* slog.h - session logs: one JSONL file per session, one event a line,
 * appended as it happens. The log is data, not diagnostics.
 *
 * Each line is written with one write(2) to a file opened O_APPEND, so a
 * process killed mid-turn leaves whole lines (at worst a last partial line,
 * which replay skips and reports). slog_sync() makes the turn durable.
 */
#ifndef SLOG_H
#define SLOG_H

#include "arena.h"
#include "base.h"
#include "json.h"

#define SLOG_NAME_MAX	64
#define SLOG_LINE_MAX	(4u << 20)

struct slog {
	int		 fd;
	const char	*path;
	const char	*name;
	int		 err;		/* sticky -E_* (E_IO: disk full, ...) */
	int		 err_no;
};

/* mkdir -p (mode 0700); p is modified while working, restored after. */
int	slog_mkdirs(char *p);

/* Valid session names: 1-64 of [A-Za-z0-9._-], not starting with '.'. */
int	slog_name_ok(const char *name);

/* Open (create with `create`) <dir>/sessions/<name>.jsonl, making the
 * folders. Returns 0, -E_NOENT (no such session and !create), -E_INVAL
 * (bad name), -E_IO. */
int	slog_open(struct slog *s, struct arena *a, const char *dir,
	    const char *name, int create);

/* Append one event: a JSON object's text without the newline. Returns 0,
 * -E_IO (sticky: the disk), -E_LIMIT (over SLOG_LINE_MAX) or -E_NOMEM;
 * the last two are not sticky and nothing of the event was written. */
int	slog_append(struct slog *s, const char *json, size_t n);
int	slog_sync(struct slog *s);
void	slog_close(struct slog *s);

/* Call fn for each complete line of the log, as a parsed JSON document
 * (tokens in `a`, reset by the caller between calls if it likes). A last
 * line without its newline (a killed writer) is skipped and *torn set.
 * Lines that do not parse are skipped and counted in *bad. */
typedef int (*slog_fn)(void *ctx, const struct json_doc *d, unsigned line);
int	slog_replay(struct slog *s, struct arena *a, slog_fn fn, void *ctx,
	    int *torn, unsigned *bad);

/* Names of the sessions in <dir>/sessions, newest first, with sizes and
 * mtimes; strings in `a`. */
struct slog_info {
	const char	*name;
	long long	 size, mtime;
};
int	slog_list(struct arena *a, const char *dir, struct slog_info **out,
	    unsigned *n);
int	slog_remove(struct arena *a, const char *dir, const char *name);

#endif
