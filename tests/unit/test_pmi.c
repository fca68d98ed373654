/*
 * pmu/pmi.c on the host: the PMI handler, one test per rule of the ISR
 * protocol for multiple and rapid overflows (327357-001 §1.4.3.8-9, docs/design.md §5.4)
 * and of the driver's rate limit.
 *
 * The handler runs against the software model (pmu/model/core.c) of the
 * calling CPU's PMU, reached through a test pmu_ops table that logs every
 * RDMSR/WRMSR in order, together with the calls pmi.c makes to the rest of
 * the kernel (LVT unmask, timers, kprintf). The model's clock is a fake TSC
 * that moves one tick per MSR access, so a counter left running where the
 * handler should have stopped it shows in the values it records.
 * Register addresses are spelled out from 327357-001's Table 1-2 (not taken
 * from pmu/knc/regs.h), so a wrong constant there shows too.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "pmu/internal.h"
#include "apic/apic.h"
#include "kernel/console.h"
#include "kernel/trap.h"
#include "kernel/percpu.h" /* tests/unit/shadow: this_cpu() is ours */
#include "arch/tsc.h"    /* tests/unit/shadow: rdtsc() is ours */
#include "kernel/pmm.h"   /* page_alloc() is ours */

/* 327357-001 Table 1-2 */
#define PERFCTR0   0x20u
#define PERFCTR1   0x21u
#define EVNTSEL0   0x28u
#define STATUS     0x2du
#define OVF_CTRL   0x2eu
#define GLOBAL     0x2fu

/* 327357-001 Table 1-5 */
#define USR        (1u << 16)
#define OS         (1u << 17)
#define INT        (1u << 20)
#define EN         (1u << 22)
/* 327357-001 Table 1-6 */
#define CLK        0x002au /* CPU_CLK_UNHALTED: one per model tick */

#define TWO40      (1ULL << 40)
#define POISON     0x5a5a5a5a5a5a5a5aULL

#define VECTOR_PMI   0xf8u   /* arch/irq.h's VEC_PMI, as docs/design.md §4 assigns it */
#define MAX_ROUNDS   8       /* pmi.c's PMI_MAX_ROUNDS */
#define HZ           1000000000ULL
#define MS           (HZ / 1000)
#define T0           (10 * HZ) /* fake TSC at the start of each test */
#define CPU          5u        /* this_cpu()->cpu */
#define SEL_UCODE64  0x2bu     /* user 64-bit code selector: CPL 3 */
#define SEL_KCODE64  0x08u     /* kernel code selector: CPL 0 */

/* ------------------------------------------------------------ test doubles */

enum kind { RD, WR, UNMASK, TIMER_ARM, TIMER_CANCEL, PRINT };
#define ANY 0xffffffffu

struct event {
	enum kind kind;
	uint32_t msr;  /* RD, WR */
	uint64_t v;    /* RD: value read; WR: value written; UNMASK: PMI line level; TIMER_ARM: deadline */
	uint64_t now;  /* fake TSC at the access */
};

#define LOG_MAX 4096
static struct event ev[LOG_MAX];
static int nev;
static bool log_full;
static int gp_faults; /* accesses the model refused (#GP on hardware) */

static struct pmu_cpu pc;
static struct pmu_sample ring[PMU_SAMPLE_RING];
static struct percpu percpu;
static uint64_t now;

/* Test-ops behaviour */
static bool ignore_ovf_ctrl;   /* a stuck PMU: OVF_CTRL writes clear nothing */
static uint32_t inject_on_ovf; /* status bits that appear at the first OVF_CTRL write */

static irq_handler pmi_handler_fn;
static uint8_t pmi_vector;
static int irq_registrations;

static char out[8192];
static size_t outlen;
static int prints;

static void log_event(enum kind k, uint32_t msr, uint64_t v)
{
	if (nev == LOG_MAX) {
		log_full = true;
		return;
	}
	ev[nev++] = (struct event){ k, msr, v, now };
}

static int test_rdmsr(uint32_t msr, uint64_t *v)
{
	*v = POISON;
	int r = model_rdmsr(&pc.model, now, msr, v);

	if (r)
		gp_faults++;
	log_event(RD, msr, *v);
	now++;
	return r;
}

static int test_wrmsr(uint32_t msr, uint64_t v)
{
	int r = 0;

	log_event(WR, msr, v);
	if (!(msr == OVF_CTRL && ignore_ovf_ctrl))
		r = model_wrmsr(&pc.model, now, msr, v);
	if (r)
		gp_faults++;
	if (msr == OVF_CTRL && inject_on_ovf) {
		/* A second overflow lands in the status register as this write retires. */
		pc.model.status |= inject_on_ovf;
		inject_on_ovf = 0;
	}
	now++;
	return r;
}

/*
 * The PMI's grouped accesses, each access logged as the ones above:
 * pmi_stop and pmi_restart also note where in the log the handler's
 * accesses began and ended (-1: not yet), and how often.
 */
static int begin_at, end_at, brackets;

