/* AP start-up and cross-CPU calls; see kernel/smp.h. */
#include "kernel/smp.h"
#include "kernel/percpu.h"
#include "kernel/console.h"
#include "arch/fpu.h"
#include "kernel/trap.h"
#include "lib/lib.h"
#include "kernel/paging.h"
#include "kernel/pmm.h"
#include "arch/sync.h"
#include "kernel/timer.h"
#include "arch/tsc.h"
#include "apic/apic.h"
#include "kernel/idle.h"
#include "kernel/cpu_hooks.h"
#include "kernel/task.h"
#include "arch/mtrr.h"
#include "kernel/post.h"
#include <pmuos/post.h>

#define KSTACK_PAGES 4
#define IST_PAGES 1
/*
 * Intel SDM Vol. 3A 8.4.4.1: INIT, 10 ms, SIPI, 200 us, SIPI; the 10 ms
 * between INIT's assert and its de-assert, as Linux sends it
 * (arch/x86/kernel/smpboot.c send_init_sequence: level-triggered INIT
 * assert, udelay(init_udelay), INIT de-assert, each to the one AP). Processors
 * newer than those that sequence was written for take the SIPI without the
 * 10 ms: Linux (arch/x86/kernel/smpboot.c, smp_quirk_init_udelay, since its
 * 2025 change to every Intel family from 6) waits 0 after INIT on Intel
 * family 6 and later and AMD family 0xF and later, and 10 us after each
 * SIPI when it waits 0 after INIT. KNC (family 0xB) keeps the SDM's delays,
 * as the card's own Linux (the older quirk: Intel family 6 only) did.
 */
#define INIT_DELAY_US 10000
#define SIPI_DELAY_US 200
#define MODERN_INIT_DELAY_US 0
#define MODERN_SIPI_DELAY_US 10
#define CHECKIN_TIMEOUT_US 1000000 /* all APs at once */
#define AP_CHECKIN_US      100000  /* one AP: its trampoline and setup take well under 1 ms */

extern const char trampoline_start[], trampoline_end[];
extern const uint16_t trampoline_fixups[], trampoline_fixups_end[];

/* Read by boot/trampoline.S: each AP finds its stack by its APIC ID (9 bits on KNC). */
uint64_t ap_stack_by_apic[APIC_ID_LIMIT];
static uint64_t trampoline_page; /* where the start-up code is; 0: APs cannot be started */
static uint32_t threads_per_core = 1;
static uint32_t thread_bits; /* the APIC ID's thread field: the bits that number threads_per_core (a power of two) */
static struct mtrr_state bsp_mtrrs; /* what the BSP's MTRRs hold, for each AP to load (arch/mtrr.h) */

uint32_t smp_threads_per_core(void) { return threads_per_core; }

uint32_t smp_core_of(uint32_t cpu)
{
	return cpu < cpu_count ? cpu_table[cpu]->apic_id >> thread_bits : UINT32_MAX;
}

uint32_t smp_thread_of(uint32_t cpu)
{
	return cpu < cpu_count ? cpu_table[cpu]->apic_id & ((1u << thread_bits) - 1) : UINT32_MAX;
}

uint32_t smp_online_count(void)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < cpu_count; i++)
		n += cpu_table[i]->state == CPU_ONLINE;
	return n;
}

static void call_irq(struct trap_frame *f)
{
	struct smp_call *c = &this_cpu()->call;

	if (!READ_ONCE(c->pending))
		return;
	c->fn(c->arg);
	uint32_t caller = c->caller_apic;
	bool wake = c->wake;
	smp_mb();
	WRITE_ONCE(c->pending, 0);
	/*
	 * A waiting caller halts (a spinning CPU would be counted): wake it. No
	 * other: under -icount a CPU woken for nothing runs its idle loop on the
	 * clock of whatever thread is being measured.
	 */
	if (wake)
		smp_wake_apic(caller);
}

static void wake_irq(struct trap_frame *f) {}

#define YIELD_US 10

static void wake_timeout(struct timer *t) {}

