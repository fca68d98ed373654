/*
 * The hardware-specific part of the PMU driver: one small ops table per
 * backend (docs/design.md §5.2). Every op acts on the calling CPU's own PMU.
 */
#ifndef PMU_BACKEND_H
#define PMU_BACKEND_H

#include <stdint.h>
#include <stdbool.h>
#include "pmu/desc.h"

struct pmu_ops {
	const char *name;
	/*
	 * Once, on the boot CPU at pmu_init, before any other op: the
	 * backend's own set-up, and the PMU it drives or models (its MSRs,
	 * counters, width), which the driver reads as pmu_hw from then on.
	 */
	const struct pmu_desc *(*init)(void);
	/* RDMSR/WRMSR of one of desc's MSRs; 0 or -1 (the #GP cases). */
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
	 * The PMI handler's register accesses (pmu/pmi.c, 327357-001 §1.4.3.9),
	 * each a fixed sequence in one call, not a call per access (9 accesses
	 * in 4 calls per sampling PMI). From pmi_stop to pmi_restart a
	 * backend may defer what it does after each access (the model: the PMI
	 * line and its overflow timer, once at pmi_restart).
	 *   pmi_stop: reads GLOBAL_CTRL (returned), writes 0 to it and reads
	 *     GLOBAL_STATUS into *status;
	 *   pmi_counters: reads counters 0 .. desc->counters - 1 into ctr[];
	 *   pmi_ack: writes ctr[i] to counter i for each bit i of `reload`
	 *     (a sampling counter's next period), then `status` to
	 *     GLOBAL_OVF_CTRL; returns GLOBAL_STATUS read again;
	 *   pmi_restart: writes `ctrl` to GLOBAL_CTRL.
	 * The registers are the PMU's own: none of these accesses can #GP.
	 */
	uint64_t (*pmi_stop)(uint64_t *status);
	void (*pmi_counters)(uint64_t ctr[PMU_MAX_COUNTERS]);
	uint64_t (*pmi_ack)(uint64_t status, uint32_t reload, const uint64_t ctr[PMU_MAX_COUNTERS]);
	void (*pmi_restart)(uint64_t ctrl);
	/* The calling CPU halts / wakes (halted cycles are not counted). */
	void (*idle_enter)(void);
	void (*idle_exit)(void);
};

/*
 * The ops a backend on real PMU hardware leaves to it (knc, arch): every
 * event is the hardware's to count, the CPU keeps its state across INIT,
 * and privilege changes and halts are the hardware's business.
 */
static inline bool pmu_hw_counts_event(uint32_t evtsel) { (void)evtsel; return true; }
static inline void pmu_hw_cpu_online(bool rejoin) { (void)rejoin; }
static inline void pmu_hw_nothing(void) {}
static inline void pmu_hw_from_user(uint64_t first_kernel, uint64_t first_user) { (void)first_kernel, (void)first_user; }

extern const struct pmu_ops pmu_knc_ops;   /* pmu/knc/backend.c: RDMSR/WRMSR */
extern const struct pmu_ops pmu_arch_ops;  /* pmu/arch/backend.c: RDMSR/WRMSR */
extern const struct pmu_ops pmu_model_ops; /* pmu/model/backend.c: software model */

#endif
