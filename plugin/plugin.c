/*
 * pmuos-pmu.so: a QEMU TCG plugin that counts what a KNC core's PMU counts
 * beyond instructions and cycles (pmu/plugin_events.h), from the guest's
 * execution, into the counters the card's PMU model owns (the shared page,
 * include/pmuos/pmushare.h). Loaded by scripts/qemu.sh:
 *   -plugin build/pmuos-pmu.so,page=/dev/shm/pmuos-CARD-pmu,threads=4[,verify=on]
 *   page=PATH   the file behind the card's shared-page device (created, sized and
 *               zeroed here if need be)
 *   threads=N   hardware threads per core, 1-4: vCPU i is thread i % N of core i / N
 *   verify=on   check every cached address translation against QEMU's (slow;
 *               the page's xlate_checks / xlate_mismatches show the result)
 * Per vCPU it sees each translation block (a straight run of instructions
 * ending at a branch) as it starts (exec callback on its first instruction:
 * the block's instruction fetches, code TLB, vector instructions and
 * branch) and each memory access after it happens (memory callback);
 * a branch is resolved by the next block the vCPU executes. An
 * instruction is counted when its block starts: one that follows a faulting
 * instruction of the same block would count too, but in pmuos such a fault
 * (a page fault) ends the task. The simulation (caches, TLBs, branch
 * predictor: plugin/memsys.h, tlb.h, bpred.h) runs at all times, so caches
 * are warm when counting starts.
 * QEMU runs the plugin in its vCPU thread; under -icount (and
 * -accel tcg,thread=single, which scripts/qemu.sh sets) all vCPUs share one
 * thread, so neither the simulation nor the page needs locks. The plugin
 * refuses to go on if it sees a second thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pmuos/pmushare.h>
#include <pmuos/syscall.h>
#include "plugin/bpred.h"
#include "plugin/count.h"
#include "plugin/decode.h"
#include "plugin/memsys.h"
#include "plugin/qemu_plugin_api.h"
#include "plugin/tlb.h"
#include "pmu/events.h"
#include "pmu/plugin_events.h"
#include "knc_events.h" /* generated from libpfm4: $(BUILD)/gen/knc_events.h */

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

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
	uint32_t elements;     /* their elements */
	struct branch br;      /* br.kind BR_NONE: no branch at the end */
	struct fetch *fetch;
	struct slot *vec;      /* the nvec vector instructions' slots */
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
	 * [user]: a near branch waiting for the next block of its privilege
	 * level, its successor: an interrupt between them runs at Ring 0, and its
	 * IRET returns to the successor.
	 */
	struct branch *pending[2];
	bool flush;                   /* the last block changed address translation */
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
	struct count_state cnt;       /* last: its per-instruction arrays are large and seldom used */
};

static struct pmushare *page;
static struct thr *thr;
static unsigned ncpus, threads_per_core = 1;
static struct memsys mem;
static bool verify;
static pthread_t exec_thread;
static bool exec_thread_known, stopped;
/* vCPUs whose callbacks count: ncpus, 0 once counting stops (one test in each callback). */
static unsigned counting_cpus;

/* ---- events ---- */

static struct {
	uint16_t code;
	int ev;
} codes[PEV_COUNT];

static int event_of(uint32_t code)
{
	for (int i = 0; i < PEV_COUNT; i++)
		if (codes[i].code == code)
			return codes[i].ev;
	return -1;
}

/* Codes by name from libpfm4's table (no code is typed here); false if libpfm4 lacks a name. */
static bool map_codes(void)
{
	static const char *const names[PEV_COUNT] = {
#define NAME(n, d) #n,
		PLUGIN_EVENTS(NAME)
#undef NAME
	};
	for (int i = 0; i < PEV_COUNT; i++) {
		int found = -1;
		for (int j = 0; j < KNC_EVENT_COUNT; j++)
			if (strcmp(knc_events[j].name, names[i]) == 0)
				found = j;
		if (found < 0) {
			fprintf(stderr, "pmuos-pmu: libpfm4's knc table has no event %s\n", names[i]);
			return false;
		}
		codes[i].code = knc_events[found].code;
		codes[i].ev = i;
	}
	return true;
}

/* A core's event (a snoop) on one of its threads: it belongs to the thread's current block. */
static void on_event(void *ctx, int ev, uint64_t n)
{
	struct count_state *s = ctx;

	count_event(s, ev, n, s->n - 1);
}

/* The bit of an event in count_state.mask: a test of several at once before counting each. */
#define EV(e) (1ULL << PEV_##e)
/* A vector instruction's events per line it touches, hit or miss: if one counts, on_access leaves the access to access_slow. */
#define VPU_LINE_EVENTS (EV(VPU_DATA_READ) | EV(VPU_DATA_WRITE))

