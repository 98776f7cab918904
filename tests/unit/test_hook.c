/* test_hook.c - approve: and hooks: as the config and front-matter give
 * them: the name patterns, every parse error, and a build without hooks
 * refusing them (run the suite in a HOOKS=0 build for that branch). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/cfg.h"
#include "fmt/fm.h"
#include "skill/hook.h"
#include "unit.h"
#include "config.h"

static struct fm_node *
yaml(const char *text)
{
	struct fm_node *root = NULL;
	struct fm_error fe;

	if (fm_parse(&t_arena, text, strlen(text), 1, &root, &fe) != 0)
		t_fail(__FILE__, __LINE__, "yaml: %s", fe.msg);
	return root;
}

static void
glob(void)
{
	T(hook_glob("run_*", "run_command_line"));
	T(hook_glob("run_*", "run_"));
	T(!hook_glob("run_*", "read_file"));
	T(hook_glob("*", ""));
	T(hook_glob("*_file", "read_skill_file"));
	T(!hook_glob("*_file", "read_skill_files"));
	T(hook_glob("a*b*c", "axxbyyc"));
	T(!hook_glob("a*b*c", "axxbyy"));
	T(hook_glob("shell", "shell"));
	T(!hook_glob("shell", "shells"));
	T(hook_name_ok("handoff_to_*"));
	T(!hook_name_ok("a b"));
	T(!hook_name_ok(""));
	T(!hook_name_ok("x/y"));
}

static void
names(void)
{
	const char **v;
	unsigned line;

	T_EQI(hook_names(&t_arena, fm_get(yaml("approve: run_command_line\n"),
	    "approve"), &v, &line), 1);
	T_EQS(v[0], "run_command_line");
	T_EQI(hook_names(&t_arena, fm_get(yaml("approve: [a, 'b*']\n"),
	    "approve"), &v, &line), 2);
	T_EQS(v[1], "b*");
	T_EQI(hook_names(&t_arena, fm_get(yaml("approve:\n  - ok\n  - "
	    "'not ok'\n"), "approve"), &v, &line), -E_INVAL);
	T_EQI(line, 3);
	T_EQI(hook_names(&t_arena, fm_get(yaml("approve: {a: b}\n"),
	    "approve"), &v, &line), -E_INVAL);
}

/* Parse `hooks:` of text; the error message, or "" when it parsed. */
static const char *
perr(const char *text, unsigned *line)
{
	static char err[200];
	struct hook *h;
	unsigned n;

	err[0] = '\0';
	if (hook_parse(&t_arena, fm_get(yaml(text), "hooks"), "/d", &h, &n,
	    line, err, sizeof(err)) == 0)
		return "";
	return err;
}

static void
parse(void)
{
	struct hook *h;
	unsigned n, line;
	char err[200];

	if (!HAVE_HOOKS)	/* config() checks the error it is then */
		return;
	T_EQI(hook_parse(&t_arena, fm_get(yaml("hooks:\n"
	    "  - { event: pre_tool_use, match: 'run_*', command: ./x.sh }\n"
	    "  - { event: post_turn, url: 'http://127.0.0.1:9/h', "
	    "timeout: 3 }\n"
	    "  - { event: pre_skill, match: '*', pending: true }\n"), "hooks"),
	    "/d", &h, &n, &line, err, sizeof(err)), 0);
	T_EQI(n, 3);
	T_EQI(h[0].event, HOOK_PRE_TOOL);
	T_EQI(h[0].kind, HOOK_COMMAND);
	T_EQS(h[0].match, "run_*");
	T_EQS(h[0].target, "./x.sh");
	T_EQS(h[0].dir, "/d");
	T_EQI(h[0].timeout_s, 10);
	T_EQI(h[1].event, HOOK_POST_TURN);
	T_EQI(h[1].kind, HOOK_HTTP);
	T_EQI(h[1].timeout_s, 3);
	T(h[1].match == NULL);
	T_EQI(h[2].kind, HOOK_PENDING);
	T(h[2].match == NULL);		/* '*' is every step */
	T_EQS(hook_event_name(HOOK_POST_MODEL), "post_model_request");
	/* on_error: a pre hook fails closed unless told, a post hook open. */
	T(h[0].deny_on_error);
	T(!h[1].deny_on_error);
	T(h[2].deny_on_error);
	T_EQI(hook_parse(&t_arena, fm_get(yaml("hooks:\n"
	    "  - { event: pre_tool_use, command: x, on_error: allow }\n"
	    "  - { event: post_tool_use, command: x, on_error: deny }\n"
	    "  - { event: pre_turn, url: 'http://127.0.0.1:9/h', on_error: "
	    "deny }\n"), "hooks"), "/d", &h, &n, &line, err, sizeof(err)), 0);
	T_EQI(n, 3);
	T(!h[0].deny_on_error);
	T(h[1].deny_on_error);
	T(h[2].deny_on_error);
}

