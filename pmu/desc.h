/*
 * A core PMU described as data (docs/design.md §5.1), as Linux describes one
 * in arch/x86/events (struct x86_pmu: MSR bases, counter count and width,
 * constraints): the generic driver computes a register's MSR from a base and
 * a counter index and never names a backend's MSR. Pure data and inline
 * helpers: the kernel, the model, the host tool and the tests share it.
 */
#ifndef PMU_DESC_H
#define PMU_DESC_H

#include <stdint.h>
#include <stdbool.h>

/*
 * The general-purpose counters the driver uses: every PMU it describes has
 * at least these (KNC exactly 2, 327357-001 §1.4.3; architectural perfmon 2
 * or more), and the PMI path takes their number as a constant.
 */
#define PMU_MAX_COUNTERS 2
#define PMU_ALL_COUNTERS ((1u << PMU_MAX_COUNTERS) - 1) /* their global-register bits */
/*
 * Fixed-function counters the driver runs, of those a PMU has: the three
 * architectural ones (Intel SDM Vol. 3B §18.2.2: instructions retired,
 * unhalted core cycles, unhalted reference cycles). KNC has none.
 */
#define PMU_MAX_FIXED 3

struct pmu_desc {
	const char *name;           /* the PMU, for `pmu info` and `pmuctl info` */
	const char *pfm;            /* libpfm4's name of its PMU, whose event names pmuctl takes: "knc", "knl", "ix86arch" */
	uint8_t counters;           /* general-purpose counters the driver uses: PMU_MAX_COUNTERS */
	uint8_t width;              /* bits of each counter; a read zero-extends */
	uint64_t ctr_mask;          /* derived: 2^width - 1, for the PMI path's one load */
	/*
	 * A counter write's bits: false, all `width` (KNC, 327357-001 §1.4.3.2: #GP
	 * beyond them); true, bits 31:0 sign-extended (architectural IA32_PMCx
	 * without full-width writes, Intel SDM Vol. 3B §18.2.1), so a period is
	 * below 2^31.
	 */
	bool ctr_write_sext32;
	uint8_t version;            /* architectural perfmon version (CPUID 0AH:EAX[7:0]); 0: not architectural */
	/*
	 * Fixed-function counters the driver runs (at most PMU_MAX_FIXED of
	 * those the PMU has; 0: none), their width, IA32_FIXED_CTR0 (counter
	 * j's MSR is + j) and IA32_FIXED_CTR_CTRL; GLOBAL_CTRL, STATUS and
	 * OVF_CTRL bit 32 + j is counter j's (GLOBAL_FIXED).
	 */
	uint8_t fixed, fixed_width;
	uint32_t fixed_ctr0, fixed_ctrl;
	const char *fixed_event[PMU_MAX_FIXED]; /* fixed counter j's event, by its SDM name */
	uint32_t evtsel_reserved;   /* EvtSel bits 31:0 a write must leave 0 (bits 63:32 always) */
	uint64_t max_period;        /* the longest sampling period, in events */
	uint32_t evtsel0, ctr0;     /* MSRs of EvtSel 0 and counter 0; counter i's are these + i */
	uint32_t global_ctrl;       /* GLOBAL_CTRL: bit i enables counter i */
	uint32_t global_status;     /* GLOBAL_STATUS (read-only): bit i, counter i overflowed */
	uint32_t global_ovf_ctrl;   /* GLOBAL_OVF_CTRL (write-only): bit i clears status bit i */
	uint32_t spflt_ctrl;        /* PERF_SPFLT_CONTROL, or 0: the PMU has no SPFLT */
	uint32_t ev_instructions;   /* EvtSel code (umask << 8 | event) of instructions executed */
	uint32_t ev_cycles;         /* and of unhalted core cycles */
	/* Bit i: counter i can count the event of this code (umask << 8 | event). */
	uint32_t (*counters_for)(uint32_t code);
};

/*
 * What one register of a PMU is, pmu_desc_reg's answer: one number, so that
 * an access by role passes one argument as an access by MSR did.
 */
