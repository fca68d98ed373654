/*
 * KNC core PMU service (docs/design.md §5): configure both counters on any CPU set,
 * start and stop them together, read them, sample by overflow. Counter
 * values here are 64-bit totals of events: the driver adds up the 40-bit
 * hardware counter's wraps (327357-001 §1.4.3.2).
 */
#ifndef PMU_PMU_H
#define PMU_PMU_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <pmuos/sample.h>
#include "lib/cpuset.h"
#include "pmu/rules.h"

#define PMU_SAMPLE_RING   4096      /* samples per CPU */
/*
 * PMIs per second per thread before throttling. The limit is for runaway
 * rates (a period of a few events); one thread sampled at 100,000/s, the rate
 * the sample drain is built for, must pass with room for PMIs that come
 * closer together than their average (the limit applies per 1 ms window).
 */
#define PMU_PMI_LIMIT_DEFAULT 125000
#define PMU_PMI_LIMIT_MAX     10000000
#define PMU_MUX_SLICE_MS_DEFAULT 4     /* perf's default multiplexing interval */

/*
 * BSP, before the APs start: picks the backend (knc on a KNC card's core,
 * else model; the command line's pmuos.pmu=model|knc overrides) and says why.
 */
void pmu_init(void);
/* Allocates CPU `cpu`'s PMU state, on the BSP before the AP starts (kernel/cpu_hooks.h). */
void pmu_cpu_prepare(uint32_t cpu);
/* Every CPU, from its start-up path: LVT 0x340 and the backend. `rejoin`: after INIT. */
void pmu_cpu_online(bool rejoin);
/* Records that `cpu` is about to get an INIT (the model stops counting it there). */
void pmu_cpu_init_sent(uint32_t cpu);
/* Prints the calling CPU's PMU registers after `what` (e.g. after INIT). */
void pmu_report_state(const char *what);
/* BSP, after SMP start-up: measures whether counts are exact (model) and says so. */
void pmu_calibrate(void);

const char *pmu_backend_name(void);
/* The PMU in use, described (pmu/desc.h): counters, width, MSRs, constraints. Set at pmu_init. */
const struct pmu_desc *pmu_description(void);
/* The model's counts are exact (one TSC tick per instruction, QEMU -icount shift=0). */
bool pmu_counts_exact(void);
/*
 * Whether each thread's counts are its own whatever other threads run: the
 * hardware's counters (knc), or the model counting by the QEMU plugin's
 * per-thread clock (pmu/model/share.h). False for the model on the TSC, which
 * every CPU advances under -icount (docs/design.md §5.2).
 */
bool pmu_counts_own_thread(void);
bool pmu_counts_event(uint32_t evtsel);
/* Whether the QEMU plugin's events count: its page was found and the PMU is KNC's, whose codes they have (pmu/model/share.h). */
bool pmu_plugin_present(void);

/*
 * Operations on a CPU set. Each checks its arguments and the set itself
 * (pmu/rules.h) and returns the verdict with the CPUs done and wanted:
 * PMU_ERR_CPUSET for an empty set or a CPU the card does not have, and
 * PMU_ERR_OFFLINE naming a CPU of the set that is not online, before
 * anything is done; PMU_ERR_BUSY naming a CPU that did not answer (a hung
 * one is skipped at once) after the others did it.
 */

/*
 * Configures counter `ctr` (0/1) on every CPU of `set` to count `evtsel`
 * (EvtSel without EN/INT, from pmu_event_parse; 0 frees the counter) and,
 * with period > 0, to sample every `period` events (1 .. 2^40). Stops and
 * clears that counter. Also PMU_ERR_COUNTER, _EVENT, _L2_COUNTER, _PERIOD,
 * _NOMEM.
 */
