/* test_cfg.c - skillbox.yaml: defaults, every key, relative paths, the
 * agents file, the environment, errors with file:line, out of memory.
 * Runs from the top of the tree (tests/run does). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/cfg.h"
#include "base/log.h"
#include "net/mqtt.h"
#include "unit.h"
#include "config.h"

#define D	"tests/data/config/"

static char err[512];

static void
clean_env(void)
{
	static const char *const v[] = {
		"SKILLBOX_CONFIG", "SKILLBOX_MODEL", "SKILLBOX_PROVIDER",
		"SKILLBOX_BASE_URL", "SKILLBOX_SKILLS", "TEST_LLM_KEY",
		"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "XDG_STATE_HOME",
	};
	size_t i;

	for (i = 0; i < ARRAY_LEN(v); i++)
		unsetenv(v[i]);
}

static int
load(struct cfg *c, const char *path)
{
	err[0] = '\0';
	return cfg_load(c, &t_arena, path, err, sizeof(err));
}

/* An absolute path under tests/data/config. */
static const char *
abs_path(const char *rel)
{
	char cwd[1024];

	if (getcwd(cwd, sizeof(cwd)) == NULL)
		return "?";
	return arena_printf(&t_arena, "%s/" D "%s", cwd, rel);
}

static void
defaults(void)
{
	struct cfg c;

	clean_env();
	cfg_defaults(&c);
	T_EQS(c.provider, "offline");
	T(c.model == NULL && c.file == NULL && c.instructions == NULL);
	T_EQS(c.anthropic_version, "2023-06-01");
	T(c.handoffs_all && !c.skill_inline && !c.create_skill);
	T_EQI(c.limits.turns, 20);
	T_EQI(c.limits.time_s, 300);
	T_EQI(c.limits.tokens, 0);
	T(c.limits.budget == 0);
	T_EQI(c.limits.tool_timeout_s, 30);
	T_EQI(c.limits.output_cap, 32768);
	T_EQI(c.limits.context_window, 128000);
	T_EQI(c.limits.compact_after, 40);
	T_EQI(c.limits.connect_s, 10);
	T_EQI(c.limits.first_byte_s, 120);
	T_EQI(c.limits.idle_s, 60);
	T_EQI(c.limits.retries, 3);
	T_EQS(c.state_dir, "/var/lib/skillbox");
	T_EQS(cfg_source(&c, "limits.turns"), "default");
	T(cfg_source(&c, "limits") == NULL);
	T(cfg_source(&c, "nope") == NULL);

	/* An empty file: defaults, with the file named. */
	T_EQI(load(&c, D "empty.yaml"), 0);
	T_EQS(c.file, D "empty.yaml");
	T_EQS(c.provider, "offline");
	T_EQS(cfg_source(&c, "provider"), "default");
}

static void
env_paths(void)
{
	struct cfg c;
	const char *dirs[2], *home = getenv("HOME");

	clean_env();
	if (home != NULL)
		home = arena_strdup(&t_arena, home);
	setenv("XDG_STATE_HOME", "/xdg", 1);
	setenv("SKILLBOX_SKILLS", "/a::/b//:", 1);
	T_EQI(load(&c, D "empty.yaml"), 0);
	T_EQS(c.state_dir, "/xdg/skillbox");
	T_EQS(c.workspace, "/xdg/skillbox/workspace");
	T_EQI(c.nskills, 2);
	T_EQS(c.skills[0], "/a");
	T_EQS(c.skills[1], "/b");
	T_EQS(cfg_source(&c, "skills"), "$SKILLBOX_SKILLS");

	unsetenv("XDG_STATE_HOME");
	setenv("HOME", "/home/u", 1);
	T_EQI(load(&c, D "empty.yaml"), 0);
	T_EQS(c.state_dir, geteuid() != 0 ? "/home/u/.local/state/skillbox" :
	    "/var/lib/skillbox");

	/* As `skills list`: the system folders, ~ and the current one. */
	unsetenv("SKILLBOX_SKILLS");
	T_EQI(load(&c, D "empty.yaml"), 0);
	T_EQI(c.nskills, 4);
	T_EQS(c.skills[0], "/usr/share/skillbox/skills");
	T_EQS(c.skills[1], "/etc/skillbox/skills");
	T_EQS(c.skills[2], "/home/u/.agents/skills");
	T_EQS(c.skills[3], ".agents/skills");
	T_EQS(cfg_source(&c, "skills"), "default");

	/* More than fit: the count says so. */
	T_EQI(cfg_default_skill_dirs(&t_arena, dirs, 2), 4);
	T_EQS(dirs[1], "/etc/skillbox/skills");
	setenv("SKILLBOX_SKILLS", "/1:/2:/3", 1);
	T_EQI(cfg_default_skill_dirs(&t_arena, dirs, 2), 3);
	T_EQS(dirs[1], "/2");
	clean_env();
	if (home != NULL)
		setenv("HOME", home, 1);
	else
		unsetenv("HOME");
}