/* A bare halt, not idle_sleep_us: no idle work (a nested mailbox poll) under a task's trap frame. */
void smp_halt_us(uint64_t us)
{
	struct timer t = { 0 };
	uint64_t end = tsc_deadline_us(us);

	if (!irqs_enabled()) {
		while (rdtsc() < end)
			cpu_relax();
		return;
	}
	timer_arm(&t, end, wake_timeout, NULL);
	while (rdtsc() < end) {
		cli();
		if (rdtsc() < end)
			idle_wait();
		sti();
	}
	timer_cancel(&t);
}

void smp_yield_to_woken(void)
{
	struct percpu *p = this_cpu();

	if (!p->woke_others || !irqs_enabled())
		return;
	p->woke_others = false;
	smp_halt_us(YIELD_US);
}

/* Posts fn(arg) to p's call slot and sends the IPI (wake: the caller will wait); false if the slot is taken. */
static bool post(struct percpu *p, void (*fn)(void *), void *arg, bool wake)
{
	struct smp_call *c = &p->call;

	if (__atomic_exchange_n(&c->pending, 1, __ATOMIC_ACQUIRE))
		return false;
	c->fn = fn;
	c->arg = arg;
	c->caller_apic = this_cpu()->apic_id;
	c->wake = wake;
	c->posted_tsc = rdtsc();
	smp_mb();
	apic_send_fixed(p->apic_id, VEC_CALL);
	return true;
}

int smp_call(uint32_t cpu, void (*fn)(void *), void *arg, bool wait)
{
	if (cpu >= cpu_count || cpu_table[cpu]->state != CPU_ONLINE)
		return -1;
	struct percpu *p = cpu_table[cpu];

	if (p == this_cpu()) {
		uint64_t f = irq_save();
		fn(arg);
		irq_restore(f);
		return 0;
	}
	uint64_t end = tsc_deadline_us(SMP_CALL_TIMEOUT_US);
	while (!post(p, fn, arg, wait)) {
		if (rdtsc() > end)
			return -2;
		cpu_relax();
	}
	return wait ? smp_call_wait(cpu) : 0;
}

static int post_to(uint32_t cpu, void (*fn)(void *), void *arg, bool wake)
{
	if (cpu >= cpu_count || cpu_table[cpu]->state != CPU_ONLINE || cpu_table[cpu] == this_cpu())
		return -1;
	return post(cpu_table[cpu], fn, arg, wake) ? 0 : -2;
}

int smp_call_try(uint32_t cpu, void (*fn)(void *), void *arg)
{
	int r;

	while ((r = post_to(cpu, fn, arg, true)) == -2 && smp_cpu_answering(cpu))
		smp_halt_us(YIELD_US);
	return r;
}

int smp_call_async(uint32_t cpu, void (*fn)(void *), void *arg) { return post_to(cpu, fn, arg, false); }

int smp_call_wait(uint32_t cpu)
{
	struct smp_call *c = &cpu_table[cpu]->call;
	uint64_t end = tsc_deadline_us(SMP_CALL_TIMEOUT_US);
	bool can_halt = irqs_enabled();
	struct timer t = { 0 };

	/* Halt until the target's wake IPI, or the timeout timer. */
	if (can_halt)
		timer_arm(&t, end, wake_timeout, NULL);
	while (READ_ONCE(c->pending) && rdtsc() < end) {
		if (!can_halt) {
			cpu_relax();
			continue;
		}
		cli();
		if (READ_ONCE(c->pending))
			idle_wait();
		sti();
	}
	if (can_halt)
		timer_cancel(&t);
	return READ_ONCE(c->pending) ? -2 : 0;
}

bool smp_cpu_answering(uint32_t cpu)
{
	const struct smp_call *c = &cpu_table[cpu]->call;

	return !READ_ONCE(c->pending) ||
	       rdtsc() - c->posted_tsc < SMP_CALL_TIMEOUT_US * (tsc_hz / 1000000);
}

void cpu_setup_local(struct percpu *p, bool rejoin)
{
	percpu_install(p);
	gdt_load(p);
	idt_load();
	write_cr3(kernel_cr3);
	write_cr4(read_cr4() | CR4_PCE);
	fpu_cpu_init();
	apic_enable_local();
	timer_cpu_init();
	cpu_hooks.online(rejoin);
	task_cpu_init();
}

