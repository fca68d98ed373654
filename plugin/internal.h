/*
 * The plugin's shared state (see plugin/plugin.c): the per-vCPU state, the
 * block records, and what its three parts share. plugin.c sets up, exec.c
 * runs the callbacks for each block and memory access, translate.c builds
 * the block records QEMU's translations get.
 */
#ifndef PLUGIN_INTERNAL_H
#define PLUGIN_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <pmuos/pmushare.h>
#include <pmuos/syscall.h>
#include "plugin/bpred.h"
#include "plugin/count.h"
#include "plugin/decode.h"
#include "plugin/isacheck.h"
#include "plugin/memsys.h"
#include "plugin/qemu_plugin_api.h"
#include "plugin/timing.h"
#include "plugin/tlb.h"
#include "pmu/plugin_events.h"

#define PAGE_4K_SHIFT 12
#define PAGE_2M_SHIFT 21
#define XC_ENTRIES    4096 /* translation cache per vCPU, 4 KiB pages, direct-mapped */
#define XC_IO         1ULL /* in an entry's physical page: device memory (low bits are free) */
/*
 * Below 1 MiB the chipset switches the BIOS area between ROM and RAM (the
 * PAM registers) with no change of translation: the firmware does, before
 * pmuos starts. Those addresses are not cached.
 */
#define XC_LOW        0x100000ULL
#define USER_CODE_TAG (1ULL << 62) /* user code lines are tagged by host address, apart from physical lines */

/* A branch ending a block: what resolving it needs. */
struct branch {
	uint64_t vaddr, next, target;
	uint8_t kind; /* enum br_kind */
	bool user;
	/*
	 * The predictor, successor and predictor epoch of a resolution that
	 * changed and counted nothing: while all three hold, another would too.
	 */
	const struct bpred *ok_bp;
	uint64_t ok_next, ok_epoch;
};

/* An instruction of a block, as its memory accesses see it. */
struct slot {
	uint16_t idx;      /* in its block */
	uint8_t elements;  /* SSE/AVX: elements; 0: not a vector instruction */
	uint8_t prefetch;  /* the kernel's load for a task's VPREFETCH0 (1) or VPREFETCH1 (2) (pmushare.prefetch_load); 0 */
	bool user;         /* in the Ring-3 region: CPL 3 (see is_user) */
	/*
	 * The meminfo word of its last access | SLOT_INFO_KNOWN, and what QEMU
	 * said of it (direction, bytes): a pure function of the word, asked
	 * again only when the word changes.
	 */
	uint64_t info;
	bool write;
	uint8_t bytes;
	/*
	 * The data page its last access found the thread's memo page for
	 * (page << 1 | privilege), with its physical address and the thread's
	 * TLB epoch then: while that holds, the page is still its L1 TLB set's
	 * most recent and may become the memo page again without a look.
	 */
	const struct thr *pm_thr;
	uint64_t pm_page, pm_pa, pm_epoch;
};
#define SLOT_INFO_KNOWN (1ULL << 32)

/* A code line the block fetches, and the instruction that fetches it. */
struct fetch {
	uint64_t line;
	uint16_t idx;
};