static void
full(void)
{
	struct cfg c;
	const char *f = D "full.yaml";

	clean_env();
	T_EQI(load(&c, f), 0);
	T_EQS(err, "");
	T_EQS(c.file, f);
	T_EQS(c.provider, "anthropic");
	T_EQS(c.model, "claude-test");
	T_EQS(c.base_url, "https://llm.example.com:8443");
	T_EQS(c.api_key_env, "TEST_LLM_KEY");
	T_EQS(c.anthropic_version, "2023-06-01");
	T(c.anthropic_bearer);
	T_EQS(c.ca_file, abs_path("certs/ca.pem"));
	T_EQI(c.memory, 4u << 20);
	T_EQI(c.nskills, 3);
	T_EQS(c.skills[0], "/usr/share/skillbox/skills");
	T_EQS(c.skills[1], abs_path("skills"));
	T_EQS(c.skills[2], abs_path("more/skills"));
	T_EQS(c.state_dir, abs_path("state"));
	T_EQS(c.workspace, "/tmp/ws");
	T_EQS(c.commands_dir, abs_path("commands"));
	T_EQS(c.instructions, "You are a router helper.\n");
	T(c.agents_file == NULL);
	T(c.skill_inline);
	T(!c.handoffs_all);
	T_EQI(c.nhandoff_pairs, 2);
	T_EQS(c.handoff_pairs[0], "disk-usage->net-check");
	T_EQS(c.handoff_pairs[1], "net-check->disk-usage");
	T_EQI(c.limits.turns, 12);
	T_EQI(c.limits.time_s, 600);
	T_EQI(c.limits.tokens, 200000);
	T(c.limits.budget == 1.5);
	T_EQI(c.limits.tool_timeout_s, 45);
	T_EQI(c.limits.output_cap, 65536);
	T_EQI(c.limits.context_window, 32000);
	T_EQI(c.limits.compact_after, 30);
	T_EQI(c.limits.connect_s, 5);
	T_EQI(c.limits.first_byte_s, 90);
	T_EQI(c.limits.idle_s, 30);
	T_EQI(c.limits.retries, 0);
	T_EQI(c.nprices, 2);
	T(cfg_price(&c, "claude-test") != NULL &&
	    cfg_price(&c, "claude-test")->output == 15);
	T(cfg_price(&c, "small") != NULL && cfg_price(&c, "small")->input ==
	    0.15 && cfg_price(&c, "small")->output == 0.6);
	T(cfg_price(&c, "other") == NULL && cfg_price(&c, NULL) == NULL);
	T_EQI(c.sandbox.nallow, 4);
	T_EQS(c.sandbox.allow[2], "Bash(git:*)");
	T_EQI(c.sandbox.ndeny, 1);
	T_EQS(c.sandbox.deny[0], "Write");
	T_EQI(c.sandbox.nrequire, 2);
	T_EQS(c.sandbox.require[1], "seccomp");
	T_EQS(c.sandbox.user, "nobody");
	T_EQI(c.sandbox.nsecrets, 2);
	T_EQS(c.sandbox.secrets[1], "HOME_ASSISTANT_TOKEN");
	T(c.create_skill);
	T_EQS(cfg_source(&c, "limits.retries"), f);
	T_EQS(cfg_source(&c, "sandbox.user"), f);
	T_EQS(cfg_source(&c, "instructions"), f);

	/* The key comes from the variable named, never from the file. */
	T_EQS(cfg_api_key_env(&c), "TEST_LLM_KEY");
	T(cfg_api_key(&c) == NULL);
	setenv("TEST_LLM_KEY", "", 1);
	T(cfg_api_key(&c) == NULL);
	setenv("TEST_LLM_KEY", "k-123", 1);
	T_EQS(cfg_api_key(&c), "k-123");
	clean_env();
}

