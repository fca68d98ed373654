/*
 * Handler registration for interrupts and exceptions (kernel/trap.c
 * dispatches every vector; arch/irq.h has the vector map). A driver above
 * the core installs its handlers at init: the core calls them without
 * including anything of theirs.
 */
#ifndef KERNEL_TRAP_H
#define KERNEL_TRAP_H

#include <stdint.h>
#include <stdbool.h>
#include "arch/irq.h"

typedef void (*irq_handler)(struct trap_frame *f);

/* Loads the IDT on the calling CPU (builds it on the first call). */
void idt_load(void);
/* Installs handler for vector (32..255). Vectors >= 32 get an EOI after the handler. */
void irq_register(uint8_t vector, irq_handler h);
/*
 * Runs vector's handler (32..255) on frame f, as if the CPU took that
 * interrupt at f's instruction boundary; no EOI (the APIC did not deliver
 * it). For interrupts the kernel raises in software while it handles
 * another one that f is the context of (pmu/model/backend.c's PMI).
 */
void irq_invoke(uint8_t vector, struct trap_frame *f);

/*
 * Exception hooks: a handler returns 1 if it dealt with the exception (the
 * faulting context resumes), 0 to fall through to the fault report.
 */
typedef int (*exc_handler)(struct trap_frame *f);
void exc_register(uint8_t vector, exc_handler h);

/*
 * The fast path of #UD and #GP from Ring 3 (kernel/isr.S): the handler
 * runs straight from the vector stub, before the general path, with the
 * TSC of the first kernel instruction of this entry and of the first
 * Ring-3 instruction of the stretch it ends (cpu_hooks.user_exit's
 * arguments). It returns true once it has completed the instruction and
 * done the work of user_exit and user_enter itself: the stub then returns
 * to Ring 3. False, with nothing changed: the general path (user_exit,
 * exc_handler, fault) follows. Only entries with no work pending on the
 * way back to Ring 3 (task_return_to_user) get there. For instructions the
 * kernel emulates (pmu/model/emul.c), whose general path costs several times the
 * emulation (bench/tasks.py).
 */
typedef bool (*exc_fast_handler)(struct trap_frame *f, uint64_t first_kernel, uint64_t first_user);
void exc_fast_register(exc_fast_handler h);

/*
 * What the dispatcher does about Ring 3, which the tasks (kernel/task.c,
 * above this file) register once at init: a copy, each member set.
 */
struct trap_user {
	/* An exception in Ring 3 that nothing handled: ends the task with a report. */
	void (*fault)(struct trap_frame *f) __attribute__((noreturn));
	/* The CPU is about to return to Ring 3 (a kill request ends the task here). */
	void (*return_to_user)(struct trap_frame *f);
	/* A kernel exception stopped the calling CPU for good: its tasks end. */
	void (*cpu_stopped)(void);
};
void trap_set_user(const struct trap_user *u);

#endif
