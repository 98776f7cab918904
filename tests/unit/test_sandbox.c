/* test_sandbox.c - allowed-tools mapping, Bash(...) rules, output caps,
 * SHA-256 vectors, the audit record, and a few real runs (the escape
 * battery is tests/e2e/sandbox.test). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fmt/json.h"
#include "sandbox/sandbox.h"
#include "sandbox/sandbox_int.h"
#include "base/sha256.h"
#include "base/str.h"
#include "unit.h"

static void
allowed_tools(void)
{
	struct sbx_policy p;

	sbx_policy_defaults(&p);
	T_EQI(sbx_from_allowed_tools(&p, &t_arena, "Read Grep Glob LS"), 0);
	T_EQI(p.perms, SBX_READ);
	sbx_policy_defaults(&p);
	T_EQI(sbx_from_allowed_tools(&p, &t_arena, "Edit"), 0);
	T_EQI(p.perms, SBX_WRITE | SBX_READ);
	sbx_policy_defaults(&p);
	T_EQI(sbx_from_allowed_tools(&p, &t_arena, "webfetch,WebSearch"), 0);
	T_EQI(p.perms, SBX_NET);
	sbx_policy_defaults(&p);
	T_EQI(sbx_from_allowed_tools(&p, &t_arena, "Bash"), 0);
	T_EQI(p.perms, SBX_SHELL);
	T_EQI(p.nshell_allow, 0);
	sbx_policy_defaults(&p);
	T_EQI(sbx_from_allowed_tools(&p, &t_arena,
	    "Read, Bash(git:*), Bash(npm run test:*) mcp__x Task"), 2);
	T_EQI(p.perms, SBX_READ | SBX_SHELL);
	T_EQI(p.nshell_allow, 2);
	T_EQS(p.shell_allow[0], "git:*");
	T_EQS(p.shell_allow[1], "npm run test:*");
	/* Plain Bash next to a rule: any command line. */
	sbx_policy_defaults(&p);
	T_EQI(sbx_from_allowed_tools(&p, &t_arena, "Bash(git:*) Terminal"), 0);
	T_EQI(p.nshell_allow, 0);
	sbx_policy_defaults(&p);
	T_EQI(sbx_from_allowed_tools(&p, &t_arena, NULL), 0);
	T_EQI(p.perms, 0);
	sbx_policy_defaults(&p);
	T_EQI(sbx_from_allowed_tools(&p, &t_arena, "Bash(a:*) Bash(b:*) "
	    "Bash(c:*) Bash(d:*) Bash(e:*) Bash(f:*) Bash(g:*) Bash(h:*) "
	    "Bash(i:*) Bash(j:*) Bash(k:*) Bash(l:*) Bash(m:*) Bash(n:*) "
	    "Bash(o:*) Bash(p:*) Bash(q:*)"), -E_LIMIT);
	/* Read(PATH ...) and Group(NAME ...): what a skill reads. */
	sbx_policy_defaults(&p);
	T_EQI(sbx_from_allowed_tools(&p, &t_arena, "Read(/) Bash"), 0);
	T_EQI(p.perms, SBX_READ | SBX_SHELL);
	T_EQI(p.nreads, 1);
	T_EQS(p.reads[0], "/");
	sbx_policy_defaults(&p);
	T_EQI(sbx_from_allowed_tools(&p, &t_arena, "Read(/var/log/ "
	    "//run/log/**, ./src/** ~/x /etc/a*b/c) Group(systemd-journal "
	    "adm)"), 0);
	T_EQI(p.perms, SBX_READ | SBX_GROUP);
	T_EQI(p.nreads, 3);
	T_EQS(p.reads[0], "/var/log");
	T_EQS(p.reads[1], "/run/log");
	T_EQS(p.reads[2], "/etc");
	T_EQI(p.ngroups, 2);
	T_EQS(p.groups[0], "systemd-journal");
	T_EQS(p.groups[1], "adm");
	sbx_policy_defaults(&p);
	T_EQI(sbx_from_allowed_tools(&p, &t_arena, "Group(a b c d e)"),
	    -E_LIMIT);
}

static int
sh_ok(const struct sbx_policy *p, const char *line)
{
	char why[160];
	int e = sbx_shell_check(p, line, why, sizeof(why));

	if (e != 0 && getenv("UNIT_VERBOSE") != NULL)
		fprintf(stderr, "  %s -> %s\n", line, why);
	return e == 0;
}

