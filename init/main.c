/*
 * kernel_main: the BSP's path from either boot entry (boot/entry.S) to the
 * shell. The top of the layers (docs/layout.md): it wires the platform,
 * the core, the PMU and the mailbox together in order. APs join in ap_main
 * (kernel/smp.c).
 */
#include "kernel/boot.h"
#include "boot/mmap.h"
#include "platform/platform.h"
#include "platform/pc/pc.h"
#include "platform/knc/knc.h"
#include "arch/x86.h"
#include "kernel/console.h"
#include "lib/lib.h"
#include "kernel/paging.h"
#include "kernel/post.h"
#include <pmuos/post.h>
#include "kernel/percpu.h"
#include "kernel/pmm.h"
#include "kernel/smp.h"
#include "kernel/task.h"
#include "kernel/hosttlb.h"
#include "arch/tsc.h"
#include "apic/apic.h"
#include "pmu/pmu.h"
#include "shell/shell.h"
#include "mailbox/mailbox.h"

struct boot_info boot_info;
uint64_t prompt_tsc;

extern uint64_t boot_mb_magic, boot_mb_info, boot_uefi_info, boot_linux_params;
extern char __kernel_start[], __kernel_end[];

static void __attribute__((noreturn)) halt_forever(const char *why)
{
	kprintf("pmuos: %s; halting.\n", why);
	for (;;) {
		cli();
		hlt();
	}
}

/*
 * The local APIC in the platform's ID layout, or the one pmuos.apic= names
 * (apic/regs.h), its page uncached; changed if the boot CPU's ID does not
 * read as CPUID's through it (apic_fitting_layout).
 */
static void apic_setup(void)
{
	const char *bad;
	size_t bad_len;
	const struct apic_layout *named = apic_layout_choose(boot_info.cmdline, &bad, &bad_len);
	const struct apic_layout *l = named ? named : platform->apic_layout;

	if (bad)
		kprintf("pmuos.apic=%.*s: not xapic or knc; the %s platform's %s layout stays\n", (int)bad_len, bad,
			platform->name, l->name);
	apic_use_layout(l);
	if (!paging_map_identity(apic_phys_base(), PAGE_SIZE, true))
		halt_forever("cannot map the local APIC uncached (out of page-table memory)");
	apic_init_bsp();
	const struct apic_layout *fit = apic_fitting_layout();
	if (!fit)
		halt_forever("the boot CPU's APIC ID register holds CPUID's initial APIC ID in no known layout");
	if (fit != l) {
		kprintf("apic: the boot CPU's ID register reads %#x: CPUID's initial APIC ID in the %s layout, not the %s\n",
			apic_read(APIC_ID), fit->name, l->name);
		apic_use_layout(fit);
	}
	kprintf("apic: ID layout %s (%s): ID in bits %u:%u, IPI destination in bits %u:%u; boot CPU APIC ID %u\n",
		fit->name, fit != l ? "found" : named ? "pmuos.apic=" : "the platform's",
		fit->id_shift + fit->id_bits - 1, fit->id_shift, fit->dest_shift + fit->dest_bits - 1, fit->dest_shift,
		apic_id());
}

/*
 * The AP start-up page (boot_low_page): clear of what the boot left below
 * 1 MiB that may still be read (boot_params, the Multiboot information, the
 * SFI window 0xE0000-0xFFFFF).
 */
static uint64_t trampoline_page(void)
{
	const struct boot_range avoid[] = {
		{ boot_linux_params, 0x1000 }, { boot_mb_info, 0x1000 }, { 0xe0000, 0x20000 },
	};

	return boot_low_page(&boot_info, avoid, ARRAY_SIZE(avoid));
}

/* The boot path's information into boot_info; NULL, or why it cannot be used. */
static const char *read_boot_info(void)
{
	if (boot_uefi_info) {
		if (!uefi_to_boot_info(boot_uefi_info, &boot_info))
			return "UEFI boot info has a bad magic number";
	} else if (boot_linux_params) {
		if (!linux_to_boot_info(boot_linux_params, &boot_info))
			return "the Linux boot protocol's boot_params cannot be used";
	} else if (!multiboot_to_boot_info(boot_mb_magic, boot_mb_info, &boot_info)) {
		return "not started by a Multiboot loader or our UEFI loader";
	}
	boot_info.cmdline[BOOT_INFO_CMDLINE - 1] = 0;
	boot_info.loader[BOOT_INFO_LOADER - 1] = 0;
	return NULL;
}

/*
 * A card's CPU says so (arch/x86.h cpuid_knc_card: QEMU's strict KNC CPU is
 * under a hypervisor, in a PC); platform=knc|pc on the command line
 * overrides (a PC told it plays a card).
 */
