/* cmd_skills.c - list, show and validate skills
 * usage: skillbox skills list [--json] [-d DIR]... [DIR...]
 *        skillbox skills show [--json] [-d DIR]... NAME
 *        skillbox skills validate DIR...
 *        skillbox skills enable [-d DIR]... NAME
 *
 * list      the skills found in the folders, one a line: name, folder,
 *           description, each as it is found (folders in the order given,
 *           directory order inside). A name found twice is listed twice;
 *           later folders override earlier ones (show says which is used).
 * show      one skill: its front-matter, instructions and the files it
 *           carries (listed, not read).
 * validate  check every skill in or below each DIR (or the folder of a
 *           SKILL.md) against the Agent Skills rules; prints FILE:LINE:
 *           RULE: message per problem and exits 1 if there is any.
 * enable    put in force a skill the model made with create_skill, which
 *           waits as NAME/SKILL.md.pending in a skills folder (-d, else
 *           the configuration's): it is checked, its allowed-tools shown,
 *           and the file renamed to SKILL.md.
 *
 * Skills are searched up to 6 folder levels down, dot-folders included
 * (not .git, .hg, .svn, .venv, __pycache__, node_modules).
 *
 * -d DIR    a skills folder (repeatable). Without -d or DIR: the skills
 *           of the configuration that -c FILE or $SKILLBOX_CONFIG names
 *           (a crew's skills too), else $SKILLBOX_SKILLS (folders
 *           separated by ':'), else /usr/share/skillbox/skills,
 *           /etc/skillbox/skills, ~/.agents/skills and ./.agents/skills.
 * -c FILE   that configuration (before or after `skills`)
 * --json    machine-readable output
 * -q        no warnings about skills that load with problems
 *
 * Exit status: 0 ok, 1 a skill is invalid or not found, 2 usage, 3 memory
 * budget exhausted. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/cfg.h"
#include "cmd/cmd.h"
#include "fmt/json.h"
#include "base/log.h"
#include "skill/skill.h"
#include "base/str.h"

struct opts {
	const char	*roots[SKILL_MAX_ROOTS];
	unsigned	 nroots;
	int		 json, quiet;
};

static void
diag(void *ctx, enum skill_sev sev, const char *file, unsigned line,
    const char *rule, const char *msg)
{
	const struct opts *o = ctx;
	char where[32] = "";

	if (line != 0)
		snprintf(where, sizeof(where), ":%u", line);
	if (o != NULL && o->quiet)
		return;
	if (sev == SKILL_FATAL)
		log_warn("%s%s: %s: %s (skipped)", file, where, rule, msg);
	else
		log_warn("%s%s: %s: %s", file, where, rule, msg);
}

/* Diagnostics of `validate` go to stdout: they are its output. */
static void
vdiag(void *ctx, enum skill_sev sev, const char *file, unsigned line,
    const char *rule, const char *msg)
{
	if (line != 0)
		printf("%s%s:%u: %s: %s\n", sev == SKILL_WARN ? "warning: " :
		    "", file, line, rule, msg);
	else
		printf("%s%s: %s: %s\n", sev == SKILL_WARN ? "warning: " : "",
		    file, rule, msg);
}

/* A copy of dir without trailing slashes, so paths print cleanly. */
static const char *
clean_dir(const char *dir)
{
	size_t n = strlen(dir);
	char *s;

	while (n > 1 && dir[n - 1] == '/')
		n--;
	s = arena_strndup(&app.perm, dir, n);
	return s != NULL ? s : dir;
}

static int
add_root(struct opts *o, const char *dir)
{
	if (o->nroots == SKILL_MAX_ROOTS)
		return cmd_usage("skills", "at most %d skills folders",
		    SKILL_MAX_ROOTS);
	o->roots[o->nroots++] = clean_dir(dir);
	return 0;
}

/* Options shared by the sub-commands; returns the index of the first
 * operand, or a negative exit status. */
static int
parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "dir", required_argument, NULL, 'd' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->quiet = app.quiet;
	optind = 0;
	while ((c = getopt_long(argc, argv, "d:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'j': o->json = 1; break;
		case 'q': o->quiet = 1; break;
		case 'd':
			if (add_root(o, optarg) != 0)
				return -EXIT_USAGE;
			break;
		case 'h': return -(cmd_help("skills") + 100);
		default: return -cmd_usage("skills", "bad option");
		}
	}
	return optind;
}

