/* fuzz_llm.c - libFuzzer harness for the wire protocol decoders.
 *
 * The first byte picks the protocol (low two bits) and a stream or a
 * whole body (bit 2); the second is the size of the pieces the rest is
 * fed in (0: at once). The same input is decoded again at once: both runs
 * must give the same result, and a finished reply must hold what the
 * decoders promise (tool calls with names and ids, arguments flagged when
 * they are not a JSON object).
 */
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "fmt/json.h"
#include "llm/llm.h"

#define CHECK(c) do {							\
	if (!(c))							\
		abort();						\
} while (0)

static struct arena a;

static void
check(const struct llm_reply *r)
{
	struct json_doc d;
	struct arena_mark m;
	unsigned i;

	CHECK(r->text != NULL && r->text[r->text_len] == '\0');
	for (i = 0; i < r->ncalls; i++) {
		const struct llm_call *c = &r->calls[i];

		CHECK(c->id != NULL && c->name != NULL && c->args != NULL);
		m = arena_mark(&a);
		if (!c->bad_args)
			CHECK(json_parse(&a, c->args, c->args_len, 1u << 16,
			    &d) == 0 && d.t[0].type == JSON_OBJ);
		arena_reset_to(&a, m);
	}
}

static int
same(const struct llm_reply *x, const struct llm_reply *y)
{
	unsigned i;

	if (x->text_len != y->text_len || memcmp(x->text, y->text,
	    x->text_len) != 0 || x->ncalls != y->ncalls || x->stop != y->stop ||
	    x->in_tokens != y->in_tokens || x->out_tokens != y->out_tokens)
		return 0;
	for (i = 0; i < x->ncalls; i++)
		if (strcmp(x->calls[i].id, y->calls[i].id) != 0 ||
		    strcmp(x->calls[i].name, y->calls[i].name) != 0 ||
		    x->calls[i].args_len != y->calls[i].args_len ||
		    memcmp(x->calls[i].args, y->calls[i].args,
		    x->calls[i].args_len) != 0 ||
		    x->calls[i].bad_args != y->calls[i].bad_args)
			return 0;
	return 1;
}

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct llm_proto *const v[] = {
		&llm_openai, &llm_responses, &llm_anthropic, &llm_ollama,
	};
	static int init;
	const struct llm_proto *p;
	struct llm_reply r1, r2;
	char why1[256] = "", why2[256] = "";
	int stream, e1, e2;
	size_t step;

	if (!init) {
		mem_init(64u << 20);
		arena_init(&a, "fuzz");
		init = 1;
	}
	if (size < 2)
		return 0;
	p = v[data[0] & 3];
	stream = !(data[0] & 4);
	step = data[1];
	data += 2, size -= 2;
	e1 = llm_decode(p, &a, stream, (const char *)data, size, step, NULL,
	    &r1, why1, sizeof(why1));
	e2 = llm_decode(p, &a, stream, (const char *)data, size, 0, NULL,
	    &r2, why2, sizeof(why2));
	CHECK(e1 == e2 && strcmp(why1, why2) == 0);
	if (e1 == 0) {
		check(&r1);
		CHECK(same(&r1, &r2));
	}
	arena_reset(&a);
	return 0;
}
