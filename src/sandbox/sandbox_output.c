/* sandbox_output.c - what a run leaves for its caller: the captured
 * output (head and tail kept), whether stdout is JSON, and the audit
 * record (see sandbox.h and sandbox_int.h). */
#include "sandbox/sandbox.h"

#include <stdio.h>
#include <string.h>

#include "base/sha256.h"
#include "base/str.h"
#include "fmt/json.h"
#include "sandbox/sandbox_int.h"

/* see sandbox_int.h */
void
sbx_cap_init(struct sbx_cap *c, char *buf, size_t cap)
{
	memset(c, 0, sizeof(*c));
	c->buf = buf;
	c->cap = cap;
}

/* see sandbox_int.h */
void
sbx_cap_feed(struct sbx_cap *c, const char *p, size_t n)
{
	size_t h = c->cap / 2, t = c->cap - h, k;
	char *ring = c->buf + h;

	c->total += n;
	if (c->head < h) {
		k = MIN(n, h - c->head);
		memcpy(c->buf + c->head, p, k);
		c->head += k;
		p += k;
		n -= k;
	}
	if (n == 0 || t == 0)
		return;
	if (n > t) {
		p += n - t;
		n = t;
	}
	while (n > 0) {
		k = MIN(n, t - c->pos);
		memcpy(ring + c->pos, p, k);
		c->pos = (c->pos + k) % t;
		c->len = MIN(c->len + k, t);
		p += k;
		n -= k;
	}
}

static void
reverse(char *a, size_t n)
{
	size_t i;
	char x;

	for (i = 0; i < n / 2; i++) {
		x = a[i];
		a[i] = a[n - 1 - i];
		a[n - 1 - i] = x;
	}
}

/* see sandbox_int.h */
size_t
sbx_cap_finish(struct sbx_cap *c)
{
	size_t h = c->cap / 2, cut = c->total - c->head - c->len, m;
	char *ring = c->buf + h, mark[SBX_MARK_MAX];

	if (c->len == c->cap - h && c->pos != 0) {	/* oldest first */
		reverse(ring, c->pos);
		reverse(ring + c->pos, c->len - c->pos);
		reverse(ring, c->len);
		c->pos = 0;
	}
	if (cut == 0) {
		c->buf[c->head + c->len] = '\0';
		return c->head + c->len;
	}
	m = (size_t)snprintf(mark, sizeof(mark), "\n[... %zu bytes cut ...]\n",
	    cut);
	memmove(ring + m, ring, c->len);
	memcpy(ring, mark, m);
	c->buf[h + m + c->len] = '\0';
	return h + m + c->len;
}

/* see sandbox.h */
int
sbx_output_json(const struct sbx_result *r)
{
	struct arena scratch;
	struct json_doc d;
	struct str t;
	int ok;

	if (r->out == NULL || r->out_total != r->out_len)
		return 0;
	t = str_trim((struct str){ r->out, r->out_len });
	if (t.n == 0)
		return 0;
	arena_init(&scratch, "scratch");
	ok = json_parse(&scratch, t.p, t.n, (unsigned)MIN(t.n + 1, 1u << 20),
	    &d) == 0;
	arena_reset(&scratch);
	return ok;
}

/* see sandbox.h */
int
sbx_audit_json(const struct sbx_result *r, const struct sbx_policy *p,
    const char *const *argv, const char *input, size_t input_len,
    struct json_writer *w)
{
	struct sha256 h;
	unsigned char d[32];
	char hex[65];

	json_begin_obj(w);
	json_kstr(w, "skill", p->skill_name != NULL ? p->skill_name : "");
	json_key(w, "command");
	json_begin_arr(w);
	for (; *argv != NULL; argv++)
		json_put_str(w, *argv);
	json_end_arr(w);
	sha256_init(&h);
	sha256_feed(&h, input != NULL ? input : "", input_len);
	sha256_final(&h, d);
	sha256_hex(d, hex);
	json_kstr(w, "input_sha256", hex);
	sha256_hex(r->out_sha256, hex);
	json_kstr(w, "output_sha256", hex);
	json_key(w, "output_bytes");
	json_put_uint(w, r->out_total);
	json_key(w, "exit");
	if (r->status >= 0)
		json_put_int(w, r->status);
	else
		json_put_null(w);
	json_key(w, "signal");
	json_put_int(w, r->signal);
	json_key(w, "timed_out");
	json_put_bool(w, r->timed_out);
	json_key(w, "denied");
	json_put_bool(w, r->denied);
	json_key(w, "ms");
	json_put_int(w, r->ms);
	json_kstr(w, "confinement",
	    r->confinement != NULL ? r->confinement : "none");
	json_end_obj(w);
	return w->sb->err;
}
