/*
 * The caches of the card's cores as the plugin models them, and the events
 * they give (pmu/plugin_events.h). Per core, shared by its (up to 4)
 * hardware threads (Intel 327357-001 §1.2: "4-way threaded"; the developer's quick
 * start guide: "Each core has a 32KB L1 data cache, a 32KB L1 instruction
 * cache, and a 512KB L2 cache"):
 *   L1D  32 KiB, 8-way, 64-byte lines: write-back, write-allocate
 *   L1I  32 KiB, 8-way, 64-byte lines
 *   L2   512 KiB, 8-way, 64-byte lines, unified, MESI states
 * (the associativities are those of the KNC System Software Developer's
 * Guide (328207) Table 2-4 "Cache Hierarchy", which we could not consult:
 * unverified). Replacement is LRU everywhere (valgrind's cache simulation,
 * which the tests compare with, is LRU and write-allocate too).
 * Lines are physical addresses / 64. Modelling choices, where KNC's
 * documents we know say nothing:
 *  - the L2 is inclusive of its core's L1s: a line leaving the L2 leaves
 *    the L1s (a dirty L1D line is written back first), so the L2's MESI
 *    state speaks for the core;
 *  - coherence between cores by snooping every other core's L2 on an L2
 *    miss (read or read for ownership) and on a write to an S line:
 *    a read finds the line in another L2 -> filled from that cache
 *    (CACHE_FILL), holders in M or E go to S; a read for ownership ->
 *    filled from another cache if one held it, every other copy
 *    invalidated; no holder -> filled from memory (MEM_FILL), state E
 *    for a read, M for a write;
 *  - a first write to an L1D line whose L2 line is S asks the L2 for
 *    ownership (L2_WRITE_HIT) and invalidates the other copies; E turns
 *    to M silently;
 *  - no hardware prefetcher, no write-combining, no streaming stores.
 * Events of the accessing thread go to its counters; a snoop's (SNP_HIT_L2,
 * SNP_HITM_L2, and the write-back of a snooped dirty L1D line) to every
 * thread of the snooped core. Pure code, unit-tested (tests/unit/test_memsys.c).
 */
#ifndef PLUGIN_MEMSYS_H
#define PLUGIN_MEMSYS_H

#include <stdbool.h>
#include <stdint.h>
#include "plugin/sacache.h"

/* L1D state bit, L2 MESI states (the L2 holds no invalid line: I is absence). */
#define MS_DIRTY 1
#define MS_S 1
#define MS_E 2
#define MS_M 3

#define MS_LINE_SHIFT 6
#define MS_THREADS    4 /* hardware threads per KNC core (327357-001 §1.2) */

/* A thread's counters receive n events of kind ev (enum plugin_event). */
typedef void (*ms_event_fn)(void *thread, int ev, uint64_t n);

struct ms_core {
	struct sacache l1d, l1i, l2;
	uint64_t l1i_last;          /* the line the core's last L1I access hit or filled; SA_EMPTY after a removal */
	/*
	 * Change whenever the L1D (L1I) may have changed (a line in or out, a
	 * dirty bit, a set's recency order): while one stays the same, a line
	 * that was its set's most recent still is, with the same dirty bit.
	 */
	uint64_t l1d_epoch, l1i_epoch;
	uint32_t nthreads;
	void *thread[MS_THREADS];
};

struct memsys {
	uint32_t ncores;
	struct ms_core *core;
	ms_event_fn event;
};

bool memsys_init(struct memsys *m, uint32_t ncores, ms_event_fn event);
void memsys_free(struct memsys *m);
/* Makes `thread` (an ms_event_fn argument) one of core c's threads (at most MS_THREADS). */
bool memsys_attach(struct memsys *m, uint32_t c, void *thread);
/*
 * A data read or write of `line` by `thread` on core c; returns whether it
 * missed the L1D. The caller counts DATA_READ, DATA_WRITE and their
 * misses (per operand); this counts what happens below the L1D.
 */
static inline bool memsys_data(struct memsys *m, uint32_t c, void *thread, uint64_t line, bool write);
/*
 * A VPREFETCH1 of `line` by `thread` on core c: into the L2 only (the L1D
 * keeps what it has); returns whether it missed the L2. A miss is a read's:
 * L2_READ_MISS and the fill's event, as a demand read's.
 */
bool memsys_l2_prefetch(struct memsys *m, uint32_t c, void *thread, uint64_t line);
/* An instruction fetch from `line`; returns whether it missed the L1I. */
static inline bool memsys_code(struct memsys *m, uint32_t c, void *thread, uint64_t line);

/*
 * ---- the fast paths: a read of the most recent line of its L1D set, a
 * write of it when dirty, a fetch of the most recent line of its L1I set ----
 */
bool memsys_data_slow(struct memsys *m, uint32_t c, void *thread, uint64_t line, bool write);
bool memsys_code_slow(struct memsys *m, uint32_t c, void *thread, uint64_t line);

static inline bool memsys_data(struct memsys *m, uint32_t c, void *thread, uint64_t line, bool write)
{
	const uint8_t *st = sa_mru(&m->core[c].l1d, line);

	if (st && (!write || (*st & MS_DIRTY)))
		return false; /* a hit that changes nothing */
	return memsys_data_slow(m, c, thread, line, write);
}

/*
 * Whether a fetch from `line` would hit its L1I set's most recent line
 * (changing nothing but the memo of the last line, which it sets).
 */
static inline bool memsys_code_hit(struct memsys *m, uint32_t c, uint64_t line)
{
	struct ms_core *k = &m->core[c];

	if (k->l1i_last == line)
		return true;
	if (sa_mru(&k->l1i, line)) {
		k->l1i_last = line;
		return true;
	}
	return false;
}

static inline bool memsys_code(struct memsys *m, uint32_t c, void *thread, uint64_t line)
{
	if (memsys_code_hit(m, c, line))
		return false;
	return memsys_code_slow(m, c, thread, line);
}

#endif
