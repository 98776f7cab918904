/* mcp.c - the MCP client (mcp.h): servers on stdio in the sandbox.
 *
 * A server is started the first time an agent allowed to use it needs its
 * tools, and kept for the life of the agent; one that dies or stops
 * answering is killed and started again at the next call (at most
 * MCP_STARTS times). Replies are matched by id: what else arrives is a
 * notification (ignored), a request of the server's (answered: ping, or
 * "method not found"), a reply to a request we gave up on, or garbage
 * (skipped). A line longer than MCP_LINE_MAX fails the request it
 * answers and is skipped to its end. A forked copy of the agent (parallel
 * steps) starts servers of its own rather than share the pipes.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fmt/json.h"
#include "base/log.h"
#include "tool/mcp.h"
#include "net/net.h"
#include "base/str.h"
#include "tool/tool.h"

#define MCP_STARTS	3u		/* starts of one server per agent */
#define MCP_TOKENS	(1u << 16)	/* JSON tokens of one message */
#define MCP_PAGES	16		/* tools/list pages */
#define MCP_RELISTS	8u		/* tools/list again on list_changed */
#define MCP_MEM_MB	(sizeof(long) > 4 ? 8192 : 3072)	/* RLIMIT_DATA */
#define TOOL_PREFIX	"mcp__"

struct conn {
	const struct mcp_server	*s;
	struct sbx_proc	 p;
	pid_t		 owner;		/* the process that started it */
	int		 up;		/* 1 talking, 0 not, -1 given up */
	unsigned	 starts;
	long long	 id;
	struct sbuf	 in;		/* bytes read, not yet a line */
	int		 skipping;	/* inside an over-long line */
	char		 tail[200];	/* the end of its stderr */
	size_t		 ntail;
	struct llm_tool	*tools;		/* as offered */
	const char	**names;	/* the server's names for them */
	unsigned	 ntools;
	int		 listed;
	int		 changed;	/* it said tools/list_changed */
	unsigned	 relists;
	const char	*conf;		/* confinement, in perm */
	char		 why[400];
};

struct mcp {
	struct arena		*perm;
	struct mcp_host		 h;
	struct conn		*v;
	unsigned		 n;
};

/* --- the pipe */

/* Keep the end of its stderr for messages; the rest is dropped. */
static void
drain_err(struct conn *c)
{
	char buf[1024];
	ssize_t k;
	size_t m;

	while ((k = read(c->p.err, buf, sizeof(buf))) > 0) {
		m = MIN((size_t)k, sizeof(c->tail) - 1);
		if (c->ntail + m >= sizeof(c->tail)) {
			size_t drop = c->ntail + m - (sizeof(c->tail) - 1);

			memmove(c->tail, c->tail + drop, c->ntail - drop);
			c->ntail -= drop;
		}
		memcpy(c->tail + c->ntail, buf + k - m, m);
		c->ntail += m;
		c->tail[c->ntail] = '\0';
	}
	if (k == 0) {
		close(c->p.err);
		c->p.err = -1;
	}
}

/* Kill it; the next call starts it again. */
static void
down(struct conn *c, const char *why)
{
	/* What it wrote before it went is in the pipe still: a server that
	 * exits closes stdout at once, and the poll may see that first. */
	if (why != NULL && c->p.err >= 0)
		drain_err(c);
	if (c->owner == getpid())
		(void)sbx_proc_end(&c->p, 200);
	else {		/* our parent's: leave it to the parent */
		close(c->p.in);
		close(c->p.out);
		close(c->p.err);
		c->p.in = c->p.out = c->p.err = c->p.pid = -1;
	}
	c->up = 0;
	sbuf_release(&c->in);
	c->skipping = 0;
	if (why != NULL) {
		while (c->ntail > 0 && (c->tail[c->ntail - 1] == '\n' ||
		    c->tail[c->ntail - 1] == '\r'))
			c->tail[--c->ntail] = '\0';
		snprintf(c->why, sizeof(c->why), "%s%s%.120s", why,
		    c->ntail > 0 ? "; its stderr ends: " : "",
		    c->ntail > 0 ? c->tail + (c->ntail > 120 ? c->ntail -
		    120 : 0) : "");
	}
}

