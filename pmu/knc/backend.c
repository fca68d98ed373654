/*
 * knc backend: the real core PMU through RDMSR/WRMSR (327357-001 §1.4.3), chosen
 * when CPUID reports family 0x0B (k1om). Halted cycles are the hardware's
 * business, and INIT leaves the registers as they were (327357-001 §1.4.4).
 */
#include "pmu/backend.h"
#include "pmu/knc/regs.h"
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

static uint64_t knc_pmi_stop(uint64_t *status)
{
	uint64_t ctrl = rdmsr(MSR_KNC_GLOBAL_CTRL);

	wrmsr(MSR_KNC_GLOBAL_CTRL, 0);
	*status = rdmsr(MSR_KNC_GLOBAL_STATUS);
	return ctrl;
}

static void knc_pmi_counters(uint64_t ctr[PMU_MAX_COUNTERS])
{
	ctr[0] = rdmsr(MSR_KNC_PERFCTR0);
	ctr[1] = rdmsr(MSR_KNC_PERFCTR1);
}

static uint64_t knc_pmi_ack(uint64_t status, uint32_t reload, const uint64_t ctr[PMU_MAX_COUNTERS])
{
	if (reload & 1)
		wrmsr(MSR_KNC_PERFCTR0, ctr[0]);
	if (reload & 2)
		wrmsr(MSR_KNC_PERFCTR1, ctr[1]);
	wrmsr(MSR_KNC_GLOBAL_OVF_CTRL, status);
	return rdmsr(MSR_KNC_GLOBAL_STATUS);
}

static void knc_pmi_restart(uint64_t ctrl)
{
	wrmsr(MSR_KNC_GLOBAL_CTRL, ctrl);
}

static const struct pmu_desc *knc_init(void) { return &pmu_knc_desc; }

const struct pmu_ops pmu_knc_ops = {
	.name = "knc",
	.init = knc_init,
	.rdmsr = knc_rdmsr,
	.wrmsr = knc_wrmsr,
	.counts_event = pmu_hw_counts_event,
	.cpu_online = pmu_hw_cpu_online,
	.to_user = pmu_hw_nothing,
	.from_user = pmu_hw_from_user,
	.pmi_stop = knc_pmi_stop,
	.pmi_counters = knc_pmi_counters,
	.pmi_ack = knc_pmi_ack,
	.pmi_restart = knc_pmi_restart,
	.idle_enter = pmu_hw_nothing,
	.idle_exit = pmu_hw_nothing,
};
