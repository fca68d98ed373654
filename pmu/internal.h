/* State shared by the PMU driver's files (pmu.c, pmi.c, model.c). */
#ifndef PMU_INTERNAL_H
#define PMU_INTERNAL_H

#include <stdint.h>
#include <stdbool.h>
#include <pmuos/sample.h>
#include "pmu/backend.h"
#include "pmu/model.h"
#include "pmu/pmu.h"
#include "kernel/timer.h"

/* Per hardware thread. Survives INIT: only a warm reset (reboot) clears it. */
struct pmu_cpu {
	/* driver configuration */
	uint32_t evtsel[2];     /* configured EvtSel without EN/INT; 0 = unused */
	uint64_t period[2];     /* events per sample; 0 = counting only */
	uint64_t wraps[2];      /* overflows of a counting counter (2^40 each) */
	uint64_t samples[2];    /* overflows of a sampling counter */
	uint32_t enabled;       /* GLOBAL_CTRL bits while running */
	bool running;

	/* PMI handler (pmi.c) */
	uint64_t pmis, stuck, throttles;
	uint64_t window_start, window_pmis; /* throttle window, TSC ticks */
	uint32_t throttled;     /* GLOBAL_CTRL bits held back by the throttle */
	uint64_t last_report;   /* TSC of the last throttle message */
	struct timer unthrottle;

	/* sample ring: PMU_SAMPLE_RING entries, newest at head - 1 */
	struct pmu_sample *ring;
	uint32_t ring_head, ring_count;
	uint64_t lost;

	/*
	 * Arguments and results of driver operations posted to this CPU: they
	 * live here, not on the caller's stack, so an operation that runs late
	 * (the CPU was slow or hung) writes only its own state.
	 */
	struct { int ctr; uint32_t evtsel; uint64_t period; } cfg;
	struct pmu_reading reading;
	struct pmu_regs regs;

	/* model backend (model.c) */
	struct pmu_model model;
	struct timer ovf_timer;
	bool user_entry;        /* between to_user and from_user: Ring 3 is provisional */
	uint8_t slack_shift;    /* a Ring-3 deadline's slack is USER_ENTRY_SLACK << this (model.c) */
	volatile uint64_t init_sent_tsc; /* written by the CPU that sends INIT */
};

extern const struct pmu_ops *pmu_ops;

/* The calling CPU's PMU state. */
struct pmu_cpu *pmu_this(void);

/* emul.c: RDPMC/SPFLT emulation on the model */
void pmu_emul_init(void);

/* pmi.c */
void pmi_init(void);
/* Lifts the throttle: runs from the unthrottle timer, or when counters restart. */
void pmi_unthrottle(struct pmu_cpu *pc);

#endif
