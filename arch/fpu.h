/*
 * The x87 and SSE state of Ring-3 tasks. The kernel itself never uses it
 * (docs/design.md §3); tasks may, where the CPU has it (QEMU's does; a KNC core has
 * x87 but no SSE). Tasks run to completion, so nothing is saved: each task
 * starts from the reset state and cannot see or inherit its predecessor's
 * rounding modes, exception masks or register contents (issue 9).
 */
#ifndef ARCH_FPU_H
#define ARCH_FPU_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Per-CPU set-up: CR0.EM off, MP on, NE on (an unmasked x87 exception is a
 * #MF the task gets, not the legacy FERR# line); CR4.OSFXSR and OSXMMEXCPT
 * where CPUID reports SSE (SDM Vol. 3A, 13.1).
 */
void fpu_cpu_init(void);
/*
 * Puts x87, MMX and SSE registers, the x87 control word (0x37f) and MXCSR
 * (0x1f80) in their reset state (SDM Vol. 1, 10.5.1) with one FXRSTOR from
 * a clean image, where CPUID reports FXSR. Called before each task's first
 * Ring-3 instruction.
 */
void fpu_reset_user(void);
/* Whether this CPU has SSE (CPUID.1:EDX bit 25; a KNC core has not); after fpu_cpu_init. */
bool fpu_has_sse(void);
/*
 * The MXCSR of that clean image for a CPU whose CPUID.1:EAX is cpuid1_eax:
 * 0x1f80, or 0x200000 on a KNC core (family 0x0B), Intel's card kernel's:
 * its FXRSTOR faults without bit 21 and with the SSE masks (arch/fpu.c).
 */
uint32_t fpu_clean_mxcsr(uint32_t cpuid1_eax);

#endif