/* Write all of s (a message line) while reading what comes, until
 * deadline. 0, or -E_TIMEOUT / -E_IO. */
static int
send_line(struct conn *c, const char *s, size_t n, long long deadline)
{
	struct pollfd pf[2];
	char buf[4096];
	long long now;
	ssize_t k;

	while (n > 0) {
		if ((now = net_now_ms()) >= deadline)
			return -E_TIMEOUT;
		pf[0].fd = c->p.in, pf[0].events = POLLOUT;
		pf[1].fd = c->p.out, pf[1].events = POLLIN;
		if (poll(pf, 2, (int)MIN(deadline - now, 1000)) < 0) {
			if (errno == EINTR)
				continue;
			return -E_IO;
		}
		if (pf[0].revents & (POLLERR | POLLHUP))
			return -E_IO;
		if ((pf[1].revents & POLLIN) && c->in.len < MCP_LINE_MAX) {
			/* It talks while we do: keep what it says. */
			if ((k = read(c->p.out, buf, MIN(sizeof(buf),
			    MCP_LINE_MAX - c->in.len))) > 0)
				sbuf_add(&c->in, buf, (size_t)k);
		}
		if (pf[0].revents & POLLOUT) {
			if ((k = write(c->p.in, s, n)) < 0 && errno != EAGAIN &&
			    errno != EINTR)
				return -E_IO;
			if (k > 0)
				s += k, n -= (size_t)k;
		}
	}
	return c->in.err;
}

/* The next whole line from it into `a` (without its newline), until
 * deadline. 0, -E_LIMIT (a line over MCP_LINE_MAX, skipped), -E_TIMEOUT,
 * -E_IO (it closed its output), -E_NOMEM. */
static int
read_line(struct conn *c, struct arena *a, char **out, size_t *len,
    long long deadline)
{
	struct pollfd pf[2];
	char buf[8192], *nl;
	long long now;
	size_t n;
	ssize_t k;

	for (;;) {
		nl = c->in.len > 0 ? memchr(c->in.p, '\n', c->in.len) : NULL;
		if (nl != NULL) {
			n = (size_t)(nl - c->in.p);
			*out = c->skipping ? NULL : arena_strndup(a, c->in.p,
			    n);
			*len = n;
			memmove(c->in.p, nl + 1, c->in.len - n - 1);
			sbuf_truncate(&c->in, c->in.len - n - 1);
			if (c->skipping) {
				c->skipping = 0;
				return -E_LIMIT;
			}
			return *out != NULL ? 0 : -E_NOMEM;
		}
		if (c->in.err != 0)
			return c->in.err;
		if (!c->skipping && c->in.len >= MCP_LINE_MAX) {
			/* Too long: drop what we have, and the rest of it
			 * up to its newline when it comes. */
			c->skipping = 1;
			sbuf_truncate(&c->in, 0);
		}
		if ((now = net_now_ms()) >= deadline)
			return -E_TIMEOUT;
		pf[0].fd = c->p.out, pf[0].events = POLLIN;
		pf[1].fd = c->p.err, pf[1].events = POLLIN;
		if (poll(pf, c->p.err >= 0 ? 2 : 1, (int)MIN(deadline - now,
		    1000)) < 0) {
			if (errno == EINTR)
				continue;
			return -E_IO;
		}
		if (c->p.err >= 0 && pf[1].revents != 0)
			drain_err(c);
		if (pf[0].revents == 0)
			continue;
		n = c->skipping ? sizeof(buf) : MIN(sizeof(buf),
		    MCP_LINE_MAX - c->in.len);
		if ((k = read(c->p.out, buf, n)) == 0)
			return -E_IO;
		if (k < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -E_IO;
		}
		/* Skipping, the buffer is empty: what comes before the
		 * newline ends the long line. */
		if (c->skipping && memchr(buf, '\n', (size_t)k) == NULL)
			continue;
		sbuf_add(&c->in, buf, (size_t)k);
	}
}

