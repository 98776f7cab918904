/* tool.c - the built-in tools. Schemas are fixed texts (tool_defs.h,
 * packed into the binary); handlers parse
 * their arguments strictly and answer bad ones with an error the model can
 * read and correct. */
#include "tool/tool.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fsafe.h"
#include "fmt/json.h"
#include "base/str.h"

/* The texts, packed at build time (tool_defs.h, tools/mktooldefs.c):
 * for each tool its name, description and parameters, each ended by NUL
 * (an empty parameters text: built at run time). */
#include "tooldefs_lz.h"

#define LIST_MAX	50	/* skills in one list_skills answer (index) */

/* see tool.h */
const char tool_no_net_note[] = "note: this skill has no network (its "
    "allowed-tools has no WebFetch): a failed connection or name lookup "
    "is the sandbox, not the network";

static struct {
	const char *name, *desc, *params;
} defs[T__COUNT];

/* Unpack the texts once; they stay for the process. */
static void
defs_load(void)
{
	static char text[tool_lz_LEN];
	const char *p = text, *end = text + tool_lz_LEN;
	unsigned i;

	if (defs[0].name != NULL)
		return;
	if (str_unpack(tool_lz, sizeof(tool_lz), text, sizeof(text)) !=
	    sizeof(text))
		abort();	/* the build made them: cannot happen */
	for (i = 0; i < T__COUNT && p < end; i++) {
		defs[i].name = p;
		p += strlen(p) + 1;
		defs[i].desc = p;
		p += strlen(p) + 1;
		defs[i].params = *p != '\0' ? p : NULL;
		p += strlen(p) + 1;
	}
}

void
tool_def(enum tool_id id, struct llm_tool *t)
{
	defs_load();
	t->name = defs[id].name;
	t->description = defs[id].desc;
	t->params = defs[id].params;
}

int
tool_def_activate(struct arena *a, const struct skill_reg *reg,
    struct llm_tool *t)
{
	struct json_writer w;
	struct sbuf sb;
	unsigned i;

	sbuf_init(&sb, a, 0);
	json_writer_init(&w, &sb);
	json_begin_obj(&w);
	json_kstr(&w, "type", "object");
	json_key(&w, "properties");
	json_begin_obj(&w);
	json_key(&w, "name");
	json_begin_obj(&w);
	json_kstr(&w, "type", "string");
	if (reg->ix != NULL) {
		/* An index is too large to list: the model names one from
		 * the catalog or from list_skills. */
		json_kstr(&w, "description", "The skill's name, as the "
		    "catalog or list_skills gives it.");
	} else {
		json_key(&w, "enum");
		json_begin_arr(&w);
		for (i = 0; i < reg->n; i++)
			if (!(reg->v[i]->flags & SKILL_NO_MODEL))
				json_put_str(&w, reg->v[i]->name);
		json_end_arr(&w);
	}
	json_end_obj(&w);
	json_end_obj(&w);
	json_key(&w, "required");
	json_begin_arr(&w);
	json_put_str(&w, "name");
	json_end_arr(&w);
	json_end_obj(&w);
	if (json_writer_err(&w) != 0)
		return -E_NOMEM;
	defs_load();
	t->name = defs[T_ACTIVATE_SKILL].name;
	t->description = defs[T_ACTIVATE_SKILL].desc;
	t->params = sb.p;
	return 0;
}

int
tool_find(const char *name)
{
	int i;

	defs_load();
	for (i = 0; i < T__COUNT; i++)
		if (strcmp(defs[i].name, name) == 0)
			return i;
	return -1;
}

/* --- results */

struct call {
	const struct tool_env	*env;
	struct arena		*a;
	struct json_doc		 d;
	struct tool_out		*out;
	int			 nomem;
};

static int
reply(struct call *c, int is_error, const char *fmt, ...) ATTR_PRINTF(3, 4);

static int
reply(struct call *c, int is_error, const char *fmt, ...)
{
	struct sbuf sb;
	va_list ap;

	sbuf_init(&sb, c->a, 0);
	va_start(ap, fmt);
	sbuf_vprintf(&sb, fmt, ap);
	va_end(ap);
	if (sb.err)
		return c->nomem = -E_NOMEM;
	c->out->text = sb.p;
	c->out->len = sb.len;
	c->out->is_error = is_error;
	return 0;
}