static struct percpu *percpu_new(uint32_t cpu, uint32_t apic)
{
	struct percpu *p = page_alloc(1);
	uint8_t *kstack = page_alloc(KSTACK_PAGES);

	if (!p || !kstack)
		return NULL;
	p->cpu = cpu;
	p->apic_id = apic;
	p->kstack_top = (uint64_t)kstack + KSTACK_PAGES * PAGE_SIZE;
	uint8_t *tstack = page_alloc(KSTACK_PAGES);
	if (!tstack)
		return NULL;
	p->tstack_top = (uint64_t)tstack + KSTACK_PAGES * PAGE_SIZE;
	for (int i = 0; i < 3; i++) {
		uint8_t *ist = page_alloc(IST_PAGES);
		if (!ist)
			return NULL;
		p->ist_top[i] = (uint64_t)ist + IST_PAGES * PAGE_SIZE;
	}
	cpu_table[cpu] = p;
	cpu_by_apic[apic] = p;
	return p;
}

/* The BSP's per-CPU block lives in .bss: it is needed before the allocator. */
static struct percpu bsp_percpu;

void smp_bsp_early(void)
{
	percpu_install(&bsp_percpu);
}

void smp_bsp_setup(void)
{
	struct percpu *p = &bsp_percpu;
	uint64_t rsp;

	__asm__ volatile("movq %%rsp, %0" : "=r"(rsp));
	p->cpu = 0;
	p->apic_id = apic_id();
	p->kstack_top = ALIGN_UP(rsp, PAGE_SIZE); /* the boot stack */
	p->tstack_top = p->kstack_top;             /* the BSP runs no tasks */
	for (int i = 0; i < 3; i++)
		p->ist_top[i] = (uint64_t)page_alloc(IST_PAGES) + IST_PAGES * PAGE_SIZE;
	cpu_table[0] = p;
	cpu_by_apic[p->apic_id] = p;
	cpu_count = 1;
	irq_register(VEC_CALL, call_irq);
	irq_register(VEC_WAKE, wake_irq);
	cpu_setup_local(p, false);
	p->online_tsc = rdtsc();
	p->state = CPU_ONLINE;

	/* Leaf 0xB, or leaves 1 and 4 where it is missing (a KNC core: arch/x86.h). */
	uint32_t max_leaf = cpuid(0, 0).eax;
	struct cpuid_regs none = { 0 };
	threads_per_core = cpuid_threads_per_core(max_leaf, cpuid(1, 0), max_leaf >= 4 ? cpuid(4, 0) : none,
						  max_leaf >= 0xb ? cpuid(0xb, 0) : none);
	while ((1u << thread_bits) < threads_per_core)
		thread_bits++;
}

static bool cpu_online(void *p)
{
	return ((struct percpu *)p)->state == CPU_ONLINE;
}

void ap_main(uint32_t apic)
{
	uint64_t cr0 = read_cr0(); /* as boot/trampoline.S left it */
	struct percpu *p = cpu_by_apic[apic];
	bool rejoin = p->rejoined;

	p->idle = false;
	p->call.pending = 0; /* a call it was stuck in is abandoned */
	cpu_setup_local(p, rejoin);
	const char *why = cr0_refused(cr0);
	if (why) {
		kprintf("smp: CPU %u (APIC %u) came out of the start-up code with CR0 %#lx\n", p->cpu, apic, cr0);
		kernel_stop(why);
	}
	mtrr_load(&bsp_mtrrs);
	if (rejoin) {
		cpu_hooks.rejoined();
		task_cpu_rejoined();
	}
	p->online_tsc = rdtsc();
	smp_mb();
	p->state = CPU_ONLINE;
	smp_wake_apic(cpu_table[0]->apic_id); /* a BSP waiting for this check-in halts (start_one_at_a_time) */
	for (;;) {
		cli();
		if (!task_run_next())
			idle_wait();
	}
}

