/*
 * Host unit tests (tests/unit.mk, -iquote tests/unit/shadow): the kernel's
 * arch/x86.h with rdtsc() turned into an ordinary function the test
 * defines (a fake clock), instead of the instruction.
 */
#ifndef UNIT_SHADOW_KERNEL_X86_H
#define UNIT_SHADOW_KERNEL_X86_H

#define rdtsc kernel_rdtsc_insn /* the real inline, renamed and unused */
#include_next "arch/x86.h"
#undef rdtsc

uint64_t rdtsc(void);

#endif
