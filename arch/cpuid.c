/* What CPUID says of the topology; see arch/x86.h. */
#include "arch/x86.h"

#define CPUID1_EDX_HTT (1u << 28) /* CPUID.1:EBX[23:16] is valid */

uint32_t cpuid_threads_per_core(uint32_t max_leaf, struct cpuid_regs l1, struct cpuid_regs l4, struct cpuid_regs lb)
{
	if (max_leaf >= 0xb) {
		uint32_t n = lb.ebx & 0xffff; /* level 0, the SMT level: logical processors */
		return n ? n : 1;
	}
	if (max_leaf < 4 || !(l1.edx & CPUID1_EDX_HTT) || (l4.eax & 0x1f) == 0)
		return 1; /* no leaf 4, no count of logical processors, or no cache in leaf 4's subleaf 0 */
	uint32_t logical = (l1.ebx >> 16) & 0xff, cores = (l4.eax >> 26) + 1;
	return logical > cores ? logical / cores : 1;
}