/* INIT, de-assert, SIPI, SIPI (the second only if the first did not start it) to one AP, wait() between. */
static void kick(struct percpu *p, uint64_t init_us, uint64_t sipi_us, void (*wait)(uint64_t us))
{
	apic_send_init(p->apic_id);
	wait(init_us);
	apic_send_init_deassert(p->apic_id);
	apic_send_sipi(p->apic_id, trampoline_page >> 12);
	wait(sipi_us);
	if (p->state == CPU_STARTING)
		apic_send_sipi(p->apic_id, trampoline_page >> 12);
}

int smp_reinit_cpu(uint32_t cpu)
{
	if (cpu == 0 || cpu >= cpu_count || cpu_table[cpu]->state == CPU_STARTING || cpu_table[cpu] == this_cpu() ||
	    !trampoline_page)
		return -1;
	struct percpu *p = cpu_table[cpu];

	cpu_leaving_notify(cpu);
	p->rejoined = true;
	p->state = CPU_STARTING;
	cpu_hooks.init_sent(cpu);
	smp_mb();
	kick(p, INIT_DELAY_US, SIPI_DELAY_US, idle_sleep_us);
	if (idle_until_us(cpu_online, p, CHECKIN_TIMEOUT_US))
		return 0;
	p->state = CPU_FAILED;
	task_cpu_lost(cpu);
	return -2;
}

/* See INIT_DELAY_US: CPUID.0's vendor string and CPUID.1's family. */
static bool modern_cpu(void)
{
	struct cpuid_regs v = cpuid(0, 0);
	uint32_t family = cpuid_family(cpuid(1, 0).eax);

	if (v.ebx == 0x756e6547 && v.edx == 0x49656e69 && v.ecx == 0x6c65746e) /* "GenuineIntel" */
		return family >= 6 && family != CPUID_FAMILY_KNC;
	if (v.ebx == 0x68747541 && v.edx == 0x69746e65 && v.ecx == 0x444d4163) /* "AuthenticAMD" */
		return family >= 0xf;
	return false;
}

static void send_sipis(uint32_t first, uint32_t state)
{
	for (uint32_t i = first; i < cpu_count; i++)
		if (cpu_table[i]->state == state)
			apic_send_sipi(cpu_table[i]->apic_id, trampoline_page >> 12);
}

/* The start-up code at `page`, the page's address added where trampoline_fixups say. */
static void trampoline_install(uint64_t page)
{
	uint8_t *to = (uint8_t *)page;

	memcpy(to, trampoline_start, trampoline_end - trampoline_start);
	for (const uint16_t *f = trampoline_fixups; f < trampoline_fixups_end; f++) {
		uint32_t v;
		memcpy(&v, to + *f, 4);
		v += (uint32_t)page;
		memcpy(to + *f, &v, 4);
	}
	trampoline_page = page;
}

/*
 * Each AP gets its own INIT assert, de-assert and SIPIs (no shorthand),
 * but each step goes to all APs before the next: one INIT delay and one
 * SIPI delay for the whole machine.
 * The BSP spins rather than halts, here and in start_one_at_a_time: under
 * -icount (sleep on) a halt with every vCPU idle lets the virtual clock,
 * the TSC, run at host real time while QEMU handles the INITs and SIPIs,
 * so the boot's TSC count would depend on the host's speed; spinning it
 * stays exact.
 */
static void start_all_at_once(uint64_t init_us, uint64_t sipi_us)
{
	for (uint32_t i = 1; i < cpu_count; i++)
		apic_send_init(cpu_table[i]->apic_id);
	delay_us(init_us);
	for (uint32_t i = 1; i < cpu_count; i++)
		apic_send_init_deassert(cpu_table[i]->apic_id);
	send_sipis(1, CPU_STARTING);
	delay_us(sipi_us);
	send_sipis(1, CPU_STARTING); /* ignored by APs already running */

	uint64_t end = tsc_deadline_us(CHECKIN_TIMEOUT_US);
	while (smp_online_count() < cpu_count && rdtsc() < end)
		cpu_relax();
}

static bool ap_started(void *p) { return ((struct percpu *)p)->state != CPU_STARTING; }

