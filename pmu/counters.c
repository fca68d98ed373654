/*
 * The counters through the backend (docs/design.md §5): the backend in use
 * and what the driver (pmu.c) and multiplexing
 * (mux.c) both do to a counter. Below both, so neither calls back into the
 * other; per-CPU, on the CPU itself, interrupts off.
 */
#include "pmu/internal.h"
#include "kernel/percpu.h"
#include "arch/tsc.h"

const struct pmu_ops *pmu_ops = &pmu_model_ops;
const struct pmu_desc *pmu_hw = &pmu_knc_desc;

uint64_t pmu_counter_events(struct pmu_cpu *pc, int i)
{
	uint64_t c = pmu_rdmsr(pmu_ctr_msr(pmu_hw, i));

	if (pc->period[i])
		return pc->samples[i] * pc->period[i] + pc->late[i] + ((c - pmu_preload(pc, i)) & pmu_ctr_mask(pmu_hw));
	return (pc->wraps[i] << pmu_hw->width) + c;
}

void pmu_program_counter(struct pmu_cpu *pc, int i, uint32_t evtsel, uint64_t period)
{
	pc->enabled &= ~GLOBAL_CTR(i);
	pmu_ops->wrmsr(pmu_hw->global_ctrl, pmu_rdmsr(pmu_hw->global_ctrl) & ~(uint64_t)GLOBAL_CTR(i));
	pmu_ops->wrmsr(pmu_evtsel_msr(pmu_hw, i), 0);
	pmu_ops->wrmsr(pmu_hw->global_ovf_ctrl, GLOBAL_CTR(i));
	pc->evtsel[i] = evtsel;
	pc->period[i] = period;
	pc->sampling = (pc->sampling & ~GLOBAL_CTR(i)) | (period ? GLOBAL_CTR(i) : 0);
	pc->wraps[i] = pc->samples[i] = pc->late[i] = 0;
	pmu_ops->wrmsr(pmu_ctr_msr(pmu_hw, i), pmu_preload(pc, i));
	if (evtsel) {
		/* INT always: a counting counter's wraps are added up in the PMI handler. */
		pmu_ops->wrmsr(pmu_evtsel_msr(pmu_hw, i), evtsel | EVTSEL_EN | EVTSEL_INT);
		pc->enabled |= GLOBAL_CTR(i);
	}
}

void pmu_counters_go(struct pmu_cpu *pc)
{
	pc->start_tsc = model_clock();
	pmu_ops->wrmsr(pmu_hw->global_ctrl, pmu_ctrl_image(pc));
}

void pmu_fixed_setup(void)
{
	uint64_t ctrl = 0;

	if (!pmu_hw->fixed)
		return;
	for (int j = 0; j < pmu_hw->fixed; j++)
		ctrl |= FIXED_CTRL_USR(j);
	pmu_ops->wrmsr(pmu_hw->fixed_ctrl, ctrl);
	pmu_fixed_clear();
}

void pmu_fixed_clear(void)
{
	for (int j = 0; j < pmu_hw->fixed; j++)
		pmu_ops->wrmsr(pmu_fixed_msr(pmu_hw, j), 0);
	if (pmu_hw->fixed)
		pmu_ops->wrmsr(pmu_hw->global_ovf_ctrl, pmu_all_fixed(pmu_hw));
}