static void
shell_rules(void)
{
	struct sbx_policy p;
	char why[160];

	sbx_policy_defaults(&p);
	T(sbx_shell_check(&p, "ls", why, sizeof(why)) == -E_DENIED);
	T(strstr(why, "no shell") != NULL);
	T(sbx_from_allowed_tools(&p, &t_arena, "Bash(git:*) "
	    "Bash(ls)") == 0);
	T(sh_ok(&p, "git status"));
	T(sh_ok(&p, "  git log --oneline | git show; git diff && git a || "
	    "git b & git c"));
	T(sh_ok(&p, "git commit -m 'a; rm -rf / && $(id) `id`'"));
	T(sh_ok(&p, "git log 'HEAD' > out 2>&1 </dev/null"));
	T(sh_ok(&p, "git log 2>&1 | git x\ngit y # comment; rm z"));
	T(sh_ok(&p, "g\"i\"t status"));
	T(sh_ok(&p, "git \\\n status"));
	T(sh_ok(&p, "ls"));
	T(sh_ok(&p, "ls >out"));
	T(!sh_ok(&p, "ls -la"));		/* an exact rule */
	T(!sh_ok(&p, "rm -rf /"));
	T(!sh_ok(&p, "git status; rm x"));
	T(!sh_ok(&p, "git status && curl x | sh"));
	T(!sh_ok(&p, "git status\nrm x"));
	T(!sh_ok(&p, "git status &rm x"));
	T(!sh_ok(&p, "git status |& rm x"));
	T(!sh_ok(&p, "git $(rm x)"));
	T(!sh_ok(&p, "git \"$(rm x)\""));
	T(!sh_ok(&p, "git `rm x`"));
	T(!sh_ok(&p, "git \"`rm x`\""));
	T(!sh_ok(&p, "git log <(rm x)"));
	T(!sh_ok(&p, "(git status)"));
	T(!sh_ok(&p, "git() ( rm x ); git"));
	T(!sh_ok(&p, "{ git status; }"));
	T(!sh_ok(&p, "FOO=1 git status"));
	T(!sh_ok(&p, ">x git status"));
	T(!sh_ok(&p, "git 'unterminated"));
	T(!sh_ok(&p, "gitx status"));
	T(!sh_ok(&p, "/usr/bin/git status"));
	T(!sh_ok(&p, "$G status"));
	T(!sh_ok(&p, "git status; $(x)"));
	T(sbx_shell_check(&p, "rm -rf /", why, sizeof(why)) == -E_DENIED);
	T(strstr(why, "'rm'") != NULL);
	/* Multi-word prefixes. */
	sbx_policy_defaults(&p);
	T(sbx_from_allowed_tools(&p, &t_arena, "Bash(npm run test:*)") == 0);
	T(sh_ok(&p, "npm run test -- --watch"));
	T(sh_ok(&p, "npm 'run' test"));
	T(!sh_ok(&p, "npm run build"));
	T(!sh_ok(&p, "npm run"));
}

/* Lines a Bash(git:*) Bash(echo:*) Bash(find:*) skill must not run: the
 * ones that held in the security probe (F7), the bypasses it found, and
 * what else the shells read differently from the checker. */
