/* pmuctl's end of a card's doorbell; see host/ivshmem_peer.h. */
#define _GNU_SOURCE
#include "host/ivshmem_peer.h"
#include "host/clock.h"

#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define SETUP_MS     1000
#define MAX_ID       65535 /* spec: IDs fit the Doorbell register's 16 bits */
#define MAX_MESSAGES 4096  /* before our own eventfd: no server of one card's peers sends more */

struct doorbell {
	int sock;  /* open while we are a peer: the server tells QEMU when it closes */
	int own;   /* our eventfd: the card rings it */
	int card;  /* the card's vector 0: we ring it */
	uint32_t id;
};

static int __attribute__((format(printf, 3, 4))) fail(char *err, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, n, fmt, ap);
	va_end(ap);
	return -1;
}

/* Receives into buf (at most len bytes, without waiting) and closes every descriptor but the first, kept in *fd. */
static ssize_t take(int sock, void *buf, size_t len, int *fd, int *extra)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { buf, len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b, .msg_controllen = sizeof(ctl.b) };
	ssize_t r = recvmsg(sock, &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);

	if (r < 0)
		return r;
	*extra = !!(m.msg_flags & MSG_CTRUNC); /* the kernel closed those that did not fit */
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int f;
			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(f));
			if (*fd < 0) {
				*fd = f;
			} else {
				close(f);
				*extra = 1;
			}
		}
	}
	return r;
}

/*
 * One message (spec: an 8-byte little-endian signed number, perhaps with
 * one descriptor, in *fd, else -1) before `end`. 0, or -1 with err.
 */
static int recv_msg(int sock, int64_t end, int64_t *val, int *fd, char *err, size_t n)
{
	unsigned char buf[8];
	size_t got = 0;
	int extra = 0;

	*fd = -1;
	while (got < sizeof(buf)) {
		struct pollfd p = { sock, POLLIN, 0 };
		int64_t left = end - now_ms();
		if (left <= 0 || poll(&p, 1, (int)left) == 0) {
			fail(err, n, "sent no complete message in %d ms", SETUP_MS);
			goto bad;
		}
		ssize_t r = take(sock, buf + got, sizeof(buf) - got, fd, &extra);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0) {
			fail(err, n, "closed the connection%s%s", r ? ": " : "", r ? strerror(errno) : "");
			goto bad;
		}
		if (extra) {
			fail(err, n, "sent more than one file descriptor with a message");
			goto bad;
		}
		got += r;
	}
	uint64_t v;
	memcpy(&v, buf, sizeof(v));
	*val = (int64_t)le64toh(v);
	return 0;
bad:
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
	return -1;
}

static int is_eventfd(int fd)
{
	char path[64], link[64];
	ssize_t r;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = readlink(path, link, sizeof(link) - 1);
	return r > 0 && (link[r] = 0, strcmp(link, "anon_inode:[eventfd]") == 0);
}