static uint64_t test_pmi_stop(uint64_t *status)
{
	uint64_t ctrl;

	begin_at = nev;
	brackets++;
	test_rdmsr(GLOBAL, &ctrl);
	test_wrmsr(GLOBAL, 0);
	test_rdmsr(STATUS, status);
	return ctrl;
}

static void test_pmi_counters(uint64_t ctr[PMU_MAX_COUNTERS])
{
	test_rdmsr(PERFCTR0, &ctr[0]);
	test_rdmsr(PERFCTR1, &ctr[1]);
}

static uint64_t test_pmi_ack(uint64_t status, uint32_t reload, const uint64_t ctr[PMU_MAX_COUNTERS])
{
	if (reload & 1)
		test_wrmsr(PERFCTR0, ctr[0]);
	if (reload & 2)
		test_wrmsr(PERFCTR1, ctr[1]);
	test_wrmsr(OVF_CTRL, status);
	test_rdmsr(STATUS, &status);
	return status;
}

static void test_pmi_restart(uint64_t ctrl)
{
	test_wrmsr(GLOBAL, ctrl);
	end_at = nev;
	brackets++;
}

static const struct pmu_ops test_ops = {
	.name = "test",
	.rdmsr = test_rdmsr,
	.wrmsr = test_wrmsr,
	.pmi_stop = test_pmi_stop,
	.pmi_counters = test_pmi_counters,
	.pmi_ack = test_pmi_ack,
	.pmi_restart = test_pmi_restart,
};
const struct pmu_ops *pmu_ops = &test_ops;
const struct pmu_desc *pmu_hw = &pmu_knc_desc;

struct percpu *this_cpu(void) { return &percpu; }
uint64_t rdtsc(void) { return now; }
uint64_t tsc_hz = HZ;

int kprintf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(out + outlen, sizeof(out) - outlen, fmt, ap);
	va_end(ap);
	if (n > 0)
		outlen += (size_t)n < sizeof(out) - outlen ? (size_t)n : sizeof(out) - 1 - outlen;
	prints++;
	log_event(PRINT, 0, 0);
	return n;
}

/* The mailbox's copy of each sample (the PMU's sample sink, set in setup): counted, checked in test_sampling_overflow's spirit. */
static int mailbox_samples;
void mailbox_sample(const struct pmu_sample *s, const uint64_t *chain)
{
	(void)s, (void)chain;
	mailbox_samples++;
}

/* No task runs here: samples carry no call chain (pmu/callchain.c is the card's). */
volatile uint8_t pmu_chain_frames[MAX_CPUS];
size_t pmu_callchain(const struct trap_frame *f, uint64_t *ips)
{
	(void)f, (void)ips;
	return 0;
}

/* The sample ring pmu_need_ring (pmu/cpu_settings.c) allocates: ours, one allocation at a time. */
struct percpu *cpu_table[MAX_CPUS];
uint32_t cpu_count;
void *page_alloc(uint64_t count)
{
	assert_true(count * PAGE_SIZE >= sizeof(ring));
	return ring;
}

void apic_lvt_pc_unmask(void)
{
	/* Where the PMU's 1-bit line stands when the LVT entry opens again. */
	model_advance(&pc.model, now);
	log_event(UNMASK, 0, pc.model.line);
}

void irq_register(uint8_t vector, irq_handler h)
{
	pmi_vector = vector;
	pmi_handler_fn = h;
	irq_registrations++;
}

void timer_arm(struct timer *t, uint64_t deadline, timer_fn fn, void *arg)
{
	t->deadline = deadline;
	t->fn = fn;
	t->arg = arg;
	t->armed = true;
	log_event(TIMER_ARM, 0, deadline);
}

void timer_cancel(struct timer *t)
{
	t->armed = false;
	log_event(TIMER_CANCEL, 0, 0);
}

/* ------------------------------------------------------------ helpers */

/* Direct model access for setting up (not logged, not through pmi.c). */
static void mwr_(uint32_t msr, uint64_t v, const char *file, int line)
{
	_assert_int_equal(model_wrmsr(&pc.model, now, msr, v), 0, file, line);
}
static uint64_t mrd_(uint32_t msr, const char *file, int line)
{
	uint64_t v = POISON;

	_assert_int_equal(model_rdmsr(&pc.model, now, msr, &v), 0, file, line);
	return v;
}
#define MWR(msr, v) mwr_(msr, v, __FILE__, __LINE__)
#define MRD(msr)    mrd_(msr, __FILE__, __LINE__)

static bool match(const struct event *e, enum kind k, uint32_t msr)
{
	return e->kind == k && (msr == ANY || e->msr == msr);
}

static int count(enum kind k, uint32_t msr)
{
	int n = 0;

	for (int i = 0; i < nev; i++)
		n += match(&ev[i], k, msr);
	return n;
}

/* Index of the n-th (0-based) matching event, or -1. */
static int nth(enum kind k, uint32_t msr, int n)
{
	for (int i = 0; i < nev; i++)
		if (match(&ev[i], k, msr) && n-- == 0)
			return i;
	return -1;
}

static int last(enum kind k, uint32_t msr)
{
	for (int i = nev - 1; i >= 0; i--)
		if (match(&ev[i], k, msr))
			return i;
	return -1;
}

