/*
 * The page the PMU model shares with the QEMU plugin (include/pmuos/pmushare.h):
 * finding it, and the model's side of it. With the page, the model's
 * counters also count the events the plugin simulates (pmu/plugin_events.h):
 * the model publishes each thread's registers after every change and takes
 * the plugin's counts into its 40-bit counters (with overflow status and
 * PMI, pmu/model/core.c) before every use of a counter.
 */
#ifndef PMU_SHARE_H
#define PMU_SHARE_H

#include <stdbool.h>
#include <stdint.h>
#include <pmuos/pmushare.h>
#include "pmu/model/core.h"
#include "kernel/stamp.h"
#include "arch/x86.h"
#include "arch/sync.h"

/*
 * Looks for the page among the ivshmem devices (a 64 KiB BAR 2 starting
 * with the plugin's header) and maps it; BSP, once, at PMU start-up.
 * Returns whether it was found.
 */
bool share_init(void);
/*
 * The model's clock (docs/design.md §5.2), ticks: with the page, the
 * calling thread's own instructions (pmushare.clock, the plugin's); else
 * the TSC. The entry and exit stamps read the same (kernel/stamp.h).
 */
static inline uint64_t model_clock(void)
{
	return stamp_clock ? *stamp_clock : rdtsc();
}
/*
 * The model's clock of another thread (APIC ID), which is not running:
 * under -icount one vCPU runs at a time (with the page, its saved clock).
 */
uint64_t model_clock_of(uint32_t apic_id);
/*
 * A timer deadline (TSC) for tick `at` of the calling thread's clock
 * (without the page: `at`, a TSC tick already). The TSC runs at least as
 * fast as the thread's own clock, so the deadline is the earliest the
 * thread can get there: the TSC plus the ticks left. QEMU 7.2's
 * round-robin under -icount runs the vCPU it picks up to the next timer
 * deadline of any vCPU (accel/tcg/tcg-accel-ops-icount.c
 * icount_prepare_for_run: the budget is icount_get_limit()), so a thread
 * that runs gets there at that deadline unless another's came first; a
 * deadline that came early finds the clock short, and its timer is armed
 * again for the rest. A later guess (the ticks left times the threads
 * that run, as a fair round-robin would need) makes a PMI late by whole
 * periods under 7.2.
 */
static inline uint64_t model_clock_deadline(uint64_t at)
{
	if (!stamp_clock)
		return at;
	uint64_t now = *stamp_clock, tsc = rdtsc();

	return at <= now ? tsc : tsc + (at - now);
}

/* The slot of the thread with this APIC ID, or NULL without the page. */
struct pmushare_thread *share_slot(uint32_t apic_id);
/* Whether the plugin counts the event an EvtSel value selects (false without the page). */
bool share_counts(uint32_t evtsel);
/* Writes the model's EvtSel, GLOBAL_CTRL and SPFLT into the slot. */
void share_publish(struct pmushare_thread *s, const struct pmu_model *m);
/*
 * Adds the plugin's counts since the last take to the model's counters.
 * Inline: every emulated access takes first (pmu/model/backend.c).
 */
static inline void share_take(struct pmushare_thread *s, struct pmu_model *m)
{
	for (int i = 0; i < PMU_MAX_COUNTERS; i++)
		if (__atomic_load_n(&s->delta[i], __ATOMIC_RELAXED))
			/* XCHG: one instruction, so no plugin count falls between the read and the write. */
			model_add(m, i, __atomic_exchange_n(&s->delta[i], 0, __ATOMIC_RELAXED));
}
/*
 * The tasks the plugin's timing model shares a core among (pmushare_thread
 * task_*): a launch assigned the thread with this APIC ID a task, on the
 * launching CPU before any starts; the calling thread's task starts; the
 * task of that thread ended (`own`: on it). Nothing without the page.
 */
void share_task_assigned(uint32_t apic_id, uint32_t launch);
void share_task_start(uint32_t apic_id);
void share_task_end(uint32_t apic_id, bool own);
/* Tells the plugin the kernel's loads that stand for VPREFETCH0 and VPREFETCH1 (pmu/model/emul.c); nothing without the page. */
void share_prefetch_loads(uint64_t vprefetch0, uint64_t vprefetch1);
/* Drops the plugin's untaken counts (warm reset). */
void share_drop(struct pmushare_thread *s);
/*
 * Ticks of the model's clock until it should look again at the counters
 * that count a plugin event and may raise a PMI soon (enabled with INT,
 * within 2^32 events of overflowing), or UINT64_MAX if none: such an
 * overflow is only noticed when the model looks (pmu/model/backend.c polls then).
 * The events left to the wrap at the rate the counter has counted since it
 * was last written (before it counts anything, the rate of the stretch
 * before that write), SHARE_POLL_EARLY/8 of it so the look comes before the
 * wrap while the rate holds, from SHARE_POLL_MIN to SHARE_POLL_TICKS: near
 * the wrap each look comes closer (a sample's PMI within about
 * SHARE_POLL_MIN ticks of the wrap when the rate is steady), far from it the
 * looks are sparse. A floor of 16 ticks was tried: chase's DATA_READ_MISS
 * sampled every 1,000 events then gave 57 samples where 8,192-tick polls
 * gave 100 (and 1,024 gives 100); why is not known.
 */
#define SHARE_POLL_TICKS 8192 /* at most this many ticks between two looks */
#define SHARE_POLL_MIN   1024 /* at least */
#define SHARE_POLL_EARLY 6    /* eighths of the estimated ticks to the wrap */
uint64_t share_poll_ticks(const struct pmushare_thread *s, const struct pmu_model *m);

#endif
