/* llm.h - a provider-neutral conversation with a model, and one request
 * at a time to any of the wire protocols (one file each: llm_openai.c for
 * Chat Completions and compatible local servers, llm_responses.c,
 * llm_anthropic.c, llm_ollama.c).
 *
 * The protocol modules only translate: a request into JSON, and the reply
 * (streamed events or one JSON body) into calls on a struct llm_acc, which
 * assembles text, tool calls, usage and the stop reason the same way for
 * every protocol. llm.c does the transport: URL, proxy, TLS, retries.
 */
#ifndef LLM_H
#define LLM_H

#include "base/arena.h"
#include "base/base.h"
#include "fmt/json.h"
#include "base/str.h"

#define LLM_MAX_CALLS	32		/* tool calls in one reply */
#define LLM_MAX_TEXT	(4u << 20)	/* reply text bytes */
#define LLM_MAX_ARGS	(256u << 10)	/* one tool call's arguments */
#define LLM_MAX_EVENT	(256u << 10)	/* one SSE event or NDJSON line */

enum llm_role { LLM_USER, LLM_ASSISTANT, LLM_TOOL };

struct llm_call {
	const char	*id;		/* provider's id, or one we made */
	const char	*name;
	const char	*args;		/* JSON text */
	size_t		 args_len;
	int		 bad_args;	/* 1: args are not a JSON object;
					 * 2: an object in them has a key
					 * twice (readers differ on which
					 * one counts) */
};

struct llm_msg {
	enum llm_role	 role;
	const char	*text;		/* user/assistant text; tool output */
	size_t		 text_len;
	struct llm_call	*calls;		/* assistant: tool calls made */
	unsigned	 ncalls;
	const char	*call_id;	/* tool result: the call it answers */
	const char	*tool_name;	/* tool result: the call's tool */
	int		 is_error;	/* tool result reports a failure */
	struct llm_msg	*next;
};

struct llm_tool {
	const char	*name;
	const char	*description;
	const char	*params;	/* JSON Schema object, as text */
};

struct llm_req {
	const char		*model;
	const char		*system;
	struct llm_msg		*msgs;
	const struct llm_tool	*tools;
	unsigned		 ntools;
	unsigned		 max_tokens;	/* 0: the provider's default */
	int			 stream;
};

enum llm_stop {
	LLM_STOP_NONE,		/* none yet (never in a finished reply) */
	LLM_STOP_END,		/* the model finished its answer */
	LLM_STOP_TOOLS,		/* it wants tool results */
	LLM_STOP_LENGTH,	/* max tokens */
	LLM_STOP_OTHER,		/* content filter, refusal, ... */
};

/* Streamed output, as it arrives. Any member may be NULL. */
struct llm_sink {
	void	(*text)(void *ctx, const char *s, size_t n);
	void	(*call)(void *ctx, const struct llm_call *c);
	void	*ctx;
};

/* The reply being assembled. Protocol decoders call the acc_* functions. */
struct llm_acc {
	struct arena	*a;		/* where the finished reply lives */
	struct arena	*tmp;		/* per-event scratch, reset by llm.c */
	struct sbuf	 text;		/* heap-backed */
	struct {
		struct sbuf	 args;	/* heap-backed */
		char		*id, *name;
		int		 used;
	}		 calls[LLM_MAX_CALLS];
	unsigned	 ncalls;
	enum llm_stop	 stop;
	const char	*stop_raw;
	unsigned long	 in_tokens, out_tokens;
	int		 done;		/* the terminal event was seen */
	int		 err;		/* sticky -E_* */
	char		 why[256];	/* the provider's words for an error */
	const struct llm_sink *sink;
	unsigned	 nevents;
};

void	acc_text(struct llm_acc *acc, const char *s, size_t n);
/* Start or update call `idx` (0..LLM_MAX_CALLS-1); id or name may be NULL
 * to keep what is there. */
void	acc_call(struct llm_acc *acc, unsigned idx, const char *id, size_t idn,
	    const char *name, size_t namen);
void	acc_args(struct llm_acc *acc, unsigned idx, const char *s, size_t n);
/* Set a protocol error with the provider's message; sticky. */
void	acc_fail(struct llm_acc *acc, int e, const char *fmt, ...)
	    ATTR_PRINTF(3, 4);
void	acc_stop(struct llm_acc *acc, const char *raw, size_t n);

/* Parse one event or body as a JSON object (tokens in acc->tmp); a
 * malformed one fails the reply. Returns acc->err. */
int	acc_parse(struct llm_acc *acc, const char *s, size_t n,
	    struct json_doc *d);

/* A JSON token as a NUL-terminated copy in acc->tmp, or NULL. */
char	*acc_str(struct llm_acc *acc, const struct json_doc *d, int tok,
	    size_t *len);

/* A reply: text on the heap, owned by the reply (llm_reply_release); the
 * calls and stop reason in the arena given to llm_send or llm_decode. */
struct llm_reply {
	char		*text;
	size_t		 text_len;
	struct llm_call	*calls;
	unsigned	 ncalls;
	enum llm_stop	 stop;
	const char	*stop_raw;
	unsigned long	 in_tokens, out_tokens;
};

/* One wire protocol. */
struct llm_proto {
	const char	*name;
	const char	*path;		/* appended to the base URL */
	const char	*base_url;	/* the provider's own server */
	const char	*key_env;	/* where its key is; NULL: none needed */
	unsigned	 ndjson : 1;	/* streams NDJSON, not SSE */
	unsigned	 anthropic_auth : 1;
	unsigned	 lax_end : 1;	/* EOF after a stop reason is complete */
	/* The request body. */
	void	(*body)(const struct llm_req *q, struct json_writer *w);
	/* One streamed SSE event (event name, data) or NDJSON line (event
	 * NULL). Sets acc->done on the terminal event. */
	void	(*event)(struct llm_acc *acc, const char *event,
		    const char *data, size_t n);
	/* A whole non-streamed JSON reply body. */
	void	(*whole)(struct llm_acc *acc, const char *body, size_t n);
};

