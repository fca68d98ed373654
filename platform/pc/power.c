/* A PC's power ops (platform/platform.h, kernel/power.h): ACPI soft-off and warm reset. */
#include "platform/pc/pc.h"
#include "platform/pc/acpi.h"
#include "arch/tsc.h"
#include "arch/x86.h"

#define SLP_EN (1u << 13)
#define SLP_TYP(t) ((uint32_t)(t) << 10)

const char *pc_power_off(void)
{
	if (!acpi.rsdp)
		return "no ACPI (acpi=off, or none found), so no soft-off: `reboot` still resets; "
		       "QEMU's monitor (Ctrl-A x) or the host ends the machine";
	if (!acpi.pm1a_cnt || acpi.s5_slp_typ < 0)
		return "ACPI has no PM1a control block or \\_S5, so no soft-off: `reboot` still resets";
	outw(acpi.pm1a_cnt, SLP_TYP(acpi.s5_slp_typ) | SLP_EN);
	delay_us(100000);
	return "ACPI soft-off did not take effect";
}

const char *pc_power_reset(void)
{
	cli();
	if (acpi.have_reset) {
		outb(acpi.reset_port, acpi.reset_value);
		delay_us(100000);
	}
	outb(0xcf9, 0x02); /* reset control: SYS_RST, then RST_CPU to trigger */
	outb(0xcf9, 0x06);
	delay_us(100000);
	outb(0x64, 0xfe);  /* 8042 pulse reset line */
	delay_us(100000);
	/* Last resort: an empty IDT turns the next exception into a triple fault. */
	struct { uint16_t limit; uint64_t base; } __attribute__((packed)) none = { 0, 0 };
	__asm__ volatile("lidt %0; int3" :: "m"(none));
	for (;;)
		hlt();
}