static void
agents_file(void)
{
	struct cfg c;
	enum log_level lv = log_get_level();

	clean_env();
	log_set_level(LOG_ERR);		/* the unknown key "colour" warns */
	T_EQI(load(&c, D "sub/agents.yaml"), 0);
	log_set_level(lv);
	T_EQS(c.agents_file, abs_path("sub/AGENTS.md"));
	T_EQS(c.model, "from-agents");
	T_EQS(cfg_source(&c, "model"), c.agents_file);
	T_EQS(cfg_source(&c, "instructions"), c.agents_file);
	T(c.skill_inline);
	T_EQS(c.instructions, "Be brief. Use the skills.");
	T(!c.handoffs_all && c.nhandoff_pairs == 0);

	/* The environment wins over both. */
	setenv("SKILLBOX_MODEL", "from-env", 1);
	log_set_level(LOG_ERR);
	T_EQI(load(&c, D "sub/agents.yaml"), 0);
	log_set_level(lv);
	T_EQS(c.model, "from-env");
	T_EQS(cfg_source(&c, "model"), "$SKILLBOX_MODEL");
	clean_env();
}

static void
environment(void)
{
	struct cfg c;

	clean_env();
	setenv("SKILLBOX_PROVIDER", "ollama", 1);
	setenv("SKILLBOX_MODEL", "llama", 1);
	setenv("SKILLBOX_BASE_URL", "http://10.0.0.2:11434", 1);
	T_EQI(load(&c, D "full.yaml"), 0);
	T_EQS(c.provider, "ollama");
	T_EQS(c.model, "llama");
	T_EQS(c.base_url, "http://10.0.0.2:11434");
	T_EQS(cfg_source(&c, "provider"), "$SKILLBOX_PROVIDER");
	T_EQS(cfg_source(&c, "base_url"), "$SKILLBOX_BASE_URL");
	T_EQS(cfg_source(&c, "limits.turns"), D "full.yaml");

	setenv("SKILLBOX_PROVIDER", "gpt", 1);
	T_EQI(load(&c, D "full.yaml"), -E_INVAL);
	T_EQS(err, "$SKILLBOX_PROVIDER: 'provider' must be one of openai, "
	    "responses, anthropic, ollama, offline, not 'gpt'");
	setenv("SKILLBOX_PROVIDER", "openai", 1);
	setenv("SKILLBOX_BASE_URL", "10.0.0.2", 1);
	T_EQI(load(&c, D "empty.yaml"), -E_INVAL);
	T(strncmp(err, "$SKILLBOX_BASE_URL: 'base_url' must be", 38) == 0);

	/* A provider from the environment still needs a model. */
	unsetenv("SKILLBOX_MODEL");
	unsetenv("SKILLBOX_BASE_URL");
	T_EQI(load(&c, D "empty.yaml"), -E_INVAL);
	T_EQS(err, "$SKILLBOX_PROVIDER: provider 'openai' needs a model");
	clean_env();
}

static void
api_keys(void)
{
	struct cfg c;

	clean_env();
	cfg_defaults(&c);
	T(cfg_api_key_env(&c) == NULL && cfg_api_key(&c) == NULL);
	c.provider = "responses";
	T_EQS(cfg_api_key_env(&c), "OPENAI_API_KEY");
	setenv("OPENAI_API_KEY", "sk-1", 1);
	T_EQS(cfg_api_key(&c), "sk-1");
	c.provider = "anthropic";
	T_EQS(cfg_api_key_env(&c), "ANTHROPIC_API_KEY");
	T(cfg_api_key(&c) == NULL);
	c.provider = "ollama";
	T(cfg_api_key_env(&c) == NULL);
	clean_env();
}

