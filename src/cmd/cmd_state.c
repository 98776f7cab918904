/* cmd_state.c - keep sessions on flash: sync, restore, status
 * usage: skillbox state sync [--json]
 *        skillbox state restore [--json]
 *        skillbox state status [--json]
 * state_dir is RAM on most routers; with persist.dir set in the
 * configuration (a folder on flash), the sessions are kept there too:
 *   sync     copy the session files that changed since the last sync to
 *            persist.dir (each whole: written aside, fsync'd, renamed;
 *            then one fsync of the folder) and remove what state_dir no
 *            longer has; persist.max bytes at most, the newest sessions
 *   restore  copy them back into state_dir when it has no sessions (after
 *            a boot); `serve` does it when it starts
 *   status   the settings, what the last sync wrote, what a sync would
 *            write now, and the totals since state_dir was made
 * `serve` syncs every persist.interval seconds and when it stops; run
 * sync from cron or the init script's stop for other uses. Without
 * persist.dir, sync and restore say so and do nothing.
 * Exit status: 0 ok (or persistence off), 1 an I/O error, 2 usage. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "agent/cfg.h"
#include "cmd/cmd.h"
#include "fmt/json.h"
#include "base/log.h"
#include "serve/persist.h"

/* One sync's or restore's figures, as text or a JSON object. */
static void
print(const char *what, const struct persist_stats *st, int json)
{
	if (json)
		printf("{\"%s\":%u,\"bytes\":%llu,\"fsyncs\":%llu,"
		    "\"deleted\":%u,\"sessions\":%u,\"skipped\":%u,"
		    "\"kept_bytes\":%llu,\"time\":%lld}", what, st->files,
		    st->bytes, st->fsyncs, st->deleted, st->sessions,
		    st->skipped, st->kept, st->time);
	else
		printf("%s %u files, %llu bytes, %llu fsyncs; %u removed; %u "
		    "sessions kept (%llu bytes), %u left out by persist.max\n",
		    what, st->files, st->bytes, st->fsyncs, st->deleted,
		    st->sessions, st->kept, st->skipped);
}

static int
status(const struct cfg *c, int json)
{
	struct persist_stats last, now;
	int e;

	persist_last(c, &app.perm, &last);
	if ((e = persist_sync(c, &app.perm, 1, &now)) != 0)
		return e;
	if (json) {
		struct json_writer w;
		struct sbuf sb;

		sbuf_init(&sb, &app.perm, 0);
		json_writer_init(&w, &sb);
		json_put_str(&w, c->persist.dir);	/* escaped */
		if (json_writer_err(&w) != 0)
			return -E_NOMEM;
		printf("{\"dir\":%s,\"interval\":%u,\"max\":%zu,\"last\":",
		    sb.p, c->persist.interval, c->persist.max);
		print("written", &last, 1);
		printf(",\"pending\":");
		print("written", &now, 1);
		printf(",\"syncs\":%llu,\"total_bytes\":%llu,"
		    "\"total_fsyncs\":%llu}\n", last.syncs, last.total_bytes,
		    last.total_fsyncs);
		return 0;
	}
	printf("dir: %s\ninterval: %u s\nmax: %zu bytes\n", c->persist.dir,
	    c->persist.interval, c->persist.max);
	if (last.syncs > 0)
		print("last sync:", &last, 0);
	print("a sync now:", &now, 0);
	printf("since state_dir was made: %llu syncs, %llu bytes, %llu "
	    "fsyncs\n", last.syncs, last.total_bytes, last.total_fsyncs);
	return 0;
}

int
cmd_state(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct persist_stats st;
	const char *sub;
	struct cfg c;
	char why[320];
	int ch, e, json = 0;

	if (argc < 2)
		return cmd_usage("state", "missing sub-command");
	sub = argv[1];
	argc--, argv++;
	optind = 0;
	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (ch) {
		case 'j': json = 1; break;
		case 'h': return cmd_help("state");
		default: return cmd_usage("state", "bad option");
		}
	}
	if (optind < argc)
		return cmd_usage("state", "no arguments are taken");
	if (strcmp(sub, "sync") != 0 && strcmp(sub, "restore") != 0 &&
	    strcmp(sub, "status") != 0)
		return cmd_usage("state", "sync, restore or status, not '%s'",
		    sub);
	if ((e = cfg_load(&c, &app.perm, app.config, why, sizeof(why))) != 0) {
		if (e == -E_NOMEM)
			return cmd_nomem("loading the configuration");
		log_err("%s", why);
		return EXIT_FAIL;
	}
	if (c.persist.dir == NULL) {
		if (json)
			printf("{\"dir\":null}\n");
		else
			printf("persistence is off (no persist.dir in %s)\n",
			    c.file ? c.file : "the configuration");
		return EXIT_OK;
	}
	if (sub[1] == 't')
		e = status(&c, json);
	else if (sub[1] == 'y')
		e = persist_sync(&c, &app.perm, 0, &st);
	else if ((e = persist_restore(&c, &app.perm, &st)) == -E_BUSY) {
		printf("state_dir %s has sessions: nothing restored\n",
		    c.state_dir);
		return EXIT_OK;
	}
	if (e == -E_NOMEM)
		return cmd_nomem("copying the sessions");
	if (e != 0) {
		log_err("state %s: %s: %s", sub, c.persist.dir, e == -E_IO ?
		    strerror(errno) : err_str(e));
		return EXIT_FAIL;
	}
	if (sub[1] != 't') {
		print(sub[1] == 'y' ? "synced" : "restored", &st, json);
		if (json)
			putchar('\n');
	}
	return EXIT_OK;
}
