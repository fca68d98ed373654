/* The KNC core PMU as data (pmu/desc.h): Intel 327357-001 §1.4.3. */
#include "pmu/knc/regs.h"

/* Counters 0 and 1, an L2 event counter 0 only (docs/design.md §5.1). */
static uint32_t knc_counters_for(uint32_t code)
{
	return knc_event_counter0_only(code) ? 1u : 3u;
}

const struct pmu_desc pmu_knc_desc = {
	.name = "KNC core PMU",
	.pfm = "knc",
	.counters = KNC_NUM_COUNTERS,
	.width = KNC_CTR_BITS,
	.ctr_mask = KNC_CTR_MASK,
	.evtsel_reserved = EVTSEL_RESERVED,        /* bit 19 (Table 1-5) */
	.max_period = 1ULL << KNC_CTR_BITS,         /* 2^40 events to a wrap (§1.4.3.2) */
	.evtsel0 = MSR_KNC_EVNTSEL0,
	.ctr0 = MSR_KNC_PERFCTR0,
	.global_ctrl = MSR_KNC_GLOBAL_CTRL,
	.global_status = MSR_KNC_GLOBAL_STATUS,
	.global_ovf_ctrl = MSR_KNC_GLOBAL_OVF_CTRL,
	.spflt_ctrl = MSR_KNC_SPFLT_CTRL,
	.ev_instructions = KNC_EV_INSTRUCTIONS_EXECUTED,
	.ev_cycles = KNC_EV_CPU_CLK_UNHALTED,
	.counters_for = knc_counters_for,
};