/* spec, "The ivshmem Client-Server Protocol", messages 1-5: up to our own eventfd for vector 0. */
static int setup(struct doorbell *d, uint32_t card_peer, int mbox_fd, char *err, size_t n)
{
	int64_t end = now_ms() + SETUP_MS, v;
	int fd;
	struct stat a, b;

	if (recv_msg(d->sock, end, &v, &fd, err, n))
		return -1;
	if (fd >= 0 || v != 0) /* 1: the version, 0 */
		return close(fd), fail(err, n, "speaks protocol version %lld%s, not 0", (long long)v,
				       fd >= 0 ? " with a file descriptor" : "");
	if (recv_msg(d->sock, end, &v, &fd, err, n))
		return -1;
	if (fd >= 0 || v < 0 || v > MAX_ID) /* 2: our ID */
		return close(fd), fail(err, n, "gave this peer the ID %lld%s (0 to %d)", (long long)v,
				       fd >= 0 ? " with a file descriptor" : "", MAX_ID);
	d->id = (uint32_t)v;
	if (d->id == card_peer)
		return fail(err, n, "gave this peer the ID %u, which the card's mailbox says is the card's", d->id);
	if (recv_msg(d->sock, end, &v, &fd, err, n))
		return -1;
	if (v != -1 || fd < 0) /* 3: -1 and the shared memory */
		return close(fd), fail(err, n, "sent %lld%s where the shared memory belongs", (long long)v,
				       fd < 0 ? " without a file descriptor" : "");
	int same = fstat(fd, &a) == 0 && fstat(mbox_fd, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
	close(fd);
	if (!same)
		return fail(err, n, "hands out another file than this mailbox: the doorbell of another card");
	/* 4: the other peers' eventfds (the card's among them), then 5: our own. */
	for (int i = 0; i < MAX_MESSAGES && d->own < 0; i++) {
		if (recv_msg(d->sock, end, &v, &fd, err, n))
			return -1;
		if (v < 0 || v > MAX_ID)
			return close(fd), fail(err, n, "sent a peer ID of %lld (0 to %d)", (long long)v, MAX_ID);
		int *mine = v == d->id ? &d->own : v == card_peer ? &d->card : NULL;
		if (fd < 0 && mine)
			return fail(err, n, "said peer %lld (%s) left", (long long)v, v == d->id ? "this one" : "the card");
		if (mine && *mine < 0)
			*mine = fd; /* the first is vector 0 */
		else if (fd >= 0)
			close(fd);
	}
	if (d->own < 0)
		return fail(err, n, "sent %d messages without this peer's own eventfd", MAX_MESSAGES);
	if (d->card < 0)
		return fail(err, n, "has no peer %u, the card's (the card is not connected to it)", card_peer);
	if (!is_eventfd(d->own) || !is_eventfd(d->card))
		return fail(err, n, "sent a file descriptor that is not an eventfd");
	/*
	 * No O_NONBLOCK on them: it belongs to the open file description, which
	 * QEMU shares, and QEMU clears it on every descriptor it receives
	 * (7.2 io/channel-socket.c, qio_channel_socket_copy_fds: "O_NONBLOCK is
	 * preserved across SCM_RIGHTS so reset it") before ivshmem sets it again
	 * (hw/misc/ivshmem.c, process_msg_connect). A read that trusted the flag
	 * in between blocked for good (pmuctl info hung right after a boot).
	 * Rings are taken only when poll says one is there (take_ring).
	 */
	return 0;
}

struct doorbell *doorbell_open(const char *sock, uint32_t card_peer, int mbox_fd, char *err, size_t n)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct doorbell *d = calloc(1, sizeof(*d));

	if (!d) {
		fail(err, n, "out of memory");
		return NULL;
	}
	d->own = d->card = -1;
	if (strlen(sock) >= sizeof(a.sun_path)) {
		fail(err, n, "%s: the path is too long for a socket", sock);
		free(d);
		return NULL;
	}
	strcpy(a.sun_path, sock);
	d->sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (d->sock < 0 || connect(d->sock, (struct sockaddr *)&a, sizeof(a)) != 0) {
		int e = errno;
		if (e == ENOENT || e == ECONNREFUSED) /* no server (any more): no doorbell, nothing wrong */
			err[0] = 0;
		else
			fail(err, n, "%s: %s", sock, strerror(e));
		doorbell_close(d);
		return NULL;
	}
	char why[200];
	if (setup(d, card_peer, mbox_fd, why, sizeof(why))) {
		fail(err, n, "the doorbell server at %s %s", sock, why);
		doorbell_close(d);
		return NULL;
	}
	return d;
}

uint32_t doorbell_peer(const struct doorbell *d)
{
	return d->id;
}

/*
 * Takes a ring of the card's from our eventfd if there is one, without
 * blocking whatever the descriptor's flags: only this process reads it, so
 * a count poll saw is still there for the read. 1 if it took one.
 */
static int take_ring(int fd)
{
	struct pollfd p = { fd, POLLIN, 0 };
	uint64_t v;

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN) && read(fd, &v, sizeof(v)) == sizeof(v);
}

void doorbell_ring(struct doorbell *d)
{
	uint64_t v = 1; /* spec, "The ivshmem Client-Client Protocol": write 1 */
	struct pollfd p = { d->card, POLLOUT, 0 };

	take_ring(d->own); /* a ring left from an answer already taken */
	/* Writable unless its count is at 2^64 - 2 (a card that never takes rings): then it has rings enough. */
	if (poll(&p, 1, 0) == 1 && (p.revents & POLLOUT) && write(d->card, &v, sizeof(v)) < 0) {
	}
}

/* The server's later messages (spec, 6: peers coming and going): nothing pmuctl needs; their eventfds closed. */
static void drain(struct doorbell *d)
{
	char buf[256];
	int fd = -1, extra;
	ssize_t r;

	while ((r = take(d->sock, buf, sizeof(buf), &fd, &extra)) > 0) {
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	if (r == 0 || (errno != EAGAIN && errno != EINTR)) { /* the server ended: the eventfds still work (spec) */
		close(d->sock);
		d->sock = -1;
	}
}

int doorbell_wait(struct doorbell *d, int ms)
{
	struct pollfd p[2] = { { d->own, POLLIN, 0 }, { d->sock, POLLIN, 0 } };

	if (poll(p, d->sock >= 0 ? 2 : 1, ms) <= 0)
		return 0;
	if (d->sock >= 0 && p[1].revents)
		drain(d);
	return (p[0].revents & POLLIN) && take_ring(d->own);
}

void doorbell_close(struct doorbell *d)
{
	if (!d)
		return;
	if (d->sock >= 0)
		close(d->sock);
	if (d->own >= 0)
		close(d->own);
	if (d->card >= 0)
		close(d->card);
	free(d);
}
