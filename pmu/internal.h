/*
 * State shared by the PMU driver's files (counters.c, pmu.c, mux.c, pmi.c,
 * model/backend.c, model/emul.c, selftest.c, bench.c), and what each offers the others:
 * counters.c is below pmu.c and mux.c, which pmu.c drives.
 */
#ifndef PMU_INTERNAL_H
#define PMU_INTERNAL_H

#include <stdint.h>
#include <stdbool.h>
#include <pmuos/pmushare.h>
#include <pmuos/sample.h>
#include "pmu/backend.h"
#include "pmu/model/core.h"
#include "pmu/model/share.h"
#include "pmu/pmu.h"
#include "kernel/timer.h"
#include "kernel/percpu.h" /* MAX_CPUS */
#include "kernel/percpu.h"

/*
 * Multiplexing state (mux.c). Counts and times of ended slices; the current
 * slice's are on the counters and in slice_ran + the time since start_tsc.
 */
struct trap_frame;

struct pmu_mux {
	uint32_t nev;                  /* 0: off */
	uint32_t evtsel[MBOX_MUX_MAX];
	uint32_t paired;               /* bit i: events i and i+1 share every slice (pmu_place) */
	uint64_t value[MBOX_MUX_MAX];   /* events */
	uint64_t running[MBOX_MUX_MAX]; /* TSC ticks on a counter */
	int on[PMU_MAX_COUNTERS];      /* event on counter i this slice; -1: none */
	uint32_t next;                 /* first event of the next slice */
	uint64_t slice_ticks, slice_ran;
	struct timer timer;
};

/* Per hardware thread. Survives INIT: only a warm reset (reboot) clears it. */
struct pmu_cpu {
	uint32_t cpu;           /* whose: the CPU number, set at allocation */
	/* driver configuration */
	uint32_t evtsel[PMU_MAX_COUNTERS]; /* configured EvtSel without EN/INT; 0 = unused */
	uint64_t period[PMU_MAX_COUNTERS]; /* events per sample; 0 = counting only */
	uint32_t sampling;      /* GLOBAL_CTRL bits of the counters whose period is not 0 */
	uint64_t wraps[PMU_MAX_COUNTERS];   /* overflows of a counting counter (2^width each) */
	uint64_t samples[PMU_MAX_COUNTERS]; /* overflows of a sampling counter */
	uint64_t late[PMU_MAX_COUNTERS];    /* a sampling counter's events past a whole period at its PMI (pmi.c reload) */
	uint32_t enabled;       /* GLOBAL_CTRL bits while running */
	bool running;
	uint64_t start_tsc;     /* counters last started (or a slice began), in the model's clock (pmu/model/share.h) */
	uint64_t enabled_ticks; /* counting time since the last clear, up to start_tsc (multiplexed: unhalted only) */
	/*
	 * Whether the counts since the last clear include other threads' (a
	 * clock all CPUs advance, pmu_counts_own_thread false): tasks of other
	 * CPUs were held at the clear, or others started since (pmu.c
	 * task_starts less this CPU's own_starts moved from starts_mark).
	 */
	bool others_at_clear;
	uint64_t own_starts, starts_mark;
	struct pmu_mux mux;

	/* PMI handler (pmi.c) */
	uint64_t pmis, stuck, throttles;
	uint64_t window_start, window_pmis; /* throttle window, TSC ticks */
	uint32_t throttled;     /* GLOBAL_CTRL bits held back by the throttle */
	uint64_t last_report;   /* TSC of the last throttle message */
	struct timer unthrottle;

	/*
	 * sample ring: PMU_SAMPLE_RING entries, the newest at (ring_written - 1)
	 * % PMU_SAMPLE_RING; it holds MIN(ring_written, PMU_SAMPLE_RING), the rest
	 * were written over (not the host's losses: the mailbox ring counts those).
	 * One count for the PMI to keep: the rest is worked out when read.
	 */
	struct pmu_sample *ring;
	uint64_t ring_written;  /* samples since the last clear */

	/*
	 * Arguments and results of driver operations posted to this CPU: they
	 * live here, not on the caller's stack, so an operation that runs late
	 * (the CPU was slow or hung) writes only its own state.
	 */
	struct pmu_cfg { int ctr; uint32_t evtsel; uint64_t period; uint64_t spflt; } cfg; /* spflt: cpu_spflt's mask */
	struct pmu_mux_cfg { uint32_t nev, paired; uint32_t evtsel[MBOX_MUX_MAX]; uint64_t slice_ticks; } mux_cfg;
	struct pmu_reading reading;
	struct pmu_regs regs;