/* n events of instruction idx of the thread's current block. */
static inline void count(struct thr *t, int ev, uint64_t n, uint32_t idx)
{
	count_event(&t->cnt, ev, n, idx);
}

/* ---- address translation ---- */

/*
 * Ring 3 runs only in the user region and the kernel only below it (its
 * identity map, kernel/paging.c; Ring-3 pages are mapped only in
 * USER_BASE..USER_END, kernel/vm.c): an instruction's address tells its
 * privilege level exactly.
 */
static bool is_user(uint64_t vaddr)
{
	return vaddr >= USER_BASE && vaddr < USER_END;
}

/* The translation cache's entry for vaddr, and whether it holds vaddr's page. */
static inline struct xc_entry *xc_entry(const struct thr *t, uint64_t vaddr, bool *hit)
{
	uint64_t vpage = (vaddr & ((1ULL << 48) - 1)) >> PAGE_4K_SHIFT;
	struct xc_entry *e = &t->xc[vpage & (XC_ENTRIES - 1)];

	*hit = e->vpage == (vpage | t->xc_gen) && vaddr >= XC_LOW;
	return e;
}

/* xlate when the cache cannot answer alone: a miss, or verify mode. */
static __attribute__((noinline)) uint64_t xlate_slow(struct thr *t, qemu_plugin_meminfo_t info, uint64_t vaddr,
						     bool *io)
{
	uint64_t vpage = (vaddr & ((1ULL << 48) - 1)) >> PAGE_4K_SHIFT, off = vaddr & ((1u << PAGE_4K_SHIFT) - 1);
	bool hit;
	struct xc_entry *e = xc_entry(t, vaddr, &hit);
	struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);
	uint64_t pa = hw ? qemu_plugin_hwaddr_phys_addr(hw) : vaddr;
	uint64_t pp = (pa - off) | (hw && qemu_plugin_hwaddr_is_io(hw) ? XC_IO : 0);

	if (hit) {
		page->xlate_checks++;
		page->xlate_mismatches += e->ppage != pp;
	}
	e->vpage = vpage | t->xc_gen;
	e->ppage = pp;
	*io = e->ppage & XC_IO;
	return (e->ppage & ~XC_IO) + off;
}

/* Physical address of vaddr (an address the current access touched), and whether it is device memory. */
static inline uint64_t xlate(struct thr *t, qemu_plugin_meminfo_t info, uint64_t vaddr, bool *io)
{
	bool hit;
	const struct xc_entry *e = xc_entry(t, vaddr, &hit);

	if (!hit || verify)
		return xlate_slow(t, info, vaddr, io);
	*io = e->ppage & XC_IO;
	return (e->ppage & ~XC_IO) + (vaddr & ((1u << PAGE_4K_SHIFT) - 1));
}

static void flush_translations(struct thr *t)
{
	tlb_flush(&t->tlb);
	t->xc_gen += 1ULL << XC_GEN_SHIFT;
	if (t->xc_gen == 0) /* the generations wrapped: empty the cache for real */
		for (unsigned i = 0; i < XC_ENTRIES; i++)
			t->xc[i].vpage = UINT64_MAX;
	t->last_ipage = t->dmemo_page = t->lm_key = UINT64_MAX;
}

/* A page walk (or none) for the page of vaddr, by instruction idx; code or data. */
static inline void translate_page(struct thr *t, bool code, uint64_t vaddr, bool user, uint32_t idx)
{
	switch (tlb_access(&t->tlb, code, vaddr, !user)) {
	case TLB_HIT:
		return;
	case TLB_LONG_WALK:
		count(t, code ? PEV_LONG_CODE_PAGE_WALK : PEV_LONG_DATA_PAGE_WALK, 1, idx);
		__attribute__((fallthrough)); /* a long walk is a walk */
	case TLB_WALK:
		count(t, code ? PEV_CODE_PAGE_WALK : PEV_DATA_PAGE_WALK, 1, idx);
	}
}

/* ---- execution ---- */

enum outcome { UNKNOWN = -1, NOT_TAKEN, TAKEN };

/* What branch b did, if the instruction after it was the one at `next`. */
static inline enum outcome branch_outcome(const struct branch *b, uint64_t next)
{
	switch (b->kind) {
	case BR_COND:
		if (next == b->next)
			return NOT_TAKEN;
		/* an interrupt or exception came first: the outcome is unknown */
		return next == b->target ? TAKEN : UNKNOWN;
	case BR_JMP:
	case BR_CALL:
		return next == b->target ? TAKEN : UNKNOWN;
	default: /* indirect: the next address is the target */
		return TAKEN;
	}
}

