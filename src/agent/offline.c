/* offline.c - offline turns: no model, the best-matching action of the
 * best skill. */

#include "agent/agent.h"

#include <stdio.h>
#include <string.h>

#include "agent/agent_int.h"

/* --- offline: no model, the best-matching action of the best skill */

/* Does w (n bytes) start a word of hay? A prefix is enough: "log" finds
 * "logs", but not "catalog". */
static int
word_in(const char *hay, const char *w, size_t n)
{
	const char *p;

	for (p = hay; (p = strcasestr(p, w)) != NULL; p += n)
		if (p == hay || !((p[-1] | 32) >= 'a' && (p[-1] | 32) <= 'z'))
			return 1;
	return 0;
}

/* 10 for each word of the phrase w (n bytes, NUL-terminated) when every
 * one starts a word of the request, in any order: "internet slow" is
 * "is the internet slow?", and outweighs a lone "slow" elsewhere. */
static int
phrase(const char *input, char *w, size_t n)
{
	char *s, *e;
	int sc = 0;

	for (s = w; s < w + n; s = e + 1) {
		for (e = s; e < w + n && *e != ' '; e++)
			;
		*e = '\0';
		if (e > s && !word_in(input, s, (size_t)(e - s)))
			return 0;
		sc += e > s ? 10 : 0;
	}
	return sc;
}

/* Score the comma-separated trigger phrases at s, up to ';' or the end
 * (set in *end): see phrase(). */
static int
triggers(const char *s, const char **end, const char *input)
{
	const char *e;
	char w[64];
	size_t n;
	int sc = 0;

	for (; *s != '\0' && *s != ';'; s = *e == ',' ? e + 1 : e) {
		for (e = s; *e != '\0' && *e != ',' && *e != ';'; e++)
			;
		while (s < e && *s == ' ')
			s++;
		for (n = (size_t)(e - s); n > 0 && s[n - 1] == ' '; n--)
			;
		if (n > 0 && n < sizeof(w)) {
			memcpy(w, s, n);
			w[n] = '\0';
			sc += phrase(input, w, n);
		}
	}
	*end = s;
	return sc;
}

/* Score a skill against the request: trigger phrases count most. *hit
 * is set when a trigger or the skill's name matched: words of the
 * description alone ("there" in "whether there are updates") pick no
 * skill. */
static int
score(const struct skill *sk, const char *input, int *hit)
{
	static const char *const stop[] = { "the", "and", "what", "why",
	    "how", "is", "my", "are", "this", "that", "with", "for", "of",
	    "to", "in", "on", "it", "me", "show", "tell", "using", "can" };
	const char *s, *e;
	char w[64];
	int sc = 0;
	size_t n, i;

	if (sk->triggers != NULL && (sc = triggers(sk->triggers, &e,
	    input)) > 0)
		*hit = 1;
	for (s = input; *s != '\0'; s = e) {
		while (*s != '\0' && !((*s | 32) >= 'a' && (*s | 32) <= 'z'))
			s++;
		for (e = s; (*e | 32) >= 'a' && (*e | 32) <= 'z'; e++)
			;
		n = (size_t)(e - s);
		if (n < 3 || n >= sizeof(w))
			continue;
		memcpy(w, s, n);
		w[n] = '\0';
		for (i = 0; i < ARRAY_LEN(stop); i++)
			if (strcasecmp(w, stop[i]) == 0)
				break;
		if (i < ARRAY_LEN(stop))
			continue;
		if (strcasestr(sk->name, w) != NULL) {
			sc += 3;
			*hit = 1;
		}
		if (word_in(sk->description, w, n))
			sc += 1;
	}
	return sc;
}

/* The action of sk that fits the request: the metadata.actions entry
 * ("SCRIPT: trigger, ...; ...") whose triggers score most, else the
 * default action (*script NULL when there is none). Returns the score. */