/* One translated block: what every execution of it needs. */
struct tb {
	uint64_t vaddr;
	uint32_t n;            /* instructions */
	bool user, flush_tlb;  /* its privilege level; it changes address translation */
	uint8_t npages;        /* code pages it spans (1 or 2) */
	uint64_t page[2];
	uint16_t nfetch;       /* L1I accesses: each line change, in order */
	uint16_t nvec;         /* SSE/AVX instructions */
	/*
	 * The core and its L1I epoch (plugin/memsys.h) when every fetch of the
	 * block last hit its set's most recent line: while the epoch holds, all
	 * still do. hit_epoch UINT64_MAX: not known.
	 */
	uint32_t hit_core;
	uint64_t hit_epoch;
	uint32_t trans_vcpu;   /* the vCPU that ran a block last when QEMU translated this one */
	uint32_t elements;     /* their elements */
	struct tm_block tm;    /* its schedule from a fresh start (plugin/timing.h) */
	struct tm_insn *insn;  /* its instructions as the timing model sees them: for a run after a cut */
	struct tm_carry *tm_exit; /* without a branch at its end: its end states at each gap (else NULL) */
	/*
	 * Its last run after a cut block (plugin/exec.c continuation): the
	 * state it went on from, at issue gap index g, and what that gave. The
	 * same state again (a loop QEMU cuts at the same place) gives the same.
	 */
	struct {
		bool valid;
		uint8_t g;
		struct tm_carry in, exit;
		struct tm_counts out;
	} memo;
	struct branch br;      /* br.kind BR_NONE: no branch at the end */
	struct fetch *fetch;
	struct slot *vec;      /* the nvec vector instructions' slots */
	uint16_t nknc;         /* instructions the KNC report flags (plugin/isacheck.h) */
	struct knc_hit { uint16_t idx; struct knc_site *site; } *knc;
	/* for finding the same code when QEMU translates it again */
	const void *haddr;
	uint32_t nbytes;
	uint8_t *bytes;
	struct slot slot[];
};

struct xc_entry {
	uint64_t vpage;        /* virtual page number | the generation it was filled in (XC_GEN_SHIFT) */
	uint64_t ppage;        /* physical address of the page | XC_IO */
};
#define XC_GEN_SHIFT 36   /* virtual page numbers have 36 bits (canonical 48-bit addresses) */

/* One hardware thread (vCPU). */
struct thr {
	uint32_t core;
	struct tlbs tlb;
	struct bpred bp[2];           /* [user]: Ring 0's and Ring 3's (plugin/bpred.h) */
	struct xc_entry *xc;
	uint64_t seq;                 /* blocks started */
	/*
	 * slot[0] of the block being executed (NULL: none yet): an access that
	 * comes with another block's slot is no access of an instruction the
	 * thread executes (exec.c, executing).
	 */
	const struct slot *cur_slots;
	/*
	 * [user]: a near branch waiting for the next block of its privilege
	 * level, its successor: an interrupt between them runs at Ring 0, and its
	 * IRET returns to the successor.
	 */
	struct branch *pending[2];
	struct branch kept[2];        /* [user]: a pending branch's copy once its record is freed */
	bool flush;                   /* the last block changed address translation */
	/*
	 * The TLBs are simulated only while an EvtSel of the thread names one of
	 * their events (TLB_EVENTS): nothing else depends on them. When one comes
	 * back they start empty, as after a CR3 write (exec.c tlb_events).
	 */
	bool tlb_on;
	uint64_t last_ipage;          /* code TLB page of the last fetch (its entry is most recent) */
	/*
	 * The 4 KiB page of the last data access (<< 1 | its privilege) if it
	 * was RAM at or above XC_LOW, and its physical address: an access to the
	 * same page needs neither the TLB (its entry is the most recent) nor
	 * the translation cache. UINT64_MAX: none.
	 */
	uint64_t dmemo_page, dmemo_pa;
	/*
	 * The line of the last data access (virtual line << 1 | its privilege)
	 * if it went through the L1D in the memo's page, with the core's L1D
	 * epoch after it and whether it was a write: while the epoch holds, the
	 * line is its set's most recent with the dirty bit set if lm_dirty, so a
	 * read of it (or a write if dirty) changes and counts nothing below the
	 * operand. UINT64_MAX: none.
	 */
	uint64_t lm_key, lm_epoch;
	bool lm_dirty;
	const uint64_t *l1d_epoch, *l1i_epoch; /* its core's (plugin/memsys.h) */
	/* the memory operand being accessed (QEMU splits 16- and 32-byte ones into 8-byte accesses) */
	const struct slot *op_slot;
	uint64_t op_seq, op_end, op_last_line;
	bool op_write, op_missed;
	uint64_t xc_gen;              /* translation cache generation << XC_GEN_SHIFT; a flush starts a new one */
	/*
	 * [user]: the timing model's state after the last block of that
	 * privilege level, if it ended without a branch (QEMU cut it, or
	 * ended it at an instruction it runs alone): the next one continues
	 * its schedule (plugin/timing.h struct tm_carry).
	 */
	struct tm_carry carry[2];
	bool carrying[2];
	/* The timing model's clock: the thread's cycles, while a counter counts one of its events. */
	uint64_t cycles;
	/* busy_threads' answer, while the card's task_gen is busy_gen and the thread's clock below busy_until. */
	uint32_t busy_gen, busy;
	uint64_t busy_until;
	/*
	 * The thread's prefetches in flight: the line, the cycle it arrives,
	 * whether a VPREFETCH1 brings it (into the L2 only); npf entries, the
	 * oldest overwritten when full. `prefetching`: a prefetch's fill is
	 * under way, whose misses wait for nothing (pf_from: where it was served).
	 */
	struct inflight { uint64_t line, ready; bool l2; } pf[8];
	uint8_t npf;
	bool prefetching;
	int8_t pf_from;
	struct count_state cnt;       /* last: its per-instruction arrays are large and seldom used */
};