/* Branch b, followed by `next`, resolved in predictor bp with nothing changed or counted. */
static inline void branch_settled(struct branch *b, const struct bpred *bp, uint64_t next)
{
	b->ok_bp = bp;
	b->ok_next = next;
	b->ok_epoch = bp->epoch;
}

/* The pending branch of privilege `user` was followed by the instruction at `next`. */
static void resolve_branch(struct thr *t, bool user, uint64_t next)
{
	struct branch *b = t->pending[user];
	struct bpred *bp = &t->bp[user];
	enum outcome o = branch_outcome(b, next);
	uint64_t epoch = bp->epoch;

	t->pending[user] = NULL;
	if (o != UNKNOWN && bpred_resolve(bp, b->vaddr, o == TAKEN, next))
		count_event_at(&t->cnt, user, PEV_BRANCHES_MISPREDICTED, 1);
	else if (bp->epoch == epoch) /* unchanged, so not mispredicted (a BTB hit moves the epoch) */
		branch_settled(b, bp, next);
}

static void check_thread(void)
{
	pthread_t self = pthread_self();

	if (!exec_thread_known) {
		exec_thread = self;
		exec_thread_known = true;
	} else if (!pthread_equal(self, exec_thread) && !__atomic_exchange_n(&stopped, true, __ATOMIC_RELAXED)) {
		__atomic_store_n(&counting_cpus, 0, __ATOMIC_RELAXED);
		fprintf(stderr, "pmuos-pmu: QEMU runs vCPUs in several threads; run it with -icount or "
				"-accel tcg,thread=single (the plugin counts nothing from now on)\n");
	}
}

/* What a block that changed address translation leaves behind, before the next block. */
static __attribute__((noinline)) void after_flush(struct thr *t)
{
	flush_translations(t);
	bpred_clear(&t->bp[1]); /* another address space: another program's branches */
	t->pending[1] = NULL;
	t->flush = false;
}

/* A counter with CMASK or edge detect counts: the block's fetches and vector instructions, each at its instruction. */
static __attribute__((noinline)) void per_insn_counts(struct thr *t, const struct tb *b)
{
	for (uint32_t i = 0; i < b->n; i++)
		count(t, PEV_CODE_READ, 1, i);
	for (int i = 0; i < b->nvec; i++) {
		count(t, PEV_VPU_INSTRUCTIONS_EXECUTED, 1, b->vec[i].idx);
		count(t, PEV_VPU_ELEMENTS_ACTIVE, b->vec[i].elements, b->vec[i].idx);
	}
}

/* The code TLB for the block's pages (the first unless it is the last one translated). */
static __attribute__((noinline)) void code_pages(struct thr *t, const struct tb *b)
{
	for (int i = 0; i < b->npages; i++) {
		if (b->page[i] != t->last_ipage) {
			translate_page(t, true, b->page[i] << (b->user ? PAGE_4K_SHIFT : PAGE_2M_SHIFT), b->user,
				       i ? b->n - 1 : 0);
			t->last_ipage = b->page[i];
		}
	}
}

/* A block's instructions, fetches and vector instructions, counted at its first instruction (no CMASK or edge mode). */
static inline void block_counts(struct thr *t, const struct tb *b)
{
	if (!(t->cnt.mask & (EV(CODE_READ) | EV(VPU_INSTRUCTIONS_EXECUTED) | EV(VPU_ELEMENTS_ACTIVE))))
		return;
	count(t, PEV_CODE_READ, b->n, 0);
	if (b->nvec) {
		count(t, PEV_VPU_INSTRUCTIONS_EXECUTED, b->nvec, 0);
		count(t, PEV_VPU_ELEMENTS_ACTIVE, b->elements, 0);
	}
}

/* The branch that ends block b, and a translation change it makes. */
static inline void block_end(struct thr *t, struct tb *b)
{
	if (b->br.kind != BR_NONE) {
		count(t, PEV_BRANCHES, 1, b->n - 1);
		if (b->br.kind != BR_OTHER)
			t->pending[b->user] = &b->br;
	}
	if (b->flush_tlb)
		t->flush = true; /* from the next block: this one's accesses used the old translation */
}

