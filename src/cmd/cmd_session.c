/* cmd_session.c - list, show and remove conversation sessions
 * usage: skillbox session list [--json]
 *        skillbox session show [--json] NAME
 *        skillbox session rm NAME
 * Sessions are JSONL logs in <state_dir>/sessions, one event a line; `run`
 * and `chat` continue one with --session NAME. show prints the turns in
 * words (--json: the raw events).
 * Exit status: 0 ok, 1 no such session or an I/O error, 2 usage. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "agent/cfg.h"
#include "cmd/cmd.h"
#include "fmt/json.h"
#include "base/log.h"
#include "session/slog.h"
#include "base/str.h"

struct show {
	int	json;
};

static const char *
jf(const struct json_doc *d, const char *key)
{
	char *s;

	if (json_str(d, &app.perm, json_get(d, 0, key), &s, NULL) != 0)
		return NULL;
	return s;
}

static int
show_line(void *ctx, const struct json_doc *d, unsigned line)
{
	struct show *sh = ctx;
	const char *type = jf(d, "type");

	if (sh->json) {
		fwrite(d->js, 1, d->len, stdout);
		putchar('\n');
		return 0;
	}
	if (type == NULL)
		return 0;
	if (strcmp(type, "user") == 0)
		printf("\n> %s\n", cmd_shown(jf(d, "text")));
	else if (strcmp(type, "final") == 0)
		printf("%s\n", cmd_shown(jf(d, "text")));
	else if (strcmp(type, "handoff") == 0 && jf(d, "task") != NULL)
		printf("  -> %s\n", cmd_shown(jf(d, "to")));
	else if (strcmp(type, "tool_end") == 0) {
		const char *ag = jf(d, "agent"), *nm = jf(d, "name");

		printf("  [%s] %s\n", cmd_shown(ag), cmd_shown(nm));
	}
	else if (strcmp(type, "error") == 0)
		printf("  error: %s\n", cmd_shown(jf(d, "message")));
	else if (strcmp(type, "turn_abort") == 0)
		printf("  (turn interrupted: %s)\n",
		    cmd_shown(jf(d, "reason")));
	else if (strcmp(type, "compaction") == 0)
		printf("  (earlier turns compacted into a summary)\n");
	(void)line;
	return 0;
}

int
cmd_session(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct show sh = { 0 };
	struct slog_info *v;
	struct slog lg;
	struct cfg c;
	const char *sub;
	char why[320];
	unsigned i, n, bad;
	int ch, e, torn;

	if (argc < 2)
		return cmd_usage("session", "missing sub-command");
	sub = argv[1];
	argc--, argv++;
	optind = 0;
	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (ch) {
		case 'j': sh.json = 1; break;
		case 'h': return cmd_help("session");
		default: return cmd_usage("session", "bad option");
		}
	}
	argc -= optind, argv += optind;
	if ((e = cfg_load(&c, &app.perm, app.config, why, sizeof(why))) != 0) {
		if (e == -E_NOMEM)
			return cmd_nomem("loading the configuration");
		log_err("%s", why);
		return EXIT_FAIL;
	}
	if (strcmp(sub, "list") == 0) {
		if (argc != 0)
			return cmd_usage("session", "list takes no names");
		if ((e = slog_list(&app.perm, c.state_dir, &v, &n)) != 0) {
			log_err("session: %s/sessions: %s", c.state_dir,
			    err_str(e));
			return EXIT_FAIL;
		}
		for (i = 0; i < n; i++) {
			char when[32];
			struct utc u;

			utc_split(v[i].mtime, &u);
			snprintf(when, sizeof(when), "%04lld-%02d-%02d %02d:%02d",
			    u.year, u.mon, u.day, u.hour, u.min);
			if (sh.json)
				printf("{\"name\":\"%s\",\"bytes\":%lld,"
				    "\"mtime\":%lld}\n", v[i].name, v[i].size,
				    v[i].mtime);
			else
				printf("%-32s %s UTC %8lld bytes\n", v[i].name,
				    when, v[i].size);
		}
		return EXIT_OK;
	}
	if (argc != 1)
		return cmd_usage("session", "%s takes one session name", sub);
	if (strcmp(sub, "rm") == 0) {
		if ((e = slog_remove(&app.perm, c.state_dir, argv[0])) != 0) {
			log_err("session %s: %s", argv[0], e == -E_NOENT ?
			    "no such session" : err_str(e));
			return EXIT_FAIL;
		}
		return EXIT_OK;
	}
	if (strcmp(sub, "show") != 0)
		return cmd_usage("session", "unknown sub-command '%s'", sub);
	if ((e = slog_open(&lg, &app.perm, c.state_dir, argv[0], SLOG_READ)) != 0) {
		log_err("session %s: %s", argv[0], e == -E_NOENT ?
		    "no such session" : err_str(e));
		return EXIT_FAIL;
	}
	e = slog_replay(&lg, 0, &app.perm, show_line, &sh, &torn, &bad);
	slog_close(&lg);
	if (torn || bad)
		log_warn("session %s: %s%u unreadable lines", argv[0],
		    torn ? "ends in a torn line; " : "", bad);
	return e == 0 ? EXIT_OK : EXIT_FAIL;
}