/* The event at index i, which must exist (nth() and last() give -1 for none). */
static const struct event *event_at(int i, const char *file, int line)
{
	_assert_in_range(i, 0, nev - 1, file, line);
	return &ev[i];
}
#define EV(i) (*event_at(i, __FILE__, __LINE__))

/* Counter i counts CPU_CLK_UNHALTED at every CPL, PMI on overflow, as pmu.c sets it up. */
static void configure(int i, uint64_t period)
{
	pc.evtsel[i] = CLK | USR | OS;
	pc.period[i] = period;
	pc.sampling = (pc.sampling & ~(1u << i)) | (period ? 1u << i : 0);
	MWR(EVNTSEL0 + i, CLK | USR | OS | EN | INT);
	MWR(PERFCTR0 + i, period ? TWO40 - period : 0);
}

static void start(uint32_t mask)
{
	pc.enabled = mask;
	pc.running = true;
	MWR(GLOBAL, mask);
}

/* Counter i overflows `left` events from now. */
static void wrap_in(int i, uint64_t left)
{
	MWR(PERFCTR0 + i, TWO40 - left);
}

static void advance(uint64_t ticks)
{
	now += ticks;
}

static uint64_t entry_tsc, exit_tsc; /* fake TSC around the last PMI */

/* The APIC delivers VEC_PMI: run the handler on a frame interrupted at rip/cs. */
static void pmi_(uint64_t rip, uint64_t cs, const char *file, int line)
{
	struct trap_frame f = { .vector = VECTOR_PMI, .rip = rip, .cs = cs, .rflags = 0x202 };

	_assert_true(pmi_handler_fn != NULL, "pmi_handler_fn", file, line);
	nev = 0;
	begin_at = end_at = -1;
	brackets = 0;
	entry_tsc = now;
	pmi_handler_fn(&f);
	exit_tsc = now;
	/* Every access from pmi_stop to pmi_restart (the model syncs once, at the end). */
	_assert_int_equal(brackets, 2, file, line);
	_assert_int_equal(begin_at, 0, file, line);
	_assert_int_equal(end_at, nev, file, line);
	_assert_int_equal(gp_faults, 0, file, line);
	_assert_true(!log_full, "log_full", file, line);
}
#define PMI(rip, cs) pmi_(rip, cs, __FILE__, __LINE__)

static int setup(void **state)
{
	(void)state;
	memset(&pc, 0, sizeof(pc));
	memset(ring, 0xa5, sizeof(ring)); /* what a slot holds before pmu_need_ring fills it */
	pc.cpu = CPU;
	assert_int_equal(pmu_need_ring(&pc), PMU_OK);
	assert_ptr_equal(pc.ring, ring);
	memset(&percpu, 0, sizeof(percpu));
	percpu.self = &percpu;
	percpu.cpu = CPU;
	percpu.pmu = &pc; /* pmu_this() */
	now = T0;
	pmu_set_sample_sink(mailbox_sample);
	model_reset(&pc.model, now);
	nev = 0;
	log_full = false;
	gp_faults = 0;
	ignore_ovf_ctrl = false;
	inject_on_ovf = 0;
	outlen = 0;
	out[0] = 0;
	prints = 0;
	pmu_set_pmi_limit(PMU_PMI_LIMIT_DEFAULT);
	return 0;
}

/* ------------------------------------------------------------ tests */

/* pmi_init() installs the handler on the PMI vector, once. */
static void test_registered(void **state)
{
	(void)state;
	assert_int_equal(irq_registrations, 1);
	assert_int_equal(pmi_vector, VECTOR_PMI);
	assert_non_null(pmi_handler_fn);
}

/* Step 1: the handler stops the counters before it does anything else. */
static void test_stop_first(void **state)
{
	(void)state;
	configure(0, 1000);
	configure(1, 0);
	start(3);
	advance(1000 + 5);
	PMI(0x401000, SEL_UCODE64);

	assert_true(nev >= 2);
	assert_int_equal(ev[0].kind, RD);
	assert_int_equal(ev[0].msr, GLOBAL);
	assert_int_equal(ev[0].v, 3);
	assert_int_equal(ev[1].kind, WR);
	assert_int_equal(ev[1].msr, GLOBAL);
	assert_int_equal(ev[1].v, 0);
	/* ... and they stay stopped until the final restore. */
	assert_int_equal(count(WR, GLOBAL), 2);
	assert_int_equal(last(WR, GLOBAL), nth(WR, GLOBAL, 1));
	assert_int_equal(pc.pmis, 1);
}

