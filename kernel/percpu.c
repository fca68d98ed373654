/* Per-CPU blocks; see kernel/percpu.h. */
#include "kernel/percpu.h"
#include "arch/x86.h"
#include "arch/irq.h"
#include "apic/apic.h"
#include "lib/lib.h"

struct percpu *cpu_table[MAX_CPUS];
uint32_t cpu_count;
struct percpu *cpu_by_apic[APIC_ID_LIMIT];

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

void smp_wake_apic(uint32_t apic)
{
	struct percpu *to = apic < ARRAY_SIZE(cpu_by_apic) ? cpu_by_apic[apic] : NULL;

	/* A CPU that runs a task needs no turn given (smp.h); an idle one does, halted yet or not. */
	if (to && to != this_cpu() && !READ_ONCE(to->task))
		this_cpu()->woke_others = true;
	apic_send_fixed(apic, VEC_WAKE);
}
