/* Halting an idle CPU (DESIGN §5.2: idle CPUs stay halted; halted cycles are not counted). */
#ifndef KERNEL_IDLE_H
#define KERNEL_IDLE_H

/*
 * Call with interrupts off, after checking there is nothing to do: tells the
 * PMU the thread halts, then STI; HLT. Returns after an interrupt was
 * handled (trap_dispatch ends the halted stretch first), interrupts on.
 */
void idle_wait(void);
/* trap_dispatch: the CPU was woken from idle_wait() by this interrupt. */
void idle_woken(void);

#endif
