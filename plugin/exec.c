/*
 * The plugin's callbacks (see plugin/plugin.c): each block as it starts
 * (instruction fetches, code TLB, vector instructions, the branch before
 * it) and each memory access after it happens (data TLB, translation,
 * caches), counted into the thread's counters.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "plugin/internal.h"
#include "pmu/events.h"
#include "knc_events.h" /* generated from libpfm4: $(BUILD)/gen/knc_events.h */

static pthread_t exec_thread;
static bool exec_thread_known;

/* ---- events ---- */

static struct {
	uint16_t code;
	int ev;
} codes[PEV_COUNT];

int event_of(uint32_t code)
{
	for (int i = 0; i < PEV_COUNT; i++)
		if (codes[i].code == code)
			return codes[i].ev;
	return -1;
}

/* Codes by name from libpfm4's table (no code is typed here); false if libpfm4 lacks a name. */
bool map_codes(void)
{
	static const char *const names[PEV_COUNT] = PLUGIN_EVENT_NAMES;
	for (int i = 0; i < PEV_COUNT; i++) {
		int found = -1;
		for (size_t j = 0; j < KNC_EVENT_COUNT; j++)
			if (strcmp(knc_events[j].name, names[i]) == 0)
				found = (int)j;
		if (found < 0) {
			fprintf(stderr, "pmuos-pmu: libpfm4's knc table has no event %s\n", names[i]);
			return false;
		}
		codes[i].code = knc_events[found].code;
		codes[i].ev = i;
	}
	return true;
}

/* A word the card writes (the shared page): read once, as it is now. */
#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))

/* The bit of an event in count_state.mask: a test of several at once before counting each. */
#define EV(e) (1ULL << PEV_##e)
/* The timing model's events (plugin/timing.h): counted per block, and a stall's. */
/*
 * (With the events of prefetches in flight, which need the thread's cycles,
 * plugin/internal.h struct thr `cycles`: prefetches are in flight only
 * while one of these counts.)
 */
#define TIMING_EVENTS                                                                                             \
	(EV(CPU_CLK_UNHALTED) | EV(EXEC_STAGE_CYCLES) | EV(FE_STALLED) | EV(INSTRUCTIONS_EXECUTED_V_PIPE) |       \
	 EV(MEMORY_ACCESSES_IN_BOTH_PIPES) | EV(MICROCODE_CYCLES) | EV(PIPELINE_FLUSHES) | EV(PIPELINE_AGI_STALLS) | \
	 EV(L1_DATA_HIT_INFLIGHT_PF1) | EV(L2_DATA_HIT_INFLIGHT_PF2) | EV(L1_DATA_PF1_DROP) | EV(L2_DATA_PF2_DROP))

static inline struct thr *thr_of(struct count_state *s)
{
	return (struct thr *)((char *)s - offsetof(struct thr, cnt));
}

/* `cycles` the thread waited (a miss, a flush) at its current block's instruction idx. */
static inline void stall(struct count_state *s, uint64_t cycles, uint32_t idx)
{
	thr_of(s)->cycles += cycles;
	count_event(s, PEV_CPU_CLK_UNHALTED, cycles, idx);
	count_event(s, PEV_FE_STALLED, cycles, idx);
}

/*
 * Where an L1 miss of a read was served, by the event memsys gives it
 * (plugin/memsys.h), or -1: a write's miss waits for nothing (the model's
 * choice: the core's store goes on), a snoop is another core's.
 */
static int served_from(int ev)
{
	switch (ev) {
	case PEV_L2_READ_HIT_E:
	case PEV_L2_READ_HIT_M:
	case PEV_L2_READ_HIT_S:
		return TM_FROM_L2;
	case PEV_L2_CODE_READ_MISS_CACHE_FILL:
	case PEV_L2_DATA_READ_MISS_CACHE_FILL:
		return TM_FROM_REMOTE;
	case PEV_L2_CODE_READ_MISS_MEM_FILL:
	case PEV_L2_DATA_READ_MISS_MEM_FILL:
		return TM_FROM_MEM;
	default:
		return -1;
	}
}

