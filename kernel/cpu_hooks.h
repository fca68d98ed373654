/*
 * What the core tells a driver above it about each CPU: its start-up, INIT,
 * privilege changes and halts (the PMU follows them, docs/design.md §5.2). The
 * driver installs its hooks at init (pmu/pmu.c); the core calls them
 * without including anything of the driver's, so the arrows run one way.
 * Until then every hook does nothing.
 */
#ifndef KERNEL_CPU_HOOKS_H
#define KERNEL_CPU_HOOKS_H

#include <stdint.h>
#include <stdbool.h>
#include <pmuos/syscall.h>

struct cpu_hooks {
	/*
	 * On the BSP, for each AP before its first INIT: allocate what `online`
	 * needs. APs starting together would otherwise contend for the page
	 * allocator's lock, and under TCG's round-robin every vCPU spinning on
	 * a lock whose holder is descheduled burns its whole turn.
	 */
	void (*prepare)(uint32_t cpu);
	/* Every CPU's start-up path, interrupts off. `rejoin`: it came back through INIT. */
	void (*online)(bool rejoin);
	/* An AP back after INIT, set up again: what INIT left is reported. */
	void (*rejoined)(void);
	/* The calling CPU is about to send INIT to `cpu`. */
	void (*init_sent)(uint32_t cpu);
	/*
	 * A launch (its first task's id) has a task for `cpu`: called for each
	 * of its CPUs on the launching CPU, before any of them starts.
	 */
	void (*task_assigned)(uint32_t cpu, uint32_t launch);
	/* A task starts on the calling CPU (kernel/task.c), before its first instruction. */
	void (*task_start)(void);
	/* The task of `cpu` ended (on that CPU, or on the one that found it stopped for good). */
	void (*task_end)(uint32_t cpu);
	/* Just before the IRETQ to Ring 3 (kernel/task.c). */
	void (*user_enter)(void);
	/*
	 * First thing after an entry from Ring 3 (kernel/trap.c, kernel/task.c):
	 * the clock (kernel/stamp.h) of the first kernel instruction and of the
	 * first Ring-3 instruction after the previous exit.
	 */
	void (*user_exit)(uint64_t first_kernel, uint64_t first_user);
	/* The calling CPU halts / woke up (kernel/idle.c). */
	void (*idle_enter)(void);
	void (*idle_exit)(void);
	/* SYS_PMU_COUNTS: fills *c with the calling CPU's counts, interrupts off (include/pmuos/syscall.h). */
	void (*counts)(struct pmuos_counts *c);
	/* SYS_PMU_EVENT_NAMES: fills *e with the calling CPU's events' names, interrupts off (include/pmuos/syscall.h). */
	void (*events)(struct pmuos_events *e);
};

/*
 * The hooks in force, each member set. A copy, not a pointer: a hook on the
 * Ring-3 entry and exit paths costs one indirect call and no load of a
 * pointer (bench/tasks.py counts these paths' instructions).
 */
extern struct cpu_hooks cpu_hooks;
/* Installs a copy of `h` (every member set), on the BSP before the APs start. */
void cpu_hooks_set(const struct cpu_hooks *h);

/*
 * Registers fn(cpu), called on the caller's CPU before `cpu` is INITed
 * (kernel/smp.c), and on `cpu` itself when a kernel exception stops it for
 * good (kernel/trap.c; the mailbox moves its service away). Up to 4.
 */
void cpu_on_leaving(void (*fn)(uint32_t cpu));
/* Calls the functions registered with cpu_on_leaving. */
void cpu_leaving_notify(uint32_t cpu);

#endif
