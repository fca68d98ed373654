/* Ring-3 x87/SSE state; see arch/fpu.h. */
#include <stdbool.h>
#include "arch/fpu.h"
#include "arch/sync.h"
#include "arch/x86.h"
#include "arch/regs.h"

#define CPUID1_EDX_FXSR (1u << 24)
#define CPUID1_EDX_SSE  (1u << 25)

#define MXCSR_RESET   0x1f80u    /* SDM Vol. 1, 10.2.3 */
/*
 * A KNC core's: bit 21 (DUE) alone. Its FXRSTOR raises #GP unless the
 * image's MXCSR has DUE set (Intel's k1om Linux, arch/x86/include/asm/i387.h
 * fxrstor_checking: "KNC errata: MXCSR.DUE (bit 21) must be 1"), and Intel's
 * card kernel starts every task with MXCSR = 1 << 21 (its i387.c); the SSE
 * exception masks of 0x1f80 are not in it, as the card has no SSE. A 3120A's
 * bootstrap leaves MXCSR at 0x200000 and its FXSAVE reports the MXCSR mask
 * 0x30e07f, which lacks bits 7-12: an image with 0x1f80's masks would set
 * reserved bits, and FXRSTOR raises #GP for those (SDM Vol. 2A, FXRSTOR)
 * (Lasimeri/Intel-Phi-3120A docs/results/2026-09-14-p4-tty-smp.md, patch
 * 0018). Not simulated here: QEMU's CPUs are not family 0x0B, and theirs
 * would #GP on bit 21.
 */
#define MXCSR_KNC     (1u << 21)
#define IMAGE_MXCSR   24         /* MXCSR's byte offset in an FXSAVE image */

/*
 * The FXSAVE image of the reset state (SDM Vol. 1, Table 10-2): FCW 0x37f at
 * byte 0, abridged tag word 0 (all empty) at byte 4, MXCSR at byte 24
 * (fpu_clean_mxcsr; each CPU writes the same value), every register zero.
 */
static uint8_t clean_image[512] __attribute__((aligned(16))) = { [0] = 0x7f, [1] = 0x03 };
static bool have_fxsr, have_sse;

uint32_t fpu_clean_mxcsr(uint32_t cpuid1_eax)
{
	return cpuid_family(cpuid1_eax) == CPUID_FAMILY_KNC ? MXCSR_KNC : MXCSR_RESET;
}

void fpu_cpu_init(void)
{
	struct cpuid_regs r = cpuid(1, 0);
	uint32_t mxcsr = fpu_clean_mxcsr(r.eax);

	for (int i = 0; i < 4; i++) /* every CPU writes the same value */
		WRITE_ONCE(clean_image[IMAGE_MXCSR + i], (uint8_t)(mxcsr >> (8 * i)));

	write_cr0((read_cr0() & ~CR0_EM) | CR0_MP | CR0_NE);
	if (r.edx & CPUID1_EDX_SSE)
		write_cr4(read_cr4() | CR4_OSFXSR | CR4_OSXMMEXCPT);
	have_fxsr = r.edx & CPUID1_EDX_FXSR;
	have_sse = r.edx & CPUID1_EDX_SSE;
}

/*
 * The one x87/SSE-state instruction in the kernel, in its own output
 * section (linker.ld): the check that kernel text holds only what a KNC core
 * executes (tests/system/test_knc_text.py) names this section as the one
 * exception; it runs only where CPUID reports FXSR.
 */
static void __attribute__((noinline, section(".fpu_text"))) fxrstor(const void *image)
{
	__asm__ volatile("fxrstor64 (%0)" :: "r"(image) : "memory");
}

bool fpu_has_sse(void)
{
	return have_sse;
}

void fpu_reset_user(void)
{
	if (have_fxsr)
		fxrstor(clean_image);
}
