/*
 * The PMI handler: LVT 0x340 delivers VEC_PMI here on every CPU. It follows
 * the ISR protocol for multiple and rapid overflows of 327357-001 §1.4.3.8-9
 * (docs/design.md §5.4):
 *   1. stop the counters (GLOBAL_CTRL = 0) so no new overflow can arrive;
 *   2. read GLOBAL_STATUS; for each set bit account the wrap, record a
 *      sample if the counter samples and reload its period (less the events
 *      it counted since the wrap: see reload());
 *   3. clear exactly those bits through GLOBAL_OVF_CTRL, re-read and repeat
 *      while any is set (bounded: a stuck PMU is reported and left stopped);
 *   4. unmask LVT 0x340, then restore GLOBAL_CTRL; trap_pmi (kernel/trap.c) sends EOI.
 * Status must be clear before the unmask: the 1-bit line has to fall to 0
 * before it can rise again, or the next PMI is lost. The unmask comes before
 * the restore (docs/design.md §5.4 lists them the other way round): a counter that
 * overflows right after the restore must find the entry unmasked, or its
 * edge is lost with the line left high for good.
 * A per-thread rate limit holds sampling counters back for the rest of a
 * window (1 ms, or 1/limit s under 1,000/s: throttle()) when PMIs come
 * faster than the limit allows.
 */
#include "pmu/pmu.h"
#include "pmu/internal.h"
#include "apic/apic.h"
#include "kernel/console.h"
#include "kernel/trap.h"
#include "kernel/percpu.h"
#include "arch/tsc.h"

#define PMI_MAX_ROUNDS 8
_Static_assert(PMU_MAX_COUNTERS <= PMU_SAMPLE_COUNTERS, "a sample holds every counter a PMU described has");

/* pmu_hw's width as the handler reads it, a load: set at pmi_init, after the backend's init. */
static uint64_t wrap; /* 2^width: a counter's range */
#define THROTTLE_WINDOWS_PER_S 1000 /* windows of 1 ms, longer for limits under 1000/s */

static volatile uint32_t pmi_limit = PMU_PMI_LIMIT_DEFAULT;

static void no_sink(const struct pmu_sample *s, const uint64_t *chain) { (void)s, (void)chain; }
static void (*sample_sink)(const struct pmu_sample *s, const uint64_t *chain) = no_sink;

void pmu_set_sample_sink(void (*fn)(const struct pmu_sample *s, const uint64_t *chain)) { sample_sink = fn; }
uint32_t pmu_pmi_limit(void) { return pmi_limit; }

/*
 * Returns the sample, which holds both counters as the handler stopped them.
 * Two rings, for two readers with opposite needs: this one is the card's own
 * view of the latest samples (shell `pmu samples`), so it overwrites the
 * oldest; the sink's (the mailbox) is drained by a host that owns its tail,
 * so, as perf's mmap ring does, it drops the newest and counts them (the
 * card never writes a slot the host may be reading).
 */
static const struct pmu_sample *record(struct pmu_cpu *pc, struct trap_frame *f, uint32_t mask, uint64_t now)
{
	struct pmu_sample *s = &pc->ring[pc->ring_written % PMU_SAMPLE_RING];
	uint64_t chain[PMU_CALLCHAIN_MAX]; /* for the host's ring only: the card's own keeps none */

	s->tsc = now;
	s->rip = f->rip;
	s->cpl = f->cs & 3; /* cpu and ncounters: the slot's from pmu_need_ring */
	s->ovf_mask = mask;
	pmu_ops->pmi_counters(s->ctr);
	s->nframes = pmu_chain_frames[s->cpu] ? pmu_callchain(f, chain) : 0; /* no call when off */
	sample_sink(s, chain); /* for the host, drained without a request */
	pc->ring_written++; /* a full ring loses its oldest */
	return s;
}

/*
 * What a sampling counter is reloaded with so that it wraps again `period`
 * events after its last wrap: the events it counted since then (`past`, the
 * PMI's skid) count towards the next period, as perf carries them. Samples
 * stay exactly `period` events apart, and the driver's totals (samples x
 * period + late + what the counter has counted since its reload) stay
 * exact. A counter that reads `period` or more at its PMI came back late
 * (a PMI in Ring 3 can come up to the model's slack late: pmu/model/backend.c) or
 * missed a whole period: it starts a full one, and what it read goes to
 * `late`, in the total but in no sample.
 */
static uint64_t reload(struct pmu_cpu *pc, int i, uint64_t past)
{
	uint64_t period = pc->period[i];

	if (__builtin_expect(past < period, 1)) /* the common case falls through */
		return wrap - period + past;
	pc->late[i] += past;
	return wrap - period;
}

void pmi_unthrottle(struct pmu_cpu *pc)
{
	if (!pc->throttled)
		return;
	uint32_t bits = pc->throttled;

	pc->throttled = 0;
	timer_cancel(&pc->unthrottle);
	if (pc->running) {
		uint64_t ctrl;
		pmu_ops->rdmsr(pmu_hw->global_ctrl, &ctrl);
		pmu_ops->wrmsr(pmu_hw->global_ctrl, ctrl | bits);
	}
}

static void unthrottle_due(struct timer *t)
{
	pmi_unthrottle(t->arg);
}

