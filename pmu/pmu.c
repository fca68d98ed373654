/*
 * The PMU driver: backend choice, per-CPU state, configuration and control
 * on CPU sets through IPIs (DESIGN §5). The PMI path is pmu/pmi.c; the
 * register layout pmu/regs.h; the backends pmu/knc.c and pmu/model.c.
 */
#include "pmu/pmu.h"
#include "pmu/internal.h"
#include "pmu/regs.h"
#include "apic/apic.h"
#include "kernel/console.h"
#include "kernel/fmt.h"
#include "kernel/irq.h"
#include "kernel/lib.h"
#include "kernel/percpu.h"
#include "kernel/pmm.h"
#include "kernel/smp.h"
#include "kernel/sync.h"
#include "kernel/tsc.h"

#define CPUID_FAMILY(eax) (((eax) >> 8) & 0xf)
#define KNC_FAMILY 0x0b /* k1om */

const struct pmu_ops *pmu_ops = &pmu_model_ops;
static bool counts_exact;

struct pmu_cpu *pmu_this(void) { return this_cpu()->pmu; }
const char *pmu_backend_name(void) { return pmu_ops->name; }
bool pmu_counts_exact(void) { return counts_exact; }
bool pmu_counts_event(uint32_t evtsel) { return pmu_ops->counts_event(evtsel); }

void pmu_init(void)
{
	if (CPUID_FAMILY(cpuid(1, 0).eax) == KNC_FAMILY)
		pmu_ops = &pmu_knc_ops;
	pmi_init();
}

void pmu_cpu_online(bool rejoin)
{
	struct percpu *p = this_cpu();

	if (!p->pmu) {
		p->pmu = page_alloc(ALIGN_UP(sizeof(struct pmu_cpu), PAGE_SIZE) / PAGE_SIZE);
		rejoin = false;
	}
	apic_lvt_pc_set(VEC_PMI, false);
	pmu_ops->cpu_online(rejoin);
}

void pmu_cpu_init_sent(uint32_t cpu)
{
	if (cpu < cpu_count && cpu_table[cpu]->pmu)
		cpu_table[cpu]->pmu->init_sent_tsc = rdtsc();
}

void pmu_idle_enter(void)
{
	if (this_cpu()->pmu)
		pmu_ops->idle_enter();
}

void pmu_idle_exit(void)
{
	if (this_cpu()->pmu)
		pmu_ops->idle_exit();
}

/* ---- per-CPU operations: run on the CPU itself, interrupts off ---- */

static uint64_t preload(const struct pmu_cpu *pc, int i)
{
	return pc->period[i] ? KNC_CTR_MASK + 1 - pc->period[i] : 0;
}

static uint64_t rd(uint32_t msr)
{
	uint64_t v = 0;
	pmu_ops->rdmsr(msr, &v);
	return v;
}

struct config_arg { int ctr; uint32_t evtsel; uint64_t period; };

static void cpu_configure(struct pmu_cpu *pc, void *a)
{
	const struct config_arg *c = a;
	int i = c->ctr;

	pc->enabled &= ~GLOBAL_CTR(i);
	pmu_ops->wrmsr(MSR_KNC_GLOBAL_CTRL, rd(MSR_KNC_GLOBAL_CTRL) & ~(uint64_t)GLOBAL_CTR(i));
	pmu_ops->wrmsr(MSR_KNC_EVNTSEL(i), 0);
	pmu_ops->wrmsr(MSR_KNC_GLOBAL_OVF_CTRL, GLOBAL_CTR(i));
	pc->evtsel[i] = c->evtsel;
	pc->period[i] = c->period;
	pc->wraps[i] = pc->samples[i] = 0;
	pmu_ops->wrmsr(MSR_KNC_PERFCTR(i), preload(pc, i));
	if (c->evtsel) {
		/* INT always: a counting counter's wraps are added up in the PMI handler. */
		pmu_ops->wrmsr(MSR_KNC_EVNTSEL(i), c->evtsel | EVTSEL_EN | EVTSEL_INT);
		pc->enabled |= GLOBAL_CTR(i);
	}
	if (pc->running)
		pmu_ops->wrmsr(MSR_KNC_GLOBAL_CTRL, pc->enabled & ~pc->throttled);
}

static void cpu_start(struct pmu_cpu *pc, void *a)
{
	pc->running = pc->enabled != 0;
	pmi_unthrottle(pc);
	pmu_ops->wrmsr(MSR_KNC_GLOBAL_CTRL, pc->enabled);
}

static void cpu_stop(struct pmu_cpu *pc, void *a)
{
	pmu_ops->wrmsr(MSR_KNC_GLOBAL_CTRL, 0);
	pc->running = false;
}

