/*
 * The CPU that serves the mailbox (heartbeat, polling, doorbell), the rules
 * that move it, and serving itself: the serving lock, the bar before an
 * INIT, and the loop that answers the request ring (mailbox.c's
 * primitives). See mailbox/mailbox.h.
 */
#include "mailbox/internal.h"
#include "lib/lib.h"
#include "kernel/percpu.h"
#include "kernel/smp.h"
#include "arch/sync.h"
#include "kernel/task.h"
#include "kernel/timer.h"
#include "arch/tsc.h"
#include "arch/irq.h"
#include "kernel/idle.h"
#include "kernel/console.h"
#include "pmu/pmu.h"

/*
 * The mailbox service (heartbeat and request polling) runs on one CPU at a
 * time, in Ring 0: CPU 0 while no CPU runs a task, else a CPU that runs
 * one. Under QEMU -icount the TSC counts every vCPU's instructions, so work
 * on an idle CPU would show up in a measured thread's counts; on the
 * measured CPU it is kernel time, which USR counts leave out (docs/design.md §5.2,
 * §7). The rules that keep exactly one CPU serving, and never a CPU that
 * cannot (issue 9):
 *  - a CPU that starts a task takes the service; when its last queued task
 *    ends it passes the service to another CPU running a task, else to CPU 0;
 *  - CPU 0 has the CPU of a launch it starts take it (so CPU 0 stops
 *    waking while the tasks are measured); a CPU running a task that
 *    serves a RUN keeps it;
 *  - CPU 0 takes it back when no task is active, and passes it on when it
 *    holds it while a task runs (after an INIT, below);
 *  - a request to INIT the serving CPU itself is not consumed there: the
 *    service goes to CPU 0, which serves it; a CPU about to be INITed or
 *    stopped by a kernel exception gives the service up first.
 */
static volatile uint32_t service_cpu;
static bool mailbox_idle_work(void);
static void mailbox_give_service_to_cpu0(void);
static void region_changed(bool open);

/* The service is `cpu`'s now, and so are the host's doorbell rings. */
static void set_service(uint32_t cpu)
{
	service_cpu = cpu;
	mailbox_doorbell_route(cpu);
}

/*
 * The serving CPU serves soon: CPU 0 (and any CPU in a wait) in its idle
 * loop, after this interrupt; a CPU running a task on its way back to
 * Ring 3. The heartbeat moves: the host sees the service alive.
 */
static void serve_soon(void)
{
	__atomic_fetch_add(&mbox_hdr->heartbeat, 1, __ATOMIC_RELAXED); /* never back, whichever CPU serves */
	mbox_hdr->cpus_online = smp_online_count();
	if (this_cpu()->cpu != 0)
		this_cpu()->user_work = true;
}

static void beat(struct timer *t)
{
	if (service_cpu != this_cpu()->cpu)
		return; /* the service moved on */
	__atomic_fetch_add(&mbox_hdr->timer_polls, 1, __ATOMIC_RELAXED);
	serve_soon();
	/* The transport's period (mailbox/doorbell.c); 0: no timer, the doorbell alone. */
	uint64_t us = mailbox_poll_us(this_cpu()->cpu == 0);
	mbox_hdr->poll_us = us;
	/* From now, not from the last deadline: a late beat must not try to catch up. */
	if (us)
		timer_arm(t, rdtsc() + us * (tsc_hz / 1000000), beat, NULL);
}

/* The doorbell's interrupt (doorbell.c, through the hook mailbox_init gives it): the serving CPU serves now. */
static void mailbox_rung(void)
{
	uint32_t to = service_cpu;

	if (to != this_cpu()->cpu) { /* rung while the service moved: on to where it is */
		mailbox_doorbell_route(to);
		mailbox_doorbell_forward(to);
		return;
	}
	__atomic_fetch_add(&mbox_hdr->doorbells, 1, __ATOMIC_RELAXED);
	serve_soon();
}

/* Each CPU's own heartbeat timer (timers are per CPU). */
static struct timer *beat_timer(void)
{
	static struct timer timers[MAX_CPUS];
	return &timers[this_cpu()->cpu];
}

/*
 * The calling CPU serves, and beats at once (a heartbeat; a task CPU polls
 * on its way back to Ring 3) unless `quiet`: CPU 0's idle work, whose
 * beat would otherwise, without a poll timer, wake it again at once for
 * ever. It does beat when the service has just come to it.
 */
static void take(bool quiet)
{
	if (!mbox_hdr)
		return;
	uint64_t f = irq_save();
	bool moved = service_cpu != this_cpu()->cpu;
	set_service(this_cpu()->cpu);
	struct timer *t = beat_timer();
	if (!t->armed && (!quiet || moved || mailbox_poll_us(this_cpu()->cpu == 0)))
		timer_arm(t, rdtsc(), beat, NULL);
	irq_restore(f);
}