static void print_run(uint32_t from, uint32_t to)
{
	kprintf(from == to ? " %u" : " %u-%u", from, to);
}

/*
 * INIT, de-assert, SIPI, SIPI to one AP, then a wait for it to check in
 * (online, or stopped by its own checks: ap_main) before the next, in the
 * platform's order. Linux on a 3120A brought up its 228 threads only this
 * way; sent to all at once they hung (Lasimeri/Intel-Phi-3120A, its serial
 * AP bring-up patch; docs/knc.md "AP start-up"). The order goes to the log
 * as runs of APIC IDs.
 */
static void start_one_at_a_time(uint64_t init_us, uint64_t sipi_us)
{
	uint32_t run_from = 0, run_to = 0, runs = 0;

	/*
	 * The INIT and SIPI delays and the wait for each check-in halt (the AP
	 * wakes this CPU: ap_main): spinning, this CPU would take most of
	 * QEMU's round-robin turns from the one AP that has work (243 APs of a
	 * simulated card took 59 s to start so, 17 s with only the check-in
	 * halting, 6 s now). Interrupts are on for it: the timer and the wake
	 * are this CPU's only sources yet.
	 */
	sti();

	kprintf("smp: starting %u APs one at a time (INIT, %lu us, SIPI, %lu us, SIPI; each checked in before the next), APIC",
		cpu_count - 1, init_us, sipi_us);
	for (uint32_t i = 1; i < cpu_count; i++) {
		struct percpu *p = cpu_table[i];
		post_mark(PMUOS_POST_AP(p->apic_id));
		kick(p, init_us, sipi_us, smp_halt_us);
		idle_until_us(ap_started, p, AP_CHECKIN_US);
		if (runs && p->apic_id == run_to + 1) {
			run_to++;
			continue;
		}
		if (runs++)
			print_run(run_from, run_to);
		run_from = run_to = p->apic_id;
	}
	if (runs)
		print_run(run_from, run_to);
	kprintf("\n");
	cli();
}

void smp_init(const uint32_t *apic_ids, uint32_t n, uint64_t page, bool one_at_a_time)
{
	uint32_t bsp_apic = this_cpu()->apic_id;

	if (n > 1 && (!page || page & 0xfff || page >= 0x100000)) {
		kprintf("smp: no free 4 KiB page of RAM below 1 MiB in the memory map for the AP start-up code "
			"(a SIPI vector is its page number): only the boot CPU runs\n");
		return;
	}
	if (n > 1) {
		trampoline_install(page);
		kprintf("smp: AP start-up code at %#lx (SIPI vector %#lx)\n", page, page >> 12);
	}
	for (uint32_t i = 0; i < n && cpu_count < MAX_CPUS; i++) {
		uint32_t apic = apic_ids[i];
		if (apic == bsp_apic || apic > apic_layout()->max_id || cpu_by_apic[apic])
			continue;
		struct percpu *p = percpu_new(cpu_count, apic);
		if (!p) {
			kprintf("smp: out of memory for CPU %u (APIC %u)\n", cpu_count, apic);
			break;
		}
		p->state = CPU_STARTING;
		cpu_hooks.prepare(p->cpu);
		ap_stack_by_apic[apic] = p->kstack_top;
		cpu_count++;
	}
	smp_mb();
	if (cpu_count == 1)
		return;
	mtrr_save(&bsp_mtrrs);

	bool modern = modern_cpu();
	uint64_t init_us = modern ? MODERN_INIT_DELAY_US : INIT_DELAY_US;
	uint64_t sipi_us = modern ? MODERN_SIPI_DELAY_US : SIPI_DELAY_US;
	if (one_at_a_time)
		start_one_at_a_time(init_us, sipi_us);
	else
		start_all_at_once(init_us, sipi_us);
	for (uint32_t i = 1; i < cpu_count; i++)
		if (cpu_table[i]->state == CPU_STARTING) {
			cpu_table[i]->state = CPU_FAILED;
			kprintf("smp: CPU %u (APIC %u) did not start\n", i, cpu_table[i]->apic_id);
		}
}