static const char *const sh_refused[] = {
	/* held */
	"id", "git status; id", "git status\nid", "git status & id",
	"PAGER=id git log", "git $(id)", "git `id`", "git status >(id)",
	"{ id; }", "git status || ! id", "git() { id; }; git",
	"git version $'\\''\nid\n'",
	/* git told to run a command, or to read a configuration that does */
	"git -c alias.x='!id; echo ALIAS-RAN' x",
	"'git' -c alias.y='!echo QUOTED' y",
	"g\\it -c alias.y='!id' y",
	"git --exec-path=/tmp/x x", "git --exec-path /tmp/x x",
	"git -c core.pager=id log", "git -c core.sshCommand=id fetch origin",
	"git -c core.fsmonitor=id status",
	"git --config-env=core.pager=HOME log",
	"git -c protocol.ext.allow=always clone 'ext::sh -c id' x",
	"git -C ../other status", "git -C.. status",
	"git --git-dir=../other/.git status", "git --work-tree=.. status",
	"git --no-pager -c alias.x=!id x", "git -P -calias.x=!id x",
	"git ls-remote --upload-pack='id;' .", "git ls-remote --upl='id;' .",
	"git fetch --upload-pack id origin", "git pull --upload-pack=id",
	"git push --receive-pack=id origin", "git push --exec=id origin",
	"git archive --remote=. --exec=id HEAD", "git archive --ex=id",
	"git rebase -x id HEAD~1", "git rebase -ix id", "git rebase --exec=id",
	"git difftool -x id", "git difftool --extcmd=id",
	"git grep -Oid foo", "git grep -nOid foo",
	"git grep --open-files-in-pager=id foo", "git grep --open=id foo",
	"git clone -u id . x", "git ls-remote --exec=id .",
	"git clone -c core.hooksPath=hooks https://example.org/x.git",
	"git clone --config core.hooksPath=hooks https://example.org/x.git",
	"git clone --template=t . x", "git init --template t",
	"git config alias.x '!id'", "git config core.fsmonitor id",
	"git --help config", "git bisect run id", "git submodule foreach id",
	"git filter-branch --tree-filter id", "git daemon --access-hook=id",
	"git remote-ext . id", "git instaweb --httpd=id",
	"git send-email --sendmail-cmd=id x",
	/* git arguments the checker cannot read as git will */
	"git -$- alias.x='!id' x", "git \"$_\" alias.x='!id' x", "git $X",
	"git log ${X}", "git * x", "git -[c] alias.x=!id x", "git -? x",
	"git {-c,alias.x=!id} x", "git log --format=$HOME",
	"git 2>/dev/null -c alias.x=!id x", "git 12>/dev/null -c x",
	/* find */
	"find . -exec id ;", "find . -execdir id +", "find . -ok id \\;",
	"find . -okdir id ;", "find . -delete", "find . -fprint x",
	"find . -fls x", "find . -e\\xec id ;", "find . '-exec' id ;",
	"find . -name x -exec id {} +", "find . $X", "find . -name *.c",
	/* shell syntax the checker does not follow, or the shells differ on */
	"echo first $'\\''\nid; echo X > file\n'", "echo $'a'",
	"echo $\"a\"", "echo \"$'\"", "echo ${x:-a}", "echo ${x:=a}",
	"echo ${x?a}", "echo ${#x}", "echo \"${x:-'}'}\"", "echo ${x",
	"echo ${}", "echo $[1+1]", "echo $((1+1))",
	"echo a <<E\necho '\nE\nid\necho '", "echo a <<-E\nE",
	"echo a <<<x", "echo a &>/dev/null id", "echo a &>>x",
	"echo a >&& id", "echo a >||id", "echo a <|x", "echo a >#x ; id",
	"echo a >", "echo a > ; id", "echo a >\nid", "echo a 2>",
	"echo a >(id)", "function git { id; }", "exec id", "eval id",
	". ./x", "source x", "command id", "builtin echo x",
	"! git status", "alias git=id", "echo a\\\n;id",
	"echo x\\\n y", "echo \"$\\\n(id)\"", "echo $\\\n(id)",
	"echo $\\\n'a'", "echo a <\\\n<E", "git 2\\\n>x -c a",
	"git status\n# c\nid", "git status;#\nid", "time id", "(git status)",
};

/* Lines that skill may run. */
static const char *const sh_accepted[] = {
	"git status", "git log --oneline -5", "git diff HEAD~1 -- file",
	"git --no-pager log -1", "git -P show HEAD", "git --version",
	"git switch -c feature", "git log -c -C", "git commit -C HEAD",
	"git commit -m 'cost $5 (or `id`; $(id))'", "git add -u",
	"git push -u origin main", "git log --format='%h %s' -3",
	"git show 'HEAD@{1}'", "git diff --color-words --exit-code",
	"git clone --depth 1 https://example.org/x.git",
	"git grep -n foo -- '*.c'", "git grep -e Opt",
	"git log 2>&1 | git log\ngit status # comment; id",
	"git status >out 2>/dev/null </dev/null", "git log >>out 2>&1",
	"git log >|out", "git log > 'out file'", "git help config",
	"echo $HOME ${HOME} \"$PATH\" *.c ~ $1 $@ {a,b}", "echo 'a $(id)'",
	"echo a > file", "echo a 2>&1 >/dev/null", "echo a <>x", "echo a >&-",
	"echo a 12>x", "echo x \\\n y", "echo a#b", "echo '$'\"'\"",
	"find . -name '*.c' -type f", "find . -executable -print",
	"find . -newer x -print0", "find . -name \"*.log\" -mtime +7",
};

