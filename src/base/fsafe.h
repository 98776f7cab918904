/* fsafe.h - open and replace files beneath a folder, by descriptor.
 *
 * A path checked by name and then opened by name again can be sent
 * elsewhere in between: anyone who may write the folder swaps a
 * subfolder for a symbolic link. These functions resolve a relative path
 * step by step from a folder's descriptor, so every step is checked on the
 * object that is then used: openat2(2) with RESOLVE_BENEATH where the
 * kernel has it (Linux 5.6), else a walk of openat(O_NOFOLLOW) calls. The
 * folder itself is the caller's: open it once with
 * open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC).
 *
 * The path is relative, at most PATH_MAX - 1 bytes. ".." may be used as
 * long as it never climbs above the folder. Symbolic links are followed
 * only when they stay beneath the folder and are relative; with
 * FSAFE_NO_SYMLINKS none is followed at all (for folders that untrusted
 * code may write, such as the workspace). Magic links (/proc) never are.
 *
 * Errors: -E_DENIED (the path leaves the folder, is absolute, meets a
 * link it may not follow, or more than 40 links; the same whether or not
 * the target exists, so nothing outside can be probed), -E_NOENT,
 * -E_INVAL (empty path, or it names no file where one is needed),
 * -E_LIMIT (longer than PATH_MAX - 1, or deeper than FSAFE_MAX_DEPTH
 * without openat2), -E_IO (anything else; errno says what, e.g. ENOTDIR,
 * EEXIST, ENOSPC). errno is set for every error.
 */
#ifndef FSAFE_H
#define FSAFE_H

#include <stddef.h>

#include "base/base.h"

enum fsafe_how {
	FSAFE_NO_SYMLINKS	= 1 << 0,	/* follow no symbolic link */
	FSAFE_WALK		= 1 << 1,	/* no openat2 (tests) */
};

#define FSAFE_MAX_DEPTH	32	/* folder levels the walk may hold open */

/* Open `rel` beneath the folder dirfd with open(2) `flags` (O_CLOEXEC is
 * added) and `mode` (for O_CREAT). O_NOFOLLOW in flags refuses a link as
 * the last component (-E_DENIED) even where links are followed. Pass
 * O_NONBLOCK when reading: a FIFO then cannot block the open, and the
 * caller's fstat(2) tells what it got. `how` is a mask of enum fsafe_how.
 * Returns the new descriptor (the caller closes it) or a negative -E_*. */
int	fsafe_open(int dirfd, const char *rel, int flags, int mode,
	    unsigned how);

/* Replace the file `rel` beneath dirfd with the n bytes at p: written to
 * a new file with an unpredictable name in the same folder (created
 * exclusively, never through a link, never blocking on a FIFO), synced,
 * then renamed over `rel`. Whatever `rel` was (a file, a link, a FIFO) is
 * replaced, never followed or opened; a folder is not replaced. The
 * folder holding `rel` must exist. On any failure the temporary file is
 * removed and `rel` is unchanged. The new file gets `mode`. Returns 0,
 * -E_INVAL (`rel` ends in "/", "." or ".."), or as fsafe_open(). */
int	fsafe_write(int dirfd, const char *rel, const void *p, size_t n,
	    int mode, unsigned how);

#endif
