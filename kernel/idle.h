/* Halting an idle CPU (docs/design.md §5.2: idle CPUs stay halted; halted cycles are not counted). */
#ifndef KERNEL_IDLE_H
#define KERNEL_IDLE_H

#include <stdbool.h>
#include <stdint.h>
#include "kernel/percpu.h"
#include "kernel/cpu_hooks.h"

/*
 * Call with interrupts off, after checking there is nothing to do: tells the
 * PMU the thread halts, then STI; HLT. Returns after an interrupt was
 * handled (trap_dispatch ends the halted stretch first), interrupts on.
 */
void idle_wait(void);
/*
 * trap_dispatch and trap_pmi: the CPU was woken from idle_wait() by this interrupt.
 * Inline: trap.c is below this file (it would otherwise call up into it).
 */
static inline void idle_woken(void)
{
	struct percpu *p = this_cpu();

	if (p->idle) {
		p->idle = false;
		cpu_hooks.idle_exit();
	}
}

/*
 * Waits, halted between interrupts, until done(arg) is true (checked with
 * interrupts off, so a wake-up between the check and the HLT is not lost).
 * Before each halt it runs the idle work (below) with interrupts on, done()
 * checked after each piece of it (busy idle work does not starve the wait). Call
 * with interrupts on; returns with them on.
 */
void idle_until(bool (*done)(void *arg), void *arg);
/*
 * As idle_until, but for at most `us` microseconds, halted between checks
 * made at least every 100 us (a per-CPU timer). Returns done(arg). A CPU
 * that busy-waited instead would, under QEMU -icount, keep the CPU it waits
 * for from running (the round-robin scheduler runs the spinning vCPU for
 * its whole slice). With interrupts off it can only spin, and does.
 */
bool idle_until_us(bool (*done)(void *arg), void *arg, uint64_t us);
/* Halts for `us` microseconds (spins if interrupts are off). */
void idle_sleep_us(uint64_t us);

/*
 * Work a waiting CPU does before it halts: the mailbox registers its
 * service here, so every wait on the CPU that holds the service serves the
 * host (a shell command that sleeps does not stop the mailbox). fn returns
 * true while it found something to do.
 */
void idle_set_work(bool (*fn)(void));

#endif