static void
shell_strict(void)
{
	struct sbx_policy p;
	char why[160];
	size_t i;

	sbx_policy_defaults(&p);
	T(sbx_from_allowed_tools(&p, &t_arena, "Bash(git:*) Bash(echo:*) "
	    "Bash(find:*)") == 0);
	for (i = 0; i < ARRAY_LEN(sh_refused); i++)
		if (sh_ok(&p, sh_refused[i]))
			t_fail(__FILE__, __LINE__, "accepted: %s",
			    sh_refused[i]);
	for (i = 0; i < ARRAY_LEN(sh_accepted); i++)
		if (!sh_ok(&p, sh_accepted[i]))
			t_fail(__FILE__, __LINE__, "refused: %s",
			    sh_accepted[i]);
	/* The reason names what was refused. */
	T(sbx_shell_check(&p, "git -c alias.x=!id x", why, sizeof(why)) ==
	    -E_DENIED);
	T(strstr(why, "'git -c'") != NULL);
	T(sbx_shell_check(&p, "git ls-remote --upl=id .", why,
	    sizeof(why)) == -E_DENIED);
	T(strstr(why, "'git --upl=id'") != NULL);
	T(sbx_shell_check(&p, "echo $'x'", why, sizeof(why)) == -E_DENIED);
	T(strstr(why, "$'") != NULL);
	/* The program may be named by a path or through busybox. */
	sbx_policy_defaults(&p);
	T(sbx_from_allowed_tools(&p, &t_arena, "Bash(/usr/bin/git:*) "
	    "Bash(busybox find:*)") == 0);
	T(sh_ok(&p, "/usr/bin/git status"));
	T(!sh_ok(&p, "/usr/bin/git -c alias.x=!id x"));
	T(sh_ok(&p, "busybox find . -name x"));
	T(!sh_ok(&p, "busybox find . -exec id ;"));
	/* A rule word matches only a word the shell does not expand. */
	sbx_policy_defaults(&p);
	T(sbx_from_allowed_tools(&p, &t_arena, "Bash(l*:*)") == 0);
	T(!sh_ok(&p, "l* x"));
	/* Plain Bash: any line, the checker is not consulted. */
	sbx_policy_defaults(&p);
	T(sbx_from_allowed_tools(&p, &t_arena, "Bash") == 0);
	T(sh_ok(&p, "git -c alias.x='!id' x; echo $'a'"));
}

/*
 * Bypasses of the checker before F7 was fixed, each run under a real shell
 * to show it does what the rules forbid (creates PWNED). The checker must
 * refuse every one. A shell or git that is not installed skips its lines.
 */
static const struct {
	const char	*sh;		/* ash (BusyBox), dash or bash */
	const char	*setup;		/* run first, unchecked, or NULL */
	const char	*line;
} sh_real[] = {
	{ "ash", NULL, "git -c alias.x='!touch PWNED' x" },
	{ "ash", NULL, "'git' -c alias.y='!touch PWNED' y" },
	{ "ash", NULL, "git -$- alias.x='!touch PWNED' x" },
	{ "ash", NULL, "git 2>/dev/null -c alias.x='!touch PWNED' x" },
	{ "ash", NULL, "git ls-remote --upl='touch PWNED;' ." },
	{ "ash", "touch -- -c", "git -[c] alias.x='!touch PWNED' x" },
	{ "ash", "git init -q", "git config alias.x '!touch PWNED'; git x" },
	{ "ash", "git init -q s && git -C s -c user.name=u -c user.email=u@h "
	    "commit -q --allow-empty -m m && mkdir h && printf '#!/bin/sh\n"
	    "touch \"$HOME/PWNED\"\n' >h/post-checkout && "
	    "chmod +x h/post-checkout",
	    "git clone -q -c core.hooksPath=../h s d" },
	{ "ash", NULL, "echo first $'\\''\ntouch PWNED\n'" },
	{ "ash", NULL, "echo a <<E\necho '\nE\ntouch PWNED\necho '" },
	{ "ash", NULL, "echo \"$\\\n(touch PWNED)\"" },
	{ "ash", NULL, "find . -exec touch PWNED ';'" },
	{ "dash", NULL, "echo a &>/dev/null touch PWNED" },
	{ "bash", NULL, "git {-c,alias.x='!touch PWNED'} x" },
};