/* A counting counter's overflow is a wrap: no sample, no reload, its bit alone cleared. */
static void test_counting_overflow(void **state)
{
	(void)state;
	configure(0, 0);
	configure(1, 0);
	MWR(PERFCTR1, 12345);
	start(3);
	wrap_in(0, 10);
	advance(10 + 2);
	PMI(0x401000, SEL_UCODE64);

	assert_int_equal(pc.wraps[0], 1);
	assert_int_equal(pc.wraps[1], 0);
	assert_int_equal(pc.samples[0], 0);
	assert_int_equal(pc.samples[1], 0);
	assert_int_equal(pc.ring_written, 0);
	/* no sample read, no reload */
	assert_int_equal(count(RD, PERFCTR0) + count(RD, PERFCTR1), 0);
	assert_int_equal(count(WR, PERFCTR0) + count(WR, PERFCTR1), 0);
	/* exactly bit 0 cleared, once; status clear afterwards */
	assert_int_equal(count(WR, OVF_CTRL), 1);
	assert_int_equal(EV(nth(WR, OVF_CTRL, 0)).v, 1);
	assert_int_equal(MRD(STATUS), 0);
	assert_int_equal(count(PRINT, ANY), 0);
}

/*
 * A sampling counter's overflow: one sample of the interrupted context, then
 * the period reloaded, less the events counted since the wrap.
 */
static void test_sampling_overflow(void **state)
{
	int mailbox_before = mailbox_samples;
	(void)state;
	const uint64_t period = 1000;

	configure(0, period);
	configure(1, 0);
	MWR(PERFCTR1, 777);
	start(3);
	advance(period + 5); /* counter 0 wrapped 5 ticks ago */
	PMI(0x7fff12345678ULL, SEL_UCODE64);

	assert_int_equal(pc.samples[0], 1);
	assert_int_equal(pc.samples[1], 0);
	assert_int_equal(pc.wraps[0], 0);
	assert_int_equal(pc.wraps[1], 0);
	assert_int_equal(pc.ring_written, 1);
	assert_int_equal(mailbox_samples - mailbox_before, 1); /* the host's copy too */

	const struct pmu_sample *s = &ring[0];
	assert_int_equal(s->rip, 0x7fff12345678ULL);
	assert_int_equal(s->cpl, 3);
	assert_int_equal(s->cpu, CPU);
	assert_int_equal(s->ncounters, PMU_MAX_COUNTERS);
	assert_int_equal(s->ovf_mask, 1);
	assert_true(s->tsc >= entry_tsc && s->tsc <= exit_tsc);
	/*
	 * Both counters as they stood when GLOBAL_CTRL = 0 took effect: the
	 * first access (RD GLOBAL_CTRL) took one tick, so 5 + 1 and
	 * 777 + period + 5 + 1. Counters left running would read more.
	 */
	assert_int_equal(s->ctr[0], 6);
	assert_int_equal(s->ctr[1], 777 + period + 6);

	/*
	 * the sample read each counter once; reload counter 0 only, after that
	 * read, before the restore, with 2^40 - period + the 6 events since its wrap
	 */
	assert_int_equal(count(RD, PERFCTR0), 1);
	assert_int_equal(count(RD, PERFCTR1), 1);
	assert_int_equal(count(WR, PERFCTR0), 1);
	assert_int_equal(count(WR, PERFCTR1), 0);
	int reload = nth(WR, PERFCTR0, 0);
	assert_int_equal(EV(reload).v, TWO40 - period + 6);
	assert_true(nth(RD, PERFCTR0, 0) < reload);
	assert_true(reload < last(WR, GLOBAL));
	assert_int_equal(count(WR, OVF_CTRL), 1);
	assert_int_equal(EV(nth(WR, OVF_CTRL, 0)).v, 1);
	/* the counter runs again from the reload value */
	assert_int_equal(MRD(PERFCTR0), TWO40 - period + 6 + (now - EV(last(WR, GLOBAL)).now));
}

/*
 * The events a sampling counter counts between its wrap and the handler (the
 * skid) belong to the next period: it wraps again exactly `period` events
 * after the last wrap, so the n-th sample's reference count (counter 1,
 * counting the same events from 0) is n x period plus that sample's own skid.
 * A counter found at `period` or more did not just wrap: a full period.
 */
/* Counter 0 samples every `period` events, counter 1 counts the same events from 0; both run. */
static void sampled_and_counted(uint64_t period)
{
	pmu_set_pmi_limit(PMU_PMI_LIMIT_MAX);
	configure(0, period);
	configure(1, 0);
	start(3);
}

/* Until counter 0 wraps. */
static void until_wrap0(void)
{
	while (!(MRD(STATUS) & 1))
		advance(1);
}

static void test_skid_carried(void **state)
{
	(void)state;
	const uint64_t period = 1000;

	sampled_and_counted(period);
	for (uint64_t n = 1; n <= 5; n++) {
		until_wrap0();
		advance(17 * n); /* a skid that differs from PMI to PMI */
		PMI(0x401000, SEL_UCODE64);
		const struct pmu_sample *s = &ring[n - 1];
		assert_int_equal(s->ctr[1] - s->ctr[0], n * period);
		assert_int_equal(EV(nth(WR, PERFCTR0, 0)).v, TWO40 - period + s->ctr[0]);
	}
	assert_int_equal(pc.samples[0], 5);

	/* not wrapped: the status bit alone, the counter at `period` (a stuck or stale bit) */
	wrap_in(0, TWO40 - period);
	pc.model.status |= 1;
	PMI(0x401000, SEL_UCODE64);
	assert_int_equal(ring[5].ctr[0], period + 1);
	assert_int_equal(EV(nth(WR, PERFCTR0, 0)).v, TWO40 - period);
}

