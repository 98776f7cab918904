/* test_json.c - the JSON reader and writer. */
#include <string.h>

#include "fmt/json.h"
#include "unit.h"

#define MAXTOK	4096

static int
parse(const char *js, struct json_doc *d)
{
	return json_parse(&t_arena, js, strlen(js), MAXTOK, d);
}

/* The unescaped string token i, or "(error)". */
static const char *
sval(const struct json_doc *d, int i)
{
	char *s;

	return json_str(d, &t_arena, i, &s, NULL) == 0 ? s : "(error)";
}

/* A JSON text in the arena: n arrays nested around `mid`. */
static char *
nest(unsigned n, const char *mid)
{
	struct sbuf sb;
	unsigned i;

	sbuf_init(&sb, &t_arena, 0);
	for (i = 0; i < n; i++)
		sbuf_addc(&sb, '[');
	sbuf_adds(&sb, mid);
	for (i = 0; i < n; i++)
		sbuf_addc(&sb, ']');
	return sb.err == 0 ? sb.p : NULL;
}

static void
t_valid(void)
{
	static const char *const ok[] = {
		"{}", "[]", "\"\"", "0", "-0", "1", "-12", "0.5", "-0.0e0",
		"1E+2", "1e-2", "12.34E56", "true", "false", "null",
		" \t\r\n[ ] \n", "[[],{},\"\",0,true]", "{\"\":{}}",
		"{\"a\":[1,{\"b\":null}],\"c\":\"d\"}", "\"\\u00e9\\n\"",
		"[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"]", "\"caf\xc3\xa9 \x7f\"",
		"  42  ", "[-1,2.5e3,0e0]",
	};
	struct json_doc d;
	size_t i;

	for (i = 0; i < ARRAY_LEN(ok); i++) {
		if (parse(ok[i], &d) != 0) {
			t_fail(__FILE__, __LINE__, "rejected: %s", ok[i]);
			continue;
		}
		T(d.n >= 1);
		T_EQI(json_skip(&d, 0), d.n);
	}
}

static void
t_tokens(void)
{
	struct json_doc d;
	const char *js = "{\"a\":[1,\"x\"],\"b\":{}} ";

	T_EQI(parse(js, &d), 0);
	T_EQI(d.n, 7);
	T_EQI(d.t[0].type, JSON_OBJ);
	T_EQI(d.t[0].size, 2);
	T_EQI(d.t[0].start, 0);
	T_EQI(d.t[0].end, 20);
	T_EQI(d.t[1].type, JSON_STR);
	T_EQI(d.t[1].size, 1);
	T_EQI(d.t[2].type, JSON_ARR);
	T_EQI(d.t[2].size, 2);
	T_EQI(d.t[3].type, JSON_PRIM);
	T_EQI(d.t[4].type, JSON_STR);
	T_EQI(d.t[4].start, 9);
	T_EQI(d.t[4].end, 10);
	T_EQI(d.t[6].type, JSON_OBJ);
	T_EQI(d.t[6].size, 0);
	T_EQI(json_skip(&d, 0), 7);
	T_EQI(json_skip(&d, 2), 5);
	T_EQI(json_skip(&d, 1), 5);	/* a key and its value */
	T_EQI(json_skip(&d, 3), 4);
	T_EQI(json_skip(&d, -1), 7);
	T(d.js == js);
	T_EQI(d.len, strlen(js));

	T_EQI(parse(" 12", &d), 0);
	T_EQI(d.n, 1);
	T_EQI(d.t[0].start, 1);
	T_EQI(d.t[0].end, 3);
}

static void
t_invalid(void)
{
	static const char *const bad[] = {
		"", " ", "tru", "nul", "truex", "TRUE", "01", "1.", "--1", "-",
		"+1", ".5", "1e", "1e+", "1.e3", "0x1", "[01]", "[-]", "[1,]",
		"[,1]", "[1 2]", "[1,,2]", "[true false]", "{\"a\" 1}",
		"{\"a\" \"b\"}", "{\"a\":}", "{\"a\":1,}", "{1:2}", "{,}",
		"{\"a\":1 \"b\":2}", "[\"a\":1]", "{\"a\",1}", "{\"a\"::1}",
		"{\"a\":1:2}", "{[]:1}", "{} x", "{}{}", "1 2", "[] []",
		"\"a\" \"b\"", "\"a\":1", "[}", "{]", "]", "}", ":", ",",
		"[", "{", "[[]", "\"abc", "[\"abc]", "\"a\nb\"", "\"a\tb\"",
		"\"\\x\"", "\"\\u12g4\"", "\"\\u12\"", "'a'", "[1]]",
		"{\"a\":1}}", "[\"a\",]", "nan", "[Infinity]", "\"\\",
		"[1,2", "{\"a\":1", "{\"a\"", "\xef\xbb\xbf{}",
	};
	struct json_doc d;
	size_t i;

	for (i = 0; i < ARRAY_LEN(bad); i++)
		if (parse(bad[i], &d) != -E_PARSE)
			t_fail(__FILE__, __LINE__, "accepted: %s", bad[i]);
	/* NUL anywhere, even after a complete value. */
	T_EQI(json_parse(&t_arena, "[1]\0", 4, MAXTOK, &d), -E_PARSE);
	T_EQI(json_parse(&t_arena, "\"a\0b\"", 5, MAXTOK, &d), -E_PARSE);
	T_EQI(json_parse(&t_arena, "[\0]", 3, MAXTOK, &d), -E_PARSE);
	T_EQI(json_parse(&t_arena, "1\0", 2, MAXTOK, &d), -E_PARSE);
}

