/*
 * Per-CPU software timers multiplexed on the CPU's one hardware timer
 * (docs/design.md §4). Deadlines are absolute TSC ticks. A queue belongs to one CPU
 * and is touched only by that CPU with interrupts off.
 */
#ifndef KERNEL_TIMER_H
#define KERNEL_TIMER_H

#include <stdint.h>
#include <stdbool.h>

struct timer;
typedef void (*timer_fn)(struct timer *t);

struct timer {
	uint64_t deadline; /* TSC ticks */
	timer_fn fn;       /* runs in the timer interrupt, interrupts off */
	void *arg;
	struct timer *next;
	bool armed;
};

struct timer_queue {
	struct timer *head; /* sorted by deadline, earliest first */
	/*
	 * The deadline the hardware timer was last set to while it has not
	 * fired, else 0 (kernel/timer.c): a head it already holds costs no
	 * second write.
	 */
	uint64_t hw_deadline;
};

/* Queue operations (pure; kernel/timerq.c). */
void timerq_insert(struct timer_queue *q, struct timer *t);
/* Returns false if t was not queued. */
bool timerq_remove(struct timer_queue *q, struct timer *t);
/* Unlinks and returns the earliest timer with deadline <= now, or NULL. */
struct timer *timerq_pop_expired(struct timer_queue *q, uint64_t now);

/*
 * Arms t on the calling CPU to run fn at TSC tick `deadline` (re-arming an
 * armed timer moves it). Deadlines in the past fire at the next interrupt.
 */
void timer_arm(struct timer *t, uint64_t deadline, timer_fn fn, void *arg);
/* Disarms t if armed on the calling CPU. */
void timer_cancel(struct timer *t);
/*
 * Disarms t if it is armed and due at TSC tick `now`, without reprogramming
 * the hardware: the interrupt for the queue's head (t or an earlier timer)
 * has come or is on its way, and the timer interrupt, finding nothing due,
 * programs the next deadline. For a timer whose work its owner has just
 * done itself (the PMU model's overflow timer, at the entry from Ring 3 its
 * interrupt caused): one APIC write and a run of fn fewer.
 */
void timer_drop_due(struct timer *t, uint64_t now);
/* The calling CPU's start-up: the timer interrupt and the APIC timer behind the queue. */
void timer_cpu_init(void);

#endif
