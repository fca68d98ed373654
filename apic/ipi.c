/* Inter-processor interrupts through the ICR: fixed, INIT, SIPI. */
#include "apic/apic.h"
#include "arch/tsc.h"
#include "arch/sync.h"

#define ICR_WAIT_US 1000

static void (*after_ipi)(void);

void apic_on_ipi_sent(void (*fn)(void))
{
	after_ipi = fn;
}

static bool icr_idle(void)
{
	uint64_t end = tsc_deadline_us(ICR_WAIT_US);

	while (apic_read(APIC_ICR_LO) & APIC_ICR_BUSY) {
		if (rdtsc() > end)
			return false;
		cpu_relax();
	}
	return true;
}

/* ICR writes must not interleave with an interrupt handler's own IPI. */
static bool icr_send(uint32_t apic_id, uint32_t lo)
{
	uint64_t f = irq_save();
	bool ok = icr_idle();

	if (ok) {
		apic_write(APIC_ICR_HI, apic_layout_dest(apic_layout(), apic_id));
		apic_write(APIC_ICR_LO, lo);
		ok = icr_idle();
	}
	irq_restore(f);
	return ok;
}

/* To another CPU, then what apic_on_ipi_sent registered. */
static bool ipi_send(uint32_t apic_id, uint32_t lo)
{
	bool ok = icr_send(apic_id, lo);

	if (ok && after_ipi)
		after_ipi();
	return ok;
}

bool apic_send_fixed(uint32_t apic_id, uint8_t vector)
{
	return ipi_send(apic_id, APIC_ICR_DM_FIXED | APIC_ICR_ASSERT | APIC_ICR_VECTOR(vector));
}

bool apic_send_self(uint8_t vector)
{
	return icr_send(apic_id(), APIC_ICR_DM_FIXED | APIC_ICR_ASSERT | APIC_ICR_VECTOR(vector));
}

bool apic_send_init(uint32_t apic_id)
{
	return ipi_send(apic_id, APIC_ICR_DM_INIT | APIC_ICR_ASSERT | APIC_ICR_LEVEL);
}

bool apic_send_init_deassert(uint32_t apic_id)
{
	return icr_send(apic_id, APIC_ICR_DM_INIT | APIC_ICR_LEVEL); /* nothing for the target to see */
}

bool apic_send_sipi(uint32_t apic_id, uint8_t page)
{
	return ipi_send(apic_id, APIC_ICR_DM_STARTUP | APIC_ICR_ASSERT | APIC_ICR_VECTOR(page));
}