static void
t_feed_bytes(void)
{
	static const char js[] =
	    "{\"k\":[1,-2.5e3,true,null,\"s\\u00e9\\\"\"],\"o\":{\"x\":{}}} ";
	struct json_parser p;
	struct json_doc d;
	size_t i, n = sizeof(js) - 1;
	unsigned k;

	T_EQI(parse(js, &d), 0);
	json_parser_init(&p, &t_arena, MAXTOK);
	for (i = 0; i < n - 1; i++)
		if (json_parser_feed(&p, js, i) != -E_PART)
			t_fail(__FILE__, __LINE__, "prefix %zu not partial", i);
	/* The closing brace completes it; the space is extra. */
	T_EQI(json_parser_feed(&p, js, n - 1), 0);
	T_EQI(json_parser_feed(&p, js, n), 0);
	T_EQI(p.doc.n, d.n);
	for (k = 0; k < d.n && k < p.doc.n; k++) {
		T_EQI(p.doc.t[k].type, d.t[k].type);
		T_EQI(p.doc.t[k].start, d.t[k].start);
		T_EQI(p.doc.t[k].end, d.t[k].end);
		T_EQI(p.doc.t[k].size, d.t[k].size);
	}
	T_EQS(sval(&p.doc, json_at(&p.doc, json_get(&p.doc, 0, "k"), 4)),
	    "s\xc3\xa9\"");
}

static void
t_feed_chunks(void)
{
	static const char js[] = "[\"abc\", 123, {\"de\": false}]";
	char a[64], b[64];
	struct json_parser p;

	/* The buffer may move between calls. */
	memset(a, 'x', sizeof(a));
	memset(b, 'y', sizeof(b));
	memcpy(a, js, 4);
	json_parser_init(&p, &t_arena, MAXTOK);
	T_EQI(json_parser_feed(&p, a, 4), -E_PART);
	memcpy(b, js, 10);
	T_EQI(json_parser_feed(&p, b, 10), -E_PART);
	memcpy(a, js, sizeof(js));
	T_EQI(json_parser_feed(&p, a, sizeof(js) - 1), 0);
	T(p.doc.js == a);
	T_EQI(p.doc.n, 6);
	/* More whitespace is fine, anything else is not. */
	memcpy(a, "[1] \n", 6);
	json_parser_init(&p, &t_arena, MAXTOK);
	T_EQI(json_parser_feed(&p, a, 3), 0);
	T_EQI(json_parser_feed(&p, a, 5), 0);
	memcpy(a, "[1] \n[", 7);
	T_EQI(json_parser_feed(&p, a, 6), -E_PARSE);
	T_EQI(json_parser_feed(&p, a, 6), -E_PARSE);
}

static void
t_feed_prim(void)
{
	struct json_parser p;
	struct json_doc d;
	long long v;

	/* A top-level number is not over until a delimiter arrives. */
	json_parser_init(&p, &t_arena, MAXTOK);
	T_EQI(json_parser_feed(&p, "123 ", 3), -E_PART);
	T_EQI(json_parser_feed(&p, "123 ", 4), 0);
	T_EQI(json_int(&p.doc, 0, &v), 0);
	T_EQI(v, 123);
	json_parser_init(&p, &t_arena, MAXTOK);
	T_EQI(json_parser_feed(&p, "true", 4), -E_PART);
	T_EQI(parse("true", &d), 0);
	T_EQI(parse("-7", &d), 0);
	T_EQI(json_int(&d, 0, &v), 0);
	T_EQI(v, -7);
	/* Something after the value is an error as soon as it shows. */
	json_parser_init(&p, &t_arena, MAXTOK);
	T_EQI(json_parser_feed(&p, "{} 1", 4), -E_PARSE);
	json_parser_init(&p, &t_arena, MAXTOK);
	T_EQI(json_parser_feed(&p, "{} \"", 4), -E_PARSE);
}