/* Whitespace runs to single spaces, for one-line display. */
static void
put_oneline(const char *s)
{
	int sp = 0;

	for (; *s != '\0'; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') {
			sp = 1;
			continue;
		}
		if (sp)
			putchar(' ');
		sp = 0;
		putchar(*s);
	}
}

/* A configuration named (-c, $SKILLBOX_CONFIG): its skills folders (a
 * crew's skills among them), as run would load them; *named says there
 * was one (a crew of no skills has none, not the defaults). 0 or an exit
 * status. */
static int
config_roots(struct opts *o, int *named)
{
	const char *env = getenv("SKILLBOX_CONFIG");
	struct cfg *c;
	unsigned i;
	int e;

	*named = app.config != NULL || (env != NULL && *env != '\0');
	if (!*named)
		return 0;
	if ((e = cmd_cfg_load(&c)) != 0)
		return e;
	for (i = 0; i < c->nskills && i < SKILL_MAX_ROOTS; i++)
		o->roots[o->nroots++] = c->skills[i];
	return 0;
}

static int
load(struct opts *o, struct skill_reg *r, int scan)
{
	int e, named = 0;

	if (o->nroots == 0 && (e = config_roots(o, &named)) != 0)
		return e;
	if (o->nroots == 0 && !named && (e = cmd_default_roots("skills",
	    o->roots, &o->nroots)) != 0)
		return e;
	skill_reg_init(r, o->roots, o->nroots, diag, o);
	if (!scan)
		return 0;
	if ((e = skill_reg_scan(r)) == -E_NOMEM)
		return cmd_nomem("loading the skills");
	if (e != 0) {
		log_err("skills: %s", err_str(e));
		return EXIT_FAIL;
	}
	return 0;
}

static void
json_skill(struct json_writer *w, const struct skill_reg *r,
    const struct skill *sk)
{
	const struct skill_osk *o = skill_osk(sk);

	json_begin_obj(w);
	json_kstr(w, "name", sk->name);
	json_kstr(w, "description", sk->description);
	json_kstr(w, "path", sk->dir);
	json_kstr(w, "source", r->roots[sk->root]);
	json_kstr(w, "kind",
	    sk->flags & SKILL_OSKILL ? "orchestration" : "skill");
	if (sk->allowed_tools != NULL) {
		json_kstr(w, "allowed_tools", sk->allowed_tools);
	}
	if (sk->triggers != NULL) {
		json_kstr(w, "triggers", sk->triggers);
	}
	if (sk->default_action != NULL) {
		json_kstr(w, "default_action", sk->default_action);
	}
	if (o != NULL) {
		json_key(w, "allowed_skills");
		if (sk->flags & SKILL_OSK_ALLOWED)
			json_put_str(w, o->allowed);
		else
			json_put_null(w);
		json_key(w, "allowed_prep_skills");
		if (sk->flags & SKILL_OSK_PREP)
			json_put_str(w, o->prep);
		else
			json_put_null(w);
		json_kstr(w, "session",
		    sk->flags & SKILL_OSK_LOOP ? "loop" : "sop");
	}
	json_end_obj(w);
}

/* Write and drop what the builder holds, so long lists stream. */
static int
flush_sb(struct sbuf *sb)
{
	if (sb->err)
		return sb->err;
	if (cmd_write(1, sb->p, sb->len) != 0)
		return -E_IO;
	sbuf_truncate(sb, 0);
	return 0;
}

struct lister {
	const struct skill_reg *r;
	struct json_writer	 w;
	struct sbuf		 sb;
	int			 json;
};

/* One skill as it is found: nothing is kept, so the list streams. */
static int
list_one(void *ctx, const struct skill *sk)
{
	struct lister *l = ctx;

	if (!l->json) {
		struct arena_mark m = arena_mark(&app.perm);

		printf("%-24s %s\n    ", sk->name, cmd_shown(sk->dir));
		put_oneline(cmd_shown(sk->description));
		putchar('\n');
		arena_reset_to(&app.perm, m);
		return ferror(stdout) ? -E_IO : 0;
	}
	json_skill(&l->w, l->r, sk);
	return l->sb.len > 4096 ? flush_sb(&l->sb) : 0;
}