/* A core's event on one of its threads (a fill, a snoop): it belongs to the thread's current block. */
void on_event(void *ctx, int ev, uint64_t n)
{
	struct count_state *s = ctx;

	count_event(s, ev, n, s->n - 1);
	int from = served_from(ev);
	if (from < 0)
		return;
	struct thr *t = thr_of(s);
	if (t->prefetching)
		t->pf_from = from; /* a prefetch's fill: the thread goes on (its arrival is in flight) */
	else if (s->mask & TIMING_EVENTS)
		stall(s, n * tm_latency(from), s->n - 1);
}
/* A vector instruction's events per line it touches, hit or miss: if one counts, on_access leaves the access to access_slow. */
#define VPU_LINE_EVENTS (EV(VPU_DATA_READ) | EV(VPU_DATA_WRITE))

/* n events of instruction idx of the thread's current block. */
static inline void count(struct thr *t, int ev, uint64_t n, uint32_t idx)
{
	count_event(&t->cnt, ev, n, idx);
}

/* ---- address translation ---- */

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

void flush_translations(struct thr *t)
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
	if (!t->tlb_on)
		return;
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

/* ---- the threads' clocks ---- */

unsigned clock_vcpu;

void clock_switch_slow(unsigned int vcpu)
{
	page->thread[clock_vcpu].clock = page->clock;
	page->clock = page->thread[vcpu].clock;
	clock_vcpu = vcpu;
}

void on_block_clock(unsigned int vcpu, void *udata)
{
	clock_switch(vcpu);
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

	uint64_t allocs = bp->allocs;
	bool wrong = o != UNKNOWN && bpred_resolve(bp, b->vaddr, o == TAKEN, next);

	t->pending[user] = NULL;
	if (wrong)
		count_event_at(&t->cnt, user, PEV_BRANCHES_MISPREDICTED, 1);
	else if (bp->epoch == epoch) /* unchanged, so not mispredicted (a BTB hit moves the epoch) */
		branch_settled(b, bp, next);
	if (wrong || bp->allocs != allocs) { /* a flush: a misprediction, or a taken branch the BTB missed */
		t->cycles += TM_FLUSH;
		count_event_at(&t->cnt, user, PEV_PIPELINE_FLUSHES, 1);
		count_event_at(&t->cnt, user, PEV_CPU_CLK_UNHALTED, TM_FLUSH);
		count_event_at(&t->cnt, user, PEV_FE_STALLED, TM_FLUSH);
	}
}

void check_thread(void)
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

void threads_forget_blocks(void)
{
	for (unsigned v = 0; v < ncpus; v++) {
		struct thr *t = &thr[v];
		for (int u = 0; u < 2; u++)
			if (t->pending[u]) { /* resolved by the next block as if nothing had happened */
				t->kept[u] = *t->pending[u];
				t->pending[u] = &t->kept[u];
			}
		t->op_slot = NULL;
		t->cur_slots = NULL;
	}
}

/* What a block that changed address translation leaves behind, before the next block. */
static __attribute__((noinline)) void after_flush(struct thr *t)
{
	flush_translations(t);
	t->npf = 0; /* a new address space: its program's prefetches are not this one's */
	bpred_clear(&t->bp[1]); /* another address space: another program's branches */
	t->pending[1] = NULL;
	t->flush = false;
}

/*
 * Threads of t's core that share its issue turns now, t included: those
 * with a task assigned or running, and those of t's launch whose task
 * ended after as many instructions as t's task has run so far (the card's
 * pmushare_thread task_*). QEMU runs one vCPU at a time, a long stretch
 * each (to the next timer of any): the first thread of a launch to run
 * would otherwise find its siblings not yet started, and the last find
 * them ended, where on a card they run side by side. Threads without a
 * task (the kernel's service, idle CPUs) do not share: a choice, so that
 * a program's cycles do not depend on when the host asks the card
 * something (docs/design.md §11).
 */
