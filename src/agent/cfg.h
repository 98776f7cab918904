/* cfg.h - skillbox.yaml: the configuration of one installation.
 *
 * Found through -c FILE, $SKILLBOX_CONFIG, ./skillbox.yaml, then
 * /etc/skillbox/skillbox.yaml; none found = the built-in defaults (the
 * offline provider). An unknown key or a bad value is an error naming
 * file:line. Strings live in the arena given to cfg_load. A relative path
 * in the file (skills, state_dir, workspace, commands_dir, agents_file,
 * ca_file, persist.dir) is taken from the file's folder. Defaults in brackets.
 *
 *	provider: openai | responses | anthropic | ollama | offline  [offline]
 *	model: NAME                   # needed by every provider but offline
 *	base_url: URL                 # http:// or https:// [the provider's]
 *	api_key_env: VAR              # the key itself is never in the file
 *	                              # [OPENAI_API_KEY, ANTHROPIC_API_KEY]
 *	anthropic_version: "2023-06-01"
 *	anthropic_bearer: false
 *	ca_file: PATH                 # [the system bundle]
 *	memory: 2M                    # budget (the command line wins)
 *	skills: [DIR, ...]            # skills folders, later ones override
 *	                              # [as `skills list`: $SKILLBOX_SKILLS,
 *	                              # else /usr/share/skillbox/skills,
 *	                              # /etc/skillbox/skills, ~/.agents/skills,
 *	                              # .agents/skills]
 *	state_dir: DIR                # sessions [$XDG_STATE_HOME/skillbox,
 *	                              # else ~/.local/state/skillbox when not
 *	                              # root, else /var/lib/skillbox]
 *	workspace: DIR                # files the tools may write
 *	                              # [STATE_DIR/workspace]
 *	commands_dir: DIR             # user .command.md commands [none]
 *	crew: PATH                    # CREW=1 builds: a .skilled_crew.yaml
 *	                              # gives the skills, instructions,
 *	                              # commands and MCP servers (below)
 *	instructions: TEXT            # entry agent's instructions, or
 *	agents_file: PATH             # an AGENTS.md with front-matter (name,
 *	                              # description, model, skill_mode); one
 *	                              # of the two at most
 *	skill_mode: handoff | inline  # how the entry agent uses skills
 *	handoffs: all | none | [from->to, ...]   # skill-to-skill [all]
 *	approve: [NAME, ...]          # tool calls that wait for a person:
 *	                              # a tool, skill or agent name, `*` any
 *	                              # characters (hook.h) [none]
 *	hooks:                        # HOOKS=1 builds; at most 32 (hook.h)
 *	  - { event: pre_tool_use, match: NAME, command: LINE | url: URL |
 *	      pending: true, timeout: 10 }
 *	mcp_servers:                  # MCP=1 builds: MCP servers' tools;
 *	  NAME: { command: [PROG, ARG...], agents: [entry], ... }  # mcp_spec.h
 *	limits:
 *	  turns: 20                   # model calls per user turn, 1..1000
 *	  time: 300                   # seconds per user turn
 *	  tokens: 0                   # per session, in + out; 0: no limit
 *	  budget: 0                   # money per session, from prices;
 *	                              # 0: no limit
 *	  tool_timeout: 30            # seconds
 *	  output_cap: 32k             # bytes of tool output kept
 *	  workspace: 64M              # bytes the workspace may grow by in
 *	                              # one turn (then the turn stops)
 *	  context_window: 128000      # tokens; compaction near it
 *	  compact_after: 40           # items before compaction
 *	  connect_timeout: 10         # seconds
 *	  first_byte_timeout: 120
 *	  idle_timeout: 60
 *	  retries: 3                  # extra attempts on 429/5xx
 *	  depth: 3                    # ORCH=1 builds: agents below the
 *	                              # entry agent, 1..3 (handoffs, steps)
 *	  steps: 12                   # ORCH: model calls of a loop session
 *	  step_errors: 3              # ORCH: failed steps before it stops
 *	  plans: 3                    # ORCH: SOP plans, then function calls
 *	  parallel: 4                 # ORCH: plan steps at once, 1..8
 *	cache:                        # EVAL=1 builds: model replies kept
 *	  dir: DIR                    # on disk, reused for the same request
 *	                              # [STATE_DIR/cache]; on when the
 *	  max: 4M                     # section is there; LRU beyond max
 *	                              # (64k..1G); $SKILLBOX_NO_CACHE=1 or
 *	                              # --no-cache: off for one run
 *	prices:                       # per million tokens
 *	  MODEL: { input: 0.15, output: 0.60 }
 *	sandbox:
 *	  allow: [Read, Bash, ...]    # the most a skill may get (narrows);
 *	                              # Read Grep Glob LS Write Edit WebFetch
 *	                              # WebSearch Fetch Bash Terminal Bash(x:*)
 *	                              # UnixSocket
 *	  deny: [WebFetch, ...]       # never (deny wins)
 *	  require: [landlock, seccomp, ...]   # fail closed without; rlimit
 *	                              # nnp landlock landlock-net netns seccomp
 *	                              # seccomp-net seccomp-unix userdrop
 *	                              # privtmp env, or all
 *	  user: nobody                # when root, scripts run as this user
 *	                              # (or uid) [65534]; root: as root
 *	  secrets: [VAR, ...]         # env passed to scripts
 *	create_skill: false           # the create_skill tool: true (new
 *	                              # skills wait for `skills enable`) or
 *	                              # trusted (on at once)
 *	serve:                        # skillbox serve
 *	  listen: 127.0.0.1:8080      # HOST:PORT or [V6]:PORT
 *	  tokens: [HASH, ...]         # SHA-256 of each bearer token, maybe
 *	                              # "HASH skill skill" to limit it; none:
 *	                              # no auth, loopback only
 *	  cors_origin: URL            # [no CORS]
 *	  hosts: [NAME, ...]          # more names the Host header may
 *	                              # carry [the listen address,
 *	                              # localhost, 127.0.0.1, [::1]]
 *	  max_connections: 64
 *	  max_turns: 2                # turns at once; more wait in a
 *	  queue: 8                    # queue of this many, then 503
 *	  head_max: 8k                # request head bytes (to 16k)
 *	  header_timeout: 10          # seconds to send the head
 *	  body_max: 1M                # request body bytes (413 above)
 *	  idle_timeout: 30            # seconds a kept-alive connection waits
 *	  turn_memory: SIZE           # each turn's budget [what the server
 *	                              # leaves, shared by max_turns]
 *	  tls_cert: PATH              # HTTPS with this PEM chain and
 *	  tls_key: PATH               # this key (EC or RSA)
 *	  log: stderr                 # or syslog: one line per request
 *	persist:                      # PERSIST=1 builds: sessions kept on
 *	  dir: /overlay/skillbox      # flash (persist.h); off when no dir
 *	  interval: 3600              # seconds between serve's syncs, 1..
 *	                              # 604800 (skillbox state sync: cron)
 *	  max: 4M                     # bytes kept there: the newest sessions
 *	                              # that fit, 4k..1G
 *	jobs:                         # the job board (JOBS builds)
 *	  max_parallel: 1             # run-due: jobs at once [--max]
 *	  every: 60                   # seconds between serve's run-due; 0:
 *	                              # none (cron or a timer runs it)
 *	  retries: 2                  # runs after a failed one [--tries]
 *	  backoff: 60                 # seconds before a retry, doubling
 *	  compact_at: 64k             # rewrite the journal above this size
 *	mqtt:                         # a fleet: serve joins an MQTT broker
 *	  broker: mqtts://HOST:8883   # or mqtt://HOST[:1883]; none: no fleet
 *	  ca: PATH                    # mqtts: PEM file or folder [ca_file,
 *	                              # else the system bundle]
 *	  cert: PATH                  # mqtts: a client certificate and its
 *	  key: PATH                   # key (both or neither)
 *	  username: NAME
 *	  password_file: PATH         # or password_env: VAR; never the
 *	                              # password itself (read at load)
 *	  client_id: NAME             # [A-Za-z0-9_-]{1,64}, not group or
 *	                              # queue [the host name, else the first
 *	                              # 12 hex digits of /etc/machine-id]
 *	  keepalive: 60               # seconds, 5..3600
 *	  root: skillbox              # topics live under ROOT/
 *	  prefix: ROOT/CLIENT_ID      # the device's own topics
 *	  groups: [NAME, ...]         # ROOT/group/NAME/jobs, at most 16
 *	  queues: [NAME, ...]         # $share/NAME/ROOT/queue/NAME (MQTT 5)
 *	  version: auto               # auto (5, else 3.1.1), 5 or 3.1.1
 *	  session_expiry: 86400       # seconds the broker keeps the session
 *
 * The workspace may not hold the configuration, the state folder, the
 * CA file, a skills folder, a crew's folder or the commands folder, nor
 * lie inside a skills, crew or commands folder: the model writes there.
 *
 * A .skilled_crew.yaml (version "1.x") names agents, each with an
 * instructionsPath (an AGENTS.md), skills ({name, folderPath}) and
 * mcp_servers ({filePath} of a JSON file: name, type stdio, command,
 * args, env {VAR: value}, cwd); entryPointAgent (else the first agent)
 * is the entry agent, with its instructions. Every agent's skills are
 * loaded (at most 16 folders), another agent's MCP servers go to its
 * skills' agents; commands ({name, filePath}) are .command.md files.
 * Not run: other agents' instructions, codeWorkerPath (an error on the
 * entry agent), script_runtime container (scripts run in the sandbox).
 * A folder that holds a crew's skills/ folder (DIR of DIR/skills/NAME,
 * made real; never / nor $HOME) is the crew's own: its scripts and MCP
 * servers may read and run what is there (crew_dirs), never write it.
 * Given as the configuration itself (-c X.skilled_crew.yaml), the model
 * is $SKILLET_MODEL_RUNNER, else the AGENTS.md front-matter's, else
 * openai/gpt-4.1-nano: "openai/M" is provider openai, model M, at
 * $OPENAI_BASE_URL if set; "lmstudio/M" the same at $LMSTUDIO_BASE_URL
 *  [http://localhost:1234/v1]. Under crew: in a skillbox.yaml, that
 * file's provider and model rule.
 *
 * The environment wins over the file: $SKILLBOX_PROVIDER, $SKILLBOX_MODEL
 * and $SKILLBOX_BASE_URL (checked as the keys are), and a model named in
 * the agents_file front-matter wins over `model:` in the file.
 */
