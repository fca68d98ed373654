/* Per-CPU blocks; see kernel/percpu.h. */
#include "kernel/percpu.h"
#include "arch/x86.h"

struct percpu *cpu_table[MAX_CPUS];
uint32_t cpu_count;

void percpu_install(struct percpu *p)
{
	p->self = p;
	wrmsr(MSR_GS_BASE, (uint64_t)p);
	wrmsr(MSR_KERNEL_GS_BASE, 0);
}

const char *cpu_state_name(uint32_t state)
{
	switch (state) {
	case CPU_STARTING: return "starting";
	case CPU_ONLINE:   return "online";
	case CPU_FAULTED:  return "faulted";
	case CPU_FAILED:   return "failed";
	default:           return "absent";
	}
}