/* The path of an installed program, in buf, or NULL. */
static const char *
which(const char *prog, char *buf, size_t n)
{
	static const char *const dirs[] = { "/bin", "/usr/bin",
	    "/usr/local/bin" };
	size_t i;

	for (i = 0; i < ARRAY_LEN(dirs); i++) {
		snprintf(buf, n, "%s/%s", dirs[i], prog);
		if (access(buf, X_OK) == 0)
			return buf;
	}
	return NULL;
}

/* Run `SH -c LINE` (SH a path; busybox runs its sh) in dir, with a small
 * environment and no output. */
static void
sh_run(const char *sh, const char *dir, const char *line)
{
	char home[80];
	char *const envp[] = { "PATH=/usr/local/bin:/usr/bin:/bin", home,
	    "GIT_CONFIG_NOSYSTEM=1", NULL };
	const char *argv[] = { sh, "sh", "-c", line, NULL };
	int st, fd;
	pid_t pid;

	snprintf(home, sizeof(home), "HOME=%s", dir);
	if (strstr(sh, "busybox") == NULL)
		argv[1] = "-c", argv[2] = line, argv[3] = NULL;
	if ((pid = fork()) < 0)
		return;
	if (pid == 0) {
		if (chdir(dir) != 0)
			_exit(126);
		if ((fd = open("/dev/null", O_RDWR)) >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
		}
		alarm(20);
		execve(sh, (char *const *)argv, envp);
		_exit(127);
	}
	waitpid(pid, &st, 0);
}

static void
shell_for_real(void)
{
	struct sbx_policy p;
	char dir[64], pwned[80], shp[64], git[64];
	const char *t = getenv("TMPDIR"), *sh;
	size_t i;

	sbx_policy_defaults(&p);
	T(sbx_from_allowed_tools(&p, &t_arena, "Bash(git:*) Bash(echo:*) "
	    "Bash(find:*)") == 0);
	for (i = 0; i < ARRAY_LEN(sh_real); i++) {
		if (sh_ok(&p, sh_real[i].line))
			t_fail(__FILE__, __LINE__, "accepted: %s",
			    sh_real[i].line);
		sh = strcmp(sh_real[i].sh, "ash") == 0 ? "busybox" :
		    sh_real[i].sh;
		if ((sh = which(sh, shp, sizeof(shp))) == NULL ||
		    (strstr(sh_real[i].line, "git") != NULL &&
		    which("git", git, sizeof(git)) == NULL))
			continue;
		snprintf(dir, sizeof(dir), "%s/skillbox-sh.XXXXXX",
		    t != NULL && strlen(t) < 32 ? t : "/tmp");
		if (mkdtemp(dir) == NULL) {
			t_fail(__FILE__, __LINE__, "mkdtemp");
			return;
		}
		if (sh_real[i].setup != NULL)
			sh_run(sh, dir, sh_real[i].setup);
		sh_run(sh, dir, sh_real[i].line);
		snprintf(pwned, sizeof(pwned), "%s/PWNED", dir);
		if (access(pwned, F_OK) != 0)
			t_fail(__FILE__, __LINE__, "%s did not run: %s",
			    sh_real[i].sh, sh_real[i].line);
		sbx_rmtree(dir);
	}
}

static void
feed_all(struct sbx_cap *c, const char *s, size_t n, size_t chunk)
{
	size_t k;

	for (; n > 0; s += k, n -= k) {
		k = MIN(n, chunk);
		sbx_cap_feed(c, s, k);
	}
}

