/* Settings kept per CPU, stored for the CPUs of a set (pmu/internal.h pmu_each_cpu). */
#include "pmu/pmu.h"
#include "pmu/internal.h"
#include "kernel/percpu.h"
#include "kernel/smp.h"
#include "kernel/pmm.h"
#include "lib/cpuset.h"
#include "lib/lib.h"

/* Each slot says its CPU and counter count once, here: the PMI writes neither. */
enum pmu_err pmu_need_ring(struct pmu_cpu *pc)
{
	if (pc->ring)
		return PMU_OK;
	pc->ring = page_alloc(ALIGN_UP(PMU_SAMPLE_RING * sizeof(struct pmu_sample), PAGE_SIZE) / PAGE_SIZE);
	if (!pc->ring)
		return PMU_ERR_NOMEM;
	for (int i = 0; i < PMU_SAMPLE_RING; i++)
		pc->ring[i] = (struct pmu_sample){ .cpu = pc->cpu, .ncounters = PMU_MAX_COUNTERS };
	return PMU_OK;
}

struct pmu_result pmu_each_cpu(struct pmu_result check, const struct cpuset *set,
			       enum pmu_err (*fn)(uint32_t cpu, uint64_t value), uint64_t value)
{
	struct pmu_result r = { .err = PMU_ERR_CPUSET };

	if (check.err)
		return check;
	for (uint32_t c = 0; c < CPUSET_MAX; c++)
		if (cpuset_has(set, c) && (c >= cpu_count || c >= MAX_CPUS)) {
			r.cpu = c;
			return r;
		}
	r.wanted = cpuset_count(set);
	for (uint32_t c = 0; c < cpu_count; c++)
		if (cpuset_has(set, c)) {
			enum pmu_err e = fn(c, value);
			if (e)
				return (struct pmu_result){ .err = e, .cpu = c, .done = r.done, .wanted = r.wanted };
			r.done++;
		}
	r.err = r.wanted ? PMU_OK : PMU_ERR_CPUSET;
	return r;
}
