/*
 * Per-CPU data, reached through the GS base (DESIGN §3). One struct percpu
 * per hardware thread; gs:0 holds its own address so this_cpu() is one load.
 */
#ifndef KERNEL_PERCPU_H
#define KERNEL_PERCPU_H

#include <stdint.h>
#include "kernel/gdt.h"
#include "kernel/timer.h"

#define MAX_CPUS 256 /* xAPIC: 8-bit APIC IDs (DESIGN §3) */

enum cpu_state {
	CPU_ABSENT = 0,  /* not in the MADT */
	CPU_STARTING,    /* INIT-SIPI-SIPI sent, not checked in yet */
	CPU_ONLINE,      /* idle loop, taking IPIs */
	CPU_FAULTED,     /* took a kernel exception and stopped */
	CPU_FAILED,      /* never checked in after SIPI */
};

struct smp_call {
	void (*fn)(void *arg);
	void *arg;
	volatile uint32_t pending; /* set by the caller, cleared by the target when fn returned */
	uint64_t posted_tsc;
	uint32_t caller_apic;      /* gets a VEC_WAKE IPI when fn returned */
};

struct pmu_cpu;

struct percpu {
	struct percpu *self;      /* gs:0 */
	uint64_t scratch_rsp;     /* gs:8, for the SYSCALL entry */
	uint64_t kstack_top;      /* gs:16 */
	uint32_t cpu;             /* logical CPU number, 0 = BSP */
	uint32_t apic_id;
	volatile uint32_t state;  /* enum cpu_state */
	uint32_t fault_vector;    /* valid when state == CPU_FAULTED */
	uint64_t online_tsc;      /* TSC when it checked in */
	uint64_t ist_top[3];      /* NMI, double fault, machine check */
	struct tss tss;
	uint64_t gdt[GDT_ENTRIES];
	struct timer_queue timers;
	struct smp_call call;
	struct pmu_cpu *pmu;      /* pmu/internal.h; kept across INIT */
	volatile bool idle;       /* halted in idle_wait(), until the next interrupt */
	bool rejoined;            /* came back through INIT-SIPI-SIPI */
};

extern struct percpu *cpu_table[MAX_CPUS];
extern uint32_t cpu_count; /* CPUs in the MADT that we started or tried to */

static inline struct percpu *this_cpu(void)
{
	struct percpu *p;
	__asm__ volatile("movq %%gs:0, %0" : "=r"(p));
	return p;
}

/* Installs p as this CPU's per-CPU block (GS base). */
void percpu_install(struct percpu *p);

const char *cpu_state_name(uint32_t state);

#endif
