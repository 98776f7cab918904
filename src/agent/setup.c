/* setup.c - an agent made (agent_new) and closed, and the accessors of
 * agent.h. */

#include "agent/agent.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent_int.h"
#include "base/log.h"
#include "fmt/fm.h"
#include "net/net.h"
#include "tool/mcp.h"

static int	mcp_init(struct agent *);

static int
only_has(void *ctx, const char *name)
{
	const struct agent *ag = ctx;

	return str_word_in(ag->o.only, name);
}

/* Keep only the skills named in o.only (the array stays sorted). */
void
setup_only_skills(struct agent *ag)
{
	if (ag->o.only != NULL)
		skill_reg_filter(&ag->reg, only_has, ag);
}

static const char *
new_session_name(struct arena *a)
{
	struct utc u;

	utc_split((long long)time(NULL), &u);
	return arena_printf(a, "%04lld%02d%02d-%02d%02d%02d-%d", u.year, u.mon,
	    u.day, u.hour, u.min, u.sec, (int)getpid());
}

static unsigned
perm_of(const char *tool)
{
	struct sbx_policy p;
	struct arena a;
	unsigned v;

	arena_init(&a, "policy");
	sbx_policy_defaults(&p);
	p.perms = 0;
	sbx_from_allowed_tools(&p, &a, tool);
	v = p.perms;
	arena_reset(&a);
	return v;
}

/* Hand the workspace to the scripts' user, so they can write there. One
 * that a user other than root made is a service's (OpenWrt's runs as
 * skillbox): taking it would lock that service out of it. */
static void
give_workspace(struct agent *ag)
{
	char *parent = arena_strdup(ag->perm, ag->workspace), *sl;
	struct stat st;
	int up = ag->o.ws_sub != NULL ? 2 : 1;

	if (stat(ag->workspace, &st) == 0 && st.st_uid != 0 &&
	    st.st_uid != ag->base.uid) {
		log_warn("workspace %s belongs to uid %u (a service's user?): "
		    "left to it, so scripts (uid %u) cannot write there; "
		    "sandbox.user may name that user", ag->workspace,
		    (unsigned)st.st_uid, (unsigned)ag->base.uid);
		return;
	}
	if (chown(ag->workspace, ag->base.uid, ag->base.gid) != 0)
		log_warn("workspace %s: cannot give it to uid %u: %s",
		    ag->workspace, (unsigned)ag->base.uid, strerror(errno));
	/* The user must reach its workspace: let it through the (0700)
	 * state folder (and a token's, the workspace) without reading it. */
	while (up-- > 0 && parent != NULL && (sl = strrchr(parent, '/')) !=
	    NULL && sl != parent) {
		*sl = '\0';
		if (stat(parent, &st) == 0 && !(st.st_mode & S_IXOTH))
			(void)chmod(parent, (st.st_mode & 07777) | S_IXOTH);
	}
}

