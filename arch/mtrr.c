/* The MTRR copy of arch/mtrr.h; MSR numbers from Intel SDM Vol. 4 Table 2-2. */
#include "arch/mtrr.h"
#include "arch/x86.h"

#define MSR_MTRRCAP      0xfe
#define MSR_MTRR_DEF     0x2ff
#define MSR_MTRR_BASE0   0x200 /* PHYSBASEn = 0x200 + 2n, PHYSMASKn = 0x201 + 2n */
#define MTRRCAP_VCNT     0xffu
#define MTRRCAP_FIX      (1u << 8)
#define MTRR_DEF_E       (1u << 11) /* MTRRs enabled */
#define CPUID1_EDX_MTRR  (1u << 12)

/* IA32_MTRR_FIX64K_00000, FIX16K_80000 and _A0000, FIX4K_C0000 .. _F8000. */
static const uint32_t fixed_msrs[MTRR_FIXED_MSRS] = { 0x250, 0x258, 0x259, 0x268, 0x269, 0x26a,
						      0x26b, 0x26c, 0x26d, 0x26e, 0x26f };

static inline void wbinvd(void) { __asm__ volatile("wbinvd" ::: "memory"); }

void mtrr_save(struct mtrr_state *s)
{
	*s = (struct mtrr_state){ 0 };
	if (!(cpuid(1, 0).edx & CPUID1_EDX_MTRR))
		return;
	uint64_t cap = rdmsr(MSR_MTRRCAP);

	s->present = true;
	s->vcnt = cap & MTRRCAP_VCNT;
	if (s->vcnt > MTRR_VAR_MAX)
		s->vcnt = MTRR_VAR_MAX;
	s->fixed = cap & MTRRCAP_FIX;
	s->def_type = rdmsr(MSR_MTRR_DEF);
	for (unsigned i = 0; s->fixed && i < MTRR_FIXED_MSRS; i++)
		s->fixed_regs[i] = rdmsr(fixed_msrs[i]);
	for (unsigned i = 0; i < 2 * s->vcnt; i++)
		s->var[i] = rdmsr(MSR_MTRR_BASE0 + i);
}

void mtrr_load(const struct mtrr_state *s)
{
	if (!s->present)
		return;
	uint64_t cr0 = read_cr0() & ~(CR0_CD | CR0_NW);

	write_cr0(cr0 | CR0_CD); /* no-fill cache mode */
	wbinvd();
	write_cr3(read_cr3());
	wrmsr(MSR_MTRR_DEF, s->def_type & ~(uint64_t)MTRR_DEF_E);
	for (unsigned i = 0; s->fixed && i < MTRR_FIXED_MSRS; i++)
		wrmsr(fixed_msrs[i], s->fixed_regs[i]);
	for (unsigned i = 0; i < 2 * s->vcnt; i++)
		wrmsr(MSR_MTRR_BASE0 + i, s->var[i]);
	wrmsr(MSR_MTRR_DEF, s->def_type);
	wbinvd();
	write_cr3(read_cr3());
	write_cr0(cr0);
}
