/* arena.c - the memory budget: one reserved region, a heap, and arenas.
 *
 * The heap is a boundary-tag allocator with segregated free lists (one per
 * power of two, first fit inside the list, a bitmap to find the next
 * non-empty list) and immediate coalescing. The region is mapped with
 * MAP_NORESERVE and carved from its low end first, so only pages that were
 * used count toward the resident set.
 */
#include "base/arena.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define ALIGN		(2 * sizeof(size_t))
#define HDR		(2 * sizeof(size_t))
#define USED		((size_t)1)
#define NBINS		(sizeof(size_t) * 8)
#define CHUNK		4096

/* A block: header, then payload. prev_size is the size of the block just
 * below (0 for the first). A free block keeps its list links in the payload. */
struct blk {
	size_t		 prev_size;
	size_t		 size;		/* whole block incl. header; low bit USED */
	struct blk	*next;		/* free blocks only */
	struct blk	*prev;
};

#define MINBLK	((sizeof(struct blk) + ALIGN - 1) & ~(ALIGN - 1))

static struct {
	unsigned char	*base;
	unsigned char	*end;		/* the zero-sized end marker lives here */
	size_t		 budget, limit, used, peak, failed;
	size_t		 failed_used;	/* bytes in use at the last failure */
	unsigned long	 nfail;
	size_t		 bitmap;
	struct blk	*bins[NBINS];
} heap;

static size_t	bsize(const struct blk *b) { return b->size & ~USED; }
static struct blk *bnext(struct blk *b)
{
	return (struct blk *)((unsigned char *)b + bsize(b));
}

static unsigned
bin_of(size_t n)
{
	return (unsigned)(sizeof(size_t) * 8 - 1 - (unsigned)__builtin_clzl(n));
}

static void
bin_put(struct blk *b)
{
	unsigned i = bin_of(bsize(b));

	b->prev = NULL;
	b->next = heap.bins[i];
	if (b->next != NULL)
		b->next->prev = b;
	heap.bins[i] = b;
	heap.bitmap |= (size_t)1 << i;
}

static void
bin_take(struct blk *b)
{
	unsigned i = bin_of(bsize(b));

	if (b->prev != NULL)
		b->prev->next = b->next;
	else
		heap.bins[i] = b->next;
	if (b->next != NULL)
		b->next->prev = b->prev;
	if (heap.bins[i] == NULL)
		heap.bitmap &= ~((size_t)1 << i);
}

