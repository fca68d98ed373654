/* Host side of the card mailbox; see host/mbox.h. */
#define _GNU_SOURCE
#include "host/mbox.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "host/clock.h"
#include "host/ivshmem_peer.h"
#include "host/wire.h"
#include "lib/cpuset.h"
#include "pmu/arch/regs.h"
#include "pmu/knc/regs.h"

#define SPIN_US      50 /* after a ring, the answer is looked for without sleeping this long */
#define BELL_WAIT_MS 10 /* then a sleep on the doorbell ends this often: the card's state checked, rung again */
/*
 * A card whose heartbeat does not move for this long (host seconds, 1 to
 * 3600; pmuctl --stale-after) has stopped.
 * Every ring of pmuctl's (one each BELL_WAIT_MS while it waits), every timer
 * poll and every task address space a RUN builds moves it. Under QEMU with 244
 * vCPUs in turn on one host thread and a loaded host (load 20-30 on 2
 * cores), rings stopped reaching the card for 20 s, its clock ran 1 ms per
 * host second, and once 243 tasks started it stood still for over 10 s
 * (QEMU busy outside guest code: flushing every vCPU's jump cache for each
 * block of the code pages it reused, when each task had its own copy of the
 * program; a launch now shares one, docs/design.md §6).
 */
unsigned card_stale_s = 30;
/* However the card's clock goes, a call gives up after this many times its time (host time): */
#define HOST_FACTOR  24

static void real_nap(void)
{
	struct timespec ts = { 0, 200000 }; /* 0.2 ms */
	nanosleep(&ts, NULL);
}

static const struct card_time real_time = { now_ms, real_nap };
const struct card_time *card_time = &real_time;

/* Sets c->err and returns `status`. */
static int __attribute__((format(printf, 3, 4))) fail(struct card *c, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return status;
}

int card_check(struct card *c)
{
	char why[160];

	c->hdr = (struct mbox_header *)c->base;
	if (c->size < sizeof(struct mbox_header)) {
		fprintf(stderr, "pmuctl: %s is too small to be a card mailbox\n", c->path);
		return -1;
	}
	/* One copy: what is checked is what is used, whatever the card writes meanwhile. */
	c->seen = *c->hdr;
	const struct mbox_header *h = &c->seen;
	if (h->magic != MBOX_MAGIC || h->version != MBOX_VERSION) {
		fprintf(stderr, "pmuctl: %s is not a pmuos mailbox of version %d (the card may still be booting)\n",
			c->path, MBOX_VERSION);
		return -1;
	}
	if (h->size != c->size) {
		fprintf(stderr, "pmuctl: %s: the mailbox layout does not fit in its %zu bytes: its header says %llu\n",
			c->path, c->size, (unsigned long long)h->size);
		return -1;
	}
	if (mbox_bad_layout(h, c->size, why, sizeof(why))) {
		fprintf(stderr, "pmuctl: %s: the mailbox layout does not fit in its %zu bytes: %s\n", c->path, c->size,
			why);
		return -1;
	}
	if (h->state != MBOX_READY) {
		fprintf(stderr, "pmuctl: card %s is not READY (state %u: %s)\n", c->path, h->state,
			mbox_state_name(h->state));
		return -1;
	}
	c->cpu_count = h->cpu_count;
	c->req_ctl = (struct mbox_ring_ctl *)(c->base + h->req_ctl_off);
	c->resp_ctl = (struct mbox_ring_ctl *)(c->base + h->resp_ctl_off);
	c->reqs = (struct mbox_request *)(c->base + h->req_off);
	c->resps = (struct mbox_response *)(c->base + h->resp_off);
	c->console = c->base + h->console_off;
	c->upload = c->base + h->upload_off;
	c->samples = (struct mbox_sample_ring *)(c->base + h->samples_off);
	c->outputs = (const struct mbox_output_ring *)(c->base + h->output_off);
	uint64_t beat = c->hdr->heartbeat, end = card_time->now_ms() + card_stale_s * 1000ull, rung = 0;
	while (c->hdr->heartbeat == beat) {
		if (c->bell && card_time->now_ms() >= rung + BELL_WAIT_MS) {
			doorbell_ring(c->bell); /* a card that serves only on its doorbell beats on it; again if lost */
			rung = card_time->now_ms();
		}
		if (card_time->now_ms() > end) {
			fprintf(stderr, "pmuctl: card %s: heartbeat stale (no change in %u s): the card has stopped\n",
				c->path, card_stale_s);
			return -1;
		}
		card_time->nap();
	}
	c->last_beat = c->hdr->heartbeat;
	if (card_alive(c) != 0) {
		fprintf(stderr, "pmuctl: card %s: %s\n", c->path, c->err);
		return -1;
	}
	return 0;
}

