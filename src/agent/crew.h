/* crew.h - a .skilled_crew.yaml (cfg.h says what is read of it), and the
 * part of the configuration loader (cfg.c) that crew.c shares. Only cfg.c
 * and crew.c include it. */
#ifndef CREW_H
#define CREW_H

#include <stddef.h>

#include "agent/cfg.h"
#include "base/arena.h"
#include "base/base.h"

struct fm_node;

/* One load of the configuration (cfg_load). */
struct cfg_ld {
	struct cfg	*c;
	struct arena	*a;		/* the config's strings */
	struct arena	 tmp;		/* file text, YAML trees */
	const char	*file;		/* for messages */
	const char	*dir;		/* relative paths resolve here */
	char		*err;
	size_t		 errlen;
	unsigned	 instr_line, agents_line, provider_line;
	const char	*crew_model;	/* a crew's AGENTS.md model */
	int		 crew;		/* loading a crew's files */
	int		 other;		/* another crew agent's AGENTS.md */
};

/* --- crew.c */

/* 1 when path names a crew (ends in ".skilled_crew.yaml"). */
int	crew_is_file(const char *path);

/* Load the crew at path into l->c: its agents' skills, the entry agent's
 * instructions (and the others' as roles), commands, MCP servers (after
 * those of a skillbox.yaml). alone: the crew is the whole configuration,
 * so the model comes from it too ($SKILLET_MODEL_RUNNER, its AGENTS.md).
 * Returns 0, -E_NOMEM, or another error with the message in l->err. */
int	crew_load(struct cfg_ld *l, const char *path, int alone);

/* --- cfg.c, for crew.c */

/* "file:line: message" (no line when 0) into l->err; returns code. */
int	cfg_bad(struct cfg_ld *l, int code, unsigned line, const char *fmt,
	    ...) ATTR_PRINTF(4, 5);

/* Read the YAML file path into *root (in l->tmp); l->dir becomes its
 * folder (absolute). 0, -E_NOMEM, or an error said by cfg_bad: a read
 * error (l->file names the file), -E_PARSE with the line. */
int	cfg_read_yaml(struct cfg_ld *l, const char *path,
	    struct fm_node **root);

/* A whole regular file of at most max bytes into *out (NUL-ended, in
 * l->tmp), its length in *len. 0, -E_NOENT, -E_LIMIT, -E_IO (errno says
 * why; EISDIR for what is not a regular file) or -E_NOMEM. */
int	cfg_read_file(struct cfg_ld *l, const char *path, size_t max,
	    char **out, size_t *len);

/* Words for a cfg_read_file failure e (buf holds them when needed). */
const char *cfg_read_why(int e, size_t max, char *buf, size_t n);

/* A relative path from the file made absolute from l->dir, trailing
 * slashes gone; in l->a. NULL when out of memory. */
char	*cfg_resolve(struct cfg_ld *l, const char *s);

/* 1 for an http:// or https:// URL with something after the scheme. */
int	cfg_is_url(const char *s);

/* The first key under prefix ("mqtt.") that the file set, with *src
 * where; NULL when none is. */
const char *cfg_key_set(const struct cfg *c, const char *prefix,
	    const char **src);

/* cfg_mqtt.c: the mqtt: section as a whole, after its keys. 0 or as
 * cfg_bad. */
int	cfg_check_mqtt(struct cfg_ld *l);

/* The index of a key ("limits.turns") in c->src, or -1. */
int	cfg_find_key(const char *name);

/* Record where key's value came from (cfg_source); an unknown key is
 * ignored. */
void	cfg_set_src(struct cfg *c, const char *key, const char *src);

/* Read the AGENTS.md l->c->agents_file (from l->agents_line): optional
 * front-matter (name, description, model, skill_mode), then the
 * instructions. Messages name the agents file. Another crew agent's
 * front-matter is not read (l->other). 0, or an error as cfg_bad. */
int	cfg_load_agents(struct cfg_ld *l);

#endif