static void cpu_clear(struct pmu_cpu *pc, void *a)
{
	uint64_t ctrl = rd(MSR_KNC_GLOBAL_CTRL);

	pmu_ops->wrmsr(MSR_KNC_GLOBAL_CTRL, 0);
	for (int i = 0; i < KNC_NUM_COUNTERS; i++) {
		pc->wraps[i] = pc->samples[i] = 0;
		pmu_ops->wrmsr(MSR_KNC_PERFCTR(i), preload(pc, i));
	}
	pmu_ops->wrmsr(MSR_KNC_GLOBAL_OVF_CTRL, GLOBAL_VALID);
	pc->ring_head = pc->ring_count = 0;
	pc->lost = pc->pmis = pc->throttles = pc->stuck = 0;
	pmu_ops->wrmsr(MSR_KNC_GLOBAL_CTRL, ctrl);
}

static void cpu_read(struct pmu_cpu *pc, void *a)
{
	struct pmu_reading *r = a;

	for (int i = 0; i < KNC_NUM_COUNTERS; i++) {
		uint64_t c = rd(MSR_KNC_PERFCTR(i));
		r->evtsel[i] = pc->evtsel[i];
		r->period[i] = pc->period[i];
		r->samples[i] = pc->samples[i];
		if (pc->period[i])
			r->value[i] = pc->samples[i] * pc->period[i] + ((c - preload(pc, i)) & KNC_CTR_MASK);
		else
			r->value[i] = (pc->wraps[i] << KNC_CTR_BITS) + c;
	}
	r->running = pc->running;
	r->pmis = pc->pmis;
	r->throttles = pc->throttles;
	r->stuck = pc->stuck;
	r->lost = pc->lost;
}

static void cpu_regs(struct pmu_cpu *pc, void *a)
{
	struct pmu_regs *r = a;

	r->tsc = rdtsc();
	for (int i = 0; i < KNC_NUM_COUNTERS; i++) {
		r->ctr[i] = rd(MSR_KNC_PERFCTR(i));
		r->evtsel[i] = rd(MSR_KNC_EVNTSEL(i));
	}
	r->spflt = rd(MSR_KNC_SPFLT_CTRL);
	r->status = rd(MSR_KNC_GLOBAL_STATUS);
	r->global_ctrl = rd(MSR_KNC_GLOBAL_CTRL);
	r->lvt_pc = apic_lvt_pc_read();
}

/* ---- running an operation on a CPU set ---- */

static struct {
	struct spinlock lock;
	void (*fn)(struct pmu_cpu *pc, void *arg);
	void *arg;
	bool together;            /* everyone waits at the barrier, then acts at once */
	volatile uint32_t arrived, go;
} op;

static void op_target(void *unused)
{
	if (op.together) {
		__atomic_add_fetch(&op.arrived, 1, __ATOMIC_ACQ_REL);
		uint64_t end = tsc_deadline_us(SMP_CALL_TIMEOUT_US);
		while (!READ_ONCE(op.go) && rdtsc() < end)
			cpu_relax();
	}
	op.fn(pmu_this(), op.arg);
}

/*
 * Runs fn on every online CPU of `set` (the caller's own last) and returns
 * how many ran it. With `together`, all of them wait until every one has
 * arrived, so a start or stop takes effect within a few instructions
 * everywhere.
 */
static int run_on_set(const struct cpuset *set, void (*fn)(struct pmu_cpu *, void *), void *arg,
		      bool together)
{
	uint32_t me = this_cpu()->cpu, n = 0, ran = 0;
	bool self = false;
	uint32_t sent[MAX_CPUS];

	spin_lock(&op.lock);
	op.fn = fn;
	op.arg = arg;
	op.together = together;
	op.arrived = 0;
	op.go = 0;
	smp_mb();
	for (uint32_t c = 0; c < cpu_count; c++) {
		if (!cpuset_has(set, c) || cpu_table[c]->state != CPU_ONLINE || !cpu_table[c]->pmu)
			continue;
		if (c == me)
			self = true;
		else if (smp_call(c, op_target, NULL, false) == 0)
			sent[n++] = c;
	}
	if (together) {
		uint64_t end = tsc_deadline_us(SMP_CALL_TIMEOUT_US);
		while (READ_ONCE(op.arrived) < n && rdtsc() < end)
			cpu_relax();
		WRITE_ONCE(op.go, 1);
	}
	if (self) {
		uint64_t f = irq_save();
		fn(pmu_this(), arg);
		irq_restore(f);
		ran++;
	}
	for (uint32_t i = 0; i < n; i++)
		ran += smp_call_wait(sent[i]) == 0;
	spin_unlock(&op.lock);
	return ran;
}

int pmu_configure(const struct cpuset *set, int ctr, uint32_t evtsel, uint64_t period,
		  char *err, size_t errlen)
{
	struct config_arg c = { ctr, evtsel, period };
	uint32_t want = 0;

	for (uint32_t i = 0; i < cpu_count; i++)
		want += cpuset_has(set, i);
	if (period) {
		/* Sampling needs a ring on each CPU; allocate before going there. */
		for (uint32_t i = 0; i < cpu_count; i++) {
			struct pmu_cpu *pc = cpu_table[i]->pmu;
			if (cpuset_has(set, i) && pc && !pc->ring)
				pc->ring = page_alloc(ALIGN_UP(PMU_SAMPLE_RING * sizeof(struct pmu_sample),
							       PAGE_SIZE) / PAGE_SIZE);
			if (cpuset_has(set, i) && pc && !pc->ring) {
				snprintf(err, errlen, "out of memory for CPU %u's sample ring", i);
				return 0;
			}
		}
	}
	int ran = run_on_set(set, cpu_configure, &c, false);
	if ((uint32_t)ran < want)
		snprintf(err, errlen, "%u of the %u CPUs are not online or did not answer",
			 want - ran, want);
	return ran;
}