/* Block b starts on thread t: everything on_block does not settle itself. */
static __attribute__((noinline)) void block_slow(struct thr *t, struct tb *b)
{
	if (t->pending[b->user])
		resolve_branch(t, b->user, b->vaddr);
	if (t->flush)
		after_flush(t);
	count_block(&t->cnt, b->user, b->n);
	t->seq++;
	page->insns += b->n;
	if (t->cnt.cur)
		per_insn_counts(t, b);
	else
		block_counts(t, b);
	if (b->page[0] != t->last_ipage || b->npages > 1)
		code_pages(t, b);
	int missed = -1; /* the last instruction whose fetch missed (counted once) */
	for (int i = 0; i < b->nfetch; i++) {
		const struct fetch *f = &b->fetch[i];
		if (memsys_code(&mem, t->core, &t->cnt, f->line) && f->idx != missed) {
			count(t, PEV_CODE_CACHE_MISS, 1, f->idx);
			missed = f->idx;
		}
	}
	block_end(t, b);
}

/*
 * The block `udata` starts on this vCPU. The common case is settled here
 * without a call: the registers unchanged and no counter in CMASK or edge
 * mode, no translation change, the code page the last one, every fetch a
 * hit on its L1I set's most recent line (known from the last execution
 * while nothing in the L1I changed), and the branch before it resolved
 * with nothing to learn (known from an earlier resolution while its
 * predictor did not change). Everything else goes to block_slow, which does
 * all of it again (the hits checked here change nothing it would see).
 */
static void on_block(unsigned int vcpu, void *udata)
{
	struct tb *b = udata;

	if (vcpu >= counting_cpus)
		return;
	struct thr *t = &thr[vcpu];
	struct count_state *s = &t->cnt;
	struct branch *p = t->pending[b->user];
	const struct bpred *bp = &t->bp[b->user];

	if (t->flush || !count_block_quick(s) || s->enabled[b->user] || b->page[0] != t->last_ipage || b->npages > 1)
		goto slow;
	if (p && !(p->ok_next == b->vaddr && p->ok_bp == bp && p->ok_epoch == bp->epoch)) {
		enum outcome o = branch_outcome(p, b->vaddr);
		if (o != UNKNOWN && !bpred_settled(bp, p->vaddr, o == TAKEN, b->vaddr))
			goto slow;
		branch_settled(p, bp, b->vaddr);
	}
	if (b->hit_epoch != *t->l1i_epoch || b->hit_core != t->core) {
		for (int i = 0; i < b->nfetch; i++)
			if (!memsys_code_hit(&mem, t->core, b->fetch[i].line))
				goto slow;
		b->hit_core = t->core;
		b->hit_epoch = *t->l1i_epoch;
	}
	t->pending[b->user] = NULL;
	count_block_fast(s, b->user, b->n);
	t->seq++;
	page->insns += b->n;
	block_counts(t, b);
	block_end(t, b);
	return;
slow:
	block_slow(t, b);
}

/* One line of the current operand (vaddr in it, at pa): the caches and the VPU's per-line events. */
static inline __attribute__((always_inline)) void access_line(struct thr *t, const struct slot *in, uint64_t vaddr,
								   uint64_t pa, bool write)
{
	bool miss = memsys_data(&mem, t->core, &t->cnt, pa >> MS_LINE_SHIFT, write);

	if (((vaddr >> PAGE_4K_SHIFT) << 1 | in->user) == t->dmemo_page) {
		t->lm_key = (vaddr >> MS_LINE_SHIFT) << 1 | in->user;
		t->lm_epoch = *t->l1d_epoch;
		t->lm_dirty = write;
	}
	if (in->elements && (t->cnt.mask & (VPU_LINE_EVENTS | EV(VPU_DATA_READ_MISS) | EV(VPU_DATA_WRITE_MISS)))) {
		count(t, write ? PEV_VPU_DATA_WRITE : PEV_VPU_DATA_READ, 1, in->idx);
		if (miss)
			count(t, write ? PEV_VPU_DATA_WRITE_MISS : PEV_VPU_DATA_READ_MISS, 1, in->idx);
	}
	if (miss && !t->op_missed) {
		t->op_missed = true;
		count(t, write ? PEV_DATA_WRITE_MISS : PEV_DATA_READ_MISS, 1, in->idx);
		count(t, PEV_DATA_READ_MISS_OR_WRITE_MISS, 1, in->idx);
	}
}

/* A line of device memory: uncacheable, a read miss by definition (000 Table 1-6). */
static void access_io(struct thr *t, const struct slot *in, bool write)
{
	if (!write && !t->op_missed) {
		t->op_missed = true;
		count(t, PEV_DATA_READ_MISS, 1, in->idx);
		count(t, PEV_DATA_READ_MISS_OR_WRITE_MISS, 1, in->idx);
	}
}