void mailbox_take_service(void)
{
	take(false);
}

static uint32_t pass_to_task_cpu(void);

/*
 * The cross-CPU call that hands the service to a task CPU. It may land
 * after that CPU's task has ended, whose end passed the service to nobody
 * (service_cpu was not yet this CPU's): an AP without a task never polls
 * (kernel/smp.c ap_main halts), so it passes the service on instead.
 * Keeping it left the host without answers until CPU 0 next woke.
 */
static void take_service(void *unused)
{
	if (task_active_on(this_cpu()->cpu))
		mailbox_take_service();
	else if (!pass_to_task_cpu())
		mailbox_give_service_to_cpu0();
}

/* Gives the calling CPU's service to CPU 0, woken to take it. */
static void mailbox_give_service_to_cpu0(void)
{
	uint64_t f = irq_save();
	timer_cancel(beat_timer());
	set_service(0);
	irq_restore(f);
	smp_wake_apic(cpu_table[0]->apic_id);
}

/* A CPU other than the caller that runs a task and takes the service (by a cross-CPU call); 0 if none. */
static uint32_t pass_to_task_cpu(void)
{
	for (uint32_t c = 1; c < cpu_count; c++)
		if (cpu_table[c] != this_cpu() && READ_ONCE(cpu_table[c]->task) &&
		    smp_call_async(c, take_service, NULL) == 0)
			return c;
	return 0;
}

/*
 * The target takes the service itself (a cross-CPU call) and so arms its
 * beat now: setting service_cpu for it to arm its timer when its task
 * starts left no beat at all while it still ran an earlier task (the host
 * saw a stale heartbeat for the length of that task). service_cpu moves at
 * once, before the call lands: CPU 0's idle work, run before the target
 * does, took the service back and armed a beat that then woke CPU 0 inside
 * the task's measured time (446 instructions in calib's 10^6 region). If
 * the call cannot be posted, CPU 0 serves on and its idle work passes the
 * service later.
 */
void mailbox_hand_over(uint32_t cpu)
{
	if (!mbox_hdr || service_cpu != 0 || this_cpu()->cpu != 0)
		return;
	uint64_t f = irq_save();
	set_service(cpu);
	if (smp_call_async(cpu, take_service, NULL) == 0)
		timer_cancel(beat_timer());
	else
		set_service(0);
	irq_restore(f);
}

void mailbox_return_service(void)
{
	if (!mbox_hdr || service_cpu != this_cpu()->cpu || this_cpu()->cpu == 0)
		return;
	timer_cancel(beat_timer());
	uint32_t to = pass_to_task_cpu();
	if (to == 0)
		mailbox_give_service_to_cpu0();
}

/* smp.c: `cpu` is about to be INITed or has stopped for good: it must not hold the service. */
static void cpu_leaving(uint32_t cpu)
{
	if (!mbox_hdr)
		return;
	if (this_cpu()->cpu != cpu)
		mailbox_bar(cpu); /* whether it serves or not: a poll of its own may be under way */
	/*
	 * CPU 0 stopped by a kernel exception (it is never INITed): the shell and
	 * the service's home are gone, so the card as a whole has panicked; a
	 * host stops waiting (include/pmuos/mailbox.h MBOX_PANIC).
	 */
	if (cpu == 0 && this_cpu()->cpu == 0)
		WRITE_ONCE(mbox_hdr->state, MBOX_PANIC);
	if (service_cpu != cpu)
		return;
	if (this_cpu()->cpu == cpu) {
		set_service(0); /* a CPU stopped by a kernel exception: no timer of its own runs again */
		smp_wake_apic(cpu_table[0]->apic_id);
	} else {
		mailbox_take_service(); /* the CPU sending the INIT serves meanwhile */
	}
}

/* A long request (a RUN's loads) goes on: the heartbeat moves, whatever its timer and doorbell do. */
static void serving_alive(void)
{
	__atomic_fetch_add(&mbox_hdr->heartbeat, 1, __ATOMIC_RELAXED);
}

/* The host waits for a launch on this count (include/pmuos/mailbox.h), not by asking. */
static void task_ended(void)
{
	__atomic_fetch_add(&mbox_hdr->tasks_ended, 1, __ATOMIC_RELEASE);
}

/* What tasks tell the host through the mailbox (kernel/task.h). */
static const struct task_host task_host = {
	.output_open = mailbox_output_open,
	.output = mailbox_output,
	.hand_over = mailbox_hand_over,
	.take_service = mailbox_take_service,
	.return_service = mailbox_return_service,
	.user_work = mailbox_poll_due,
	.alive = serving_alive,
	.ended = task_ended,
};

