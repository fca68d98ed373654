/*
 * The local APIC timer behind each CPU's software timer queue (DESIGN §4):
 * TSC-deadline mode where CPUID.1:ECX[24] offers it, else one-shot mode
 * calibrated against the TSC.
 */
#include "apic/apic.h"
#include "kernel/percpu.h"
#include "kernel/irq.h"
#include "kernel/tsc.h"
#include "kernel/timer.h"

#define CPUID1_ECX_TSC_DEADLINE (1u << 24)
#define CALIB_US 10000

static bool use_deadline;
static uint64_t timer_hz;

bool apic_timer_tsc_deadline(void) { return use_deadline; }
uint64_t apic_timer_hz(void) { return timer_hz; }

void apic_timer_calibrate(void)
{
	use_deadline = cpuid(1, 0).ecx & CPUID1_ECX_TSC_DEADLINE;
	if (use_deadline)
		return;
	apic_write(APIC_TIMER_DIV, APIC_TIMER_DIV_1);
	apic_write(APIC_LVT_TIMER, APIC_LVT_MASKED | APIC_LVT_TIMER_ONESHOT);
	apic_write(APIC_TIMER_INIT, 0xffffffff);
	uint64_t t0 = rdtsc();
	delay_us(CALIB_US);
	uint32_t left = apic_read(APIC_TIMER_CUR);
	uint64_t t1 = rdtsc();
	apic_write(APIC_TIMER_INIT, 0);
	timer_hz = (uint64_t)(0xffffffffu - left) * tsc_hz / (t1 - t0);
}

/* Programs the hardware for the queue head, or stops it when the queue is empty. */
static void hw_program(struct timer_queue *q)
{
	if (use_deadline) {
		wrmsr(MSR_TSC_DEADLINE, q->head ? q->head->deadline : 0);
		return;
	}
	if (!q->head) {
		apic_write(APIC_TIMER_INIT, 0);
		return;
	}
	uint64_t now = rdtsc(), d = q->head->deadline;
	uint64_t delta = d > now ? d - now : 0;
	uint64_t ticks = delta / tsc_hz * timer_hz + delta % tsc_hz * timer_hz / tsc_hz;

	apic_write(APIC_TIMER_INIT, ticks == 0 ? 1 : ticks > 0xffffffffu ? 0xffffffffu : (uint32_t)ticks);
}

static void timer_irq(struct trap_frame *f)
{
	struct timer_queue *q = &this_cpu()->timers;
	struct timer *t;

	/* A one-shot tick may land before the deadline: anything not due is re-armed. */
	while ((t = timerq_pop_expired(q, rdtsc())))
		t->fn(t);
	hw_program(q);
}

void apic_timer_init_local(void)
{
	irq_register(VEC_TIMER, timer_irq);
	if (use_deadline) {
		apic_write(APIC_LVT_TIMER, APIC_LVT_TIMER_TSCDEADLINE | APIC_LVT_VECTOR(VEC_TIMER));
	} else {
		apic_write(APIC_TIMER_DIV, APIC_TIMER_DIV_1);
		apic_write(APIC_LVT_TIMER, APIC_LVT_TIMER_ONESHOT | APIC_LVT_VECTOR(VEC_TIMER));
	}
	/* After INIT the queue may hold timers the APIC no longer knows about. */
	hw_program(&this_cpu()->timers);
}

void timer_arm(struct timer *t, uint64_t deadline, timer_fn fn, void *arg)
{
	uint64_t f = irq_save();
	struct timer_queue *q = &this_cpu()->timers;

	if (t->armed)
		timerq_remove(q, t);
	t->deadline = deadline;
	t->fn = fn;
	t->arg = arg;
	timerq_insert(q, t);
	if (q->head == t)
		hw_program(q);
	irq_restore(f);
}

void timer_cancel(struct timer *t)
{
	uint64_t f = irq_save();
	struct timer_queue *q = &this_cpu()->timers;

	if (t->armed && timerq_remove(q, t))
		hw_program(q);
	irq_restore(f);
}