/* The first piece of an operand: its read or write. */
static inline void operand_start(struct thr *t, const struct slot *in, bool write)
{
	t->op_seq = t->seq;
	t->op_slot = in;
	t->op_write = write;
	t->op_missed = false;
	t->op_last_line = UINT64_MAX;
	if (!(t->cnt.mask & (EV(DATA_READ) | EV(DATA_WRITE) | EV(DATA_READ_OR_WRITE))))
		return;
	count(t, write ? PEV_DATA_WRITE : PEV_DATA_READ, 1, in->idx);
	count(t, PEV_DATA_READ_OR_WRITE, 1, in->idx);
}

/* One line of the current operand (vaddr in it): the TLB, translation and caches. */
static inline __attribute__((always_inline)) void access_piece(struct thr *t, qemu_plugin_meminfo_t info,
								    const struct slot *in, uint64_t vaddr, bool write)
{
	uint64_t vline = vaddr >> MS_LINE_SHIFT;

	t->lm_key = UINT64_MAX; /* the TLB's most recent page may change */
	/* The TLB, per page the operand touches (a hit on the most recent entry changes nothing). */
	translate_page(t, false, vaddr, in->user, in->idx);
	if (vline == t->op_last_line)
		return; /* QEMU's next piece of a 16- or 32-byte operand, in the same line */
	bool io;
	uint64_t pa = xlate(t, info, vaddr, &io);
	t->op_last_line = vline;
	t->dmemo_page = io || verify || vaddr < XC_LOW ? UINT64_MAX : (vaddr >> PAGE_4K_SHIFT) << 1 | in->user;
	t->dmemo_pa = pa & ~((1ull << PAGE_4K_SHIFT) - 1);
	if (io)
		access_io(t, in, write);
	else
		access_line(t, in, vaddr, pa, write);
}

/* An access that crosses lines: each line in turn. */
static __attribute__((noinline)) void access_lines(struct thr *t, qemu_plugin_meminfo_t info, const struct slot *in,
						    uint64_t vaddr, uint64_t last, bool write)
{
	for (uint64_t a = vaddr; ; a = (a | ((1u << MS_LINE_SHIFT) - 1)) + 1) {
		access_piece(t, info, in, a, write);
		if (a >> MS_LINE_SHIFT == last >> MS_LINE_SHIFT)
			break;
	}
}

/*
 * Whether the slot's page memo holds data page vpage (page << 1 |
 * privilege) for thread t: if so it becomes the thread's memo page (the TLB
 * would hit it without a change, as if it were the last).
 */
static inline bool page_known(struct thr *t, const struct slot *in, uint64_t vpage)
{
	if (in->pm_thr != t || in->pm_page != vpage || in->pm_epoch != t->tlb.epoch)
		return false;
	t->dmemo_page = vpage;
	t->dmemo_pa = in->pm_pa;
	return true;
}

/* Physical address of vaddr, in the thread's memo page. */
static inline uint64_t memo_pa(const struct thr *t, uint64_t vaddr)
{
	return t->dmemo_pa | (vaddr & ((1ull << PAGE_4K_SHIFT) - 1));
}

/* Whether this access continues the current operand: same execution, same direction, right after the last piece. */
static inline bool next_piece(const struct thr *t, const struct slot *in, uint64_t vaddr, bool write)
{
	return vaddr == t->op_end && in == t->op_slot && t->seq == t->op_seq && write == t->op_write;
}

/*
 * An access within one line of a page the thread knows (its memo page): the
 * operand's bookkeeping and, unless QEMU's last piece of it was in the
 * same line, the line's look in the caches.
 */
static __attribute__((noinline)) void access_known(struct thr *t, const struct slot *in, uint64_t vaddr, bool write)
{
	uint64_t vline = vaddr >> MS_LINE_SHIFT;

	if (!next_piece(t, in, vaddr, write))
		operand_start(t, in, write);
	t->op_end = vaddr + in->bytes;
	if (vline != t->op_last_line) {
		t->op_last_line = vline;
		access_line(t, in, vaddr, memo_pa(t, vaddr), write);
	}
}