/* Said before a request: needed for the provider's own server or a
 * named variable, maybe not for a server of one's own; never for ollama. */
static void
key_check(void)
{
	struct cfg c;
	char why[320];

	clean_env();
	cfg_defaults(&c);
	T_EQI(cfg_key_check(&c, why, sizeof(why)), 0);		/* offline */
	c.provider = "openai";
	c.base_url = "https://api.openai.com/v1";
	T_EQI(cfg_key_check(&c, why, sizeof(why)), -E_INVAL);
	T(strstr(why, "OPENAI_API_KEY is not set") == why);
	T(strstr(why, "api.openai.com/v1 needs an API key") != NULL);
	c.base_url = "http://127.0.0.1:8080";
	T_EQI(cfg_key_check(&c, why, sizeof(why)), -E_NOENT);
	c.api_key_env = "MY_KEY";
	T_EQI(cfg_key_check(&c, why, sizeof(why)), -E_INVAL);
	T(strstr(why, "MY_KEY is not set") == why);
	setenv("MY_KEY", "k", 1);
	T_EQI(cfg_key_check(&c, why, sizeof(why)), 0);
	unsetenv("MY_KEY");
	c.api_key_env = NULL;
	c.provider = "anthropic";
	c.base_url = "https://api.anthropic.com";
	T_EQI(cfg_key_check(&c, why, sizeof(why)), -E_INVAL);
	T(strstr(why, "ANTHROPIC_API_KEY") == why);
	c.provider = "ollama";
	c.base_url = "http://127.0.0.1:11434";
	T_EQI(cfg_key_check(&c, why, sizeof(why)), 0);
	/* No base_url: the provider's own; Ollama's on this host. */
	setenv("SKILLBOX_PROVIDER", "ollama", 1);
	setenv("SKILLBOX_MODEL", "qwen3:4b", 1);
	T_EQI(load(&c, D "empty.yaml"), 0);
	T_EQS(c.base_url, "http://127.0.0.1:11434");
	T_EQS(cfg_source(&c, "base_url"), "default");
	setenv("SKILLBOX_PROVIDER", "anthropic", 1);
	T_EQI(load(&c, D "empty.yaml"), 0);
	T_EQS(c.base_url, "https://api.anthropic.com");
	T_EQI(cfg_key_check(&c, why, sizeof(why)), -E_INVAL);
	clean_env();
}

/* skilled_crew's AGENTS.md may go on with a quoted value at column 0, as
 * js-yaml reads it: taken, with a warning; other bad YAML still fails. */
static void
agents_lax(void)
{
	char dir[] = "/tmp/skillbox-cfg.XXXXXX", *path;
	struct cfg c;
	int lv = log_get_level();

	clean_env();
	if (mkdtemp(dir) == NULL) {
		t_fail(__FILE__, __LINE__, "mkdtemp");
		return;
	}
	path = arena_printf(&t_arena, "%s/c.yaml", dir);
	t_put(dir, "c.yaml", "agents_file: A.md\n");
	t_put(dir, "A.md", "---\nname: o\ndescription: \"Routes posts: it "
	    "reads\nthem, and \\\"hands\\\" them on\"\nmodel: m1\n---\nBody.\n");
	log_set_level(LOG_ERR);
	T_EQI(load(&c, path), 0);
	T_EQS(c.model, "m1");
	T_EQS(c.instructions, "Body.");
	t_put(dir, "A.md", "---\nname: o\ndescription: 'it''s\nfine'\n"
	    "model: m2\n---\nB\n");
	T_EQI(load(&c, path), 0);
	T_EQS(c.model, "m2");
	t_put(dir, "A.md", "---\nname: o\ndescription: \"never closed\n"
	    "model: m3\n---\nB\n");
	T_EQI(load(&c, path), -E_PARSE);
	T(strstr(err, "A.md:3:") != NULL);
	log_set_level(lv);
	unlink(path);
	unlink(arena_printf(&t_arena, "%s/A.md", dir));
	rmdir(dir);
}

