/* slog.h - session logs: one JSONL file per session, one event a line,
 * appended as it happens. The log is data, not diagnostics.
 *
 * Each line is written with one write(2) to a file opened O_APPEND, so a
 * process killed mid-turn leaves whole lines (at worst a last partial line,
 * which replay skips and reports). slog_sync() makes the turn durable.
 */
#ifndef SLOG_H
#define SLOG_H

#include "base/arena.h"
#include "base/base.h"
#include "fmt/json.h"

#define SLOG_NAME_MAX	64
#define SLOG_LINE_MAX	(4u << 20)

struct slog {
	int		 fd;
	const char	*path;
	const char	*name;
	int		 err;		/* sticky -E_* (E_IO: disk full, ...) */
	int		 err_no;
	long long	 off;		/* bytes in the log: the offset of the
					 * next event */
};

/* mkdir -p (mode 0700); p is modified while working, restored after. */
int	slog_mkdirs(char *p);

/* Valid session names: 1-64 of [A-Za-z0-9._-], not starting with '.'. */
int	slog_name_ok(const char *name);

/* Open <dir>/sessions/<name>.jsonl: SLOG_READ to replay it only, else to
 * append, locked (flock, exclusive, released at close) so that two
 * processes never write one session; SLOG_CREATE makes it and its
 * folders when missing. Returns 0, -E_NOENT (no such session), -E_INVAL
 * (bad name), -E_BUSY (another process writes it), -E_IO. */
enum { SLOG_READ, SLOG_APPEND, SLOG_CREATE };
int	slog_open(struct slog *s, struct arena *a, const char *dir,
	    const char *name, int mode);

/* Append one event: a JSON object's text without the newline. Returns 0,
 * -E_IO (sticky: the disk), -E_LIMIT (over SLOG_LINE_MAX) or -E_NOMEM;
 * the last two are not sticky and nothing of the event was written. */
int	slog_append(struct slog *s, const char *json, size_t n);
int	slog_sync(struct slog *s);
void	slog_close(struct slog *s);

/* Call fn for each complete line of the log from byte `from` (the start of
 * a line), as a parsed JSON document
 * (tokens in `a`, reset by the caller between calls if it likes). A last
 * line without its newline (a killed writer) is skipped and *torn set.
 * Lines that do not parse are skipped and counted in *bad. */
typedef int (*slog_fn)(void *ctx, const struct json_doc *d, unsigned line);
int	slog_replay(struct slog *s, long long from, struct arena *a, slog_fn fn,
	    void *ctx, int *torn, unsigned *bad);

/* A checkpoint: a line of text kept beside the log (<log>.ckpt, replaced
 * atomically) that says where a replay may start: `off`, the start of an
 * event after which nothing earlier matters but what `text` keeps. 0 or
 * -E_IO. */
int	slog_ckpt_write(struct slog *s, struct arena *a, long long off,
	    const char *text);

/* The offset of the checkpoint, with its text in *text (in `a`), when it
 * holds up: the log still has that many bytes and the event there starts
 * with `head`. 0 when there is none or it does not hold up: replay from
 * the start. */
long long slog_ckpt_read(struct slog *s, struct arena *a, const char *head,
	    const char **text);

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
