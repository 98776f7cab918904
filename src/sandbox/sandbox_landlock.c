/* sandbox_landlock.c - filesystem and network confinement with Landlock
 * (Linux 5.13+; Documentation/userspace-api/landlock.rst). The constants
 * are defined here: musl's toolchains do not see <linux/landlock.h>. ABI 2
 * adds REFER, 3 TRUNCATE, 4 TCP bind/connect rules, 5 IOCTL_DEV, 6 scopes
 * (abstract unix sockets, signals). Read access is granted by listing what
 * programs need; anything left out (/etc/shadow, /root, /home, other
 * skills, the config) is denied by omission. */
#include "sandbox/sandbox_int.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define LL_VERSION		1u
#define LL_RULE_PATH		1
#define FS_EXECUTE		(1ull << 0)
#define FS_WRITE_FILE		(1ull << 1)
#define FS_READ_FILE		(1ull << 2)
#define FS_READ_DIR		(1ull << 3)
#define FS_REMOVE_DIR		(1ull << 4)
#define FS_REMOVE_FILE		(1ull << 5)
#define FS_MAKE_CHAR		(1ull << 6)
#define FS_MAKE_DIR		(1ull << 7)
#define FS_MAKE_REG		(1ull << 8)
#define FS_MAKE_SOCK		(1ull << 9)
#define FS_MAKE_FIFO		(1ull << 10)
#define FS_MAKE_BLOCK		(1ull << 11)
#define FS_MAKE_SYM		(1ull << 12)
#define FS_REFER		(1ull << 13)	/* ABI 2 */
#define FS_TRUNCATE		(1ull << 14)	/* ABI 3 */
#define FS_IOCTL_DEV		(1ull << 15)	/* ABI 5 */
#define NET_BIND_TCP		(1ull << 0)	/* ABI 4 */
#define NET_CONNECT_TCP		(1ull << 1)
#define SCOPE_ABSTRACT_UNIX	(1ull << 0)	/* ABI 6 */
#define SCOPE_SIGNAL		(1ull << 1)

/* Rights that apply to a file (the others only to folders). */
#define FS_FILE	(FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | \
	FS_IOCTL_DEV)
#define RX	(FS_READ_FILE | FS_READ_DIR | FS_EXECUTE)
#define RO	(FS_READ_FILE | FS_READ_DIR)
#define RW	(FS_READ_FILE | FS_READ_DIR | FS_WRITE_FILE | FS_TRUNCATE | \
	FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE_DIR | FS_MAKE_REG | \
	FS_MAKE_SYM | FS_MAKE_FIFO | FS_MAKE_SOCK | FS_REFER)

struct ll_ruleset {
	uint64_t	fs, net, scoped;
};

struct ll_path {
	uint64_t	access;
	int32_t		fd;
} __attribute__((packed));

/* What programs need to run, resolve names and check certificates: one
 * string of paths, each led by its rights: x = RX, r = RO, f = read the
 * file, w = read, write and truncate it (a table of pointer and rights
 * cost 16 bytes a path). */
#define SYS_RIGHTS(c)	((c) == 'x' ? RX : (c) == 'r' ? RO : (c) == 'f' ? \
	FS_READ_FILE : FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE)
