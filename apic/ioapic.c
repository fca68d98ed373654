/*
 * IOAPIC routes for the ISA devices the kernel uses (the COM1 UART), and the
 * legacy 8259 PICs, which are remapped away from the exception vectors and
 * masked for good.
 */
#include "apic/apic.h"
#include "kernel/acpi.h"
#include "kernel/irq.h"
#include "kernel/x86.h"

static volatile uint32_t *ioapic;
static uint32_t ioapic_pins;

static void pic_disable(void)
{
	/* ICW1-4: cascade, vectors VEC_PIC_BASE.., then mask every line. */
	outb(0x20, 0x11);
	outb(0xa0, 0x11);
	outb(0x21, VEC_PIC_BASE);
	outb(0xa1, VEC_PIC_BASE + 8);
	outb(0x21, 4);
	outb(0xa1, 2);
	outb(0x21, 1);
	outb(0xa1, 1);
	outb(0x21, 0xff);
	outb(0xa1, 0xff);
}

static uint32_t ioapic_read(uint32_t reg)
{
	ioapic[IOAPIC_REGSEL / 4] = reg;
	return ioapic[IOAPIC_WINDOW / 4];
}

static void ioapic_write(uint32_t reg, uint32_t v)
{
	ioapic[IOAPIC_REGSEL / 4] = reg;
	ioapic[IOAPIC_WINDOW / 4] = v;
}

void ioapic_init(void)
{
	pic_disable();
	if (!acpi.have_ioapic)
		return;
	ioapic = (volatile uint32_t *)acpi.ioapic_addr;
	ioapic_pins = IOAPIC_VER_MAXREDIR(ioapic_read(IOAPIC_REG_VER)) + 1;
	for (uint32_t i = 0; i < ioapic_pins; i++)
		ioapic_write(IOAPIC_REDTBL(i), IOAPIC_RED_MASKED);
}

bool ioapic_route(uint32_t gsi, uint8_t vector, uint32_t dest, bool level, bool active_low)
{
	if (!ioapic || gsi < acpi.ioapic_gsi_base || gsi - acpi.ioapic_gsi_base >= ioapic_pins)
		return false;
	uint32_t pin = gsi - acpi.ioapic_gsi_base;

	ioapic_write(IOAPIC_REDTBL(pin) + 1, IOAPIC_RED_DEST(dest));
	ioapic_write(IOAPIC_REDTBL(pin), vector | (level ? IOAPIC_RED_LEVEL : 0) |
					 (active_low ? IOAPIC_RED_ACTIVE_LOW : 0));
	return true;
}

void irq_route_isa(unsigned irq, irq_handler h)
{
	uint32_t gsi = irq;
	bool level = false, low = false; /* ISA default: edge, active high */

	for (uint32_t i = 0; i < acpi.niso; i++) {
		const struct acpi_iso *s = &acpi.iso[i];
		if (s->irq != irq)
			continue;
		gsi = s->gsi;
		low = (s->flags & 3) == 3;
		level = ((s->flags >> 2) & 3) == 3;
	}
	irq_register(VEC_ISA_BASE + irq, h);
	ioapic_route(gsi, VEC_ISA_BASE + irq, apic_id(), level, low);
}