/* see agent.h */
struct agent *
agent_new(struct arena *perm, const struct cfg *c, const struct agent_opts *o,
    int *err, char *why, size_t whylen)
{
	struct agent *ag;
	struct llm_conf lc;
	const char *key;
	unsigned i;
	int e;

	*err = 0;
	why[0] = '\0';
	if ((ag = arena_zalloc(perm, sizeof(*ag))) == NULL) {
		*err = -E_NOMEM;
		return NULL;
	}
	ag->cfg = c;
	ag->o = *o;
	ag->perm = perm;
	arena_init(&ag->sess[0], "session");
	arena_init(&ag->sess[1], "session");
	arena_init(&ag->turn, "turn");
	ag->tail = &ag->msgs;
	ag->log.fd = -1;
	if (c->workspace != NULL) {
		/* A token's turns share no files with another token's. */
		char *w = o->ws_sub == NULL ? arena_strdup(perm, c->workspace) :
		    arena_printf(perm, "%s/%s", c->workspace, o->ws_sub);

		if (w == NULL) {
			*err = -E_NOMEM;
			return NULL;
		}
		if (slog_mkdirs(w) == 0)
			ag->workspace = w;
		else
			log_warn("workspace %s: %s: the workspace tools are "
			    "off", w, strerror(errno));
	}
	sbx_policy_defaults(&ag->base);
	ag->base.crew = c->crew_dirs;	/* the crew's code, read and run */
	ag->base.ncrew = c->ncrew_dirs;
	for (i = 0; i < c->sandbox.nallow; i++)
		ag->host_allow |= perm_of(c->sandbox.allow[i]);
	for (i = 0; i < c->sandbox.ndeny; i++)
		ag->host_deny |= perm_of(c->sandbox.deny[i]);
	for (i = 0; i < c->sandbox.nsecrets && i < SBX_MAX_SECRETS; i++)
		ag->base.secrets[ag->base.nsecrets++] = c->sandbox.secrets[i];
	for (i = 0; i < c->sandbox.nrequire; i++) {
		const char *bad, *want = strcmp(c->sandbox.require[i],
		    "all") == 0 ? "rlimit nnp landlock landlock-net netns "
		    "seccomp seccomp-net seccomp-unix userdrop privtmp env" :
		    c->sandbox.require[i];
		unsigned bits;

		if (sbx_layers_parse(want, &bits, &bad) == 0)
			ag->base.require |= bits;
	}
	/* As root, scripts run as sandbox.user, or nobody: running them as
	 * root takes an explicit sandbox.user: root, said on every run. */
	if (geteuid() == 0) {
		if (cfg_script_user(c, &ag->base.uid, &ag->base.gid) != 0) {
			snprintf(why, whylen, "sandbox.user '%s': no such user",
			    c->sandbox.user);
			*err = -E_INVAL;
			return NULL;
		}
		ag->base.as_root = ag->base.uid == 0;
		if (!ag->base.as_root && ag->workspace != NULL)
			give_workspace(ag);
	}
	if (ag->base.as_root)
		log_warn("sandbox.user is root: skill scripts and model-written "
		    "command lines run as root, with every capability");
	if ((key = cfg_secret_is_key(c)) != NULL)
		log_warn("sandbox.secrets names %s, the model's own API key: "
		    "every script (and so the model) can read it", key);
	if ((e = skill_reg_init(&ag->reg, c->skills, c->nskills, NULL,
	    NULL)) != 0 || (e = skill_reg_scan(&ag->reg)) != 0) {
		*err = e;
		snprintf(why, whylen, "loading the skills: %s", err_str(e));
		return NULL;
	}
	setup_only_skills(ag);
	gate_init(ag);
	if (strcmp(c->provider, "offline") != 0) {
		llm_conf_defaults(&lc);
		lc.proto = llm_proto_find(c->provider);
		lc.base_url = c->base_url;
		lc.api_key = cfg_api_key(c);
		lc.anthropic_version = c->anthropic_version;
		lc.bearer = c->anthropic_bearer;
		lc.ca_file = c->ca_file;
		lc.connect_ms = (int)c->limits.connect_s * 1000;
		lc.first_ms = (int)c->limits.first_byte_s * 1000;
		lc.idle_ms = (int)c->limits.idle_s * 1000;
		lc.retries = c->limits.retries;
		/* $SKILLBOX_NO_CACHE (set by --no-cache) turns it off */
		if (HAVE_EVAL && c->cache.on && ((key = getenv(
		    "SKILLBOX_NO_CACHE")) == NULL || *key == '\0' ||
		    strcmp(key, "0") == 0)) {
			lc.cache_dir = c->cache.dir;
			lc.cache_max = c->cache.max;
		}
		if (lc.proto == NULL || c->model == NULL || lc.base_url == NULL) {
			*err = -E_INVAL;
			snprintf(why, whylen, "provider %s needs a model and a "
			    "base_url", c->provider);
			return NULL;
		}
		if ((ag->cl = llm_client_new(perm, &lc)) == NULL) {
			*err = -E_NOMEM;
			return NULL;
		}
	}
	if (HAVE_MCP && (e = mcp_init(ag)) != 0) {
		*err = e;
		return NULL;
	}
	ag->session = o->session != NULL ? o->session :
	    new_session_name(perm);
	if (ag->session == NULL) {
		*err = -E_NOMEM;
		return NULL;
	}
	if (!o->ephemeral && c->state_dir != NULL) {
		e = slog_open(&ag->log, perm, c->state_dir, ag->session,
		    o->resume ? SLOG_APPEND : SLOG_CREATE);
		if (e != 0) {
			*err = e;
			snprintf(why, whylen, "session %s: %s", ag->session,
			    e == -E_NOENT ? "no such session" : e == -E_INVAL ?
			    "bad name (letters, digits, . _ -)" :
			    e == -E_BUSY ? "in use by another turn (another "
			    "skillbox has it open)" : strerror(ag->log.err_no));
			return NULL;
		}
		ag->logging = 1;
		if ((e = session_resume(ag, why, whylen)) != 0) {
			*err = e;
			return NULL;
		}
	}
	return ag;
}

