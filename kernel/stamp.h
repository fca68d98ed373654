/*
 * The Ring-3 entry and exit stamps (kernel/isr.S, kernel/user.S) read the
 * clock the PMU model counts by (docs/design.md §5.2): the TSC, or, once
 * stamp_use_clock() has named one, a 64-bit word in memory that counts the
 * reading thread's own instructions (the QEMU plugin's, pmu/model/share.h).
 * CLOCK_READ leaves the value in RAX, clobbers RDX and flags, and is 4
 * instructions either way, the read the second: the stamps' instruction
 * distances (kernel/trap.c entry_insns, kernel/syscall.c) hold for both.
 */
#ifndef KERNEL_STAMP_H
#define KERNEL_STAMP_H

#ifdef __ASSEMBLER__
/* RDTSC and its 2 instructions (9 bytes) are a site stamp_use_clock rewrites. */
.macro CLOCK_READ
	movq stamp_clock(%rip), %rdx
661:	rdtsc
	shlq $32, %rdx
	orq %rdx, %rax
	.pushsection .stamp_sites, "a"
	.quad 661b
	.popsection
.endm
#else
#include <stdint.h>

/* The word the stamps read instead of the TSC (NULL: the TSC). */
extern const volatile uint64_t *stamp_clock;
/*
 * From now on every stamp reads *clock (a monotonic count that one load
 * reads whole): the BSP rewrites each site, before any AP runs (pmu_init).
 * Code that compares with a stamp reads the same clock (pmu/model/share.h).
 */
void stamp_use_clock(const volatile uint64_t *clock);
#endif

#endif
