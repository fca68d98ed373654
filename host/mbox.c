/* Host side of the card mailbox; see host/mbox.h. */
#define _GNU_SOURCE
#include "host/mbox.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CARD_TIMEOUT -100

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

static void nap(void)
{
	struct timespec ts = { 0, 200000 }; /* 0.2 ms */
	nanosleep(&ts, NULL);
}

int card_open(struct card *c, const char *name)
{
	static char path[256];
	struct stat st;

	memset(c, 0, sizeof(*c));
	if (strchr(name, '/'))
		snprintf(path, sizeof(path), "%s", name);
	else
		snprintf(path, sizeof(path), "/dev/shm/pmuos-%s", name);
	c->path = path;
	int fd = open(path, O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "pmuctl: no card at %s: %s (is the card running? make run CARD=%s)\n", path,
			strerror(errno), name);
		return -1;
	}
	if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(struct mbox_header)) {
		fprintf(stderr, "pmuctl: %s is too small to be a card mailbox\n", path);
		close(fd);
		return -1;
	}
	c->size = st.st_size;
	c->base = mmap(NULL, c->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (c->base == MAP_FAILED) {
		fprintf(stderr, "pmuctl: cannot map %s: %s\n", path, strerror(errno));
		return -1;
	}
	c->hdr = (struct mbox_header *)c->base;
	struct mbox_header *h = c->hdr;
	if (h->magic != MBOX_MAGIC || h->version != MBOX_VERSION) {
		fprintf(stderr, "pmuctl: %s is not a pmuos mailbox of version %d (the card may still be booting)\n",
			path, MBOX_VERSION);
		return -1;
	}
	uint64_t end_req = (uint64_t)h->req_off + MBOX_REQ_SLOTS * sizeof(struct mbox_request);
	uint64_t end_resp = (uint64_t)h->resp_off + MBOX_RESP_SLOTS * sizeof(struct mbox_response);
	if (h->size != c->size || end_req > c->size || end_resp > c->size ||
	    h->req_ctl_off + sizeof(struct mbox_ring_ctl) > c->size ||
	    h->resp_ctl_off + sizeof(struct mbox_ring_ctl) > c->size ||
	    (uint64_t)h->upload_off + MBOX_UPLOAD_SIZE > c->size ||
	    (uint64_t)h->console_off + MBOX_CONSOLE_SIZE > c->size ||
	    (uint64_t)h->samples_off + (uint64_t)h->cpu_count * sizeof(struct mbox_sample_ring) > c->size) {
		fprintf(stderr, "pmuctl: %s: the mailbox layout does not fit in its %zu bytes\n", path, c->size);
		return -1;
	}
	if (h->state != MBOX_READY) {
		fprintf(stderr, "pmuctl: card %s is not READY (state %u: %s)\n", path, h->state,
			h->state == MBOX_BOOTING ? "booting" : h->state == MBOX_PANIC ? "panic" : "unknown");
		return -1;
	}
	uint64_t beat = h->heartbeat, end = now_ms() + 1000;
	while (h->heartbeat == beat) {
		if (now_ms() > end) {
			fprintf(stderr, "pmuctl: card %s: heartbeat stale (no change in 1 s): the card has stopped\n",
				path);
			return -1;
		}
		nap();
	}
	return 0;
}

void card_close(struct card *c)
{
	if (c->locked)
		__atomic_store_n(&c->hdr->host_lock, 0, __ATOMIC_RELEASE);
	if (c->base && c->base != MAP_FAILED)
		munmap(c->base, c->size);
	c->base = NULL;
}