/* Answer a request of the server's: ping, or "method not found" (we
 * declare no capabilities, so roots/list, sampling and elicitation are
 * not ours to serve). */
static void
answer(struct conn *c, struct arena *a, const struct json_doc *d, int id,
    long long deadline)
{
	const char *line, *raw;
	size_t n;

	raw = json_raw(d, id, &n);
	line = arena_printf(a, json_eq(d, json_get(d, 0, "method"), "ping") ?
	    "{\"jsonrpc\":\"2.0\",\"id\":%.*s,\"result\":{}}\n" :
	    "{\"jsonrpc\":\"2.0\",\"id\":%.*s,\"error\":{\"code\":-32601,"
	    "\"message\":\"Method not found\"}}\n", (int)n, raw);
	if (line != NULL)
		(void)send_line(c, line, strlen(line), deadline);
}

/* A message of the server's own: a request is answered; the tool list
 * changing is noted, to be read again before the agent's next tools. */
static void
heard(struct conn *c, struct arena *a, const struct json_doc *d, int id,
    long long deadline)
{
	if (id >= 0)
		answer(c, a, d, id, deadline);
	else if (json_eq(d, json_get(d, 0, "method"),
	    "notifications/tools/list_changed"))
		c->changed = 1;
}

/* A line is buffered, or the pipe has bytes now (poll without waiting). */
static int
waiting(const struct conn *c)
{
	struct pollfd pf = { c->p.out, POLLIN, 0 };

	return (c->in.len > 0 && memchr(c->in.p, '\n', c->in.len) != NULL) ||
	    poll(&pf, 1, 0) > 0;
}

/* What the server said while nobody asked, read only when it is there:
 * this runs each time an agent's tools are built. */
static void
drain(struct conn *c, struct arena *a)
{
	struct arena_mark m = arena_mark(a);
	struct json_doc d;
	char *line;
	size_t n;

	while (waiting(c) && read_line(c, a, &line, &n, net_now_ms() + 1) ==
	    0) {
		if (json_parse(a, line, n, MCP_TOKENS, &d) == 0 &&
		    d.t[0].type == JSON_OBJ && json_get(&d, 0, "method") >= 0)
			heard(c, a, &d, json_get(&d, 0, "id"),
			    net_now_ms() + c->s->timeout_ms);
		arena_reset_to(a, m);
	}
}

/* One request and its result: *d the reply, *res its "result" token.
 * A JSON-RPC error is -E_PROTO with the words in c->why; the others as
 * read_line's, the connection then taken down. */
static int
rpc(struct conn *c, struct arena *a, const char *method, const char *params,
    struct json_doc *d, int *res)
{
	long long deadline = net_now_ms() + c->s->timeout_ms, got;
	const char *req;
	char *line, *msg = NULL;
	size_t n;
	int e, id, err;

	c->id++;
	req = arena_printf(a, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":"
	    "\"%s\"%s%s}\n", c->id, method, params != NULL ? ",\"params\":" :
	    "", params != NULL ? params : "");
	if (req == NULL)
		return -E_NOMEM;
	if ((e = send_line(c, req, strlen(req), deadline)) != 0)
		goto fail;
	for (;;) {
		struct arena_mark m = arena_mark(a);

		if ((e = read_line(c, a, &line, &n, deadline)) == -E_LIMIT) {
			snprintf(c->why, sizeof(c->why), "a message of more "
			    "than %u KiB", MCP_LINE_MAX >> 10);
			return -E_LIMIT;	/* maybe our reply: give up */
		}
		if (e != 0)
			goto fail;
		if (json_parse(a, line, n, MCP_TOKENS, d) != 0 ||
		    d->t[0].type != JSON_OBJ) {
			log_debug("mcp %s: not JSON-RPC: %.80s", c->s->name,
			    line);
			arena_reset_to(a, m);
			continue;
		}
		id = json_get(d, 0, "id");
		if (json_get(d, 0, "method") >= 0) {
			heard(c, a, d, id, deadline);
			arena_reset_to(a, m);
			continue;	/* a notification or a request */
		}
		if (json_int(d, id, &got) != 0 || got != c->id) {
			arena_reset_to(a, m);
			continue;	/* late, or not ours */
		}
		if ((err = json_get(d, 0, "error")) >= 0) {
			long long code = 0;

			(void)json_int(d, json_get(d, err, "code"), &code);
			(void)json_str(d, a, json_get(d, err, "message"), &msg,
			    NULL);
			snprintf(c->why, sizeof(c->why), "%s: error %lld: %.150s",
			    method, code, msg != NULL ? msg : "");
			return -E_PROTO;
		}
		if ((*res = json_get(d, 0, "result")) < 0 ||
		    d->t[*res].type != JSON_OBJ) {
			snprintf(c->why, sizeof(c->why), "%s: a reply without a "
			    "result object", method);
			return -E_PROTO;
		}
		return 0;
	}
fail:
	down(c, e == -E_TIMEOUT ? "it did not answer in time" : e == -E_IO ?
	    "it exited or closed its pipes" : "out of memory");
	if (e == -E_TIMEOUT)
		snprintf(c->why, sizeof(c->why), "no answer to %s in %u s "
		    "(stopped; started again at the next call)", method,
		    c->s->timeout_ms / 1000);
	return e;
}

