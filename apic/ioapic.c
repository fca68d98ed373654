/*
 * IOAPIC routes (the platform says where the IOAPIC is and which GSI an
 * ISA IRQ arrives on: platform/pc/irq.c), and the legacy 8259 PICs, which
 * are remapped away from the exception vectors and masked for good.
 */
#include "apic/apic.h"
#include "arch/irq.h"
#include "arch/x86.h"

static volatile uint32_t *ioapic;
static uint32_t ioapic_pins, ioapic_gsi_base;

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

void ioapic_init(uint64_t base, uint32_t gsi_base)
{
	pic_disable();
	if (!base)
		return;
	ioapic = (volatile uint32_t *)base;
	ioapic_gsi_base = gsi_base;
	ioapic_pins = IOAPIC_VER_MAXREDIR(ioapic_read(IOAPIC_REG_VER)) + 1;
	for (uint32_t i = 0; i < ioapic_pins; i++)
		ioapic_write(IOAPIC_REDTBL(i), IOAPIC_RED_MASKED);
}

bool ioapic_route(uint32_t gsi, uint8_t vector, uint32_t dest, bool level, bool active_low)
{
	if (!ioapic || gsi < ioapic_gsi_base || gsi - ioapic_gsi_base >= ioapic_pins)
		return false;
	uint32_t pin = gsi - ioapic_gsi_base;

	ioapic_write(IOAPIC_REDTBL(pin) + 1, IOAPIC_RED_DEST(dest));
	ioapic_write(IOAPIC_REDTBL(pin), vector | (level ? IOAPIC_RED_LEVEL : 0) |
					 (active_low ? IOAPIC_RED_ACTIVE_LOW : 0));
	return true;
}