/* A string argument, or NULL (absent or not a string). */
static char *
arg(struct call *c, const char *key)
{
	int t = json_get(&c->d, 0, key);
	char *s;

	if (t < 0 || c->d.t[t].type != JSON_STR)
		return NULL;
	if (json_str(&c->d, c->a, t, &s, NULL) != 0) {
		c->nomem = -E_NOMEM;
		return NULL;
	}
	return s;
}

/* see tool.h */
const struct skill *
tool_skill_find(const struct skill_reg *reg, const char *name)
{
	const struct skill *sk = skill_find(reg, name);

	return sk != NULL && !(sk->flags & SKILL_NO_MODEL) ? sk : NULL;
}

/* The skill a call acts on: the agent's own, or for the entry agent one
 * it activated inline. The argument names it; it never widens what the
 * calling agent may do. */
static const struct skill *
skill_of(struct call *c)
{
	const struct tool_env *env = c->env;
	const char *name = arg(c, "skill");
	const struct skill *sk;
	unsigned i;

	if (env->skill != NULL) {
		if (name == NULL || *name == '\0' ||
		    strcmp(name, env->skill->name) == 0)
			return env->skill;
		reply(c, 1, "you are the agent of the skill '%s' and act on it "
		    "only; '%s' is not yours", env->skill->name, name);
		return NULL;
	}
	if (name == NULL || *name == '\0') {
		reply(c, 1, "say which skill: the 'skill' argument");
		return NULL;
	}
	if ((sk = tool_skill_find(env->reg, name)) == NULL) {
		reply(c, 1, "there is no skill named '%s' (list_skills shows "
		    "them)", name);
		return NULL;
	}
	for (i = 0; i < env->nactivated; i++)
		if (strcmp(env->activated[i], sk->name) == 0)
			return sk;
	reply(c, 1, "activate the skill '%s' first (activate_skill)", name);
	return NULL;
}

/* Read a whole file from fd (closed here), capped; the cut is said,
 * never silent. Only a regular file is read: a FIFO or a device could
 * block or never end. */
static int
read_capped(struct call *c, int fd, const char *shown)
{
	struct stat st;
	struct sbuf sb;
	char buf[4096];
	ssize_t r;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return reply(c, 1, "%s is not a regular file", shown);
	}
	sbuf_init(&sb, c->a, TOOL_FILE_MAX);
	while (sb.len < TOOL_FILE_MAX && (r = read(fd, buf,
	    MIN(sizeof(buf), TOOL_FILE_MAX - sb.len))) > 0)
		sbuf_add(&sb, buf, (size_t)r);
	close(fd);
	if (sb.err == -E_NOMEM)
		return c->nomem = -E_NOMEM;
	if ((size_t)st.st_size > sb.len)
		sbuf_printf(&sb, "\n[... cut: showing %zu of %lld bytes]",
		    sb.len, (long long)st.st_size);
	if (!str_is_utf8(sb.p, sb.len))
		return reply(c, 1, "%s is not a text file (not UTF-8)", shown);
	c->out->text = sb.p;
	c->out->len = sb.len;
	return 0;
}

/* One message per kind of failure. A path out of the folder gets the
 * same one whether or not its target exists (fsafe does not look). */
static int
confine_err(struct call *c, int e, const char *what, const char *path)
{
	int en = errno;

	switch (e) {
	case -E_NOMEM:
		return c->nomem = e;
	case -E_NOENT:
		return reply(c, 1, "%s: no such file '%s'", what, path);
	case -E_LIMIT:
		return reply(c, 1, "%s: '%s' is too long or too deep", what,
		    path);
	case -E_INVAL:
		return reply(c, 1, "%s: '%s' does not name a file", what, path);
	case -E_IO:
		return reply(c, 1, "%s: cannot open '%s': %s", what, path,
		    strerror(en));
	default:
		return reply(c, 1, "%s: '%s' is outside the allowed folder "
		    "or reached through a symbolic link", what, path);
	}
}

/* A path argument, whole. *out is NULL when absent. Returns -1, with the
 * reply made, when it is not a string or has a NUL inside (which would
 * cut it: checked as one name, used as another). */
static int
path_arg(struct call *c, const char *key, const char **out)
{
	int t = json_get(&c->d, 0, key), e;
	size_t n;
	char *s;

	*out = NULL;
	if (t < 0)
		return 0;
	if (c->d.t[t].type != JSON_STR ||
	    (e = json_str(&c->d, c->a, t, &s, &n)) == -E_PARSE) {
		reply(c, 1, "'%s' must be a string", key);
		return -1;
	}
	if (e != 0) {
		c->nomem = -E_NOMEM;
		return -1;
	}
	if (strlen(s) != n) {
		reply(c, 1, "'%s' has a NUL byte in it", key);
		return -1;
	}
	*out = s;
	return 0;
}