struct pmu_result pmu_configure(const struct cpuset *set, uint64_t ctr, uint32_t evtsel, uint64_t period);
/*
 * PERF_SPFLT_CONTROL on `set` (327357-001 §1.4.3.4): bit i of mask lets SPFLT gate
 * counter i; USER_PREF starts at 0. Also PMU_ERR_SPFLT (a bit beyond
 * counter 1) and PMU_ERR_SPFLT_MUX (a CPU's events take turns: gating
 * would stop some of them for good).
 */
struct pmu_result pmu_set_spflt(const struct cpuset *set, uint64_t mask);
/*
 * Multiplexing, as perf does it: the `nev` (1..MBOX_MUX_MAX) counting events
 * `evtsel` (EvtSel without EN/INT, from pmu_event_parse) take turns on the
 * two counters of every CPU in `set`, the next one or two every
 * `slice_ticks` TSC ticks (1 ms .. 1 s) of counting time (a timer on the
 * CPU itself, so each CPU slices its own time). Where they go is
 * pmu_place's: an L2 event only ever on counter 0 (docs/design.md §5.1), the
 * two events of a pair (bit i of `paired`: events i and i+1, perf's group)
 * always together; events that all fit never move, so this is also the
 * request that counts events without naming counters. Replaces both
 * counters' configuration; stops them; counts start at 0. Readings give
 * each event's count and its time on a counter, to scale by. Also
 * PMU_ERR_TOO_MANY, _EVENT, _GROUP, _GROUP_L2, _SLICE.
 */
struct pmu_result pmu_mux_configure(const struct cpuset *set, uint32_t nev, const uint32_t *evtsel,
				    uint32_t paired, uint64_t slice_ticks);
/* Start / stop the configured counters of every CPU in `set` at once; clear: counts and samples to 0. */
struct pmu_result pmu_start(const struct cpuset *set);
struct pmu_result pmu_stop(const struct cpuset *set);
struct pmu_result pmu_clear(const struct cpuset *set);

/*
 * A CPU's counts. Entry i is counter i (nev = 2), or with multiplexing the
 * i-th event of the list (nev = its length). Times are TSC ticks since the
 * last clear: `enabled` the counters were started, `running_ticks[i]`
 * entry i was on a counter (equal to `enabled` without multiplexing).
 */
struct pmu_reading {
	uint32_t nev;
	bool mux;
	uint32_t evtsel[MBOX_MUX_MAX];  /* configured event, 0 = counter unused */
	uint64_t period[MBOX_MUX_MAX];
	uint64_t value[MBOX_MUX_MAX];   /* events (64-bit total) */
	uint64_t samples[MBOX_MUX_MAX]; /* overflows that recorded a sample */
	uint64_t running_ticks[MBOX_MUX_MAX];
	uint64_t enabled_ticks;
	bool running;
	bool shared;          /* the counts include other threads' (struct pmu_cpu others_at_clear) */
	uint64_t pmis, throttles, stuck;
	uint64_t overwritten; /* samples of the card's own view ring (PMU_SAMPLE_RING) written over: the host's losses are the mailbox ring's */
};
/* Reads `cpu`'s counters through an IPI: PMU_OK, PMU_ERR_CPUSET, _OFFLINE or _BUSY. */
enum pmu_err pmu_read(uint32_t cpu, struct pmu_reading *r);

struct pmu_regs {
	uint64_t tsc, ctr[PMU_MAX_COUNTERS], evtsel[PMU_MAX_COUNTERS], spflt, status, global_ctrl;
	uint32_t lvt_pc;
};
/* Raw registers of `cpu` (327357-001 §1.4.3): PMU_OK, PMU_ERR_CPUSET, _OFFLINE or _BUSY. */
enum pmu_err pmu_read_regs(uint32_t cpu, struct pmu_regs *r);

/*
 * Hands every sample to fn as the PMI records it (the mailbox's rings, which
 * the host drains without a request), in the PMI, interrupts off; set once
 * at init. Until then samples stay in the PMU's own ring alone. `chain`
 * holds the sample's s->nframes return addresses (include/pmuos/sample.h).
 */
