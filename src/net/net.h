/* net.h - TCP connections with timeouts: DNS through musl's resolver
 * (/etc/hosts, /etc/resolv.conf), IPv4 and IPv6, non-blocking connect, and
 * reads that wait at most first_ms for the first byte of a reply and
 * idle_ms between bytes after that. An optional deadline bounds all of it
 * together, as a server that sends a byte now and then never trips the
 * idle timeout. */
#ifndef NET_H
#define NET_H

#include "base/base.h"

struct net_conn {
	int		 fd;
	int		 first_ms;	/* wait for the first byte after a write */
	int		 idle_ms;	/* wait between bytes */
	int		 waiting_first;	/* a request went out, no byte back yet */
	long long	 deadline;	/* net_now_ms() when all waits end; 0 none */
	int		 expired;	/* a call failed as the deadline passed */
	int		 err_no;	/* errno or EAI_* of the last failure */
	const char	*why;		/* words for the last failure */
};

/* Resolve host and connect, trying each address in turn within
 * connect_ms in all. Returns 0, -E_NOENT (name not found), -E_TIMEOUT or
 * -E_IO; c->why says which in words.
 *
 * The caller sets c->deadline (kept across connections). Once it has
 * passed, connect, read and write fail with -E_TIMEOUT and set c->expired
 * (the caller clears it), even when bytes are waiting: no wait outlasts
 * it. The name lookup is
 * the exception, bounded only by the resolver's own timeouts. */
int	net_connect(struct net_conn *c, const char *host, unsigned port,
	    int connect_ms);

/* >0 bytes, 0 at EOF, -E_TIMEOUT or -E_IO. */
long	net_read(struct net_conn *c, void *buf, size_t n);

/* Write everything: 0, -E_TIMEOUT or -E_IO. */
int	net_write(struct net_conn *c, const void *buf, size_t n);

void	net_close(struct net_conn *c);

/* Milliseconds from a monotonic clock. */
long long net_now_ms(void);

#endif