int card_alive(struct card *c)
{
	const struct mbox_header *h = c->hdr, *s = &c->seen;
	uint32_t state = h->state;
	uint64_t beat = h->heartbeat;
	struct mbox_area now[MBOX_AREAS], then[MBOX_AREAS];
	const char *what = h->magic != s->magic ? "magic" : h->version != s->version ? "version"
			   : h->size != s->size ? "size" : h->cpu_count != s->cpu_count ? "CPU count" : NULL;

	mbox_areas(h, now);
	mbox_areas(s, then);
	for (int i = 0; i < MBOX_AREAS && !what; i++)
		if (now[i].off != then[i].off)
			what = now[i].name;
	if (what)
		return fail(c, CARD_RESET, "the card rebooted/reset while pmuctl was waiting: its mailbox header "
			    "changed (%s), or something wrote over it", what);
	if (h->boot_count != s->boot_count)
		return fail(c, CARD_RESET, "the card rebooted/reset while pmuctl was waiting (boot %u, then boot %u)",
			    s->boot_count, h->boot_count);
	if (state == MBOX_PANIC)
		return fail(c, CARD_PANIC, "the card panicked while pmuctl was waiting (mailbox state PANIC)");
	if (state != MBOX_READY)
		return fail(c, CARD_RESET, "the card rebooted/reset while pmuctl was waiting (mailbox state %u: %s)",
			    state, mbox_state_name(state));
	if (beat < c->last_beat)
		return fail(c, CARD_RESET, "the card rebooted/reset while pmuctl was waiting (its heartbeat went "
			    "back from %llu to %llu)", (unsigned long long)c->last_beat, (unsigned long long)beat);
	c->last_beat = beat;
	return 0;
}

/*
 * The host lock (include/pmuos/mailbox.h): an open-file-description lock on
 * the whole mailbox file. The OS drops it when the holder's file is closed,
 * however the holder ends, and it names no PID: PID reuse and PID
 * namespaces do not matter. It works on any file pmuctl maps (tmpfs in
 * /dev/shm, sysfs PCI resource files). header.host_lock gets our pid for
 * other processes' messages only.
 */
/*
 * Waits for the lock while other processes make progress with it: each
 * request a holder sends advances header.host_seq, and while a request is
 * unanswered (request head past response head) a moving heartbeat says the
 * card is at it (a RUN that loads an image takes seconds on a loaded host;
 * the holder's own deadline bounds that wait). So the wait gives up only
 * when for `patience_ms` no request was sent and none was being served (one
 * holder kept it idle that long), however many take their turns before ours.
 */
static int lock(struct card *c, int patience_ms)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET }; /* l_len 0: to the end and beyond */
	uint64_t since = card_time->now_ms();
	uint32_t seq = __atomic_load_n(&c->hdr->host_seq, __ATOMIC_ACQUIRE);
	uint64_t beat = __atomic_load_n(&c->hdr->heartbeat, __ATOMIC_ACQUIRE);

	if (c->locked)
		return 0;
	while (fcntl(c->fd, F_OFD_SETLK, &fl) != 0) {
		if (errno != EAGAIN && errno != EACCES && errno != EINTR)
			return fail(c, CARD_LOCKED, "cannot lock %s: %s", c->path, strerror(errno));
		uint32_t now_seq = __atomic_load_n(&c->hdr->host_seq, __ATOMIC_ACQUIRE);
		uint64_t now_beat = __atomic_load_n(&c->hdr->heartbeat, __ATOMIC_ACQUIRE);
		int serving = __atomic_load_n(&c->req_ctl->head, __ATOMIC_ACQUIRE) !=
			      __atomic_load_n(&c->resp_ctl->head, __ATOMIC_ACQUIRE) && now_beat != beat;
		beat = now_beat;
		if (now_seq != seq || serving) {
			seq = now_seq;
			since = card_time->now_ms();
		} else if (card_time->now_ms() > since + patience_ms) {
			uint32_t holder = __atomic_load_n(&c->hdr->host_lock, __ATOMIC_ACQUIRE);
			if (holder)
				return fail(c, CARD_LOCKED, "the card's mailbox is in use: process %u (as it noted in the "
					    "mailbox) has held its lock for more than %.1f s", holder,
					    (card_time->now_ms() - since) / 1000.0);
			return fail(c, CARD_LOCKED, "the card's mailbox is in use: another process has held its lock "
				    "for more than %.1f s", (card_time->now_ms() - since) / 1000.0);
		}
		card_time->nap();
	}
	c->locked = 1;
	__atomic_store_n(&c->hdr->host_lock, (uint32_t)getpid(), __ATOMIC_RELEASE);
	__atomic_store_n(&c->hdr->host_peer, c->bell ? doorbell_peer(c->bell) + 1 : 0, __ATOMIC_RELEASE);
	return 0;
}