/* A name for a listing: as is when plain, else as a JSON string, so that
 * a newline or a control character in a name cannot fake an entry or
 * the size after it. */
static void
put_name(struct sbuf *sb, const char *name)
{
	struct json_writer w;
	const unsigned char *s;

	for (s = (const unsigned char *)name; *s != '\0'; s++)
		if (*s < 0x20 || *s == 0x7f || *s == '"' || *s == '\\')
			break;
	if (*s == '\0' && str_is_utf8(name, strlen(name))) {
		sbuf_adds(sb, name);
		return;
	}
	json_writer_init(&w, sb);
	json_put_str(&w, name);
}

/* --- skill tools */

static int
t_list_files(struct call *c, const struct skill *sk, const char *under)
{
	struct skill_res *res;
	struct sbuf sb;
	unsigned i, n;
	int more, e;

	if ((e = skill_resources(sk, c->a, &res, &n, &more)) != 0)
		return e == -E_NOMEM ? (c->nomem = e) :
		    reply(c, 1, "cannot list %s", sk->name);
	sbuf_init(&sb, c->a, 0);
	for (i = 0; i < n; i++) {
		if (under != NULL && strncmp(res[i].path, under,
		    strlen(under)) != 0)
			continue;
		if (res[i].outside)
			continue;
		put_name(&sb, res[i].path);
		sbuf_adds(&sb, res[i].dir ? "/\n" : "");
		if (!res[i].dir)
			sbuf_printf(&sb, " (%lld bytes)\n",
			    (long long)res[i].size);
	}
	if (more)
		sbuf_adds(&sb, "[... more files not listed]\n");
	if (sb.len == 0)
		sbuf_adds(&sb, under != NULL ? "(no files under references/)" :
		    "(no files)");
	if (sb.err)
		return c->nomem = -E_NOMEM;
	c->out->text = sb.p;
	c->out->len = sb.len;
	return 0;
}

