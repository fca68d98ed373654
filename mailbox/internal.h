/*
 * Shared by the mailbox's files, lowest first: mailbox.c (layout, rings),
 * ops.c (what requests do), doorbell.c (the transport), service.c (the
 * serving CPU, its heartbeat, the serving lock and loop; it starts the
 * others). mailbox_proto.c, the pure decoder, is declared in mailbox.h.
 */
#ifndef MAILBOX_INTERNAL_H
#define MAILBOX_INTERNAL_H

#include "mailbox/mailbox.h"

/* The mailbox's header in shared memory; NULL while there is no mailbox. */
extern struct mbox_header *mbox_hdr;
/* The kernel's side of each request (ops.c). */
extern const struct mbox_ops mbox_kernel_ops;
/*
 * mailbox.c: lays out the mailbox (mailbox_init's first step); false, said
 * on the console, if there is none or it does not fit.
 */
bool mailbox_layout(uint64_t base, uint64_t size);
/* mailbox.c: the upload area. */
const uint8_t *mailbox_upload(void);
/*
 * mailbox.c, for the CPU holding the serving lock: copies the next request
 * into *req and returns the slot its answer goes in; NULL if there is none,
 * the host has no room for an answer, or the ring's head was garbage
 * (skipped, said on the console). The request stays on the ring until
 * mailbox_request_take; the answer is the host's after mailbox_response_publish.
 */
struct mbox_response *mailbox_request_peek(struct mbox_request *req);
void mailbox_request_take(void);
void mailbox_response_publish(void);

/*
 * doorbell.c, the transport: mailbox_init sets up the host's doorbell if the
 * mailbox is in shared memory region 0; a ring calls `rung` (the service's).
 */
void mailbox_doorbell_init(bool region0, void (*rung)(void));
/* The service's poll period, us, on CPU 0 (cpu0) or a task CPU; 0: no poll timer (the doorbell alone). */
uint64_t mailbox_poll_us(bool cpu0);
/*
 * `cpu` (not the caller) is about to be INITed: it serves no more requests,
 * and one it is serving is finished first (waited for up to BAR_WAIT_US
 * microseconds; past that the INIT goes ahead, said on the console). The
 * bar ends by itself once the CPU is back online or has failed to come back.
 */
#define BAR_WAIT_US 10000
void mailbox_bar(uint32_t cpu); /* service.c */
/* How long (us) CPU 0, idle, looks for a next request after answering before it halts; 0: not at all. */
uint64_t mailbox_linger_us(void);
/* The host's rings interrupt `cpu` from now on (no-op without a doorbell, or if they already do). */
void mailbox_doorbell_route(uint32_t cpu);
/* Passes a ring that reached another CPU on to `cpu` (an IPI at the doorbell's vector). */
void mailbox_doorbell_forward(uint32_t cpu);
/*
 * hold: the calling CPU takes no doorbell (nor any vector of its priority
 * class or below); a ring waits in its APIC until !hold.
 */
void mailbox_doorbell_hold(bool hold);
/* After publishing answers: rings the host peer the lock holder named (no-op without a doorbell or a peer). */
void mailbox_doorbell_answered(void);
/* mailbox.c: the PMU's MBOX_CAP_* (the header's and INFO's; the doorbell adds its own bit). */
uint64_t mbox_capabilities(void);

#endif
