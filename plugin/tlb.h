/*
 * A hardware thread's TLBs and page walks, as the plugin models them.
 * Geometry (entries, ways), from the KNC System Software Developer's Guide
 * (328207), TLB table of §2.1; no copy of that table could be consulted
 * while writing this, so the figures are unverified:
 *   data TLB (L1)  4 KiB pages: 64 entries, 4-way; 2 MiB pages: 8, 4-way
 *   code TLB (L1)  4 KiB pages: 32 entries, 4-way; 2 MiB pages: 8, 4-way
 *                  (the guide gives the code TLB no large-page entries we know
 *                  of: the data TLB's are used)
 *   L2 TLB         64 entries, 4-way, shared by code and data; one entry per
 *                  2 MiB region (the page-directory entry of a 4 KiB page,
 *                  or a 2 MiB page's translation)
 * Replacement is LRU. A miss in the L1 TLB is a page walk (DATA_PAGE_WALK,
 * CODE_PAGE_WALK); a walk that also misses the L2 TLB is a long walk (000
 * Table 1-6: LONG_*_PAGE_WALK, "page walks that also missed the L2 uTLB").
 * KNC's 64 KiB pages are not used by pmuos. Page sizes are pmuos's: 4 KiB
 * in the Ring-3 region (kernel/vm.c), 2 MiB in the kernel's identity map
 * (kernel/paging.c); the plugin cannot read page tables, so it goes by the
 * address. Each thread has its own TLBs here (each has its own address
 * space), emptied when it writes CR0, CR3 or CR4, or executes INVLPG or
 * INVPCID. Pure code, unit-tested (tests/unit/test_tlb.c).
 */
#ifndef PLUGIN_TLB_H
#define PLUGIN_TLB_H

#include <stdbool.h>
#include <stdint.h>
#include "plugin/sacache.h"

#define TLB_SHIFT_4K 12
#define TLB_SHIFT_2M 21

struct tlbs {
	struct sacache data4k, data2m, code4k, code2m, l2;
	/*
	 * Changes whenever a TLB may have changed (a miss, a hit off its set's
	 * most recent entry, a flush): while it stays the same, a page that was
	 * its L1 TLB set's most recent still is.
	 */
	uint64_t epoch;
};

enum tlb_result {
	TLB_HIT,       /* translated by the L1 TLB */
	TLB_WALK,      /* page walk; the L2 TLB had the entry */
	TLB_LONG_WALK, /* page walk that missed the L2 TLB too */
};

bool tlb_init(struct tlbs *t);
void tlb_free(struct tlbs *t);
/* Empties every TLB (CR3 write, INVLPG ...). */
void tlb_flush(struct tlbs *t);
/* Translates the page of vaddr (2 MiB page if large, else 4 KiB) for a code fetch or a data access. */
static inline enum tlb_result tlb_access(struct tlbs *t, bool code, uint64_t vaddr, bool large);

/* ---- the fast path: the page is its L1 TLB set's most recent entry ---- */
enum tlb_result tlb_access_slow(struct sacache *l1, struct tlbs *t, uint64_t vaddr, bool large);

static inline enum tlb_result tlb_access(struct tlbs *t, bool code, uint64_t vaddr, bool large)
{
	struct sacache *l1 = code ? (large ? &t->code2m : &t->code4k) : (large ? &t->data2m : &t->data4k);

	if (sa_mru(l1, vaddr >> (large ? TLB_SHIFT_2M : TLB_SHIFT_4K)))
		return TLB_HIT;
	return tlb_access_slow(l1, t, vaddr, large);
}

#endif
