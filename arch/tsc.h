/*
 * Time Stamp Counter (MSR 0x10, 327357-001 §1.4.3): the kernel's clock. Under QEMU
 * -icount shift=0 it advances by exactly one per guest instruction (docs/design.md §5.2).
 */
#ifndef ARCH_TSC_H
#define ARCH_TSC_H

#include <stdint.h>
#include "arch/x86.h"

/* TSC ticks per second, measured at boot by the platform (platform/pc/pit.c). */
extern uint64_t tsc_hz;

/* TSC value `us` microseconds from now. */
uint64_t tsc_deadline_us(uint64_t us);
/* Spins (no HLT) for `us` microseconds. */
void delay_us(uint64_t us);
/* TSC ticks -> nanoseconds, microseconds (no overflow below ~500 years at 1 GHz). */
uint64_t tsc_to_ns(uint64_t ticks);
uint64_t tsc_to_us(uint64_t ticks);

#endif