static const char sys_paths[] =
	"x/bin\0" "x/sbin\0" "x/usr\0" "x/lib\0" "x/lib32\0" "x/lib64\0"
	"x/libx32\0" "r/etc/ld.so.cache\0" "r/etc/ld.so.conf\0"
	"r/etc/ld.so.conf.d\0" "x/etc/alternatives\0" "r/etc/passwd\0"
	"r/etc/group\0" "r/etc/nsswitch.conf\0" "r/etc/hosts\0"
	"r/etc/resolv.conf\0" "r/etc/host.conf\0" "r/etc/gai.conf\0"
	"r/etc/services\0" "r/etc/protocols\0" "r/etc/localtime\0"
	"r/etc/timezone\0" "r/etc/hostname\0" "r/etc/os-release\0"
	"r/etc/openwrt_release\0" "r/etc/openwrt_version\0"
	"r/etc/mime.types\0" "r/etc/ssl/certs\0" "r/etc/ssl/cert.pem\0"
	"r/etc/ssl/openssl.cnf\0" "r/etc/ca-certificates\0"
	"r/etc/pki/tls/certs\0" "r/etc/pki/ca-trust\0" "r/etc/python3\0"
	"r/etc/terminfo\0" "r/etc/gitconfig\0" "r/proc\0" "r/sys\0"
	"w/dev/null\0" "f/dev/zero\0" "f/dev/full\0" "f/dev/random\0"
	"f/dev/urandom\0";

/* see sandbox_int.h */
int
sbx_landlock_abi(void)
{
	long v = syscall(__NR_landlock_create_ruleset, NULL, 0, LL_VERSION);

	return v > 0 ? (int)v : -errno;
}

/* Allow `access` beneath path; a path that does not exist is skipped
 * (returns 0) unless must: optional system folders differ per system. */
static int
allow(int rs, const char *path, uint64_t access, uint64_t handled, int must)
{
	struct ll_path pb;
	struct stat st;
	int fd, e = 0;

	if ((fd = open(path, O_PATH | O_CLOEXEC)) < 0)
		return must || errno != ENOENT ? -errno : 0;
	if (fstat(fd, &st) != 0)
		e = -errno;
	else {
		if (!S_ISDIR(st.st_mode))
			access &= FS_FILE;
		pb.access = access & handled;
		pb.fd = fd;
		if (syscall(__NR_landlock_add_rule, rs, LL_RULE_PATH, &pb, 0))
			e = -errno;
	}
	close(fd);
	return e;
}

/* see sandbox_int.h */
int
sbx_landlock_prepare(const char *root, const char *ws, const char *tmp,
    const char *const *reads, unsigned nreads, const char *const *crew,
    unsigned ncrew, int abi, int cut_net)
{
	struct ll_ruleset ra = { (FS_MAKE_SYM << 1) - 1, 0, 0 };
	const char *p;
	unsigned i;
	int rs, e = 0;

	if (abi >= 2)
		ra.fs |= FS_REFER;
	if (abi >= 3)
		ra.fs |= FS_TRUNCATE;
	if (abi >= 5)
		ra.fs |= FS_IOCTL_DEV;
	if (abi >= 4 && cut_net)
		ra.net = NET_BIND_TCP | NET_CONNECT_TCP;
	if (abi >= 6)
		ra.scoped = SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL;
	if ((rs = (int)syscall(__NR_landlock_create_ruleset, &ra, sizeof(ra),
	    0)) < 0)
		return -errno;
	for (p = sys_paths; *p != '\0' && e == 0; p += strlen(p) + 1)
		e = allow(rs, p + 1, SYS_RIGHTS(*p), ra.fs, 0);
	/* A declared path this system lacks (the journal on OpenWrt) is
	 * skipped like an optional system folder. */
	for (i = 0; i < nreads && e == 0; i++)
		e = allow(rs, reads[i], RO, ra.fs, 0);
	for (i = 0; i < ncrew && e == 0; i++)
		e = allow(rs, crew[i], RX, ra.fs, 0);
	if (e == 0)
		e = allow(rs, root, RX, ra.fs, 1);
	if (e == 0 && ws != NULL)
		e = allow(rs, ws, RW, ra.fs, 1);
	if (e == 0 && tmp != NULL)
		e = allow(rs, tmp, RW, ra.fs, 1);
	if (e != 0) {
		close(rs);
		return e;
	}
	return rs;
}

/* see sandbox_int.h */
int
sbx_landlock_restrict(int rs)
{
	int e = syscall(__NR_landlock_restrict_self, rs, 0) != 0 ? -errno : 0;

	close(rs);
	return e;
}