/* An access on_access cannot settle by the last-line memo. */
static __attribute__((noinline)) void access_slow(struct thr *t, qemu_plugin_meminfo_t info, struct slot *in,
						  uint64_t vaddr)
{
	if (in->info != (info | SLOT_INFO_KNOWN)) {
		in->info = info | SLOT_INFO_KNOWN;
		in->write = qemu_plugin_mem_is_store(info);
		in->bytes = 1u << qemu_plugin_mem_size_shift(info);
	}
	bool write = in->write;
	uint64_t last = vaddr + in->bytes - 1;
	uint64_t vline = vaddr >> MS_LINE_SHIFT, vpage = (vaddr >> PAGE_4K_SHIFT) << 1 | in->user;

	if (vline == last >> MS_LINE_SHIFT && (vpage == t->dmemo_page || page_known(t, in, vpage))) {
		access_known(t, in, vaddr, write);
		return;
	}
	if (!next_piece(t, in, vaddr, write))
		operand_start(t, in, write);
	t->op_end = last + 1;
	if (vline != last >> MS_LINE_SHIFT) {
		access_lines(t, info, in, vaddr, last, write);
		return;
	}
	access_piece(t, info, in, vaddr, write);
	if (t->dmemo_page == vpage) {
		in->pm_thr = t;
		in->pm_page = vpage;
		in->pm_pa = t->dmemo_pa;
		in->pm_epoch = t->tlb.epoch;
	}
}

/*
 * A data access of the instruction `udata` (its slot), after it happened.
 * One callback for reads and writes: QEMU 7.2 does not reliably pick a
 * callback by the access's direction (a callback registered for reads only
 * was seen to get writes), so the direction comes from the access itself.
 * The common case, an access within the line of the last one that changes
 * nothing in the caches (the memo, struct thr), is settled here without a
 * call, so without saving registers.
 */
static void on_access(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
	struct slot *in = udata;

	if (vcpu >= counting_cpus)
		return;
	struct thr *t = &thr[vcpu];
	uint64_t end = vaddr + in->bytes;
	bool write = in->write;

	uint64_t vline = vaddr >> MS_LINE_SHIFT;

	if (in->info != (info | SLOT_INFO_KNOWN) || (end - 1) >> MS_LINE_SHIFT != vline ||
	    (in->elements && (t->cnt.mask & VPU_LINE_EVENTS)))
		goto slow;
	if ((vline << 1 | in->user) != t->lm_key || t->lm_epoch != *t->l1d_epoch || (write && !t->lm_dirty)) {
		/* Not the memo line: a page known without the TLB, and its set's most recent line? */
		uint64_t vpage = (vaddr >> PAGE_4K_SHIFT) << 1 | in->user;
		if (vpage != t->dmemo_page && !page_known(t, in, vpage))
			goto slow;
		uint64_t line = memo_pa(t, vaddr) >> MS_LINE_SHIFT;
		const uint8_t *st = sa_mru(&mem.core[t->core].l1d, line);
		if (!st || (write && !(*st & MS_DIRTY))) {
			access_known(t, in, vaddr, write); /* what access_slow would come to, without its checks */
			return;
		}
		t->lm_key = vline << 1 | in->user;
		t->lm_epoch = *t->l1d_epoch;
		t->lm_dirty = *st & MS_DIRTY;
	}
	if (!next_piece(t, in, vaddr, write))
		operand_start(t, in, write);
	t->op_end = end;
	t->op_last_line = vline;
	return;
slow:
	access_slow(t, info, in, vaddr);
}

/* ---- translation ---- */

/*
 * Block records: QEMU translates the same code again and again (each time
 * -icount cuts a block short, or its cache is flushed), so records are kept
 * once per (address, host address, bytes) and live as long as QEMU. They are
 * carved from large allocations, close together for the host's caches.
 */
static struct tb **known; /* open addressing; a power-of-two number of slots */
static size_t known_slots, known_used;
#define ARENA_BYTES (1 << 20)
static uint8_t *arena;
static size_t arena_left;

static void *arena_alloc(size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (n > arena_left) {
		arena = malloc(ARENA_BYTES > n ? ARENA_BYTES : n);
		if (!arena)
			return NULL;
		arena_left = ARENA_BYTES > n ? ARENA_BYTES : n;
	}
	void *p = arena;
	arena += n;
	arena_left -= n;
	return memset(p, 0, n);
}

static uint64_t tb_hash(uint64_t vaddr, const void *haddr, uint32_t nbytes)
{
	uint64_t h = (vaddr * 0x9e3779b97f4a7c15ULL) ^ (uint64_t)(uintptr_t)haddr ^ ((uint64_t)nbytes << 48);
	return h ^ (h >> 29);
}

static bool known_grow(void)
{
	size_t n = known_slots ? known_slots * 2 : 1 << 16;
	struct tb **k = calloc(n, sizeof(*k));

	if (!k)
		return false;
	for (size_t i = 0; i < known_slots; i++) {
		struct tb *b = known[i];
		if (!b)
			continue;
		size_t j = tb_hash(b->vaddr, b->haddr, b->nbytes) & (n - 1);
		while (k[j])
			j = (j + 1) & (n - 1);
		k[j] = b;
	}
	free(known);
	known = k;
	known_slots = n;
	return true;
}

