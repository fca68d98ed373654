/* The mailbox's words as pmuctl reads them (host/wire.c). */
#ifndef HOST_WIRE_H
#define HOST_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <pmuos/mailbox.h>

/* The areas of a layout (rings, upload area...), as a header gives them: byte offsets and lengths. */
#define MBOX_AREAS 8
struct mbox_area {
	const char *name;
	uint64_t off, len;
};
/* Fills a[] from header `h`; returns MBOX_AREAS. */
int mbox_areas(const struct mbox_header *h, struct mbox_area a[MBOX_AREAS]);

/*
 * Where the layout header `h` goes wrong in a mailbox of `size` bytes (an
 * area unaligned, inside the header, past the end, or over another; a CPU
 * count outside 1..CPUSET_MAX): the reason, written into why[n], or NULL.
 */
const char *mbox_bad_layout(const struct mbox_header *h, uint64_t size, char *why, size_t n);
/* "booting", "panic", "READY" or "unknown" for a header's state word. */
const char *mbox_state_name(uint32_t state);
/* A request's opcode as the wire format names it ("INFO", "RUN", ...), "?" for an unknown one. */
const char *mbox_op_name(uint16_t op);
/* Whether the answer to `op` with `status` carries the card's verdict (struct mbox_verdict, include/pmuos/mailbox.h). */
int mbox_answer_has_verdict(uint16_t op, int status);
/*
 * A verdict of PMU d in the shell's words (pmu_result_text, pmu/events.c) in buf[n];
 * NULL, with what is wrong in buf, if its numbers are no verdict (an
 * unknown kind, a CPU beyond a request's set, more CPUs done than asked).
 */
struct pmu_desc;
const char *mbox_verdict_text(const struct pmu_desc *d, const struct mbox_verdict *v, char *buf, size_t n);
/* A text for an answer's status (enum mbox_status). */
const char *mbox_status_text(int status);

#endif
