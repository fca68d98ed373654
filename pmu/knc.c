/*
 * knc backend: the real core PMU through RDMSR/WRMSR (327357-001 §1.4.3), chosen
 * when CPUID reports family 0x0B (k1om). Halted cycles are the hardware's
 * business, and INIT leaves the registers as they were (327357-001 §1.4.4).
 */
#include "pmu/backend.h"
#include "pmu/regs.h"
#include "arch/x86.h"

static int knc_rdmsr(uint32_t msr, uint64_t *v)
{
	if (msr == MSR_KNC_GLOBAL_OVF_CTRL)
		return -1;
	*v = rdmsr(msr);
	return 0;
}

static int knc_wrmsr(uint32_t msr, uint64_t v)
{
	if (msr == MSR_KNC_GLOBAL_STATUS)
		return -1;
	wrmsr(msr, v);
	return 0;
}

static bool knc_counts_event(uint32_t evtsel) { return true; }
static void knc_nothing(void) {}
static void knc_cpu_online(bool rejoin) {}
static void knc_from_user(uint64_t first_kernel, uint64_t first_user) {}

const struct pmu_ops pmu_knc_ops = {
	.name = "knc",
	.rdmsr = knc_rdmsr,
	.wrmsr = knc_wrmsr,
	.counts_event = knc_counts_event,
	.cpu_online = knc_cpu_online,
	.to_user = knc_nothing,
	.from_user = knc_from_user,
	.pmi_begin = knc_nothing,
	.pmi_end = knc_nothing,
	.idle_enter = knc_nothing,
	.idle_exit = knc_nothing,
};