static void
output_cap(void)
{
	char buf[16 + SBX_MARK_MAX + 1], in[100];
	struct sbx_cap c;
	size_t n, chunk;
	int i;

	for (i = 0; i < 100; i++)
		in[i] = (char)('a' + i % 26);
	sbx_cap_init(&c, buf, 16);
	feed_all(&c, in, 16, 3);
	T_EQI(sbx_cap_finish(&c), 16);
	T(memcmp(buf, in, 16) == 0 && buf[16] == '\0');
	for (chunk = 1; chunk <= 100; chunk += 7) {
		sbx_cap_init(&c, buf, 16);
		feed_all(&c, in, 100, chunk);
		n = sbx_cap_finish(&c);
		T_EQI(c.total, 100);
		T_EQS(buf, "abcdefgh\n[... 84 bytes cut ...]\nopqrstuv");
		T_EQI(n, strlen(buf));
	}
	sbx_cap_init(&c, buf, 16);
	feed_all(&c, in, 5, 5);
	T_EQI(sbx_cap_finish(&c), 5);
	T_EQS(buf, "abcde");
	sbx_cap_init(&c, buf, 16);
	feed_all(&c, in, 17, 17);
	sbx_cap_finish(&c);
	T_EQS(buf, "abcdefgh\n[... 1 bytes cut ...]\njklmnopq");
	sbx_cap_init(&c, buf, 0);
	feed_all(&c, in, 10, 4);
	sbx_cap_finish(&c);
	T_EQS(buf, "\n[... 10 bytes cut ...]\n");
}

static const char *
hash(const void *p, size_t n, unsigned times)
{
	static char hex[65];
	struct sha256 c;
	unsigned char d[32];

	sha256_init(&c);
	while (times-- > 0)
		sha256_feed(&c, p, n);
	sha256_final(&c, d);
	sha256_hex(d, hex);
	return hex;
}

static void
sha256_vectors(void)
{
	char a[1000];

	T_EQS(hash("", 0, 1), "e3b0c44298fc1c149afbf4c8996fb924"
	    "27ae41e4649b934ca495991b7852b855");
	T_EQS(hash("abc", 3, 1), "ba7816bf8f01cfea414140de5dae2223"
	    "b00361a396177a9cb410ff61f20015ad");
	T_EQS(hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
	    56, 1), "248d6a61d20638b8e5c026930c3e6039"
	    "a33ce45964ff2167f6ecedd419db06c1");
	T_EQS(hash("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
	    "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu", 112, 1),
	    "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
	memset(a, 'a', sizeof(a));
	T_EQS(hash(a, sizeof(a), 1000), "cdc76e5c9914fb9281a1c7e284d73e67"
	    "f1809a48a497200e046d39ccc7112cd0");
	T_EQS(hash(a, 7, 1), hash(a, 1, 7));	/* split feeds */
}

static void
layer_words(void)
{
	unsigned l;
	const char *bad = NULL;

	T(sbx_layers_parse("landlock,seccomp nnp", &l, &bad) == 0);
	T_EQI(l, SBX_L_LANDLOCK | SBX_L_SECCOMP | SBX_L_NNP);
	T(sbx_layers_parse("", &l, &bad) == 0 && l == 0);
	T(sbx_layers_parse("landlock,bogus", &l, &bad) == -E_INVAL);
	T_EQS(bad, "bogus");
	T_EQS(sbx_layers_str(&t_arena, 0), "none");
	T_EQS(sbx_layers_str(&t_arena, SBX_L_RLIMIT | SBX_L_ENV |
	    SBX_L_SECCOMP_NET), "rlimit env seccomp-net");
	T_EQS(sbx_layer_name(SBX_L_NETNS), "netns");
}

/* A scratch skill folder for the real runs. */
static char skdir[64];

static const char *
skill_dir(void)
{
	const char *t = getenv("TMPDIR");

	snprintf(skdir, sizeof(skdir), "%s/skillbox-unit.XXXXXX",
	    t != NULL && strlen(t) < 32 ? t : "/tmp");
	if (mkdtemp(skdir) == NULL)
		return NULL;
	chmod(skdir, 0755);
	return skdir;
}

