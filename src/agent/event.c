/* event.c - events: each is written to the session log, then given to the
 * caller's consumer (in a plan step's process: sent to the orchestrator). */

#include "agent/agent.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent_int.h"

void
ev_begin(struct agent *ag, struct ev *e, const char *type)
{
	sbuf_init(&e->sb, &ag->turn, 0);
	json_writer_init(&e->w, &e->sb);
	memset(&e->t, 0, sizeof(e->t));
	e->t.type = type;
	e->t.ms = -1;
	json_begin_obj(&e->w);
	json_kstr(&e->w, "type", type);
	json_key(&e->w, "turn");
	json_put_uint(&e->w, ag->turn_no);
}

static int
relay_write(int fd, const char *p, size_t n)
{
	ssize_t k;

	while (n > 0) {
		if ((k = write(fd, p, n)) < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Close the event, log it (unless it is a text delta) and hand it on. */
void
ev_end(struct agent *ag, struct ev *e, int log)
{
	json_end_obj(&e->w);
	if (json_writer_err(&e->w) != 0) {
		ag->stop = AG_NOMEM;
		return;
	}
	ev_emit(ag, &e->t, e->sb.p, e->sb.len, log);
}

/* Log the event t, its JSON line json (unless a text delta: !log), and
 * hand it on. A plan step's process sends its logged events to the
 * orchestrator's instead (orch_batch). */
void
ev_emit(struct agent *ag, struct agent_event *t, const char *json, size_t n,
    int log)
{
	struct ev w;
	long long off = ag->log.off;
	int x;

	if (HAVE_ORCH && ag->relay > 0) {
		if (log && (relay_write(ag->relay - 1, json, n) != 0 ||
		    relay_write(ag->relay - 1, "\n", 1) != 0))
			_exit(1);	/* the orchestrator is gone */
		return;
	}
	if (log && ag->logging && (x = slog_append(&ag->log, json, n)) != 0) {
		if (x == -E_IO) {
			snprintf(ag->why, sizeof(ag->why), "session log %s: %s",
			    ag->log.path, strerror(ag->log.err_no));
			ag->logging = 0;	/* say it once; keep answering */
		} else {
			/* An event the log cannot hold stops the turn: what
			 * it carried (a reply's tool calls) must not run
			 * unlogged. */
			snprintf(ag->why, sizeof(ag->why), "the %s event (%zu "
			    "bytes) %s: the turn is stopped", t->type,
			    n, x == -E_LIMIT ? "is over the session "
			    "log's line limit" : "does not fit in the memory "
			    "budget");
			ag->stop = x == -E_NOMEM ? AG_NOMEM : AG_FAIL;
		}
		ev_begin(ag, &w, "error");
		json_kstr(&w.w, "message", ag->why);
		w.t.text = ag->why;
		ev_end(ag, &w, x == -E_LIMIT);
	}
	if (ag->o.on_event != NULL) {
		t->json = json;
		t->n = n;
		t->off = ag->log.off != off ? ag->log.off : -1;
		if (t->text != NULL && t->len == 0)
			t->len = strlen(t->text);
		ag->o.on_event(ag->o.ctx, t);
	}
}

/* The start of a tool event: which agent, which call, which tool. */
void
ev_tool(struct agent *ag, struct ev *e, const char *type, const char *agent,
    const char *id, const char *name)
{
	ev_begin(ag, e, type);
	e->t.agent = agent;
	e->t.name = name;
	json_kstr(&e->w, "agent", agent);
	if (id != NULL) {
		json_kstr(&e->w, "id", id);
	}
	json_kstr(&e->w, "name", name);
}

/* A tool's result; ms < 0: not timed. */
void
ev_tool_end(struct agent *ag, const char *agent, const char *id,
    const char *name, const struct tool_out *out, long long ms)
{
	struct ev ev;

	ev_tool(ag, &ev, "tool_end", agent, id, name);
	json_key(&ev.w, "ok");
	json_put_bool(&ev.w, !out->is_error);
	if (ms >= 0) {
		json_key(&ev.w, "ms");
		json_put_int(&ev.w, ms);
	}
	if (out->confinement != NULL) {
		json_kstr(&ev.w, "confinement", out->confinement);
	}
	if (out->as_root) {
		json_key(&ev.w, "as_root");
		json_put_bool(&ev.w, 1);
	}
	if (out->activated != NULL) {
		json_kstr(&ev.w, "skill", out->activated);
	}
	json_key(&ev.w, "output");
	json_put_strn(&ev.w, out->text, out->len);
	ev.t.ok = !out->is_error;
	ev.t.ms = ms;
	ev.t.confinement = out->confinement;
	ev.t.text = out->text;
	ev.t.len = out->len;
	ev_end(ag, &ev, 1);
}

void
ev_simple(struct agent *ag, const char *type, const char *key,
    const char *val)
{
	struct ev e;

	ev_begin(ag, &e, type);
	if (key != NULL) {
		json_key(&e.w, key);
		json_put_str(&e.w, val);
	}
	if (strcmp(type, "error") == 0)
		e.t.text = val;
	else
		e.t.agent = val;	/* agent_start, agent_end */
	ev_end(ag, &e, 1);
}

/* A handoff going to a skill agent (with its task) or coming back (with
 * the result). */
void
ev_handoff(struct agent *ag, const char *from, const char *to, int back,
    const char *text, int offline, const char *step)
{
	struct ev ev;

	ev_begin(ag, &ev, "handoff");
	json_kstr(&ev.w, "from", from);
	json_kstr(&ev.w, "to", to);
	json_key(&ev.w, back ? "result" : "task");
	json_put_str(&ev.w, text);
	if (HAVE_ORCH && step != NULL) {	/* a plan step's variable */
		json_kstr(&ev.w, "step", step);
	}
	if (offline) {
		json_key(&ev.w, "offline");
		json_put_bool(&ev.w, 1);
	}
	ev.t.from = from;
	ev.t.name = to;
	ev.t.back = back;
	ev.t.text = text;
	ev_end(ag, &ev, 1);
}

void
ev_error(struct agent *ag, const char *msg)
{
	ev_simple(ag, "error", "message", msg);
}