static void unlock(struct card *c)
{
	struct flock fl = { .l_type = F_UNLCK, .l_whence = SEEK_SET };

	if (!c->locked)
		return;
	__atomic_store_n(&c->hdr->host_lock, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&c->hdr->host_peer, 0, __ATOMIC_RELEASE);
	fcntl(c->fd, F_OFD_SETLK, &fl);
	c->locked = 0;
}

int card_hold(struct card *c)
{
	int st = lock(c, 5000);

	c->hold = st == 0;
	return st;
}

void card_release(struct card *c)
{
	c->hold = 0;
	unlock(c);
}

void card_close(struct card *c)
{
	if (c->base) {
		unlock(c);
		munmap(c->base, c->size);
	}
	c->base = NULL;
	doorbell_close(c->bell);
	c->bell = NULL;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

/*
 * Checks a copied answer: a known status and the payload its opcode has
 * (mailbox/mailbox_proto.c). An error answer carries nothing but a PMU
 * request's verdict, after PMU_READ's counts (the CPUs that did answer).
 */
static int answer_ok(struct card *c, uint16_t op, const struct mbox_response *r)
{
	uint32_t v = mbox_answer_has_verdict(op, r->status) ? sizeof(struct mbox_verdict) : 0, n = r->len - v;
	int ok;

	if (r->status > MBOX_OK || r->status < MBOX_E_AGAIN)
		return fail(c, CARD_PROTOCOL, "the card broke the mailbox protocol: its answer to %s has an unknown "
			    "status %d", mbox_op_name(op), r->status);
	if (r->len < v)
		ok = 0;
	else if (op == MBOX_OP_PMU_READ)
		ok = n % sizeof(struct mbox_pmu_count) == 0;
	else if (r->status != MBOX_OK)
		ok = n == 0;
	else if (op == MBOX_OP_EVENTS_COUNTED)
		ok = n == sizeof(uint64_t);
	else if (op == MBOX_OP_STATUS)
		ok = n && n % sizeof(struct mbox_task) == 0; /* a launch has one task or more */
	else if (op == MBOX_OP_RUN)
		ok = n > sizeof(struct mbox_run_answer) && (n - sizeof(struct mbox_run_answer)) % sizeof(struct mbox_task) == 0;
	else
		ok = n == (op == MBOX_OP_INFO ? sizeof(struct mbox_info) : 0);
	if (!ok)
		return fail(c, CARD_PROTOCOL, "the card broke the mailbox protocol: its answer to %s (status %d) "
			    "has %u payload bytes, which no such answer has", mbox_op_name(op), r->status, r->len);
	return 0;
}

/* An answer's verdict (answer_ok checked its place) into c->verdict, and out of the payload the caller sees. */
static int take_verdict(struct card *c, uint16_t op, struct mbox_response *r)
{
	struct mbox_verdict v;
	char text[sizeof(c->verdict)];

	if (!mbox_answer_has_verdict(op, r->status))
		return 0;
	r->len -= sizeof(v);
	memcpy(&v, r->payload + r->len, sizeof(v));
	if (!mbox_verdict_text(card_pmu(c), &v, text, sizeof(text)))
		return fail(c, CARD_PROTOCOL, "the card broke the mailbox protocol: its answer to %s carries %s",
			    mbox_op_name(op), text);
	memcpy(c->verdict, text, sizeof(text));
	return 0;
}

/* Copies the answer at `a` (the one at our request's position) into *out, once, and checks the copy. */
static int take_answer(struct card *c, uint16_t op, uint32_t seq, const struct mbox_response *a,
		       struct mbox_response *out)
{
	memcpy(out, a, offsetof(struct mbox_response, payload));
	if (out->seq != seq)
		return fail(c, CARD_PROTOCOL, "the card broke the mailbox protocol: its answer to %s carries sequence "
			    "number %u, not the request's %u", mbox_op_name(op), out->seq, seq);
	if (out->len > MBOX_RESP_PAYLOAD)
		return fail(c, CARD_PROTOCOL, "the card broke the mailbox protocol: its answer to %s is %u bytes "
			    "(a response holds %u)", mbox_op_name(op), out->len, MBOX_RESP_PAYLOAD);
	memcpy(out->payload, a->payload, out->len);
	int st = answer_ok(c, op, out);
	if (!st)
		st = take_verdict(c, op, out);
	return st ? st : out->status;
}

/*
 * How long a call has waited, judged by the card, not by the host's clock
 * (under QEMU one host thread runs every vCPU in turn: 244 of them take
 * minutes of host time for what one takes in seconds). The card lives while
 * its heartbeat moves (card_stale_s of host time without a change: it has
 * stopped), and the call's time runs on the card's clock: its timer polls
 * times their period (header.timer_polls, poll_us). A card that publishes
 * no poll period (pmuos.mbox_poll=off) is timed on the host's clock; any
 * card at HOST_FACTOR times the call's time on it.
 */
/* A heartbeat still for this long (host ms) has pmuctl look whether the card's file is still there. */
#define GONE_CHECK_MS 50

struct wait {
	uint64_t limit_ms;   /* the card's time to take (or answer) the request */
	uint64_t from_ms;    /* host time it started */
	uint64_t beat, beat_ms; /* the heartbeat last seen, and when it last changed (host ms) */
	uint32_t polls;      /* header.timer_polls last seen */
	uint64_t card_us;    /* card time since from_ms: timer polls times their period */
};

static void wait_start(struct card *c, struct wait *w, uint64_t limit_ms)
{
	*w = (struct wait){ .limit_ms = limit_ms, .from_ms = card_time->now_ms(), .beat = c->hdr->heartbeat,
			    .polls = c->hdr->timer_polls };
	w->beat_ms = w->from_ms;
}

/*
 * Whether a heartbeat still since *beat_ms (host ms) means the card has gone
 * (CARD_GONE) or stopped (CARD_TIMEOUT; `what` it did not do): 0 if neither.
 * Notes a beat that moved in *beat and *beat_ms.
 */
static int beat_verdict(struct card *c, uint64_t *beat, uint64_t *beat_ms, uint64_t now, const char *what)
{
	uint64_t b = c->hdr->heartbeat;
	struct stat st;

	if (b != *beat) {
		*beat = b;
		*beat_ms = now;
	} else if (now - *beat_ms >= GONE_CHECK_MS && fstat(c->fd, &st) == 0 && st.st_nlink == 0) {
		/* A QEMU card's files go when it ends (scripts/card-keeper.py): nothing will answer. */
		return fail(c, CARD_GONE, "the card is gone: its mailbox file %s was removed (its QEMU has ended)",
			    c->path);
	} else if (now - *beat_ms > card_stale_s * 1000ull) {
		return fail(c, CARD_TIMEOUT, "no answer from the card: heartbeat stale (no change in %u s; %s): "
			    "the card has stopped", card_stale_s, what);
	}
	return 0;
}

void card_watch_start(struct card *c, struct card_watch *w)
{
	*w = (struct card_watch){ .beat = c->hdr->heartbeat, .beat_ms = card_time->now_ms() };
	w->rung_ms = w->beat_ms;
}

int card_watch(struct card *c, struct card_watch *w, const volatile uint32_t *word, uint32_t seen, unsigned ms)
{
	uint64_t end = card_time->now_ms() + ms;

	for (;;) {
		uint64_t now = card_time->now_ms();
		int st = card_alive(c);
		if (st == 0)
			st = beat_verdict(c, &w->beat, &w->beat_ms, now, "the program's end");
		if (st != 0 || __atomic_load_n(word, __ATOMIC_ACQUIRE) != seen || now >= end)
			return st;
		/*
		 * pmuos.mbox_poll=off: it beats only when rung. Else no ring: it would
		 * run kernel code on a measured CPU when the host is slow.
		 */
		if (c->bell && !c->hdr->poll_us && now - w->beat_ms >= 1000 && now - w->rung_ms >= 1000) {
			doorbell_ring(c->bell);
			w->rung_ms = now;
		}
		card_time->nap();
	}
}

/* The wait's verdict now: 0 (wait on), CARD_TIMEOUT with c->err naming what the card missed, or CARD_GONE. */
static int wait_over(struct card *c, struct wait *w, const char *what)
{
	uint64_t now = card_time->now_ms();
	uint32_t polls = c->hdr->timer_polls, period = c->hdr->poll_us;
	uint64_t add = (uint64_t)(uint32_t)(polls - w->polls) * period; /* < 2^64: 32 x 32 bits */

	w->polls = polls;
	w->card_us = add > UINT64_MAX - w->card_us ? UINT64_MAX : w->card_us + add;
	int st = beat_verdict(c, &w->beat, &w->beat_ms, now, what);
	if (st)
		return st;
	if (period ? w->card_us / 1000 > w->limit_ms : now - w->from_ms > w->limit_ms)
		return fail(c, CARD_TIMEOUT, "no answer from the card (timeout): %s in %.0f s of %s time", what,
			    w->limit_ms / 1000.0, period ? "its own (its heartbeat moving)" : "the host's");
	if (now - w->from_ms > w->limit_ms * HOST_FACTOR)
		return fail(c, CARD_TIMEOUT, "no answer from the card (timeout): %s in %.0f s of the host's time "
			    "(its heartbeat moving)", what, w->limit_ms * HOST_FACTOR / 1000.0);
	return 0;
}

/*
 * Between two looks at the rings: 0 after a nap, or a sleep on the doorbell
 * (ringing the card again if it did not ring: a ring lost, or a card whose
 * fallback poll is off), or why to stop waiting (a card that changed or
 * stopped, its time is up: `what` it did not do, for the message).
 */
static int wait_a_little(struct card *c, struct wait *w, const char *what)
{
	int st = card_alive(c);

	if (st == 0)
		st = wait_over(c, w, what);
	if (st == 0 && !c->bell)
		card_time->nap();
	else if (st == 0 && !doorbell_wait(c->bell, BELL_WAIT_MS))
		doorbell_ring(c->bell);
	return st;
}

/* Rings the card and looks for the answer after `tail` without sleeping, for SPIN_US: an answer this fast needs no wake-up. */
static void ring_and_spin(struct card *c, uint32_t tail)
{
	doorbell_ring(c->bell);
	for (uint64_t end = now_us() + SPIN_US; now_us() < end;)
		if (__atomic_load_n(&c->resp_ctl->head, __ATOMIC_ACQUIRE) != tail)
			return;
}

void card_doorbell(struct card *c)
{
	char err[300];
	const struct mbox_header *h = (const struct mbox_header *)c->base;
	char sock[4096];

	if (c->size < sizeof(*h) || h->magic != MBOX_MAGIC || !(h->capabilities & MBOX_CAP_DOORBELL))
		return;
	snprintf(sock, sizeof(sock), "%s.sock", c->path);
	c->bell = doorbell_open(sock, h->card_peer, c->fd, err, sizeof(err));
	if (!c->bell && err[0])
		fprintf(stderr, "pmuctl: %s; polling the mailbox instead\n", err);
}

int card_call(struct card *c, uint16_t opcode, const uint64_t cpuset[MBOX_CPUSET_WORDS],
	      const void *payload, uint32_t len, struct mbox_response *out, int timeout_ms)
{
	struct wait w;
	char what[64];
	int st;

	c->verdict[0] = 0;
	if (len > MBOX_REQ_PAYLOAD)
		return fail(c, CARD_PROTOCOL, "a request of %u bytes: the mailbox takes %u at most", len,
			    MBOX_REQ_PAYLOAD);
	if ((st = card_alive(c)) != 0 || (st = lock(c, timeout_ms)) != 0)
		return st;
	wait_start(c, &w, timeout_ms); /* the card's time to take it, from when it is our turn */
	snprintf(what, sizeof(what), "it did not take the request (%s)", mbox_op_name(opcode));
	/* Answers nobody collected (an earlier caller gave up): skip them. */
	uint32_t tail = __atomic_load_n(&c->resp_ctl->head, __ATOMIC_ACQUIRE);
	__atomic_store_n(&c->resp_ctl->tail, tail, __ATOMIC_RELEASE);
	/* The request ring's head is ours (the host's) to advance: read once. Our answer is response `head`. */
	uint32_t head = c->req_ctl->head, used;
	if ((int32_t)(tail - head) > 0) {
		st = fail(c, CARD_PROTOCOL, "the card broke the mailbox protocol: %u answers for %u requests",
			  tail, head);
		goto out;
	}
	while ((used = head - __atomic_load_n(&c->req_ctl->tail, __ATOMIC_ACQUIRE)) >= MBOX_REQ_SLOTS) {
		if (used > MBOX_REQ_SLOTS) {
			if ((st = card_alive(c)) == 0) /* a restarted card's rings start again from 0 */
				st = fail(c, CARD_PROTOCOL, "the card broke the mailbox protocol: the request "
					  "ring's tail is %u slots from its head (it holds %u)", used, MBOX_REQ_SLOTS);
			goto out;
		}
		if ((st = wait_a_little(c, &w, "it did not free a request slot")) != 0)
			goto out;
	}
	/* Numbered from the mailbox under the lock: no other process's request has this number. */
	uint32_t seq = c->hdr->host_seq + 1;
	if (seq == 0)
		seq = 1; /* never a zeroed slot's */
	c->hdr->host_seq = seq;
	struct mbox_request *r = &c->reqs[head % MBOX_REQ_SLOTS];
	memset(r, 0, offsetof(struct mbox_request, payload));
	r->seq = seq;
	r->opcode = opcode;
	if (cpuset)
		memcpy(r->cpuset, cpuset, sizeof(r->cpuset));
	r->len = len;
	if (len)
		memcpy(r->payload, payload, len);
	__atomic_store_n(&c->req_ctl->head, head + 1, __ATOMIC_RELEASE);
	if (c->bell)
		ring_and_spin(c, tail);

	for (bool taken = false;;) {
		/* Taken (the card's tail is past it): it is being served, and may take long (a RUN loads one image per CPU). */
		if (!taken && (int32_t)(__atomic_load_n(&c->req_ctl->tail, __ATOMIC_ACQUIRE) - head) > 0) {
			taken = true;
			wait_start(c, &w, (uint64_t)timeout_ms * TAKEN_FACTOR);
			snprintf(what, sizeof(what), "it took but did not answer the request (%s)", mbox_op_name(opcode));
		}
		uint32_t ready = __atomic_load_n(&c->resp_ctl->head, __ATOMIC_ACQUIRE) - tail;
		if (ready > MBOX_RESP_SLOTS) {
			if ((st = card_alive(c)) == 0)
				st = fail(c, CARD_PROTOCOL, "the card broke the mailbox protocol: the response "
					  "ring's head is %u slots from its tail (it holds %u)", ready, MBOX_RESP_SLOTS);
			goto out;
		}
		int mine = 0;
		for (; ready && !mine; ready--, tail++) /* at most the ring's slots; earlier ones are others' */
			if ((mine = tail == head))
				st = take_answer(c, opcode, seq, &c->resps[tail % MBOX_RESP_SLOTS], out);
		__atomic_store_n(&c->resp_ctl->tail, tail, __ATOMIC_RELEASE);
		if (mine || (st = wait_a_little(c, &w, what)) != 0)
			goto out;
	}
out:
	if (!c->hold)
		unlock(c);
	return st;
}

const char *card_strerror(const struct card *c, int status)
{
	return status <= CARD_TIMEOUT ? c->err : status < MBOX_OK && c->verdict[0] ? c->verdict : mbox_status_text(status);
}

const struct pmu_desc *card_pmu(const struct card *c)
{
	static struct pmu_desc arch;

	if (!c->seen.pmu[0] || !strncmp(c->seen.pmu, "knc", sizeof(c->seen.pmu)))
		return &pmu_knc_desc;
	if (!arch.name && !pmu_arch_describe(&arch, KNL_CPUID_0A_EAX, KNL_CPUID_0A_EDX))
		return &pmu_knc_desc; /* not reached: KNL's leaf describes a PMU */
	return &arch;
}
