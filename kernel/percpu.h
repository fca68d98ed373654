/*
 * Per-CPU data, reached through the GS base (docs/design.md §3). One struct percpu
 * per hardware thread; gs:0 holds its own address so this_cpu() is one load.
 */
#ifndef KERNEL_PERCPU_H
#define KERNEL_PERCPU_H

/* Offsets used by the assembly entry paths (kernel/isr.S, kernel/user.S). */
#define PCPU_SCRATCH_RSP 8
#define PCPU_TSTACK_TOP  16
#define PCPU_ENTRY_TSC   24
#define PCPU_SCRATCH0    32
#define PCPU_SCRATCH1    40
#define PCPU_EXIT_TSC    48

#ifndef __ASSEMBLER__
#include <stdint.h>
#include "kernel/gdt.h"
#include "kernel/timer.h"
#include "arch/sync.h"

#define MAX_CPUS 256 /* CPUs, not IDs: a KNC card has at most 244 threads (APIC IDs: APIC_ID_LIMIT) */

enum cpu_state {
	CPU_ABSENT = 0,  /* not in the MADT */
	CPU_STARTING,    /* INIT-SIPI-SIPI sent, not checked in yet */
	CPU_ONLINE,      /* idle loop, taking IPIs */
	CPU_FAULTED,     /* took a kernel exception, or kernel_stop, and stopped */
	CPU_FAILED,      /* never checked in after SIPI */
};

struct smp_call {
	void (*fn)(void *arg);
	void *arg;
	volatile uint32_t pending; /* set by the caller, cleared by the target when fn returned */
	uint64_t posted_tsc;
	uint32_t caller_apic;      /* gets a VEC_WAKE IPI when fn returned, if wake */
	bool wake;                 /* the caller waits (smp_call_wait) for fn to return */
};

struct pmu_cpu;

struct task;


struct percpu {
	struct percpu *self;      /* gs:0 */
	uint64_t scratch_rsp;     /* gs:8: the user RSP at SYSCALL entry */
	uint64_t tstack_top;      /* gs:16: kernel stack for entries from Ring 3 */
	uint64_t entry_tsc;       /* gs:24: clock (kernel/stamp.h) at the last entry from Ring 3 */
	uint64_t scratch[2];      /* gs:32, gs:40: the entry paths' spill slots */
	uint64_t exit_tsc;        /* gs:48: clock of the first Ring-3 instruction after the last exit */
	uint64_t kstack_top;      /* the CPU's own kernel stack (idle loop, scheduler) */
	uint32_t cpu;             /* logical CPU number, 0 = BSP */
	uint32_t apic_id;
	volatile uint32_t state;  /* enum cpu_state */
	const char *stop_why;     /* valid when state == CPU_FAULTED: the exception's name, or kernel_stop's reason */
	uint64_t online_tsc;      /* TSC when it checked in */
	uint64_t ist_top[3];      /* NMI, double fault, machine check */
	struct tss tss;
	uint64_t gdt[GDT_ENTRIES];
	struct timer_queue timers;
	struct trap_frame *timer_frame; /* while timer functions run: the frame the timer interrupt saved */
	struct smp_call call;
	struct pmu_cpu *pmu;      /* pmu/internal.h; kept across INIT */
	volatile bool idle;       /* halted in idle_wait(), until the next interrupt */
	bool woke_others;         /* woke a CPU without a task since the last smp_yield_to_woken */
	bool rejoined;            /* came back through INIT-SIPI-SIPI */
	bool user_work;           /* call task_host.user_work before the next return to Ring 3 */
	struct task *task;        /* running in Ring 3 on this CPU, or NULL */
	struct task *runq;        /* tasks waiting for this CPU, FIFO */
	struct spinlock runq_lock;
	uint64_t sched_ctx[8];    /* kernel/user.S: where a leaving task returns to */
};

_Static_assert(__builtin_offsetof(struct percpu, scratch_rsp) == PCPU_SCRATCH_RSP, "percpu layout");
_Static_assert(__builtin_offsetof(struct percpu, tstack_top) == PCPU_TSTACK_TOP, "percpu layout");
_Static_assert(__builtin_offsetof(struct percpu, entry_tsc) == PCPU_ENTRY_TSC, "percpu layout");
_Static_assert(__builtin_offsetof(struct percpu, scratch) == PCPU_SCRATCH0, "percpu layout");
_Static_assert(__builtin_offsetof(struct percpu, exit_tsc) == PCPU_EXIT_TSC, "percpu layout");

extern struct percpu *cpu_table[MAX_CPUS];
extern uint32_t cpu_count; /* CPUs in the MADT that we started or tried to */
extern struct percpu *cpu_by_apic[]; /* by APIC ID (APIC_ID_LIMIT): NULL for an ID no CPU has (kernel/smp.c fills it) */

/*
 * Sends VEC_WAKE to the CPU with APIC ID `apic` (a halted CPU goes on) and
 * notes that the calling CPU woke one that runs no task, for
 * smp_yield_to_woken (kernel/smp.h). Here, below smp.c and task.c, which both wake CPUs.
 */
void smp_wake_apic(uint32_t apic);

static inline struct percpu *this_cpu(void)
{
	struct percpu *p;
	__asm__ volatile("movq %%gs:0, %0" : "=r"(p));
	return p;
}

/* Installs p as this CPU's per-CPU block (GS base). */
void percpu_install(struct percpu *p);

const char *cpu_state_name(uint32_t state);

#endif /* __ASSEMBLER__ */
#endif
