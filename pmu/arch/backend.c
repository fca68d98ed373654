/*
 * arch backend: architectural performance monitoring version 2 or later
 * through RDMSR/WRMSR (Intel SDM Vol. 3B §18.2), chosen when CPUID leaf 0AH
 * reports it (pmu/pmu.c pmu_choose): Knights Landing and any Intel core
 * that has it. The registers are the description's (pmu_hw, made from the
 * leaf by pmu_arch_describe), its fixed counters too (pmu_fixed_setup
 * programs them through this backend's WRMSR).
 */
#include "pmu/backend.h"
#include "pmu/arch/regs.h"
#include "pmu/evtsel.h"
#include "arch/x86.h"

struct pmu_desc pmu_arch_desc;

/* pmu_choose filled pmu_arch_desc from CPUID leaf 0AH before it chose this backend. */
static const struct pmu_desc *arch_init(void)
{
	return &pmu_arch_desc; /* each CPU's fixed counters: pmu_fixed_setup, at its start */
}

/* GLOBAL_STATUS is read-only (§18.2.2): its write would #GP, as KNC's does. */
static int arch_rdmsr(uint32_t msr, uint64_t *v)
{
	*v = rdmsr(msr);
	return 0;
}

static int arch_wrmsr(uint32_t msr, uint64_t v)
{
	if (msr == pmu_arch_desc.global_status)
		return -1;
	wrmsr(msr, v);
	return 0;
}

static uint64_t arch_pmi_stop(uint64_t *status)
{
	uint64_t ctrl = rdmsr(pmu_arch_desc.global_ctrl);

	wrmsr(pmu_arch_desc.global_ctrl, 0);
	*status = rdmsr(pmu_arch_desc.global_status);
	return ctrl;
}

static void arch_pmi_counters(uint64_t ctr[PMU_MAX_COUNTERS])
{
	for (int i = 0; i < pmu_arch_desc.counters; i++)
		ctr[i] = rdmsr(pmu_ctr_msr(&pmu_arch_desc, i));
}

static uint64_t arch_pmi_ack(uint64_t status, uint32_t reload, const uint64_t ctr[PMU_MAX_COUNTERS])
{
	for (int i = 0; i < pmu_arch_desc.counters; i++)
		if (reload & GLOBAL_CTR(i))
			wrmsr(pmu_ctr_msr(&pmu_arch_desc, i), ctr[i]);
	wrmsr(pmu_arch_desc.global_ovf_ctrl, status);
	return rdmsr(pmu_arch_desc.global_status);
}

static void arch_pmi_restart(uint64_t ctrl)
{
	wrmsr(pmu_arch_desc.global_ctrl, ctrl);
}


const struct pmu_ops pmu_arch_ops = {
	.name = "arch",
	.init = arch_init,
	.rdmsr = arch_rdmsr,
	.wrmsr = arch_wrmsr,
	.counts_event = pmu_hw_counts_event,
	.cpu_online = pmu_hw_cpu_online,
	.to_user = pmu_hw_nothing,
	.from_user = pmu_hw_from_user,
	.pmi_stop = arch_pmi_stop,
	.pmi_counters = arch_pmi_counters,
	.pmi_ack = arch_pmi_ack,
	.pmi_restart = arch_pmi_restart,
	.idle_enter = pmu_hw_nothing,
	.idle_exit = pmu_hw_nothing,
};