const char *
agent_session(const struct agent *ag)
{
	return ag->session;
}

void
agent_usage(const struct agent *ag, unsigned long *in, unsigned long *out,
    double *cost)
{
	*in = ag->in_tok;
	*out = ag->out_tok;
	*cost = ag->cost;
}

/* see agent.h */
int
agent_seed(struct agent *ag, enum llm_role role, const char *text, size_t n)
{
	if (frame_msg(ag, sess(ag), &ag->tail, role, text, n) == NULL)
		return -E_NOMEM;
	return 0;
}

void
agent_entry(struct agent *ag, const char *name, int plan_only)
{
	ag->o.agent = name;
	ag->o.plan_only = plan_only;
}

/* see agent.h */
int
agent_tool(struct agent *ag, const char *skill, const char *tool,
    const char *args, size_t n, struct tool_out *out)
{
	struct frame f;
	struct llm_call c;
	struct tool_env env;
	int id = tool_find(tool), bad;

	arena_reset(&ag->turn);
	memset(out, 0, sizeof(*out));
	memset(&f, 0, sizeof(f));
	memset(&c, 0, sizeof(c));
	out->is_error = 1;
	/* As a model's calls (llm.c): hooks and the tool must read the
	 * same arguments. */
	if ((bad = json_args_check(&ag->turn, args, n)) != 0) {
		out->text = bad == 2 ? "the arguments are not valid JSON: a "
		    "key appears twice in one object" : "the arguments are not "
		    "a JSON object";
		return 0;
	}
	if ((f.skill = tool_skill_find(&ag->reg, skill)) == NULL ||
	    skill_osk(f.skill) != NULL) {
		out->text = "no such skill here";
		return 0;
	}
	if (id != T_RUN_SKILL_SCRIPT && id != T_READ_SKILL_FILE &&
	    id != T_LIST_SKILL_FILES) {
		out->text = "not a tool of a skill";
		return 0;
	}
	f.name = f.skill->name;
	f.a = &ag->turn;
	f.depth = 1;
	c.id = "mcp";
	c.name = tool;
	c.args = args;
	c.args_len = n;
	ag->deadline = net_now_ms() + (long long)ag->cfg->limits.time_s * 1000;
	if (gate(ag, &f, &c, out))
		return 0;
	out->is_error = 0;
	agent_tool_env(ag, &f, &env);
	if (tool_call(&env, &ag->turn, (enum tool_id)id, args, n, out) != 0)
		return -E_NOMEM;
	gate_call_hooked(ag, &f, &c, out);
	return 0;
}

