/*
 * The PMU's rules, checked once for every front end (shell, mailbox, the
 * self-test): which EvtSel values, counters, periods, multiplexing lists,
 * time slices and SPFLT masks the driver takes, where events go on the two
 * counters, and the one text for each verdict. Pure: the card's driver
 * (pmu/pmu.c) checks through these; host tests link them as they are.
 * Front ends turn a verdict into text (pmu_result_text) or a status code
 * with the verdict along (the mailbox, whose host prints the same text),
 * and check nothing themselves.
 */
#ifndef PMU_RULES_H
#define PMU_RULES_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include "pmu/desc.h"
#include "pmu/evtsel.h"
#include <pmuos/mailbox.h> /* MBOX_MUX_MAX: events that can take turns on the 2 counters */

/* A multiplexing time slice is 1 ms .. 1 s of counting time, as perf's interval (ms, >= 1). */
#define PMU_SLICE_MIN_PER_S 1000                /* shortest slice: 1/1000 s */

enum pmu_err {
	PMU_OK = 0,
	PMU_ERR_EVENT,      /* EvtSel sets EN, INT or reserved bit 19 (327357-001 Table 1-5): value = EvtSel */
	PMU_ERR_COUNTER,    /* no such counter (0 or 1): value = the counter */
	PMU_ERR_L2_COUNTER, /* an L2 event on counter 1 (docs/design.md §5.1): value = EvtSel */
	PMU_ERR_PERIOD,     /* period outside 1..2^40 events, or a period without an event: value = period */
	PMU_ERR_TOO_MANY,   /* multiplexing takes 1..MBOX_MUX_MAX events: value = how many */
	PMU_ERR_SLICE,      /* time slice outside 1 ms .. 1 s: value = TSC ticks */
	PMU_ERR_SPFLT,      /* SPFLT mask names a counter beyond 0 and 1 (327357-001 §1.4.3.4): value = mask */
	PMU_ERR_SPFLT_MUX,  /* SPFLT would gate counters whose events take turns: cpu = a CPU that multiplexes */
	PMU_ERR_CPUSET,     /* empty CPU set, or a CPU the card does not have: cpu */
	PMU_ERR_OFFLINE,    /* a CPU of the set is not online (nothing was done): cpu */
	PMU_ERR_BUSY,       /* a CPU did not answer (the others did it): cpu */
	PMU_ERR_NOMEM,      /* no memory for a CPU's sample ring (nothing was done): cpu */
	PMU_ERR_FRAMES,     /* a call chain of more than PMU_CALLCHAIN_MAX frames: value = frames */
	PMU_ERR_GROUP,      /* a group of more events than counters, or one past the list's end: value = the pairs' mask */
	PMU_ERR_GROUP_L2,   /* a group of two L2 events, both counter 0 only (docs/design.md §5.1): value = the first's index */
	PMU_ERR_CPU_CLOCK,  /* a cpu-clock period outside PMU_CPU_CLOCK_MIN_NS..PMU_CPU_CLOCK_MAX_NS (not 0): value = ns */
	PMU_ERR_COUNT       /* number of verdicts */
};

/*
 * A verdict: err, and the value or CPU it names; for operations on a CPU
 * set, `done` of the `wanted` CPUs did it.
 */
struct pmu_result {
	enum pmu_err err;
	uint32_t cpu;
	uint32_t done, wanted; /* CPUs */
	uint64_t value;
};

/* EvtSel (without EN/INT) a counter can take: PMU_OK or PMU_ERR_EVENT. 327357-001 Table 1-5. */
enum pmu_err pmu_check_evtsel(uint32_t evtsel);
/*
 * Counter `ctr` of PMU `d` counting `evtsel` (0: free the counter), sampling
 * every `period` events if period > 0 (1 .. 2^d->width): PMU_OK, PMU_ERR_COUNTER, PMU_ERR_EVENT,
 * PMU_ERR_L2_COUNTER or PMU_ERR_PERIOD (the verdict names the value).
 */