static void
t_feed_errors(void)
{
	struct json_parser p;

	/* Errors show before the document is complete, and stick. */
	json_parser_init(&p, &t_arena, MAXTOK);
	T_EQI(json_parser_feed(&p, "[1,,", 4), -E_PARSE);
	T_EQI(json_parser_feed(&p, "[1,,2]", 6), -E_PARSE);
	json_parser_init(&p, &t_arena, MAXTOK);
	T_EQI(json_parser_feed(&p, "{\"a\"}", 5), -E_PARSE);
	json_parser_init(&p, &t_arena, MAXTOK);
	T_EQI(json_parser_feed(&p, "[tru,", 5), -E_PARSE);
	json_parser_init(&p, &t_arena, MAXTOK);
	T_EQI(json_parser_feed(&p, "[\"a\x01", 4), -E_PART);
	T_EQI(json_parser_feed(&p, "[\"a\x01\"", 5), -E_PARSE);
	/* Input that shrinks is a caller bug, not sticky. */
	json_parser_init(&p, &t_arena, MAXTOK);
	T_EQI(json_parser_feed(&p, "[1,", 3), -E_PART);
	T_EQI(json_parser_feed(&p, "[1,", 2), -E_INVAL);
	T_EQI(json_parser_feed(&p, "[1,2]", 5), 0);
}

static void
t_growth(void)
{
	struct sbuf sb;
	struct json_doc d;
	long long v;
	unsigned i;

	sbuf_init(&sb, &t_arena, 0);
	sbuf_addc(&sb, '[');
	for (i = 0; i < 1000; i++)
		sbuf_printf(&sb, "%s%u", i ? "," : "", i * 3);
	sbuf_addc(&sb, ']');
	T_EQI(sb.err, 0);
	T_EQI(json_parse(&t_arena, sb.p, sb.len, 1001, &d), 0);
	T_EQI(d.n, 1001);
	T_EQI(d.t[0].size, 1000);
	T_EQI(json_int(&d, json_at(&d, 0, 999), &v), 0);
	T_EQI(v, 2997);
	T_EQI(json_int(&d, json_at(&d, 0, 31), &v), 0);
	T_EQI(v, 93);
	T_EQI(json_at(&d, 0, 1000), -1);
	T_EQI(json_parse(&t_arena, sb.p, sb.len, 1000, &d), -E_LIMIT);
}

static void
t_max_tokens(void)
{
	struct json_doc d;
	struct json_parser p;

	T_EQI(json_parse(&t_arena, "[1,2,3]", 7, 4, &d), 0);
	T_EQI(json_parse(&t_arena, "[1,2,3]", 7, 3, &d), -E_LIMIT);
	T_EQI(json_parse(&t_arena, "{\"a\":1}", 7, 2, &d), -E_LIMIT);
	T_EQI(json_parse(&t_arena, "7", 1, 1, &d), 0);
	T_EQI(json_parse(&t_arena, "7", 1, 0, &d), -E_LIMIT);
	T_EQI(json_parse(&t_arena, "[7]", 3, 0, &d), -E_LIMIT);
	json_parser_init(&p, &t_arena, 3);
	T_EQI(json_parser_feed(&p, "[1,2,", 5), -E_PART);
	T_EQI(json_parser_feed(&p, "[1,2,3,", 7), -E_LIMIT);
	T_EQI(json_parser_feed(&p, "[1,2,3]", 7), -E_LIMIT);
}

static void
t_depth(void)
{
	struct json_doc d;
	struct json_parser p;
	const char *js;
	char deep[2 * 70 * 6];
	size_t n = 0;
	unsigned i;

	T((js = nest(JSON_MAX_DEPTH, "1")) != NULL);
	T_EQI(json_parse(&t_arena, js, strlen(js), MAXTOK, &d), 0);
	T_EQI(d.n, JSON_MAX_DEPTH + 1);
	T((js = nest(JSON_MAX_DEPTH + 1, "")) != NULL);
	T_EQI(json_parse(&t_arena, js, strlen(js), MAXTOK, &d), -E_LIMIT);
	/* Too deep already while it streams in. */
	json_parser_init(&p, &t_arena, MAXTOK);
	T_EQI(json_parser_feed(&p, js, JSON_MAX_DEPTH), -E_PART);
	T_EQI(json_parser_feed(&p, js, JSON_MAX_DEPTH + 1), -E_LIMIT);
	/* Found before the token pool grows with the input. */
	{
		struct arena a;

		T((js = nest(10000, "")) != NULL);
		arena_init(&a, "deep");
		T_EQI(json_parse(&a, js, strlen(js), 1u << 20, &d), -E_LIMIT);
		T(arena_size(&a) <= 8192);
		arena_reset(&a);
	}
	/* Objects count too. */
	for (i = 0; i < JSON_MAX_DEPTH; i++) {
		memcpy(deep + n, "{\"a\":", 5);
		n += 5;
	}
	deep[n++] = '1';
	for (i = 0; i < JSON_MAX_DEPTH; i++)
		deep[n++] = '}';
	T_EQI(json_parse(&t_arena, deep, n, MAXTOK, &d), 0);
	memmove(deep + 5, deep, n);
	memcpy(deep, "{\"a\":", 5);
	deep[n + 5] = '}';
	T_EQI(json_parse(&t_arena, deep, n + 6, MAXTOK, &d), -E_LIMIT);
}

