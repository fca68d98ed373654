/*
 * Host side of the card mailbox (include/pmuos/mailbox.h): attach, check,
 * call. The card is not trusted: a rebooting or hostile card, or a stray
 * write to the mailbox file, gives a named error, never an access outside
 * the mapping. Every value pmuctl reads from the mailbox is either copied
 * once after validation (the layout, below) or bounded where it is used
 * (ring heads and tails, answer lengths, task counts).
 */
#ifndef HOST_MBOX_H
#define HOST_MBOX_H

#include <stddef.h>
#include <stdint.h>
#include <pmuos/mailbox.h>

/* Host-side statuses beside enum mbox_status; c->err names the details. */
#define CARD_TIMEOUT  -100 /* no answer in time */
#define CARD_RESET    -101 /* the card rebooted or reset, or its header was overwritten */
#define CARD_PANIC    -102 /* the card's state went to PANIC */
#define CARD_PROTOCOL -103 /* the card broke the mailbox protocol (an index or a length out of range) */
#define CARD_LOCKED   -104 /* another host process kept the mailbox lock too long */
#define CARD_GONE     -105 /* the card's mailbox file was removed while a call waited: its QEMU ended */

struct card {
	const char *path;
	int fd;                       /* the mailbox file, open while mapped; -1 if none */
	uint8_t *base;                /* the mapping, `size` bytes */
	size_t size;
	struct mbox_header *hdr;      /* the live header: heartbeat, state, console head */
	/* Copied from the header once and validated by card_check; the card's layout. */
	struct mbox_header seen;
	uint32_t cpu_count;           /* 1..CPUSET_MAX */
	struct mbox_ring_ctl *req_ctl, *resp_ctl;
	struct mbox_request *reqs;    /* MBOX_REQ_SLOTS */
	struct mbox_response *resps;  /* MBOX_RESP_SLOTS */
	const uint8_t *console;       /* MBOX_CONSOLE_SIZE bytes */
	uint8_t *upload;              /* MBOX_UPLOAD_SIZE bytes */
	struct mbox_sample_ring *samples;         /* cpu_count */
	const struct mbox_output_ring *outputs;   /* MBOX_OUTPUT_RINGS */
	uint64_t last_beat;           /* the highest heartbeat seen: one going back is a reboot */
	int locked, hold;             /* the host lock is ours; for more than one call */
	struct doorbell *bell;        /* the card's doorbell (host/ivshmem_peer.h), NULL: the mailbox is polled */
	char err[256];                /* what a CARD_* status was about */
	char verdict[256];            /* the last answer's PMU verdict in the shell's words; "" if it had none */
};

/*
 * The clock (ms) and the pause between two looks at the mailbox (0.2 ms):
 * the real ones by default; a test puts a fake card behind them.
 */
struct card_time {
	uint64_t (*now_ms)(void);
	void (*nap)(void);
};
extern const struct card_time *card_time;

/* Seconds of host time without a heartbeat after which a card has stopped (default 30). */
extern unsigned card_stale_s;

/*
 * Maps the mailbox of card `name` (/dev/shm/pmuos-NAME) or at a path (one
 * with a '/') and checks it (card_check). Returns 0, or -1 with a message
 * on stderr naming the problem.
 */
int card_open(struct card *c, const char *name);

struct pmu_desc;
/*
 * The card's PMU as the rules read it (pmu/rules.h: counters, constraints,
 * longest period), from the header's libpfm4 name: KNC's description for
 * "knc" (and a header without one), else architectural perfmon's, whose
 * rules are the same for every such PMU the card describes (2 counters
 * used, no constraint, periods below 2^31: pmu/arch/desc.c), Knights
 * Landing's leaf standing for it.
 */
const struct pmu_desc *card_pmu(const struct card *c);

/*
 * Card_open, before card_check: when the header c->base says the card has
 * a doorbell (MBOX_CAP_DOORBELL), becomes a peer of its server, at
 * c->path + ".sock". Without one, or when none listens, the mailbox is
 * polled; a server that breaks the protocol is named on stderr, then polled.
 */
void card_doorbell(struct card *c);

/*
 * Checks the mapping c->base (c->size bytes, c->path for messages): magic,
 * version, size, a layout whose every area fits the mapping, aligned and
 * apart, 1 to 256 CPUs, state READY, a heartbeat that moves (waits up to
 * 1 s). Copies the layout into *c. Returns 0, or -1 with a message on stderr.
 */
int card_check(struct card *c);

void card_close(struct card *c);

/*
 * 0 while the card is the one card_check saw: same header, READY, heartbeat
 * not going back. Else CARD_RESET or CARD_PANIC, with c->err saying what changed.
 */
int card_alive(struct card *c);

/*
 * After card_watch_start(c, w), waits up to `ms` (host ms) for *word, a counter the card
 * advances in its mailbox header, to differ from `seen`, sending no request:
 * the card's measured CPUs run no code for it. It watches the card as a call
 * does: 0 when the word moved or the time is up; CARD_RESET or CARD_PANIC
 * (card_alive), CARD_GONE (its mailbox file removed) or CARD_TIMEOUT (its
 * heartbeat still for card_stale_s) with c->err saying which. A card that
 * beats only when rung (no poll timer: header.poll_us 0) is rung once its
 * heartbeat is still for a second.
 */
struct card_watch {
	uint64_t beat, beat_ms, rung_ms; /* the heartbeat last seen, when it changed, when we rang (host ms) */
};
void card_watch_start(struct card *c, struct card_watch *w);
int card_watch(struct card *c, struct card_watch *w, const volatile uint32_t *word, uint32_t seen, unsigned ms);

/*
 * One request/response round trip: takes the host lock (an OFD lock on the
 * mailbox file, include/pmuos/mailbox.h; CARD_LOCKED naming the holder if
 * no process sent a request for `timeout_ms` while we waited: others taking
 * turns do not count), sends, then waits up to `timeout_ms` (ms of host
 * wall time) for the card to take the request and, once it has, up to
 * TAKEN_FACTOR times that for the answer: the response at our request's ring position, with our
 * sequence number. Returns the response status (enum
 * mbox_status, MBOX_E_AGAIN..MBOX_OK) or a CARD_* status; *out gets the
 * answer, whose length is checked against what the opcode answers (an
 * INFO answer is one struct mbox_info, STATUS one or more struct
 * mbox_task, a PMU request's refusal a struct mbox_verdict, ...). A
 * verdict goes to c->verdict as text and out of out->len.
 */
#define TAKEN_FACTOR 12
int card_call(struct card *c, uint16_t opcode, const uint64_t cpuset[MBOX_CPUSET_WORDS],
	      const void *payload, uint32_t len, struct mbox_response *resp, int timeout_ms);

/*
 * Takes the host lock and keeps it across several calls (e.g. writing the
 * upload area, then RUN) until card_release. Waits while other holders
 * make progress, up to 5 s of none; returns 0, or CARD_LOCKED (c->err names the holder) and nothing
 * is held.
 */
int card_hold(struct card *c);
void card_release(struct card *c);

/* A status named: the card's verdict if its answer had one, its status (enum mbox_status), or a CARD_* one with its details. */
const char *card_strerror(const struct card *c, int status);

#endif
