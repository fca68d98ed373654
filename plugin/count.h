/*
 * Counting the plugin's events into a thread's two counters under the
 * registers the card's model publishes (include/pmuos/pmushare.h), by the
 * rules of Intel 327357-001 §1.4.3.3-7, as pmu/model/core.c applies them to
 * instructions:
 *  - counter i counts when EvtSel_i.EN and GLOBAL_CTRL[i] are set, its
 *    event is one the plugin counts, the privilege of the instruction the
 *    event belongs to matches USR (CPL 1-3) or OS (CPL 0), and, if
 *    PERF_SPFLT_CONTROL[i] is set, while USER_PREF is 1;
 *  - the plugin's cycle is an instruction: with CMASK = 0 and no edge
 *    detect a counter adds every event (INV has no effect without CMASK,
 *    as in the model); with CMASK = c > 0 it adds 1 for each instruction
 *    whose k events of that kind satisfy k >= c, or k < c with INV; with
 *    edge detect (E) it adds 1 for each instruction whose condition is true
 *    when the previous instruction's was false (the condition being k >= 1
 *    when CMASK is 0); an instruction where the counter does not count
 *    breaks the run, so edge detection starts afresh, as in the model;
 *  - the counts go to the page's delta[i]; the card adds them to its 40-bit
 *    counters, with overflow status and PMI (pmu/model/backend.c).
 * The plugin sees execution a block at a time (QEMU's translation block: a
 * straight run of instructions of one privilege level, ending at a branch),
 * so instructions are numbered within their block; the registers as they
 * are when a block starts apply to all of it (only the kernel changes them,
 * in blocks of its own). Events another agent causes (a snoop from another
 * core) count in the thread's state at its current block. Thread count mode
 * (EvtSel bit 21, ":t") has no effect: each thread counts its own events.
 * Pure code, unit-tested (tests/unit/test_count.c).
 */
#ifndef PLUGIN_COUNT_H
#define PLUGIN_COUNT_H

#include <stdbool.h>
#include <stdint.h>
#include <pmuos/pmushare.h>
#include "pmu/plugin_events.h"

#define COUNT_MAX_BLOCK 512 /* instructions in a block: QEMU's TCG_MAX_INSNS */
_Static_assert(PEV_COUNT <= 64, "count_state.counted has a bit per event");

/* Maps an EvtSel's code (umask << 8 | event) to the plugin's event, or -1. */
typedef int (*count_event_of_t)(uint32_t code);

struct count_state {
	struct pmushare_thread *sh;
	count_event_of_t event_of;
	uint32_t seq;                   /* publication the rest was computed from */
	uint32_t evtsel[PMUSHARE_COUNTERS];
	uint8_t plain[2][PEV_COUNT];    /* [user][event]: counters that add every event */
	uint8_t per_insn[2][PEV_COUNT]; /* [user][event]: counters with CMASK or edge detect */
	uint8_t enabled[2];             /* [user]: counters with CMASK or edge detect that count */
	uint64_t counted[2];            /* [user]: bit ev set if a counter counts event ev (either mode) */
	uint64_t programmed;            /* bit ev set if an EvtSel names event ev, counting or not */
	/* the block being executed */
	bool user;
	uint8_t cur;                    /* enabled[user] for it */
	uint64_t mask;                  /* counted[user] for it: most events count nowhere, at one test's cost */
	uint32_t n;                     /* its instructions */
	uint8_t prev_cond;              /* bit i: the condition of the instruction before it (edge detect) */
	uint64_t k[2][COUNT_MAX_BLOCK]; /* its events, per counter in per_insn mode and instruction */
};

/* Binds a thread's state to its slot of the shared page; nothing counts until the card publishes. */
void count_init(struct count_state *s, struct pmushare_thread *sh, count_event_of_t event_of);
/*
 * The thread starts a block of n instructions (1 to COUNT_MAX_BLOCK) at
 * privilege `user` (CPL 3, else 0): closes the previous block (CMASK and
 * edge detect, instruction by instruction) and picks up any new publication
 * of the registers.
 */
static inline void count_block(struct count_state *s, bool user, uint32_t n);
/* n events of kind ev (enum plugin_event) belong to instruction idx of the current block. */
static inline void count_event(struct count_state *s, int ev, uint64_t n, uint32_t idx);
/*
 * n events of an instruction at privilege `user` of an earlier block that
 * the thread learns of only now (a branch resolved after an interrupt):
 * counted under the current registers at that privilege; with CMASK or edge
 * detect they go to the current block's last instruction if the privilege
 * is the same, else nowhere.
 */
void count_event_at(struct count_state *s, bool user, int ev, uint64_t n);

/*
 * Whether count_block would take its fast path: no instructions of the last
 * block to close (no counter in CMASK or edge mode) and no new publication.
 */
static inline bool count_block_quick(const struct count_state *s)
{
	return !s->cur && *(volatile uint32_t *)&s->sh->seq == s->seq;
}
/* count_block when count_block_quick holds. */
static inline void count_block_fast(struct count_state *s, bool user, uint32_t n);

/* ---- inline fast paths ---- */
void count_block_slow(struct count_state *s, bool user, uint32_t n);

static inline void count_block(struct count_state *s, bool user, uint32_t n)
{
	if (!count_block_quick(s)) {
		count_block_slow(s, user, n); /* instructions to close, or registers to read */
		return;
	}
	count_block_fast(s, user, n);
}

static inline void count_block_fast(struct count_state *s, bool user, uint32_t n)
{
	s->user = user;
	s->n = n;
	s->cur = s->enabled[user];
	s->mask = s->counted[user];
	s->prev_cond &= s->cur;
}

static inline void count_event(struct count_state *s, int ev, uint64_t n, uint32_t idx)
{
	if (!(s->mask & (1ull << ev)))
		return;
	uint8_t plain = s->plain[s->user][ev], per_insn = s->per_insn[s->user][ev] & s->cur;

	if (plain & 1)
		s->sh->delta[0] += n;
	if (plain & 2)
		s->sh->delta[1] += n;
	if (per_insn) {
		idx = idx < s->n ? idx : s->n - 1;
		for (int i = 0; i < PMUSHARE_COUNTERS; i++)
			if (per_insn & (1u << i))
				s->k[i][idx] += n;
	}
}

#endif