static const char *const versions[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05",
};

/* see mcp.h */
const char *
mcp_version(const char *asked)
{
	unsigned i;

	for (i = 0; asked != NULL && i < ARRAY_LEN(versions); i++)
		if (strcmp(asked, versions[i]) == 0)
			return versions[i];
	return versions[0];
}

/* initialize: the server must speak one of our versions. */
static int
handshake(struct conn *c, struct arena *a)
{
	static const char note[] = "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/initialized\"}\n";
	struct json_doc d;
	const char *p;
	char *v = NULL;
	unsigned i;
	int e, r;

	p = arena_printf(a, "{\"protocolVersion\":\"%s\",\"capabilities\":{},"
	    "\"clientInfo\":{\"name\":\"skillbox\",\"version\":\"%s\"}}",
	    versions[1], SKILLBOX_VERSION);
	if (p == NULL)
		return -E_NOMEM;
	if ((e = rpc(c, a, "initialize", p, &d, &r)) != 0)
		return e;
	(void)json_str(&d, a, json_get(&d, r, "protocolVersion"), &v, NULL);
	for (i = 0; v != NULL && i < ARRAY_LEN(versions); i++)
		if (strcmp(v, versions[i]) == 0)
			break;
	if (v == NULL || i == ARRAY_LEN(versions)) {
		snprintf(c->why, sizeof(c->why), "it speaks MCP %.30s; skillbox "
		    "speaks %s to %s", v != NULL ? v : "(no version)",
		    versions[ARRAY_LEN(versions) - 1], versions[0]);
		return -E_PROTO;
	}
	return send_line(c, note, sizeof(note) - 1, net_now_ms() +
	    c->s->timeout_ms);
}

/* s is in the NULL-terminated list v, or v has "*". */
static int
in_list(const char **v, const char *s)
{
	return str_in(v, SIZE_MAX, s) || str_in(v, SIZE_MAX, "*");
}

/* Tool i of a tools/list page, kept in perm when the configuration
 * allows it and its name makes a provider's tool name. */
