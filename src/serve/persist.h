/* persist.h - sessions kept on flash (PERSIST=1 builds; cfg persist.*).
 *
 * state_dir is RAM on a router (tmpfs): fast, and lost at reboot. When
 * persist.dir is set, persist_sync copies the session files that changed
 * since the last sync (size or mtime differ) from <state_dir>/sessions to
 * <persist.dir>/sessions in one batch: each file to a temporary name, one
 * fsync, a rename; then one fsync of the folder. A sync cut short leaves
 * every file there whole, the old version or the new one. Files gone from
 * state_dir go from flash too. persist.max bounds the bytes kept: the
 * newest sessions that fit in it are kept, older ones are left out (and
 * removed from flash). persist_restore copies them back into an empty
 * state_dir (the first start after a boot).
 *
 * JOBS builds keep the job board too: its journal, <state_dir>/jobs/
 * journal, is copied the same way when it changed (under the board's
 * lock, outside persist.max, never removed from flash by a sync), and
 * restored when state_dir has no journal, sessions or not.
 */
#ifndef PERSIST_H
#define PERSIST_H

#include "base/arena.h"
#include "agent/cfg.h"

struct persist_stats {
	long long	 time;		/* when it ran (0: never) */
	unsigned	 files;		/* written (restored) */
	unsigned	 deleted;	/* removed from flash */
	unsigned	 skipped;	/* sessions over persist.max */
	unsigned	 sessions;	/* sessions kept on flash */
	unsigned long long bytes;	/* written */
	unsigned long long fsyncs;
	unsigned long long kept;	/* bytes of the kept sessions */
	/* since state_dir was made (its stats file, persist_last) */
	unsigned long long syncs, total_bytes, total_fsyncs;
};

/* One sync; `dry`: count what it would write, write nothing. 0, -E_IO
 * (errno kept; what was synced before it stays), -E_NOMEM. */
int	persist_sync(const struct cfg *c, struct arena *a, int dry,
	    struct persist_stats *st);

/* Copy the sessions on flash into state_dir when it has none (and the
 * job board's journal when it has none). 0 (st->files restored), -E_BUSY
 * (state_dir has sessions and a board: nothing done), -E_IO, -E_NOMEM. */
int	persist_restore(const struct cfg *c, struct arena *a,
	    struct persist_stats *st);

/* The last sync's figures and the totals, from state_dir. */
void	persist_last(const struct cfg *c, struct arena *a,
	    struct persist_stats *st);

/* For serve: restore (`what` 0) or sync (1), said on stderr, memory given
 * back. Nothing when persistence is off. */
void	persist_run(const struct cfg *c, struct arena *a, int what);

#endif
