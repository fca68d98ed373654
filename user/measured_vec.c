/*
 * ms_vec, the measured function that is SSE2 (see user/measured.h): the
 * stand-in for KNC's VPU that the plugin's VPU events count. Apart from
 * user/measured.c, which is card code, since a KNC core has no SSE: only the
 * QEMU-only vectest and memtest's Linux twin link it (user/user.mk).
 * Assembly: its instruction counts are part of what the tests expect.
 */
#include "measured.h"

__asm__(".text\n"
	".p2align 6\n"
	".globl ms_vec\n"
	".type ms_vec, @function\n"
	"ms_vec:\n"
	"1:\n\t"
	"movapd (%rsi), %xmm0\n\t"
	"addpd (%rdi), %xmm0\n\t"
	"movapd %xmm0, (%rdi)\n\t"
	"add $16, %rsi\n\t"
	"add $16, %rdi\n\t"
	"dec %rdx\n\t"
	"jnz 1b\n\t"
	"xor %eax, %eax\n\t"
	"ret\n"
	".size ms_vec, . - ms_vec\n");
