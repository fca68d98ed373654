/* Host side of the card mailbox (include/pmuos/mailbox.h): attach, check, call. */
#ifndef HOST_MBOX_H
#define HOST_MBOX_H

#include <stddef.h>
#include <stdint.h>
#include <pmuos/mailbox.h>

struct card {
	const char *path;
	uint8_t *base;
	size_t size;
	struct mbox_header *hdr;
	uint32_t seq;
	int locked, hold;
};

/*
 * Maps the mailbox of card `name` (/dev/shm/pmuos-NAME) or at a path (one
 * with a '/'), checks magic, version and layout, that the card is READY and
 * that its heartbeat moves (waits up to 1 s). Returns 0, or -1 with a
 * message on stderr naming the problem.
 */
int card_open(struct card *c, const char *name);
void card_close(struct card *c);

/*
 * One request/response round trip: takes the host lock (shared by every
 * host process; a dead holder's lock is taken over), sends, waits up to
 * `timeout_ms` for the answer. Returns the response status (enum
 * mbox_status, >= -8) or -100 on a timeout; *resp gets the answer.
 */
int card_call(struct card *c, uint16_t opcode, const uint64_t cpuset[MBOX_CPUSET_WORDS],
	      const void *payload, uint32_t len, struct mbox_response *resp, int timeout_ms);

/* Keeps the host lock across several calls (e.g. writing the upload area, then RUN). */
void card_hold(struct card *c);
void card_release(struct card *c);

const char *mbox_strerror(int status);

#endif