/* see arena.h */
int
mem_init(size_t budget)
{
	struct blk *b, *endb;
	void *p;

	if (heap.base != NULL || budget < MEM_MIN || budget > MEM_MAX)
		return -E_INVAL;
	budget &= ~(ALIGN - 1);
	p = mmap(NULL, budget, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -E_NOMEM;
	heap.base = p;
	heap.budget = budget;
	heap.end = heap.base + budget - HDR;
	b = (struct blk *)heap.base;
	b->prev_size = 0;
	b->size = budget - HDR;
	endb = (struct blk *)heap.end;
	endb->prev_size = b->size;
	endb->size = USED;		/* size 0, never free: stops coalescing */
	bin_put(b);
	return 0;
}

size_t mem_budget(void) { return heap.budget; }
size_t mem_used(void) { return heap.used; }
size_t mem_peak(void) { return heap.peak; }
size_t mem_failed_request(void) { return heap.failed; }
size_t mem_failed_used(void) { return heap.failed_used; }
void mem_set_limit(size_t n) { heap.limit = n; }
unsigned long mem_fail_count(void) { return heap.nfail; }

/* Record a request that cannot be served, with the use at that moment:
 * by the time the caller reports it, its cleanup has freed memory. */
static void *
refuse(size_t n)
{
	heap.failed = n;
	heap.failed_used = heap.used;
	heap.nfail++;
	errno = ENOMEM;
	return NULL;
}

static struct blk *
find_fit(size_t need)
{
	unsigned i = bin_of(need);
	size_t mask;
	struct blk *b;

	for (b = heap.bins[i]; b != NULL; b = b->next)
		if (bsize(b) >= need)
			return b;
	if (i + 1 >= NBINS)
		return NULL;
	mask = heap.bitmap & ~(((size_t)2 << i) - 1);
	if (mask == 0)
		return NULL;
	return heap.bins[__builtin_ctzl(mask)];
}

/* Cut b to `need` bytes when the rest can stand as a free block. */
static void
split(struct blk *b, size_t need)
{
	size_t sz = bsize(b), flag = b->size & USED;
	struct blk *r, *n;

	if (sz - need < MINBLK)
		return;
	b->size = need | flag;
	r = bnext(b);
	r->prev_size = need;
	r->size = sz - need;
	n = bnext(r);
	n->prev_size = r->size;
	if (!(n->size & USED)) {	/* merge with a free block above */
		bin_take(n);
		r->size += bsize(n);
		bnext(r)->prev_size = r->size;
	}
	bin_put(r);
}

static size_t
need_for(size_t n)
{
	if (n > heap.budget)
		return 0;
	n = (n + HDR + ALIGN - 1) & ~(ALIGN - 1);
	return n < MINBLK ? MINBLK : n;
}

static void
account(long delta)
{
	heap.used += delta;
	if (heap.used > heap.peak)
		heap.peak = heap.used;
}

/* see arena.h */
void *
mem_alloc(size_t n)
{
	size_t need;
	struct blk *b;

	if (heap.base == NULL && mem_init(MEM_DEFAULT) != 0)
		return NULL;
	if ((need = need_for(n)) == 0 ||
	    (heap.limit != 0 && heap.used + need > heap.limit) ||
	    (b = find_fit(need)) == NULL)
		return refuse(n);
	bin_take(b);
	split(b, need);
	b->size |= USED;
	account((long)bsize(b));
	return (unsigned char *)b + HDR;
}

/* see arena.h */
void
mem_free(void *p)
{
	struct blk *b, *n, *pb;

	if (p == NULL)
		return;
	b = (struct blk *)((unsigned char *)p - HDR);
	b->size &= ~USED;
	account(-(long)bsize(b));
	n = bnext(b);
	if (!(n->size & USED)) {
		bin_take(n);
		b->size += bsize(n);
	}
	if ((unsigned char *)b != heap.base) {
		pb = (struct blk *)((unsigned char *)b - b->prev_size);
		if (!(pb->size & USED)) {
			bin_take(pb);
			pb->size += bsize(b);
			b = pb;
		}
	}
	bnext(b)->prev_size = bsize(b);
	bin_put(b);
}

/* see arena.h */
void *
mem_realloc(void *p, size_t n)
{
	struct blk *b, *nb;
	size_t need, have;
	void *q;

	if (p == NULL)
		return mem_alloc(n);
	if (n == 0) {
		mem_free(p);
		return NULL;
	}
	b = (struct blk *)((unsigned char *)p - HDR);
	have = bsize(b);
	if ((need = need_for(n)) == 0 ||
	    (heap.limit != 0 && need > have && heap.used + need - have > heap.limit))
		return refuse(n);
	if (need <= have) {
		split(b, need);
		account((long)bsize(b) - (long)have);
		return p;
	}
	nb = bnext(b);
	if (!(nb->size & USED) && have + bsize(nb) >= need) {
		bin_take(nb);
		b->size += bsize(nb);
		bnext(b)->prev_size = bsize(b);
		split(b, need);
		account((long)bsize(b) - (long)have);
		return p;
	}
	if ((q = mem_alloc(n)) == NULL)
		return NULL;
	memcpy(q, p, have - HDR);
	mem_free(p);
	return q;
}

/* see arena.h */
int
mem_parse_size(const char *s, size_t *out)
{
	unsigned long long v = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -E_INVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (unsigned)(*p - '0');
		if (v > (1ull << 40))
			return -E_INVAL;
	}
	switch (*p) {
	case 'k': case 'K': v <<= 10; p++; break;
	case 'm': case 'M': v <<= 20; p++; break;
	case 'g': case 'G': v <<= 30; p++; break;
	}
	if (*p == 'i' || *p == 'B')	/* accept KiB, MB, ... */
		p++;
	if (*p == 'B')
		p++;
	if (*p != '\0' || v > (size_t)-1)
		return -E_INVAL;
	*out = (size_t)v;
	return 0;
}