#ifndef CFG_H
#define CFG_H

#include <sys/types.h>

#include "base/arena.h"
#include "base/base.h"

struct hook;
struct mcp_server;

#define CFG_MAX_DIRS	16
#define CFG_MAX_LIST	16
#define CFG_MAX_PRICES	16
#define CFG_CREW_DIRS	4	/* folders holding a crew's skills/ */
#define CFG_MAX_KEYS	110	/* keys with a source (cfg_source) */
#define CFG_FILE_MAX	(256u << 10)	/* skillbox.yaml */
#define CFG_AGENTS_MAX	(64u << 10)	/* agents_file */

struct cfg_price {
	const char	*model;
	double		 input, output;	/* per million tokens */
};

struct cfg {
	const char	*file;		/* where it came from, NULL: defaults */
	const char	*provider;	/* "offline" when none */
	const char	*model;
	const char	*base_url;
	const char	*api_key_env;
	const char	*anthropic_version;
	int		 anthropic_bearer;
	const char	*ca_file;
	size_t		 memory;	/* 0: not set */
	const char	*skills[CFG_MAX_DIRS];
	unsigned	 nskills;
	const char	*state_dir;
	const char	*workspace;
	const char	*commands_dir;
	const char	*instructions;	/* inline, or read from agents_file */
	const char	*agents_file;
	int		 skill_inline;	/* skill_mode: inline */
	int		 handoffs_all;	/* handoffs: all (default) */
	const char	*handoff_pairs[CFG_MAX_LIST];	/* "from->to" */
	unsigned	 nhandoff_pairs;
	const char	*approve[CFG_MAX_LIST];
	unsigned	 napprove;
	const struct hook *hooks;
	unsigned	 nhooks;
	const struct mcp_server *mcp;	/* MCP=1 builds (mcp_spec.h) */
	unsigned	 nmcp;
	struct {
		unsigned	turns, time_s, tool_timeout_s, compact_after;
		unsigned long	tokens, context_window;
		double		budget;
		size_t		output_cap;
		size_t		workspace;
		unsigned	connect_s, first_byte_s, idle_s, retries;
		unsigned	depth;		/* ORCH: agents below entry */
		unsigned	steps, step_errors, plans;	/* ORCH */
		unsigned	parallel;	/* ORCH: plan steps at once */
	}		 limits;
	struct {
		int		 on;		/* the section is there */
		const char	*dir;
		size_t		 max;
	}		 cache;		/* EVAL */
	struct cfg_price prices[CFG_MAX_PRICES];
	unsigned	 nprices;
	struct {
		const char	*allow[CFG_MAX_LIST];
		unsigned	 nallow;	/* 0: no narrowing */
		const char	*deny[CFG_MAX_LIST];
		unsigned	 ndeny;
		const char	*require[CFG_MAX_LIST];
		unsigned	 nrequire;
		const char	*user;
		const char	*secrets[CFG_MAX_LIST];
		unsigned	 nsecrets;
	}		 sandbox;
	int		 create_skill;	/* 0 false, 1 true, 2 trusted */
	struct {
		unsigned	 max_parallel, retries, backoff_s;
		size_t		 compact_at;
		unsigned	 every_s;	/* serve runs run-due; 0 never */
	}		 jobs;
	struct {
		const char	*listen;
		const char	*tokens[CFG_MAX_LIST];	/* "HEX64 [skill..]" */
		unsigned	 ntokens;
		const char	*cors_origin;
		const char	*hosts[CFG_MAX_LIST];	/* Host names */
		unsigned	 nhosts;
		unsigned	 max_conns, max_turns, queue;
		size_t		 head_max, body_max, turn_memory;
		unsigned	 header_s, idle_s;
		const char	*tls_cert, *tls_key;
		int		 syslog;
	}		 serve;
	struct {
		const char	*dir;	/* NULL: off */
		unsigned	 interval;
		size_t		 max;
	}		 persist;
	struct cfg_mqtt {
		const char	*broker;	/* NULL: no fleet */
		const char	*ca, *cert, *key;
		const char	*username;
		const char	*password_file, *password_env;
		const char	*pass;		/* the file's, read at load */
		size_t		 pass_len;
		const char	*client_id, *root, *prefix;
		const char	*groups[CFG_MAX_LIST];
		unsigned	 ngroups;
		const char	*queues[CFG_MAX_LIST];
		unsigned	 nqueues;
		unsigned	 keepalive;
		unsigned	 version;	/* 0 auto, 4 (3.1.1) or 5 */
		unsigned long	 session_expiry;
	}		 mqtt;
	const char	*src[CFG_MAX_KEYS];	/* see cfg_source */
	struct {
		const char	*name, *path;
	}		 cmds[CFG_MAX_LIST];	/* a crew's .command.md files */
	unsigned	 ncmds;
	const char	*crew;		/* CREW: the .skilled_crew.yaml */
	struct {
		const char	*skill, *agent, *text;
	}		 roles[CFG_MAX_DIRS];	/* other crew agents' */
	unsigned	 nroles;		/* instructions, by skill */
	const char	*crew_dirs[CFG_CREW_DIRS];	/* a crew's own folders,
					 * which its scripts read and run */
	unsigned	 ncrew_dirs;
};

