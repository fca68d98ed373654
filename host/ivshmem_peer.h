/*
 * pmuctl's end of a card's doorbell (include/pmuos/mailbox.h,
 * MBOX_CAP_DOORBELL): a peer of the card's ivshmem server (QEMU
 * docs/specs/ivshmem-spec.rst, "The ivshmem Client-Server Protocol";
 * scripts/ivshmem-server.py), with the card's eventfd to ring it and its
 * own, which the card rings after answering. The server and the card are
 * not trusted: whatever they send gives a named error within a deadline.
 */
#ifndef HOST_IVSHMEM_PEER_H
#define HOST_IVSHMEM_PEER_H

#include <stddef.h>
#include <stdint.h>

struct doorbell;

/*
 * Connects to the server at `sock` and waits (at most 1 s) for the eventfds
 * of this peer and of peer `card_peer` (vector 0 each). The server must
 * hand out the file open at `mbox_fd` as its shared memory. Returns the
 * doorbell, or NULL with err (n bytes) saying why, "" when no server
 * listens there (the card's QEMU has ended, or it has no doorbell).
 */
struct doorbell *doorbell_open(const char *sock, uint32_t card_peer, int mbox_fd, char *err, size_t n);
/* This peer's ID at the server (0..65535). */
uint32_t doorbell_peer(const struct doorbell *d);
/* Rings the card (forgetting a ring of the card's not waited for). Never blocks. */
void doorbell_ring(struct doorbell *d);
/*
 * Sleeps until the card rings or `ms` milliseconds pass; 1 if it rang.
 * Takes the server's later messages on the way (closing their eventfds).
 */
int doorbell_wait(struct doorbell *d, int ms);
void doorbell_close(struct doorbell *d);

#endif