void pmu_set_sample_sink(void (*fn)(const struct pmu_sample *s, const uint64_t *chain));

/*
 * Call chains (pmu/callchain.c): the samples of every CPU of `set` carry up
 * to `frames` (0..PMU_CALLCHAIN_MAX; 0: none) return addresses of the
 * interrupted task's frame-pointer chain. PMU_ERR_FRAMES for more frames,
 * PMU_ERR_CPUSET for an empty set or a CPU the card does not have.
 */
struct pmu_result pmu_set_callchain(const struct cpuset *set, uint32_t frames);
/*
 * Time-based sampling (pmu/cpu_clock.c, perf's cpu-clock): each CPU of
 * `set` takes a sample every `ns` ns of card time (TSC) while a task runs
 * on it and its counters run, from the first `ns` after the task starts;
 * 0: off. PMU_ERR_CPU_CLOCK outside PMU_CPU_CLOCK_MIN_NS..MAX_NS,
 * PMU_ERR_CPUSET for an empty set or a CPU the card does not have.
 */
struct pmu_result pmu_set_cpu_clock(const struct cpuset *set, uint64_t ns);
struct trap_frame;
/*
 * In the PMI: the return addresses of the frames above `f` (the task's for
 * a Ring-3 sample, the kernel's on the same stack for a Ring-0 one) into
 * ips[0..PMU_CALLCHAIN_MAX), as many as the CPU's setting asks and the
 * checks allow (pmu/callchain.c); returns how many.
 */
size_t pmu_callchain(const struct trap_frame *f, uint64_t *ips);
/* The chain of `cpu`'s newest sample into ips[0..PMU_CALLCHAIN_MAX); how many (0 for none or no such CPU). */
size_t pmu_last_callchain(uint32_t cpu, uint64_t *ips);
/*
 * Copies up to `max` of `cpu`'s newest samples, oldest first; returns how
 * many. *overwritten: the samples its ring (PMU_SAMPLE_RING) wrote over since the last clear.
 */
size_t pmu_samples(uint32_t cpu, struct pmu_sample *out, size_t max, uint64_t *overwritten);

/* PMI rate limit per thread, PMIs per second (1 .. 10,000,000). */
void pmu_set_pmi_limit(uint32_t per_second);
uint32_t pmu_pmi_limit(void);

/*
 * Counts INSTRUCTIONS_EXECUTED:k over one call of `region` on the calling
 * CPU with counter 0, interrupts off; restores the registers. Events.
 */
uint64_t pmu_count_region(void (*region)(void));

/*
 * Privilege changes of the calling CPU (kernel/task.c, kernel/trap.c):
 * user_enter just before the IRETQ to Ring 3; user_exit first thing after
 * an entry from Ring 3, with the TSC of the first kernel instruction and of
 * the first Ring-3 instruction after the previous exit.
 */
void pmu_user_enter(void);
void pmu_user_exit(uint64_t first_kernel, uint64_t first_user);

/*
 * The calling CPU halts / woke up (kernel idle paths). Multiplexing's slices
 * and enabled time pause while the CPU is halted (pmu/mux.c).
 */
void pmu_idle_enter(void);
void pmu_idle_exit(void);

/*
 * Whether the calling CPU is inside a SPFLT region: a counter gated by
 * PERF_SPFLT_CONTROL and USER_PREF set by the task's SPFLT (327357-001
 * §1.4.3.4). pmu/spflt.c.
 */
bool pmu_region_open(void);
/*
 * fn(open) runs on a CPU whose emulated SPFLT (pmu/model/emul.c: QEMU, where
 * SPFLT traps) just opened or closed a region, interrupts off. A KNC core
 * runs SPFLT itself and tells nobody: pmu_region_open is all there is.
 * At boot; at most two functions (false: no room, fn is not told).
 */
bool pmu_on_region(void (*fn)(bool open));

#endif