static void
t_query(void)
{
	static const char js[] = "{\"a\":1,\"b\":{\"c\":[10,[20],{\"d\":30}]},"
	    "\"q\\\"x\":2,\"\\u0041\\u00e9\":3,\"e\":[]}";
	struct json_doc d;
	long long v;
	int b, c;

	T_EQI(parse(js, &d), 0);
	T_EQI(json_int(&d, json_get(&d, 0, "a"), &v), 0);
	T_EQI(v, 1);
	T((b = json_get(&d, 0, "b")) > 0);
	T((c = json_get(&d, b, "c")) > 0);
	T_EQI(d.t[c].type, JSON_ARR);
	T_EQI(json_int(&d, json_at(&d, c, 0), &v), 0);
	T_EQI(v, 10);
	T_EQI(json_int(&d, json_at(&d, json_at(&d, c, 1), 0), &v), 0);
	T_EQI(v, 20);
	T_EQI(json_int(&d, json_get(&d, json_at(&d, c, 2), "d"), &v), 0);
	T_EQI(v, 30);
	T_EQI(json_at(&d, c, 3), -1);
	T_EQI(json_int(&d, json_get(&d, 0, "q\"x"), &v), 0);
	T_EQI(v, 2);
	T_EQI(json_int(&d, json_get(&d, 0, "A\xc3\xa9"), &v), 0);
	T_EQI(v, 3);
	T_EQI(json_at(&d, json_get(&d, 0, "e"), 0), -1);
	T_EQI(json_get(&d, 0, "x"), -1);
	T_EQI(json_get(&d, 0, "A"), -1);
	T_EQI(json_get(&d, 0, ""), -1);
	T_EQI(json_get(&d, c, "a"), -1);	/* not an object */
	T_EQI(json_at(&d, 0, 0), -1);		/* not an array */
	T_EQI(json_get(&d, -1, "a"), -1);
	T_EQI(json_get(&d, 999, "a"), -1);
	T_EQI(json_at(&d, -1, 0), -1);
	/* Values are not keys. */
	T_EQI(parse("{\"a\":\"b\",\"c\":\"a\"}", &d), 0);
	T_EQS(sval(&d, json_get(&d, 0, "c")), "a");
	T_EQI(json_get(&d, 0, "b"), -1);
	T(json_eq(&d, 1, "a"));
	T(!json_eq(&d, 1, "ab"));
	T(!json_eq(&d, 1, ""));
	T(!json_eq(&d, 0, "a"));
	T(!json_eq(&d, -1, "a"));
}

static void
t_str(void)
{
	struct json_doc d;
	char *s;
	size_t n;

	T_EQI(parse("[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\",\"\\u0041\\u00e9\\u20AC\","
	    "\"\\ud83d\\ude00\",\"a\\u0000b\",\"\",\"\\uDBFF\\uDFFF\"]",
	    &d), 0);
	T_EQS(sval(&d, 1), "\"\\/\b\f\n\r\t");
	T_EQS(sval(&d, 2), "A\xc3\xa9\xe2\x82\xac");
	T_EQS(sval(&d, 3), "\xf0\x9f\x98\x80");
	T(json_eq(&d, 3, "\xf0\x9f\x98\x80"));
	T_EQI(json_str(&d, &t_arena, 4, &s, &n), 0);
	T_EQI(n, 3);
	T(memcmp(s, "a\0b", 4) == 0);
	T(!json_eq(&d, 4, "a"));
	T_EQI(json_str(&d, &t_arena, 5, &s, &n), 0);
	T_EQI(n, 0);
	T_EQS(s, "");
	T_EQS(sval(&d, 6), "\xf4\x8f\xbf\xbf");
	T_EQI(json_str(&d, &t_arena, 0, &s, &n), -E_PARSE);
	T_EQI(json_str(&d, &t_arena, 7, &s, &n), -E_NOENT);
	T_EQI(json_str(&d, &t_arena, -1, &s, &n), -E_NOENT);
	/* Raw UTF-8 passes through. */
	T_EQI(parse("\"\xe2\x82\xac\"", &d), 0);
	T_EQS(sval(&d, 0), "\xe2\x82\xac");
}

static void
t_surrogates(void)
{
	static const char *const bad[] = {
		"\"\\ud83d\"", "\"\\ude00\"", "\"\\ud83dx\"",
		"\"\\ud83d\\u0041\"", "\"\\ud83d\\ud83d\"", "\"a\\udfff\"",
		"\"\\ud83d\\n\"", "\"\\ude00\\ud83d\"",
	};
	struct json_doc d;
	char *s;
	size_t i;

	for (i = 0; i < ARRAY_LEN(bad); i++) {
		/* The document is well-formed; the string is not. */
		T_EQI(parse(bad[i], &d), 0);
		T_EQI(json_str(&d, &t_arena, 0, &s, NULL), -E_PARSE);
		T(!json_eq(&d, 0, "a"));
	}
}

