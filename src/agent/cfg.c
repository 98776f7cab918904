/* cfg.c - skillbox.yaml: find it, walk its YAML tree against a table of
 * keys, check every value, and fill struct cfg (see cfg.h). */
#include "agent/cfg.h"
#include "agent/crew.h"

#include <errno.h>
#include <fcntl.h>
#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fmt/fm.h"
#include "skill/hook.h"
#include "fmt/json.h"
#include "llm/llm.h"
#include "net/mqtt.h"
#include "base/log.h"
#include "skill/mcp_spec.h"
#include "sandbox/sandbox.h"
#include "skill/skill.h"
#include "base/str.h"
#include "config.h"

enum ktype {
	K_SECTION, K_STR, K_PATH, K_URL, K_ENV, K_PROVIDER, K_BOOL, K_MEM,
	K_SIZE, K_UINT, K_ULONG, K_MONEY, K_DIRS, K_MODE, K_HANDOFFS, K_PRICES,
	K_TOOLS, K_LAYERS, K_USER, K_ENVS, K_CREATE, K_TOKENS, K_LOGTO,
	K_NAMES, K_HOOKS, K_MCP, K_HOSTS, K_MQTT, K_FLEET, K_FLEETS, K_TOPIC,
	K_MQTTV, K_OFF
};

/* The switches of features a key may need (K_OFF: min is one). */
enum { S_ORCH, S_MCP, S_EVAL, S_PERSIST, S_JOBS, S_CREW, S_FLEET };
static const char switches[][8] = {
	"ORCH", "MCP", "EVAL", "PERSIST", "JOBS", "CREW", "FLEET"
};

/* Narrow fields: 53 keys of 48 bytes each were 2.5 KB on 64-bit. */
struct key {
	const char	*name;
	unsigned char	 type;		/* enum ktype */
	uint16_t	 off, noff;	/* the field; a list's count */
	uint32_t	 min, max;	/* numbers; lists: max entries */
};
_Static_assert(sizeof(struct cfg) <= UINT16_MAX, "struct key's offsets");

#define F(m)		offsetof(struct cfg, m)
#define L(m, n)		F(m), F(n), 0, CFG_MAX_LIST
/* A key of a feature left out: an error that names its switch. */
#define OFF(s)		K_OFF, 0, 0, s, 0