static __attribute__((noinline)) unsigned busy_threads_slow(struct thr *t, uint32_t gen)
{
	const struct pmushare_thread *me = &page->thread[t - thr];
	unsigned busy = 1, first = t->core * threads_per_core;
	uint32_t launch = READ_ONCE(me->task_launch), state = READ_ONCE(me->task_state);
	uint64_t start = READ_ONCE(me->task_clock), ran = page->clock - start, until = UINT64_MAX;

	for (unsigned v = first; v < first + threads_per_core && v < ncpus; v++) {
		const struct pmushare_thread *s = &page->thread[v];
		if (s == me)
			continue;
		uint32_t st = READ_ONCE(s->task_state);
		uint64_t len = READ_ONCE(s->task_clock);
		bool ended_later = st == PMUSHARE_TASK_ENDED && state == PMUSHARE_TASK_RUN &&
				   READ_ONCE(s->task_launch) == launch && ran < len;
		busy += st == PMUSHARE_TASK_RUN || ended_later;
		if (ended_later && start + len < until)
			until = start + len; /* where it stops sharing */
	}
	t->busy_gen = gen;
	t->busy = busy;
	t->busy_until = until;
	return busy;
}

static inline unsigned busy_threads(struct thr *t)
{
	uint32_t gen = READ_ONCE(page->task_gen);

	if (gen == t->busy_gen && page->clock < t->busy_until)
		return t->busy;
	return busy_threads_slow(t, gen);
}

/*
 * The timing model's counts of one execution of block b, at its first
 * instruction (plugin/timing.h): its schedule from a fresh start, or, after
 * a block of its privilege level that QEMU cut, the continuation of that
 * one's.
 */
/*
 * Block b's run at gap index g after the cut block before it (its state in
 * *carry, which becomes b's end state if b too is cut): b's memo when that
 * state is the one it last went on from, else tm_run, remembered.
 */
static const struct tm_counts *continuation(struct tb *b, unsigned g, struct tm_carry *carry)
{
	if (!b->memo.valid || b->memo.g != g || !tm_carry_same(&b->memo.in, carry)) {
		b->memo.in = *carry;
		b->memo.g = (uint8_t)g;
		b->memo.valid = true;
		tm_run(b->insn, b->n, TM_ISSUE_GAP + g, carry, &b->memo.out, &b->memo.exit);
	}
	if (b->tm_exit)
		*carry = b->memo.exit;
	return &b->memo.out;
}

static __attribute__((noinline)) void block_timing(struct thr *t, struct tb *b)
{
	unsigned g = tm_gap_index(busy_threads(t));
	const struct tm_counts *c = &b->tm.at[g];
	bool u = b->user;

	if (t->carrying[u]) {
		c = continuation(b, g, &t->carry[u]);
	} else if (b->tm_exit) {
		t->carry[u] = b->tm_exit[g];
	}
	t->carrying[u] = b->tm_exit != NULL;
	t->cycles += c->cycles;
	count(t, PEV_CPU_CLK_UNHALTED, c->cycles, 0);
	if ((t->cnt.mask & TIMING_EVENTS) == EV(CPU_CLK_UNHALTED))
		return; /* cycles alone, the common case */
	count(t, PEV_FE_STALLED, c->cycles - (uint32_t)c->groups * (TM_ISSUE_GAP + g), 0);
	count(t, PEV_EXEC_STAGE_CYCLES, c->exec, 0);
	count(t, PEV_INSTRUCTIONS_EXECUTED_V_PIPE, c->vpipe, 0);
	count(t, PEV_MEMORY_ACCESSES_IN_BOTH_PIPES, c->both_mem, 0);
	count(t, PEV_MICROCODE_CYCLES, c->micro, 0);
	count(t, PEV_PIPELINE_AGI_STALLS, c->agi, 0);
}

