/* arena.h - the process memory budget, the heap inside it, and arenas.
 *
 * All memory skillbox uses comes from one region reserved at start
 * (mem_init). Inside it a small general-purpose heap serves malloc() and
 * friends, so libc and libfyaml stay inside the budget too; arenas take
 * chunks from the same heap and hand out bump-allocated memory with marks
 * and resets. Exhausting the budget makes allocations return NULL; nothing
 * in here aborts.
 */
#ifndef ARENA_H
#define ARENA_H

#include "base/base.h"

#define MEM_DEFAULT	(2u << 20)	/* default budget when none is given */
#define MEM_MIN		(64u << 10)
#define MEM_MAX		((size_t)1 << 30)

/* Reserve the budget. Call once, before anything allocates; a heap that is
 * used before mem_init() reserves MEM_DEFAULT by itself. Returns 0, -E_INVAL
 * (outside MEM_MIN..MEM_MAX, or already reserved) or -E_NOMEM. */
int	mem_init(size_t budget);

/* The budget, bytes in use now, and the most ever in use. */
size_t	mem_budget(void);
size_t	mem_used(void);
size_t	mem_peak(void);

/* Lower the usable budget to n bytes (0 restores the whole budget), so
 * tests can run out of memory at chosen points. */
void	mem_set_limit(size_t n);

/* How many allocations have failed since start (to tell a parser's "out of
 * memory" from its "bad input" when the parser cannot say which). */
unsigned long mem_fail_count(void);

/* The size of the last request that could not be served (0 if none), and
 * the bytes that were in use when it failed. */
size_t	mem_failed_request(void);
size_t	mem_failed_used(void);

/* Heap inside the budget. mem_alloc returns NULL when the budget is spent. */
void	*mem_alloc(size_t n);
void	*mem_realloc(void *p, size_t n);
void	 mem_free(void *p);

/* Parse a size such as "1048576", "512k", "2M" (powers of 1024).
 * Returns 0 or -E_INVAL. */
int	mem_parse_size(const char *s, size_t *out);

struct arena_chunk;

/* A bump allocator with one lifetime (process, session, turn). */
struct arena {
	struct arena_chunk	*cur;
	const char		*name;		/* "perm", "sess", "turn" */
};

struct arena_mark {
	struct arena_chunk	*chunk;
	size_t			 used;
};

void	 arena_init(struct arena *a, const char *name);

/* n bytes aligned to 8, or NULL when the budget is spent. */
void	*arena_alloc(struct arena *a, size_t n);
void	*arena_zalloc(struct arena *a, size_t n);

/* Copies, NUL-terminated, alignment 1. NULL when the budget is spent. */
char	*arena_strndup(struct arena *a, const char *s, size_t n);
char	*arena_strdup(struct arena *a, const char *s);
char	*arena_printf(struct arena *a, const char *fmt, ...) ATTR_PRINTF(2, 3);

struct arena_mark arena_mark(struct arena *a);

/* Release everything allocated since the mark (or everything). */
void	arena_reset_to(struct arena *a, struct arena_mark m);
void	arena_reset(struct arena *a);

/* Bytes held by the arena's chunks (for --stats). */
size_t	arena_size(const struct arena *a);

#endif
