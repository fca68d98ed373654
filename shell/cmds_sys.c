/* System shell commands: version, cpus, mem, uptime, echo, sleep, reboot, poweroff, debug. */
#include "shell/shell.h"
#include "kernel/boot.h"
#include "kernel/console.h"
#include "kernel/idle.h"
#include "lib/lib.h"
#include "kernel/percpu.h"
#include "kernel/pmm.h"
#include "kernel/power.h"
#include "arch/sync.h"
#include "kernel/smp.h"
#include "kernel/timer.h"
#include "arch/tsc.h"
#include "apic/apic.h"

static const char *const boot_path_names[] = {
	[BOOT_PATH_MULTIBOOT] = "Multiboot",
	[BOOT_PATH_UEFI] = "UEFI",
	[BOOT_PATH_LINUX] = "Linux boot protocol",
};

static int cmd_version(int argc, char **argv)
{
	kprintf("pmuos %s (x86_64, built with gcc %s)\n", PMUOS_VERSION, __VERSION__);
	kprintf("boot: %s via %s; command line '%s'\n", boot_path_names[boot_info.boot_path],
		boot_info.loader[0] ? boot_info.loader : "unknown loader", boot_info.cmdline);
	return 0;
}
SHELL_COMMAND(version, "version", "", "kernel version and boot path", 0, 0, cmd_version);

static int cmd_cpus(int argc, char **argv)
{
	kprintf("CPU  APIC  CORE  THREAD  STATE\n");
	for (uint32_t i = 0; i < cpu_count; i++) {
		const struct percpu *p = cpu_table[i];
		kprintf("%3u  %4u  %4u  %6u  %s", i, p->apic_id, smp_core_of(i), smp_thread_of(i),
			cpu_state_name(p->state));
		if (p->state == CPU_ONLINE && !smp_cpu_answering(i))
			kprintf(" (not answering IPIs: hung? 'cpu init %u' recovers it)", i);
		if (p->state == CPU_FAULTED)
			kprintf(" (%s)", p->stop_why);
		kprintf("\n");
	}
	kprintf("%u CPUs, %u online\n", cpu_count, smp_online_count());
	return 0;
}
SHELL_COMMAND(cpus, "cpus", "", "list hardware threads and their state", 0, 0, cmd_cpus);

static const char *mem_type_name(uint32_t t)
{
	switch (t) {
	case BOOT_MEM_USABLE: return "usable";
	case BOOT_MEM_ACPI_RECLAIM: return "ACPI reclaimable";
	case BOOT_MEM_ACPI_NVS: return "ACPI NVS";
	case BOOT_MEM_BAD: return "bad";
	case BOOT_MEM_HOST: return "host mailbox";
	case BOOT_MEM_IMAGE: return "boot image";
	default: return "reserved";
	}
}

static int cmd_mem(int argc, char **argv)
{
	extern char __kernel_start[], __kernel_end[];
	uint64_t ks = (uint64_t)__kernel_start, ke = (uint64_t)__kernel_end;

	kprintf("usable %lu KiB, free %lu KiB, kernel image %#lx-%#lx (%lu KiB)\n",
		pmm_usable_bytes() >> 10, pmm_free_bytes() >> 10, ks, ke, (ke - ks) >> 10);
	kprintf("memory map (%u entries):\n", boot_info.mmap_count);
	for (uint32_t i = 0; i < boot_info.mmap_count; i++) {
		const struct boot_mmap_entry *e = &boot_info.mmap[i];
		kprintf("  %016lx-%016lx %10lu KiB  %s\n", e->base, e->base + e->length - 1,
			e->length >> 10, mem_type_name(e->type));
	}
	return 0;
}
SHELL_COMMAND(mem, "mem", "", "physical memory: totals and the boot memory map", 0, 0, cmd_mem);

static int cmd_uptime(int argc, char **argv)
{
	uint64_t now = rdtsc(), us = tsc_to_us(now - boot_tsc);

	kprintf("up %lu.%06lu s (%lu TSC ticks at %lu Hz since kernel entry)\n",
		us / 1000000, us % 1000000, now - boot_tsc, tsc_hz);
	kprintf("kernel entry to first prompt: %lu TSC ticks\n", prompt_tsc - boot_tsc);
	return 0;
}
SHELL_COMMAND(uptime, "uptime", "", "time since the kernel was entered", 0, 0, cmd_uptime);

static int cmd_echo(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		kprintf("%s%s", i > 1 ? " " : "", argv[i]);
	kprintf("\n");
	return 0;
}
SHELL_COMMAND(echo, "echo", "[WORD...]", "print the words", 0, SHELL_MAX_ARGS, cmd_echo);

static void sleep_done(struct timer *t)
{
	*(volatile int *)t->arg = 1;
}

/* The timer fired, or Ctrl-C: console_take_ctrl_c only reads the ring, interrupts off is fine. */
static bool sleep_over(void *arg)
{
	return *(volatile int *)arg || (*(volatile int *)arg = shell_interrupted() ? 2 : 0);
}

