/*
 * What differs between a PC in QEMU and a Xeon Phi card, behind one
 * interface (docs/design.md §2), as SerenityOS's Kernel/Arch: one ops table per
 * platform, chosen once at boot (init/main.c): platform/pc/ for a PC
 * (ACPI tables, PCI, the 8254 PIT, the COM1 UART, the IOAPIC's routes;
 * without ACPI, SFI), platform/knc/ for a card (SFI tables, the SBOX; no
 * port I/O, no legacy devices). init/main.c calls them once, on the BSP, in
 * this order. The core never includes this: it gets what it needs
 * registered (a console device, kernel/console.h) or as arguments (the
 * CPUs to start, smp_init). Reset and power-off: kernel/power.h, through
 * the platform's ops.
 */
#ifndef PLATFORM_PLATFORM_H
#define PLATFORM_PLATFORM_H

#include <stdbool.h>
#include <stdint.h>
#include <pmuos/bootinfo.h>
#include "apic/regs.h"

/*
 * A doorbell between this machine and the host, beside shared memory
 * region 0 (docs/design.md §7): the host's rings interrupt one CPU, and this
 * machine rings the host's peers. In QEMU: an ivshmem-doorbell device
 * (QEMU docs/specs/ivshmem-spec.rst). A KNC card has the SBOX's (APICICR
 * host -> card, SDBIC card -> host; docs/knc.md), not used yet: it polls.
 */
struct host_doorbell {
	uint32_t peer; /* this machine's peer ID among the host's (0..65535) */
	/*
	 * The host's rings interrupt the CPU with this APIC ID from now on. Any
	 * CPU, one at a time (mailbox/doorbell.c): no lock here, as none may be
	 * spun for across the device writes (docs/design.md §10).
	 */
	void (*route)(uint32_t apic_id);
	/* Interrupts host peer `peer` (0..65535; one not connected is not rung). Any CPU. */
	void (*ring)(uint32_t peer);
};

struct platform {
	const char *name;  /* "pc", "knc" */
	/*
	 * Where the local APIC keeps APIC IDs (apic/regs.h): a PC's xAPIC, a
	 * card's KNC layout. `pmuos.apic=xapic|knc` on the command line
	 * overrides it: QEMU's APIC is an xAPIC even where pmuos plays a card.
	 */
	const struct apic_layout *apic_layout;
	/* The console device (kprintf prints nothing before). First thing. */
	void (*console_init)(void);
	/*
	 * Reads the firmware's tables (a PC: ACPI from bi->rsdp or a scan; a
	 * card: SFI). Returns NULL, or why the machine cannot be run (the
	 * caller halts).
	 */
	const char *(*init)(const struct boot_info *bi);
	/* Measures or reads tsc_hz (arch/tsc.h). Interrupts off. */
	void (*time_init)(void);
	/*
	 * After the BSP's local APIC is up: the interrupt controllers behind
	 * the local APICs, and the console's receive interrupt to the calling CPU.
	 */
	void (*irq_init)(void);
	/*
	 * The APIC IDs of the processors to start, BSP included, up to `max`
	 * (each at most apic_layout()->max_id); returns how many.
	 */
	uint32_t (*cpus)(uint32_t *apic_ids, uint32_t max);
	/*
	 * The n-th (from 0) region of memory the host shares with this machine
	 * other than card memory: its physical base and size in bytes (not yet
	 * mapped). A PC in QEMU: BAR 2 of the n-th ivshmem device with a memory
	 * BAR (QEMU docs/specs/ivshmem-spec.rst); a card: none (its mailbox is
	 * in card memory, pmuos.mbox=). The mailbox is region 0 unless the
	 * command line places it; the QEMU plugin's page is found among them by
	 * its size and magic. False when there is no n-th region.
	 */
	bool (*shared_memory)(unsigned n, uint64_t *base, uint64_t *size);
	/*
	 * Sets up the doorbell beside shared memory region 0, its rings at IDT
	 * vector `vector` (not yet routed to a CPU: route). NULL if there is none.
	 */
	const struct host_doorbell *(*doorbell)(uint8_t vector);
	/*
	 * Called on the sending CPU after each IPI it sent to another CPU: what
	 * makes the target see it promptly if the machine needs help for that.
	 * Any context. NULL: nothing.
	 */
	void (*ipi_sent)(void);
	/*
	 * Tasks run (true) or the last one ended (false) (kernel/task.h
	 * task_on_running): what the machine needs while CPUs are busy (a PC
	 * under QEMU: turns of bounded length for each busy vCPU). Any CPU, at
	 * once, the same state again included: the last call gives the state
	 * now. NULL: nothing.
	 */
	void (*tasks_running)(bool running);
	/*
	 * Flushes the host emulator's TLB unseen by the guest, so that it can
	 * grow it for a long task (kernel/hosttlb.h). Any CPU, interrupts off.
	 * NULL: nothing (a card has no emulator).
	 */
	void (*host_tlb_flush)(void);
	/*
	 * Writes POST mark `code` (include/pmuos/post.h, 16 bits) where the
	 * host reads it (kernel/post.h registers it). BSP; from console_init
	 * until paging_init (the boot page tables) and after init. NULL: no
	 * such register (a PC).
	 */
	void (*post)(uint32_t code);
	/* kernel/power.h: off (returns why not), warm reset (returns only if it cannot, with why). */
	const char *(*power_off)(void);
	const char *(*power_reset)(void);
};

/* The platform in force (platform_pc until init/main.c chooses). */
extern const struct platform *platform;
/* Chooses p, on the BSP, before anything above calls the platform. */
void platform_use(const struct platform *p);

/* Shorthands for platform->... */
static inline void platform_console_init(void) { platform->console_init(); }
static inline const char *platform_init(const struct boot_info *bi) { return platform->init(bi); }
static inline void platform_time_init(void) { platform->time_init(); }
static inline void platform_irq_init(void) { platform->irq_init(); }
static inline uint32_t platform_cpus(uint32_t *ids, uint32_t max) { return platform->cpus(ids, max); }
static inline bool platform_shared_memory(unsigned n, uint64_t *base, uint64_t *size)
{
	return platform->shared_memory(n, base, size);
}

static inline const struct host_doorbell *platform_doorbell(uint8_t vector)
{
	return platform->doorbell(vector);
}

#endif
