/* Architectural perfmon as data (pmu/desc.h) from CPUID leaf 0AH: Intel SDM Vol. 3B §18.2. */
#include "pmu/arch/regs.h"
#include "pmu/evtsel.h"

/* Every event on every counter: no constraint is architectural (§18.2.1). */
static uint32_t arch_counters_for(uint32_t code)
{
	(void)code;
	return (1u << PMU_MAX_COUNTERS) - 1;
}

bool pmu_arch_describe(struct pmu_desc *d, uint32_t eax, uint32_t edx)
{
	uint32_t version = CPUID_0A_VERSION(eax), n = CPUID_0A_COUNTERS(eax), width = CPUID_0A_WIDTH(eax);

	uint32_t fixed = CPUID_0A_FIXED(edx), fixed_width = CPUID_0A_FIXED_WIDTH(edx);

	if (version < 2 || n < PMU_MAX_COUNTERS || width < 32 || width > 63)
		return false;
	if (fixed_width < 32 || fixed_width > 63)
		fixed = 0;
	*d = (struct pmu_desc){
		.name = "Intel architectural perfmon",
		.pfm = "ix86arch", /* libpfm4's architectural events; a known core's table is the caller's to name */
		.counters = PMU_MAX_COUNTERS, /* the first ones of n */
		.width = width,
		.ctr_mask = (1ULL << width) - 1,
		.ctr_write_sext32 = true, /* IA32_PMCx: bits 31:0, sign-extended (§18.2.1) */
		.version = version,
		.fixed = fixed < PMU_MAX_FIXED ? fixed : PMU_MAX_FIXED,
		.fixed_width = fixed ? fixed_width : 0,
		.fixed_ctr0 = fixed ? MSR_ARCH_FIXED_CTR0 : 0,
		.fixed_ctrl = fixed ? MSR_ARCH_FIXED_CTR_CTRL : 0,
		/* §18.2.2: the fixed-function counters' architectural events, by counter */
		.fixed_event = { "INST_RETIRED.ANY", "CPU_CLK_UNHALTED.THREAD", "CPU_CLK_UNHALTED.REF_TSC" },
		.max_period = (1ULL << 31) - 1,
		.evtsel0 = MSR_ARCH_PERFEVTSEL0,
		.ctr0 = MSR_ARCH_PMC0,
		.global_ctrl = MSR_ARCH_PERF_GLOBAL_CTRL,
		.global_status = MSR_ARCH_PERF_GLOBAL_STATUS,
		.global_ovf_ctrl = MSR_ARCH_PERF_GLOBAL_OVF_CTRL,
		.ev_instructions = ARCH_EV_INSTRUCTIONS_RETIRED,
		.ev_cycles = ARCH_EV_UNHALTED_CORE_CYCLES,
		.counters_for = arch_counters_for,
	};
	return true;
}
