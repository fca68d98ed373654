/*
 * Time Stamp Counter (MSR 0x10, 000 §1.4.3): the kernel's clock. Under QEMU
 * -icount shift=0 it advances by exactly one per guest instruction (DESIGN §5.2).
 */
#ifndef KERNEL_TSC_H
#define KERNEL_TSC_H

#include <stdint.h>
#include "kernel/x86.h"

extern uint64_t tsc_hz; /* TSC ticks per second, measured at boot */

/* Measures tsc_hz against PIT channel 2 (10 ms gate). BSP, once, interrupts off. */
void tsc_calibrate(void);

#define PIT_HEARTBEAT_HZ 10000
/* Starts PIT channel 0 at PIT_HEARTBEAT_HZ with its interrupt masked (see tsc.c). */
void pit_heartbeat_start(void);

/* TSC value `us` microseconds from now. */
uint64_t tsc_deadline_us(uint64_t us);
/* Spins (no HLT) for `us` microseconds. */
void delay_us(uint64_t us);
/* TSC ticks -> nanoseconds, microseconds (no overflow below ~500 years at 1 GHz). */
uint64_t tsc_to_ns(uint64_t ticks);
uint64_t tsc_to_us(uint64_t ticks);

#endif
