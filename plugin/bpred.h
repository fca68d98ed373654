/*
 * The branch predictor the plugin models for BRANCHES_MISPREDICTED: a
 * branch target buffer like the Pentium's (Intel 327357-001 §1.2: the KNC core's
 * PMU and events descend from the P54C; no source we could find gives
 * KNC's own predictor): 256 entries, 4-way set associative, indexed by the
 * branch's address, LRU, each entry holding the branch's last target and a
 * 2-bit saturating counter (0-1 predict not taken, 2-3 taken).
 *  - A branch that misses the BTB is predicted not taken (fetch goes on
 *    sequentially) and is never counted as mispredicted (327357-001 Table 1-6:
 *    "BTB misses are not considered branch mispredicts"); if it is taken
 *    it is allocated with its target and the counter at 2 (weakly taken).
 *  - A branch that hits is predicted taken to the stored target when the
 *    counter is 2 or 3; it is mispredicted when the direction is wrong, or
 *    when it is taken to another target (indirect jumps, calls, returns).
 *    The counter moves one step toward the outcome; a taken branch's
 *    target is stored.
 * Near branches only (Jcc, JrCXZ, LOOPcc, JMP, CALL, RET); software
 * interrupts, IRET, SYSCALL/SYSRET and far transfers are not predicted.
 * The plugin gives each hardware thread one of these for Ring 3 and one for
 * Ring 0, and empties the Ring-3 one when the thread changes its address
 * translation (a CR3 write: another program's address space): a choice of
 * this model, so that a program's predictions depend on its own branches
 * only, not on interrupts or on earlier programs.
 * Pure code, unit-tested (tests/unit/test_bpred.c).
 */
#ifndef PLUGIN_BPRED_H
#define PLUGIN_BPRED_H

#include <stdbool.h>
#include <stdint.h>
#include "plugin/sacache.h"

struct bpred {
	struct sacache btb;
	/*
	 * Changes whenever the BTB may have changed: while it stays the same, a
	 * branch whose resolution changed nothing would again.
	 */
	uint64_t epoch;
	/* Taken branches that missed the BTB (and were allocated): each a pipeline flush (plugin/timing.h). */
	uint64_t allocs;
};

bool bpred_init(struct bpred *b);
void bpred_free(struct bpred *b);
/* Empties the BTB. */
void bpred_clear(struct bpred *b);
/*
 * The branch at `pc` went (taken) to `target`, or fell through. Returns
 * whether it was mispredicted, and learns the outcome.
 */
static inline bool bpred_resolve(struct bpred *b, uint64_t pc, bool taken, uint64_t target);

/* ---- the fast path: a predicted branch of its BTB set's most recent entry, counter saturated ---- */
bool bpred_resolve_slow(struct bpred *b, uint64_t pc, bool taken, uint64_t target);

/* Whether resolving the branch would find it predicted right and change nothing (a pure look). */
static inline bool bpred_settled(const struct bpred *b, uint64_t pc, bool taken, uint64_t target)
{
	const uint8_t *ctr = sa_mru(&b->btb, pc);

	return ctr && *ctr == (taken ? 3 : 0) && (!taken || *sa_data(&b->btb, ctr) == target);
}

static inline bool bpred_resolve(struct bpred *b, uint64_t pc, bool taken, uint64_t target)
{
	if (bpred_settled(b, pc, taken, target))
		return false; /* right, and nothing to learn */
	return bpred_resolve_slow(b, pc, taken, target);
}

#endif
