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

/* Programs the hardware for the queue head, or stops it when the queue is empty. */
static void hw_program(struct timer_queue *q)
{
	apic_timer_set(q->head ? q->head->deadline : 0);
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

void timer_cpu_init(void)
{
	irq_register(VEC_TIMER, timer_irq);
	apic_timer_init_local(VEC_TIMER);
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

void timer_drop_due(struct timer *t, uint64_t now)
{
	if (t->armed && t->deadline <= now)
		timerq_remove(&this_cpu()->timers, t);
}