/* The host lock: our pid in header.host_lock; a lock whose holder is gone is taken over. */
static int lock(struct card *c, uint64_t end)
{
	uint32_t me = getpid();

	if (c->locked)
		return 0;
	for (;;) {
		uint32_t held = 0;
		if (__atomic_compare_exchange_n(&c->hdr->host_lock, &held, me, 0, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			break;
		if (held && kill(held, 0) != 0 && errno == ESRCH &&
		    __atomic_compare_exchange_n(&c->hdr->host_lock, &held, me, 0, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			break;
		if (now_ms() > end)
			return -1;
		nap();
	}
	c->locked = 1;
	return 0;
}

static void unlock(struct card *c)
{
	__atomic_store_n(&c->hdr->host_lock, 0, __ATOMIC_RELEASE);
	c->locked = 0;
}

void card_hold(struct card *c)
{
	if (lock(c, now_ms() + 5000) == 0)
		c->hold = 1;
}

void card_release(struct card *c)
{
	c->hold = 0;
	unlock(c);
}

int card_call(struct card *c, uint16_t opcode, const uint64_t cpuset[MBOX_CPUSET_WORDS],
	      const void *payload, uint32_t len, struct mbox_response *resp, int timeout_ms)
{
	struct mbox_header *h = c->hdr;
	struct mbox_ring_ctl *reqc = (void *)(c->base + h->req_ctl_off);
	struct mbox_ring_ctl *respc = (void *)(c->base + h->resp_ctl_off);
	struct mbox_request *reqs = (void *)(c->base + h->req_off);
	struct mbox_response *resps = (void *)(c->base + h->resp_off);
	uint64_t end = now_ms() + timeout_ms;

	if (len > MBOX_REQ_PAYLOAD || lock(c, end) != 0)
		return CARD_TIMEOUT;
	/* Answers nobody collected (an earlier caller gave up): skip them. */
	__atomic_store_n(&respc->tail, __atomic_load_n(&respc->head, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
	while (reqc->head - __atomic_load_n(&reqc->tail, __ATOMIC_ACQUIRE) >= MBOX_REQ_SLOTS) {
		if (now_ms() > end) {
			if (!c->hold)
				unlock(c);
			return CARD_TIMEOUT;
		}
		nap();
	}
	uint32_t seq = ++c->seq + ((uint32_t)getpid() << 16);
	struct mbox_request *r = &reqs[reqc->head % MBOX_REQ_SLOTS];
	memset(r, 0, sizeof(*r) - sizeof(r->payload));
	r->seq = seq;
	r->opcode = opcode;
	if (cpuset)
		memcpy(r->cpuset, cpuset, sizeof(r->cpuset));
	r->len = len;
	if (len)
		memcpy(r->payload, payload, len);
	__atomic_store_n(&reqc->head, reqc->head + 1, __ATOMIC_RELEASE);

	int status = CARD_TIMEOUT;
	while (now_ms() <= end) {
		if (__atomic_load_n(&respc->head, __ATOMIC_ACQUIRE) != respc->tail) {
			struct mbox_response *a = &resps[respc->tail % MBOX_RESP_SLOTS];
			uint32_t n = a->len <= MBOX_RESP_PAYLOAD ? a->len : MBOX_RESP_PAYLOAD;
			int mine = a->seq == seq;
			if (mine) {
				memcpy(resp, a, sizeof(*a) - sizeof(a->payload));
				resp->len = n;
				memcpy(resp->payload, a->payload, n);
				status = resp->status;
			}
			__atomic_store_n(&respc->tail, respc->tail + 1, __ATOMIC_RELEASE);
			if (mine)
				break;
			continue;
		}
		nap();
	}
	if (!c->hold)
		unlock(c);
	return status;
}

const char *mbox_strerror(int status)
{
	switch (status) {
	case MBOX_OK: return "ok";
	case MBOX_E_OPCODE: return "unknown request";
	case MBOX_E_CPUSET: return "bad CPU set (empty, or a CPU the card does not have)";
	case MBOX_E_PAYLOAD: return "malformed request";
	case MBOX_E_EVENT: return "event refused (reserved bits or counter constraint)";
	case MBOX_E_BUSY: return "card busy: some CPUs did not answer";
	case MBOX_E_RANGE: return "value out of range";
	case MBOX_E_PROGRAM: return "not a pmuos program (the card's console says why)";
	case MBOX_E_LAUNCH: return "no such launch";
	case MBOX_E_AGAIN: return "card busy: a shell line from the host is still running";
	case CARD_TIMEOUT: return "no answer from the card (timeout)";
	default: return "unknown status";
	}
}