static void
search(void)
{
	struct cfg c;

	clean_env();
	setenv("SKILLBOX_CONFIG", D "full.yaml", 1);
	T_EQS(cfg_find(NULL), D "full.yaml");
	T_EQS(cfg_find("x.yaml"), "x.yaml");	/* -c wins */
	T_EQI(load(&c, NULL), 0);
	T_EQS(c.file, D "full.yaml");
	T_EQI(load(&c, D "empty.yaml"), 0);
	T_EQS(c.file, D "empty.yaml");

	/* A named file must exist. */
	setenv("SKILLBOX_CONFIG", D "missing.yaml", 1);
	T_EQI(load(&c, NULL), -E_NOENT);
	T_EQS(err, D "missing.yaml: no such file");
	T_EQI(load(&c, D "sub"), -E_IO);
	T_EQS(err, D "sub: not a regular file");
	clean_env();
}

static void
errors(void)
{
	struct cfg c;
	char small[12];

	clean_env();
	T_EQI(load(&c, D "errors/unknown-limit.yaml"), -E_INVAL);
	T_EQS(err, D "errors/unknown-limit.yaml:4: unknown key 'limits.turnz'");
	T_EQI(load(&c, D "errors/bad-turns.yaml"), -E_INVAL);
	T_EQS(err, D "errors/bad-turns.yaml:3: 'limits.turns' must be a whole "
	    "number from 1 to 1000, not '0'");
	T_EQI(load(&c, D "bad-yaml.yaml"), -E_PARSE);
	T(strncmp(err, D "bad-yaml.yaml:", strlen(D "bad-yaml.yaml:")) == 0);
	/* Short or no error buffers are fine. */
	T_EQI(cfg_load(&c, &t_arena, D "errors/bad-turns.yaml", small,
	    sizeof(small)), -E_INVAL);
	T_EQI(strlen(small), sizeof(small) - 1);
	T_EQI(cfg_load(&c, &t_arena, D "errors/bad-turns.yaml", NULL, 0),
	    -E_INVAL);
}

/* Any budget either loads or says "out of memory": never a crash. */
static void
out_of_memory(void)
{
	struct cfg c;
	struct arena_mark m;
	size_t lim;
	enum log_level lv = log_get_level();
	int e, nomem = 0, ok = 0;

	clean_env();
	log_set_level(LOG_ERR);
	for (lim = 1024; lim < 512 * 1024; lim += lim / 4) {
		m = arena_mark(&t_arena);
		mem_set_limit(mem_used() + lim);
		e = load(&c, D "sub/agents.yaml");
		mem_set_limit(0);
		if (e == -E_NOMEM)
			nomem++;
		else if (e == 0 && strcmp(c.model, "from-agents") == 0)
			ok++;
		else
			t_fail(__FILE__, __LINE__, "limit %zu: %d %s", lim, e,
			    err);
		arena_reset_to(&t_arena, m);
	}
	log_set_level(lv);
	T(nomem > 0 && ok > 0);
}