/* The defaults, with no file and no environment: the skills folders
 * /usr/share/skillbox/skills and /etc/skillbox/skills, state_dir
 * /var/lib/skillbox; cfg_load puts the ones that depend on the
 * environment in their place. */
void	cfg_defaults(struct cfg *c);

/* The default skills folders, as `skills list` finds them (see above),
 * copied into `a`. Stores at most `max` and returns how many there are
 * (more than max: some did not fit); 0 only when out of memory. */
unsigned cfg_default_skill_dirs(struct arena *a, const char **out,
	    unsigned max);

/* The file cfg_load would read: `path`, else $SKILLBOX_CONFIG, else the
 * first of ./skillbox.yaml and /etc/skillbox/skillbox.yaml that exists;
 * NULL when none (defaults). Not a copy. */
const char *cfg_find(const char *path);

/* Find and load the configuration (cfg_find); none found is not an error
 * (defaults, c->file NULL) unless `path` or $SKILLBOX_CONFIG named one.
 * Returns 0, or with "file:line: message" (or "file: message") in err:
 * -E_NOENT (a named file is missing), -E_IO, -E_LIMIT (over CFG_FILE_MAX
 * or CFG_AGENTS_MAX), -E_PARSE (not YAML), -E_INVAL (an unknown key or a
 * bad value); -E_NOMEM. Unknown agents_file front-matter keys are only
 * warned about. */