static int
keep_tool(struct mcp *m, struct conn *c, const struct json_doc *d, int t)
{
	struct llm_tool *lt;
	char *name = NULL, *desc = NULL;
	int sch;

	if (json_str(d, m->perm, json_get(d, t, "name"), &name, NULL) != 0)
		return name == NULL ? 0 : -E_NOMEM;
	if ((c->s->tools != NULL && !in_list(c->s->tools, name)) ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789_-") != strlen(name) || strlen(TOOL_PREFIX) +
	    strlen(c->s->name) + 2 + strlen(name) > 64) {
		log_debug("mcp %s: tool %.60s not offered", c->s->name, name);
		return 0;
	}
	if (c->ntools == MCP_MAX_TOOLS) {
		log_warn("mcp %s: more than %u tools: %s and later ones not "
		    "offered (name the ones you want in tools:)", c->s->name,
		    MCP_MAX_TOOLS, name);
		return 0;
	}
	(void)json_str(d, m->perm, json_get(d, t, "description"), &desc, NULL);
	if (desc != NULL && strlen(desc) > 1024)
		desc[1024] = '\0';
	lt = &c->tools[c->ntools];
	c->names[c->ntools] = name;
	lt->name = arena_printf(m->perm, TOOL_PREFIX "%s__%s", c->s->name,
	    name);
	lt->description = desc != NULL ? desc : "";
	sch = json_get(d, t, "inputSchema");
	lt->params = sch >= 0 && d->t[sch].type == JSON_OBJ ?
	    arena_strndup(m->perm, d->js + d->t[sch].start,
	    (size_t)(d->t[sch].end - d->t[sch].start)) :
	    "{\"type\":\"object\"}";
	if (lt->name == NULL || lt->params == NULL)
		return -E_NOMEM;
	c->ntools++;
	return 0;
}

/* tools/list, every page. */
static int
list_tools(struct mcp *m, struct conn *c, struct arena *a)
{
	struct json_writer w;
	struct json_doc d;
	struct sbuf sb;
	char *cursor = NULL;
	const char *p = NULL;
	unsigned page, i;
	int e, r, arr;

	c->tools = arena_zalloc(m->perm, MCP_MAX_TOOLS * sizeof(*c->tools));
	c->names = arena_zalloc(m->perm, MCP_MAX_TOOLS * sizeof(*c->names));
	if (c->tools == NULL || c->names == NULL)
		return -E_NOMEM;
	for (page = 0; page < MCP_PAGES; page++) {
		if ((e = rpc(c, a, "tools/list", p, &d, &r)) != 0)
			return e;
		arr = json_get(&d, r, "tools");
		for (i = 0; arr >= 0 && d.t[arr].type == JSON_ARR &&
		    i < (unsigned)d.t[arr].size; i++)
			if ((e = keep_tool(m, c, &d, json_at(&d, arr, i))) != 0)
				return e;
		cursor = NULL;
		if (json_str(&d, a, json_get(&d, r, "nextCursor"), &cursor,
		    NULL) != 0 || cursor[0] == '\0')
			break;
		sbuf_init(&sb, a, 0);
		json_writer_init(&w, &sb);
		json_begin_obj(&w);
		json_kstr(&w, "cursor", cursor);
		json_end_obj(&w);
		if (json_writer_err(&w) != 0)
			return -E_NOMEM;
		p = sb.p;
	}
	c->listed = 1;
	return 0;
}

/* A server without the network that exited or kept silent at the
 * handshake: say that it may need the network, which `npx PKG` does to
 * fetch a package it does not find installed. */
static void
no_net(struct conn *c)
{
	const char *b = strrchr(c->s->argv[0], '/');
	size_t n = strlen(c->why);

	b = b != NULL ? b + 1 : c->s->argv[0];
	snprintf(c->why + n, sizeof(c->why) - n, "; it may need the network, "
	    "and the sandbox gives server %s none%s", c->s->name,
	    strcmp(b, "npx") == 0 ? ": npx fetches a package it does not "
	    "find installed (npm install it where the server runs)" : "");
}