/*
 * A PMI that comes more than a period after the wrap (in Ring 3 it can come
 * up to the model's slack late): a full period starts, and what the counter
 * read goes to `late`, so the driver's total (samples x period + late + what
 * it counted since the reload) still equals the reference counter 1.
 */
static void test_late_pmi_keeps_the_total(void **state)
{
	(void)state;
	const uint64_t period = 1000;

	sampled_and_counted(period);
	until_wrap0();
	advance(period + 17); /* late by more than a period */
	PMI(0x401000, SEL_UCODE64);
	assert_true(ring[0].ctr[0] >= period + 17); /* what the sample read, the handler's ticks since included */
	assert_int_equal(EV(nth(WR, PERFCTR0, 0)).v, TWO40 - period);
	assert_int_equal(pc.late[0], ring[0].ctr[0]);
	advance(300);
	uint64_t total = pc.samples[0] * period + pc.late[0] + ((MRD(PERFCTR0) - (TWO40 - period)) & (TWO40 - 1));
	assert_int_equal(total, MRD(PERFCTR1));
}

/* Both counters overflowed at once: one clear of exactly bits 0 and 1, one sample, both reloaded. */
static void test_both_overflow(void **state)
{
	(void)state;
	configure(0, 1000);
	configure(1, 3000);
	wrap_in(1, 1000);
	start(3);
	advance(1000 + 2);
	assert_int_equal(MRD(STATUS), 3);
	PMI(0xffffffff80123456ULL, SEL_KCODE64);

	assert_int_equal(count(WR, OVF_CTRL), 1);
	assert_int_equal(EV(nth(WR, OVF_CTRL, 0)).v, 3);
	assert_int_equal(pc.samples[0], 1);
	assert_int_equal(pc.samples[1], 1);
	assert_int_equal(pc.ring_written, 1);
	assert_int_equal(ring[0].ovf_mask, 3);
	assert_int_equal(ring[0].cpl, 0);
	assert_int_equal(ring[0].rip, 0xffffffff80123456ULL);
	assert_int_equal(ring[0].ctr[0], 3);
	assert_int_equal(ring[0].ctr[1], 3);
	assert_int_equal(count(WR, PERFCTR0), 1);
	assert_int_equal(count(WR, PERFCTR1), 1);
	assert_int_equal(EV(nth(WR, PERFCTR0, 0)).v, TWO40 - 1000 + 3);
	assert_int_equal(EV(nth(WR, PERFCTR1, 0)).v, TWO40 - 3000 + 3);
	assert_int_equal(MRD(STATUS), 0);
}

/* A counting and a sampling counter overflowed together: a wrap, a sample, one reload, one clear. */
static void test_mixed_overflow(void **state)
{
	(void)state;
	configure(0, 1000);
	configure(1, 0);
	wrap_in(1, 1000);
	start(3);
	advance(1000 + 2);
	PMI(0x401000, SEL_UCODE64);

	assert_int_equal(pc.samples[0], 1);
	assert_int_equal(pc.wraps[1], 1);
	assert_int_equal(pc.samples[1], 0);
	assert_int_equal(pc.wraps[0], 0);
	assert_int_equal(pc.ring_written, 1);
	assert_int_equal(ring[0].ovf_mask, 3);
	assert_int_equal(count(WR, PERFCTR0), 1);
	assert_int_equal(count(WR, PERFCTR1), 0);
	assert_int_equal(count(WR, OVF_CTRL), 1);
	assert_int_equal(EV(nth(WR, OVF_CTRL, 0)).v, 3);
}

/* An overflow that arrives while the handler runs is found by re-reading status: a second round. */
static void test_rapid_second_overflow(void **state)
{
	(void)state;
	configure(0, 1000);
	configure(1, 500);
	MWR(PERFCTR1, 0);   /* far from overflow */
	start(3);
	advance(1000 + 2); /* counter 0 only */
	assert_int_equal(MRD(STATUS), 1);
	inject_on_ovf = 2;  /* counter 1 overflows as bit 0 is cleared */
	PMI(0x401000, SEL_UCODE64);

	/* status read 1, cleared 1, re-read 2, cleared 2, re-read 0 */
	assert_int_equal(count(RD, STATUS), 3);
	assert_int_equal(count(WR, OVF_CTRL), 2);
	int r0 = nth(RD, STATUS, 0), r1 = nth(RD, STATUS, 1), r2 = nth(RD, STATUS, 2);
	int c0 = nth(WR, OVF_CTRL, 0), c1 = nth(WR, OVF_CTRL, 1);
	assert_int_equal(EV(r0).v, 1);
	assert_int_equal(EV(c0).v, 1);
	assert_int_equal(EV(r1).v, 2);
	assert_int_equal(EV(c1).v, 2);
	assert_int_equal(EV(r2).v, 0);
	assert_true(r0 < c0 && c0 < r1 && r1 < c1 && c1 < r2);
	/* each round sampled and reloaded its own counter */
	assert_int_equal(pc.samples[0], 1);
	assert_int_equal(pc.samples[1], 1);
	assert_int_equal(pc.ring_written, 2);
	assert_int_equal(ring[0].ovf_mask, 1);
	assert_int_equal(ring[1].ovf_mask, 2);
	assert_int_equal(count(WR, PERFCTR0), 1);
	assert_int_equal(count(WR, PERFCTR1), 1);
	assert_true(nth(WR, PERFCTR0, 0) < c0);
	assert_true(r1 < nth(WR, PERFCTR1, 0) && nth(WR, PERFCTR1, 0) < c1);
	/* counter 1 did not wrap (only its status bit came): a full period, nothing carried */
	assert_int_equal(EV(nth(WR, PERFCTR1, 0)).v, TWO40 - 500);
	/* one PMI, restored and unmasked after the last, clean read */
	assert_int_equal(pc.pmis, 1);
	assert_true(r2 < last(WR, GLOBAL));
	assert_int_equal(EV(last(WR, GLOBAL)).v, 3);
	assert_int_equal(count(UNMASK, ANY), 1);
	assert_true(r2 < nth(UNMASK, ANY, 0));
	assert_int_equal(pc.stuck, 0);
}

