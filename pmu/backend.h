/*
 * The hardware-specific part of the PMU driver: one small ops table per
 * backend (DESIGN §5.2). Every op acts on the calling CPU's own PMU.
 */
#ifndef PMU_BACKEND_H
#define PMU_BACKEND_H

#include <stdint.h>
#include <stdbool.h>

struct pmu_ops {
	const char *name;
	/* RDMSR/WRMSR of a PMU MSR (pmu/regs.h); 0 or -1 (the #GP cases). */
	int (*rdmsr)(uint32_t msr, uint64_t *v);
	int (*wrmsr)(uint32_t msr, uint64_t v);
	/* Whether the backend observes the event an EvtSel value selects. */
	bool (*counts_event)(uint32_t evtsel);
	/* Per-CPU start-up; `rejoin`: after INIT-SIPI-SIPI, keep the state. */
	void (*cpu_online)(bool rejoin);
	/* The calling CPU halts / wakes (halted cycles are not counted). */
	void (*idle_enter)(void);
	void (*idle_exit)(void);
};

extern const struct pmu_ops pmu_knc_ops;   /* pmu/knc.c: RDMSR/WRMSR */
extern const struct pmu_ops pmu_model_ops; /* pmu/model.c: software model */

#endif
