/* sse.h - push parsers for streamed replies: text/event-stream (WHATWG
 * HTML, "Server-sent events", event stream interpretation) and
 * newline-delimited JSON (one JSON text per line, as Ollama streams).
 *
 * Both take the bytes as they arrive, split anywhere (one byte at a time
 * is fine), and call back once per event or line. The caller owns the
 * state and either one fixed buffer, or none: then the parser keeps its
 * own, grown from the budget heap as events need it (from SSE_BUF_START,
 * doubling up to the cap), so a stream of small events holds little.
 * Errors are sticky: once a call fails, every later call returns the same
 * error until the parser is initialised again.
 */
#ifndef SSE_H
#define SSE_H

#include "base/base.h"

#define SSE_EVENT_MAX	64		/* event type, with its NUL */
#define SSE_ID_MAX	128		/* last event ID, with its NUL */
#define SSE_RETRY_MAX	86400000L	/* retry: values are capped at a day */
#define SSE_BUF_START	4096		/* first size of a parser's own buffer */

/* One dispatched event. The strings are NUL-terminated for convenience,
 * but the lengths rule (data may hold NUL bytes). event is the event type,
 * "message" when the event had no event: field or an empty one; data is
 * the data: lines joined with "\n"; id is the last event ID (it carries
 * over from earlier events, "" if none was ever set). Everything points
 * into the parser and is valid only during the callback. */
struct sse_event {
	const char	*event;
	size_t		 event_len;
	const char	*data;
	size_t		 data_len;
	const char	*id;
	size_t		 id_len;
};

/* Return 0 to go on, or a negative -E_* to stop the parse with it. */
typedef int	(*sse_event_fn)(void *ctx, const struct sse_event *ev);

/* Parser state. Caller-owned; read the fields marked public, leave the
 * rest alone. */
struct sse {
	char		*buf;		/* the data of the pending event, */
	size_t		 cap, max;	/* then the line being read */
	size_t		 dlen, llen;
	long		 retry_ms;	/* public: last valid retry:, or -1 */
	uint64_t	 bytes;		/* public: bytes fed */
	unsigned long	 events;	/* public: events dispatched */
	int		 err;		/* sticky */
	unsigned char	 cr;		/* the last line ended in CR */
	unsigned char	 started;	/* the first line is done (BOM) */
	unsigned char	 own;		/* buf is ours, grown up to max */
	unsigned char	 event_len;
	unsigned char	 id_len;
	char		 event[SSE_EVENT_MAX];
	char		 id[SSE_ID_MAX];	/* public: last event ID */
};

/* Start a stream in buf[0..cap), which must outlive the parser, or with
 * buf NULL in a buffer of the parser's own that grows up to cap (give it
 * back with sse_free). The buffer holds the pending event's data (each
 * data: line's value and a newline) and, after it, the line being read;
 * so cap bounds one event's data plus one line. Calling it again starts
 * over (after sse_free, for an own buffer). */
void	sse_init(struct sse *p, char *buf, size_t cap);
void	sse_free(struct sse *p);

/* Parse data[0..n), the next bytes of the stream, and call fn for each
 * event a blank line completes. A UTF-8 byte order mark at the very start
 * is skipped; other bytes pass through as they are, invalid UTF-8 and NUL
 * included (an id: value holding NUL is ignored, as the spec says).
 * Returns 0, -E_LIMIT when the buffer cannot hold the pending data and
 * line, or an event type or ID is too long for SSE_EVENT_MAX or
 * SSE_ID_MAX, -E_NOMEM when an own buffer cannot grow, or the error fn
 * returned. */
int	sse_feed(struct sse *p, const char *data, size_t n, sse_event_fn fn,
	    void *ctx);

/* End of stream. Unlike the spec, which drops an event that is not ended
 * by a blank line, a pending event whose last line was complete is
 * dispatched: some servers close the stream without the final blank line.
 * A line cut before its end is -E_PART: the stream was truncated, and the
 * caller must not take the reply as complete (the pending event is not
 * dispatched; -E_PART is returned again but not made sticky). Returns 0,
 * -E_PART, the sticky error, or fn's error. */
int	sse_finish(struct sse *p, sse_event_fn fn, void *ctx);

/* One line, without its line end; line[len] is NUL. Return 0 or -E_*. */
typedef int	(*ndjson_line_fn)(void *ctx, const char *line, size_t len);

struct ndjson {
	char		*buf;
	size_t		 cap, max, len;
	uint64_t	 bytes;		/* public: bytes fed */
	unsigned long	 lines;		/* public: lines delivered */
	int		 err;		/* sticky */
	unsigned char	 own;		/* buf is ours, grown up to max */
};

/* Start a stream in buf[0..cap), or with buf NULL in an own buffer that
 * grows up to cap (given back by ndjson_free), as for SSE: a line, with
 * its CR if it has one, must be shorter than cap. */
void	ndjson_init(struct ndjson *p, char *buf, size_t cap);
void	ndjson_free(struct ndjson *p);

/* Parse data[0..n) and call fn for each line ended by LF; a CR before the
 * LF is dropped and empty lines are skipped. The lines are not checked to
 * be JSON. Returns 0, -E_LIMIT (a line too long), -E_NOMEM (an own
 * buffer cannot grow), or fn's error. */
int	ndjson_feed(struct ndjson *p, const char *data, size_t n,
	    ndjson_line_fn fn, void *ctx);

/* End of stream: a last line without LF is delivered if it is not empty
 * (a JSON text may end the stream). Returns 0, the sticky error, or fn's. */
int	ndjson_finish(struct ndjson *p, ndjson_line_fn fn, void *ctx);

#endif
