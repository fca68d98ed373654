/* platform/platform.h for a PC in QEMU: ACPI's tables, the PIT, the UART, the IOAPIC. */
#include "platform/platform.h"
#include "platform/pc/pc.h"
#include "platform/pc/acpi.h"
#include "platform/pc/pci.h"
#include "apic/apic.h"

void platform_console_init(void)
{
	uart_init();
}

const char *platform_init(const struct boot_info *bi)
{
	return acpi_init(bi->rsdp) ? NULL : "ACPI tables are needed to find the processors";
}

void platform_time_init(void)
{
	tsc_calibrate();
	pit_heartbeat_start();
}

void platform_irq_init(void)
{
	ioapic_init(acpi.have_ioapic ? acpi.ioapic_addr : 0, acpi.ioapic_gsi_base);
	uart_enable_rx_irq();
}

uint32_t platform_cpus(uint32_t *apic_ids, uint32_t max)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < acpi.ncpus && n < max; i++)
		if (acpi.cpus[i].enabled)
			apic_ids[n++] = acpi.cpus[i].apic_id;
	return n;
}

/* QEMU docs/specs/ivshmem-spec.rst: vendor 1af4, device 1110, the shared memory in BAR 2. */
#define IVSHMEM_VENDOR 0x1af4
#define IVSHMEM_DEVICE 0x1110
#define IVSHMEM_BAR    2

bool platform_shared_memory(unsigned n, uint64_t *base, uint64_t *size)
{
	struct pci_dev d;

	for (unsigned i = 0, found = 0; pci_find_nth(IVSHMEM_VENDOR, IVSHMEM_DEVICE, i, &d); i++)
		if (pci_mem_bar(&d, IVSHMEM_BAR, base, size) && found++ == n)
			return true;
	return false;
}

void pc_route_isa_irq(unsigned irq, irq_handler h)
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