static const struct key keys[] = {
	{ "provider", K_PROVIDER, F(provider), 0, 0, 0 },
	{ "model", K_STR, F(model), 0, 0, 0 },
	{ "base_url", K_URL, F(base_url), 0, 0, 0 },
	{ "api_key_env", K_ENV, F(api_key_env), 0, 0, 0 },
	{ "anthropic_version", K_STR, F(anthropic_version), 0, 0, 0 },
	{ "anthropic_bearer", K_BOOL, F(anthropic_bearer), 0, 0, 0 },
	{ "ca_file", K_PATH, F(ca_file), 0, 0, 0 },
	{ "memory", K_MEM, F(memory), 0, MEM_MIN, MEM_MAX },
	{ "skills", K_DIRS, F(skills), F(nskills), 0, CFG_MAX_DIRS },
	{ "state_dir", K_PATH, F(state_dir), 0, 0, 0 },
	{ "workspace", K_PATH, F(workspace), 0, 0, 0 },
	{ "commands_dir", K_PATH, F(commands_dir), 0, 0, 0 },
#if HAVE_CREW
	{ "crew", K_PATH, F(crew), 0, 0, 0 },
#else
	{ "crew", OFF(S_CREW) },
#endif
	{ "instructions", K_STR, F(instructions), 0, 0, 0 },
	{ "agents_file", K_PATH, F(agents_file), 0, 0, 0 },
	{ "skill_mode", K_MODE, F(skill_inline), 0, 0, 0 },
	{ "handoffs", K_HANDOFFS, L(handoff_pairs, nhandoff_pairs) },
	{ "approve", K_NAMES, L(approve, napprove) },
	{ "hooks", K_HOOKS, 0, 0, 0, 0 },
#if HAVE_MCP
	{ "mcp_servers", K_MCP, 0, 0, 0, 0 },
#else
	{ "mcp_servers", OFF(S_MCP) },
#endif
	{ "limits", K_SECTION, 0, 0, 0, 0 },
	{ "limits.turns", K_UINT, F(limits.turns), 0, 1, 1000 },
	{ "limits.time", K_UINT, F(limits.time_s), 0, 1, 86400 },
	{ "limits.tokens", K_ULONG, F(limits.tokens), 0, 0, 1000000000 },
	{ "limits.budget", K_MONEY, F(limits.budget), 0, 0, 0 },
	{ "limits.tool_timeout", K_UINT, F(limits.tool_timeout_s), 0, 1, 3600 },
	{ "limits.output_cap", K_SIZE, F(limits.output_cap), 0, 1u << 10,
	    16u << 20 },
	{ "limits.workspace", K_SIZE, F(limits.workspace), 0, 64u << 10,
	    2047u << 20 },
	{ "limits.context_window", K_ULONG, F(limits.context_window), 0, 1000,
	    10000000 },
	{ "limits.compact_after", K_UINT, F(limits.compact_after), 0, 2, 10000 },
	{ "limits.connect_timeout", K_UINT, F(limits.connect_s), 0, 1, 600 },
	{ "limits.first_byte_timeout", K_UINT, F(limits.first_byte_s), 0, 1,
	    3600 },
	{ "limits.idle_timeout", K_UINT, F(limits.idle_s), 0, 1, 3600 },
	{ "limits.retries", K_UINT, F(limits.retries), 0, 0, 10 },
#if HAVE_ORCH
	{ "limits.depth", K_UINT, F(limits.depth), 0, 1, 3 },
	{ "limits.steps", K_UINT, F(limits.steps), 0, 1, 1000 },
	{ "limits.step_errors", K_UINT, F(limits.step_errors), 0, 1, 100 },
	{ "limits.plans", K_UINT, F(limits.plans), 0, 1, 100 },
	{ "limits.parallel", K_UINT, F(limits.parallel), 0, 1, 8 },
#else
	{ "limits.depth", OFF(S_ORCH) },
	{ "limits.steps", OFF(S_ORCH) },
	{ "limits.step_errors", OFF(S_ORCH) },
	{ "limits.plans", OFF(S_ORCH) },
	{ "limits.parallel", OFF(S_ORCH) },
#endif
#if HAVE_EVAL
	{ "cache", K_SECTION, 0, 0, 0, 0 },
	{ "cache.dir", K_PATH, F(cache.dir), 0, 0, 0 },
	{ "cache.max", K_SIZE, F(cache.max), 0, 64u << 10, 1u << 30 },
#else
	{ "cache", OFF(S_EVAL) },
#endif
	{ "prices", K_PRICES, 0, 0, 0, CFG_MAX_PRICES },
	{ "sandbox", K_SECTION, 0, 0, 0, 0 },
	{ "sandbox.allow", K_TOOLS, L(sandbox.allow, sandbox.nallow) },
	{ "sandbox.deny", K_TOOLS, L(sandbox.deny, sandbox.ndeny) },
	{ "sandbox.require", K_LAYERS, L(sandbox.require, sandbox.nrequire) },
	{ "sandbox.user", K_USER, F(sandbox.user), 0, 0, 0 },
	{ "sandbox.secrets", K_ENVS, L(sandbox.secrets, sandbox.nsecrets) },
	{ "create_skill", K_CREATE, F(create_skill), 0, 0, 0 },
	{ "serve", K_SECTION, 0, 0, 0, 0 },
	{ "serve.listen", K_STR, F(serve.listen), 0, 0, 0 },
	{ "serve.tokens", K_TOKENS, L(serve.tokens, serve.ntokens) },
	{ "serve.cors_origin", K_STR, F(serve.cors_origin), 0, 0, 0 },
	{ "serve.hosts", K_HOSTS, L(serve.hosts, serve.nhosts) },
	{ "serve.max_connections", K_UINT, F(serve.max_conns), 0, 1, 4096 },
	{ "serve.max_turns", K_UINT, F(serve.max_turns), 0, 1, 64 },
	{ "serve.queue", K_UINT, F(serve.queue), 0, 0, 1024 },
	{ "serve.head_max", K_SIZE, F(serve.head_max), 0, 1u << 10, 16u << 10 },
	{ "serve.header_timeout", K_UINT, F(serve.header_s), 0, 1, 600 },
	{ "serve.body_max", K_SIZE, F(serve.body_max), 0, 1u << 10, 64u << 20 },
	{ "serve.idle_timeout", K_UINT, F(serve.idle_s), 0, 1, 3600 },
	{ "serve.turn_memory", K_SIZE, F(serve.turn_memory), 0, MEM_MIN,
	    MEM_MAX },
	{ "serve.tls_cert", K_PATH, F(serve.tls_cert), 0, 0, 0 },
	{ "serve.tls_key", K_PATH, F(serve.tls_key), 0, 0, 0 },
	{ "serve.log", K_LOGTO, F(serve.syslog), 0, 0, 0 },
#if HAVE_PERSIST
	{ "persist", K_SECTION, 0, 0, 0, 0 },
	{ "persist.dir", K_PATH, F(persist.dir), 0, 0, 0 },
	{ "persist.interval", K_UINT, F(persist.interval), 0, 1, 604800 },
	{ "persist.max", K_SIZE, F(persist.max), 0, 4u << 10, 1u << 30 },
#else
	{ "persist", OFF(S_PERSIST) },
#endif
#if HAVE_JOBS
	{ "jobs", K_SECTION, 0, 0, 0, 0 },
	{ "jobs.max_parallel", K_UINT, F(jobs.max_parallel), 0, 1, 64 },
	{ "jobs.every", K_UINT, F(jobs.every_s), 0, 0, 86400 },
	{ "jobs.retries", K_UINT, F(jobs.retries), 0, 0, 100 },
	{ "jobs.backoff", K_UINT, F(jobs.backoff_s), 0, 0, 86400 },
	{ "jobs.compact_at", K_SIZE, F(jobs.compact_at), 0, 4u << 10,
	    16u << 20 },
#else
	{ "jobs", OFF(S_JOBS) },
#endif
#if HAVE_FLEET
	{ "mqtt", K_SECTION, 0, 0, 0, 0 },
	{ "mqtt.broker", K_MQTT, F(mqtt.broker), 0, 0, 0 },
	{ "mqtt.ca", K_PATH, F(mqtt.ca), 0, 0, 0 },
	{ "mqtt.cert", K_PATH, F(mqtt.cert), 0, 0, 0 },
	{ "mqtt.key", K_PATH, F(mqtt.key), 0, 0, 0 },
	{ "mqtt.username", K_STR, F(mqtt.username), 0, 0, 0 },
	{ "mqtt.password_file", K_PATH, F(mqtt.password_file), 0, 0, 0 },
	{ "mqtt.password_env", K_ENV, F(mqtt.password_env), 0, 0, 0 },
	{ "mqtt.client_id", K_FLEET, F(mqtt.client_id), 0, 0, 0 },
	{ "mqtt.keepalive", K_UINT, F(mqtt.keepalive), 0, 5, 3600 },
	{ "mqtt.root", K_TOPIC, F(mqtt.root), 0, 0, 0 },
	{ "mqtt.prefix", K_TOPIC, F(mqtt.prefix), 0, 0, 0 },
	{ "mqtt.groups", K_FLEETS, L(mqtt.groups, mqtt.ngroups) },
	{ "mqtt.queues", K_FLEETS, L(mqtt.queues, mqtt.nqueues) },
	{ "mqtt.version", K_MQTTV, F(mqtt.version), 0, 0, 0 },
	{ "mqtt.session_expiry", K_ULONG, F(mqtt.session_expiry), 0, 0,
	    UINT32_MAX },
#else
	{ "mqtt", OFF(S_FLEET) },
#endif
};

_Static_assert(ARRAY_LEN(keys) <= CFG_MAX_KEYS, "raise CFG_MAX_KEYS");

static const char *const tools[] = {
	"Read", "Grep", "Glob", "LS", "Write", "Edit", "WebFetch", "WebSearch",
	"Fetch", "Bash", "Terminal", "MultiEdit", "UnixSocket",
};

static const char *const create[] = { "false", "true", "trusted" };
static const char *const logto[] = { "stderr", "syslog" };

static const char *const layers[] = {
	"rlimit", "nnp", "landlock", "landlock-net", "netns", "seccomp",
	"userdrop", "privtmp", "env", "seccomp-net", "seccomp-unix", "all",
};


/* see crew.h */
int
cfg_bad(struct cfg_ld *l, int code, unsigned line, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->errlen == 0)
		return code;
	n = line != 0 ? snprintf(l->err, l->errlen, "%s:%u: ", l->file, line) :
	    snprintf(l->err, l->errlen, "%s: ", l->file);
	if (n >= 0 && (size_t)n < l->errlen) {
		va_start(ap, fmt);
		vsnprintf(l->err + n, l->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return code;
}

/* "HEX64" or "HEX64 skill skill...": a token's SHA-256 and the skills it
 * may use. */
static int
is_token_hash(const char *s)
{
	size_t i;

	for (i = 0; i < 64; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	for (; s[i] != '\0'; i++)
		if ((unsigned char)s[i] < ' ' || s[i] == 0x7f)
			return 0;
	return s[64] == '\0' || s[64] == ' ';
}

/* A name a Host header may carry: a DNS name or an IPv4 address, or an
 * IPv6 one in brackets; no port (serve compares the name alone). */
static int
is_host_name(const char *s)
{
	size_t n = strlen(s);

	if (s[0] == '[')
		return n > 2 && s[n - 1] == ']' && strspn(s + 1,
		    "0123456789abcdefABCDEF:.") == n - 2;
	return n > 0 && n < 254 && strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") == n;
}

static int
is_env_name(const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++)
		if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') ||
		    (i > 0 && s[i] >= '0' && s[i] <= '9')))
			return 0;
	return i > 0 && i <= 128;
}

