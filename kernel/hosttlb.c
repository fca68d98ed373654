/* Flushes of the host's TLB early in a long task; see kernel/hosttlb.h. */
#include "kernel/hosttlb.h"
#include <stddef.h>
#include "kernel/percpu.h"
#include "kernel/timer.h"
#include "arch/tsc.h"
#include "arch/x86.h"

/*
 * The first flush comes after 16 ms of TSC (16 M instructions under -icount
 * shift=0): a task shorter than that is never interrupted for it. Then
 * HOST_TLB_FLUSHES - 1 more, 4 ms apart (none while a region is open): QEMU doubles a full TLB at each (256 to 4,096
 * entries), and keeps that size until the next flush, the task's end.
 * None comes inside a SPFLT region: a flush there came at a TSC deadline,
 * and the TSC counts every vCPU's instructions, so it fell at an instruction
 * of the region that moved with what the other vCPUs ran (under a ping flood
 * on a loaded host, one L1 miss more in some runs: 23 cycles). Arming it by
 * the thread's own clock was tried and still varied under load.
 */
#define HOST_TLB_FIRST_US 16000
#define HOST_TLB_GAP_US   4000
#define HOST_TLB_FLUSHES  5

static void (*host_flush)(void);
/*
 * A flush reaches every vCPU's TLB, so one per HOST_TLB_GAP_US serves all
 * CPUs' tasks: the TSC from which the next is due. Without that, 243 tasks
 * starting together made up to 1,215 changes of QEMU's memory map, each flushing
 * 244 TLBs: test_full_card took 202 s instead of 40.
 */
static uint64_t next_flush;
static struct timer timers[MAX_CPUS];
static uint8_t left[MAX_CPUS];

void host_tlb_register(void (*flush)(void))
{
	host_flush = flush;
}

static void due(struct timer *t)
{
	uint32_t cpu = this_cpu()->cpu;
	uint64_t next = __atomic_load_n(&next_flush, __ATOMIC_RELAXED);

	if (rdtsc() >= next && __atomic_compare_exchange_n(&next_flush, &next, tsc_deadline_us(HOST_TLB_GAP_US), false,
							   __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		host_flush();
	if (--left[cpu])
		timer_arm(t, tsc_deadline_us(HOST_TLB_GAP_US), due, NULL);
}

void host_tlb_task_start(void)
{
	uint32_t cpu = this_cpu()->cpu;

	if (!host_flush)
		return;
	left[cpu] = HOST_TLB_FLUSHES;
	timer_arm(&timers[cpu], tsc_deadline_us(HOST_TLB_FIRST_US), due, NULL);
}

void host_tlb_task_end(void)
{
	uint32_t cpu = this_cpu()->cpu;

	if (!host_flush)
		return;
	left[cpu] = 0;
	timer_cancel(&timers[cpu]);
}

void host_tlb_region(bool open)
{
	uint32_t cpu = this_cpu()->cpu;

	if (!host_flush || !left[cpu])
		return;
	if (open)
		timer_cancel(&timers[cpu]);
	else
		timer_arm(&timers[cpu], tsc_deadline_us(HOST_TLB_GAP_US), due, NULL);
}