/* The "tools" member of a request in one of the three shapes in use:
 * {type, function: {name, description, parameters}} (Chat, Ollama),
 * {type, name, description, parameters} (Responses) and
 * {name, description, input_schema} (Anthropic). Nothing when no tools. */
enum llm_tools_style { LLM_TOOLS_NESTED, LLM_TOOLS_FLAT, LLM_TOOLS_ANTHROPIC };
void	llm_put_tools(struct json_writer *w, const struct llm_req *q,
	    enum llm_tools_style style);

/* The "messages" member of a Chat-style request (OpenAI Chat, Ollama):
 * the system prompt, then each message's role and content, an
 * assistant's tool calls each written by put_call. A tool result names
 * its call (tool_call_id), and an assistant turn of calls alone has null
 * content; with LLM_CHAT_OLLAMA the content is always a string and a tool
 * result names its tool (tool_name) instead. */
enum llm_chat_style { LLM_CHAT_OPENAI, LLM_CHAT_OLLAMA };
void	llm_put_messages(struct json_writer *w, const struct llm_req *q,
	    enum llm_chat_style style,
	    void (*put_call)(struct json_writer *, const struct llm_call *));

extern const struct llm_proto llm_openai, llm_responses, llm_anthropic,
    llm_ollama;

/* Find a protocol by name: "openai" (Chat Completions, also for llama.cpp,
 * vLLM, LM Studio, Ollama's /v1), "responses", "anthropic", "ollama". */
const struct llm_proto *llm_proto_find(const char *name);

/* Where and how to talk. */
struct llm_conf {
	const struct llm_proto	*proto;
	const char		*base_url;	/* e.g. https://api.openai.com */
	const char		*api_key;	/* NULL: none sent */
	const char		*anthropic_version;
	const char		*ca_file;	/* NULL: the system bundle */
	int			 bearer;	/* anthropic: Bearer, not x-api-key */
	int			 connect_ms, first_ms, idle_ms;
	unsigned		 retries;	/* extra attempts on 429/5xx */
	unsigned		 max_backoff_ms;
	const char		*cache_dir;	/* EVAL=1: the response cache
						 * (cache.h); NULL: none */
	size_t			 cache_max;	/* its cap in bytes */
};

void	llm_conf_defaults(struct llm_conf *c);

/* Client state kept across requests: trust anchors, a kept-alive
 * connection, the last error in words. Lives in `perm`. */
struct llm_client;

/* A client for c, in perm; NULL only when out of memory. A bad base URL
 * or proxy setting makes every llm_send fail with the reason in llm_why. */
struct llm_client *llm_client_new(struct arena *perm, const struct llm_conf *c);

/* Load the trust anchors of ca_file (NULL: the system bundle) into perm
 * now, for every client made later in this process and in its forked
 * children: a server loads them once, not per turn. Returns 0, or -E_*
 * with the reason in why. */
int	llm_preload_anchors(struct arena *perm, const char *ca_file, char *why,
	    size_t whylen);

/* Send q and assemble the reply into *r (strings in `a`). Streamed text
 * goes to sink as it arrives. Retries 429/502/503/529 and failed
 * connections with backoff (Retry-After honoured) only while nothing has
 * reached the sink. Of an error reply only the first 16 KiB are read, and
 * the connection is closed after a longer one. Returns 0, or -E_* with
 * llm_why() in words. */
int	llm_send(struct llm_client *cl, struct arena *a, const struct llm_req *q,
	    const struct llm_sink *sink, struct llm_reply *r);

/* Bound every later llm_send, all attempts together, by an absolute
 * deadline in net_now_ms() milliseconds (0: none, the default): connect,
 * TLS, each wait for bytes, and the waits between retries. A server that
 * keeps the reply alive with a byte now and then is cut off there too.
 * When it passes, llm_send fails with -E_TIMEOUT and llm_timed_out() says
 * so; a retry whose wait would end past it is not made (llm_send returns
 * the failure it had, with a note in llm_why). The name lookup is not
 * covered: the resolver has its own timeouts. */
void	llm_set_deadline(struct llm_client *cl, long long deadline_ms);

/* Drop the kept-alive connection without a word to the server: a forked
 * copy of the process does this, so that the two do not share it. NULL
 * is fine. */
void	llm_disconnect(struct llm_client *cl);

/* 1 when the last llm_send failed because the deadline passed, else 0. */
int	llm_timed_out(const struct llm_client *cl);

/* Give back the reply's text. */
void	llm_reply_release(struct llm_reply *r);

const char *llm_why(const struct llm_client *cl);
/* HTTP status of the last reply (0 if none), attempts made. */
int	llm_status(const struct llm_client *cl);
unsigned llm_attempts(const struct llm_client *cl);

/* The response cache and the last llm_send: -1 not used (no cache, or
 * the send failed), 0 a miss (the reply came from the network), 1 a hit
 * (it came from the cache: no request was made). */
int	llm_cached(const struct llm_client *cl);

/* Decode a stream or body from memory, as llm_send would (for replay tests
 * and fuzzing): feeds `data` in pieces of `step` bytes (0 = whole). */
int	llm_decode(const struct llm_proto *p, struct arena *a, int stream,
	    const char *data, size_t n, size_t step,
	    const struct llm_sink *sink, struct llm_reply *r, char *why,
	    size_t whylen);

#endif