/* Start server c (again) in this process when it is not up. */
static int
start(struct mcp *m, struct conn *c, struct arena *a)
{
	struct sbx_policy p = *m->h.base;
	struct sbx_result r;
	const char **argv = c->s->argv, *prog;
	unsigned i;
	int e;

	if (c->up == 1 && c->owner == getpid())
		return 0;
	if (c->up == 1)
		down(c, NULL);		/* forked: our own, not the parent's */
	if (c->up < 0)
		return -E_PROTO;
	if (c->starts++ == MCP_STARTS) {
		snprintf(c->why, sizeof(c->why), "started "
		    "%u times; not again in this session", MCP_STARTS);
		c->up = -1;
		return -E_PROTO;
	}
	p.perms = 0;
	p.nshell_allow = 0;
	if (c->s->allowed_tools != NULL)
		(void)sbx_from_allowed_tools(&p, a, c->s->allowed_tools);
	if (m->h.allow != 0)
		p.perms &= m->h.allow;
	p.perms &= ~m->h.deny;
	p.skill_name = c->s->name;
	p.skill_root = c->s->root;
	p.cwd = c->s->root;
	p.workspace = c->s->skill ? m->h.workspace : c->s->workspace;
	p.nsecrets = 0;
	for (i = 0; c->s->env != NULL && c->s->env[i] != NULL &&
	    i < SBX_MAX_SECRETS; i++)
		p.secrets[p.nsecrets++] = c->s->env[i];
	p.cpu_s = 0;		/* it lives as long as the agent */
	p.nofile = 256;
	/* RLIMIT_NPROC counts the user's threads: node has about 11. */
	p.nproc = 256;
	/* Memory (RLIMIT_DATA) for a server that lives as long as the
	 * agent: node's heap grows to its own limit of a few GiB. */
	p.mem_bytes = (size_t)MCP_MEM_MB << 20;
	if (strchr(argv[0], '/') == NULL) {
		if ((prog = sbx_which(a, argv[0])) == NULL) {
			snprintf(c->why, sizeof(c->why), "%s: not found in the "
			    "sandbox's PATH", argv[0]);
			c->up = -1;
			return -E_NOENT;
		}
		for (i = 0; argv[i] != NULL; i++)
			;
		if ((argv = arena_alloc(a, (i + 1) * sizeof(*argv))) == NULL)
			return -E_NOMEM;
		memcpy(argv, c->s->argv, (i + 1) * sizeof(*argv));
		argv[0] = prog;
	}
	c->ntail = 0;
	c->tail[0] = '\0';
	if ((e = sbx_spawn(a, &p, argv, &c->p, &r)) != 0) {
		snprintf(c->why, sizeof(c->why), "%s", r.why);
		c->up = e == -E_DENIED || r.status == 126 || r.status == 127 ?
		    -1 : 0;
		return e;
	}
	c->owner = getpid();
	c->up = 1;
	if (c->conf == NULL)
		c->conf = arena_strdup(m->perm, r.confinement);
	fcntl(c->p.in, F_SETFL, O_NONBLOCK);
	fcntl(c->p.out, F_SETFL, O_NONBLOCK);
	fcntl(c->p.err, F_SETFL, O_NONBLOCK);
	sbuf_init(&c->in, NULL, MCP_LINE_MAX + 1);
	c->why[0] = '\0';
	if ((e = handshake(c, a)) == -E_TIMEOUT || e == -E_IO) {
		if (!(p.perms & SBX_NET))
			no_net(c);
	} else if (e == 0 && !c->listed)
		e = list_tools(m, c, a);
	if (e != 0 && c->up == 1)
		down(c, NULL);
	if (e == -E_PROTO)
		c->up = -1;	/* it will not get better by itself */
	return e;
}

/* --- as a tool_ext */

static int
allowed(const struct conn *c, const char *agent)
{
	return in_list(c->s->agents, agent);
}

static int
ext_tools(void *ctx, struct arena *a, const char *agent, struct llm_tool *t,
    unsigned cap)
{
	struct mcp *m = ctx;
	unsigned i, k, n = 0;
	int e;

	for (i = 0; i < m->n; i++) {
		struct conn *c = &m->v[i];
		struct arena_mark mk = arena_mark(a);

		if (!allowed(c, agent))
			continue;
		if (c->listed && c->up == 1 && c->owner == getpid())
			drain(c, a);
		if (c->changed && c->up == 1 && c->relists < MCP_RELISTS) {
			c->changed = 0;
			c->relists++;
			c->ntools = 0;
			if ((e = list_tools(m, c, a)) != 0) {
				arena_reset_to(a, mk);
				if (e == -E_NOMEM)
					return e;
				log_warn("mcp server %s: listing its changed "
				    "tools: %s", c->s->name, c->why);
			}
		}
		if (!c->listed && (e = start(m, c, a)) != 0) {
			arena_reset_to(a, mk);
			if (e == -E_NOMEM)
				return e;
			if (c->up < 0 || c->starts == 1)
				log_warn("mcp server %s: %s: its tools are not "
				    "offered", c->s->name, c->why);
			continue;
		}
		arena_reset_to(a, mk);
		for (k = 0; k < c->ntools && n < cap; k++)
			t[n++] = c->tools[k];
	}
	return (int)n;
}

