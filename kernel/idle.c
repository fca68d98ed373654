/* Idle halting with PMU accounting; see kernel/idle.h. */
#include "kernel/idle.h"
#include "kernel/percpu.h"
#include "kernel/x86.h"
#include "pmu/pmu.h"

void idle_wait(void)
{
	this_cpu()->idle = true;
	pmu_idle_enter();
	sti_hlt();
}

void idle_woken(void)
{
	struct percpu *p = this_cpu();

	if (p->idle) {
		p->idle = false;
		pmu_idle_exit();
	}
}