/* Status that never clears: bounded rounds, reported, counters left stopped. */
static void test_stuck_pmu(void **state)
{
	(void)state;
	configure(0, 0);
	configure(1, 1000);
	start(3);
	wrap_in(0, 10);
	advance(10 + 2);
	ignore_ovf_ctrl = true;
	PMI(0x401000, SEL_UCODE64);

	assert_int_equal(count(WR, OVF_CTRL), MAX_ROUNDS);
	assert_int_equal(count(RD, STATUS), MAX_ROUNDS + 1);
	for (int k = 0; k <= MAX_ROUNDS; k++)
		assert_int_equal(EV(nth(RD, STATUS, k)).v, 1);
	assert_int_equal(pc.stuck, 1);
	assert_false(pc.running);
	assert_int_equal(pc.pmis, 1);
	assert_int_equal(prints, 1);
	assert_non_null(strstr(out, "stuck"));
	assert_non_null(strstr(out, "CPU 5"));
	assert_non_null(strstr(out, "0x1"));
	/* GLOBAL_CTRL ends 0: the stop at entry, and 0 again at the end */
	assert_int_equal(count(WR, GLOBAL), 2);
	int stop = last(WR, GLOBAL);
	assert_int_equal(EV(stop).v, 0);
	assert_true(stop > nth(RD, STATUS, MAX_ROUNDS));
	assert_int_equal(MRD(GLOBAL), 0);
	/* nothing restarts them: no write to GLOBAL_CTRL after the final one */
	for (int i = stop + 1; i < nev; i++)
		assert_false(match(&ev[i], WR, GLOBAL));
	assert_int_equal(count(UNMASK, ANY), 1);
}

/* Status reads 0 before GLOBAL_CTRL is restored and before LVT 0x340 is unmasked. */
static void test_order_restore_unmask(void **state)
{
	(void)state;
	configure(0, 1000);
	configure(1, 0);
	start(1);
	pc.enabled = 3; /* the restore must use the value read at entry, not the driver's idea */
	advance(1000 + 7);
	inject_on_ovf = 1; /* and make it take two rounds */
	PMI(0x401000, SEL_UCODE64);

	assert_int_equal(ev[0].kind, RD);
	assert_int_equal(ev[0].msr, GLOBAL);
	uint64_t entry_ctrl = ev[0].v;
	assert_int_equal(entry_ctrl, 1);

	int restore = last(WR, GLOBAL);
	int unmask = nth(UNMASK, ANY, 0);
	int clean = last(RD, STATUS);
	assert_true(restore > 1);
	assert_int_equal(EV(restore).v, entry_ctrl);
	assert_int_equal(MRD(GLOBAL), entry_ctrl);
	assert_int_equal(count(UNMASK, ANY), 1);
	assert_int_equal(EV(clean).v, 0);
	assert_true(clean < restore);
	assert_true(clean < unmask);
	/* every earlier status read saw a bit set (it is the last, clean read that ends the loop) */
	for (int k = 0; k < count(RD, STATUS) - 1; k++)
		assert_int_not_equal(EV(nth(RD, STATUS, k)).v, 0);
	/* two rounds (the injected bit), and no OVF_CTRL write after the clean read */
	assert_int_equal(count(WR, OVF_CTRL), 2);
	assert_true(last(WR, OVF_CTRL) < clean);
	/* the 1-bit line is down when the LVT entry opens (327357-001 §1.4.3.9) */
	assert_int_equal(EV(unmask).v, 0);
	assert_false(pc.model.line);
}