/* 1 when o.only names the configuration's MCP server `name`. */
static int
only_mcp(struct agent *ag, const char *name)
{
	struct arena_mark m = arena_mark(&ag->turn);
	char *w = arena_printf(&ag->turn, "mcp:%s", name);
	int in = w != NULL && str_word_in(ag->o.only, w);

	arena_reset_to(&ag->turn, m);
	return in;
}

/* The MCP servers: the configuration's, then those of the skills' own
 * front-matter (a name already taken is left out). */
static int
mcp_init(struct agent *ag)
{
	const struct cfg *c = ag->cfg;
	struct mcp_server *v, *sv;
	struct mcp_host h;
	struct fm_node *root, *nd;
	struct fm_error fe;
	char *fm, *body, why[200];
	unsigned n = 0, i, k, j, sn, bl, line;
	int e;

	if ((v = arena_zalloc(ag->perm, MCP_MAX_ALL * sizeof(*v))) == NULL)
		return -E_NOMEM;
	/* A limited token (o.only) has those its list names as mcp:NAME. */
	for (i = 0; i < c->nmcp; i++)
		if (ag->o.only == NULL || only_mcp(ag, c->mcp[i].name))
			v[n++] = c->mcp[i];
	for (i = 0; i < ag->reg.n; i++) {
		const struct skill *sk = NULL;
		struct arena_mark m = arena_mark(&ag->turn);

		/* The few MCP skills of an index are read again here. */
		if (!(skill_reg_flags(&ag->reg, i) & SKILL_MCP) || (sk =
		    skill_find(&ag->reg, skill_reg_name(&ag->reg, i))) ==
		    NULL || skill_load(sk, &ag->turn, &fm, &body, &bl) != 0 ||
		    fm == NULL || fm_parse(&ag->turn, fm,
		    strlen(fm), 1, &root, &fe) != 0 || (nd = fm_get(root,
		    "mcp_servers")) == NULL || (e = mcp_parse(ag->perm, nd,
		    sk->dir, sk->name, &sv, &sn, &line, why, sizeof(why))) != 0) {
			arena_reset_to(&ag->turn, m);
			continue;	/* checked when the skill loaded */
		}
		arena_reset_to(&ag->turn, m);
		for (k = 0; k < sn; k++) {
			for (j = 0; j < n && strcmp(v[j].name, sv[k].name); j++)
				;
			if (j < n || n == MCP_MAX_ALL) {
				log_warn("skill %s: MCP server %s left out (%s)",
				    sk->name, sv[k].name, j < n ? "the name is "
				    "taken" : "too many servers");
				continue;
			}
			v[n++] = sv[k];
		}
	}
	if (n == 0)
		return 0;
	memset(&h, 0, sizeof(h));
	h.base = &ag->base;
	h.allow = ag->host_allow;
	h.deny = ag->host_deny;
	h.workspace = ag->workspace;
	h.out_cap = c->limits.output_cap;
	if ((ag->mcp = mcp_new(ag->perm, v, n, &h)) == NULL)
		return -E_NOMEM;
	mcp_ext(ag->mcp, &ag->mcp_ext);
	ag->mcp_ext.next = ag->o.ext;
	ag->o.ext = &ag->mcp_ext;
	return 0;
}

const struct skill_reg *
agent_reg(const struct agent *ag)
{
	return &ag->reg;
}

struct mcp *
agent_mcp(const struct agent *ag)
{
	return HAVE_MCP ? ag->mcp : NULL;
}

/* see agent.h */
void
agent_close(struct agent *ag)
{
	if (HAVE_MCP)
		mcp_close(ag->mcp);
	if (ag->logging)
		slog_sync(&ag->log);
	slog_close(&ag->log);
}

struct llm_client *
agent_llm(struct agent *ag)
{
	return ag->cl;
}

/* see agent.h */
void
agent_free(struct agent *ag)
{
	agent_close(ag);
	llm_disconnect(ag->cl);
	skill_reg_free(&ag->reg);
	arena_reset(&ag->sess[0]);
	arena_reset(&ag->sess[1]);
	arena_reset(&ag->turn);
}