void mailbox_init(uint64_t base, uint64_t size)
{
	if (!mailbox_layout(base, size))
		return;
	mailbox_doorbell_init(!size, mailbox_rung);
	task_set_host(&task_host);
	pmu_on_region(region_changed);
	cpu_on_leaving(cpu_leaving);
	idle_set_work(mailbox_idle_work);
	mailbox_take_service();
}

/*
 * A SPFLT region on the serving CPU is kept free of the host's work: the
 * host's requests would run kernel code on the measured core at host-timed
 * points, and its lines would evict the task's from the core's caches, so
 * every run of one region would count other misses (issue 23.9). While one
 * is open the CPU holds the service: no doorbell interrupts it (they wait
 * in its APIC, mailbox_doorbell_hold), its heartbeat timer is off and a
 * poll that comes due waits. It serves again when the region closes, at
 * once under QEMU (the emulated SPFLT tells it, pmu_on_region), else
 * at its first kernel entry after; and after REGION_HOLD_US of card time in
 * any case, so a region that never closes does not starve the host (the
 * heartbeat stops meanwhile: a host that waits sees a card alive again
 * within 0.1 s of card time).
 */
#define REGION_HOLD_US 100000

struct region_hold {
	bool held;
	uint64_t since;     /* TSC when the hold began; 0: none this region */
	struct timer bound; /* ends the hold at since + REGION_HOLD_US */
};
static struct region_hold holds[MAX_CPUS];

static void release(void)
{
	struct region_hold *h = &holds[this_cpu()->cpu];

	if (!h->held)
		return;
	h->held = false;
	timer_cancel(&h->bound);
	mailbox_doorbell_hold(false);
	if (service_cpu == this_cpu()->cpu)
		timer_arm(beat_timer(), rdtsc(), beat, NULL); /* a beat now: what came meanwhile is served */
}

static void bound_reached(struct timer *t)
{
	release(); /* since stays: no new hold until the region closes */
}

static void hold(void)
{
	struct region_hold *h = &holds[this_cpu()->cpu];

	if (h->held || service_cpu != this_cpu()->cpu)
		return;
	if (!h->since)
		h->since = rdtsc();
	uint64_t end = h->since + REGION_HOLD_US * (tsc_hz / 1000000);
	if (rdtsc() >= end)
		return;
	h->held = true;
	mailbox_doorbell_hold(true);
	timer_cancel(beat_timer());
	timer_arm(&h->bound, end, bound_reached, NULL);
}

/* pmu_on_region: the calling CPU's emulated SPFLT opened or closed a region. */
static void region_changed(bool open)
{
	holds[this_cpu()->cpu].since = 0;
	if (open)
		hold();
	else
		release();
}

/* Whether a poll due now waits for the region to close (a KNC core's SPFLT is seen only here). */
static bool defer_for_region(void)
{
	struct region_hold *h = &holds[this_cpu()->cpu];

	if (h->held && rdtsc() - h->since >= REGION_HOLD_US * (tsc_hz / 1000000))
		release(); /* its bound timer is gone (an INIT meanwhile) */
	if (!pmu_region_open()) {
		region_changed(false);
		return false;
	}
	hold();
	if (!h->held)
		return false; /* held REGION_HOLD_US already */
	this_cpu()->user_work = true; /* still due */
	return true;
}

void mailbox_poll_due(void)
{
	if (defer_for_region())
		return;
	sti();
	mailbox_poll();
	smp_yield_to_woken();
	cli();
}

bool mailbox_serving_here(void)
{
	return mbox_hdr && service_cpu == this_cpu()->cpu;
}

/*
 * Idle work (kernel/idle.h) of every waiting CPU. CPU 0 takes the service
 * back when no task is active and passes it on when it holds it while a
 * task runs; whichever CPU holds it serves.
 */
static bool mailbox_idle_work(void)
{
	if (!mbox_hdr)
		return false;
	bool cpu0 = this_cpu()->cpu == 0;

	if (cpu0 && (service_cpu == 0 || !any_task_active()))
		take(true); /* arms CPU 0's heartbeat if it was given the service */
	if (!mailbox_serving_here())
		return false;
	/*
	 * Served before it is passed on: what a task CPU gave back to CPU 0 (an
	 * INIT of itself) is served here, not handed back to it for ever, once
	 * the hand-over's IPI lets that CPU run before CPU 0 polls.
	 */
	bool served = mailbox_poll();
	if (cpu0 && any_task_active() && pass_to_task_cpu())
		timer_cancel(beat_timer());
	/* After an answer CPU 0, with no task to disturb, looks for the next request a while (doorbell.c). */
	static uint64_t linger_until;
	if (served) {
		if (cpu0 && !any_task_active())
			linger_until = rdtsc() + mailbox_linger_us() * (tsc_hz / 1000000);
		return true;
	}
	return cpu0 && rdtsc() < linger_until;
}