/* The ring keeps the newest PMU_SAMPLE_RING samples; the count of all written tells what it overwrote. */
static void test_ring_wraps(void **state)
{
	(void)state;
	const uint64_t period = 1000;
	const uint32_t n = PMU_SAMPLE_RING + 3;

	pmu_set_pmi_limit(PMU_PMI_LIMIT_MAX);
	configure(0, period);
	start(1);
	for (uint32_t k = 0; k < n; k++) {
		advance(period);
		PMI(0x400000 + k, SEL_UCODE64);
		assert_int_equal(pc.samples[0], k + 1);
		assert_int_equal(pc.ring_written, k + 1);
	}
	assert_int_equal(pc.throttles, 0);
	assert_int_equal(pc.ring_written, n);
	/* newest at (n - 1) % PMU_SAMPLE_RING = 2, the oldest surviving (the 4th) after it */
	assert_int_equal(ring[2].rip, 0x400000 + n - 1);
	assert_int_equal(ring[3].rip, 0x400000 + 3);
	assert_int_equal(ring[PMU_SAMPLE_RING - 1].rip, 0x400000 + PMU_SAMPLE_RING - 1);
	assert_true(ring[2].tsc > ring[1].tsc);
	assert_true(ring[3].tsc < ring[4].tsc);
}

/*
 * Rate limit 1000 PMIs/s = 1 per 1 ms window: the second PMI in a window
 * holds the sampling counters back until the window ends.
 */
static void test_throttle(void **state)
{
	(void)state;
	const uint64_t period = 1000;

	pmu_set_pmi_limit(1000);
	assert_int_equal(pmu_pmi_limit(), 1000);
	configure(0, period);
	configure(1, 0);
	start(3);

	/* first PMI of the window: allowed */
	advance(period);
	PMI(0x401000, SEL_UCODE64);
	uint64_t window_start = pc.window_start; /* the TSC the handler read */
	assert_true(window_start >= entry_tsc && window_start <= exit_tsc);
	assert_int_equal(EV(last(WR, GLOBAL)).v, 3);
	assert_int_equal(pc.throttles, 0);
	assert_int_equal(pc.throttled, 0);
	assert_int_equal(count(TIMER_ARM, ANY), 0);
	assert_int_equal(prints, 0);

	/* second, 1000 ticks later: sampling counter 0 held back, counting counter 1 not */
	advance(period);
	PMI(0x401000, SEL_UCODE64);
	assert_int_equal(pc.samples[0], 2);
	assert_int_equal(pc.throttles, 1);
	assert_int_equal(pc.throttled, 1);
	assert_int_equal(EV(last(WR, GLOBAL)).v, 2);
	assert_int_equal(MRD(GLOBAL), 2);
	assert_int_equal(count(TIMER_ARM, ANY), 1);
	assert_true(pc.unthrottle.armed);
	assert_int_equal(pc.unthrottle.deadline, window_start + MS);
	assert_ptr_equal(pc.unthrottle.arg, &pc);
	assert_non_null(pc.unthrottle.fn);
	assert_true(nth(TIMER_ARM, ANY, 0) < nth(UNMASK, ANY, 0));
	assert_int_equal(prints, 1);
	assert_non_null(strstr(out, "throttled"));
	assert_non_null(strstr(out, "CPU 5"));
	assert_non_null(strstr(out, "1000 PMIs/s"));

	/* third in the window (counter 1 wraps): throttled again, but no second message within 1 s */
	wrap_in(1, 10);
	advance(10 + 1);
	PMI(0x401000, SEL_UCODE64);
	assert_int_equal(pc.wraps[1], 1);
	assert_int_equal(pc.throttles, 2);
	assert_int_equal(pc.throttled, 1);
	assert_int_equal(EV(last(WR, GLOBAL)).v, 2);
	assert_int_equal(prints, 1);
	assert_int_equal(pc.unthrottle.deadline, window_start + MS);

	/* the window ends: the timer gives the bits back */
	now = pc.unthrottle.deadline;
	nev = 0;
	pc.unthrottle.fn(&pc.unthrottle);
	assert_int_equal(pc.throttled, 0);
	assert_int_equal(count(TIMER_CANCEL, ANY), 1);
	assert_int_equal(EV(last(WR, GLOBAL)).v, 3);
	assert_int_equal(MRD(GLOBAL), 3);

	/* unthrottling again changes nothing */
	nev = 0;
	pmi_unthrottle(&pc);
	assert_int_equal(nev, 0);

	/* the next window starts afresh: its first PMI is allowed */
	wrap_in(0, 10);
	advance(10 + 1);
	PMI(0x401000, SEL_UCODE64);
	assert_int_equal(pc.throttles, 2);
	assert_int_equal(EV(last(WR, GLOBAL)).v, 3);

	/* and once a second has passed, a new throttle is reported again */
	advance(HZ);
	PMI(0x401000, SEL_UCODE64); /* counter 0 wrapped meanwhile: first PMI of a new window */
	wrap_in(0, 10);
	advance(10 + 1);
	PMI(0x401000, SEL_UCODE64);
	assert_int_equal(pc.throttles, 3);
	assert_int_equal(prints, 2);
}