/* Cut text at cap bytes, saying how much went. */
static void
cut(struct arena *a, struct tool_out *out, size_t cap)
{
	char *s;

	if (out->len <= cap || (s = arena_printf(a, "%.*s\n[... %zu bytes "
	    "cut ...]", (int)cap, out->text, out->len - cap)) == NULL)
		return;
	out->text = s;
	out->len = strlen(s);
}

/* A tools/call result as text for the model: its content items in order
 * (text as is, other kinds named), or its structuredContent. */
static int
result_text(struct arena *a, const struct json_doc *d, int r,
    struct tool_out *out)
{
	struct sbuf sb;
	int arr = json_get(d, r, "content"), it, sc;
	unsigned i;
	char *s, *k;
	int isr = 0;

	(void)json_bool(d, json_get(d, r, "isError"), &isr);
	out->is_error = isr;
	sbuf_init(&sb, a, 0);
	for (i = 0; arr >= 0 && d->t[arr].type == JSON_ARR &&
	    i < (unsigned)d->t[arr].size; i++) {
		it = json_at(d, arr, i);
		k = s = NULL;
		(void)json_str(d, a, json_get(d, it, "type"), &k, NULL);
		if (sb.len > 0)
			sbuf_addc(&sb, '\n');
		if (k != NULL && strcmp(k, "text") == 0 && json_str(d, a,
		    json_get(d, it, "text"), &s, NULL) == 0)
			sbuf_adds(&sb, s);
		else if (k != NULL && strcmp(k, "resource") == 0 &&
		    json_str(d, a, json_get(d, json_get(d, it, "resource"),
		    "text"), &s, NULL) == 0)
			sbuf_adds(&sb, s);
		else {
			(void)json_str(d, a, json_get(d, it, "uri"), &s, NULL);
			if (s == NULL)
				(void)json_str(d, a, json_get(d, it,
				    "mimeType"), &s, NULL);
			sbuf_printf(&sb, "[%s%s%s: not shown]", k != NULL ? k :
			    "content", s != NULL ? " " : "", s != NULL ? s : "");
		}
	}
	if (sb.len == 0 && (sc = json_get(d, r, "structuredContent")) >= 0)
		sbuf_add(&sb, d->js + d->t[sc].start,
		    (size_t)(d->t[sc].end - d->t[sc].start));
	if (sb.err != 0)
		return -E_NOMEM;
	out->text = sb.p;
	out->len = sb.len;
	return 0;
}

/* The call's result: server c, what, why. */
static int
failed(struct arena *a, struct tool_out *out, const char *what,
    const struct conn *c)
{
	if ((out->text = arena_printf(a, "the MCP server %s %s: %s",
	    c->s->name, what, c->why)) == NULL)
		return -E_NOMEM;
	out->len = strlen(out->text);
	return 0;
}

/* Call tool (the server's name for it) of server c. */
static int
call(struct mcp *m, struct conn *c, struct arena *a, const char *tool,
    const char *args, size_t n, struct tool_out *out)
{
	struct json_doc d;
	const char *p;
	int e, r;

	memset(out, 0, sizeof(*out));
	out->is_error = 1;
	if ((e = start(m, c, a)) != 0) {
		if (e == -E_NOMEM)
			return e;
		return failed(a, out, "is not running", c);
	}
	/* The agent checked that args are a JSON object. */
	p = arena_printf(a, "{\"name\":\"%s\",\"arguments\":%.*s}", tool,
	    (int)n, n > 0 ? args : "{}");
	if (p == NULL)
		return -E_NOMEM;
	if ((e = rpc(c, a, "tools/call", p, &d, &r)) != 0) {
		if (e == -E_NOMEM)
			return e;
		return failed(a, out, "failed", c);
	}
	if ((e = result_text(a, &d, r, out)) != 0)
		return e;
	cut(a, out, m->h.out_cap);
	return 0;
}

