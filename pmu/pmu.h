/*
 * KNC core PMU service (DESIGN §5): configure both counters on any CPU set,
 * start and stop them together, read them, sample by overflow. Counter
 * values here are 64-bit totals of events: the driver adds up the 40-bit
 * hardware counter's wraps (000 §1.4.3.2).
 */
#ifndef PMU_PMU_H
#define PMU_PMU_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <pmuos/sample.h>
#include "lib/cpuset.h"

#define PMU_SAMPLE_RING   4096      /* samples per CPU */
/*
 * PMIs per second per thread before throttling. The limit is for runaway
 * rates (a period of a few events); one thread sampled at 100,000/s, the rate
 * the sample drain is built for, must pass with room for PMIs that come
 * closer together than their average (the limit applies per 1 ms window).
 */
#define PMU_PMI_LIMIT_DEFAULT 125000
#define PMU_PMI_LIMIT_MAX     10000000
#define PMU_MAX_PERIOD    (1ULL << 40) /* a period is 1 .. 2^40 events */
#define PMU_MUX_MAX       8            /* events that can take turns on the 2 counters */
#define PMU_MUX_SLICE_MS_DEFAULT 4     /* perf's default multiplexing interval */

/* BSP, before the APs start: picks the backend (knc on family 0x0B, else model). */
void pmu_init(void);
/* Every CPU, from its start-up path: LVT 0x340 and the backend. `rejoin`: after INIT. */
void pmu_cpu_online(bool rejoin);
/* Records that `cpu` is about to get an INIT (the model stops counting it there). */
void pmu_cpu_init_sent(uint32_t cpu);
/* Prints the calling CPU's PMU registers after `what` (e.g. after INIT). */
void pmu_report_state(const char *what);
/* BSP, after SMP start-up: measures whether counts are exact (model) and says so. */
void pmu_calibrate(void);

const char *pmu_backend_name(void);
/* The model's counts are exact (one TSC tick per instruction, QEMU -icount shift=0). */
bool pmu_counts_exact(void);
bool pmu_counts_event(uint32_t evtsel);
/* Whether the QEMU plugin's page was found: its events count (pmu/share.h). */
bool pmu_plugin_present(void);

/*
 * Configures counter `ctr` (0/1) on every CPU of `set` to count `evtsel`
 * (EvtSel without EN/INT, from knc_event_parse) and, with period > 0, to
 * sample every `period` events. Stops and clears that counter. Returns the
 * number of CPUs that did it; CPUs that are not online are skipped and
 * named in err.
 */
int pmu_configure(const struct cpuset *set, int ctr, uint32_t evtsel, uint64_t period,
		  char *err, size_t errlen);
/* Removes counter `ctr`'s configuration on `set`. */
int pmu_unconfigure(const struct cpuset *set, int ctr);
/*
 * PERF_SPFLT_CONTROL on `set` (000 §1.4.3.4): bit i of mask lets SPFLT gate
 * counter i; USER_PREF starts at 0. Returns the number of CPUs done.
 */
int pmu_set_spflt(const struct cpuset *set, uint32_t mask);
/*
 * Multiplexing, as perf does it: the `nev` (1..PMU_MUX_MAX) counting events
 * `evtsel` (EvtSel without EN/INT, from knc_event_parse) take turns on the
 * two counters of every CPU in `set`, the next one or two every
 * `slice_ticks` TSC ticks of counting time (a timer on the CPU itself, so
 * each CPU slices its own time). An L2 event only ever goes on counter 0
 * (DESIGN §5.1). Replaces both counters' configuration; stops them; counts
 * start at 0. Readings give each event's count and its time on a counter,
 * to scale by. Returns the number of CPUs that did it.
 */
int pmu_mux_configure(const struct cpuset *set, uint32_t nev, const uint32_t *evtsel, uint64_t slice_ticks);
/* Start / stop the configured counters of every CPU in `set` at once; clear: counts and samples to 0. */
int pmu_start(const struct cpuset *set);
int pmu_stop(const struct cpuset *set);
int pmu_clear(const struct cpuset *set);

/*
 * A CPU's counts. Entry i is counter i (nev = 2), or with multiplexing the
 * i-th event of the list (nev = its length). Times are TSC ticks since the
 * last clear: `enabled` the counters were started, `running_ticks[i]`
 * entry i was on a counter (equal to `enabled` without multiplexing).
 */
struct pmu_reading {
	uint32_t nev;
	bool mux;
	uint32_t evtsel[PMU_MUX_MAX];  /* configured event, 0 = counter unused */
	uint64_t period[PMU_MUX_MAX];
	uint64_t value[PMU_MUX_MAX];   /* events (64-bit total) */
	uint64_t samples[PMU_MUX_MAX]; /* overflows that recorded a sample */
	uint64_t running_ticks[PMU_MUX_MAX];
	uint64_t enabled_ticks;
	bool running;
	uint64_t pmis, throttles, stuck, lost;
};
/* Reads `cpu`'s counters through an IPI; -1 if it is not online or does not answer. */
int pmu_read(uint32_t cpu, struct pmu_reading *r);

struct pmu_regs {
	uint64_t tsc, ctr[2], evtsel[2], spflt, status, global_ctrl;
	uint32_t lvt_pc;
};
/* Raw registers of `cpu` (000 §1.4.3); -1 if it is not online or does not answer. */
int pmu_read_regs(uint32_t cpu, struct pmu_regs *r);

/*
 * Hands every sample to fn as the PMI records it (the mailbox's rings, which
 * the host drains without a request), in the PMI, interrupts off; set once
 * at init. Until then samples stay in the PMU's own ring alone.
 */
void pmu_set_sample_sink(void (*fn)(const struct pmu_sample *s));
/* Copies up to `max` of `cpu`'s newest samples, oldest first; returns how many. */
size_t pmu_samples(uint32_t cpu, struct pmu_sample *out, size_t max, uint64_t *lost);

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

/* The calling CPU halts / woke up (kernel idle paths). */
void pmu_idle_enter(void);
void pmu_idle_exit(void);

#endif