/* The line tag of a code byte: physical in the kernel's identity map, by host address in Ring 3. */
static uint64_t code_line(uint64_t vaddr, const uint8_t *host, bool user)
{
	if (user && host)
		return USER_CODE_TAG | ((uint64_t)(uintptr_t)host >> MS_LINE_SHIFT);
	return vaddr >> MS_LINE_SHIFT;
}

/* Builds the record of a block from its instructions. */
static struct tb *tb_build(struct qemu_plugin_tb *qtb, size_t n, uint64_t vaddr, const void *haddr,
			   const uint8_t *bytes, uint32_t nbytes)
{
	struct tb *b = arena_alloc(sizeof(*b) + n * sizeof(b->slot[0]));
	struct fetch *fetch = b ? arena_alloc(2 * n * sizeof(*fetch)) : NULL;
	struct slot *vec = fetch ? arena_alloc(n * sizeof(*vec)) : NULL;
	uint8_t *copy = vec ? arena_alloc(nbytes) : NULL;

	if (!copy)
		return NULL;
	b->vaddr = vaddr;
	b->n = n;
	b->user = is_user(vaddr);
	b->haddr = haddr;
	b->nbytes = nbytes;
	b->bytes = memcpy(copy, bytes, nbytes);
	b->fetch = fetch;
	b->vec = vec;
	b->hit_epoch = UINT64_MAX;
	uint64_t last_line = UINT64_MAX;
	unsigned pshift = b->user ? PAGE_4K_SHIFT : PAGE_2M_SHIFT;
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *qi = qemu_plugin_tb_get_insn(qtb, i);
		uint64_t va = qemu_plugin_insn_vaddr(qi);
		const uint8_t *ha = qemu_plugin_insn_haddr(qi);
		size_t len = qemu_plugin_insn_size(qi);
		struct x86_insn d;
		x86_decode(qemu_plugin_insn_data(qi), len, va, &d);
		b->slot[i] = (struct slot){ .idx = i, .elements = d.vec_bytes ? d.elements : 0, .user = b->user };
		if (d.vec_bytes) {
			vec[b->nvec++] = b->slot[i];
			b->elements += d.elements;
		}
		b->flush_tlb |= d.flush_tlb;
		uint64_t lines[2] = { code_line(va, ha, b->user), code_line(va + len - 1, ha ? ha + len - 1 : NULL, b->user) };
		for (int k = 0; k < 2; k++) {
			if (lines[k] != last_line)
				fetch[b->nfetch++] = (struct fetch){ lines[k], i };
			last_line = lines[k];
		}
		for (uint64_t p = va >> pshift; p <= (va + len - 1) >> pshift; p++)
			if ((b->npages == 0 || b->page[b->npages - 1] != p) && b->npages < 2)
				b->page[b->npages++] = p;
		if (i == n - 1 && d.branch != BR_NONE)
			b->br = (struct branch){ .vaddr = va, .next = va + len, .target = d.target, .kind = d.branch, .user = b->user };
	}
	return b;
}

/* The record of the block QEMU is translating (an old one if the same code was translated before). */
static struct tb *tb_record(struct qemu_plugin_tb *qtb)
{
	size_t n = qemu_plugin_tb_n_insns(qtb);
	uint8_t bytes[COUNT_MAX_BLOCK * 16];
	uint32_t nbytes = 0;

	if (n == 0 || n > COUNT_MAX_BLOCK)
		return NULL;
	struct qemu_plugin_insn *first = qemu_plugin_tb_get_insn(qtb, 0);
	uint64_t vaddr = qemu_plugin_insn_vaddr(first);
	const void *haddr = qemu_plugin_insn_haddr(first);
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *qi = qemu_plugin_tb_get_insn(qtb, i);
		size_t len = qemu_plugin_insn_size(qi);
		if (nbytes + len > sizeof(bytes))
			return NULL;
		memcpy(bytes + nbytes, qemu_plugin_insn_data(qi), len);
		nbytes += len;
	}
	if ((known_used + 1) * 2 > known_slots && !known_grow())
		return NULL;
	size_t j = tb_hash(vaddr, haddr, nbytes) & (known_slots - 1);
	for (; known[j]; j = (j + 1) & (known_slots - 1)) {
		const struct tb *b = known[j];
		if (b->vaddr == vaddr && b->haddr == haddr && b->n == n && b->nbytes == nbytes &&
		    memcmp(b->bytes, bytes, nbytes) == 0)
			return known[j];
	}
	struct tb *b = tb_build(qtb, n, vaddr, haddr, bytes, nbytes);
	if (b) {
		known[j] = b;
		known_used++;
	}
	return b;
}

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *qtb)
{
	check_thread();
	struct tb *b = tb_record(qtb);
	if (!b) {
		if (!stopped)
			fprintf(stderr, "pmuos-pmu: out of memory, or a block of more than %d instructions; counting stops\n",
				COUNT_MAX_BLOCK);
		stopped = true;
		counting_cpus = 0;
		return;
	}
	qemu_plugin_register_vcpu_insn_exec_cb(qemu_plugin_tb_get_insn(qtb, 0), on_block, QEMU_PLUGIN_CB_NO_REGS, b);
	for (size_t i = 0; i < b->n; i++) {
		struct qemu_plugin_insn *qi = qemu_plugin_tb_get_insn(qtb, i);
		qemu_plugin_register_vcpu_mem_cb(qi, on_access, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, &b->slot[i]);
	}
}