static void
errors(void)
{
	unsigned line;

	if (!HAVE_HOOKS)
		return;
	T(strstr(perr("hooks: x\n", &line), "must be a list") != NULL);
	T(strstr(perr("hooks: [x]\n", &line), "hook '-': a hook is {") !=
	    NULL);
	T(strstr(perr("hooks:\n  - event: pre_nothing\n    command: x\n",
	    &line), "hook 'event': a hook is { event: pre_ or post_") != NULL);
	T_EQI(line, 2);
	T(strstr(perr("hooks:\n  - { event: pre_turn }\n", &line),
	    "hook 'command'") != NULL);
	T(strstr(perr("hooks:\n  - { match: x, command: y }\n", &line),
	    "hook 'event'") != NULL);
	T(strstr(perr("hooks:\n  - { event: pre_turn, command: a, url: "
	    "'http://x/' }\n", &line), "hook 'command'") != NULL);
	T(strstr(perr("hooks:\n  - { event: pre_turn, url: 'ftp://x/' }\n",
	    &line), "hook 'url'") != NULL);
	T(strstr(perr("hooks:\n  - { event: pre_turn, command: a, match: "
	    "'a b' }\n", &line), "hook 'match'") != NULL);
	T(strstr(perr("hooks:\n  - { event: pre_turn, command: a, timeout: "
	    "0 }\n", &line), "hook 'timeout'") != NULL);
	T(strstr(perr("hooks:\n  - { event: pre_turn, command: a, timeout: "
	    "9x }\n", &line), "hook 'timeout'") != NULL);
	T(strstr(perr("hooks:\n  - { event: pre_turn, command: a, when: "
	    "x }\n", &line), "hook 'when'") != NULL);
	T(strstr(perr("hooks:\n  - { event: pre_turn, pending: true }\n",
	    &line), "'pending' is for") != NULL);
	T(strstr(perr("hooks:\n  - { event: pre_tool_use, pending: yes }\n",
	    &line), "hook 'pending'") != NULL);
	T(strstr(perr("hooks:\n  - { event: pre_turn, command: [a] }\n",
	    &line), "hook 'command'") != NULL);
	T(strstr(perr("hooks:\n  - { event: pre_turn, command: a, on_error: "
	    "Deny }\n", &line), "hook 'on_error'") != NULL);
	T(strstr(perr("hooks:\n  - { event: pre_turn, command: a, onerror: "
	    "deny }\n", &line), "timeout: 1-600; on_error }") != NULL);
	T(strstr(perr("hooks:\n  - { event: pre_turn, command: a, on_error: "
	    "ask }\n", &line), "hook 'on_error': deny or allow") != NULL);
	T(strlen(perr("hooks:\n  - { event: pre_turn, command: a, timeout: "
	    "0 }\n", &line)) < 160);	/* cfg.c's buffer */
}

/* The config: approve always; hooks only when built in, else an error
 * that says so (never ignored). */
static void
config(void)
{
	char dir[] = "/tmp/skillbox-hook.XXXXXX", err[300], *path;
	struct cfg c;
	int e;

	unsetenv("SKILLBOX_CONFIG");
	if (mkdtemp(dir) == NULL) {
		t_fail(__FILE__, __LINE__, "mkdtemp");
		return;
	}
	t_put(dir, "c.yaml", "approve: [run_command_line, 'handoff_to_*']\n"
	    "hooks:\n  - { event: pre_tool_use, command: 'exit 0' }\n");
	path = arena_printf(&t_arena, "%s/c.yaml", dir);
	e = cfg_load(&c, &t_arena, path, err, sizeof(err));
	if (HAVE_HOOKS) {
		T_EQI(e, 0);
		T_EQI(c.napprove, 2);
		T_EQS(c.approve[1], "handoff_to_*");
		T_EQI(c.nhooks, 1);
		T_EQS(c.hooks[0].dir, dir);
	} else {
		T_EQI(e, -E_INVAL);
		T(strstr(err, "c.yaml:3: 'hooks': this skillbox was built "
		    "without hooks (HOOKS=0)") != NULL);
	}
	t_put(dir, "c.yaml", "approve: 'a b'\n");
	T_EQI(cfg_load(&c, &t_arena, path, err, sizeof(err)), -E_INVAL);
	T(strstr(err, "'approve' must be") != NULL);
	unlink(path);
	rmdir(dir);
}

static const struct unit_case cases[] = {
	{ "glob", glob },
	{ "names", names },
	{ "parse", parse },
	{ "errors", errors },
	{ "config", config },
};

const struct unit_suite suite_hook = { "hook", cases, ARRAY_LEN(cases) };