/*
 * The rate limit's window for `limit` PMIs/s: per_window PMIs in `ticks`
 * TSC ticks. A window lets `per_window` PMIs through and lasts
 * per_window / limit seconds, rounded up to a whole TSC tick: a limit of
 * 1,000/s or more gives windows of about 1 ms (limit / 1000 PMIs each), a
 * smaller one windows of 1 / limit s with one PMI each. So no limit allows
 * more than `limit` PMIs a second, and none is rounded to another (3/s
 * allows 3, 1,500/s allows 1,500: a window of 1 ms held to whole PMIs would
 * allow 0 and 1,000). Worked out when the limit changes and at pmi_init
 * (the TSC's rate is known by then), not per PMI: the handler does no
 * division.
 */
static struct { uint64_t per_window, ticks; } window;

static void window_for(uint32_t limit)
{
	uint64_t l = limit ? limit : 1; /* pmu_set_pmi_limit: 1..PMU_PMI_LIMIT_MAX */

	window.per_window = l >= THROTTLE_WINDOWS_PER_S ? l / THROTTLE_WINDOWS_PER_S : 1;
	window.ticks = (window.per_window * tsc_hz + l - 1) / l;
}

void pmu_set_pmi_limit(uint32_t per_second)
{
	pmi_limit = per_second;
	window_for(per_second);
}

/* Returns the GLOBAL_CTRL bits to hold back for the rest of the window (see window_for). */
static uint32_t throttle(struct pmu_cpu *pc, uint64_t now)
{
	if (now - pc->window_start >= window.ticks) {
		pc->window_start = now;
		pc->window_pmis = 0;
	}
	if (++pc->window_pmis <= window.per_window)
		return 0;
	uint32_t sampling = pc->sampling;
	if (!sampling)
		return 0;
	pc->throttles++;
	timer_arm(&pc->unthrottle, pc->window_start + window.ticks, unthrottle_due, pc);
	if (!pc->last_report || now - pc->last_report >= tsc_hz) { /* a line a second per CPU at most */
		pc->last_report = now;
		kprintf("pmu: CPU %u: more than %u PMIs/s, sampling throttled (%lu times so far)\n",
			this_cpu()->cpu, pmi_limit, pc->throttles);
	}
	return sampling;
}

/*
 * One round's new overflow bits (`fresh`, none handled in an earlier
 * round): a sample for the sampling counters among them, and a wrap for
 * the counting ones. Returns the counters to reload (bit i: counter i,
 * with next[i]), which pmi_ack writes. `fresh` has bits of the PMU's
 * counters only (the handler masks it), so the loops over PMU_MAX_COUNTERS,
 * which the compiler unrolls, touch no counter the PMU lacks.
 */
static uint32_t account(struct pmu_cpu *pc, struct trap_frame *f, uint32_t status, uint32_t fresh,
			uint64_t now, uint64_t next[PMU_MAX_COUNTERS])
{
	uint32_t sampled = fresh & pc->sampling;
	uint32_t wrapped = fresh & ~sampled;

	if (wrapped)
		for (int i = 0; i < PMU_MAX_COUNTERS; i++)
			pc->wraps[i] += wrapped >> i & 1;
	if (!sampled)
		return 0;
	for (int i = 0; i < PMU_MAX_COUNTERS; i++)
		pc->samples[i] += sampled >> i & 1;
	const struct pmu_sample *s = record(pc, f, status, now);

	for (int i = 0; i < PMU_MAX_COUNTERS; i++)
		if (sampled & GLOBAL_CTR(i))
			next[i] = reload(pc, i, s->ctr[i]);
	return sampled;
}

static void pmi_handler(struct trap_frame *f)
{
	struct pmu_cpu *pc = pmu_this();
	uint64_t ctrl, first, next[PMU_MAX_COUNTERS];
	uint32_t handled = 0; /* counters are stopped: a bit that comes back is stuck, not new */
	const struct pmu_ops *ops = pmu_ops; /* once: the calls cannot change it */

	ctrl = ops->pmi_stop(&first);                                    /* 1, 2 */
	uint64_t now = rdtsc(); /* the samples' time and the throttle's */
	uint32_t status = first & PMU_ALL_COUNTERS; /* in a register: first's address is taken */

	pc->pmis++;
	for (int round = 0; status; round++) {
		if (round == PMI_MAX_ROUNDS) {
			/* Overflow bits that will not clear: leave the counters stopped. */
			pc->stuck++;
			pc->running = false;
			kprintf("pmu: CPU %u: PMU stuck, GLOBAL_STATUS %#x still set after %d rounds; counters stopped\n",
				this_cpu()->cpu, status, PMI_MAX_ROUNDS);
			ctrl = 0;
			break;
		}
		uint32_t reload = account(pc, f, status, status & ~handled, now, next);

		handled |= status;
		status = ops->pmi_ack(status, reload, next) & PMU_ALL_COUNTERS; /* 3, then 2 again */
	}
	if (ctrl)
		pc->throttled |= throttle(pc, now);
	apic_lvt_pc_unmask();                                            /* 4 */
	ops->pmi_restart(ctrl & ~(uint64_t)pc->throttled);
}

void pmi_time_sample(struct pmu_cpu *pc, struct trap_frame *f)
{
	uint64_t status;

	if (!pc->running || !pc->ring) /* a ring from pmu_set_cpu_clock; none on a CPU it never reached */
		return;
	uint64_t ctrl = pmu_ops->pmi_stop(&status); /* an overflow meanwhile stays in status for its PMI */
	record(pc, f, 0, rdtsc());
	pmu_ops->pmi_restart(ctrl);
}

void pmi_init(void)
{
	wrap = pmu_ctr_mask(pmu_hw) + 1;
	window_for(pmi_limit);
	irq_register(VEC_PMI, pmi_handler);
}