static int cmd_sleep(int argc, char **argv)
{
	uint64_t ms;
	struct timer t = { 0 };
	volatile int done = 0;

	if (!parse_u64(argv[1], 3600000, &ms))
		return shell_error("sleep", "'%.32s' is not a number of milliseconds (0-3600000)", argv[1]);
	timer_arm(&t, rdtsc() + ms * (tsc_hz / 1000), sleep_done, (void *)&done);
	idle_until(sleep_over, (void *)&done);
	if (done == 2) {
		timer_cancel(&t);
		kprintf("^C: sleep interrupted\n");
	}
	return 0;
}
SHELL_COMMAND(sleep, "sleep", "MS", "wait MS milliseconds on the timer queue; Ctrl-C ends it", 1, 1, cmd_sleep);

static int cmd_reboot(int argc, char **argv)
{
	kprintf("rebooting (warm reset)\n");
	return shell_error("reboot", power_reset());
}
SHELL_COMMAND(reboot, "reboot", "", "warm reset of the card", 0, 0, cmd_reboot);

static int cmd_poweroff(int argc, char **argv)
{
	kprintf("powering off\n");
	return shell_error("poweroff", power_off());
}
SHELL_COMMAND(poweroff, "poweroff", "", "power the card off (QEMU exits with status 0)", 0, 0, cmd_poweroff);

/* ---- debug: deliberate faults, to show a fault stops only its CPU ---- */

static void fault_pf(void *arg) { *(volatile uint64_t *)0xdead0000000ULL = 1; }
static void fault_ud(void *arg) { __asm__ volatile("ud2"); }
/* A non-canonical address faults with #GP (TCG ignores unknown MSRs, so no WRMSR here). */
static void fault_gp(void *arg) { *(volatile uint64_t *)0x8000000000000000ULL = 1; }
static void fault_de(void *arg)
{
	volatile uint64_t zero = 0;
	__asm__ volatile("divq %0" :: "r"(zero), "a"(1ULL), "d"(0ULL));
}

/* Spins with interrupts off (they are off in an IPI handler) until INIT. */
static void hang(void *arg)
{
	for (;;)
		cpu_relax();
}

static const struct { const char *name; void (*fn)(void *); } faults[] = {
	{ "pf", fault_pf }, { "ud", fault_ud }, { "gp", fault_gp }, { "de", fault_de },
};

static int cmd_debug(int argc, char **argv)
{
	uint32_t cpu;
	const char *kind = argc > 3 ? argv[3] : "pf";

	bool is_hang = strcmp(argv[1], "hang") == 0;

	if (!is_hang && strcmp(argv[1], "fault") != 0)
		return shell_error("debug", "unknown action '%.32s' (expected: fault or hang)", argv[1]);
	if (argc < 3)
		return shell_error("debug", "%s needs a CPU number", argv[1]);
	if (!shell_parse_cpu("debug", argv[2], &cpu))
		return 1;
	if (is_hang) {
		if (argc > 3)
			return shell_error("debug", "hang takes only a CPU number");
		if (cpu == this_cpu()->cpu)
			return shell_error("debug", "CPU %u runs this shell; hang another one", cpu);
		if (smp_call(cpu, hang, NULL, false) != 0)
			return shell_error("debug", "CPU %u is not online", cpu);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(faults); i++) {
		if (strcmp(kind, faults[i].name) != 0)
			continue;
		if (smp_call(cpu, faults[i].fn, NULL, false) != 0)
			return shell_error("debug", "CPU %u is not online", cpu);
		return 0;
	}
	return shell_error("debug", "unknown fault '%.32s' (expected pf, ud, gp or de)", kind);
}
SHELL_COMMAND(debug, "debug", "fault CPU [pf|ud|gp|de] | hang CPU",
	      "make CPU take a kernel exception, or spin with interrupts off", 1, 3, cmd_debug);

static int cmd_cpu(int argc, char **argv)
{
	uint32_t cpu;

	if (strcmp(argv[1], "init") != 0)
		return shell_error("cpu", "unknown action '%.32s' (expected: init)", argv[1]);
	if (argc != 3)
		return shell_error("cpu", "init needs a CPU number");
	if (!shell_parse_cpu("cpu", argv[2], &cpu))
		return 1;
	if (cpu == 0)
		return shell_error("cpu", "CPU 0 is the BSP and runs this shell; INIT only reaches APs");
	int r = smp_reinit_cpu(cpu);
	if (r == -1)
		return shell_error("cpu", "CPU %u is starting already", cpu);
	if (r != 0)
		return shell_error("cpu", "CPU %u did not come back after INIT-SIPI-SIPI", cpu);
	kprintf("CPU %u is back online\n", cpu);
	return 0;
}
SHELL_COMMAND(cpu, "cpu", "init CPU", "re-enter an AP with INIT-SIPI-SIPI (PMU state is kept)", 2, 2, cmd_cpu);
