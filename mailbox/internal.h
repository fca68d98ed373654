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

#endif