/* ---- set-up ---- */

/* Maps the shared file (created or resized to PMUSHARE_BYTES) and writes its header. */
static bool map_page(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT, 0600);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) != 0 ||
	    (st.st_size != PMUSHARE_BYTES && ftruncate(fd, PMUSHARE_BYTES) != 0)) {
		fprintf(stderr, "pmuos-pmu: cannot use %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return false;
	}
	void *p = mmap(NULL, PMUSHARE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		fprintf(stderr, "pmuos-pmu: cannot map %s: %s\n", path, strerror(errno));
		return false;
	}
	page = p;
	memset(page, 0, PMUSHARE_BYTES); /* a new machine: nothing the last one left counts */
	page->version = PMUSHARE_VERSION;
	page->cpus = ncpus;
	page->threads_per_core = threads_per_core;
	page->magic = PMUSHARE_MAGIC;
	return true;
}

static bool parse_args(int argc, char **argv, const char **path)
{
	*path = NULL;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (strncmp(a, "page=", 5) == 0 && a[5]) {
			*path = a + 5;
		} else if (strncmp(a, "threads=", 8) == 0 && a[8] >= '1' && a[8] <= '0' + MS_THREADS && !a[9]) {
			threads_per_core = a[8] - '0';
		} else if (strcmp(a, "verify=on") == 0 || strcmp(a, "verify=off") == 0) {
			verify = a[7] == 'o' && a[8] == 'n';
		} else {
			fprintf(stderr, "pmuos-pmu: unknown argument '%s' (page=PATH, threads=1-%d, verify=on|off)\n",
				a, MS_THREADS);
			return false;
		}
	}
	if (!*path) {
		fprintf(stderr, "pmuos-pmu: page=PATH is required (the shared page's file)\n");
		return false;
	}
	return true;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	const char *path;

	if (!info->system_emulation || strcmp(info->target_name, "x86_64") != 0) {
		fprintf(stderr, "pmuos-pmu: needs qemu-system-x86_64\n");
		return -1;
	}
	ncpus = info->system.max_vcpus;
	if (ncpus < 1 || ncpus > PMUSHARE_CPUS) {
		fprintf(stderr, "pmuos-pmu: %u vCPUs; the shared page has slots for 1 to %d\n", ncpus, PMUSHARE_CPUS);
		return -1;
	}
	if (!parse_args(argc, argv, &path) || !map_codes() || !map_page(path))
		return -1;
	uint32_t ncores = (ncpus + threads_per_core - 1) / threads_per_core;
	thr = calloc(ncpus, sizeof(*thr));
	if (!thr || !memsys_init(&mem, ncores, on_event)) {
		fprintf(stderr, "pmuos-pmu: out of memory for %u vCPUs\n", ncpus);
		return -1;
	}
	for (unsigned v = 0; v < ncpus; v++) {
		struct thr *t = &thr[v];
		t->core = v / threads_per_core;
		t->xc = calloc(XC_ENTRIES, sizeof(*t->xc));
		if (!t->xc || !tlb_init(&t->tlb) || !bpred_init(&t->bp[0]) || !bpred_init(&t->bp[1]) ||
		    !memsys_attach(&mem, t->core, &t->cnt)) {
			fprintf(stderr, "pmuos-pmu: out of memory for %u vCPUs\n", ncpus);
			return -1;
		}
		count_init(&t->cnt, &page->thread[v], event_of);
		t->l1d_epoch = &mem.core[t->core].l1d_epoch;
		t->l1i_epoch = &mem.core[t->core].l1i_epoch;
		flush_translations(t);
		t->op_seq = UINT64_MAX;
	}
	counting_cpus = ncpus;
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
	return 0;
}