struct pmu_result pmu_check_config(const struct pmu_desc *d, uint64_t ctr, uint32_t evtsel, uint64_t period);
/*
 * `nev` events taking turns with slices of `slice_ticks` TSC ticks, at
 * `tsc_hz` ticks per second, bit i of `paired` putting events i and i+1 on
 * the counters together (a perf group): PMU_OK, PMU_ERR_TOO_MANY,
 * PMU_ERR_EVENT, PMU_ERR_GROUP (three in a row, or a bit at nev - 1 or
 * above), PMU_ERR_GROUP_L2 or PMU_ERR_SLICE. evtsel[] is read only when nev
 * is in range.
 */
struct pmu_result pmu_check_mux(const struct pmu_desc *d, uint32_t nev, const uint32_t *evtsel, uint32_t paired,
				uint64_t slice_ticks, uint64_t tsc_hz);
/* Frames of a sample's call chain: 0..PMU_CALLCHAIN_MAX (include/pmuos/sample.h). PMU_OK or PMU_ERR_FRAMES. */
struct pmu_result pmu_check_callchain(uint32_t frames);
/*
 * A cpu-clock period (pmu/cpu_clock.c): 0 (off) or PMU_CPU_CLOCK_MIN_NS ..
 * PMU_CPU_CLOCK_MAX_NS of card time, perf's -F 100000 .. 1. PMU_OK or PMU_ERR_CPU_CLOCK.
 */
#define PMU_CPU_CLOCK_MIN_NS 10000ULL
#define PMU_CPU_CLOCK_MAX_NS 1000000000ULL
struct pmu_result pmu_check_cpu_clock(uint64_t ns);
/*
 * PERF_SPFLT_CONTROL enable mask: bit i gates counter i of `d` (327357-001
 * §1.4.3.4). PMU_OK or PMU_ERR_SPFLT (also for a PMU without SPFLT, a mask not 0).
 */
struct pmu_result pmu_check_spflt(const struct pmu_desc *d, uint64_t mask);

/*
 * Event placement on PMU `d`'s first two counters, decided here only: the
 * events of the slice that starts with event `first` of evtsel[0..nev):
 * on[0], on[1] (-1: none); returns how many. An event counter 1 cannot
 * count (KNC's L2 events) goes on counter 0, so two such events cannot
 * share a slice (docs/design.md §5.1). A pair (bit i of `paired`, as
 * pmu_check_mux allows) shares every slice and no other event joins it;
 * the next slice starts past the events placed, so a slice never starts
 * inside a pair.
 */
uint32_t pmu_place(const struct pmu_desc *d, uint32_t nev, const uint32_t *evtsel, uint32_t paired, uint32_t first,
		   int on[PMU_MAX_COUNTERS]);
/* Whether two events can be on the counters at once: not both L2 events, counter 0 only (docs/design.md §5.1). */
bool pmu_pair_fits(const struct pmu_desc *d, uint32_t a, uint32_t b);
/* Whether the events need more than one slice to all get a counter (they take turns). */
bool pmu_mux_rotates(const struct pmu_desc *d, uint32_t nev, const uint32_t *evtsel, uint32_t paired);

/*
 * `n` units of 1/per_second s (1000: ms, 1000000: us) in TSC ticks at
 * tsc_hz: the one conversion from a front end's time unit to the PMU's.
 * Exact to the tick below; n up to 2^32.
 */
uint64_t pmu_time_to_ticks(uint64_t n, uint64_t per_second, uint64_t tsc_hz);

/*
 * The text for a verdict of PMU `d`, naming what was wrong and its limits
 * (counters, longest period, bit 19's name: pmu/events.c); "" for PMU_OK.
 */
void pmu_result_text(const struct pmu_desc *d, const struct pmu_result *r, char *buf, size_t len);

#endif
