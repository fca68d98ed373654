/*
 * The software timers of kernel/timer.h on each CPU's hardware timer: the
 * queue's head deadline goes to the APIC timer (apic/timer.c), whose
 * interrupt runs what is due.
 */
#include "kernel/timer.h"
#include "kernel/percpu.h"
#include "kernel/trap.h"
#include "apic/apic.h"
#include "arch/tsc.h"

/*
 * Programs the hardware for the queue head, or stops it when the queue is
 * empty; not when it already holds that deadline (hw_deadline). A write
 * costs an exit of the host emulator, and the PMU model's overflow timer,
 * re-armed while its interrupt is being handled, would otherwise be written
 * twice per sample (docs/design.md §5.4).
 */
static void hw_program(struct timer_queue *q)
{
	uint64_t d = q->head ? q->head->deadline : 0;

	if (d == q->hw_deadline)
		return;
	q->hw_deadline = d;
	apic_timer_set(d);
}

static void timer_irq(struct trap_frame *f)
{
	struct timer_queue *q = &this_cpu()->timers;
	struct timer *t;
	uint64_t now = rdtsc();

	/*
	 * The hardware has fired unless it was set since to a deadline still
	 * ahead (this interrupt was pending from before that write).
	 */
	if (q->hw_deadline <= now)
		q->hw_deadline = 0;
	this_cpu()->timer_frame = f; /* what a time sample records (pmu/cpu_clock.c) */
	/* A one-shot tick may land before the deadline: anything not due is re-armed. */
	while ((t = q->head) && t->deadline <= now) { /* the look without a call: at a sample, nothing is due */
		timerq_pop_expired(q, now);
		t->fn(t);
		now = rdtsc();
	}
	hw_program(q);
}

void timer_cpu_init(void)
{
	irq_register(VEC_TIMER, timer_irq);
	apic_timer_init_local(VEC_TIMER);
	/* After INIT the queue may hold timers the APIC no longer knows about. */
	this_cpu()->timers.hw_deadline = 0;
	hw_program(&this_cpu()->timers);
}

void timer_arm(struct timer *t, uint64_t deadline, timer_fn fn, void *arg)
{
	uint64_t f = irq_save();
	struct timer_queue *q = &this_cpu()->timers;

	t->fn = fn;
	t->arg = arg;
	if (t->armed && q->head == t && (!t->next || deadline < t->next->deadline)) {
		t->deadline = deadline; /* the head stays the head: no walk (the model's overflow timer) */
		hw_program(q);
		irq_restore(f);
		return;
	}
	if (t->armed)
		timerq_remove(q, t);
	t->deadline = deadline;
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

void timer_drop_due(struct timer *t, uint64_t now)
{
	if (t->armed && t->deadline <= now)
		timerq_remove(&this_cpu()->timers, t);
}
