/* Local APIC set-up, LVT entries and EOI; see apic/apic.h. Register access is inline there (layout.c holds its state). */
#include "apic/apic.h"
#include "arch/x86.h"
#include "arch/irq.h" /* VEC_PMI, VEC_SPURIOUS */

uint64_t apic_phys_base(void)
{
	return APIC_BASE_ADDR(rdmsr(MSR_APIC_BASE));
}

void apic_init_bsp(void)
{
	apic_mmio = (volatile uint8_t *)apic_phys_base();
}

const struct apic_layout *apic_fitting_layout(void)
{
	uint32_t reg = apic_read(APIC_ID), initial = cpuid(1, 0).ebx >> 24;

	if ((apic_layout_id(apic_layout(), reg) & 0xff) == initial)
		return apic_layout();
	return apic_layout_matching(reg, initial);
}

void apic_enable_local(void)
{
	wrmsr(MSR_APIC_BASE, rdmsr(MSR_APIC_BASE) | APIC_BASE_ENABLE);
	apic_write(APIC_TPR, 0);
	apic_write(APIC_LVT_TIMER, APIC_LVT_MASKED);
	apic_write(APIC_LVT_THERMAL, APIC_LVT_MASKED);
	apic_write(APIC_LVT_PC, APIC_LVT_MASKED | APIC_LVT_VECTOR(VEC_PMI));
	apic_write(APIC_LVT_LINT0, APIC_LVT_MASKED);
	apic_write(APIC_LVT_LINT1, APIC_LVT_MASKED);
	apic_write(APIC_LVT_ERROR, APIC_LVT_MASKED);
	apic_write(APIC_SVR, APIC_SVR_ENABLE | VEC_SPURIOUS);
	apic_write(APIC_ESR, 0);
}

/* LVT 0x340 unmasked, as apic_lvt_pc_set last gave it: one vector on every CPU. */
static uint32_t lvt_pc = APIC_LVT_DM_FIXED | APIC_LVT_VECTOR(VEC_PMI);

void apic_lvt_pc_set(uint8_t vector, bool masked)
{
	lvt_pc = APIC_LVT_DM_FIXED | APIC_LVT_VECTOR(vector);
	apic_write(APIC_LVT_PC, lvt_pc | (masked ? APIC_LVT_MASKED : 0));
}

void apic_lvt_pc_unmask(void)
{
	apic_write(APIC_LVT_PC, lvt_pc);
}

uint32_t apic_lvt_pc_read(void)
{
	return apic_read(APIC_LVT_PC);
}

int apic_lvt_pc_take(void)
{
	uint32_t lvt = apic_read(APIC_LVT_PC);

	if (lvt & APIC_LVT_MASKED)
		return -1;
	apic_write(APIC_LVT_PC, lvt | APIC_LVT_MASKED);
	return APIC_LVT_VECTOR(lvt);
}

bool apic_lvt_pc_raise(void)
{
	int v = apic_lvt_pc_take();

	return v >= 0 && apic_send_self(v);
}