	/* model backend (model/backend.c) */
	struct pmu_model model;
	struct timer ovf_timer;
	uint64_t ovf_at;        /* the overflow timer's deadline in the model's clock (model/backend.c ovf_arm) */
	bool user_entry;        /* between to_user and from_user: Ring 3 is provisional */
	bool in_pmi;            /* from pmi_stop to pmi_restart: sync once, at the end */
	bool delivering;        /* sync_at runs the PMI handler on the task's frame, and syncs after it */
	uint64_t user_armed_by; /* from_user armed the overflow timer for a to_user up to this tick (model/backend.c) */
	uint8_t slack_shift;    /* a Ring-3 deadline's slack is USER_ENTRY_SLACK << this (model/backend.c) */
	volatile uint64_t init_sent_tsc; /* written by the CPU that sends INIT: the model's clock of this CPU */
	struct pmushare_thread *share; /* this thread's slot of the plugin's page, or NULL (pmu/model/share.h) */
	uint8_t plugin_sel;     /* with `share`, bit i: EvtSel i enables an event of the plugin's */
};

/* callchain.c: frames each CPU's samples carry (0: none), which pmi.c looks at before it calls pmu_callchain. */
extern volatile uint8_t pmu_chain_frames[MAX_CPUS];

/* counters.c: the backend in use (pmu.c chooses it at pmu_init), and the PMU it drives (pmu_ops->desc). */
extern const struct pmu_ops *pmu_ops;
extern const struct pmu_desc *pmu_hw;

/* The calling CPU's PMU state. Inline: the PMI handler and the model's ops start with it. */
static inline struct pmu_cpu *pmu_this(void)
{
	return this_cpu()->pmu;
}

/* spflt.c: whether PERF_SPFLT_CONTROL value `spflt` makes a region; model/emul.c tells the hook of a change. */
bool pmu_spflt_open(uint64_t spflt);
void pmu_region_note(bool was_open, bool open);

/* A backend register's value (0 if the backend has none). */
static inline uint64_t pmu_rdmsr(uint32_t msr)
{
	uint64_t v = 0;
	pmu_ops->rdmsr(msr, &v);
	return v;
}

/* Counter i's start value: a sampling counter overflows after `period` events, a counting one from 0. */
static inline uint64_t pmu_preload(const struct pmu_cpu *pc, int i)
{
	return pc->period[i] ? pmu_ctr_mask(pmu_hw) + 1 - pc->period[i] : 0;
}

/* counters.c, for pmu.c and mux.c: counter i's events (64-bit total); (re)programs counter i, stopped and at 0. */
uint64_t pmu_counter_events(struct pmu_cpu *pc, int i);
void pmu_program_counter(struct pmu_cpu *pc, int i, uint32_t evtsel, uint64_t period);
/*
 * GLOBAL_CTRL while the CPU's counters run: the enabled general-purpose
 * counters the throttle does not hold back and, while any is enabled, the
 * PMU's fixed counters (pmu_fixed_setup), which so count over the same
 * stretches as the counters beside them.
 */
static inline uint64_t pmu_ctrl_image(const struct pmu_cpu *pc)
{
	return (pc->enabled & ~pc->throttled) | (pc->enabled ? pmu_all_fixed(pmu_hw) : 0);
}
/* counters.c, for pmu.c and mux.c: GLOBAL_CTRL = pmu_ctrl_image, and start_tsc. */
void pmu_counters_go(struct pmu_cpu *pc);
/*
 * counters.c, at each CPU's start: the PMU's fixed counters (none on KNC)
 * count in Ring 3, without a PMI, from 0, and run while the counters do
 * (pmu_ctrl_image): instructions retired, core and reference cycles, which
 * a task reads with RDPMC (named regions, user/regions.c).
 */
void pmu_fixed_setup(void);
/* counters.c: the fixed counters back to 0 (a clear), stopped. */
void pmu_fixed_clear(void);

/* mux.c, on the CPU itself with interrupts off */
void mux_setup(struct pmu_cpu *pc);          /* from mux_cfg; the counters are stopped */
void mux_off(struct pmu_cpu *pc);
void mux_started(struct pmu_cpu *pc);        /* counters just started: arm the slice timer */
void mux_stopped(struct pmu_cpu *pc, uint64_t now); /* counters just stopped at `now` */
void mux_clear(struct pmu_cpu *pc);
void mux_read(struct pmu_cpu *pc, struct pmu_reading *r, uint64_t live);