static void
run_one(void)
{
	const char *argv[] = { "/bin/sh", "-c", "cat; echo \"$SKILL_NAME\" "
	    ">&2; echo \"[$SECRET_UNIT]\" >&2; exit 3", NULL };
	struct sbx_policy p;
	struct sbx_result r;
	struct json_writer w;
	struct sbuf sb;
	const char *d = skill_dir();

	T(d != NULL);
	if (d == NULL)
		return;
	setenv("SECRET_UNIT", "hunter2", 1);
	sbx_policy_defaults(&p);
	p.skill_name = "unit";
	p.skill_root = d;
	if (getuid() == 0)
		p.uid = p.gid = 65534;
	T(sbx_run(&t_arena, &p, argv, "[1,2]", 5, &r) == 0);
	T_EQI(r.status, 3);
	T_EQI(r.signal, 0);
	T_EQS(r.out, "[1,2]");
	T_EQS(r.err, "unit\n[]\n");
	T(sbx_output_json(&r));
	T(r.layers & SBX_L_ENV && r.layers & SBX_L_RLIMIT);
	T(r.confinement != NULL && strstr(r.confinement, "env") != NULL);
	sbuf_init(&sb, &t_arena, 0);
	json_writer_init(&w, &sb);
	T(sbx_audit_json(&r, &p, argv, "[1,2]", 5, &w) == 0);
	T(json_writer_err(&w) == 0);
	T(strstr(sb.p, "\"skill\":\"unit\"") != NULL);
	T(strstr(sb.p, "\"exit\":3") != NULL);
	/* sha256 of "[1,2]", in and out */
	T(strstr(sb.p, "\"input_sha256\":\"49a64717d5d4cb19952e6eac2946415c"
	    "f6879adacf9908e7d872332d32c6e684\",\"output_sha256\":\"49a647")
	    != NULL);
	T(strstr(sb.p, "\"output_bytes\":5") != NULL);
	/* A named secret passes. */
	p.secrets[p.nsecrets++] = "SECRET_UNIT";
	T(sbx_run(&t_arena, &p, argv, "", 0, &r) == 0);
	T_EQS(r.err, "unit\n[hunter2]\n");
	T(!sbx_output_json(&r));
	unsetenv("SECRET_UNIT");
	rmdir(d);
}

static void
run_limits(void)
{
	const char *loop[] = { "/bin/sh", "-c", "trap '' TERM; while :; do "
	    ":; done", NULL };
	const char *big[] = { "/bin/sh", "-c", "i=0; while [ $i -lt 2000 ]; "
	    "do echo 0123456789abcdef; i=$((i + 1)); done", NULL };
	const char *none[] = { "/nonexistent/x", NULL };
	struct sbx_policy p;
	struct sbx_result r;
	const char *d = skill_dir();

	T(d != NULL);
	if (d == NULL)
		return;
	sbx_policy_defaults(&p);
	p.skill_name = "unit";
	p.skill_root = d;
	if (getuid() == 0)
		p.uid = p.gid = 65534;
	p.timeout_ms = 300;
	T(sbx_run(&t_arena, &p, loop, "", 0, &r) == 0);
	T(r.timed_out);
	T_EQI(r.signal, 9);
	T(r.ms >= 300 && r.ms < 3000);
	p.timeout_ms = 30000;
	p.out_cap = 1000;
	T(sbx_run(&t_arena, &p, big, "", 0, &r) == 0);
	T_EQI(r.out_total, 34000);
	T(r.out_len < 1000 + SBX_MARK_MAX);
	T(strstr(r.out, "[... 33000 bytes cut ...]") != NULL);
	T(!sbx_output_json(&r));
	T(sbx_run(&t_arena, &p, none, "", 0, &r) == 0);
	T_EQI(r.status, 127);
	/* Under qemu-user a shell sets RLIMIT_AS and reports this itself. */
	T(strstr(r.why, "/nonexistent/x") != NULL || strstr(r.err,
	    "/nonexistent/x") != NULL);
	p.disable = SBX_L_ENV;
	p.require = SBX_L_ENV;
	T(sbx_run(&t_arena, &p, none, "", 0, &r) == -E_DENIED);
	T(r.denied);
	T(strstr(r.why, "env") != NULL && strstr(r.why, "switched off"));
	p.disable = p.require = 0;
	p.perms = SBX_SHELL;
	T(sbx_from_allowed_tools(&p, &t_arena, "Bash(echo:*)") == 0);
	T(sbx_run_shell(&t_arena, &p, "echo hi; id", &r) == -E_DENIED);
	T(r.denied && strstr(r.why, "'id'") != NULL);
	T(sbx_run_shell(&t_arena, &p, "echo hi", &r) == 0);
	T_EQS(r.out, "hi\n");
	rmdir(d);
}

/* struct seccomp_data, as the kernel fills it in this process's byte
 * order. */
struct t_sdata {
	int32_t		nr;
	uint32_t	arch;
	uint64_t	ip;
	uint64_t	args[6];
};

/* What the kernel's classic BPF does with the few instructions the
 * filter uses; a load is a native 32-bit word, as in the kernel. */