static void
t_scalars(void)
{
	static const struct {
		const char	*js;
		int		 r;
		long long	 v;
	} ints[] = {
		{ "0", 0, 0 }, { "-0", 0, 0 }, { "42", 0, 42 },
		{ "9223372036854775807", 0, 9223372036854775807LL },
		{ "-9223372036854775808", 0, -9223372036854775807LL - 1 },
		{ "9223372036854775808", -E_PARSE, 0 },
		{ "-9223372036854775809", -E_PARSE, 0 },
		{ "99999999999999999999", -E_PARSE, 0 },
		{ "1.0", -E_PARSE, 0 }, { "1e2", -E_PARSE, 0 },
		{ "\"1\"", -E_PARSE, 0 }, { "true", -E_PARSE, 0 },
		{ "[1]", -E_PARSE, 0 },
	};
	struct json_doc d;
	long long v;
	size_t i;
	int b;

	for (i = 0; i < ARRAY_LEN(ints); i++) {
		T_EQI(parse(ints[i].js, &d), 0);
		v = -1;
		T_EQI(json_int(&d, 0, &v), ints[i].r);
		if (ints[i].r == 0)
			T_EQI(v, ints[i].v);
	}
	T_EQI(json_int(&d, 2, &v), -E_NOENT);
	T_EQI(json_int(&d, -1, &v), -E_NOENT);
	T_EQI(parse("[true,false,null,0,\"true\"]", &d), 0);
	T_EQI(json_bool(&d, 1, &b), 0);
	T_EQI(b, 1);
	T_EQI(json_bool(&d, 2, &b), 0);
	T_EQI(b, 0);
	T_EQI(json_bool(&d, 3, &b), -E_PARSE);
	T_EQI(json_bool(&d, 4, &b), -E_PARSE);
	T_EQI(json_bool(&d, 5, &b), -E_PARSE);
	T_EQI(json_bool(&d, 6, &b), -E_NOENT);
	T_EQI(json_bool(&d, -1, &b), -E_NOENT);
	T(json_is_null(&d, 3));
	T(!json_is_null(&d, 1));
	T(!json_is_null(&d, 0));
	T(!json_is_null(&d, -1));
	T(!json_is_null(&d, 6));
}

/* json_raw: a token as written, a string with its quotes. */
static void
t_raw(void)
{
	struct json_doc d;
	const char *r;
	size_t n = 0;

	T_EQI(parse("{\"id\":\"a\\\"b\",\"n\":0,\"o\":{\"x\":[1]}}", &d), 0);
	r = json_raw(&d, json_get(&d, 0, "id"), &n);
	T(r != NULL && n == 6 && memcmp(r, "\"a\\\"b\"", 6) == 0);
	r = json_raw(&d, json_get(&d, 0, "n"), &n);
	T(r != NULL && n == 1 && r[0] == '0');
	r = json_raw(&d, json_get(&d, 0, "o"), &n);
	T(r != NULL && n == 9 && memcmp(r, "{\"x\":[1]}", 9) == 0);
	T(json_raw(&d, -1, &n) == NULL);
	T(json_raw(&d, (int)d.n, &n) == NULL);
}

static void
t_write(void)
{
	struct sbuf sb;
	struct json_writer w;

	sbuf_init(&sb, &t_arena, 0);
	json_writer_init(&w, &sb);
	T_EQI(json_writer_err(&w), -E_INVAL);
	json_begin_obj(&w);
	json_key(&w, "a");
	json_put_int(&w, 1);
	json_key(&w, "b");
	json_begin_arr(&w);
	json_put_bool(&w, 1);
	json_put_null(&w);
	json_put_int(&w, -5);
	json_put_str(&w, "x");
	json_begin_arr(&w);
	json_end_arr(&w);
	json_begin_obj(&w);
	json_end_obj(&w);
	json_put_raw(&w, "{\"r\":[]}", 8);
	json_put_bool(&w, 0);
	json_end_arr(&w);
	json_key(&w, "c");
	json_begin_obj(&w);
	json_key(&w, "d");
	json_put_uint(&w, 18446744073709551615ULL);
	json_end_obj(&w);
	T_EQI(json_writer_err(&w), -E_INVAL);
	json_end_obj(&w);
	T_EQI(json_writer_err(&w), 0);
	T_EQS(sb.p, "{\"a\":1,\"b\":[true,null,-5,\"x\",[],{},{\"r\":[]},"
	    "false],\"c\":{\"d\":18446744073709551615}}");

	sbuf_init(&sb, &t_arena, 0);
	json_writer_init(&w, &sb);
	json_begin_arr(&w);
	json_put_int(&w, -9223372036854775807LL - 1);
	json_put_int(&w, 9223372036854775807LL);
	json_put_int(&w, 0);
	json_put_uint(&w, 0);
	json_end_arr(&w);
	T_EQI(json_writer_err(&w), 0);
	T_EQS(sb.p, "[-9223372036854775808,9223372036854775807,0,0]");

	sbuf_init(&sb, &t_arena, 0);
	json_writer_init(&w, &sb);
	json_put_str(&w, "top");
	T_EQI(json_writer_err(&w), 0);
	T_EQS(sb.p, "\"top\"");
}