/*
 * Whether `req` must be served by CPU 0: an INIT of the serving AP itself
 * (it cannot INIT itself and come back). An INIT of CPU 0 is refused by the
 * decoder wherever it is served.
 */
static bool serve_elsewhere(const struct mbox_request *req)
{
	uint32_t cpu;

	if (req->opcode != MBOX_OP_CPU_INIT || req->len != sizeof(cpu))
		return false;
	memcpy(&cpu, req->payload, sizeof(cpu));
	return cpu != 0 && cpu == this_cpu()->cpu;
}

/*
 * serve_owner is the lock that serving takes: the CPU serving, or NO_CPU.
 * Taking it and recording who holds it is one compare-and-swap, so an INIT
 * can never leave it held with no owner known. A CPU about to be INITed by
 * another (smp_reinit_cpu) is barred from serving first, and the sender
 * waits for it to finish a request it is serving: an INIT in the middle of
 * one lost the request, and the lock with it (no CPU could serve again). A
 * CPU the INIT caught serving anyway (stuck there, interrupts off) left the
 * lock held: it is released once that CPU is back online, or failed to come
 * back, since the bar.
 */
#define NO_CPU UINT32_MAX
static volatile uint32_t serve_owner = NO_CPU, barred = NO_CPU;
static uint64_t barred_tsc;

/* Takes the lock for `cpu`: true if it was free (one LOCK CMPXCHG, a full barrier on x86). */
static bool serve_take(uint32_t cpu)
{
	uint32_t free = NO_CPU;

	return __atomic_compare_exchange_n(&serve_owner, &free, cpu, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

/* Releases the lock if `cpu` holds it (a CPU other than the holder changes nothing). */
static void serve_release(uint32_t cpu)
{
	__atomic_compare_exchange_n(&serve_owner, &cpu, NO_CPU, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

static bool not_serving(void *cpu)
{
	return READ_ONCE(serve_owner) != *(uint32_t *)cpu;
}

void mailbox_bar(uint32_t cpu)
{
	barred_tsc = rdtsc();
	WRITE_ONCE(barred, cpu);
	smp_mb();
	if (!idle_until_us(not_serving, &cpu, BAR_WAIT_US))
		kprintf("mailbox: CPU %u is still serving a request: INIT goes ahead; that request is lost\n", cpu);
}

/* The barred CPU has been through its INIT (back online, or failed to come back): the bar ends. */
static void bar_lifted(void)
{
	uint32_t c = READ_ONCE(barred);

	if (c == NO_CPU)
		return;
	const struct percpu *p = cpu_table[c];
	if (!(p->state == CPU_FAILED || (p->state == CPU_ONLINE && p->online_tsc > barred_tsc)))
		return;
	if (__atomic_compare_exchange_n(&barred, &c, NO_CPU, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		serve_release(c); /* if held across the INIT: nobody holds it now */
}

/* Serves the request ring; *elsewhere: it stopped at a request CPU 0 must serve (serve_elsewhere). */
static bool serve_ring(bool *elsewhere)
{
	static struct mbox_request req;   /* the card's own copy */
	static struct mbox_ops ops;
	bool served = false;

	ops = mbox_kernel_ops;
	ops.ncpus = cpu_count;
	ops.tsc_hz = tsc_hz;
	ops.upload = mailbox_upload();
	/* At most a ring's worth per poll: a host cannot keep the card here. */
	for (int n = 0; n < MBOX_REQ_SLOTS; n++) {
		struct mbox_response *resp = mailbox_request_peek(&req);
		if (!resp)
			break;
		if (serve_elsewhere(&req)) {
			*elsewhere = true;
			break;
		}
		mailbox_request_take();
		mbox_serve(&req, resp, &ops);
		bool reset = mbox_wants_reset(&req, resp);
		mailbox_response_publish();
		served = true;
		if (reset) {
			mailbox_doorbell_answered();
			ops.reset(); /* the answer is out first */
		}
	}
	if (served)
		mailbox_doorbell_answered();
	return served;
}

bool mailbox_poll(void)
{
	uint32_t me = this_cpu()->cpu;

	if (!mbox_hdr)
		return false;
	bar_lifted();
	if (!serve_take(me))
		return false;
	bool elsewhere = false;
	bool served = me != READ_ONCE(barred) && serve_ring(&elsewhere);
	serve_release(me);
	/* After the release: CPU 0, woken by it and run at once, must find the lock free to serve. */
	if (elsewhere)
		mailbox_give_service_to_cpu0();
	return served;
}