/* The limit is per 1 ms window: 2000/s allows two PMIs a window, the third is throttled. */
static void test_throttle_limit_2000(void **state)
{
	(void)state;
	pmu_set_pmi_limit(2000);
	configure(0, 100);
	start(1);
	for (int k = 0; k < 2; k++) {
		advance(100);
		PMI(0x401000, SEL_UCODE64);
		assert_int_equal(pc.throttles, 0);
		assert_int_equal(EV(last(WR, GLOBAL)).v, 1);
	}
	advance(100);
	PMI(0x401000, SEL_UCODE64);
	assert_int_equal(pc.throttles, 1);
	assert_int_equal(EV(last(WR, GLOBAL)).v, 0);
}

/*
 * At the default limit one thread sampled at a little over 100,000 PMIs a
 * second is never held back (here every 9,700 events of a 1 GHz clock, the
 * PMIs 9,200 and 10,200 ticks apart in turn), while twice that rate is.
 */
static void test_default_limit_passes_100k(void **state)
{
	(void)state;
	configure(0, 9700);
	start(1);
	for (int k = 0; k < 3000; k++) {
		while (!(MRD(STATUS) & 1))
			advance(1);
		advance(k & 1 ? 500 : 0); /* skid, carried into the next period */
		PMI(0x401000, SEL_UCODE64);
		assert_int_equal(pc.throttles, 0); /* (a held-back counter would never wrap again here) */
	}
	assert_int_equal(pc.samples[0], 3000);

	configure(0, 5000);
	for (int k = 0; k < 300 && !pc.throttles; k++) {
		while (!(MRD(STATUS) & 1))
			advance(1);
		PMI(0x401000, SEL_UCODE64);
	}
	assert_int_not_equal(pc.throttles, 0);
}

/*
 * Every limit is applied as given, also those under 1,000/s and those that
 * are no multiple of 1,000 (a 1 ms window held to whole PMIs made 3/s allow
 * none and 1,500/s allow 1,000): PMIs eight times faster than the limit for
 * two seconds get through 2 x limit times, less at most 5 % (a window
 * starts at the first PMI after the last one ended, up to a gap late).
 */
static void test_throttle_exact_for_every_limit(void **state)
{
	static const uint32_t limits[] = { 1, 3, 7, 300, 999, 1000, 1001, 1500, 1999, 2000, 125000 };

	for (size_t n = 0; n < sizeof(limits) / sizeof(limits[0]); n++) {
		uint64_t limit = limits[n], gap = HZ / (8 * limit), end;
		uint64_t allowed = 0;

		setup(state);
		pmu_set_pmi_limit(limit);
		configure(0, 1);
		start(1);
		for (end = now + 2 * HZ; now < end;) {
			advance(gap);
			if (pc.unthrottle.armed && now >= pc.unthrottle.deadline)
				pc.unthrottle.fn(&pc.unthrottle);
			if (pc.throttled & 1)
				continue;
			uint64_t before = pc.throttles;
			wrap_in(0, 1);
			advance(1);
			PMI(0x401000, SEL_UCODE64);
			allowed += pc.throttles == before;
		}
		print_message("limit %lu/s: %lu PMIs in 2 s\n", (unsigned long)limit, (unsigned long)allowed);
		assert_in_range(allowed, 2 * limit - 2 * limit / 20, 2 * limit + limit / 1000 + 1);
	}
}

/* Counting-only counters are never held back, however fast they wrap. */
static void test_no_throttle_counting(void **state)
{
	(void)state;
	pmu_set_pmi_limit(1000);
	configure(0, 0);
	configure(1, 0);
	start(3);
	for (int k = 0; k < 5; k++) {
		wrap_in(k & 1, 10);
		advance(10 + 1);
		PMI(0x401000, SEL_UCODE64);
		assert_int_equal(EV(last(WR, GLOBAL)).v, 3);
	}
	assert_int_equal(pc.wraps[0] + pc.wraps[1], 5);
	assert_int_equal(pc.throttles, 0);
	assert_int_equal(pc.throttled, 0);
	assert_false(pc.unthrottle.armed);
	assert_int_equal(prints, 0);
	assert_int_equal(MRD(GLOBAL), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_registered, setup),
		cmocka_unit_test_setup(test_stop_first, setup),
		cmocka_unit_test_setup(test_counting_overflow, setup),
		cmocka_unit_test_setup(test_sampling_overflow, setup),
		cmocka_unit_test_setup(test_skid_carried, setup),
		cmocka_unit_test_setup(test_late_pmi_keeps_the_total, setup),
		cmocka_unit_test_setup(test_both_overflow, setup),
		cmocka_unit_test_setup(test_mixed_overflow, setup),
		cmocka_unit_test_setup(test_rapid_second_overflow, setup),
		cmocka_unit_test_setup(test_stuck_pmu, setup),
		cmocka_unit_test_setup(test_order_restore_unmask, setup),
		cmocka_unit_test_setup(test_ring_wraps, setup),
		cmocka_unit_test_setup(test_throttle, setup),
		cmocka_unit_test_setup(test_throttle_limit_2000, setup),
		cmocka_unit_test_setup(test_throttle_exact_for_every_limit, setup),
		cmocka_unit_test_setup(test_no_throttle_counting, setup),
		cmocka_unit_test_setup(test_default_limit_passes_100k, setup),
	};

	pmi_init();
	alarm(60); /* a hang (an unbounded status loop) is a failure too */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