/* cfg_passwd_find reads the file as musl's getpwnam did (it replaced it). */
static void
passwd(void)
{
	const char *pw = "tests/data/passwd";
	char tmp[64], line[1400];
	uid_t u = 99;
	gid_t g = 99;
	FILE *f;

	T_EQI(cfg_passwd_find(pw, "root", &u, &g), 0);
	T_EQI(u, 0);
	T_EQI(g, 0);
	T_EQI(cfg_passwd_find(pw, "nobody", &u, &g), 0);
	T_EQI(u, 65534);
	T_EQI(g, 65534);
	T_EQI(cfg_passwd_find(pw, "daemon", &u, &g), 0);
	T_EQI(u, 1);
	T_EQI(g, 1);
	/* a uid that is not digits skips the line, not the file */
	T_EQI(cfg_passwd_find(pw, "bad-uid", &u, &g), 0);
	T_EQI(u, 40);
	T_EQI(g, 41);
	/* seven fields or the line does not count; the shell may be empty */
	T_EQI(cfg_passwd_find(pw, "short", &u, &g), 0);
	T_EQI(u, 8);
	T_EQI(cfg_passwd_find(pw, "empty-ids", &u, &g), 0);
	T_EQI(u, 0);
	T_EQI(g, 0);
	T_EQI(cfg_passwd_find(pw, "dup", &u, &g), 0);	/* the first */
	T_EQI(u, 100);
	T_EQI(cfg_passwd_find(pw, "colons", &u, &g), 0);
	T_EQI(u, 300);
	T_EQI(g, 301);
	T_EQI(cfg_passwd_find(pw, "wrap", &u, &g), 0);	/* 2^32 + 1 */
	T_EQI(u, 1);
	T_EQI(g, 2);
	T_EQI(cfg_passwd_find(pw, "last", &u, &g), 0);	/* no newline */
	T_EQI(u, 9);
	T_EQI(g, 10);
	/* whole names only, case and all */
	u = 99;
	T_EQI(cfg_passwd_find(pw, "roo", &u, &g), -E_NOENT);
	T_EQI(cfg_passwd_find(pw, "root2x", &u, &g), -E_NOENT);
	T_EQI(cfg_passwd_find(pw, "Root", &u, &g), -E_NOENT);
	T_EQI(cfg_passwd_find(pw, "", &u, &g), -E_NOENT);
	T_EQI(cfg_passwd_find(pw, "x", &u, &g), -E_NOENT);
	T_EQI(cfg_passwd_find(pw, "0", &u, &g), -E_NOENT);
	T_EQI(u, 99);
	T_EQI(cfg_passwd_find(pw, "root2", &u, &g), 0);
	T_EQI(u, 2);
	T_EQI(cfg_passwd_find("tests/data/no-such", "root", &u, &g),
	    -E_NOENT);
	/* lines longer than the read buffer, split across reads */
	snprintf(tmp, sizeof(tmp), "/tmp/skillbox-passwd.%d", (int)getpid());
	memset(line, 'g', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	if ((f = fopen(tmp, "w")) == NULL) {
		T(f != NULL);
		return;
	}
	fprintf(f, "long:x:1:1:%s:/:/bin/sh\n", line);
	fprintf(f, "%s:x:2:2::/:/bin/sh\n", line);
	fprintf(f, "after:x:3:4:%s:/:/bin/sh\n", line);
	fprintf(f, "tail:x:5:6::/:%s\n", line);
	fclose(f);
	T_EQI(cfg_passwd_find(tmp, "long", &u, &g), 0);
	T_EQI(u, 1);
	T_EQI(cfg_passwd_find(tmp, line, &u, &g), 0);
	T_EQI(u, 2);
	T_EQI(cfg_passwd_find(tmp, "after", &u, &g), 0);
	T_EQI(u, 3);
	T_EQI(g, 4);
	T_EQI(cfg_passwd_find(tmp, "tail", &u, &g), 0);
	T_EQI(u, 5);
	T_EQI(g, 6);
	T_EQI(cfg_passwd_find(tmp, "g", &u, &g), -E_NOENT);
	unlink(tmp);
}

/* A key of a feature left out is an error that names its switch; with
 * the feature in, the same file loads. */
static void
left_out(void)
{
	static const struct {
		const char	*yaml, *msg;
		int		 on;
	} k[] = {
		{ "limits:\n  depth: 2\n", "'limits.depth': not in this "
		    "build (ORCH=0)", HAVE_ORCH },
		{ "cache:\n  max: 1M\n", "'cache': not in this build "
		    "(EVAL=0)", HAVE_EVAL },
		{ "persist:\n  interval: 60\n", "'persist': not in this "
		    "build (PERSIST=0)", HAVE_PERSIST },
		{ "jobs:\n  retries: 1\n", "'jobs': not in this build "
		    "(JOBS=0)", HAVE_JOBS },
		{ "mcp_servers: []\n", "'mcp_servers': not in this build "
		    "(MCP=0)", HAVE_MCP },
		{ "crew: x.skilled_crew.yaml\n", "'crew': not in this build "
		    "(CREW=0)", HAVE_CREW },
		{ "mqtt:\n  broker: mqtt://x\n", "'mqtt': not in this build "
		    "(FLEET=0)", HAVE_FLEET },
	};
	char dir[] = "/tmp/skillbox-cfg.XXXXXX", *path;
	struct cfg c;
	size_t i;

	clean_env();
	if (mkdtemp(dir) == NULL) {
		t_fail(__FILE__, __LINE__, "mkdtemp");
		return;
	}
	path = arena_printf(&t_arena, "%s/c.yaml", dir);
	for (i = 0; i < ARRAY_LEN(k); i++) {
		t_put(dir, "c.yaml", k[i].yaml);
		if (k[i].on)
			T(load(&c, path) == 0 || strstr(err, "not in this "
			    "build") == NULL);
		else {
			T_EQI(load(&c, path), -E_INVAL);
			T(strstr(err, k[i].msg) != NULL);
		}
	}
	unlink(path);
	rmdir(dir);
}

/* mqtt: the fleet's section: defaults, checks, the password, the
 * options both the device and the controller connect with. */
static void
mqtt(void)
{
	static const struct {
		const char	*yaml, *msg;
	} bad[] = {
		{ "mqtt:\n  broker: http://x\n", "'mqtt.broker' must be a "
		    "broker URL" },
		{ "mqtt:\n  broker: mqtt://x/path\n", "'mqtt.broker' must" },
		{ "mqtt:\n  client_id: dev1\n", "'mqtt.client_id' needs "
		    "'mqtt.broker'" },
		{ "mqtt:\n  broker: mqtt://x\n  client_id: a.b\n",
		    "'mqtt.client_id' must be a name" },
		{ "mqtt:\n  broker: mqtt://x\n  client_id: group\n",
		    "'mqtt.client_id' must be a name" },
		{ "mqtt:\n  broker: mqtt://x\n  groups: [ok, 'no/slash']\n",
		    "'mqtt.groups' must be a list of names" },
		{ "mqtt:\n  broker: mqtt://x\n  keepalive: 2\n",
		    "'mqtt.keepalive' must be a whole number from 5 to 3600" },
		{ "mqtt:\n  broker: mqtt://x\n  version: 4\n",
		    "'mqtt.version' must be auto, 5 or 3.1.1" },
		{ "mqtt:\n  broker: mqtt://x\n  root: a/+/b\n",
		    "'mqtt.root' must be an MQTT topic" },
		{ "mqtt:\n  broker: mqtt://x\n  ca: ca.pem\n",
		    "are for an mqtts:// broker" },
		{ "mqtt:\n  broker: mqtts://x\n  cert: c.pem\n",
		    "'mqtt.cert' and 'mqtt.key' go together" },
		{ "mqtt:\n  broker: mqtt://x\n  username: u\n  "
		    "password_file: p\n  password_env: P\n", "not both" },
		{ "mqtt:\n  broker: mqtt://x\n  password_env: P\n",
		    "a password needs 'mqtt.username'" },
		{ "mqtt:\n  broker: mqtt://x\n  username: u\n  "
		    "password_file: nope\n", "mqtt.password_file" },
		{ "mqtt:\n  broker: mqtt://x\n  version: 3.1.1\n  "
		    "queues: [q]\n", "need MQTT 5" },
	};
	char dir[] = "/tmp/skillbox-cfg.XXXXXX", *path;
	struct mqtt_link_opts lo;
	struct mqtt_opts o;
	struct cfg c;
	char why[128];
	size_t i;

	if (!HAVE_FLEET)		/* the section is an error then */
		return;
	clean_env();
	unsetenv("TEST_MQTT_PASS");
	if (mkdtemp(dir) == NULL) {
		t_fail(__FILE__, __LINE__, "mkdtemp");
		return;
	}
	path = arena_printf(&t_arena, "%s/c.yaml", dir);
	/* none: no fleet, and config check says so */
	T_EQI(load(&c, D "empty.yaml"), 0);
	T(c.mqtt.broker == NULL);
	T_EQI(cfg_mqtt_opts(&c, &o, &lo, why, sizeof(why)), -E_INVAL);
	for (i = 0; i < ARRAY_LEN(bad); i++) {
		t_put(dir, "c.yaml", bad[i].yaml);
		T_EQI(load(&c, path), -E_INVAL);
		if (strstr(err, bad[i].msg) == NULL)
			t_fail(__FILE__, __LINE__, "%s: %s", bad[i].yaml, err);
	}
	/* the defaults that come from the host */
	t_put(dir, "c.yaml", "mqtt:\n  broker: mqtt://127.0.0.1\n");
	T_EQI(load(&c, path), 0);
	T(c.mqtt.client_id != NULL && cfg_mqtt_name_ok(c.mqtt.client_id));
	T_EQS(c.mqtt.root, "skillbox");
	T_EQS(c.mqtt.prefix, arena_printf(&t_arena, "skillbox/%s",
	    c.mqtt.client_id));
	T(c.mqtt.keepalive == 60 && c.mqtt.version == 0 &&
	    c.mqtt.session_expiry == 86400);
	T_EQS(cfg_source(&c, "mqtt.keepalive"), "default");
	/* every key; the password file's newline is not the password's */
	t_put(dir, "pass", "s3cret\n");
	t_put(dir, "c.yaml", "mqtt:\n  broker: mqtts://[::1]:8884\n"
	    "  ca: ca.pem\n  cert: d.crt\n  key: d.key\n  username: dev1\n"
	    "  password_file: pass\n  client_id: dev-1_x\n  keepalive: 30\n"
	    "  root: fleet/a\n  groups: [lab, north]\n  queues: work\n"
	    "  version: 5\n  session_expiry: 0\n");
	T_EQI(load(&c, path), 0);
	T_EQS(c.mqtt.ca, arena_printf(&t_arena, "%s/ca.pem", dir));
	T_EQS(c.mqtt.prefix, "fleet/a/dev-1_x");
	T(c.mqtt.ngroups == 2 && c.mqtt.nqueues == 1 && c.mqtt.version == 5);
	T(c.mqtt.pass_len == 6 && memcmp(c.mqtt.pass, "s3cret", 6) == 0);
	T_EQI(cfg_mqtt_opts(&c, &o, &lo, why, sizeof(why)), 0);
	T(o.clean == 0 && o.keepalive == 30 && o.expiry == 0 && o.ver == 5);
	T(o.pass_len == 6 && o.user != NULL && strcmp(o.user, "dev1") == 0);
	T_EQS(o.client_id, "dev-1_x");
	T_EQS(lo.url, "mqtts://[::1]:8884");
	T_EQS(lo.key, arena_printf(&t_arena, "%s/d.key", dir));
	/* the password from the environment, at connect time */
	t_put(dir, "c.yaml", "mqtt:\n  broker: mqtt://h\n  username: u\n"
	    "  password_env: TEST_MQTT_PASS\n  prefix: site/dev9\n"
	    "  version: 3.1.1\n");
	T_EQI(load(&c, path), 0);
	T_EQS(c.mqtt.prefix, "site/dev9");
	T_EQI(cfg_mqtt_opts(&c, &o, &lo, why, sizeof(why)), -E_INVAL);
	T(strstr(why, "$TEST_MQTT_PASS is not set") != NULL);
	setenv("TEST_MQTT_PASS", "pw", 1);
	T_EQI(cfg_mqtt_opts(&c, &o, &lo, why, sizeof(why)), 0);
	T(o.pass_len == 2 && o.ver == MQTT_V311);
	unsetenv("TEST_MQTT_PASS");
	t_put(dir, "pass", "\n");
	t_put(dir, "c.yaml", "mqtt:\n  broker: mqtt://h\n  username: u\n"
	    "  password_file: pass\n");
	T_EQI(load(&c, path), -E_INVAL);
	T(strstr(err, "is empty") != NULL);
	unlink(arena_printf(&t_arena, "%s/pass", dir));
	unlink(path);
	rmdir(dir);
}

static const struct unit_case cases[] = {
	{ "defaults", defaults },
	{ "env_paths", env_paths },
	{ "full", full },
	{ "agents_file", agents_file },
	{ "environment", environment },
	{ "api_keys", api_keys },
	{ "key_check", key_check },
	{ "agents_lax", agents_lax },
	{ "search", search },
	{ "errors", errors },
	{ "out_of_memory", out_of_memory },
	{ "passwd", passwd },
	{ "left_out", left_out },
	{ "mqtt", mqtt },
};

const struct unit_suite suite_cfg = { "cfg", cases, ARRAY_LEN(cases) };