int pmu_unconfigure(const struct cpuset *set, int ctr)
{
	struct config_arg c = { ctr, 0, 0 };
	return run_on_set(set, cpu_configure, &c, false);
}

int pmu_start(const struct cpuset *set) { return run_on_set(set, cpu_start, NULL, true); }
int pmu_stop(const struct cpuset *set) { return run_on_set(set, cpu_stop, NULL, true); }
int pmu_clear(const struct cpuset *set) { return run_on_set(set, cpu_clear, NULL, false); }

static int run_on_one(uint32_t cpu, void (*fn)(struct pmu_cpu *, void *), void *arg)
{
	struct cpuset one = { 0 };

	if (cpu >= cpu_count)
		return -1;
	cpuset_add(&one, cpu);
	return run_on_set(&one, fn, arg, false) == 1 ? 0 : -1;
}

int pmu_read(uint32_t cpu, struct pmu_reading *r)
{
	memset(r, 0, sizeof(*r));
	return run_on_one(cpu, cpu_read, r);
}

int pmu_read_regs(uint32_t cpu, struct pmu_regs *r)
{
	memset(r, 0, sizeof(*r));
	return run_on_one(cpu, cpu_regs, r);
}

size_t pmu_samples(uint32_t cpu, struct pmu_sample *out, size_t max, uint64_t *lost)
{
	struct pmu_cpu *pc = cpu < cpu_count ? cpu_table[cpu]->pmu : NULL;

	*lost = 0;
	if (!pc || !pc->ring)
		return 0;
	/* A copy taken while the CPU may add samples: read count, then entries. */
	uint32_t count = READ_ONCE(pc->ring_count), head = READ_ONCE(pc->ring_head);
	size_t n = MIN((size_t)count, max);

	for (size_t i = 0; i < n; i++)
		out[i] = pc->ring[(head + PMU_SAMPLE_RING - n + i) % PMU_SAMPLE_RING];
	*lost = pc->lost;
	return n;
}

/* ---- exactness ---- */

extern void pmu_region_empty(void), pmu_region_100(void);

uint64_t pmu_count_region(void (*region)(void))
{
	uint64_t f = irq_save();
	uint64_t save_ctrl = rd(MSR_KNC_GLOBAL_CTRL), save_sel = rd(MSR_KNC_EVNTSEL0);
	uint64_t save_ctr = rd(MSR_KNC_PERFCTR0), v;

	pmu_ops->wrmsr(MSR_KNC_GLOBAL_CTRL, 0);
	pmu_ops->wrmsr(MSR_KNC_EVNTSEL0, KNC_EV_INSTRUCTIONS_EXECUTED | EVTSEL_OS | EVTSEL_EN);
	pmu_ops->wrmsr(MSR_KNC_PERFCTR0, 0);
	pmu_ops->wrmsr(MSR_KNC_GLOBAL_CTRL, GLOBAL_CTR(0));
	region();
	pmu_ops->wrmsr(MSR_KNC_GLOBAL_CTRL, 0);
	v = rd(MSR_KNC_PERFCTR0);
	pmu_ops->wrmsr(MSR_KNC_PERFCTR0, save_ctr);
	pmu_ops->wrmsr(MSR_KNC_EVNTSEL0, save_sel);
	pmu_ops->wrmsr(MSR_KNC_GLOBAL_CTRL, save_ctrl);
	irq_restore(f);
	return v;
}

void pmu_calibrate(void)
{
	uint64_t e1 = pmu_count_region(pmu_region_empty);
	uint64_t h = pmu_count_region(pmu_region_100);
	uint64_t e2 = pmu_count_region(pmu_region_empty);

	/* Exact when the same code always counts the same, and 100 more instructions count 100 more. */
	counts_exact = e1 == e2 && h - e1 == 100;
	kprintf("pmu: backend %s, %s\n", pmu_ops->name,
		pmu_ops == &pmu_knc_ops ? "hardware counters" :
		counts_exact ? "counts are exact (one TSC tick per instruction)" :
		"counts are not exact (the TSC does not tick once per instruction: run QEMU with -icount shift=0)");
}

void pmu_report_state(const char *what)
{
	struct pmu_regs r;

	cpu_regs(pmu_this(), &r);
	kprintf("pmu: CPU %u %s EvtSel0=%#lx Cnt0=%lu EvtSel1=%#lx Cnt1=%lu GLOBAL_CTRL=%#lx "
		"GLOBAL_STATUS=%#lx SPFLT=%#lx\n", this_cpu()->cpu, what, r.evtsel[0], r.ctr[0],
		r.evtsel[1], r.ctr[1], r.global_ctrl, r.status, r.spflt);
}
