/* cfg_mqtt.c - the configuration's mqtt: section as a whole (what goes
 * together, the password file, the client id and prefix that depend on
 * the host) and the options the fleet's device and controller connect
 * with. */
#include "agent/cfg.h"
#include "agent/crew.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/str.h"
#include "config.h"
#include "net/mqtt.h"

/* The client id a device has when none is set: its host name up to the
 * first dot, else the first 12 hex digits of /etc/machine-id; NULL when
 * neither makes a name. */
static const char *
default_client_id(struct cfg_ld *l)
{
	char host[256], id[13];
	size_t n;
	int fd;

	if (gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = '\0';
		host[strcspn(host, ".")] = '\0';
		if (cfg_mqtt_name_ok(host) && strcmp(host, "group") != 0 &&
		    strcmp(host, "queue") != 0 && strcmp(host, "localhost") != 0)
			return arena_strdup(l->a, host);
	}
	if ((fd = open("/etc/machine-id", O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	n = (size_t)MAX(read(fd, id, 12), 0);
	close(fd);
	id[n] = '\0';
	return n == 12 && strspn(id, "0123456789abcdef") == 12 ?
	    arena_strdup(l->a, id) : NULL;
}

/* The password file: one line, its newline not part of it. */
static int
mqtt_password(struct cfg_ld *l, struct cfg_mqtt *m)
{
	char *text, why[32];
	size_t n;
	int e;

	l->file = cfg_source(l->c, "mqtt.password_file");
	if ((e = cfg_read_file(l, m->password_file, 1024, &text, &n)) != 0)
		return e == -E_NOMEM ? e : cfg_bad(l, -E_INVAL, 0,
		    "mqtt.password_file '%s': %s", m->password_file,
		    cfg_read_why(e, 1024, why, sizeof(why)));
	while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r'))
		n--;
	if (n == 0)
		return cfg_bad(l, -E_INVAL, 0, "mqtt.password_file '%s' is "
		    "empty", m->password_file);
	if ((m->pass = arena_strndup(l->a, text, n)) == NULL)
		return -E_NOMEM;
	m->pass_len = n;
	explicit_bzero(text, n);
	return 0;
}

/* The fleet's section as a whole: what goes together, the password, and
 * the client id and prefix that depend on the host. */
int
cfg_check_mqtt(struct cfg_ld *l)
{
	struct cfg_mqtt *m = &l->c->mqtt;
	const char *key;
	int i, tls;

	if (!HAVE_FLEET)
		return 0;
	if (m->broker == NULL) {
		if ((key = cfg_key_set(l->c, "mqtt.", &l->file)) == NULL)
			return 0;
		return cfg_bad(l, -E_INVAL, 0, "'%s' needs 'mqtt.broker'", key);
	}
	l->file = cfg_source(l->c, "mqtt.broker");
	tls = strncmp(m->broker, "mqtts:", 6) == 0;
	if (!tls && (m->ca != NULL || m->cert != NULL || m->key != NULL))
		return cfg_bad(l, -E_INVAL, 0, "'mqtt.ca', 'mqtt.cert' and "
		    "'mqtt.key' are for an mqtts:// broker");
	if ((m->cert == NULL) != (m->key == NULL))
		return cfg_bad(l, -E_INVAL, 0, "'mqtt.cert' and 'mqtt.key' go "
		    "together: set both, or neither");
	if (m->password_file != NULL && m->password_env != NULL)
		return cfg_bad(l, -E_INVAL, 0, "give 'mqtt.password_file' or "
		    "'mqtt.password_env', not both");
	if ((m->password_file != NULL || m->password_env != NULL) &&
	    m->username == NULL)
		return cfg_bad(l, -E_INVAL, 0, "a password needs "
		    "'mqtt.username'");
	if (m->version == MQTT_V311 && m->nqueues > 0)
		return cfg_bad(l, -E_INVAL, 0, "'mqtt.queues' need MQTT 5 "
		    "(shared subscriptions), not version 3.1.1");
	if (m->password_file != NULL && (i = mqtt_password(l, m)) != 0)
		return i;
	if (m->client_id == NULL && (m->client_id = default_client_id(l)) ==
	    NULL)
		return cfg_bad(l, -E_INVAL, 0, "no host name or machine-id "
		    "makes a client id: set 'mqtt.client_id'");
	if (m->prefix == NULL && (m->prefix = arena_printf(l->a, "%s/%s",
	    m->root, m->client_id)) == NULL)
		return -E_NOMEM;
	return 0;
}

/* see cfg.h */
int
cfg_mqtt_opts(const struct cfg *c, struct mqtt_opts *o,
    struct mqtt_link_opts *lo, char *why, size_t n)
{
	const struct cfg_mqtt *m = &c->mqtt;

	memset(o, 0, sizeof(*o));
	memset(lo, 0, sizeof(*lo));
	if (m->broker == NULL) {
		snprintf(why, n, "no mqtt.broker in the configuration");
		return -E_INVAL;
	}
	o->ver = m->version;
	o->client_id = m->client_id;
	o->user = m->username;
	o->pass = m->pass;
	o->pass_len = m->pass_len;
	if (m->password_env != NULL) {
		o->pass = getenv(m->password_env);
		if (o->pass == NULL || *o->pass == '\0') {
			snprintf(why, n, "mqtt.password_env: $%s is not set",
			    m->password_env);
			return -E_INVAL;
		}
		o->pass_len = strlen(o->pass);
	}
	o->keepalive = m->keepalive;
	o->expiry = m->session_expiry;
	lo->url = m->broker;
	lo->ca = m->ca != NULL ? m->ca : c->ca_file;
	lo->cert = m->cert;
	lo->key = m->key;
	lo->connect_ms = c->limits.connect_s * 1000;
	lo->backoff_min_ms = 1000;
	lo->backoff_max_ms = 60000;
	return 0;
}
