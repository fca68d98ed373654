/*
 * Shared by the mailbox's files: mailbox.c (layout, rings, polling),
 * service.c (the serving CPU and its heartbeat), ops.c (what requests do).
 */
#ifndef MAILBOX_INTERNAL_H
#define MAILBOX_INTERNAL_H

#include "mailbox/mailbox.h"

/* The mailbox's header in shared memory; NULL while there is no mailbox. */
extern struct mbox_header *mbox_hdr;
/* The kernel's side of each request (ops.c). */
extern const struct mbox_ops mbox_kernel_ops;
/* mailbox_init, once the layout is set: hooks into tasks, SMP and idle; the calling CPU serves. */
void mailbox_service_start(void);
/* Gives the calling CPU's service to CPU 0, woken to take it. */
void mailbox_give_service_to_cpu0(void);


/* doorbell.c, the transport: mailbox_init sets up the host's doorbell if the mailbox is in shared memory region 0. */
void mailbox_doorbell_init(bool region0);
/* The service's poll period, us, on CPU 0 (cpu0) or a task CPU; 0: no poll timer (the doorbell alone). */
uint64_t mailbox_poll_us(bool cpu0);
/*
 * `cpu` (not the caller) is about to be INITed: it serves no more requests,
 * and one it is serving is finished first (waited for up to BAR_WAIT_US
 * microseconds; past that the INIT goes ahead, said on the console). The
 * bar ends by itself once the CPU is back online or has failed to come back.
 */
#define BAR_WAIT_US 10000
void mailbox_bar(uint32_t cpu);
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
/* service.c: the doorbell's interrupt: the serving CPU serves now. */
void mailbox_rung(void);

#endif
