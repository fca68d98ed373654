/* Idle halting, told to the CPU hooks (the PMU's accounting); see kernel/idle.h. */
#include "kernel/idle.h"
#include "lib/lib.h"
#include "kernel/percpu.h"
#include "arch/sync.h"
#include "kernel/timer.h"
#include "arch/tsc.h"
#include "arch/x86.h"
#include "kernel/cpu_hooks.h"

#define CHECK_US 100 /* idle_until_us: checks at least this often */

static bool (*idle_work)(void);

void idle_wait(void)
{
	this_cpu()->idle = true;
	cpu_hooks.idle_enter();
	sti_hlt();
}

void idle_set_work(bool (*fn)(void))
{
	idle_work = fn;
}

void idle_until(bool (*done)(void *arg), void *arg)
{
	for (;;) {
		/* done() after each piece of work: a host that keeps the mailbox busy must not starve the wait. */
		bool busy = idle_work && idle_work();
		cli();
		if (done(arg)) {
			sti();
			return;
		}
		if (!busy)
			idle_wait();
		sti();
	}
}

struct timed_wait {
	bool (*done)(void *arg);
	void *arg;
	uint64_t end;
	volatile bool expired;
};

static void timed_tick(struct timer *t)
{
	struct timed_wait *w = t->arg;
	uint64_t now = rdtsc();

	if (now >= w->end)
		w->expired = true;
	else
		timer_arm(t, MIN(now + CHECK_US * (tsc_hz / 1000000), w->end), timed_tick, w);
}

static bool timed_over(void *arg)
{
	struct timed_wait *w = arg;

	return w->expired || w->done(w->arg);
}

bool idle_until_us(bool (*done)(void *arg), void *arg, uint64_t us)
{
	struct timed_wait w = { done, arg, tsc_deadline_us(us), false };

	if (!irqs_enabled()) {
		while (!done(arg) && rdtsc() < w.end)
			cpu_relax();
		return done(arg);
	}
	struct timer t = { 0 };
	timer_arm(&t, MIN(rdtsc() + CHECK_US * (tsc_hz / 1000000), w.end), timed_tick, &w);
	idle_until(timed_over, &w);
	timer_cancel(&t);
	return done(arg);
}

static bool never(void *arg)
{
	return false;
}

void idle_sleep_us(uint64_t us)
{
	idle_until_us(never, NULL, us);
}