enum pmu_reg {
	PMU_REG_NONE,          /* not one of the PMU's */
	PMU_REG_GLOBAL_CTRL,
	PMU_REG_GLOBAL_STATUS,
	PMU_REG_GLOBAL_OVF_CTRL,
	PMU_REG_SPFLT_CTRL,
	PMU_REG_CTR0,                                   /* counter i: PMU_REG_CTR(i) */
	PMU_REG_EVTSEL0 = PMU_REG_CTR0 + PMU_MAX_COUNTERS, /* EvtSel i: PMU_REG_EVTSEL(i) */
	PMU_REG_FIXED_CTRL = PMU_REG_EVTSEL0 + PMU_MAX_COUNTERS,
	PMU_REG_FIXED0,                                 /* fixed counter j: PMU_REG_FIXED(j) */
	PMU_REG_END = PMU_REG_FIXED0 + PMU_MAX_FIXED,
};
#define PMU_REG_CTR(i)    (PMU_REG_CTR0 + (unsigned)(i))
#define PMU_REG_EVTSEL(i) (PMU_REG_EVTSEL0 + (unsigned)(i))
#define PMU_REG_FIXED(j)  (PMU_REG_FIXED0 + (unsigned)(j))
/* The counter or EvtSel index of register r, when it is one: r - PMU_REG_CTR0 < PMU_MAX_COUNTERS, and so on. */
#define PMU_REG_IS_CTR(r)    ((unsigned)(r) - PMU_REG_CTR0 < PMU_MAX_COUNTERS)
#define PMU_REG_IS_EVTSEL(r) ((unsigned)(r) - PMU_REG_EVTSEL0 < PMU_MAX_COUNTERS)
#define PMU_REG_IS_FIXED(r)  ((unsigned)(r) - PMU_REG_FIXED0 < PMU_MAX_FIXED)

static inline uint32_t pmu_ctr_msr(const struct pmu_desc *d, int i) { return d->ctr0 + (uint32_t)i; }
static inline uint32_t pmu_evtsel_msr(const struct pmu_desc *d, int i) { return d->evtsel0 + (uint32_t)i; }
/* The counters' value mask: 2^width - 1. */
static inline uint64_t pmu_ctr_mask(const struct pmu_desc *d) { return d->ctr_mask; }
/* The GLOBAL_CTRL / STATUS / OVF_CTRL bits of all the counters the driver uses. */
static inline uint32_t pmu_all_counters(const struct pmu_desc *d) { (void)d; return PMU_ALL_COUNTERS; }
/* Those of its fixed counters: bit 32 + j for fixed counter j (0 when it has none). */
static inline uint64_t pmu_all_fixed(const struct pmu_desc *d) { return ((1ULL << d->fixed) - 1) << 32; }
static inline uint32_t pmu_fixed_msr(const struct pmu_desc *d, int j) { return d->fixed_ctr0 + (uint32_t)j; }
/* The fixed counters' value mask: 2^fixed_width - 1. */
static inline uint64_t pmu_fixed_mask(const struct pmu_desc *d) { return (1ULL << d->fixed_width) - 1; }

/* MSR `msr` of PMU `d`: which register it is (PMU_REG_NONE: not the PMU's). */
static inline unsigned pmu_desc_reg(const struct pmu_desc *d, uint32_t msr)
{
	if (msr - d->ctr0 < d->counters)
		return PMU_REG_CTR(msr - d->ctr0);
	if (msr - d->evtsel0 < d->counters)
		return PMU_REG_EVTSEL(msr - d->evtsel0);
	if (msr == d->global_ctrl)
		return PMU_REG_GLOBAL_CTRL;
	if (msr == d->global_status)
		return PMU_REG_GLOBAL_STATUS;
	if (msr == d->global_ovf_ctrl)
		return PMU_REG_GLOBAL_OVF_CTRL;
	if (d->spflt_ctrl && msr == d->spflt_ctrl)
		return PMU_REG_SPFLT_CTRL;
	if (d->fixed && msr - d->fixed_ctr0 < d->fixed)
		return PMU_REG_FIXED(msr - d->fixed_ctr0);
	if (d->fixed && msr == d->fixed_ctrl)
		return PMU_REG_FIXED_CTRL;
	return PMU_REG_NONE;
}

/* Whether counter i of PMU `d` can count the event of `code` (umask << 8 | event). */
static inline bool pmu_counter_can(const struct pmu_desc *d, int i, uint32_t code)
{
	return (d->counters_for(code) >> i) & 1;
}

#endif