static int
do_list(struct opts *o, int argc, char **argv)
{
	struct skill_reg r;
	struct lister l;
	int e;

	for (; argc > 0; argc--, argv++)
		if ((e = add_root(o, argv[0])) != 0)
			return e;
	if ((e = load(o, &r, 0)) != 0)
		return e;
	memset(&l, 0, sizeof(l));
	l.r = &r;
	l.json = o->json;
	if (l.json) {
		sbuf_init(&l.sb, &app.perm, 0);
		json_writer_init(&l.w, &l.sb);
		json_begin_arr(&l.w);
	}
	e = skill_reg_each(&r, list_one, &l);
	if (l.json && e == 0) {
		json_end_arr(&l.w);
		sbuf_addc(&l.sb, '\n');
		e = flush_sb(&l.sb);
	}
	if (e == -E_NOMEM)
		return cmd_nomem("listing the skills");
	if (e != 0) {
		log_err("skills: %s", err_str(e));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

static int
do_show(struct opts *o, int argc, char **argv)
{
	const struct skill_osk *osk;
	struct skill_reg r;
	struct skill *sk;
	struct skill_res *res;
	unsigned i, n, bl;
	char *fm, *body;
	int e, more;

	if (argc != 1)
		return cmd_usage("skills", "show takes one skill name");
	if ((e = load(o, &r, 1)) != 0)
		return e;
	if ((sk = skill_find(&r, argv[0])) == NULL) {
		log_err("skills: no skill named '%s'", argv[0]);
		return EXIT_FAIL;
	}
	if ((e = skill_load(sk, &app.perm, &fm, &body, &bl)) != 0 ||
	    (e = skill_resources(sk, &app.perm, &res, &n, &more)) != 0) {
		if (e == -E_NOMEM)
			return cmd_nomem("reading the skill");
		log_err("skills: %s: %s", sk->dir, err_str(e));
		return EXIT_FAIL;
	}
	if (o->json) {
		struct json_writer w;
		struct sbuf sb;

		sbuf_init(&sb, &app.perm, 0);
		json_writer_init(&w, &sb);
		json_begin_obj(&w);
		json_key(&w, "skill");
		json_skill(&w, &r, sk);
		json_key(&w, "frontmatter");
		if (fm != NULL)
			json_put_str(&w, fm);
		else
			json_put_null(&w);
		json_kstr(&w, "body", body);
		json_key(&w, "resources");
		json_begin_arr(&w);
		for (i = 0; i < n; i++) {
			json_begin_obj(&w);
			json_kstr(&w, "path", res[i].path);
			json_kstr(&w, "type", res[i].outside ? "outside" :
			    res[i].dir ? "dir" : "file");
			if (!res[i].dir && !res[i].outside) {
				json_key(&w, "size");
				json_put_int(&w, (long long)res[i].size);
			}
			json_end_obj(&w);
		}
		json_end_arr(&w);
		json_key(&w, "resources_truncated");
		json_put_bool(&w, more);
		json_end_obj(&w);
		sbuf_addc(&sb, '\n');
		if (sb.err)
			return cmd_nomem("writing the skill");
		return cmd_write(1, sb.p, sb.len) == 0 ? EXIT_OK : EXIT_FAIL;
	}
	printf("name: %s\nkind: %s\npath: %s\nfile: %s\n", sk->name,
	    sk->flags & SKILL_OSKILL ? "orchestration" : "skill",
	    cmd_shown(sk->dir), cmd_shown(skill_file(sk, &app.perm)));
	if ((osk = skill_osk(sk)) != NULL)
		printf("allowed-skills: %s\nallowed-prep-skills: %s\n"
		    "session: %s\n", sk->flags & SKILL_OSK_ALLOWED ?
		    osk->allowed : "(every skill but this one)",
		    !(sk->flags & SKILL_OSK_PREP) ? "(same as allowed-skills)" :
		    *osk->prep != '\0' ? osk->prep : "(none)",
		    sk->flags & SKILL_OSK_LOOP ? "loop" : "sop");
	if (fm != NULL)
		printf("\n--- front-matter\n%s", cmd_shown(fm));
	printf("\n--- instructions (line %u)\n%s", bl, cmd_shown(body));
	if (*body != '\0' && body[strlen(body) - 1] != '\n')
		putchar('\n');
	printf("\n--- resources (%u%s)\n", n, more ? ", list cut" : "");
	for (i = 0; i < n; i++) {
		if (res[i].outside)
			printf("%s  (link out of the skill: not usable)\n",
			    cmd_shown(res[i].path));
		else if (res[i].dir)
			printf("%s/\n", cmd_shown(res[i].path));
		else
			printf("%s  %lld bytes\n", cmd_shown(res[i].path),
			    (long long)res[i].size);
	}
	return EXIT_OK;
}

/* A skill the model made waits as NAME/SKILL.md.pending until a person
 * puts it in force here. */
static int
do_enable(struct opts *o, int argc, char **argv)
{
	struct cfg c;
	const char *const *dirs = o->roots, *name;
	char err[256], *from, *to, *dir;
	unsigned n = o->nroots, i, bad;
	struct stat st;

	if (argc != 1 || *(name = argv[0]) == '\0' ||
	    strchr(name, '/') != NULL || name[0] == '.')
		return cmd_usage("skills", "enable takes one skill name");
	if (n == 0) {
		if (cfg_load(&c, &app.perm, app.config, err, sizeof(err)) != 0) {
			log_err("%s", err);
			return EXIT_FAIL;
		}
		dirs = c.skills;
		n = c.nskills;
	}
	for (i = 0; i < n; i++) {
		if ((dir = arena_printf(&app.perm, "%s/%s", dirs[i], name)) ==
		    NULL || (from = arena_printf(&app.perm,
		    "%s/SKILL.md.pending", dir)) == NULL || (to =
		    arena_printf(&app.perm, "%s/SKILL.md", dir)) == NULL)
			return cmd_nomem("enabling the skill");
		if (lstat(from, &st) != 0)
			continue;
		if (!S_ISREG(st.st_mode) || lstat(to, &st) == 0) {
			log_err("skills: %s: not a pending skill (%s)", dir,
			    S_ISREG(st.st_mode) ? "SKILL.md exists" :
			    "not a file");
			return EXIT_FAIL;
		}
		if (rename(from, to) != 0) {
			log_err("skills: %s: %s", to, strerror(errno));
			return EXIT_FAIL;
		}
		if ((bad = (unsigned)skill_validate_dir(&app.perm, dir, vdiag,
		    NULL)) != 0) {
			(void)rename(to, from);
			log_err("skills: %s: not valid: left pending", dir);
			return EXIT_FAIL;
		}
		printf("enabled %s in %s (skillbox skills show %s: what it may "
		    "do)\n", name, dir, name);
		return EXIT_OK;
	}
	log_err("skills: no pending skill '%s' (NAME/SKILL.md.pending) in the "
	    "skills folders", name);
	return EXIT_FAIL;
}

static int
do_validate(int argc, char **argv)
{
	unsigned bad = 0, n, checked = 0;
	int e, i;

	if (argc < 1)
		return cmd_usage("skills", "validate needs a folder");
	for (i = 0; i < argc; i++) {
		struct arena_mark m = arena_mark(&app.perm);

		e = skill_validate(&app.perm, clean_dir(argv[i]), vdiag, NULL,
		    &n);
		arena_reset_to(&app.perm, m);
		checked += n;
		if (e == -E_NOMEM)
			return cmd_nomem("validating the skills");
		if (e < 0) {
			log_err("skills: %s: %s", argv[i], err_str(e));
			return EXIT_FAIL;
		}
		bad += (unsigned)e;
	}
	if (bad > 0) {
		printf("%u problem%s found\n", bad, bad == 1 ? "" : "s");
		return EXIT_FAIL;
	}
	printf("ok: %u skill%s checked\n", checked, checked == 1 ? "" : "s");
	return EXIT_OK;
}

int
cmd_skills(int argc, char **argv)
{
	struct opts o;
	const char *sub;
	int i;

	if (argc < 2)
		return cmd_usage("skills", "missing sub-command");
	sub = argv[1];
	if ((i = parse_opts(argc - 1, argv + 1, &o)) < 0)
		return i <= -100 ? -i - 100 : -i;
	argc -= i + 1;
	argv += i + 1;
	if (strcmp(sub, "list") == 0)
		return do_list(&o, argc, argv);
	if (strcmp(sub, "show") == 0)
		return do_show(&o, argc, argv);
	if (strcmp(sub, "validate") == 0)
		return do_validate(argc, argv);
	if (strcmp(sub, "enable") == 0)
		return do_enable(&o, argc, argv);
	if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0)
		return cmd_help("skills");
	return cmd_usage("skills", "unknown sub-command '%s'", sub);
}
