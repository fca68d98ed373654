/*
 * SMP: start every processor the platform lists with INIT-SIPI-SIPI
 * (docs/design.md §2), and run functions on other CPUs through an IPI.
 */
#ifndef KERNEL_SMP_H
#define KERNEL_SMP_H

#include <stdint.h>
#include <stdbool.h>

#define SMP_CALL_TIMEOUT_US 100000

/* BSP: installs its static per-CPU block (first thing, so the console lock works). */
void smp_bsp_early(void);
/* BSP: IST stacks, GDT/TSS, IDT, APIC and timer (after the allocator and APIC calibration). */
void smp_bsp_setup(void);
/*
 * BSP, once: starts the processors with the `n` APIC IDs `apic_ids`
 * (0..apic_layout()->max_id; the BSP's, repeats and higher IDs are skipped;
 * at most MAX_CPUS in all) and waits (bounded) until each checks in or
 * fails. one_at_a_time: INIT and SIPIs to one AP, which checks in (or
 * fails, 100 ms at most) before the next gets its INIT, as a KNC card has
 * been seen to need; else each step to all APs at once (1 s for all to
 * check in). The start-up code goes to `page` (physical, 4 KiB-aligned,
 * below 1 MiB: the SIPI vector is page >> 12; boot_low_page finds one),
 * which must stay the kernel's for good (a CPU rejoins through it). page
 * 0, or one that is not such a page, starts none and says so. Each AP
 * loads the BSP's MTRRs (arch/mtrr.h).
 */
void smp_init(const uint32_t *apic_ids, uint32_t n, uint64_t page, bool one_at_a_time);
/* Number of CPUs in state CPU_ONLINE. */
uint32_t smp_online_count(void);
/* Threads per core (from CPUID: cpuid_threads_per_core), for core/thread numbering. */
uint32_t smp_threads_per_core(void);
/*
 * CPU `cpu`'s core and its thread in the core: its APIC ID's fields, the
 * thread in the low bits that number smp_threads_per_core() threads (on a
 * card, APIC ID = core * 4 + thread: arch/x86.h cpuid_threads_per_core).
 * UINT32_MAX for a CPU the card does not have.
 */
uint32_t smp_core_of(uint32_t cpu);
uint32_t smp_thread_of(uint32_t cpu);

/*
 * Runs fn(arg) on `cpu` in its interrupt context (interrupts off). With
 * `wait`, returns after fn returned. Returns 0, -1 if the CPU does not exist
 * or is not online, -2 if its call slot stayed busy or fn did not finish
 * within SMP_CALL_TIMEOUT_US (the CPU may be hung).
 */
int smp_call(uint32_t cpu, void (*fn)(void *), void *arg, bool wait);
/*
 * Posts fn(arg) to another CPU without waiting for fn: -1 if it is not
 * online (or is the caller), -2 if a call to it has been pending longer
 * than SMP_CALL_TIMEOUT_US (it may be hung). A younger call in its slot
 * (another CPU's, e.g. the mailbox's hand-over) is waited for, halted
 * where the caller can: failing at once made pmuctl stat's STOP name a
 * CPU that was only 84-95 us behind (issue 23, 1 run in 6 on a full card).
 * `arg` must stay valid until the call ran, even past a timeout. The caller
 * may then wait with smp_call_wait (it is woken when fn returned).
 */
int smp_call_try(uint32_t cpu, void (*fn)(void *), void *arg);
/*
 * Posts without waiting for anything: -1 as smp_call_try, -2 if a call to
 * it is still pending. The caller never waits: it is not woken when fn
 * returns (a CPU woken for nothing would run its idle loop while another
 * thread is measured: under -icount that counts in the measured thread).
 */
int smp_call_async(uint32_t cpu, void (*fn)(void *), void *arg);
/* Waits (bounded) for a call posted with wait == false; 0 or -2 as smp_call. */
int smp_call_wait(uint32_t cpu);
/* False when a call to `cpu` has been pending longer than SMP_CALL_TIMEOUT_US (hung?). */
bool smp_cpu_answering(uint32_t cpu);
/*
 * Re-enters AP `cpu` through INIT-SIPI-SIPI, e.g. to recover a hung thread.
 * INIT leaves its PMU registers as they were (327357-001 §1.4.4): the AP reports
 * them when it is back, and ends the task INIT cut off. Returns 0, -1 for
 * the BSP, the calling CPU or a CPU that is starting, -2 if it did not come
 * back (its tasks are ended then).
 */
int smp_reinit_cpu(uint32_t cpu);

/*
 * Under QEMU -icount one thread runs every vCPU in turn, CPU 0 first, each up
 * to the next timer deadline, and one clock counts them all. A CPU about to
 * return to Ring 3 calls this: if it woke a CPU that runs no task since the
 * last call, it halts once, for at most 10 us of its own kernel time, so the
 * woken CPU runs now, inside this CPU's kernel time rather than in a measured
 * Ring-3 stretch (calib's 10^6-instruction region counted 1,000,434 without
 * it), and a task spinning here cannot keep it waiting for seconds. A CPU
 * that runs a task is given no turn: the halt would only put this CPU behind
 * a spinning one, and QEMU 7.2's round can leave the CPUs after a spinning
 * one no instructions until a host event (fixed in QEMU 8.1, "accel/tcg/
 * tcg-accel-ops-rr: ensure fairness with icount"). Interrupts must be on;
 * does nothing otherwise.
 */
void smp_yield_to_woken(void);
/*
 * Waits `us` microseconds (1..10^6) halted, woken by a timer of its own, with
 * no idle work (so no nested mailbox service): a CPU that waits for another
 * this way leaves QEMU's turns to it (above). With interrupts off it spins.
 */
void smp_halt_us(uint64_t us);


/*
 * Per-CPU set-up shared by the BSP and the APs: GDT/TSS, IDT, CR3, CR4,
 * APIC, timer, PMU. `rejoin`: the CPU came back through INIT.
 */
struct percpu;
void cpu_setup_local(struct percpu *p, bool rejoin);

#endif