static int
t_read_skill_file(struct call *c, const char *prefix)
{
	const struct skill *sk = skill_of(c);
	const char *path;
	char *rel;
	int dfd, fd;

	if (sk == NULL)
		return 0;
	if (path_arg(c, "path", &path) != 0)
		return c->nomem;
	if (path == NULL || *path == '\0') {
		if (prefix != NULL)
			return t_list_files(c, sk, prefix);
		return reply(c, 1, "'path' is required");
	}
	rel = prefix != NULL && strncmp(path, prefix, strlen(prefix)) != 0 ?
	    arena_printf(c->a, "%s%s", prefix, path) : (char *)path;
	if (rel == NULL)
		return c->nomem = -E_NOMEM;
	/* Beneath the skill folder, links inside it followed: no script
	 * may write there, but the walk is safe even if one could. */
	if ((dfd = open(sk->dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return reply(c, 1, "cannot open skill %s: %s", sk->name,
		    strerror(errno));
	fd = fsafe_open(dfd, rel, O_RDONLY | O_NONBLOCK, 0, 0);
	close(dfd);
	if (fd < 0)
		return confine_err(c, fd, sk->name, rel);
	return read_capped(c, fd, rel);
}

/* Describe a sandbox run for the model as JSON. A failed run of a skill
 * without network says so: otherwise the model sees only a DNS error and
 * retries. So does one refused a unix socket (seccomp's EACCES): tsx's
 * command line (npx tsx) talks to its node over one. */
static int
run_result(struct call *c, const struct sbx_policy *p,
    const struct sbx_result *r)
{
	struct json_writer w;
	struct sbuf sb;

	sbuf_init(&sb, c->a, 0);
	json_writer_init(&w, &sb);
	json_begin_obj(&w);
	json_key(&w, "exit");
	json_put_int(&w, r->status);
	if (r->signal) {
		json_key(&w, "signal");
		json_put_int(&w, r->signal);
	}
	if (r->timed_out) {
		json_key(&w, "timed_out");
		json_put_bool(&w, 1);
	}
	json_key(&w, "stdout");
	if (sbx_output_json(r))
		json_put_raw(&w, r->out, r->out_len);
	else
		json_put_strn(&w, r->out, r->out_len);
	if (r->err_len > 0) {
		json_key(&w, "stderr");
		json_put_strn(&w, r->err, r->err_len);
	}
	if ((r->status != 0 || r->signal) && !(p->perms & SBX_NET))
		json_kstr(&w, "sandbox", tool_no_net_note);
	if ((r->status != 0 || r->signal) && (r->layers & SBX_L_SECCOMP_UNIX) &&
	    r->err != NULL && strstr(r->err, "EACCES") != NULL)
		json_kstr(&w, "sandbox_unix", "note: this skill may not open "
		    "unix sockets (no UnixSocket in its allowed-tools): an "
		    "EACCES on a socket, listen or connect is the sandbox "
		    "(npx tsx needs UnixSocket)");
	json_end_obj(&w);
	if (json_writer_err(&w) != 0)
		return c->nomem = -E_NOMEM;
	c->out->text = sb.p;
	c->out->len = sb.len;
	c->out->is_error = r->status != 0 || r->timed_out || r->signal;
	c->out->confinement = r->confinement;
	c->out->as_root = r->as_root;
	return 0;
}

static int
run_err(struct call *c, int e, const struct sbx_result *r)
{
	if (e == -E_NOMEM)
		return c->nomem = e;
	return reply(c, 1, "not run: %s", r->why[0] ? r->why : err_str(e));
}

void
tool_policy(const struct tool_env *env, const struct skill *sk,
    struct arena *a, struct sbx_policy *p)
{
	if (env->base != NULL)
		*p = *env->base;
	else
		sbx_policy_defaults(p);
	p->perms = 0;
	p->nshell_allow = 0;
	if (sk->allowed_tools != NULL)
		sbx_from_allowed_tools(p, a, sk->allowed_tools);
	else		/* no allowed-tools: read and shell, no network */
		p->perms = SBX_READ | SBX_SHELL;
	if (env->host_allow != 0)
		p->perms &= env->host_allow;
	p->perms &= ~env->host_deny;
	p->skill_name = sk->name;
	p->skill_root = sk->dir;
	p->workspace = env->workspace;
	if (env->timeout_ms != 0)
		p->timeout_ms = env->timeout_ms;
	if (env->out_cap != 0)
		p->out_cap = env->out_cap;
}

static int
t_run_command_line(struct call *c)
{
	const struct skill *sk = skill_of(c);
	const char *cmd = arg(c, "commandLine");
	struct sbx_policy p;
	struct sbx_result r;
	int e;

	if (sk == NULL)
		return 0;
	if (cmd == NULL || *cmd == '\0')
		return reply(c, 1, "'commandLine' is required");
	tool_policy(c->env, sk, c->a, &p);
	if (!(p.perms & SBX_SHELL))
		return reply(c, 1, "skill %s may not run shell commands "
		    "(allowed-tools: %s)", sk->name, sk->allowed_tools ?
		    sk->allowed_tools : "none");
	if ((e = sbx_run_shell(c->a, &p, cmd, &r)) != 0)
		return run_err(c, e, &r);
	return run_result(c, &p, &r);
}

static int
t_run_skill_script(struct call *c)
{
	const struct skill *sk = skill_of(c);
	const char *script = arg(c, "script"), *args[32], **argv, *miss;
	const char *input = "{}";
	size_t ilen = 2;
	struct sbx_policy p;
	struct sbx_result r;
	char *full, *s;
	int t, e;
	unsigned i, n = 0;

	if (sk == NULL)
		return 0;
	if (script == NULL || *script == '\0')
		return reply(c, 1, "'script' is required");
	if ((e = skill_path(sk, c->a, script, 1, &full)) != 0)
		return confine_err(c, e, sk->name, script);
	t = json_get(&c->d, 0, "args");
	if (t >= 0 && c->d.t[t].type != JSON_ARR)
		return reply(c, 1, "'args' must be an array of strings");
	for (i = 0; t >= 0 && i < (unsigned)c->d.t[t].size; i++) {
		if (n == ARRAY_LEN(args))
			return reply(c, 1, "at most %zu arguments",
			    ARRAY_LEN(args));
		if (json_str(&c->d, c->a, json_at(&c->d, t, i), &s, NULL) != 0)
			return reply(c, 1, "'args' must be an array of strings");
		args[n++] = s;
	}
	if ((e = sbx_script_argv(c->a, full, args, n, &argv, &miss)) != 0)
		return e == -E_NOMEM ? (c->nomem = e) : reply(c, 1, e ==
		    -E_NOENT ? "not run: %s needs %s, which is not installed" :
		    "not run: cannot read %s", script, miss);
	if ((t = json_get(&c->d, 0, "input")) >= 0) {
		if (c->d.t[t].type == JSON_STR) {
			if (json_str(&c->d, c->a, t, &s, &ilen) != 0)
				return c->nomem = -E_NOMEM;
			input = s;
		} else {
			input = c->d.js + c->d.t[t].start;
			ilen = (size_t)(c->d.t[t].end - c->d.t[t].start);
		}
	}
	tool_policy(c->env, sk, c->a, &p);
	/* Scripts write where they stand: the workspace, not their own
	 * (read-only) folder, which SKILL_ROOT names. */
	p.cwd = c->env->workspace;
	if ((e = sbx_run(c->a, &p, argv, input, ilen, &r)) != 0)
		return run_err(c, e, &r);
	return run_result(c, &p, &r);
}

/* A skill of an index, read again, on one line of sb when it matches q;
 * past LIST_MAX lines only counted in *more. */
static void
list_ix(struct sbuf *sb, const struct skill *sk, const char *q,
    unsigned *shown, unsigned *more)
{
	const char *d;

	if (q != NULL && *q != '\0' && strstr(sk->name, q) == NULL &&
	    strstr(sk->description, q) == NULL)
		return;
	if (*shown == LIST_MAX) {
		++*more;
		return;
	}
	sbuf_printf(sb, "- %s: ", sk->name);
	for (d = sk->description; *d != '\0'; d++)
		sbuf_addc(sb, (unsigned char)*d < ' ' ? ' ' : *d);
	sbuf_addc(sb, '\n');
	++*shown;
}

/* list_skills of an index: every skill is read again (a file each), and
 * the answer stops at LIST_MAX skills. */
static void
list_index(struct call *c, struct sbuf *sb, const char *q)
{
	const struct skill_reg *reg = c->env->reg;
	const struct skill *sk;
	unsigned i, shown = 0, more = 0;
	struct arena tmp;

	arena_init(&tmp, "list");
	for (i = 0; i < reg->n; i++) {
		if (!(skill_reg_flags(reg, i) & SKILL_NO_MODEL) &&
		    (sk = skill_reg_get(reg, i, &tmp)) != NULL)
			list_ix(sb, sk, q, &shown, &more);
		arena_reset(&tmp);
	}
	if (more > 0)
		sbuf_printf(sb, "(%u more match: a narrower query shows "
		    "them)\n", more);
}

static int
t_list_skills(struct call *c)
{
	const char *q = arg(c, "query");
	const struct skill_reg *reg = c->env->reg;
	struct sbuf sb;
	unsigned i;

	sbuf_init(&sb, c->a, 0);
	if (reg->ix != NULL)
		list_index(c, &sb, q);
	for (i = 0; reg->ix == NULL && i < reg->n; i++) {
		const struct skill *sk = reg->v[i];

		if (sk->flags & SKILL_NO_MODEL)
			continue;
		if (q != NULL && *q != '\0' && strstr(sk->name, q) == NULL &&
		    strstr(sk->description, q) == NULL)
			continue;
		sbuf_printf(&sb, "- %s: %s\n", sk->name, sk->description);
	}
	if (sb.len == 0)
		sbuf_adds(&sb, "(no skills match)");
	if (sb.err)
		return c->nomem = -E_NOMEM;
	c->out->text = sb.p;
	c->out->len = sb.len;
	return 0;
}

static int
t_activate(struct call *c)
{
	const char *name = arg(c, "name");
	struct tool_out files, *keep = c->out;
	const struct skill *sk;
	char *fm, *body;
	unsigned bl;
	int e;

	if (name == NULL || (sk = tool_skill_find(c->env->reg, name)) == NULL)
		return reply(c, 1, "no skill named '%s'", name ? name : "");
	if ((e = skill_load(sk, c->a, &fm, &body, &bl)) != 0)
		return e == -E_NOMEM ? (c->nomem = e) :
		    reply(c, 1, "cannot read skill %s", name);
	memset(&files, 0, sizeof(files));
	c->out = &files;
	e = t_list_files(c, sk, NULL);
	c->out = keep;
	if (e != 0 || files.is_error)
		files.text = "(none)";
	keep->activated = sk->name;
	return reply(c, 0, "<skill name=\"%s\">\n%s\n</skill>\n"
	    "Files in the skill folder (read_skill_file, run_skill_script "
	    "with skill=\"%s\"):\n%s", sk->name, body, sk->name, files.text);
}

/* --- workspace tools
 *
 * Any confined command line, and any other skillbox process sharing the
 * workspace, may change it while a tool runs. So nothing is checked by
 * name and then opened by name: every path is resolved by fsafe beneath
 * a descriptor of the workspace, following no symbolic link at all. */

/* The 'path' argument and a descriptor of the workspace (the caller
 * closes it), or -1 with the reply made. A name to create may not hold
 * control characters: they would spoof listings and logs. */
static int
ws_path(struct call *c, const char **path, int create)
{
	const unsigned char *s;
	int fd;

	if (c->env->workspace == NULL) {
		reply(c, 1, "no workspace is configured");
		return -1;
	}
	if (path_arg(c, "path", path) != 0)
		return -1;
	if (*path == NULL || **path == '\0') {
		reply(c, 1, "'path' is required");
		return -1;
	}
	for (s = (const unsigned char *)*path; create && *s != '\0'; s++)
		if (*s < 0x20 || *s == 0x7f) {
			reply(c, 1, "'path' has a control character in it: "
			    "file names may not");
			return -1;
		}
	if ((fd = open(c->env->workspace, O_PATH | O_DIRECTORY |
	    O_CLOEXEC)) < 0)
		reply(c, 1, "cannot open the workspace: %s", strerror(errno));
	return fd;
}

static int
t_write_file(struct call *c)
{
	const char *path;
	char *content;
	size_t n;
	int dfd, e, t = json_get(&c->d, 0, "content");

	if (t < 0 || c->d.t[t].type != JSON_STR)
		return reply(c, 1, "'content' must be a string");
	if ((dfd = ws_path(c, &path, 1)) < 0)
		return c->nomem;
	if (json_str(&c->d, c->a, t, &content, &n) != 0) {
		close(dfd);
		return c->nomem = -E_NOMEM;
	}
	/* A new file renamed into place: a full disk never leaves a
	 * half-written file, and whatever was there is replaced. */
	e = fsafe_write(dfd, path, content, n, 0644, FSAFE_NO_SYMLINKS);
	close(dfd);
	if (e == -E_IO)
		return reply(c, 1, "cannot write %s: %s (nothing changed)",
		    path, strerror(errno));
	if (e != 0)
		return confine_err(c, e, "workspace", path);
	return reply(c, 0, "wrote %zu bytes to %s", n, path);
}

static int
t_read_file(struct call *c)
{
	const char *path;
	int dfd, fd;

	if ((dfd = ws_path(c, &path, 0)) < 0)
		return c->nomem;
	fd = fsafe_open(dfd, path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW, 0,
	    FSAFE_NO_SYMLINKS);
	close(dfd);
	if (fd < 0)
		return confine_err(c, fd, "workspace", path);
	return read_capped(c, fd, path);
}

static int
t_file_info(struct call *c)
{
	struct json_writer w;
	const char *path;
	struct stat st;
	struct sbuf sb;
	int dfd, fd, e;

	if ((dfd = ws_path(c, &path, 0)) < 0)
		return c->nomem;
	/* O_PATH: a FIFO or a device is looked at, never opened. */
	fd = fsafe_open(dfd, path, O_PATH, 0, FSAFE_NO_SYMLINKS);
	close(dfd);
	if (fd < 0)
		return confine_err(c, fd, "workspace", path);
	e = fstat(fd, &st);
	close(fd);
	if (e != 0)
		return reply(c, 1, "%s: %s", path, strerror(errno));
	sbuf_init(&sb, c->a, 0);
	json_writer_init(&w, &sb);
	json_begin_obj(&w);
	json_kstr(&w, "path", path);
	json_kstr(&w, "type",
	    S_ISDIR(st.st_mode) ? "dir" : S_ISREG(st.st_mode) ?
	    "file" : "other");
	json_key(&w, "size");
	json_put_int(&w, (long long)st.st_size);
	json_key(&w, "mtime");
	json_put_int(&w, (long long)st.st_mtime);
	json_end_obj(&w);
	if (json_writer_err(&w) != 0)
		return c->nomem = -E_NOMEM;
	c->out->text = sb.p;
	c->out->len = sb.len;
	return 0;
}

static int
t_list_ws(struct call *c)
{
	struct skill sk;

	if (c->env->workspace == NULL)
		return reply(c, 1, "no workspace is configured");
	memset(&sk, 0, sizeof(sk));
	sk.name = "workspace";
	sk.dir = c->env->workspace;
	return t_list_files(c, &sk, NULL);
}

/* --- create_skill */

/* Keep the allowed-tools entries whose permissions the creating agent
 * has itself (cap); the others go to *dropped. */
static int
cap_tools(struct call *c, const char *tools, unsigned cap, struct sbuf *kept,
    struct sbuf *dropped)
{
	struct sbx_policy tp;
	const char *s = tools, *w;
	size_t n;
	char *tok;

	while ((w = sbx_tool_next(&s, &n)) != NULL) {
		if ((tok = arena_strndup(c->a, w, n)) == NULL)
			return c->nomem = -E_NOMEM;
		memset(&tp, 0, sizeof(tp));
		if (sbx_from_allowed_tools(&tp, c->a, tok) == 0 &&
		    tp.perms != 0 && (tp.perms & ~cap) == 0)
			sbuf_printf(kept, "%s%s", kept->len > 0 ? " " : "", tok);
		else
			sbuf_printf(dropped, "%s%s", dropped->len > 0 ? " " : "",
			    tok);
	}
	return kept->err || dropped->err ? (c->nomem = -E_NOMEM) : 0;
}

/* Write text to dir/file through fsafe (never through a link). Returns 0
 * or an errno for the message. */
static int
write_in(const char *dir, const char *file, const char *text, size_t n)
{
	int dfd, e, en;

	if ((dfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) < 0)
		return errno;
	e = fsafe_write(dfd, file, text, n, 0644, FSAFE_NO_SYMLINKS);
	en = errno;
	close(dfd);
	return e == 0 ? 0 : e == -E_IO ? en : EINVAL;
}

/* The model writes a skill; it may not grant it more than the creating
 * agent has (the entry agent: Read, or what sandbox.allow lists), and
 * the skill waits as SKILL.md.pending until a person enables it, unless
 * the host trusts the model (create_skill: trusted). */
static int
t_create_skill(struct call *c)
{
	const struct tool_env *env = c->env;
	const char *name = arg(c, "name"), *desc = arg(c, "description");
	const char *body = arg(c, "instructions"), *tools = arg(c,
	    "allowed_tools"), *file;
	struct sbuf sb, kept, dropped;
	struct json_writer w;
	struct sbx_policy cp;
	char tmpl[PATH_MAX], *dir, *tdir;
	unsigned cap;
	int bad, e;

	if (!env->create_skill || env->create_dir == NULL)
		return reply(c, 1, "create_skill is disabled by the host "
		    "policy (create_skill: true in skillbox.yaml enables it)");
	if (name == NULL || desc == NULL || body == NULL)
		return reply(c, 1, "'name', 'description' and 'instructions' "
		    "are required strings");
	if (skill_name_rule(name, strlen(name)) != NULL)
		return reply(c, 1, "bad name '%s': %s", name,
		    skill_name_rule(name, strlen(name)));
	if (skill_find(env->reg, name) != NULL)
		return reply(c, 1, "a skill named '%s' exists already", name);
	if (env->skill != NULL) {
		tool_policy(env, env->skill, c->a, &cp);
		cap = cp.perms;
	} else
		cap = env->host_allow != 0 ? env->host_allow : SBX_READ;
	cap &= ~env->host_deny;
	sbuf_init(&kept, c->a, 0);
	sbuf_init(&dropped, c->a, 0);
	if (tools != NULL && cap_tools(c, tools, cap, &kept, &dropped) != 0)
		return c->nomem;
	/* The YAML strings are written as JSON strings: valid YAML. */
	sbuf_init(&sb, c->a, 0);
	json_writer_init(&w, &sb);
	sbuf_adds(&sb, "---\nname: ");
	sbuf_adds(&sb, name);
	sbuf_adds(&sb, "\ndescription: ");
	json_put_str(&w, desc);
	/* Always written: without the key a skill may run command lines. */
	json_writer_init(&w, &sb);
	sbuf_adds(&sb, "\nallowed-tools: ");
	json_put_str(&w, kept.len > 0 ? kept.p : "Read");
	sbuf_printf(&sb, "\nmetadata:\n  created-by: model\n---\n%s\n", body);
	if (sb.err)
		return c->nomem = -E_NOMEM;
	/* Validated in a folder of its own before it goes anywhere a
	 * registry scan could see it. */
	snprintf(tmpl, sizeof(tmpl), "%s/skillbox-new.XXXXXX",
	    env->base != NULL && env->base->tmp_parent != NULL ?
	    env->base->tmp_parent : "/tmp");
	if (mkdtemp(tmpl) == NULL)
		return reply(c, 1, "cannot make a temporary folder: %s",
		    strerror(errno));
	if ((tdir = arena_printf(c->a, "%s/%s", tmpl, name)) == NULL) {
		sbx_rmtree(tmpl);
		return c->nomem = -E_NOMEM;
	}
	e = mkdir(tdir, 0700) != 0 ? errno : write_in(tdir, "SKILL.md",
	    sb.p, sb.len);
	bad = e == 0 ? skill_validate_dir(c->a, tdir, NULL, NULL) : 0;
	sbx_rmtree(tmpl);
	if (e != 0)
		return reply(c, 1, "cannot write the skill: %s", strerror(e));
	if (bad != 0)
		return reply(c, 1, "the skill is not valid (%d problems; "
		    "check the name and description lengths)", bad);
	file = env->create_skill == 2 ? "SKILL.md" : "SKILL.md.pending";
	if ((dir = arena_printf(c->a, "%s/%s", env->create_dir, name)) ==
	    NULL)
		return c->nomem = -E_NOMEM;
	if (mkdir(dir, 0755) != 0)
		return reply(c, 1, "cannot create %s: %s", dir,
		    strerror(errno));
	if ((e = write_in(dir, file, sb.p, sb.len)) != 0) {
		rmdir(dir);
		return reply(c, 1, "cannot write %s/%s: %s", dir, file,
		    strerror(e));
	}
	if (env->create_skill == 2)
		return reply(c, 0, "created skill %s in %s%s%s; it is available "
		    "from the next turn", name, dir, dropped.len > 0 ?
		    "; not granted (more than the creating agent has): " : "",
		    dropped.len > 0 ? dropped.p : "");
	return reply(c, 0, "created skill %s in %s%s%s; it is off until a "
	    "person enables it (skillbox skills enable %s)", name, dir,
	    dropped.len > 0 ? "; not granted (more than the creating agent "
	    "has): " : "", dropped.len > 0 ? dropped.p : "", name);
}

/* see tool.h */
int
tool_call(const struct tool_env *env, struct arena *a, enum tool_id id,
    const char *args, size_t args_len, struct tool_out *out)
{
	struct call c;
	int e;

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	defs_load();
	c.env = env;
	c.a = a;
	c.out = out;
	if (args_len == 0)
		args = "{}", args_len = 2;
	e = json_parse(a, args, args_len, 4096, &c.d);
	if (e == -E_NOMEM)
		return e;
	if (e != 0 || c.d.t[0].type != JSON_OBJ)
		return reply(&c, 1, "the arguments are not a JSON object "
		    "(got: %.120s); call %s again with valid JSON matching "
		    "its schema", args, defs[id].name) ? -E_NOMEM : 0;
	switch (id) {
	case T_RUN_COMMAND_LINE: e = t_run_command_line(&c); break;
	case T_LOAD_SKILL_RESOURCES:
		e = t_read_skill_file(&c, "references/");
		break;
	case T_READ_SKILL_FILE: e = t_read_skill_file(&c, NULL); break;
	case T_LIST_SKILL_FILES: {
		const struct skill *sk = skill_of(&c);

		e = sk != NULL ? t_list_files(&c, sk, NULL) : 0;
		break;
	}
	case T_RUN_SKILL_SCRIPT: e = t_run_skill_script(&c); break;
	case T_LIST_SKILLS: e = t_list_skills(&c); break;
	case T_ACTIVATE_SKILL: e = t_activate(&c); break;
	case T_WRITE_FILE: e = t_write_file(&c); break;
	case T_READ_FILE: e = t_read_file(&c); break;
	case T_LIST_WORKSPACE_FILES: e = t_list_ws(&c); break;
	case T_GET_FILE_INFO: e = t_file_info(&c); break;
	case T_CREATE_SKILL: e = t_create_skill(&c); break;
	case T_HAND_BACK:
	case T_FINAL_ANSWER:
	case T_CANNOT_COMPLETE: {
		const char *k = id == T_HAND_BACK ? "result" :
		    id == T_FINAL_ANSWER ? "answer" : "reason";
		const char *r = arg(&c, k);

		e = r != NULL ? reply(&c, 0, "%s", r) :
		    reply(&c, 1, "'%s' is required", k);
		break;
	}
	default:
		e = reply(&c, 1, "unknown tool");
	}
	if (c.nomem)
		return -E_NOMEM;
	if (e == 0 && out->text == NULL)
		return reply(&c, 1, "no result") ? -E_NOMEM : 0;
	return e;
}