int	cfg_load(struct cfg *c, struct arena *a, const char *path, char *err,
	    size_t errlen);

/* Where a key's value came from ("limits.turns"): the config file, the
 * agents_file, "$SKILLBOX_MODEL" and the like, or "default"; NULL for a
 * name that is not a key. */
const char *cfg_source(const struct cfg *c, const char *key);

/* The environment variable that holds the API key: api_key_env, else
 * OPENAI_API_KEY (openai, responses) or ANTHROPIC_API_KEY (anthropic);
 * NULL for ollama and offline. */
const char *cfg_api_key_env(const struct cfg *c);

/* Is the API key there before a request is sent? 0: set, or none needed
 * (ollama, offline). Else the message in why, naming the variable to set:
 * -E_INVAL when the key is needed (the provider's own server, or
 * api_key_env names the variable), -E_NOENT when the server may do
 * without one (base_url a server of one's own: a warning). */
int	cfg_key_check(const struct cfg *c, char *why, size_t n);

/* The entry of sandbox.secrets that hands the model's own API key to every
 * script, or NULL. */
const char *cfg_secret_is_key(const struct cfg *c);

/* The user skill scripts run as when skillbox runs as root: sandbox.user
 * (a name from the user database, or UID[:GID]), else SBX_NOBODY. uid 0
 * means running them as root, asked for. Returns 0 or -E_NOENT (no such
 * user). */
