/* Local APIC registers, LVT entries and EOI; see apic/apic.h. */
#include "apic/apic.h"
#include "arch/x86.h"
#include "arch/irq.h" /* VEC_PMI, VEC_SPURIOUS */

static volatile uint8_t *apic_mmio;
static const struct apic_layout *layout = &apic_layout_xapic;
/* The ID field of the ID register, for boot/trampoline.S (an AP finds its stack by its ID). */
uint32_t ap_apic_id_shift = 24, ap_apic_id_mask = 0xff;

void apic_use_layout(const struct apic_layout *l)
{
	layout = l;
	ap_apic_id_shift = l->id_shift;
	ap_apic_id_mask = (1u << l->id_bits) - 1;
}

const struct apic_layout *apic_layout(void)
{
	return layout;
}

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

	if ((apic_layout_id(layout, reg) & 0xff) == initial)
		return layout;
	return apic_layout_matching(reg, initial);
}

uint32_t apic_read(uint32_t reg)
{
	return *(volatile uint32_t *)(apic_mmio + reg);
}

void apic_write(uint32_t reg, uint32_t v)
{
	*(volatile uint32_t *)(apic_mmio + reg) = v;
}

uint32_t apic_id(void)
{
	return apic_layout_id(layout, apic_read(APIC_ID));
}

void apic_eoi(void)
{
	apic_write(APIC_EOI, 0);
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

void apic_lvt_pc_set(uint8_t vector, bool masked)
{
	apic_write(APIC_LVT_PC, APIC_LVT_DM_FIXED | APIC_LVT_VECTOR(vector) |
				(masked ? APIC_LVT_MASKED : 0));
}

void apic_lvt_pc_unmask(void)
{
	apic_write(APIC_LVT_PC, apic_read(APIC_LVT_PC) & ~APIC_LVT_MASKED);
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

	return v >= 0 && apic_send_fixed(apic_id(), v);
}
