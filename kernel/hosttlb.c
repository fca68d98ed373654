/* Flushes of the host's TLB early in a long task; see kernel/hosttlb.h. */
#include "kernel/hosttlb.h"
#include <stddef.h>
#include "kernel/percpu.h"
#include "kernel/timer.h"
#include "arch/tsc.h"

/*
 * The first flush comes after 16 ms of TSC (16 M instructions under -icount
 * shift=0): a task shorter than that is never interrupted for it. Then
 * HOST_TLB_FLUSHES - 1 more, 4 ms apart (none while a region is open): QEMU doubles a full TLB at each (256 to 4,096
 * entries), and keeps that size until the next flush, the task's end.
 */
#define HOST_TLB_FIRST_US 16000
#define HOST_TLB_GAP_US   4000
#define HOST_TLB_FLUSHES  5

static void (*host_flush)(void);
static struct timer timers[MAX_CPUS];
static uint8_t left[MAX_CPUS];

void host_tlb_register(void (*flush)(void))
{
	host_flush = flush;
}

static void due(struct timer *t)
{
	uint32_t cpu = this_cpu()->cpu;

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