extern struct pmushare *page;
extern struct thr *thr;
extern unsigned ncpus, threads_per_core;
extern struct memsys mem;
extern bool verify;
extern bool vcpu_translating; /* vcpu=translating: a block's callbacks go to tb.trans_vcpu (plugin.c) */
/* Counting stopped for good (a callback ran in a second thread, or memory ran out). */
extern bool stopped;
/* vCPUs whose callbacks count: ncpus, 0 once counting stops (one test in each callback). */
extern unsigned counting_cpus;

/*
 * Ring 3 runs only in the user region and the kernel only below it (its
 * identity map, kernel/paging.c; Ring-3 pages are mapped only in
 * USER_BASE..USER_END, kernel/vm.c): an instruction's address tells its
 * privilege level exactly.
 */
static inline bool is_user(uint64_t vaddr)
{
	return vaddr >= USER_BASE && vaddr < USER_END;
}

/* ---- exec.c ---- */

/*
 * The threads' clocks (include/pmuos/pmushare.h `clock`): every
 * instruction adds 1 to page->clock (an inline add, translate.c), and the
 * first callback of each block makes page->clock the clock of the vCPU
 * that runs it. QEMU runs one vCPU at a time and switches only between
 * blocks, so that is before any instruction of the new vCPU's.
 */
void clock_switch_slow(unsigned int vcpu);
extern unsigned clock_vcpu; /* the vCPU whose clock page->clock holds */
static inline void clock_switch(unsigned int vcpu)
{
	if (vcpu != clock_vcpu)
		clock_switch_slow(vcpu);
}
/* A block without a record (counting stopped): the clock goes on. */
void on_block_clock(unsigned int vcpu, void *udata);

/* Binds the plugin's events to libpfm4's codes by name; false if libpfm4 lacks one. */
bool map_codes(void);
/* The plugin event (enum plugin_event) of an EvtSel event code, or -1. */
int event_of(uint32_t code);
/* memsys's event callback: ctx is the thread's struct count_state. */
void on_event(void *ctx, int ev, uint64_t n);
/* Empties thread t's TLBs and translation cache (a block changed address translation). */
void flush_translations(struct thr *t);
/* Checks that QEMU runs the callbacks in one thread; else counting stops. */
void check_thread(void);
/* The block records are about to be freed: nothing of a thread may point into one after. */
void threads_forget_blocks(void);
/* QEMU's callbacks: block `udata` starts; instruction slot `udata` made a memory access. */
void on_block(unsigned int vcpu, void *udata);
void on_access(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata);

/* ---- translate.c ---- */

/* QEMU translated a block: its record, and the callbacks registered on it. */
void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *qtb);
/* QEMU flushed its translation cache (every vCPU stopped): no block can reach a record now, so every one goes. */
void on_flush(qemu_plugin_id_t id);

/* ---- plugin.c ---- */

/*
 * Registers every callback the plugin has: at install, and again after the
 * flush it asks for (qemu_plugin_reset unregisters them all).
 */
void callbacks_register(qemu_plugin_id_t id);

#endif
