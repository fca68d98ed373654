/*
 * `pmu bench`: what one counter overflow costs the interrupted thread, in
 * guest instructions (TSC ticks under QEMU -icount shift=0 with the other
 * CPUs halted). A loop of 10^6 instructions is timed with the RDTSC around
 * it, without an overflow and with exactly one, for a counting counter and
 * for a sampling one; the difference is the overflow's cost. For the model
 * backend the cost includes its overflow timer interrupt, measured alone
 * with LVT 0x340 masked (the line rises but no PMI is delivered) and
 * subtracted to give the PMI path from vector entry to IRET. Figures, not
 * verdicts: bench/ prints them.
 */
#include "pmu/bench.h"
#include "pmu/pmu.h"
#include "pmu/internal.h"
#include "apic/apic.h"
#include "kernel/console.h"
#include "arch/irq.h"
#include "kernel/percpu.h"
#include "arch/x86.h"
#include "pmu/calib.h"

/* Events into the loop at which the counter overflows; a sampling counter
 * reloaded with it overflows again only after the loop. */
#define WRAP_AT 600000

enum run { NO_OVERFLOW, COUNTING, SAMPLING };

/* TSC ticks of one loop run with counter 0 configured as `run` says. */
static uint64_t loop_ticks(enum run run, bool lvt_masked)
{
	struct cpuset me = { 0 };

	cpuset_add(&me, this_cpu()->cpu);
	pmu_configure(&me, 0, pmu_hw->ev_instructions | EVTSEL_OS,
		      run == SAMPLING ? WRAP_AT : 0);
	if (run == COUNTING)
		pmu_ops->wrmsr(pmu_ctr_msr(pmu_hw, 0), pmu_ctr_mask(pmu_hw) + 1 - WRAP_AT);
	if (lvt_masked)
		apic_lvt_pc_set(VEC_PMI, true);
	pmu_start(&me);
	uint64_t t0 = rdtsc();
	pmu_calib_1m();
	uint64_t t1 = rdtsc();
	pmu_stop(&me);
	pmu_ops->wrmsr(pmu_hw->global_ovf_ctrl, pmu_all_counters(pmu_hw));
	apic_lvt_pc_set(VEC_PMI, false);
	pmu_configure(&me, 0, 0, 0);
	return t1 - t0;
}

static uint64_t median3(enum run run, bool lvt_masked)
{
	uint64_t a = loop_ticks(run, lvt_masked), b = loop_ticks(run, lvt_masked);
	uint64_t c = loop_ticks(run, lvt_masked);

	if (a > b) { uint64_t t = a; a = b; b = t; }
	if (b > c) b = c;
	return a > b ? a : b;
}

int pmu_bench(void)
{
	uint32_t limit = pmu_pmi_limit();

	if (!pmu_counts_exact())
		kprintf("pmu bench: note: TSC ticks are not instructions on this backend/configuration\n");
	pmu_set_pmi_limit(PMU_PMI_LIMIT_MAX);
	uint64_t base = median3(NO_OVERFLOW, false);
	uint64_t counting = median3(COUNTING, false) - base;
	uint64_t sampling = median3(SAMPLING, false) - base;
	uint64_t timer = pmu_ops == &pmu_model_ops ? median3(COUNTING, true) - base : 0;
	pmu_set_pmi_limit(limit);

	kprintf("pmu bench: CPU %u, backend %s, medians of 3 runs of a 10^6-instruction loop\n",
		this_cpu()->cpu, pmu_backend_name());
	kprintf("loop without overflow: %lu ticks\n", base);
	kprintf("counting overflow: %lu instructions in all, model overflow timer %lu, PMI path (vector entry to iret) %lu\n",
		counting, timer, counting - timer);
	kprintf("sampling overflow: %lu instructions in all, model overflow timer %lu, PMI path (vector entry to iret) %lu\n",
		sampling, timer, sampling - timer);
	return 0;
}
