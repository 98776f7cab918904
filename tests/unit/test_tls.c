/* test_tls.c - trust anchors from PEM: our reader against odd bundles. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "str.h"
#include "tls.h"
#include "unit.h"

#define BUNDLE	"/etc/ssl/certs/ca-certificates.crt"

/* The system bundle, NUL-terminated in the test arena, or NULL. */
static char *
slurp(const char *path, size_t *n)
{
	struct sbuf sb;
	char buf[4096];
	ssize_t r;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return NULL;
	sbuf_init(&sb, &t_arena, 4u << 20);
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		sbuf_add(&sb, buf, (size_t)r);
	close(fd);
	*n = sb.len;
	return sb.err ? NULL : sb.p;
}

static unsigned
count_of(const char *s, const char *what)
{
	unsigned k = 0;

	while ((s = strstr(s, what)) != NULL) {
		k++;
		s++;
	}
	return k;
}

/* Load text as a bundle file; the anchor count, or -1 with the error. */
static int
load_text(const char *text, size_t n, int *err)
{
	char path[] = "/tmp/skillbox-tls-XXXXXX";
	struct tls_anchors *ta;
	unsigned count = 0;
	int fd = mkstemp(path);

	T(fd >= 0);
	T(write(fd, text, n) == (ssize_t)n);
	close(fd);
	*err = tls_anchors_load(&t_arena, path, &ta, &count);
	unlink(path);
	return *err == 0 ? (int)count : -1;
}

/* The first certificate of the bundle, BEGIN to END line included. */
static char *
first_cert(const char *b)
{
	const char *s = strstr(b, "-----BEGIN CERTIFICATE-----");
	const char *e = s != NULL ? strstr(s, "-----END CERTIFICATE-----") :
	    NULL;

	if (e == NULL)
		return NULL;
	e += strlen("-----END CERTIFICATE-----");
	return arena_strndup(&t_arena, s, (size_t)(e - s));
}

static void
system_bundle(void)
{
	size_t n;
	char *b = slurp(BUNDLE, &n);
	int e;

	T(b != NULL);		/* tools/setup installs ca-certificates */
	if (b == NULL)
		return;
	/* Every certificate of Debian's bundle decodes. */
	T_EQI(load_text(b, n, &e), (int)count_of(b, "BEGIN CERTIFICATE"));
}

static void
odd_bundles(void)
{
	struct sbuf sb;
	size_t n, i;
	char *b = slurp(BUNDLE, &n), *c = NULL, *bad;
	int e;

	T(b != NULL && (c = first_cert(b)) != NULL);
	if (b == NULL || c == NULL)
		return;
	T_EQI(load_text(c, strlen(c), &e), 1);	/* no LF at the end */

	/* CRLF lines, trailing blanks, text around, an X509 CERTIFICATE, a
	 * key that is skipped, and a line too long to be PEM. */
	sbuf_init(&sb, &t_arena, 0);
	sbuf_adds(&sb, "Bundle for a test\r\n\r\n");
	for (i = 0; c[i] != '\0'; i++) {
		if (c[i] == '\n')
			sbuf_adds(&sb, "  \r");
		sbuf_addc(&sb, c[i]);
	}
	sbuf_adds(&sb, "\r\n-----BEGIN PRIVATE KEY-----\nAAAA\n"
	    "-----END PRIVATE KEY-----\n");
	sbuf_adds(&sb, "-----BEGIN X509 CERTIFICATE-----");
	sbuf_adds(&sb, strchr(c, '\n'));
	sbuf_addc(&sb, '\n');
	for (i = 0; i < 1000; i++)
		sbuf_addc(&sb, 'x');
	sbuf_adds(&sb, "\n");
	sbuf_adds(&sb, c);
	sbuf_addc(&sb, '\n');
	T_EQI(sb.err, 0);
	T_EQI(load_text(sb.p, sb.len, &e), 3);

	/* A certificate with a character that is not base64 is dropped; the
	 * next one still loads. */
	bad = arena_strdup(&t_arena, c);
	bad[strlen("-----BEGIN CERTIFICATE-----\n") + 10] = '*';
	sbuf_init(&sb, &t_arena, 0);
	sbuf_adds(&sb, bad);
	sbuf_addc(&sb, '\n');
	sbuf_adds(&sb, c);
	T_EQI(load_text(sb.p, sb.len, &e), 1);
	T_EQI(load_text(bad, strlen(bad), &e), -1);
	T_EQI(e, -E_PARSE);

	/* Cut in the middle: nothing, and no crash. */
	T_EQI(load_text(c, strlen(c) / 2, &e), -1);
	T_EQI(e, -E_PARSE);
	T_EQI(load_text("", 0, &e), -1);
	T_EQI(e, -E_PARSE);
}

static const struct unit_case cases[] = {
	{ "system_bundle", system_bundle },
	{ "odd_bundles", odd_bundles },
};

const struct unit_suite suite_tls = { "tls", cases, ARRAY_LEN(cases) };