/* A known tool name, or Bash(CMD:*). */
static int
is_tool(const char *s)
{
	size_t n = strlen(s), i;

	if (str_in(tools, ARRAY_LEN(tools), s))
		return 1;
	if (n < 9 || strncmp(s, "Bash(", 5) != 0 || strcmp(s + n - 3, ":*)") != 0)
		return 0;
	for (i = 5; i < n - 3; i++)
		if (strchr(" \t():", s[i]) != NULL)
			return 0;
	return 1;
}

static int
is_provider(const char *s)
{
	return strcmp(s, "offline") == 0 || llm_proto_find(s) != NULL;
}

/* see crew.h */
int
cfg_is_url(const char *s)
{
	return (strncmp(s, "http://", 7) == 0 && s[7] != '\0') ||
	    (strncmp(s, "https://", 8) == 0 && s[8] != '\0');
}

/* see cfg.h */
int
cfg_mqtt_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= 64 && strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == n;
}

/* A topic the fleet's own ones go under: printable, no wildcard, no
 * empty level, not a broker's own ($SYS). */
static int
is_topic(const char *s)
{
	size_t i, n = strlen(s);

	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || s[i] == 0x7f ||
		    s[i] == '+' || s[i] == '#')
			return 0;
	return n > 0 && n <= 128 && s[0] != '$' && s[0] != '/' &&
	    s[n - 1] != '/' && strstr(s, "//") == NULL;
}

/* A login name as useradd takes it, or a uid. */
static int
is_user(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > 32)
		return 0;
	if (strspn(s, "0123456789") == n)
		return n <= 10;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || s[i] == '_' ||
		    (i > 0 && ((s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
		    s[i] == '.' || (s[i] == '$' && i == n - 1)))))
			return 0;
	return 1;
}

