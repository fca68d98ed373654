/*
 * What differs between a PC in QEMU and a Xeon Phi card, behind one
 * interface (DESIGN §2). init/main.c calls these once, on the BSP, in this
 * order; platform/pc/ implements them for a PC (ACPI tables, PCI, the 8254
 * PIT, the COM1 UART, the IOAPIC's routes), platform/knc/ will for a card
 * (SFI tables, the SBOX). The core never includes this: it gets what it
 * needs registered (a console device, kernel/console.h) or as arguments
 * (the CPUs to start, smp_init). Reset and power-off: kernel/power.h.
 */
#ifndef PLATFORM_PLATFORM_H
#define PLATFORM_PLATFORM_H

#include <stdbool.h>
#include <stdint.h>
#include <pmuos/bootinfo.h>

/* The console device (kprintf prints nothing before). First thing. */
void platform_console_init(void);
/*
 * Reads the firmware's tables (a PC: ACPI from bi->rsdp or a scan).
 * Returns NULL, or why the machine cannot be run (the caller halts).
 */
const char *platform_init(const struct boot_info *bi);
/* Measures tsc_hz (arch/tsc.h) and starts what keeps QEMU's IPIs prompt. Interrupts off. */
void platform_time_init(void);
/*
 * After the BSP's local APIC is up: the interrupt controllers behind the
 * local APICs, and the console's receive interrupt to the calling CPU.
 */
void platform_irq_init(void);
/* The APIC IDs (0..254) of the processors to start, BSP included, up to `max`; returns how many. */
uint32_t platform_cpus(uint32_t *apic_ids, uint32_t max);
/*
 * The n-th (from 0) region of memory the host shares with this machine: its
 * physical base and size in bytes (not yet mapped). A PC in QEMU: BAR 2 of
 * the n-th ivshmem device with a memory BAR (QEMU docs/specs/ivshmem-spec.rst).
 * The mailbox is region 0; the QEMU plugin's page is found among the others
 * by its size and magic. False when there is no n-th region.
 */
bool platform_shared_memory(unsigned n, uint64_t *base, uint64_t *size);

#endif
