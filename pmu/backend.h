/*
 * The hardware-specific part of the PMU driver: one small ops table per
 * backend (docs/design.md §5.2). Every op acts on the calling CPU's own PMU.
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
	/*
	 * Ring 3 <-> 0 on the calling CPU. to_user: the kernel is about to enter
	 * Ring 3. from_user: it came back; Ring 3 ran from tick first_user up to
	 * tick first_kernel (exact stamps from the entry and exit paths).
	 */
	void (*to_user)(void);
	void (*from_user)(uint64_t first_kernel, uint64_t first_user);
	/*
	 * Around the PMI handler's register accesses (pmu/pmi.c): between them
	 * a backend may defer what it does after each access (the model: the
	 * PMI line and its overflow timer, once at pmi_end).
	 */
	void (*pmi_begin)(void);
	void (*pmi_end)(void);
	/* The calling CPU halts / wakes (halted cycles are not counted). */
	void (*idle_enter)(void);
	void (*idle_exit)(void);
};

extern const struct pmu_ops pmu_knc_ops;   /* pmu/knc.c: RDMSR/WRMSR */
extern const struct pmu_ops pmu_model_ops; /* pmu/model.c: software model */

#endif