static int
ext_call(void *ctx, struct arena *a, const char *agent, const char *name,
    const char *args, size_t n, struct tool_out *out)
{
	struct mcp *m = ctx;
	struct conn *c = NULL;
	const char *tool = NULL, *p;
	size_t k;
	unsigned i;

	if (strncmp(name, TOOL_PREFIX, strlen(TOOL_PREFIX)) != 0)
		return 1;
	p = name + strlen(TOOL_PREFIX);
	for (i = 0; i < m->n && c == NULL; i++) {
		k = strlen(m->v[i].s->name);
		if (strncmp(p, m->v[i].s->name, k) == 0 &&
		    strncmp(p + k, "__", 2) == 0)
			c = &m->v[i], tool = p + k + 2;
	}
	for (i = 0; c != NULL && i < c->ntools; i++)
		if (strcmp(c->names[i], tool) == 0)
			break;
	if (c == NULL || i == c->ntools || !allowed(c, agent))
		return 1;
	return call(m, c, a, tool, args, n, out);
}

/* see mcp.h */
int
mcp_call(struct mcp *m, unsigned i, struct arena *a, const char *tool,
    const char *args, size_t n, struct tool_out *out)
{
	return call(m, &m->v[i], a, tool, args, n, out);
}

/* see mcp.h */
struct mcp *
mcp_new(struct arena *perm, const struct mcp_server *v, unsigned n,
    const struct mcp_host *h)
{
	struct mcp *m;
	unsigned i;

	if ((m = arena_zalloc(perm, sizeof(*m))) == NULL ||
	    (m->v = arena_zalloc(perm, (n + 1) * sizeof(*m->v))) == NULL)
		return NULL;
	m->perm = perm;
	m->h = *h;
	if (m->h.out_cap == 0)
		m->h.out_cap = 32u << 10;
	m->n = n;
	for (i = 0; i < n; i++) {
		m->v[i].s = &v[i];
		m->v[i].p.pid = -1;
		m->v[i].p.in = m->v[i].p.out = m->v[i].p.err = -1;
	}
	return m;
}

/* see mcp.h */
void
mcp_ext(struct mcp *m, struct tool_ext *x)
{
	x->tools = ext_tools;
	x->call = ext_call;
	x->ctx = m;
}

/* see mcp.h */
const struct mcp_server *
mcp_server(const struct mcp *m, unsigned i)
{
	return m != NULL && i < m->n ? m->v[i].s : NULL;
}

/* see mcp.h */
int
mcp_open(struct mcp *m, unsigned i, const char ***names, unsigned *ntools,
    const char **confinement, const char **why)
{
	struct conn *c = &m->v[i];
	int e;

	*why = c->why;
	if ((e = start(m, c, m->perm)) != 0)
		return e;
	*names = c->names;
	*ntools = c->ntools;
	*confinement = c->conf;
	return 0;
}

/* see mcp.h */
void
mcp_describe(const struct mcp *m, struct sbuf *sb)
{
	const struct conn *c;
	const char **a;
	unsigned i;

	for (i = 0; m != NULL && i < m->n; i++) {
		c = &m->v[i];
		sbuf_printf(sb, "%s: %s", c->s->name, c->up == 1 ? "running" :
		    c->up < 0 ? "given up" : c->listed ? "stopped" :
		    "not started");
		if (c->listed)
			sbuf_printf(sb, ", %u tools", c->ntools);
		if (c->up != 1 && c->why[0] != '\0')
			sbuf_printf(sb, " (%s)", c->why);
		sbuf_adds(sb, "; for");
		for (a = c->s->agents; *a != NULL; a++)
			sbuf_printf(sb, " %s", *a);
		sbuf_addc(sb, '\n');
	}
	if (m == NULL)
		sbuf_adds(sb, "(no MCP servers configured)");
}

/* see mcp.h */
void
mcp_close(struct mcp *m)
{
	unsigned i;

	for (i = 0; m != NULL && i < m->n; i++)
		if (m->v[i].up == 1)
			down(&m->v[i], NULL);
}