static int
action(const struct skill *sk, const char *input, const char **script,
    size_t *len)
{
	const char *s, *c, *e;
	int sc, top = 0;

	*script = sk->default_action;
	*len = *script != NULL ? strlen(*script) : 0;
	for (s = sk->actions; s != NULL && *s != '\0'; s = e + (*e == ';')) {
		while (*s == ' ')
			s++;
		if ((c = strchr(s, ':')) == NULL)
			break;
		if ((sc = triggers(c + 1, &e, input)) > top) {
			top = sc;
			*script = s;
			for (*len = (size_t)(c - s); s[*len - 1] == ' ';)
				--*len;
		}
	}
	return top;
}

enum agent_status
offline_turn(struct agent *ag, const char *input, const char **final)
{
	const struct skill *best = NULL;
	const char *script = NULL, *scr, *text;
	struct json_doc d;
	struct tool_env env;
	struct tool_out out;
	struct json_writer jw;
	struct frame f;
	struct sbuf sb;
	struct ev ev;
	char *args, *so;
	int sc, top = 0, human, hit;
	size_t len = 0, n;
	unsigned i, top_i = 0;
	struct arena tmp;

	arena_init(&tmp, "offline");
	for (i = 0; i < ag->reg.n; i++) {
		const struct skill *sk;

		/* disable-model-invocation: only a person starts it. */
		if ((skill_reg_flags(&ag->reg, i) & SKILL_NO_MODEL) ||
		    (sk = skill_reg_get(&ag->reg, i, &tmp)) == NULL)
			continue;
		sc = action(sk, input, &scr, &n);
		hit = sc > 0;
		sc += score(sk, input, &hit);
		if (scr != NULL && hit && sc > top)
			top = sc, top_i = i;
		arena_reset(&tmp);
	}
	/* An index reads its skills one at a time: the best one again. */
	if (top > 0 && (best = skill_find(&ag->reg, skill_reg_name(&ag->reg,
	    top_i))) != NULL)
		action(best, input, &script, &len);
	if (best == NULL) {
		*final = "No model is configured (offline mode), and no "
		    "installed skill with a default action matches the "
		    "request. Configure a provider in skillbox.yaml, or name "
		    "a skill's topic (skillbox skills list shows them).";
		return AG_FAIL;
	}
	ev_handoff(ag, "entry", best->name, 0, input, 1, NULL);
	memset(&f, 0, sizeof(f));
	f.name = best->name;
	f.skill = best;
	agent_tool_env(ag, &f, &env);
	/* A skill that declares actions prints for a person with --text;
	 * --json (ag->o.json) keeps the JSON. The arguments go through the
	 * JSON writer: the script is text from the skill's author. */
	human = best->actions != NULL && !ag->o.json;
	sbuf_init(&sb, &ag->turn, 0);
	json_writer_init(&jw, &sb);
	json_begin_obj(&jw);
	json_key(&jw, "script");
	json_put_strn(&jw, script, len);
	if (human) {
		json_key(&jw, "args");
		json_begin_arr(&jw);
		json_put_str(&jw, "--text");
		json_end_arr(&jw);
	}
	json_end_obj(&jw);
	if (json_writer_err(&jw) != 0)
		return AG_NOMEM;
	args = sb.p;
	ev_tool(ag, &ev, "tool_start", best->name, NULL, "run_skill_script");
	json_kstr(&ev.w, "args", args);
	ev_end(ag, &ev, 1);
	if (tool_call(&env, &ag->turn, T_RUN_SKILL_SCRIPT, args, strlen(args),
	    &out) != 0)
		return AG_NOMEM;
	ev_tool_end(ag, best->name, NULL, "run_skill_script", &out, -1);
	text = out.text;
	n = out.len;
	if (human && json_parse(&ag->turn, out.text, out.len, 64, &d) == 0 &&
	    json_str(&d, &ag->turn, json_get(&d, 0, "stdout"), &so, &n) == 0)
		text = so;
	while (n > 0 && text[n - 1] == '\n')
		n--;
	sbuf_init(&sb, &ag->turn, 0);
	sbuf_printf(&sb, "%.*s\n\n(offline: no model is configured; this is "
	    "the '%s' skill's %.*s)", (int)n, text, best->name, (int)len,
	    script);
	if (sb.err)
		return AG_NOMEM;
	*final = sb.p;
	return out.is_error ? AG_FAIL : AG_OK;
}
