/*
 * Time-based sampling, perf's cpu-clock: "interrupt the processor at a
 * regular sampling interval to collect event counts" (Intel 327357-001
 * §1.3.1.2). A CPU's samples come from a timer of its own on the local APIC
 * timer's queue (kernel/timer.h), every `period` TSC ticks of card time
 * from the first period after its task starts: so under `-icount shift=0`
 * they fall on the same instructions in every run. Each carries the
 * interrupted IP, its call chain and both counters' values (overflow mask
 * 0: no counter overflowed for it, include/pmuos/sample.h), whatever the
 * counters count. No task, no samples: the timer stops at the first tick
 * after its task's end and an idle CPU is not woken.
 */
#include "pmu/pmu.h"
#include "pmu/internal.h"
#include "pmu/rules.h"
#include "kernel/percpu.h"
#include "kernel/smp.h"
#include "kernel/timer.h"
#include "arch/tsc.h"
#include "lib/cpuset.h"

static volatile uint64_t period[MAX_CPUS]; /* TSC ticks between samples; 0: off */
static struct timer timers[MAX_CPUS];

static void tick(struct timer *t)
{
	struct percpu *p = this_cpu();
	uint64_t every = period[p->cpu], next = t->deadline + every, now = rdtsc();

	if (!p->task || !every)
		return;
	if (next <= now) /* came late by a period or more (a long interrupts-off stretch): the missed are not made up */
		next = now + every;
	timer_arm(t, next, tick, NULL);
	if (p->pmu)
		pmi_time_sample(p->pmu, p->timer_frame);
}

void cpu_clock_task_start(void)
{
	uint32_t cpu = this_cpu()->cpu;
	uint64_t every = period[cpu];

	if (every)
		timer_arm(&timers[cpu], rdtsc() + every, tick, NULL);
}

/*
 * The CPU's next task takes it up; a running one keeps its own till then.
 * Time samples go to the CPU's ring too: one without a sampling counter has
 * none yet.
 */
static enum pmu_err set_period(uint32_t cpu, uint64_t ticks)
{
	struct pmu_cpu *pc = cpu_table[cpu]->pmu;
	enum pmu_err e = ticks && pc ? pmu_need_ring(pc) : PMU_OK;

	if (e == PMU_OK)
		period[cpu] = ticks;
	return e;
}

struct pmu_result pmu_set_cpu_clock(const struct cpuset *set, uint64_t ns)
{
	/* ns <= 10^9 and tsc_hz < 2^40: the product fits in 64 bits */
	return pmu_each_cpu(pmu_check_cpu_clock(ns), set, set_period, ns ? (ns * tsc_hz + 999999999) / 1000000000 : 0);
}