static void choose_platform(void)
{
	const char *v;
	size_t n;

	platform_use(cpuid_knc_card(cpuid(1, 0)) ? &platform_knc : &platform_pc);
	if (cmdline_find(boot_info.cmdline, "platform", &v, &n)) {
		if (n == 3 && !strncmp(v, "knc", 3))
			platform_use(&platform_knc);
		else if (n == 2 && !strncmp(v, "pc", 2))
			platform_use(&platform_pc);
		else
			kprintf("pmuos: platform=%.*s: not knc or pc; staying on %s\n", (int)n, v, platform->name);
	}
}

/*
 * Whether the APs start one at a time (kernel/smp.h): pmuos.apstart=serial
 * or parallel; without it, one at a time on a KNC core (family 0x0B, the
 * card and the strict CPU), where Linux came up only that way, and all at
 * once elsewhere (the 243 APs of a simulated card start in 2 s so, 6 s one
 * at a time).
 */
static bool ap_start_serial(void)
{
	bool serial = cpuid_family(cpuid(1, 0).eax) == CPUID_FAMILY_KNC;
	const char *v;
	size_t n;

	if (cmdline_find(boot_info.cmdline, "pmuos.apstart", &v, &n)) {
		if (n == 6 && !strncmp(v, "serial", 6))
			serial = true;
		else if (n == 8 && !strncmp(v, "parallel", 8))
			serial = false;
		else
			kprintf("pmuos.apstart=%.*s: not serial or parallel; the APs start %s\n", (int)n, v,
				serial ? "one at a time" : "all at once");
	}
	return serial;
}

void __attribute__((noreturn)) kernel_main(void)
{
	smp_bsp_early();
	/* Kept until the platform's console exists (kernel/console.h): the boot info may name the platform. */
	kprintf("\npmuos %s: kernel entered\n", PMUOS_VERSION);

	const char *unusable = read_boot_info();
	choose_platform();
	platform_console_init();
	post_register(platform->post);
	post_mark(PMUOS_POST_KERNEL);
	if (unusable)
		halt_forever(unusable);

	/*
	 * Before the page allocator reads the map: the mailbox's place in card
	 * memory, and the image the host booted, are not RAM to hand out.
	 */
	struct boot_range mbox, image = { (uint64_t)__kernel_start, (uint64_t)(__kernel_end - __kernel_start) };
	const char *bad = boot_take_host_memory(&boot_info, image, &mbox);
	if (bad)
		kprintf("pmuos.mbox: %s; the mailbox stays in the memory the platform shares with the host\n", bad);
	struct boot_range kept;
	if ((bad = boot_keep_image(&boot_info, image, &kept)))
		kprintf("pmuos.image: %s; the image is not kept (a warm reset cannot boot it again)\n", bad);
	else if (kept.size)
		kprintf("pmuos.image: %lu KiB at %#lx kept for a warm reset\n", kept.size >> 10, kept.base);

	pmm_init(&boot_info);
	paging_init();
	const char *why = platform_init(&boot_info);
	if (why)
		halt_forever(why);
	post_mark(PMUOS_POST_MEMORY);

	platform_time_init();
	apic_setup();
	apic_timer_calibrate();
	pmu_init();
	smp_bsp_setup();
	platform_irq_init();
	task_init();
	/* What QEMU -icount needs to keep IPIs prompt (platform/pc/pit.c); a card needs nothing. */
	if (platform->ipi_sent)
		apic_on_ipi_sent(platform->ipi_sent);
	if (platform->tasks_running)
		task_on_running(platform->tasks_running);
	/* QEMU's TLB grown for long tasks, never inside a measured region (kernel/hosttlb.h). */
	if (platform->host_tlb_flush) {
		host_tlb_register(platform->host_tlb_flush);
		pmu_on_region(host_tlb_region);
	}
	static uint32_t cpus[MAX_CPUS];
	post_mark(PMUOS_POST_APS);
	smp_init(cpus, platform_cpus(cpus, ARRAY_SIZE(cpus)), trampoline_page(), ap_start_serial());
	post_mark(PMUOS_POST_APS_DONE);
	pmu_calibrate();
	mailbox_init(mbox.base, mbox.size);

	kprintf("pmuos: %u of %u CPUs online, TSC %lu.%03lu MHz, %lu MiB usable, boot via %s\n",
		smp_online_count(), cpu_count, tsc_hz / 1000000, tsc_hz / 1000 % 1000,
		pmm_usable_bytes() >> 20, boot_info.loader[0] ? boot_info.loader : "unknown loader");
	mailbox_ready();
	post_mark(PMUOS_POST_READY);
	sti();
	shell_run();
}
