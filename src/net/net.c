/* net.c - sockets, DNS and timeouts. One blocking-with-poll connection at a
 * time; no threads. */
#include "net/net.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

long long
net_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int
fail(struct net_conn *c, int e, int err_no, const char *why)
{
	c->err_no = err_no;
	c->why = why;
	return e;
}

/* The deadline has passed: fail whatever was going on. */
static int
expire(struct net_conn *c)
{
	c->expired = 1;
	return fail(c, -E_TIMEOUT, ETIMEDOUT, "the deadline passed");
}

static int
past_deadline(struct net_conn *c)
{
	return c->deadline > 0 && net_now_ms() >= c->deadline;
}

/* Wait for `ev` on the socket for at most ms (negative: forever), and
 * never past the deadline. */
static int
wait_fd(struct net_conn *c, short ev, int ms)
{
	struct pollfd p = { c->fd, ev, 0 };
	long long now = net_now_ms(), end = ms < 0 ? -1 : now + ms;
	int r, left, late = 0;

	if (c->deadline > 0 && (end < 0 || c->deadline <= end)) {
		end = c->deadline;
		late = 1;
	}
	for (;;) {
		left = end < 0 ? -1 : (int)MIN(MAX(end - now, 0), INT_MAX);
		r = poll(&p, 1, left);
		if (r > 0)
			return 0;
		if (r == 0 && late)
			return expire(c);
		if (r == 0)
			return fail(c, -E_TIMEOUT, ETIMEDOUT, "timed out");
		if (errno != EINTR)
			return fail(c, -E_IO, errno, strerror(errno));
		now = net_now_ms();
	}
}

/* see net.h */
int
net_connect(struct net_conn *c, const char *host, unsigned port,
    int connect_ms)
{
	struct addrinfo hints, *res = NULL, *ai;
	long long end = net_now_ms() + connect_ms;
	char serv[8];
	socklen_t sl;
	int r, e = 0, one = 1, left;

	c->fd = -1;
	c->waiting_first = 0;
	if (past_deadline(c))
		return expire(c);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_ADDRCONFIG;
	snprintf(serv, sizeof(serv), "%u", port);
	if ((r = getaddrinfo(host, serv, &hints, &res)) != 0) {
		if (r == EAI_MEMORY)
			return fail(c, -E_NOMEM, r, "out of memory");
		return fail(c, r == EAI_NONAME || r == EAI_NODATA ? -E_NOENT :
		    -E_IO, r, gai_strerror(r));
	}
	fail(c, -E_IO, 0, "no address");
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		c->fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC |
		    SOCK_NONBLOCK, ai->ai_protocol);
		if (c->fd < 0) {
			e = fail(c, -E_IO, errno, strerror(errno));
			continue;
		}
		if (connect(c->fd, ai->ai_addr, ai->ai_addrlen) != 0 &&
		    errno != EINPROGRESS) {
			e = fail(c, -E_IO, errno, strerror(errno));
			goto next;
		}
		if ((left = (int)(end - net_now_ms())) < 0)
			left = 0;
		if ((e = wait_fd(c, POLLOUT, left)) != 0)
			goto next;
		sl = sizeof(r);
		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &r, &sl) != 0)
			r = errno;
		if (r != 0) {
			e = fail(c, -E_IO, r, strerror(r));
			goto next;
		}
		setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		freeaddrinfo(res);
		c->why = NULL;
		c->err_no = 0;
		return 0;
next:
		close(c->fd);
		c->fd = -1;
		if (e == -E_TIMEOUT)
			break;
	}
	freeaddrinfo(res);
	return e != 0 ? e : -E_IO;
}

/* see net.h */
long
net_read(struct net_conn *c, void *buf, size_t n)
{
	ssize_t r;
	int e;

	for (;;) {
		/* A server that trickles bytes never makes us wait. */
		if (past_deadline(c))
			return expire(c);
		r = read(c->fd, buf, n);
		if (r >= 0) {
			if (r > 0)
				c->waiting_first = 0;
			return (long)r;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return fail(c, -E_IO, errno, strerror(errno));
		e = wait_fd(c, POLLIN, c->waiting_first ? c->first_ms :
		    c->idle_ms);
		if (e != 0) {
			if (e == -E_TIMEOUT && !c->expired)
				c->why = c->waiting_first ?
				    "no reply within the first-byte timeout" :
				    "the reply stalled past the idle timeout";
			return e;
		}
	}
}

/* see net.h */
int
net_write(struct net_conn *c, const void *buf, size_t n)
{
	const char *p = buf;
	ssize_t r;
	int e;

	while (n > 0) {
		if (past_deadline(c))
			return expire(c);
		r = send(c->fd, p, n, MSG_NOSIGNAL);
		if (r > 0) {
			p += r;
			n -= (size_t)r;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return fail(c, -E_IO, errno, strerror(errno));
		if ((e = wait_fd(c, POLLOUT, c->idle_ms)) != 0)
			return e;
	}
	c->waiting_first = 1;
	return 0;
}

/* see net.h */
void
net_close(struct net_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}