/* Arenas: a stack of chunks taken from the heap. */
struct arena_chunk {
	struct arena_chunk	*prev;
	size_t			 cap, used;
	/* data follows, aligned to ALIGN */
};

#define CHDR	((sizeof(struct arena_chunk) + ALIGN - 1) & ~(ALIGN - 1))

void
arena_init(struct arena *a, const char *name)
{
	a->cur = NULL;
	a->name = name;
}

static void *
arena_get(struct arena *a, size_t n, size_t align)
{
	struct arena_chunk *c = a->cur;
	size_t off, cap;

	if (c != NULL) {
		off = (c->used + align - 1) & ~(align - 1);
		if (off <= c->cap && c->cap - off >= n) {
			c->used = off + n;
			return (unsigned char *)c + CHDR + off;
		}
	}
	if (heap.base == NULL && mem_init(MEM_DEFAULT) != 0)
		return NULL;
	if (n > heap.budget)
		return refuse(n);
	cap = n <= CHUNK - CHDR - HDR ? CHUNK - CHDR - HDR : n;
	if ((c = mem_alloc(CHDR + cap)) == NULL)
		return NULL;
	c->prev = a->cur;
	c->cap = cap;
	c->used = n;
	a->cur = c;
	return (unsigned char *)c + CHDR;
}

void *
arena_alloc(struct arena *a, size_t n)
{
	return arena_get(a, n, 8);
}

void *
arena_zalloc(struct arena *a, size_t n)
{
	void *p = arena_get(a, n, 8);

	if (p != NULL)
		memset(p, 0, n);
	return p;
}

char *
arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *p;

	if (n == (size_t)-1 || (p = arena_get(a, n + 1, 1)) == NULL)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *
arena_strdup(struct arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

char *
arena_printf(struct arena *a, const char *fmt, ...)
{
	va_list ap;
	char *p;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || (p = arena_get(a, (size_t)n + 1, 1)) == NULL)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

struct arena_mark
arena_mark(struct arena *a)
{
	struct arena_mark m = { a->cur, a->cur != NULL ? a->cur->used : 0 };

	return m;
}

void
arena_reset_to(struct arena *a, struct arena_mark m)
{
	struct arena_chunk *c;

	while (a->cur != NULL && a->cur != m.chunk) {
		c = a->cur;
		a->cur = c->prev;
		mem_free(c);
	}
	if (a->cur != NULL)
		a->cur->used = m.used;
}

void
arena_reset(struct arena *a)
{
	struct arena_mark m = { NULL, 0 };

	arena_reset_to(a, m);
}

size_t
arena_size(const struct arena *a)
{
	const struct arena_chunk *c;
	size_t n = 0;

	for (c = a->cur; c != NULL; c = c->prev)
		n += CHDR + c->cap;
	return n;
}

#ifndef MEM_NO_LIBC
/* libc's allocator, replaced so that libc and libfyaml allocate inside the
 * budget. musl allows this for a static link. */
void *
malloc(size_t n)
{
	return mem_alloc(n);
}

void
free(void *p)
{
	mem_free(p);
}

void *
realloc(void *p, size_t n)
{
	return mem_realloc(p, n);
}

void *
calloc(size_t m, size_t n)
{
	void *p;

	if (n != 0 && m > (size_t)-1 / n) {
		errno = ENOMEM;
		return NULL;
	}
	if ((p = mem_alloc(m * n)) != NULL)
		memset(p, 0, m * n);
	return p;
}

void *
aligned_alloc(size_t al, size_t n)
{
	if (al > ALIGN) {
		errno = EINVAL;
		return NULL;
	}
	return mem_alloc(n);
}

int
posix_memalign(void **res, size_t al, size_t n)
{
	if (al > ALIGN)
		return EINVAL;
	if ((*res = mem_alloc(n)) == NULL)
		return ENOMEM;
	return 0;
}

size_t
malloc_usable_size(void *p)
{
	return p == NULL ? 0 :
	    bsize((struct blk *)((unsigned char *)p - HDR)) - HDR;
}
#endif