static int
parse_ulong(const char *s, unsigned long min, unsigned long max,
    unsigned long *out)
{
	unsigned long v = 0;
	unsigned d;

	if (*s == '\0')
		return -1;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		d = (unsigned)(*s - '0');
		if (v > (max - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	if (v < min)
		return -1;
	*out = v;
	return 0;
}

static void
fmt_size(char *buf, size_t n, unsigned long v)
{
	if (v >= (1ul << 20) && v % (1ul << 20) == 0)
		snprintf(buf, n, "%luM", v >> 20);
	else if (v >= 1024 && v % 1024 == 0)
		snprintf(buf, n, "%luk", v >> 10);
	else
		snprintf(buf, n, "%lu", v);
}

/* What a key wants, in words, for "'key' must be ...". */
static const char *
want(const struct key *k, char *buf, size_t n)
{
	char lo[24], hi[24];

	switch (k->type) {
	case K_URL:
		return "a URL that starts with http:// or https://";
	case K_ENV:
		return "an environment variable name like MY_API_KEY";
	case K_PROVIDER:
		return "one of openai, responses, anthropic, ollama, offline";
	case K_BOOL:
		return "true or false";
	case K_CREATE:
		return "false, true or trusted";
	case K_LOGTO:
		return "stderr or syslog";
	case K_TOKENS:
		return "a list of token hashes (64 hex digits: skillbox serve "
		    "--hash-token), each maybe followed by the skills it may "
		    "use";
	case K_MEM:
	case K_SIZE:
		fmt_size(lo, sizeof(lo), k->min);
		fmt_size(hi, sizeof(hi), k->max);
		snprintf(buf, n, "a size from %s to %s, like %s", lo, hi,
		    k->type == K_MEM ? "2M" : "32k");
		return buf;
	case K_UINT:
	case K_ULONG:
		snprintf(buf, n, "a whole number from %lu to %lu",
		    (unsigned long)k->min, (unsigned long)k->max);
		return buf;
	case K_MONEY:
		return "a number, 0 or more, like 0.25";
	case K_DIRS:
		return "a folder or a list of folders";
	case K_MODE:
		return "handoff or inline";
	case K_HANDOFFS:
		return "all, none or a list of skill pairs like from->to";
	case K_NAMES:
		return "a list of tool or skill names ('*' any characters)";
	case K_PRICES:
		return "a map of model names to { input: N, output: N }";
	case K_TOOLS:
		return "a list of tools: Read Grep Glob LS Write Edit WebFetch "
		    "WebSearch Fetch Bash Terminal Bash(CMD:*) UnixSocket";
	case K_LAYERS:
		return "all or a list of layers: rlimit nnp landlock "
		    "landlock-net netns seccomp seccomp-net seccomp-unix "
		    "userdrop privtmp env";
	case K_USER:
		return "a user name or a numeric uid";
	case K_ENVS:
		return "a list of environment variable names";
	case K_HOSTS:
		return "a list of host names (no port), like [router.lan]";
	case K_MQTT:
		return "a broker URL: mqtt://HOST[:PORT] or mqtts://HOST[:PORT]";
	case K_FLEET:
		return "a name of letters, digits, _ and - (at most 64), not "
		    "group or queue";
	case K_FLEETS:
		return "a list of names of letters, digits, _ and - (at most 64)";
	case K_TOPIC:
		return "an MQTT topic without wildcards, like skillbox";
	case K_MQTTV:
		return "auto, 5 or 3.1.1";
	case K_SECTION:
		return "a map of keys";
	case K_PATH:
		return "a path";
	default:
		return "a string";
	}
}

static int
must(struct cfg_ld *l, const struct key *k, const struct fm_node *nd)
{
	char buf[96];

	/* A key pasted where its variable's name goes is not echoed. */
	if (nd->kind == FM_SCALAR && k->type != K_ENV && k->type != K_ENVS)
		return cfg_bad(l, -E_INVAL, nd->line, "'%s' must be %s, not "
		    "'%.40s'", k->name, want(k, buf, sizeof(buf)), nd->s);
	return cfg_bad(l, -E_INVAL, nd->line, "'%s' must be %s", k->name,
	    want(k, buf, sizeof(buf)));
}

/* see crew.h */
char *
cfg_resolve(struct cfg_ld *l, const char *s)
{
	size_t n;

	while (s[0] == '.' && s[1] == '/')
		for (s += 2; *s == '/'; s++)
			;
	if (strcmp(s, ".") == 0)
		s = "";
	n = strlen(s);
	while (n > 1 && s[n - 1] == '/')
		n--;
	if (s[0] == '/')
		return arena_strndup(l->a, s, n);
	if (n == 0)
		return arena_strdup(l->a, l->dir);
	return arena_printf(l->a, "%s%s%.*s", l->dir,
	    strcmp(l->dir, "/") == 0 ? "" : "/", (int)n, s);
}

/* The folder of the config file, absolute. */
static const char *
file_dir(struct cfg_ld *l, const char *file)
{
	const char *slash;
	char *cwd;

	while (file[0] == '.' && file[1] == '/')
		file += 2;
	slash = strrchr(file, '/');
	if (file[0] == '/')
		return arena_strndup(&l->tmp, file, slash == file ? 1 :
		    (size_t)(slash - file));
	if ((cwd = arena_alloc(&l->tmp, 4096)) == NULL)
		return NULL;
	if (getcwd(cwd, 4096) == NULL)
		return "/";
	if (slash == NULL)
		return cwd;
	return arena_printf(&l->tmp, "%s%s%.*s", cwd, strcmp(cwd, "/") ? "/" :
	    "", (int)(slash - file), file);
}

/* see crew.h */
int
cfg_read_file(struct cfg_ld *l, const char *path, size_t max, char **out,
    size_t *len)
{
	struct stat st;
	size_t got = 0;
	ssize_t r;
	char *buf;
	int fd, e = 0;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return errno == ENOENT ? -E_NOENT : -E_IO;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		e = -E_IO;
		errno = EISDIR;
		goto out;
	}
	if ((size_t)st.st_size > max) {
		e = -E_LIMIT;
		goto out;
	}
	if ((buf = arena_alloc(&l->tmp, (size_t)st.st_size + 1)) == NULL) {
		e = -E_NOMEM;
		goto out;
	}
	while (got < (size_t)st.st_size) {
		r = read(fd, buf + got, (size_t)st.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			e = -E_IO;
			goto out;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	buf[got] = '\0';
	*out = buf;
	*len = got;
out:
	close(fd);
	return e;
}

/* see crew.h */
const char *
cfg_read_why(int e, size_t max, char *buf, size_t n)
{
	if (e == -E_NOENT)
		return "no such file";
	if (e == -E_LIMIT) {
		snprintf(buf, n, "larger than %zu KiB", max >> 10);
		return buf;
	}
	return errno == EISDIR ? "not a regular file" : strerror(errno);
}

/* The items of a list value: one scalar or a sequence of scalars. */
static int
items(struct cfg_ld *l, const struct key *k, const struct fm_node *nd,
    const struct fm_node **first)
{
	const struct fm_node *it;

	if (nd->kind == FM_SCALAR) {
		*first = nd;
		return 1;
	}
	if (nd->kind != FM_SEQ)
		return must(l, k, nd);
	for (it = nd->kids; it != NULL; it = it->next)
		if (it->kind != FM_SCALAR || it->n == 0)
			return must(l, k, it);
	if (nd->nkids > k->max)
		return cfg_bad(l, -E_INVAL, nd->line, "'%s' has more than %lu "
		    "entries", k->name, (unsigned long)k->max);
	*first = nd->kids;
	return (int)nd->nkids;
}

/* "from->to" with skill names on both sides, spaces allowed around the
 * arrow. */
static int
is_pair(const char *s, struct str *from, struct str *to)
{
	const char *arrow = strstr(s, "->");

	if (arrow == NULL)
		return 0;
	*from = str_trim((struct str){ s, (size_t)(arrow - s) });
	*to = str_trim(str_z(arrow + 2));
	return skill_name_rule(from->p, from->n) == NULL &&
	    skill_name_rule(to->p, to->n) == NULL;
}

static int
set_list(struct cfg_ld *l, const struct key *k, const struct fm_node *nd)
{
	const char **v = (const char **)(void *)((char *)l->c + k->off);
	unsigned *cnt = (unsigned *)(void *)((char *)l->c + k->noff);
	const struct fm_node *it = NULL;
	struct str from = { "", 0 }, to = from;
	char *s;
	int n, i, ok;

	if (k->type == K_HANDOFFS && nd->kind == FM_SCALAR &&
	    (strcmp(nd->s, "all") == 0 || strcmp(nd->s, "none") == 0)) {
		l->c->handoffs_all = strcmp(nd->s, "all") == 0;
		*cnt = 0;
		return 0;
	}
	if ((n = items(l, k, nd, &it)) < 0)
		return n;
	if (n == 0 && k->off == offsetof(struct cfg, sandbox.allow))
		return cfg_bad(l, -E_INVAL, nd->line, "'sandbox.allow' is "
		    "empty: leave it out for no narrowing");
	for (i = 0; i < n; i++, it = it->next) {
		switch (k->type) {
		case K_DIRS: ok = 1; break;
		case K_HANDOFFS: ok = is_pair(it->s, &from, &to); break;
		case K_TOOLS: ok = is_tool(it->s); break;
		case K_LAYERS: ok = str_in(layers, ARRAY_LEN(layers), it->s);
			break;
		case K_TOKENS: ok = is_token_hash(it->s); break;
		case K_NAMES: ok = hook_name_ok(it->s); break;
		case K_HOSTS: ok = is_host_name(it->s); break;
		case K_FLEETS: ok = cfg_mqtt_name_ok(it->s); break;
		default: ok = is_env_name(it->s); break;
		}
		if (!ok)
			return must(l, k, it);
		if (k->type == K_DIRS)
			s = cfg_resolve(l, it->s);
		else if (k->type == K_HANDOFFS)	/* stored as "from->to" */
			s = arena_printf(l->a, "%.*s->%.*s", (int)from.n,
			    from.p, (int)to.n, to.p);
		else
			s = arena_strdup(l->a, it->s);
		if ((v[i] = s) == NULL)
			return -E_NOMEM;
	}
	*cnt = (unsigned)n;
	if (k->type == K_HANDOFFS)
		l->c->handoffs_all = 0;
	return 0;
}

static int
set_prices(struct cfg_ld *l, const struct key *k, const struct fm_node *nd)
{
	const struct fm_node *m, *f;
	struct cfg_price *p;
	double *d;

	if (nd->kind != FM_MAP)
		return must(l, k, nd);
	if (nd->nkids > k->max)
		return cfg_bad(l, -E_INVAL, nd->line, "'prices' has more than "
		    "%lu entries", (unsigned long)k->max);
	l->c->nprices = 0;
	for (m = nd->kids; m != NULL; m = m->next) {
		p = &l->c->prices[l->c->nprices];
		if (m->kind != FM_MAP)
			return cfg_bad(l, -E_INVAL, m->line,
			    "'prices.%s' must be { input: N, output: N }",
			    m->key);
		for (f = m->kids; f != NULL; f = f->next) {
			if (strcmp(f->key, "input") != 0 &&
			    strcmp(f->key, "output") != 0)
				return cfg_bad(l, -E_INVAL, f->line,
				    "unknown key 'prices.%s.%s'", m->key,
				    f->key);
			d = f->key[0] == 'i' ? &p->input : &p->output;
			if (f->kind != FM_SCALAR || str_decimal(f->s, d) != 0)
				return cfg_bad(l, -E_INVAL, f->line,
				    "'prices.%s.%s' must be a number, 0 or "
				    "more, like 0.25", m->key, f->key);
		}
		if (fm_get(m, "input") == NULL || fm_get(m, "output") == NULL)
			return cfg_bad(l, -E_INVAL, m->line,
			    "'prices.%s' needs both input and output", m->key);
		if ((p->model = arena_strdup(l->a, m->key)) == NULL)
			return -E_NOMEM;
		l->c->nprices++;
	}
	return 0;
}

/* Check one value and store it. */
static int
set(struct cfg_ld *l, const struct key *k, const struct fm_node *nd)
{
	void *f = (char *)l->c + k->off;
	struct mqtt_url u;
	unsigned long v;
	size_t sz;
	char *s;
	int ok;

	switch (k->type) {
	case K_DIRS: case K_HANDOFFS: case K_TOOLS: case K_LAYERS: case K_ENVS:
	case K_TOKENS: case K_NAMES: case K_HOSTS: case K_FLEETS:
		return set_list(l, k, nd);
	case K_HOOKS: {
		struct hook *h;
		char why[160];
		unsigned line;
		int e;

		if ((e = hook_parse(l->a, nd, arena_strdup(l->a, l->dir), &h,
		    &l->c->nhooks, &line, why, sizeof(why))) != 0)
			return e != -E_INVAL ? e : cfg_bad(l, e, line, "%s",
			    why);
		l->c->hooks = h;
		return 0;
	}
	case K_MCP: {
		struct mcp_server *ms;
		char why[200];
		unsigned line;
		int e;

		if (!HAVE_MCP)		/* no K_MCP row then (K_OFF) */
			return -E_INVAL;
		if ((e = mcp_parse(l->a, nd, arena_strdup(l->a, l->dir), NULL,
		    &ms, &l->c->nmcp, &line, why, sizeof(why))) != 0)
			return e != -E_INVAL ? e : cfg_bad(l, e, line, "%s",
			    why);
		l->c->mcp = ms;
		return 0;
	}
	case K_PRICES:
		return set_prices(l, k, nd);
	default:
		break;
	}
	if (nd->kind != FM_SCALAR || nd->n == 0)
		return must(l, k, nd);
	switch (k->type) {
	case K_STR: case K_PATH: ok = 1; break;
	case K_URL: ok = cfg_is_url(nd->s); break;
	case K_ENV: ok = is_env_name(nd->s); break;
	case K_PROVIDER: ok = is_provider(nd->s); break;
	case K_USER: ok = is_user(nd->s); break;
	case K_MQTT: ok = HAVE_FLEET && mqtt_url_parse(nd->s, &u) == 0; break;
	case K_FLEET: ok = cfg_mqtt_name_ok(nd->s) &&
	    strcmp(nd->s, "group") != 0 && strcmp(nd->s, "queue") != 0; break;
	case K_TOPIC: ok = is_topic(nd->s); break;
	case K_MQTTV:
		ok = strcmp(nd->s, "auto") == 0 ? 0 : strcmp(nd->s, "5") == 0 ?
		    MQTT_V5 : strcmp(nd->s, "3.1.1") == 0 ? MQTT_V311 : -1;
		if (ok < 0)
			return must(l, k, nd);
		*(unsigned *)f = (unsigned)ok;
		return 0;
	case K_BOOL:
		if ((ok = strcmp(nd->s, "true") == 0 ||
		    strcmp(nd->s, "false") == 0))
			*(int *)f = nd->s[0] == 't';
		return ok ? 0 : must(l, k, nd);
	case K_CREATE:		/* the index is the value */
	case K_LOGTO: {
		const char *const *t = k->type == K_CREATE ? create : logto;
		size_t nt = k->type == K_CREATE ? ARRAY_LEN(create) :
		    ARRAY_LEN(logto);

		for (v = 0; v < nt && strcmp(nd->s, t[v]) != 0; v++)
			;
		if (v == nt)
			return must(l, k, nd);
		*(int *)f = (int)v;
		return 0;
	}
	case K_MODE:
		if ((ok = strcmp(nd->s, "handoff") == 0 ||
		    strcmp(nd->s, "inline") == 0))
			*(int *)f = nd->s[0] == 'i';
		return ok ? 0 : must(l, k, nd);
	case K_MEM:
	case K_SIZE:
		if (mem_parse_size(nd->s, &sz) != 0 || sz < k->min ||
		    sz > k->max)
			return must(l, k, nd);
		*(size_t *)f = sz;
		return 0;
	case K_UINT:
	case K_ULONG:
		if (parse_ulong(nd->s, k->min, k->max, &v) != 0)
			return must(l, k, nd);
		if (k->type == K_UINT)
			*(unsigned *)f = (unsigned)v;
		else
			*(unsigned long *)f = v;
		return 0;
	case K_MONEY:
		return str_decimal(nd->s, f) == 0 ? 0 : must(l, k, nd);
	default:
		return must(l, k, nd);
	}
	if (!ok)
		return must(l, k, nd);
	s = k->type == K_PATH ? cfg_resolve(l, nd->s) :
	    arena_strdup(l->a, nd->s);
	if ((*(const char **)f = s) == NULL)
		return -E_NOMEM;
	return 0;
}

/* see crew.h */
int
cfg_find_key(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(keys); i++)
		if (strcmp(keys[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* The keys of one map; sections are one level deep, so this recurses
 * once at most. */
static int
walk(struct cfg_ld *l, const struct fm_node *map, const char *prefix)
{
	const struct fm_node *nd;
	char name[80];
	int i, e;

	for (nd = map->kids; nd != NULL; nd = nd->next) {
		snprintf(name, sizeof(name), "%s%s", prefix, nd->key);
		if (strcmp(name, "api_key") == 0)
			return cfg_bad(l, -E_INVAL, nd->line,
			    "unknown key 'api_key': keep the key in the "
			    "environment and name its variable in api_key_env");
		if (strchr(nd->key, '.') != NULL ||
		    (i = cfg_find_key(name)) < 0)
			return cfg_bad(l, -E_INVAL, nd->line,
			    "unknown key '%.60s'", name);
		if (keys[i].type == K_OFF)
			return cfg_bad(l, -E_INVAL, nd->line,
			    "'%s': not in this build (%s=0)", name,
			    switches[keys[i].min]);
		if (fm_is_null(nd))
			continue;
		if (keys[i].type == K_SECTION) {
			if (nd->kind != FM_MAP)
				return must(l, &keys[i], nd);
			snprintf(name, sizeof(name), "%s.", keys[i].name);
			if (HAVE_EVAL && strcmp(name, "cache.") == 0)
				l->c->cache.on = 1;
			if ((e = walk(l, nd, name)) != 0)
				return e;
			continue;
		}
		if ((e = set(l, &keys[i], nd)) != 0)
			return e;
		l->c->src[i] = l->c->file;
		if (strcmp(name, "instructions") == 0)
			l->instr_line = nd->line;
		else if (strcmp(name, "agents_file") == 0)
			l->agents_line = nd->line;
		else if (strcmp(name, "provider") == 0)
			l->provider_line = nd->line;
	}
	return 0;
}

/* see crew.h */
void
cfg_set_src(struct cfg *c, const char *key, const char *src)
{
	int i = cfg_find_key(key);

	if (i >= 0)
		c->src[i] = src;
}

/* see crew.h */
int
cfg_load_agents(struct cfg_ld *l)
{
	const char *path = l->c->agents_file, *cfile = l->file;
	struct fm_node *root, *nd;
	struct fm_error fe;
	struct str yaml, body;
	unsigned yl, bl, fixed;
	char *text, why[32];
	size_t n;
	int e;

	if ((e = cfg_read_file(l, path, CFG_AGENTS_MAX, &text, &n)) != 0)
		return e == -E_NOMEM ? e : cfg_bad(l, e, l->agents_line,
		    "agents_file '%s': %s", path,
		    cfg_read_why(e, CFG_AGENTS_MAX, why, sizeof(why)));
	l->file = path;
	body = (struct str){ text, n };
	if ((e = fm_split(text, n, &yaml, &yl, &body, &bl)) == -E_PARSE)
		return cfg_bad(l, -E_PARSE, yl, "front-matter opened on line "
		    "%u is not closed with ---", yl - 1);
	if (e == 0 && !(HAVE_CREW && l->other)) {
		if ((e = fm_parse_lax(&l->tmp, yaml.p, yaml.n, yl, &root,
		    &fe, &fixed)) != 0)
			return e == -E_NOMEM ? e : cfg_bad(l, -E_PARSE, fe.line,
			    "%s", fe.msg);
		if (fixed != 0)
			log_warn("%s:%u: a quoted value goes on at column 0; "
			    "read as js-yaml reads it (YAML wants those lines "
			    "indented)", path, fixed);
		if (root->kind != FM_MAP && root->kind != FM_NULL)
			return cfg_bad(l, -E_INVAL, root->line,
			    "front-matter must be a map of keys");
		for (nd = root->kind == FM_MAP ? root->kids : NULL; nd != NULL;
		    nd = nd->next) {
			if (fm_is_null(nd))
				continue;
			/* "openai/M": another runtime's name (crew_model). */
			if (HAVE_CREW && l->crew &&
			    strcmp(nd->key, "model") == 0) {
				if (nd->kind == FM_SCALAR)
					l->crew_model = arena_strdup(l->a,
					    nd->s);
				continue;
			}
			if (strcmp(nd->key, "model") == 0 ||
			    strcmp(nd->key, "skill_mode") == 0) {
				if ((e = set(l, &keys[cfg_find_key(nd->key)],
				    nd)) != 0)
					return e;
				cfg_set_src(l->c, nd->key, path);
			} else if (strcmp(nd->key, "name") != 0 &&
			    strcmp(nd->key, "description") != 0)
				log_warn("%s:%u: unknown front-matter key "
				    "'%.60s' (ignored)", path, nd->line,
				    nd->key);
		}
	}
	body = str_trim(body);
	if ((l->c->instructions = str_dup(l->a, body)) == NULL)
		return -E_NOMEM;
	cfg_set_src(l->c, "instructions", path);
	l->file = cfile;
	return 0;
}

/* $SKILLBOX_PROVIDER, $SKILLBOX_MODEL, $SKILLBOX_BASE_URL. */
static int
env_overrides(struct cfg_ld *l)
{
	static const char *const names[] = {
		"SKILLBOX_PROVIDER", "SKILLBOX_MODEL", "SKILLBOX_BASE_URL",
	};
	static const char *const srcs[] = {
		"$SKILLBOX_PROVIDER", "$SKILLBOX_MODEL", "$SKILLBOX_BASE_URL",
	};
	static const char *const ks[] = { "provider", "model", "base_url" };
	struct fm_node nd;
	const char *v, *file = l->file;
	size_t i;
	int e;

	for (i = 0; i < ARRAY_LEN(names); i++) {
		if ((v = getenv(names[i])) == NULL || *v == '\0')
			continue;
		memset(&nd, 0, sizeof(nd));
		nd.kind = FM_SCALAR;
		nd.s = v;
		nd.n = strlen(v);
		l->file = srcs[i];
		e = set(l, &keys[cfg_find_key(ks[i])], &nd);
		l->file = file;
		if (e != 0)
			return e;
		cfg_set_src(l->c, ks[i], srcs[i]);
		if (i == 0)
			l->provider_line = 0;
	}
	return 0;
}

/* The defaults that depend on the environment. */
static int
env_defaults(struct cfg_ld *l)
{
	struct cfg *c = l->c;
	const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	const char *env = getenv("SKILLBOX_SKILLS");
	unsigned n;

	if (c->src[cfg_find_key("skills")] == NULL) {
		n = cfg_default_skill_dirs(l->a, c->skills, CFG_MAX_DIRS);
		if (n == 0)
			return -E_NOMEM;
		if (n > CFG_MAX_DIRS) {
			snprintf(l->err, l->errlen, "$SKILLBOX_SKILLS: more "
			    "than %d folders", CFG_MAX_DIRS);
			return -E_INVAL;
		}
		c->nskills = n;
		if (env != NULL && strspn(env, ":") != strlen(env))
			cfg_set_src(c, "skills", "$SKILLBOX_SKILLS");
	}
	if (c->src[cfg_find_key("state_dir")] == NULL) {
		if (xdg != NULL && xdg[0] == '/')
			c->state_dir = arena_printf(l->a, "%s/skillbox", xdg);
		else if (home != NULL && home[0] == '/' && geteuid() != 0)
			c->state_dir = arena_printf(l->a,
			    "%s/.local/state/skillbox", home);
		if (c->state_dir == NULL)
			return -E_NOMEM;
	}
	if (HAVE_EVAL && c->cache.on && c->cache.dir == NULL &&
	    (c->cache.dir = arena_printf(l->a, "%s/cache", c->state_dir)) ==
	    NULL)
		return -E_NOMEM;
	if (HAVE_EVAL && c->cache.max == 0)
		c->cache.max = 4u << 20;
	if (c->src[cfg_find_key("workspace")] == NULL &&
	    (c->workspace = arena_printf(l->a, "%s/workspace",
	    c->state_dir)) == NULL)
		return -E_NOMEM;
	return 0;
}

/* see cfg.h */
void
cfg_defaults(struct cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->provider = "offline";
	c->anthropic_version = "2023-06-01";
	c->skills[0] = "/usr/share/skillbox/skills";
	c->skills[1] = "/etc/skillbox/skills";
	c->nskills = 2;
	c->state_dir = "/var/lib/skillbox";
	c->workspace = "/var/lib/skillbox/workspace";
	c->handoffs_all = 1;
	c->limits.turns = 20;
	c->limits.time_s = 300;
	c->limits.tool_timeout_s = 30;
	c->limits.output_cap = 32u << 10;
	c->limits.workspace = 64u << 20;
	c->limits.context_window = 128000;
	c->limits.compact_after = 40;
	c->limits.connect_s = 10;
	c->limits.first_byte_s = 120;
	c->limits.idle_s = 60;
	c->limits.retries = 3;
	if (HAVE_ORCH) {
		c->limits.depth = 3;
		c->limits.steps = 12;
		c->limits.step_errors = 3;
		c->limits.plans = 3;
		c->limits.parallel = 4;
	}
	c->serve.listen = "127.0.0.1:8080";
	c->serve.max_conns = 64;
	c->jobs.max_parallel = 1;
	c->jobs.every_s = 60;
	c->jobs.retries = 2;
	c->jobs.backoff_s = 60;
	c->jobs.compact_at = 64u << 10;
	c->mqtt.keepalive = 60;
	c->mqtt.root = "skillbox";
	c->mqtt.session_expiry = 86400;
	c->serve.max_turns = 2;
	c->serve.queue = 8;
	c->serve.head_max = 8u << 10;
	c->serve.header_s = 10;
	c->serve.body_max = 1u << 20;
	c->serve.idle_s = 30;
	if (HAVE_PERSIST) {
		c->persist.interval = 3600;
		c->persist.max = 4u << 20;
	}
}

/* see cfg.h */
unsigned
cfg_default_skill_dirs(struct arena *a, const char **out, unsigned max)
{
	static const char *const sys[] = {
		"/usr/share/skillbox/skills", "/etc/skillbox/skills",
	};
	const char *env = getenv("SKILLBOX_SKILLS"), *home = getenv("HOME");
	const char *p, *q;
	unsigned n = 0, i;
	size_t len;

	for (p = env; p != NULL && *p != '\0'; p = *q == ':' ? q + 1 : q) {
		if ((q = strchr(p, ':')) == NULL)
			q = p + strlen(p);
		for (len = (size_t)(q - p); len > 1 && p[len - 1] == '/'; len--)
			;
		if (len == 0)
			continue;
		if (n < max && (out[n] = arena_strndup(a, p, len)) == NULL)
			return 0;
		n++;
	}
	if (n > 0)
		return n;
	for (i = 0; i < ARRAY_LEN(sys); i++, n++)
		if (n < max)
			out[n] = sys[i];
	if (home != NULL && *home != '\0') {
		if (n < max && (out[n] = arena_printf(a, "%s/.agents/skills",
		    home)) == NULL)
			return 0;
		n++;
	}
	if (n < max)
		out[n] = ".agents/skills";
	return n + 1;
}

/* see cfg.h */
const char *
cfg_find(const char *path)
{
	const char *env = getenv("SKILLBOX_CONFIG");

	if (path != NULL)
		return path;
	if (env != NULL && *env != '\0')
		return env;
	if (access("skillbox.yaml", F_OK) == 0)
		return "skillbox.yaml";
	if (access("/etc/skillbox/skillbox.yaml", F_OK) == 0)
		return "/etc/skillbox/skillbox.yaml";
	return NULL;
}

/* see crew.h */
int
cfg_read_yaml(struct cfg_ld *l, const char *path, struct fm_node **root)
{
	struct fm_error fe;
	char *text, why[32];
	size_t n;
	int e;

	if ((l->dir = file_dir(l, path)) == NULL)
		return -E_NOMEM;
	if ((e = cfg_read_file(l, path, CFG_FILE_MAX, &text, &n)) != 0)
		return e == -E_NOMEM ? e : cfg_bad(l, e, 0, "%s",
		    cfg_read_why(e, CFG_FILE_MAX, why, sizeof(why)));
	if ((e = fm_parse(&l->tmp, text, n, 1, root, &fe)) != 0)
		return e == -E_NOMEM ? e : cfg_bad(l, -E_PARSE, fe.line, "%s",
		    fe.msg);
	return 0;
}

static int
load_file(struct cfg_ld *l, const char *path)
{
	struct fm_node *root;
	int e;

	if ((l->c->file = arena_strdup(l->a, path)) == NULL)
		return -E_NOMEM;
	l->file = l->c->file;
	if ((e = cfg_read_yaml(l, path, &root)) != 0)
		return e;
	if (root->kind == FM_NULL)
		return 0;
	if (root->kind != FM_MAP)
		return cfg_bad(l, -E_INVAL, root->line, "the configuration "
		    "must be a map of keys");
	if ((e = walk(l, root, "")) != 0)
		return e;
	if (l->instr_line != 0 && l->agents_line != 0)
		return cfg_bad(l, -E_INVAL, MAX(l->instr_line, l->agents_line),
		    "give 'instructions' or 'agents_file', not both");
	if (HAVE_CREW && l->c->crew != NULL) {
		if (l->instr_line != 0 || l->agents_line != 0 ||
		    l->c->src[cfg_find_key("skills")] != NULL)
			return cfg_bad(l, -E_INVAL, 0, "a crew gives the "
			    "skills and the instructions: no 'skills', "
			    "'instructions' or 'agents_file' beside 'crew'");
		return crew_load(l, l->c->crew, 0);
	}
	return l->agents_line != 0 ? cfg_load_agents(l) : 0;
}

/* A path made real where it exists (symlinks, ".."), in l->tmp. */
static const char *
real(struct cfg_ld *l, const char *p)
{
	char buf[PATH_MAX];

	return p != NULL && realpath(p, buf) != NULL ?
	    arena_strdup(&l->tmp, buf) : p;
}

/* Is p the folder dir or below it? */
static int
beneath(const char *p, const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	return p != NULL && strncmp(p, dir, n) == 0 && (p[n] == '\0' ||
	    p[n] == '/' || (n == 1 && dir[0] == '/'));
}

/* The model writes the workspace: it may not hold what steers skillbox
 * (the next run would read what the model wrote), nor lie in a folder
 * of skills or commands. */
static int
check_workspace(struct cfg_ld *l)
{
	const struct cfg *c = l->c;
	const char *ws = real(l, c->workspace);
	const char *p[5 + CFG_MAX_DIRS + CFG_CREW_DIRS];
	const char *name[5 + CFG_MAX_DIRS + CFG_CREW_DIRS];
	unsigned n = 0, i, nwritten;

	if (ws == NULL)
		return 0;
	/* First what the model writes to (the workspace may not lie in
	 * them), then what it may not write to. */
	name[n] = "commands_dir", p[n++] = real(l, c->commands_dir);
	for (i = 0; i < c->nskills; i++)
		name[n] = "a skills folder", p[n++] = real(l, c->skills[i]);
	for (i = 0; i < c->ncrew_dirs; i++)	/* scripts run what is there */
		name[n] = "a crew's folder", p[n++] = c->crew_dirs[i];
	nwritten = n;
	name[n] = "the configuration file", p[n++] = real(l, l->file);
	name[n] = "state_dir", p[n++] = real(l, c->state_dir);
	name[n] = "ca_file", p[n++] = real(l, c->ca_file);
	name[n] = "agents_file", p[n++] = real(l, c->agents_file);
	for (i = 0; i < n; i++) {
		if (p[i] == NULL)
			continue;
		if (beneath(p[i], ws) || (i < nwritten && beneath(ws, p[i])))
			break;
	}
	if (i == n)
		return 0;
	l->file = cfg_source(c, "workspace");
	return cfg_bad(l, -E_INVAL, 0, "workspace %s %s %s (%s): the model "
	    "writes the workspace; give it a folder of its own", c->workspace,
	    beneath(p[i], ws) ? "holds" : "is inside", name[i], p[i]);
}


/* see cfg.h */
int
cfg_load(struct cfg *c, struct arena *a, const char *path, char *err,
    size_t errlen)
{
	struct cfg_ld l;
	const char *file = cfg_find(path);
	int e = 0;

	cfg_defaults(c);
	memset(&l, 0, sizeof(l));
	l.c = c;
	l.a = a;
	l.err = err;
	l.errlen = errlen;
	if (errlen > 0)
		err[0] = '\0';
	arena_init(&l.tmp, "cfg");
	if (file != NULL && crew_is_file(file)) {
		if ((l.file = c->file = c->crew = arena_strdup(a, file)) ==
		    NULL)
			e = -E_NOMEM;
		else if (!HAVE_CREW)
			e = cfg_bad(&l, -E_INVAL, 0, "a crew: not in this build "
			    "(CREW=0)");
		else
			e = crew_load(&l, file, 1);
		if (e != 0)
			goto out;
	} else if (file != NULL && (e = load_file(&l, file)) != 0)
		goto out;
	if ((e = env_overrides(&l)) != 0 || (e = env_defaults(&l)) != 0)
		goto out;
	if ((e = check_workspace(&l)) != 0 || (e = cfg_check_mqtt(&l)) != 0)
		goto out;
	if (strcmp(c->provider, "offline") != 0 && c->model == NULL) {
		if (l.provider_line == 0)
			l.file = cfg_source(c, "provider");
		e = cfg_bad(&l, -E_INVAL, l.provider_line, "provider '%s' "
		    "needs a model", c->provider);
	}
	/* No base_url: the provider's own (Ollama's on this host). */
	if (c->base_url == NULL && llm_proto_find(c->provider) != NULL)
		c->base_url = llm_proto_find(c->provider)->base_url;
out:
	if (e == -E_NOMEM && errlen > 0)
		snprintf(err, errlen, "%s: out of memory", file != NULL ? file :
		    "configuration");
	arena_reset(&l.tmp);
	return e;
}

/* see crew.h */
const char *
cfg_key_set(const struct cfg *c, const char *prefix, const char **src)
{
	size_t i, n = strlen(prefix);

	for (i = 0; i < ARRAY_LEN(keys); i++)
		if (strncmp(keys[i].name, prefix, n) == 0 && c->src[i] != NULL) {
			*src = c->src[i];
			return keys[i].name;
		}
	return NULL;
}

/* see cfg.h */
const char *
cfg_source(const struct cfg *c, const char *key)
{
	int i = cfg_find_key(key);

	if (i < 0 || keys[i].type == K_SECTION || keys[i].type == K_OFF)
		return NULL;
	return c->src[i] != NULL ? c->src[i] : "default";
}

/* see cfg.h */
const char *
cfg_api_key_env(const struct cfg *c)
{
	if (c->api_key_env != NULL)
		return c->api_key_env;
	if (strcmp(c->provider, "anthropic") == 0)
		return "ANTHROPIC_API_KEY";
	if (strcmp(c->provider, "openai") == 0 ||
	    strcmp(c->provider, "responses") == 0)
		return "OPENAI_API_KEY";
	return NULL;
}

/* see cfg.h */
int
cfg_key_check(const struct cfg *c, char *why, size_t n)
{
	const struct llm_proto *p = llm_proto_find(c->provider);
	const char *var = cfg_api_key_env(c);
	int own;

	if (p == NULL || var == NULL || cfg_api_key(c) != NULL)
		return 0;
	/* A server of one's own (LM Studio, vLLM) may need no key; the
	 * provider's own does, and so does a variable named for it. */
	own = c->base_url == NULL || strncmp(c->base_url, p->base_url,
	    strlen(p->base_url)) == 0 || c->api_key_env != NULL;
	snprintf(why, n, own ? "%s is not set: %s needs an API key (export "
	    "it, or name another variable in api_key_env:)" : "%s is not set: "
	    "no API key goes to %s", var, c->base_url ? c->base_url :
	    c->provider);
	return own ? -E_INVAL : -E_NOENT;
}

/* see cfg.h */
int
cfg_passwd_find(const char *path, const char *name, uid_t *uid, gid_t *gid)
{
	char buf[512];
	unsigned long id[2] = { 0, 0 };
	size_t nlen = strlen(name), col = 0, f = 0;
	ssize_t n, i;
	int fd, match = 1, r = -E_NOENT;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -E_NOENT;
	/* One pass, a byte at a time, so a line of any length costs no
	 * buffer: field f of the current line, col bytes into it. The
	 * fields are name:passwd:uid:gid:gecos:dir:shell, as musl's
	 * getpwent reads them: uid and gid are digits only, and a line
	 * without all seven fields is skipped. */
	while (r != 0 && (n = read(fd, buf, sizeof(buf))) > 0)
		for (i = 0; i < n && r != 0; i++) {
			char ch = buf[i];

			if (ch == '\n') {
				if (f == 6 && match) {
					*uid = (uid_t)id[0];
					*gid = (gid_t)id[1];
					r = 0;
				}
				f = col = 0;
				match = 1;
				id[0] = id[1] = 0;
			} else if (ch == ':' && f < 6 && (f > 0 || col > 0)) {
				if (f == 0 && col != nlen)
					match = 0;
				f++;
				col = 0;
			} else if (f == 0) {
				if (col >= nlen || name[col] != ch)
					match = 0;
				col++;
			} else if (f == 2 || f == 3) {
				if (ch >= '0' && ch <= '9')
					id[f - 2] = id[f - 2] * 10 +
					    (unsigned)(ch - '0');
				else
					f = 7;	/* not a number: skip the line */
			}
		}
	/* The last line may lack its newline. */
	if (r != 0 && f == 6 && match) {
		*uid = (uid_t)id[0];
		*gid = (gid_t)id[1];
		r = 0;
	}
	close(fd);
	return r;
}

/* see cfg.h */
int
cfg_script_user(const struct cfg *c, uid_t *uid, gid_t *gid)
{
	const char *u = c->sandbox.user;
	uid_t pu;
	gid_t pg;
	unsigned long v;
	char *end;

	*uid = *gid = SBX_NOBODY;
	if (u == NULL)
		return 0;
	v = strtoul(u, &end, 10);
	if (end != u && (*end == '\0' || *end == ':')) {
		*uid = (uid_t)v;
		*gid = *end == ':' ? (gid_t)strtoul(end + 1, NULL, 10) :
		    (gid_t)v;
	} else if (cfg_passwd_find("/etc/passwd", u, &pu, &pg) == 0) {
		*uid = pu;
		*gid = pg;
	} else
		return -E_NOENT;
	return 0;
}

/* see cfg.h */
const char *
cfg_secret_is_key(const struct cfg *c)
{
	const char *k = cfg_api_key_env(c);
	unsigned i;

	for (i = 0; k != NULL && i < c->sandbox.nsecrets; i++)
		if (strcmp(c->sandbox.secrets[i], k) == 0)
			return k;
	return NULL;
}

/* see cfg.h */
const char *
cfg_api_key(const struct cfg *c)
{
	const char *var = cfg_api_key_env(c), *k;

	if (var == NULL || (k = getenv(var)) == NULL || *k == '\0')
		return NULL;
	return k;
}

/* see cfg.h */
const struct cfg_price *
cfg_price(const struct cfg *c, const char *model)
{
	unsigned i;

	for (i = 0; model != NULL && i < c->nprices; i++)
		if (strcmp(c->prices[i].model, model) == 0)
			return &c->prices[i];
	return NULL;
}
