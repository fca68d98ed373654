/*
 * platform/platform.h for a PC in QEMU: ACPI's tables, the PIT, the UART,
 * the IOAPIC. Without ACPI (`acpi=off` on the command line, or no RSDP) the
 * processors and the I/O APIC come from SFI tables, where a KNC card's
 * bootstrap leaves them and the simulated card's (tests/cardsim) does too.
 */
#include "platform/platform.h"
#include "platform/pc/pc.h"
#include "platform/pc/acpi.h"
#include "platform/sfi.h"
#include "apic/apic.h"
#include "kernel/console.h"
#include "platform/pc/pci.h"
#include "arch/sync.h"
#include "lib/fmt.h"
#include "lib/lib.h"

static bool no_acpi;     /* the processors came from SFI */
static struct sfi_info sfi;

static const char *sfi_init(void)
{
	static char why[128];
	const char *no = sfi_read(&sfi);

	if (no) {
		snprintf(why, sizeof(why), "no ACPI and %s", no);
		return why;
	}
	no_acpi = true;
	return NULL;
}

static void pc_console_init(void)
{
	uart_init();
}

static const char *pc_init(const struct boot_info *bi)
{
	const char *v;
	size_t n;

	if (cmdline_find(bi->cmdline, "acpi", &v, &n) && n == 3 && strncmp(v, "off", 3) == 0) {
		kprintf("acpi: off (command line)\n");
		return sfi_init();
	}
	return acpi_init(bi->rsdp) ? NULL : sfi_init();
}

static void pc_time_init(void)
{
	tsc_calibrate();
}

/*
 * A flush of QEMU's TLB that the guest does not see (kernel/hosttlb.h):
 * any change of QEMU's memory map flushes every vCPU's TLB (QEMU's
 * tcg_commit), and there TCG resizes it. The change: bit 0 of the q35
 * MCH's PAM1 field for 0xC0000-0xC3FFF (D0:F0 config byte 0x91 bits 1:0;
 * Intel 3 Series Chipset Family datasheet, 316966, the PAM0-PAM6 registers
 * at 90h-96h), flipped and put back. pmuos never touches that option-ROM
 * area after boot (nor caches it in the plugin: below 1 MiB). The lock
 * keeps two CPUs' CONFIG_ADDRESS/CONFIG_DATA pairs apart; every other
 * configuration access is at boot, before any task. It is only tried: the
 * change ends its holder's vCPU turn, and a CPU spinning for it could keep
 * the holder from running (docs/design.md §10); a flush under way is the
 * one asked for.
 */
static void pc_host_tlb_flush(void)
{
	static struct spinlock lock;
	static const struct pci_dev mch = { 0, 0, 0, 0, 0 };
	uint64_t f = irq_save();

	if (spin_trylock(&lock)) {
		uint32_t pam = pci_cfg_read(&mch, 0x90);

		pci_cfg_write(&mch, 0x90, pam ^ 1u << 8);
		pci_cfg_write(&mch, 0x90, pam);
		spin_unlock(&lock);
	}
	irq_restore(f);
}

static void pc_irq_init(void)
{
	if (no_acpi) /* SFI's first I/O APIC takes GSI 0 on (Linux arch/x86/platform/sfi/sfi.c) */
		ioapic_init(sfi.nioapics ? sfi.ioapic_addr[0] : 0, 0);
	else
		ioapic_init(acpi.have_ioapic ? acpi.ioapic_addr : 0, acpi.ioapic_gsi_base);
	pc_route_isa_irq(UART_IRQ, uart_rx_irq);
	uart_enable_rx_irq();
}

static uint32_t pc_cpus(uint32_t *apic_ids, uint32_t max)
{
	uint32_t n = 0;

	if (no_acpi)
		return sfi_cpus(&sfi, apic_ids, max);
	for (uint32_t i = 0; i < acpi.ncpus && n < max; i++)
		if (acpi.cpus[i].enabled)
			apic_ids[n++] = acpi.cpus[i].apic_id;
	return n;
}

void pc_route_isa_irq(unsigned irq, irq_handler h)
{
	/*
	 * ISA default: edge, active high, GSI = IRQ. Without ACPI's overrides,
	 * the one QEMU's PC boards always wire: the PIT's IRQ 0 on pin 2 (QEMU
	 * hw/i386/acpi-build.c build_madt, "apic_xrupt_override").
	 */
	uint32_t gsi = no_acpi && irq == 0 ? 2 : irq;
	bool level = false, low = false;

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

const struct platform platform_pc = {
	.name = "pc",
	.apic_layout = &apic_layout_xapic,
	.console_init = pc_console_init,
	.init = pc_init,
	.time_init = pc_time_init,
	.irq_init = pc_irq_init,
	.cpus = pc_cpus,
	.shared_memory = pc_shared_memory,
	.doorbell = pc_doorbell,
	.ipi_sent = pit_ipi_sent,
	.tasks_running = pit_tasks_running,
	.host_tlb_flush = pc_host_tlb_flush,
	.power_off = pc_power_off,
	.power_reset = pc_power_reset,
};