int	cfg_script_user(const struct cfg *c, uid_t *uid, gid_t *gid);

/* The user NAME in the passwd file PATH (/etc/passwd): its uid and gid, read
 * the way musl's getpwnam reads the file (the first line whose name matches,
 * all seven fields present, uid and gid in decimal digits). No NSS, no nscd.
 * Returns 0, or -E_NOENT (no such user, or PATH unreadable). */
int	cfg_passwd_find(const char *path, const char *name, uid_t *uid,
	    gid_t *gid);

/* The API key from that variable, or NULL when unset or empty. */
const char *cfg_api_key(const struct cfg *c);

/* A name of the fleet: a client id, group or queue, [A-Za-z0-9_-]{1,64}. */
int	cfg_mqtt_name_ok(const char *s);

/* The MQTT session and link options of c->mqtt (both the device in serve
 * and `skillbox fleet` connect so): persistent session (clean 0), no will,
 * no max_in (the caller's), the password from password_file or
 * password_env. Strings are c's (or the environment's). 0, or -E_INVAL
 * with why: no broker, password_env not set. */
struct mqtt_opts;
struct mqtt_link_opts;
int	cfg_mqtt_opts(const struct cfg *c, struct mqtt_opts *o,
	    struct mqtt_link_opts *lo, char *why, size_t n);

/* Price of a model (NULL when unknown). */
const struct cfg_price *cfg_price(const struct cfg *c, const char *model);

#endif