static void
t_write_escape(void)
{
	static const struct {
		const char	*in;
		size_t		 n;
		const char	*out;
	} c[] = {
		{ "\"\\/", 3, "\"\\\"\\\\/\"" },
		{ "\n\r\t\b\f", 5, "\"\\n\\r\\t\\b\\f\"" },
		{ "\x01\x1f\x7f", 3, "\"\\u0001\\u001f\\u007f\"" },
		{ "a\0b", 3, "\"a\\u0000b\"" },
		{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14,
		    "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"" },
		{ "a\xff" "b", 3, "\"a\xef\xbf\xbd" "b\"" },
		{ "\xc3", 1, "\"\xef\xbf\xbd\"" },
		{ "\xc3(", 2, "\"\xef\xbf\xbd(\"" },
		{ "\xc0\xaf", 2, "\"\xef\xbf\xbd\xef\xbf\xbd\"" },
		{ "\xed\xa0\x80", 3,
		    "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"" },
		{ "\xf4\x90\x80\x80", 4, "\"\xef\xbf\xbd\xef\xbf\xbd"
		    "\xef\xbf\xbd\xef\xbf\xbd\"" },
		{ "\xe2\x82", 2, "\"\xef\xbf\xbd\xef\xbf\xbd\"" },
		{ "\x80\n", 2, "\"\xef\xbf\xbd\\n\"" },
		{ "", 0, "\"\"" },
	};
	struct sbuf sb;
	struct json_writer w;
	size_t i;

	for (i = 0; i < ARRAY_LEN(c); i++) {
		sbuf_init(&sb, &t_arena, 0);
		json_writer_init(&w, &sb);
		json_put_strn(&w, c[i].in, c[i].n);
		T_EQI(json_writer_err(&w), 0);
		T_EQS(sb.p, c[i].out);
		T(str_is_utf8(sb.p, sb.len));
	}
	sbuf_init(&sb, &t_arena, 0);
	json_writer_init(&w, &sb);
	json_begin_obj(&w);
	json_key(&w, "k\"\xff");
	json_put_null(&w);
	json_end_obj(&w);
	T_EQS(sb.p, "{\"k\\\"\xef\xbf\xbd\":null}");
}

/* Duplicate keys, at any level, compared as a reader sees them. */
static void
t_dup_key(void)
{
	static const struct {
		const char	*js;
		int		 dup;
	} v[] = {
		{ "{}", 0 }, { "[]", 0 }, { "1", 0 }, { "{\"a\":1}", 0 },
		{ "{\"a\":1,\"b\":2,\"ab\":3,\"\":4}", 0 },
		{ "{\"a\":1,\"a\":2}", 1 },
		{ "{\"a\":1,\"b\":2,\"a\":2}", 1 },
		{ "{\"b\":1,\"\\u0062\":2}", 1 },
		{ "{\"\\/\":1,\"/\":2}", 1 },
		{ "{\"\":1,\"\":2}", 1 },
		/* Only within one object; values do not count. */
		{ "{\"a\":{\"a\":1},\"b\":\"a\"}", 0 },
		{ "[{\"a\":1},{\"a\":2}]", 0 },
		{ "{\"x\":[{\"k\":{\"a\":1,\"c\":0,\"a\":2}}]}", 1 },
		{ "{\"a\":{\"b\":[1,{\"c\":2}]},\"a\":3}", 1 },
		/* Keys that cannot be unescaped compare as they stand. */
		{ "{\"\\ud800\":1,\"\\uD800\":2}", 0 },
	};
	struct json_doc d;
	size_t i;

	for (i = 0; i < ARRAY_LEN(v); i++) {
		T_EQI(parse(v[i].js, &d), 0);
		if (json_dup_key(&d, &t_arena) != v[i].dup)
			t_fail(__FILE__, __LINE__, "dup %d: %s", !v[i].dup,
			    v[i].js);
	}
}

/* The canonical form: compact, escapes as the writer makes them. */
static void
t_canon(void)
{
	static const char *const v[][2] = {
		{ " { \"a\" : 1 , \"b\" : [ true , null , -0.5e3 ] } ",
		    "{\"a\":1,\"b\":[true,null,-0.5e3]}" },
		{ "{\"c\":\"re\\u0062oot\"}", "{\"c\":\"reboot\"}" },
		{ "{\"\\u0063\":\"\\/\\t\\\"\\\\\\u00e9\\ud83d\\ude00\"}",
		    "{\"c\":\"/\\t\\\"\\\\\xc3\xa9\xf0\x9f\x98\x80\"}" },
		{ "\"\\u0001\\u001f\"", "\"\\u0001\\u001f\"" },
		{ "[[],{},[{}],{\"a\":{}}]", "[[],{},[{}],{\"a\":{}}]" },
		{ "7", "7" },
		{ "\"\"", "\"\"" },
		{ "{\"a\":[1,{\"b\":[[2]]}],\"c\":{\"d\":{\"e\":\"f\"}}}",
		    "{\"a\":[1,{\"b\":[[2]]}],\"c\":{\"d\":{\"e\":\"f\"}}}" },
	};
	struct json_writer w;
	struct json_doc d;
	struct sbuf sb;
	size_t i, n;
	char *s;

	for (i = 0; i < ARRAY_LEN(v); i++) {
		s = json_canon(&t_arena, v[i][0], strlen(v[i][0]), &n);
		T(s != NULL);
		if (s != NULL) {
			T_EQS(s, v[i][1]);
			T_EQI(n, strlen(v[i][1]));
		}
	}
	/* Not JSON, and a lone surrogate, are no canonical form. */
	T(json_canon(&t_arena, "{\"a\":}", 7, &n) == NULL);
	T(json_canon(&t_arena, "[\"\\ud800\"]", 10, &n) == NULL);
	/* Inside a document being written: as its value. */
	T_EQI(parse("{ \"k\" : [ 1 ] }", &d), 0);
	sbuf_init(&sb, &t_arena, 0);
	json_writer_init(&w, &sb);
	json_begin_obj(&w);
	json_kstr(&w, "x", "y");
	json_key(&w, "args");
	json_put_tok(&w, &d, 0);
	json_key(&w, "z");
	json_put_tok(&w, &d, 2);
	json_end_obj(&w);
	T_EQI(json_writer_err(&w), 0);
	T_EQS(sb.p, "{\"x\":\"y\",\"args\":{\"k\":[1]},\"z\":[1]}");
	/* Depth: the writer's limit holds for a copied value too. */
	T_EQI(parse(nest(JSON_MAX_DEPTH, "0"), &d), 0);
	sbuf_init(&sb, &t_arena, 0);
	json_writer_init(&w, &sb);
	json_begin_arr(&w);
	json_put_tok(&w, &d, 0);
	json_end_arr(&w);
	T_EQI(json_writer_err(&w), -E_LIMIT);
	T(json_canon(&t_arena, nest(JSON_MAX_DEPTH, "0"),
	    strlen(nest(JSON_MAX_DEPTH, "0")), &n) != NULL);
}

static void
t_write_misuse(void)
{
	struct sbuf sb;
	struct json_writer w;
	unsigned i;

	/* A value in an object needs its key. */
	sbuf_init(&sb, &t_arena, 0);
	json_writer_init(&w, &sb);
	json_begin_obj(&w);
	json_put_int(&w, 1);
	T_EQI(json_writer_err(&w), -E_INVAL);
	T_EQS(sb.p, "{");
	/* A key outside an object, or twice. */
	sbuf_init(&sb, &t_arena, 0);
	json_writer_init(&w, &sb);
	json_key(&w, "a");
	T_EQI(sb.err, -E_INVAL);
	sbuf_init(&sb, &t_arena, 0);
	json_writer_init(&w, &sb);
	json_begin_arr(&w);
	json_key(&w, "a");
	T_EQI(sb.err, -E_INVAL);
	sbuf_init(&sb, &t_arena, 0);
	json_writer_init(&w, &sb);
	json_begin_obj(&w);
	json_key(&w, "a");
	json_key(&w, "b");
	T_EQI(sb.err, -E_INVAL);
	/* Ends that do not match, or a key without a value. */
	sbuf_init(&sb, &t_arena, 0);
	json_writer_init(&w, &sb);
	json_begin_obj(&w);
	json_end_arr(&w);
	T_EQI(sb.err, -E_INVAL);
	sbuf_init(&sb, &t_arena, 0);
	json_writer_init(&w, &sb);
	json_end_obj(&w);
	T_EQI(sb.err, -E_INVAL);
	sbuf_init(&sb, &t_arena, 0);
	json_writer_init(&w, &sb);
	json_begin_obj(&w);
	json_key(&w, "a");
	json_end_obj(&w);
	T_EQI(sb.err, -E_INVAL);
	/* One top-level value. */
	sbuf_init(&sb, &t_arena, 0);
	json_writer_init(&w, &sb);
	json_put_int(&w, 1);
	json_put_int(&w, 2);
	T_EQI(json_writer_err(&w), -E_INVAL);
	T_EQS(sb.p, "1");
	/* Depth: 64 levels, not 65. */
	sbuf_init(&sb, &t_arena, 0);
	json_writer_init(&w, &sb);
	for (i = 0; i < JSON_MAX_DEPTH; i++)
		json_begin_arr(&w);
	T_EQI(sb.err, 0);
	json_begin_arr(&w);
	T_EQI(json_writer_err(&w), -E_LIMIT);
	sbuf_init(&sb, &t_arena, 0);
	json_writer_init(&w, &sb);
	for (i = 0; i < JSON_MAX_DEPTH; i++)
		json_begin_obj(&w), json_key(&w, "");
	json_put_int(&w, 0);
	for (i = 0; i < JSON_MAX_DEPTH; i++)
		json_end_obj(&w);
	T_EQI(json_writer_err(&w), 0);
	/* The buffer's cap. */
	sbuf_init(&sb, &t_arena, 8);
	json_writer_init(&w, &sb);
	json_put_str(&w, "0123456789");
	T_EQI(json_writer_err(&w), -E_LIMIT);
}

static void
t_roundtrip(void)
{
	static const char *const strs[] = {
		"plain", "", "q\"b\\s/", "\n\r\t\b\f\x01\x1f\x7f",
		"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "bad\xff\xfe",
		"\xed\xa0\x80", "tail\xe2\x82",
	};
	static const char *const want[] = {
		"plain", "", "q\"b\\s/", "\n\r\t\b\f\x01\x1f\x7f",
		"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
		"bad\xef\xbf\xbd\xef\xbf\xbd",
		"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd",
		"tail\xef\xbf\xbd\xef\xbf\xbd",
	};
	struct sbuf sb;
	struct json_writer w;
	struct json_doc d;
	char *s;
	size_t i, n;
	long long v;

	sbuf_init(&sb, &t_arena, 0);
	json_writer_init(&w, &sb);
	json_begin_obj(&w);
	json_key(&w, "strs");
	json_begin_arr(&w);
	for (i = 0; i < ARRAY_LEN(strs); i++)
		json_put_str(&w, strs[i]);
	json_put_strn(&w, "x\0y", 3);
	json_end_arr(&w);
	json_key(&w, "n");
	json_put_int(&w, -123456789012LL);
	json_key(&w, "\xe2\x82\xac");
	json_put_bool(&w, 1);
	json_end_obj(&w);
	T_EQI(json_writer_err(&w), 0);
	T_EQI(json_parse(&t_arena, sb.p, sb.len, MAXTOK, &d), 0);
	for (i = 0; i < ARRAY_LEN(strs); i++)
		T_EQS(sval(&d, json_at(&d, json_get(&d, 0, "strs"),
		    (unsigned)i)), want[i]);
	T_EQI(json_str(&d, &t_arena, json_at(&d, json_get(&d, 0, "strs"),
	    ARRAY_LEN(strs)), &s, &n), 0);
	T_EQI(n, 3);
	T(memcmp(s, "x\0y", 3) == 0);
	T_EQI(json_int(&d, json_get(&d, 0, "n"), &v), 0);
	T_EQI(v, -123456789012LL);
	T(json_get(&d, 0, "\xe2\x82\xac") > 0);
}

static void
t_oom(void)
{
	struct sbuf sb;
	struct json_doc d;
	struct json_writer w;
	size_t base, extra;
	unsigned i;
	int r, nomem = 0, ok = 0;

	sbuf_init(&sb, &t_arena, 0);
	sbuf_addc(&sb, '[');
	for (i = 0; i < 500; i++)
		sbuf_printf(&sb, "%s{\"k%u\":\"v\"}", i ? "," : "", i);
	sbuf_addc(&sb, ']');
	T_EQI(sb.err, 0);
	/* A fresh arena, so that every byte it uses counts. */
	base = mem_used();
	for (extra = 0; extra < (256u << 10) && !ok; extra += 1024) {
		struct arena a;

		arena_init(&a, "oom");
		mem_set_limit(base + extra);
		r = json_parse(&a, sb.p, sb.len, MAXTOK, &d);
		mem_set_limit(0);
		if (r == -E_NOMEM)
			nomem++;
		else if (r == 0)
			ok = 1;
		else
			t_fail(__FILE__, __LINE__, "json_parse: %d", r);
		arena_reset(&a);
	}
	T(nomem > 0);
	T(ok);

	/* The writer reports it through the buffer. */
	{
		struct arena a;

		arena_init(&a, "oom");
		sbuf_init(&sb, &a, 0);
		json_writer_init(&w, &sb);
		mem_set_limit(mem_used() + 1024);
		json_begin_arr(&w);
		for (i = 0; i < 2000; i++)
			json_put_str(&w, "0123456789");
		json_end_arr(&w);
		mem_set_limit(0);
		T_EQI(json_writer_err(&w), -E_NOMEM);
		arena_reset(&a);
	}
}

static const struct unit_case cases[] = {
	{ "valid", t_valid },
	{ "tokens", t_tokens },
	{ "invalid", t_invalid },
	{ "feed_bytes", t_feed_bytes },
	{ "feed_chunks", t_feed_chunks },
	{ "feed_prim", t_feed_prim },
	{ "feed_errors", t_feed_errors },
	{ "growth", t_growth },
	{ "max_tokens", t_max_tokens },
	{ "depth", t_depth },
	{ "query", t_query },
	{ "str", t_str },
	{ "surrogates", t_surrogates },
	{ "scalars", t_scalars },
	{ "raw", t_raw },
	{ "write", t_write },
	{ "write_escape", t_write_escape },
	{ "write_misuse", t_write_misuse },
	{ "dup_key", t_dup_key },
	{ "canon", t_canon },
	{ "roundtrip", t_roundtrip },
	{ "oom", t_oom },
};

const struct unit_suite suite_json = { "json", cases, ARRAY_LEN(cases) };