/*
 * model/backend.c and model/emul.c: take the plugin's counts before reading a counter
 * (pmu/model/share.h), only while an enabled EvtSel selects an event of the
 * plugin's: the take comes first in every emulated access (a write takes
 * in any case, so what the plugin counted before it belongs before it).
 */
static inline void model_share_take(struct pmu_cpu *pc)
{
	if (pc->share && pc->plugin_sel)
		share_take(pc->share, &pc->model);
}
/* model/backend.c, for model/emul.c: publish the registers the plugin reads after a change of them. */
void model_share_publish(struct pmu_cpu *pc);
/* model/backend.c: a thread's Ring-3 deadline slack is USER_ENTRY_SLACK << 0 up to this. */
#define USER_ENTRY_SLACK 512    /* ticks */
#define USER_SLACK_SHIFT_MAX 11 /* 2^20 ticks, about 1 ms */

/*
 * from_user's bookkeeping before the stretch is accounted (model/backend.c, and
 * model/emul.c's fast path): the Ring-3 slack (see model/backend.c). Inline and without
 * calls: the fast path is one function.
 */
static inline void model_slack_update(struct pmu_cpu *pc, uint64_t first_kernel, uint64_t first_user)
{
	if (first_kernel > first_user)
		pc->slack_shift = 0;
	else if (first_kernel + ((uint64_t)USER_ENTRY_SLACK << pc->slack_shift) >= pc->ovf_at &&
		 pc->slack_shift < USER_SLACK_SHIFT_MAX)
		/*
		 * Not if the overflow timer came more than a slack early: with
		 * the plugin's clock it comes early while other threads run
		 * (pmu/model/share.h model_clock_deadline), and one taken before the
		 * task's first instruction then is no sign of a deadline inside
		 * the kernel's path. (A tick only a little early, as the APIC's
		 * one-shot rounding gives, is such a sign.)
		 */
		pc->slack_shift++;
	pc->user_entry = false;
}

/*
 * pmu/model/backend.c, for model/emul.c's fast path when model_user_insn
 * declines or the plugin counts: from_user (a PMI for a counter that
 * wrapped in the task's stretch delivered on `user`), an RDPMC (ecx >= 0,
 * as model_rdpmc takes it: the counter into *v) or SPFLT (ecx -1, its
 * operand) and to_user, step by step.
 */
void model_emulate_steps(struct pmu_cpu *pc, struct trap_frame *user, uint64_t first_kernel, uint64_t first_user,
			 int ecx, uint64_t operand, uint64_t *v);
/* pmu/model/backend.c: sync_at, lazy (after a privilege change or a halt). */
void model_sync_lazy(struct pmu_cpu *pc);
/*
 * Whether to_user's lazy sync has anything to do: a PMI is due, a counter
 * counting at CPL 3 can wrap, or a plugin event counts (model/backend.c sync_at
 * leaves the timer as it is otherwise).
 */
static inline bool model_sync_needed(const struct pmu_cpu *pc)
{
	return pc->model.rose || (pc->model.active & pc->model.plain) || pc->plugin_sel;
}

/* model/emul.c: RDPMC/SPFLT emulation on the model, set up at pmu_init after the backend's init (nothing for another backend) */
void pmu_emul_init(void);

/*
 * A setting kept per CPU, not a cross-CPU call (pmu/cpu_settings.c): the
 * rules' verdict `check` if it refuses, else fn(cpu, value) for each CPU of
 * `set`, up to the first that returns an error (that error, with the CPU
 * and how many were done). PMU_ERR_CPUSET (nothing done) for an empty set or
 * one naming a CPU the card does not have.
 */
struct pmu_result pmu_each_cpu(struct pmu_result check, const struct cpuset *set,
			       enum pmu_err (*fn)(uint32_t cpu, uint64_t value), uint64_t value);
/* A CPU that samples has its sample ring (PMU_SAMPLE_RING entries): PMU_OK, or PMU_ERR_NOMEM. On any CPU. */
enum pmu_err pmu_need_ring(struct pmu_cpu *pc);

/* pmi.c */
void pmi_init(void);
/*
 * A time sample (pmu/cpu_clock.c) of the code interrupted at `f`: the
 * counters stopped, a sample with overflow mask 0 and both counters'
 * values (and the call chain the CPU's setting asks), the counters
 * restarted. Nothing if the counters are not running.
 */
void pmi_time_sample(struct pmu_cpu *pc, struct trap_frame *f);
/* cpu_clock.c: a task starts on the calling CPU (pmu.c's task_start hook). */
void cpu_clock_task_start(void);
/* Lifts the throttle: runs from the unthrottle timer, or when counters restart. */
void pmi_unthrottle(struct pmu_cpu *pc);

#endif