/* The timing model for block b when a counter counts one of its events; else a continuation of it starts afresh. */
static inline void timing(struct thr *t, struct tb *b)
{
	if (t->cnt.mask & TIMING_EVENTS)
		block_timing(t, b);
	else
		t->carrying[b->user] = false;
}

/* A counter with CMASK or edge detect counts: the block's fetches and vector instructions, each at its instruction. */
static __attribute__((noinline)) void per_insn_counts(struct thr *t, struct tb *b)
{
	timing(t, b);
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
static inline void block_counts(struct thr *t, struct tb *b)
{
	timing(t, b);
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

#define TLB_EVENTS (EV(DATA_PAGE_WALK) | EV(LONG_DATA_PAGE_WALK) | EV(CODE_PAGE_WALK) | EV(LONG_CODE_PAGE_WALK))

/*
 * The TLBs on or off as the thread's EvtSels (just read by count_block)
 * name their events or not. Off, no access pays for them (a third of a
 * cache miss's cost); back on, they start empty. A task's counters are
 * programmed before it starts, and its start writes CR3, so a task counts
 * the same walks either way.
 */
static inline void tlb_events(struct thr *t)
{
	bool on = t->cnt.programmed & TLB_EVENTS;

	if (on && !t->tlb_on)
		flush_translations(t);
	t->tlb_on = on;
}

/* Block b starts on thread t: everything on_block does not settle itself. */
static __attribute__((noinline)) void block_slow(struct thr *t, struct tb *b)
{
	if (t->pending[b->user])
		resolve_branch(t, b->user, b->vaddr);
	if (t->flush)
		after_flush(t);
	count_block(&t->cnt, b->user, b->n);
	tlb_events(t);
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
void on_block(unsigned int vcpu, void *udata)
{
	struct tb *b = udata;

	if (vcpu_translating)
		vcpu = b->trans_vcpu;
	clock_switch(vcpu);
	if (vcpu >= counting_cpus)
		return;
	struct thr *t = &thr[vcpu];
	struct count_state *s = &t->cnt;
	struct branch *p = t->pending[b->user];
	const struct bpred *bp = &t->bp[b->user];

	t->cur_slots = b->slot;
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

/* The thread's prefetch of `line` in flight, or NULL. */
static struct inflight *inflight(struct thr *t, uint64_t line)
{
	for (int i = 0; i < t->npf; i++)
		if (t->pf[i].line == line)
			return &t->pf[i];
	return NULL;
}

static void inflight_drop(struct thr *t, struct inflight *p)
{
	*p = t->pf[--t->npf];
}

/*
 * A demand access to `line` (`miss`: of the L1D) while prefetches are in
 * flight: one not yet arrived makes it wait for the rest (a VPREFETCH1's
 * beyond the L2 hit's latency, already waited), and counts as a hit on it.
 * Arrived ones leave the list.
 */
static __attribute__((noinline)) void inflight_demand(struct thr *t, const struct slot *in, uint64_t line, bool miss)
{
	for (int i = t->npf - 1; i >= 0; i--) {
		struct inflight *p = &t->pf[i];
		if (p->line == line && p->ready > t->cycles && (!p->l2 || miss)) {
			uint64_t left = p->ready - t->cycles, waited = p->l2 ? tm_latency(TM_FROM_L2) : 0;
			count(t, p->l2 ? PEV_L2_DATA_HIT_INFLIGHT_PF2 : PEV_L1_DATA_HIT_INFLIGHT_PF1, 1, in->idx);
			if (left > waited && (t->cnt.mask & TIMING_EVENTS))
				stall(&t->cnt, left - waited, in->idx);
		}
		if (p->line == line || p->ready <= t->cycles)
			inflight_drop(t, p);
	}
}

/* One line of the current operand (vaddr in it, at pa): the caches and the VPU's per-line events. */
static inline __attribute__((always_inline)) void access_line(struct thr *t, const struct slot *in, uint64_t vaddr,
								   uint64_t pa, bool write)
{
	bool miss = memsys_data(&mem, t->core, &t->cnt, pa >> MS_LINE_SHIFT, write);

	if (t->npf)
		inflight_demand(t, in, pa >> MS_LINE_SHIFT, miss);

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

/* A line of device memory: uncacheable, a read miss by definition (327357-001 Table 1-6). */
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
 * Whether thread t knows data page vpage (page << 1 | privilege) of vaddr
 * without a look in the TLB: the slot's page memo holds it (the TLB would
 * hit it without a change, as if it were the last), or, while the thread's
 * TLBs are off, the translation cache does (RAM of the user region for a
 * Ring-3 instruction: executing). If so it becomes the thread's memo page.
 */
static inline bool page_known(struct thr *t, const struct slot *in, uint64_t vaddr, uint64_t vpage)
{
	if (in->pm_thr == t && in->pm_page == vpage && in->pm_epoch == t->tlb.epoch) {
		t->dmemo_page = vpage;
		t->dmemo_pa = in->pm_pa;
		return true;
	}
	bool hit;
	const struct xc_entry *e = t->tlb_on || verify ? NULL : xc_entry(t, vaddr, &hit);
	if (!e || !hit || (e->ppage & XC_IO) || (in->user && !is_user(vaddr)))
		return false;
	t->dmemo_page = vpage;
	t->dmemo_pa = e->ppage;
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

/*
 * Whether an access QEMU reports is one of an instruction the thread is
 * executing, the only accesses counted or simulated (the rule is in
 * plugin/plugin.c). QEMU 7.2 also reports the accesses it makes itself to
 * deliver an interrupt between two blocks (the IDT gate, the code segment's
 * descriptor, RSP0 from the TSS, the five words of the frame): a block whose
 * last instruction calls a helper and leaves the block (RET, an indirect
 * CALL or JMP, IRETQ) leaves its memory callbacks armed (QEMU's
 * cpu->plugin_mem_cbs, cleared only on the path that leaving skips), so the
 * delivery's accesses come as that instruction's, possibly blocks later.
 * Host events (pmuctl's requests, doorbells) came at host-timed points, so
 * every run of one region counted a different number of them: 3 reads and 5
 * writes per interrupt. Such an access is told by its slot: another block's
 * than the one executing, or a Ring-3 instruction's at an address outside
 * the user region (which it cannot reach: it would fault, and a faulting
 * access is not reported). The one access of another block's that is real:
 * after a device access in the middle of a block QEMU cuts the block there
 * and runs that instruction again alone, with memory callbacks only
 * (cpu_io_recompile under -icount), so its slot is a one-instruction block's
 * that never starts; delivery never touches device memory.
 */
static bool executing(const struct thr *t, qemu_plugin_meminfo_t info, const struct slot *in, uint64_t vaddr)
{
	if (in - in->idx == t->cur_slots)
		return !in->user || is_user(vaddr);
	struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);
	return hw && qemu_plugin_hwaddr_is_io(hw);
}

/*
 * The kernel's load for a task's VPREFETCH0 (kind 1) or VPREFETCH1 (2) of
 * the byte at vaddr (pmu/model/emul.c): the prefetch, counted as the task's (Ring
 * 3's counters). A VPREFETCH0 fills the L1D and the L2, a VPREFETCH1 the L2
 * only; the thread goes on, and the line arrives after the latency of where
 * it was served (a later access waits for the rest: inflight_demand). One
 * to a line in flight from the thread's own prefetch, or to device memory,
 * is dropped.
 */
static __attribute__((noinline)) void access_prefetch(struct thr *t, qemu_plugin_meminfo_t info, const struct slot *in,
						      uint64_t vaddr)
{
	struct count_state *s = &t->cnt;
	bool io, l1 = in->prefetch == 1;
	uint64_t line = xlate(t, info, vaddr, &io) >> MS_LINE_SHIFT;

	count_event_at(s, true, l1 ? PEV_L1_DATA_PF1 : PEV_L1_DATA_PF2, 1);
	if (io) {
		if (l1)
			count_event_at(s, true, PEV_L1_DATA_PF1_DROP, 1);
		return;
	}
	if (!l1)
		count_event_at(s, true, PEV_L2_DATA_PF2, 1);
	if (inflight(t, line)) {
		count_event_at(s, true, l1 ? PEV_L1_DATA_PF1_DROP : PEV_L2_DATA_PF2_DROP, 1);
		return;
	}
	/* the caches' events as the task's: its counters, no per-instruction mode (the block is the kernel's) */
	bool user = s->user;
	uint64_t mask = s->mask;
	uint8_t cur = s->cur;
	s->user = true;
	s->mask = s->counted[1];
	s->cur = 0;
	t->prefetching = true;
	t->pf_from = TM_FROM_L2;
	bool missed = l1 ? memsys_data(&mem, t->core, s, line, false) : memsys_l2_prefetch(&mem, t->core, s, line);
	t->prefetching = false;
	t->lm_key = UINT64_MAX; /* the L1D may have changed under the memo */
	if (missed) {
		bool l2_missed = !l1 || t->pf_from != TM_FROM_L2;
		if (l1)
			count_event(s, PEV_L1_DATA_PF1_MISS, 1, 0);
		if (l2_missed)
			count_event(s, l1 ? PEV_L2_DATA_PF1_MISS : PEV_L2_DATA_PF2_MISS, 1, 0);
	}
	/* in flight only where the thread's cycles run: while its counters count a timing event */
	if (missed && (s->mask & TIMING_EVENTS)) {
		if (t->npf == sizeof(t->pf) / sizeof(t->pf[0]))
			inflight_drop(t, &t->pf[0]); /* the oldest */
		t->pf[t->npf++] = (struct inflight){ line, t->cycles + tm_latency(t->pf_from) + TM_L1_LAT, !l1 };
	}
	s->user = user;
	s->mask = mask;
	s->cur = cur;
}

/* An access on_access cannot settle by the last-line memo. */
static __attribute__((noinline)) void access_slow(struct thr *t, qemu_plugin_meminfo_t info, struct slot *in,
						  uint64_t vaddr)
{
	if (!executing(t, info, in, vaddr))
		return;
	if (in->prefetch) { /* before in->info is known: every such access comes here */
		access_prefetch(t, info, in, vaddr);
		return;
	}
	if (in->info != (info | SLOT_INFO_KNOWN)) {
		in->info = info | SLOT_INFO_KNOWN;
		in->write = qemu_plugin_mem_is_store(info);
		in->bytes = 1u << qemu_plugin_mem_size_shift(info);
	}
	bool write = in->write;
	uint64_t last = vaddr + in->bytes - 1;
	uint64_t vline = vaddr >> MS_LINE_SHIFT, vpage = (vaddr >> PAGE_4K_SHIFT) << 1 | in->user;

	if (vline == last >> MS_LINE_SHIFT && (vpage == t->dmemo_page || page_known(t, in, vaddr, vpage))) {
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
void on_access(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
	struct slot *in = udata;

	if (vcpu >= counting_cpus)
		return;
	struct thr *t = &thr[vcpu];
	uint64_t end = vaddr + in->bytes;
	bool write = in->write;

	uint64_t vline = vaddr >> MS_LINE_SHIFT;

	if (in->info != (info | SLOT_INFO_KNOWN) || (end - 1) >> MS_LINE_SHIFT != vline || in - in->idx != t->cur_slots ||
	    (in->elements && (t->cnt.mask & VPU_LINE_EVENTS)) || t->npf)
		goto slow;
	if ((vline << 1 | in->user) != t->lm_key || t->lm_epoch != *t->l1d_epoch || (write && !t->lm_dirty)) {
		/* Not the memo line: a page known without the TLB, and its set's most recent line? */
		uint64_t vpage = (vaddr >> PAGE_4K_SHIFT) << 1 | in->user;
		if (vpage != t->dmemo_page && !page_known(t, in, vaddr, vpage))
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