static uint32_t
bpf_run(const struct sbx_bpf *f, unsigned n, const struct t_sdata *d)
{
	uint32_t a = 0;
	unsigned pc;

	for (pc = 0; pc < n; pc++) {
		switch (f[pc].code) {
		case 0x20:	/* LD W ABS */
			if (f[pc].k > sizeof(*d) - 4)
				return 1;
			memcpy(&a, (const char *)d + f[pc].k, 4);
			break;
		case 0x15:	/* JEQ */
			pc += a == f[pc].k ? f[pc].jt : f[pc].jf;
			break;
		case 0x35:	/* JGE */
			pc += a >= f[pc].k ? f[pc].jt : f[pc].jf;
			break;
		case 0x45:	/* JSET */
			pc += (a & f[pc].k) ? f[pc].jt : f[pc].jf;
			break;
		case 0x06:	/* RET */
			return f[pc].k;
		default:
			return 2;
		}
	}
	return 3;	/* off the end: the kernel refuses such a filter */
}

static uint32_t
bpf_call(const struct sbx_bpf *f, unsigned n, uint32_t arch, long nr,
    uint32_t arg0)
{
	struct t_sdata d;

	memset(&d, 0, sizeof(d));
	d.nr = (int32_t)nr;
	d.arch = arch;
	d.args[0] = arg0;
	return bpf_run(f, n, &d);
}

/* The seccomp filter of this arch, run here: it reads the arch and the
 * first argument at the offsets of this byte order (big-endian MIPS reads
 * the low word of an argument 4 bytes further on). */
static void
seccomp_filter(void)
{
	struct sbx_bpf f[SBX_BPF_MAX];
	const uint32_t allow = 0x7fff0000u, kill = 0x80000000u;
	const uint32_t eperm = 0x50000u | EPERM, eacces = 0x50000u | EACCES;
	uint32_t arch;
	unsigned n;

	if ((n = sbx_seccomp_build(f, 1, 0)) == 0) {
		T(sbx_seccomp_apply(1, 0) == -ENOSYS);
		return;
	}
	T(n <= SBX_BPF_MAX);
	arch = f[1].k;	/* the JEQ after the load of the arch */
	T_EQI(bpf_call(f, n, arch, SYS_getpid, 0), allow);
	T_EQI(bpf_call(f, n, arch ^ 1, SYS_getpid, 0), kill);
	T_EQI(bpf_call(f, n, arch, SYS_ptrace, 0), eperm);
	T_EQI(bpf_call(f, n, arch, SYS_clone, SIGCHLD), allow);
	T_EQI(bpf_call(f, n, arch, SYS_clone, CLONE_NEWUSER | SIGCHLD), eperm);
	T_EQI(bpf_call(f, n, arch, SYS_clone, CLONE_NEWNET), eperm);
	T_EQI(bpf_call(f, n, arch, SYS_clone3, 0), 0x50000u | ENOSYS);
	T_EQI(bpf_call(f, n, arch, SYS_socket, AF_INET), eacces);
	T_EQI(bpf_call(f, n, arch, SYS_socket, AF_UNIX), allow);
	T_EQI(bpf_call(f, n, arch, SYS_socket, AF_NETLINK), allow);
	n = sbx_seccomp_build(f, 0, 1);
	T_EQI(bpf_call(f, n, arch, SYS_socket, AF_INET), allow);
	T_EQI(bpf_call(f, n, arch, SYS_socket, AF_UNIX), eacces);
	n = sbx_seccomp_build(f, 0, 0);
	T_EQI(bpf_call(f, n, arch, SYS_socket, AF_UNIX), allow);
	T_EQI(bpf_call(f, n, arch, SYS_clone, CLONE_NEWUSER), eperm);
}

static const struct unit_case cases[] = {
	{ "allowed_tools", allowed_tools },
	{ "shell_rules", shell_rules },
	{ "shell_strict", shell_strict },
	{ "shell_for_real", shell_for_real },
	{ "output_cap", output_cap },
	{ "sha256_vectors", sha256_vectors },
	{ "layer_words", layer_words },
	{ "seccomp_filter", seccomp_filter },
	{ "run_one", run_one },
	{ "run_limits", run_limits },
};

const struct unit_suite suite_sandbox = { "sandbox", cases,
	ARRAY_LEN(cases) };
