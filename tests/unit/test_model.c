/*
 * pmu/model/core.c on the host: the software model of one hardware thread's
 * KNC core PMU (pmu/model/core.h), one test per rule of 327357-001 §1.4.3 / docs/design.md §5.1.
 * Register addresses and EvtSel bits are spelled out here from 327357-001's
 * tables (not taken from pmu/knc/regs.h), so a wrong constant there shows too.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "pmu/model/core.h"
#include "pmu/arch/regs.h"

/* 327357-001 Table 1-2 */
#define PERFCTR0   0x20u
#define PERFCTR1   0x21u
#define EVNTSEL0   0x28u
#define EVNTSEL1   0x29u
#define SPFLT      0x2cu
#define STATUS     0x2du
#define OVF_CTRL   0x2eu
#define GLOBAL     0x2fu

/* 327357-001 Table 1-5 */
#define USR        (1u << 16)
#define OS         (1u << 17)
#define EDGE       (1u << 18)
#define RSVD19     (1u << 19)
#define INT        (1u << 20)
#define ANY        (1u << 21)
#define EN         (1u << 22)
#define INV        (1u << 23)
#define CMASK(n)   ((uint32_t)(n) << 24)

/* 327357-001 Table 1-6: umask << 8 | event */
#define INST_EXEC  0x0016u /* INSTRUCTIONS_EXECUTED */
#define CLK        0x002au /* CPU_CLK_UNHALTED */
#define L2_RD_MISS 0x10cbu /* L2_READ_MISS */

/* 327357-001 Table 1-7 */
#define USER_PREF  (1ULL << 63)

#define TWO40      (1ULL << 40)
#define MASK40     (TWO40 - 1)
#define POISON     0x5a5a5a5a5a5a5a5aULL

static void wr_(struct pmu_model *m, uint64_t now, uint32_t msr, uint64_t v, const char *file, int line)
{
	_assert_int_equal(model_wrmsr(m, now, msr, v), 0, file, line);
}

static uint64_t rd_(struct pmu_model *m, uint64_t now, uint32_t msr, const char *file, int line)
{
	uint64_t v = POISON;

	_assert_int_equal(model_rdmsr(m, now, msr, &v), 0, file, line);
	return v;
}

#define WR(m, now, msr, v) wr_(m, now, msr, v, __FILE__, __LINE__)
#define RD(m, now, msr)    rd_(m, now, msr, __FILE__, __LINE__)
/* Register `msr` reads exactly `want` at tick `now`. */
#define READS(m, now, msr, want) \
	_assert_int_equal(rd_(m, now, msr, __FILE__, __LINE__), (want), __FILE__, __LINE__)
/* A write the CPU answers with #GP. */
#define REFUSED_WR(m, now, msr, v) assert_int_equal(model_wrmsr(m, now, msr, v), -1)

/* Reset at tick 0, then counter i counts `evtsel` (EN added) under GLOBAL_CTRL bit i. */
static void start(struct pmu_model *m, int i, uint32_t evtsel)
{
	model_reset(m, 0);
	WR(m, 0, EVNTSEL0 + i, evtsel | EN);
	WR(m, 0, GLOBAL, 1u << i);
}

/* The architectural state software can see, for "changes nothing" checks. */
struct snap {
	uint64_t ctr[2], evtsel[2], spflt, status, global;
	bool line, rose;
};

static struct snap snapshot(struct pmu_model *m, uint64_t now)
{
	struct snap s = {
		.ctr = { RD(m, now, PERFCTR0), RD(m, now, PERFCTR1) },
		.evtsel = { RD(m, now, EVNTSEL0), RD(m, now, EVNTSEL1) },
		.spflt = RD(m, now, SPFLT),
		.status = RD(m, now, STATUS),
		.global = RD(m, now, GLOBAL),
		.line = m->line,
		.rose = m->rose,
	};
	return s;
}

static void same_(const struct snap *a, const struct snap *b, const char *file, int line)
{
	for (int i = 0; i < 2; i++) {
		_assert_int_equal(b->ctr[i], a->ctr[i], file, line);
		_assert_int_equal(b->evtsel[i], a->evtsel[i], file, line);
	}
	_assert_int_equal(b->spflt, a->spflt, file, line);
	_assert_int_equal(b->status, a->status, file, line);
	_assert_int_equal(b->global, a->global, file, line);
	_assert_int_equal(b->line, a->line, file, line);
	_assert_int_equal(b->rose, a->rose, file, line);
}
#define SAME(a, b) same_(a, b, __FILE__, __LINE__)

/* Warm reset (327357-001 §1.4.4, docs/design.md §5.5): every register reads 0 afterwards, and nothing counts. */
static void test_reset(void **state)
{
	(void)state;
	struct pmu_model m;
	uint64_t v;

	/* Dirty every register first, including an overflow with the PMI line up. */
	start(&m, 0, CLK | USR | OS | INT);
	WR(&m, 0, PERFCTR0, TWO40 - 10);
	WR(&m, 0, EVNTSEL1, INST_EXEC | USR | EN | CMASK(3));
	WR(&m, 0, PERFCTR1, 12345);
	WR(&m, 0, SPFLT, USER_PREF | 2);
	WR(&m, 0, GLOBAL, 3);
	model_set_cpl(&m, 5, 3);
	assert_int_equal(RD(&m, 20, STATUS), 1);
	assert_true(m.line);

	model_reset(&m, 500);
	const uint32_t regs[] = { PERFCTR0, PERFCTR1, EVNTSEL0, EVNTSEL1, SPFLT, STATUS, GLOBAL };
	for (size_t k = 0; k < sizeof(regs) / sizeof(regs[0]); k++) {
		READS(&m, 500, regs[k], 0);
		READS(&m, 10000, regs[k], 0); /* still 0: no counter is enabled */
	}
	for (uint32_t ecx = 0; ecx < 2; ecx++) {
		v = POISON;
		assert_int_equal(model_rdpmc(&m, 10000, ecx, &v), 0);
		assert_int_equal(v, 0);
	}
	assert_false(m.line);
	assert_false(m.rose);
}

/* IA32_PerfCnt0/1 (327357-001 §1.4.3.2): a write sets all 40 bits, reads zero-extend; bits 63:40 refused. */
static void test_counter_40_bits(void **state)
{
	(void)state;
	struct pmu_model m;
	const uint64_t good[] = { 0, 1, 0xffffffffULL, 0x100000000ULL, 0x8000000000ULL, 0x123456789aULL, MASK40 };
	const uint64_t bad[] = { TWO40, TWO40 | 5, 1ULL << 47, 1ULL << 63, UINT64_MAX, 0xff00000000000001ULL };

	model_reset(&m, 0);
	for (int i = 0; i < 2; i++) {
		for (size_t k = 0; k < sizeof(good) / sizeof(good[0]); k++) {
			WR(&m, 0, PERFCTR0 + i, good[k]);
			READS(&m, 0, PERFCTR0 + i, good[k]);
		}
		/* All ones reads 0x000000ffffffffff, not sign-extended. */
		WR(&m, 0, PERFCTR0 + i, MASK40);
		READS(&m, 0, PERFCTR0 + i, 0xffffffffffULL);
		for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
			REFUSED_WR(&m, 0, PERFCTR0 + i, bad[k]);
			READS(&m, 0, PERFCTR0 + i, 0xffffffffffULL); /* unchanged */
		}
	}
	/* The two counters are separate registers. */
	WR(&m, 0, PERFCTR0, 7);
	WR(&m, 0, PERFCTR1, 9);
	READS(&m, 0, PERFCTR0, 7);
	READS(&m, 0, PERFCTR1, 9);
}

/* Counter i counts only when EvtSel_i.EN AND GLOBAL_CTRL[i] (327357-001 §1.4.1, §1.4.3.3, §1.4.3.7). */
static void test_enable_and_global(void **state)
{
	(void)state;
	struct pmu_model m;

	for (int i = 0; i < 2; i++)
		for (int en = 0; en < 2; en++)
			for (int g = 0; g < 2; g++) {
				model_reset(&m, 0);
				WR(&m, 0, EVNTSEL0 + i, CLK | USR | OS | (en ? EN : 0));
				/* Without bit i, the other counter's bit is set: it must not enable this one. */
				WR(&m, 0, GLOBAL, g ? 1u << i : 1u << (1 - i));
				READS(&m, 100, PERFCTR0 + i, en && g ? 100 : 0);
			}
	/* Clearing GLOBAL_CTRL stops a running counter at that tick; setting it resumes. */
	start(&m, 1, CLK | USR | OS);
	WR(&m, 40, GLOBAL, 0);
	READS(&m, 90, PERFCTR1, 40);
	WR(&m, 90, GLOBAL, 2);
	READS(&m, 100, PERFCTR1, 50);
	/* So does clearing EN. */
	WR(&m, 100, EVNTSEL1, CLK | USR | OS);
	READS(&m, 200, PERFCTR1, 50);
}

/* USR counts at rings 1-3, OS at ring 0, both at any ring, neither at none (327357-001 Table 1-5). */
static void test_usr_os_filter(void **state)
{
	(void)state;
	struct pmu_model m;
	const struct {
		uint32_t flags;
		uint64_t want[4]; /* count after 100 ticks at cpl 0, 1, 2, 3 */
	} rows[] = {
		{ OS,       { 100, 0, 0, 0 } },
		{ USR,      { 0, 100, 100, 100 } },
		{ USR | OS, { 100, 100, 100, 100 } },
		{ 0,        { 0, 0, 0, 0 } },
	};

	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++)
		for (uint8_t cpl = 0; cpl < 4; cpl++) {
			start(&m, 0, CLK | rows[r].flags);
			model_set_cpl(&m, 0, cpl);
			READS(&m, 100, PERFCTR0, rows[r].want[cpl]);
		}

	/* Ticks are attributed at each transition: OS on counter 0, USR on counter 1. */
	model_reset(&m, 0);
	WR(&m, 0, EVNTSEL0, CLK | OS | EN);
	WR(&m, 0, EVNTSEL1, CLK | USR | EN);
	WR(&m, 0, GLOBAL, 3);
	model_set_cpl(&m, 100, 3);  /* 0..100 at ring 0 */
	model_set_cpl(&m, 250, 0);  /* 100..250 at ring 3 */
	model_set_cpl(&m, 270, 3);  /* 250..270 at ring 0 */
	READS(&m, 300, PERFCTR0, 100 + 20);
	READS(&m, 300, PERFCTR1, 150 + 30);
}

/*
 * PERF_SPFLT_CONTROL (327357-001 §1.4.3.4): with SPFLT_EN(i) the counter counts only
 * while USER_PREF (bit 63) is 1; SPFLT sets USER_PREF from operand bit 0
 * (327357-001 Table 1-1); without SPFLT_EN(i) USER_PREF does not matter.
 */
static void test_spflt_gating(void **state)
{
	(void)state;
	struct pmu_model m;

	model_reset(&m, 0);
	WR(&m, 0, EVNTSEL0, CLK | USR | OS | EN);
	WR(&m, 0, EVNTSEL1, CLK | USR | OS | EN);
	WR(&m, 0, GLOBAL, 3);
	WR(&m, 0, SPFLT, 1); /* counter 0 gated, USER_PREF 0 */
	READS(&m, 100, PERFCTR0, 0);
	READS(&m, 100, PERFCTR1, 100);

	model_spflt(&m, 100, 1); /* set */
	READS(&m, 100, SPFLT, USER_PREF | 1);
	READS(&m, 200, PERFCTR0, 100);
	READS(&m, 200, PERFCTR1, 200);

	model_spflt(&m, 200, 2); /* bit 0 clear: clear, whatever the other bits */
	READS(&m, 200, SPFLT, 1);
	READS(&m, 300, PERFCTR0, 100);
	READS(&m, 300, PERFCTR1, 300);

	model_spflt(&m, 300, UINT64_MAX); /* bit 0 set */
	READS(&m, 300, SPFLT, USER_PREF | 1);
	model_spflt(&m, 350, 3); /* set again: no change */
	READS(&m, 400, PERFCTR0, 200);
	READS(&m, 400, PERFCTR1, 400);

	/* The OS moves the gate to counter 1 (USER_PREF 0 by WRMSR): counter 0 runs free. */
	WR(&m, 400, SPFLT, 2);
	READS(&m, 500, PERFCTR0, 300);
	READS(&m, 500, PERFCTR1, 400);
	model_spflt(&m, 500, 1);
	READS(&m, 500, SPFLT, USER_PREF | 2);
	READS(&m, 600, PERFCTR0, 400);
	READS(&m, 600, PERFCTR1, 500);

	/* Without any SPFLT_EN bit, USER_PREF 0 or 1 changes nothing. */
	WR(&m, 600, SPFLT, 0);
	READS(&m, 700, PERFCTR0, 500);
	READS(&m, 700, PERFCTR1, 600);
	WR(&m, 700, SPFLT, USER_PREF);
	READS(&m, 800, PERFCTR0, 600);
	READS(&m, 800, PERFCTR1, 700);
}

/*
 * Ring changes interleaved with every other state change (SPFLT, GLOBAL_CTRL,
 * HLT), some made in ring 3 and some in ring 0: each counter counts exactly
 * its ticks, whichever ring a change happened in (the model keeps what
 * counts at each ring across a change of the other).
 */
static void test_ring_and_state_changes(void **state)
{
	(void)state;
	struct pmu_model m;

	model_reset(&m, 0);
	WR(&m, 0, EVNTSEL0, CLK | USR | EN);
	WR(&m, 0, EVNTSEL1, CLK | OS | EN);
	WR(&m, 0, GLOBAL, 3);
	WR(&m, 0, SPFLT, 1);        /* counter 0 gated, USER_PREF 0 */
	model_set_cpl(&m, 100, 3);  /* 0..100 ring 0: counter 1 */
	model_spflt(&m, 150, 1);    /* 100..150 ring 3, gated: nothing */
	model_set_cpl(&m, 200, 0);  /* 150..200 ring 3: counter 0 */
	WR(&m, 250, GLOBAL, 2);     /* 200..250 ring 0: counter 1 */
	model_set_cpl(&m, 300, 3);  /* 250..300 ring 0: counter 1 */
	WR(&m, 350, GLOBAL, 3);     /* 300..350 ring 3, counter 0 disabled: nothing */
	model_set_halted(&m, 400, true); /* 350..400 ring 3: counter 0 */
	model_set_cpl(&m, 450, 0);  /* halted from 400 on: nothing */
	model_set_halted(&m, 500, false);
	READS(&m, 600, PERFCTR0, 50 + 50);             /* 500..600 ring 0: counter 1 */
	READS(&m, 600, PERFCTR1, 100 + 50 + 50 + 100);
}

/* Halted ticks are not counted (CPU_CLK_UNHALTED, and no instruction executes). */
static void test_halted_not_counted(void **state)
{
	(void)state;
	struct pmu_model m;

	model_reset(&m, 0);
	WR(&m, 0, EVNTSEL0, CLK | USR | OS | EN);
	WR(&m, 0, EVNTSEL1, INST_EXEC | USR | OS | EN);
	WR(&m, 0, GLOBAL, 3);
	model_set_halted(&m, 100, true);
	READS(&m, 200, PERFCTR0, 100);
	model_set_halted(&m, 250, true); /* already halted */
	model_set_halted(&m, 300, false);
	READS(&m, 350, PERFCTR0, 150);
	READS(&m, 350, PERFCTR1, 150);
}

/* Only INSTRUCTIONS_EXECUTED (0x16) and CPU_CLK_UNHALTED (0x2a), umask 0, count; model_counts_event agrees. */
static void test_events_counted(void **state)
{
	(void)state;
	struct pmu_model m;
	const struct {
		uint32_t code;
		bool counts;
	} rows[] = {
		{ INST_EXEC, true },
		{ CLK, true },
		{ L2_RD_MISS, false },
		{ 0x0116, false }, /* umask 1 */
		{ 0x012a, false },
		{ 0x2016, false }, /* VPU_INSTRUCTIONS_EXECUTED */
		{ 0x0000, false }, /* DATA_READ */
		{ 0x0012, false }, /* BRANCHES */
		{ 0x002d, false }, /* FE_STALLED */
		{ 0x00ff, false },
	};

	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		start(&m, 0, rows[r].code | USR | OS);
		READS(&m, 100, PERFCTR0, rows[r].counts ? 100 : 0);
		assert_int_equal(model_counts_event(rows[r].code), rows[r].counts);
		/* The other EvtSel fields do not change the answer. */
		assert_int_equal(model_counts_event(rows[r].code | USR | OS | EN | INT | CMASK(1)), rows[r].counts);
	}
}

/*
 * Overflow (327357-001 §1.4.3.2, §1.4.3.5-6): preloaded with 2^40 - P, the counter
 * overflows after exactly P ticks: the status bit is set at tick P, not P-1;
 * the counter wraps to 0 and counts on; the bit is sticky and is cleared only
 * by writing GLOBAL_OVF_CTRL with that bit.
 */
static void test_overflow(void **state)
{
	(void)state;
	struct pmu_model m;
	const uint64_t P = 1000;

	for (int i = 0; i < 2; i++) {
		uint32_t bit = 1u << i, other = 1u << (1 - i);

		start(&m, i, CLK | USR | OS);
		WR(&m, 0, PERFCTR0 + i, TWO40 - P);
		READS(&m, P - 1, STATUS, 0);
		READS(&m, P - 1, PERFCTR0 + i, MASK40);
		READS(&m, P, STATUS, bit);
		READS(&m, P, PERFCTR0 + i, 0);
		READS(&m, P + 7, PERFCTR0 + i, 7);
		READS(&m, P + 500, STATUS, bit); /* sticky */
		WR(&m, P + 500, OVF_CTRL, 0);
		READS(&m, P + 500, STATUS, bit);
		WR(&m, P + 500, OVF_CTRL, other);
		READS(&m, P + 500, STATUS, bit);
		WR(&m, P + 500, PERFCTR0 + i, 0); /* rewriting the counter does not clear it */
		READS(&m, P + 500, STATUS, bit);
		WR(&m, P + 500, OVF_CTRL, bit);
		READS(&m, P + 500, STATUS, 0);
		READS(&m, P + 520, PERFCTR0 + i, 20);
		READS(&m, P + 520, STATUS, 0);

		/* In one step from 0 to P + 5: the same outcome. */
		start(&m, i, CLK | USR | OS);
		WR(&m, 0, PERFCTR0 + i, TWO40 - P);
		READS(&m, P + 5, PERFCTR0 + i, 5);
		READS(&m, P + 5, STATUS, bit);
	}
}

/* GLOBAL_STATUS updates even if APIC interrupts are not enabled (327357-001 §1.4.3.5); the line stays 0. */
static void test_status_without_int(void **state)
{
	(void)state;
	struct pmu_model m;

	start(&m, 1, CLK | USR | OS); /* no INT */
	WR(&m, 0, PERFCTR1, TWO40 - 10);
	READS(&m, 10, STATUS, 2);
	assert_false(m.line);
	assert_false(m.rose);
}

/*
 * The 1-bit PMI line (327357-001 §1.4.3.9): line = OR of the status bits whose
 * EvtSel.INT is set; `rose` is set only on a 0 -> 1 transition, so a second
 * overflow while the line is 1 does not raise it again; once OVF_CTRL clears
 * the status the line falls and the next overflow raises it.
 */
static void test_pmi_line_edges(void **state)
{
	(void)state;
	struct pmu_model m;

	model_reset(&m, 0);
	WR(&m, 0, EVNTSEL0, CLK | USR | OS | EN | INT);
	WR(&m, 0, EVNTSEL1, CLK | USR | OS | EN | INT);
	WR(&m, 0, PERFCTR0, TWO40 - 100);
	WR(&m, 0, PERFCTR1, TWO40 - 300);
	WR(&m, 0, GLOBAL, 3);
	READS(&m, 99, STATUS, 0);
	assert_false(m.line);
	assert_false(m.rose);

	READS(&m, 100, STATUS, 1);
	assert_true(m.line);
	assert_true(m.rose);
	m.rose = false; /* the glue has looked */

	READS(&m, 300, STATUS, 3); /* counter 1 overflows while the line is 1 */
	assert_true(m.line);
	assert_false(m.rose);

	WR(&m, 300, OVF_CTRL, 1); /* status bit 1 still holds the line up */
	assert_true(m.line);
	assert_false(m.rose);
	WR(&m, 300, OVF_CTRL, 2);
	READS(&m, 300, STATUS, 0);
	assert_false(m.line);
	assert_false(m.rose);

	WR(&m, 300, PERFCTR0, TWO40 - 50);
	READS(&m, 349, STATUS, 0);
	assert_false(m.line);
	assert_false(m.rose);
	READS(&m, 350, STATUS, 1);
	assert_true(m.line);
	assert_true(m.rose);

	/* `rose` records the transition until the glue looks, even if the line fell since. */
	WR(&m, 350, OVF_CTRL, 1);
	assert_false(m.line);
	assert_true(m.rose);
}

/* Only status bits whose EvtSel.INT is set drive the line. */
static void test_pmi_line_is_or_of_int_bits(void **state)
{
	(void)state;
	struct pmu_model m;

	model_reset(&m, 0);
	WR(&m, 0, EVNTSEL0, CLK | USR | OS | EN | INT);
	WR(&m, 0, EVNTSEL1, CLK | USR | OS | EN);
	WR(&m, 0, PERFCTR0, TWO40 - 200);
	WR(&m, 0, PERFCTR1, TWO40 - 100);
	WR(&m, 0, GLOBAL, 3);
	READS(&m, 100, STATUS, 2); /* counter 1, without INT */
	assert_false(m.line);
	assert_false(m.rose);
	READS(&m, 200, STATUS, 3); /* counter 0, with INT */
	assert_true(m.line);
	assert_true(m.rose);
	m.rose = false;
	WR(&m, 200, OVF_CTRL, 1);
	READS(&m, 200, STATUS, 2);
	assert_false(m.line); /* bit 1 is set but has no INT */
	/* Setting INT on counter 1 with its status bit pending raises the line. */
	WR(&m, 200, EVNTSEL1, CLK | USR | OS | EN | INT);
	assert_true(m.line);
	assert_true(m.rose);
	m.rose = false;
	/* Clearing INT again drops it. */
	WR(&m, 200, EVNTSEL1, CLK | USR | OS | EN);
	assert_false(m.line);
	assert_false(m.rose);
}

/*
 * #GP cases (pmu/model/core.h, 327357-001 Table 1-2): GLOBAL_STATUS is read-only,
 * GLOBAL_OVF_CTRL write-only; an MSR that is not the PMU's fails both ways
 * (the TSC, 0x10, is not modelled).
 */
static void test_msr_access(void **state)
{
	(void)state;
	struct pmu_model m;
	uint64_t v;
	const uint32_t others[] = { 0x00, 0x10, 0x1f, 0x22, 0x27, 0x2a, 0x2b, 0x30, 0xc1, 0x186,
				    0x38f, 0x390, 0x10020, 0x40000020, 0xffffffff };

	model_reset(&m, 0);
	REFUSED_WR(&m, 0, STATUS, 0);
	REFUSED_WR(&m, 0, STATUS, 1);
	v = POISON;
	assert_int_equal(model_rdmsr(&m, 0, OVF_CTRL, &v), -1);
	assert_int_equal(v, POISON);
	for (size_t k = 0; k < sizeof(others) / sizeof(others[0]); k++) {
		REFUSED_WR(&m, 0, others[k], 0);
		v = POISON;
		assert_int_equal(model_rdmsr(&m, 0, others[k], &v), -1);
		assert_int_equal(v, POISON);
	}
	/* The PMU's readable and writable registers answer. */
	const uint32_t rw[] = { PERFCTR0, PERFCTR1, EVNTSEL0, EVNTSEL1, SPFLT, GLOBAL };
	for (size_t k = 0; k < sizeof(rw) / sizeof(rw[0]); k++) {
		WR(&m, 0, rw[k], 0);
		READS(&m, 0, rw[k], 0);
	}
	READS(&m, 0, STATUS, 0);
	WR(&m, 0, OVF_CTRL, 0);
}

/*
 * Reserved bits raise #GP and a refused write changes nothing: EvtSel bit 19
 * and bits 63:32, SPFLT_CONTROL bits 62:2, GLOBAL_CTRL/OVF_CTRL bits 63:2.
 */
static void test_reserved_bits(void **state)
{
	(void)state;
	struct pmu_model m;
	const uint64_t T = 2000;

	/* A busy state: both counters running, counter 0 overflowed (INT, line up), SPFLT set. */
	model_reset(&m, 0);
	WR(&m, 0, EVNTSEL0, CLK | USR | OS | EN | INT);
	WR(&m, 0, EVNTSEL1, INST_EXEC | USR | EN);
	WR(&m, 0, PERFCTR0, TWO40 - 1000);
	WR(&m, 0, PERFCTR1, 77);
	WR(&m, 0, SPFLT, USER_PREF | 2);
	WR(&m, 0, GLOBAL, 3);
	model_set_cpl(&m, 0, 3);
	struct snap before = snapshot(&m, T);
	assert_int_equal(before.status, 1);
	assert_true(before.line);

	for (int i = 0; i < 2; i++) {
		REFUSED_WR(&m, T, EVNTSEL0 + i, RSVD19);
		REFUSED_WR(&m, T, EVNTSEL0 + i, CLK | USR | OS | EN | RSVD19);
		for (int b = 32; b < 64; b++)
			REFUSED_WR(&m, T, EVNTSEL0 + i, (1ULL << b) | CLK | EN);
	}
	for (int b = 2; b < 63; b++)
		REFUSED_WR(&m, T, SPFLT, (1ULL << b) | 1);
	for (int b = 2; b < 64; b++) {
		REFUSED_WR(&m, T, GLOBAL, (1ULL << b) | 1);
		REFUSED_WR(&m, T, OVF_CTRL, (1ULL << b) | 1); /* would clear status bit 0 */
	}
	for (int b = 40; b < 64; b++)
		REFUSED_WR(&m, T, PERFCTR0, 1ULL << b);
	REFUSED_WR(&m, T, STATUS, 0);

	struct snap after = snapshot(&m, T);
	SAME(&before, &after);

	/* The neighbouring defined bits are accepted. */
	WR(&m, T, EVNTSEL0, 0xfff7ffffu); /* everything but bit 19 */
	READS(&m, T, EVNTSEL0, 0xfff7ffffu);
	WR(&m, T, EVNTSEL1, ANY | CLK);
	READS(&m, T, EVNTSEL1, ANY | CLK);
	WR(&m, T, SPFLT, USER_PREF | 3);
	READS(&m, T, SPFLT, USER_PREF | 3);
	WR(&m, T, GLOBAL, 3);
	READS(&m, T, GLOBAL, 3);
}

/* model_ticks_to_overflow: UINT64_MAX when nothing counts, 2^40 - ctr for an active counter, the minimum of two. */
static void test_ticks_to_overflow(void **state)
{
	(void)state;
	struct pmu_model m;

	model_reset(&m, 0);
	assert_int_equal(model_ticks_to_overflow(&m, m.active), UINT64_MAX);

	start(&m, 0, CLK | USR | OS);
	assert_int_equal(model_ticks_to_overflow(&m, m.active), TWO40);
	WR(&m, 0, PERFCTR0, TWO40 - 500);
	assert_int_equal(model_ticks_to_overflow(&m, m.active), 500);

	/* Counter 1 sooner, then later. */
	WR(&m, 0, EVNTSEL1, INST_EXEC | USR | OS | EN);
	WR(&m, 0, PERFCTR1, TWO40 - 200);
	WR(&m, 0, GLOBAL, 3);
	assert_int_equal(model_ticks_to_overflow(&m, m.active), 200);
	WR(&m, 0, PERFCTR1, TWO40 - 800);
	assert_int_equal(model_ticks_to_overflow(&m, m.active), 500);

	/* Measured from `last`. */
	READS(&m, 100, PERFCTR0, TWO40 - 400);
	assert_int_equal(model_ticks_to_overflow(&m, m.active), 400);
	/* And it is exact: one tick short, no overflow; at it, overflow. */
	READS(&m, 499, STATUS, 0);
	READS(&m, 500, STATUS, 1);

	/* Counters that do not count now are left out. */
	start(&m, 0, L2_RD_MISS | USR | OS);
	WR(&m, 0, PERFCTR0, TWO40 - 5);
	assert_int_equal(model_ticks_to_overflow(&m, m.active), UINT64_MAX);
	start(&m, 0, CLK | OS);
	WR(&m, 0, PERFCTR0, TWO40 - 5);
	assert_int_equal(model_ticks_to_overflow(&m, m.active), 5);
	model_set_cpl(&m, 0, 3);
	assert_int_equal(model_ticks_to_overflow(&m, m.active), UINT64_MAX);
	model_set_cpl(&m, 0, 0);
	model_set_halted(&m, 0, true);
	assert_int_equal(model_ticks_to_overflow(&m, m.active), UINT64_MAX);
	model_set_halted(&m, 0, false);
	WR(&m, 0, SPFLT, 1); /* gated, USER_PREF 0 */
	assert_int_equal(model_ticks_to_overflow(&m, m.active), UINT64_MAX);
	model_spflt(&m, 0, 1);
	assert_int_equal(model_ticks_to_overflow(&m, m.active), 5);
	WR(&m, 0, GLOBAL, 0);
	assert_int_equal(model_ticks_to_overflow(&m, m.active), UINT64_MAX);
}

/*
 * CMASK/INV (327357-001 Table 1-5, pmu/model/core.h): a tick has one event, so CMASK 1
 * counts every tick, CMASK >= 2 none; INV inverts the comparison.
 */
static void test_cmask_inv(void **state)
{
	(void)state;
	struct pmu_model m;
	const struct {
		uint32_t bits;
		uint64_t want; /* after 100 ticks */
	} rows[] = {
		{ CMASK(1), 100 },
		{ CMASK(2), 0 },
		{ CMASK(255), 0 },
		{ CMASK(2) | INV, 100 },
		{ CMASK(255) | INV, 100 },
		{ CMASK(1) | INV, 0 },
	};

	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++)
		for (int i = 0; i < 2; i++) {
			start(&m, i, CLK | USR | OS | rows[r].bits);
			WR(&m, 0, PERFCTR0 + i, TWO40 - 1000);
			assert_int_equal(model_ticks_to_overflow(&m, m.active), rows[r].want ? 1000 : UINT64_MAX);
			READS(&m, 100, PERFCTR0 + i, TWO40 - 1000 + rows[r].want);
		}
}

/*
 * Edge detect (327357-001 Table 1-5, pmu/model/core.h): counts 1 at the start of each
 * stretch of counting, however long the stretch.
 */
static void test_edge_detect(void **state)
{
	(void)state;
	struct pmu_model m;

	start(&m, 0, CLK | USR | OS | EDGE);
	READS(&m, 0, PERFCTR0, 0);
	READS(&m, 100, PERFCTR0, 1);
	READS(&m, 200, PERFCTR0, 1);
	model_set_halted(&m, 200, true);
	READS(&m, 250, PERFCTR0, 1);
	model_set_halted(&m, 300, false);
	READS(&m, 400, PERFCTR0, 2);
	/* Changing rings with USR|OS does not interrupt counting: no new edge. */
	model_set_cpl(&m, 400, 3);
	model_set_cpl(&m, 450, 0);
	READS(&m, 500, PERFCTR0, 2);
	/* A stretch cut by GLOBAL_CTRL. */
	WR(&m, 500, GLOBAL, 0);
	WR(&m, 600, GLOBAL, 1);
	READS(&m, 700, PERFCTR0, 3);
	/* A stretch cut by SPFLT. */
	WR(&m, 700, SPFLT, USER_PREF | 1);
	model_spflt(&m, 750, 0);
	model_spflt(&m, 800, 1);
	READS(&m, 900, PERFCTR0, 4);
	/* With OS only, leaving ring 0 ends the stretch and returning starts one. */
	WR(&m, 900, EVNTSEL0, CLK | OS | EDGE | EN);
	model_set_cpl(&m, 950, 3);
	model_set_cpl(&m, 1000, 0);
	READS(&m, 1100, PERFCTR0, 5);
}

/* RDPMC (327357-001 Table 1-1): ECX 0 or 1 read the zero-extended 40-bit counters; other ECX fail. */
static void test_rdpmc(void **state)
{
	(void)state;
	struct pmu_model m;
	uint64_t v;

	model_reset(&m, 0);
	WR(&m, 0, EVNTSEL0, CLK | USR | OS | EN);
	WR(&m, 0, GLOBAL, 1);
	WR(&m, 0, PERFCTR0, 1000);
	WR(&m, 0, PERFCTR1, MASK40);
	v = POISON;
	assert_int_equal(model_rdpmc(&m, 50, 0, &v), 0);
	assert_int_equal(v, 1050);
	v = POISON;
	assert_int_equal(model_rdpmc(&m, 50, 1, &v), 0);
	assert_int_equal(v, 0xffffffffffULL);
	const uint32_t bad[] = { 2, 3, 0x40000000, 0x40000001, 0xffffffff };
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		v = POISON;
		assert_int_equal(model_rdpmc(&m, 60, bad[k], &v), -1);
		assert_int_equal(v, POISON);
	}
}

/* model_advance with now < last (or == last) changes nothing. */
static void test_advance_backwards(void **state)
{
	(void)state;
	struct pmu_model m, copy;

	start(&m, 0, CLK | USR | OS);
	model_advance(&m, 100);
	READS(&m, 100, PERFCTR0, 100);
	memcpy(&copy, &m, sizeof(m));
	model_advance(&m, 50);
	assert_memory_equal(&m, &copy, sizeof(m));
	model_advance(&m, 100);
	assert_memory_equal(&m, &copy, sizeof(m));
	model_advance(&m, 0);
	assert_memory_equal(&m, &copy, sizeof(m));
	/* An earlier read sees the value as of `last`. */
	READS(&m, 10, PERFCTR0, 100);
	/* Forward again: only the 50 new ticks. */
	READS(&m, 150, PERFCTR0, 150);
}

/* A counter written while counting holds the written value at that tick and counts on. */
static void test_write_while_counting(void **state)
{
	(void)state;
	struct pmu_model m;

	start(&m, 0, INST_EXEC | USR | OS);
	WR(&m, 50, PERFCTR0, 1000);
	READS(&m, 80, PERFCTR0, 1030);
	READS(&m, 80, STATUS, 0);
}

/* Events another observer counted (the QEMU plugin) wrap the 40-bit counter with status and PMI like ticks. */
static void test_add(void **state)
{
	(void)state;
	struct pmu_model m;

	start(&m, 1, 0x0000 /* DATA_READ: not the model's, so it never ticks */ | USR | OS | INT);
	WR(&m, 0, PERFCTR1, TWO40 - 10);
	READS(&m, 1000, PERFCTR1, TWO40 - 10);
	model_add(&m, 1, 9);
	READS(&m, 1000, PERFCTR1, TWO40 - 1);
	assert_false(m.line);
	model_add(&m, 1, 3);
	READS(&m, 1000, PERFCTR1, 2);
	READS(&m, 1000, STATUS, 2);
	assert_true(m.line);
	assert_true(m.rose);
	model_add(&m, 0, 5); /* counter 0, not enabled: the observer's word is taken as it comes */
	READS(&m, 1000, PERFCTR0, 5);
	READS(&m, 1000, STATUS, 2);
}

/* xorshift64: the same pseudo-random configurations on every run */
static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void assert_same_model(const struct pmu_model *a, const struct pmu_model *b)
{
	for (int i = 0; i < 2; i++) {
		assert_int_equal(a->ctr[i], b->ctr[i]);
		assert_int_equal(a->evtsel[i], b->evtsel[i]);
		assert_int_equal(a->active_at[i], b->active_at[i]);
	}
	assert_int_equal(a->spflt, b->spflt);
	assert_int_equal(a->status, b->status);
	assert_int_equal(a->global_ctrl, b->global_ctrl);
	assert_int_equal(a->line, b->line);
	assert_int_equal(a->rose, b->rose);
	assert_int_equal(a->cond, b->cond);
	assert_int_equal(a->cpl, b->cpl);
	assert_int_equal(a->halted, b->halted);
	assert_int_equal(a->active, b->active);
	assert_int_equal(a->last, b->last);
}

/*
 * model_user_insn (the emulation's fast path) against the calls it stands
 * for: Ring-3 stretch, RDPMC or SPFLT at `now`, provisional CPL 3. Over
 * pseudo-random configurations (edge, CMASK, INV, USR/OS, SPFLT gating,
 * counters near the wrap, ticks out of order) it either leaves the model
 * as the step-by-step calls do, or declines and changes nothing; and it
 * takes the plain, wrap-free case it exists for.
 */
static void test_user_insn_same_as_steps(void **state)
{
	(void)state;
	static const uint32_t events[] = { INST_EXEC, 0x002a /* CPU_CLK_UNHALTED */, 0x0000 };
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	int taken = 0, declined = 0;

	for (int iter = 0; iter < 20000; iter++) {
		struct pmu_model m, steps;
		uint64_t last = rnd(&x) % 1000;

		model_reset(&m, 0);
		for (int i = 0; i < 2; i++) {
			uint64_t r = rnd(&x);
			uint32_t e = events[r % 3] | (r & 8 ? USR : 0) | (r & 16 ? OS : 0) | (r & 32 ? EN : 0) |
				     (r & 64 ? INT : 0);
			if (r % 7 == 0)
				e |= EDGE;
			if (r % 11 == 0)
				e |= CMASK(r % 3) | (r & 128 ? INV : 0);
			WR(&m, 0, EVNTSEL0 + i, e);
			WR(&m, 0, PERFCTR0 + i, r & 256 ? TWO40 - 1 - (r >> 32) % 3000 : (r >> 24) % 100000);
		}
		WR(&m, 0, SPFLT, rnd(&x) & 3);
		WR(&m, 0, GLOBAL, rnd(&x) & 3);
		model_spflt(&m, 0, rnd(&x) & 1);
		model_set_cpl(&m, last, 3); /* to_user, provisional */
		uint64_t fu = last + rnd(&x) % 2000 - (iter % 50 == 0 ? 1500 : 0);
		uint64_t fk = fu + rnd(&x) % 2000, now = fk + rnd(&x) % 500 + (iter % 97 != 0);
		int ecx = rnd(&x) % 3 - 1; /* -1: SPFLT */
		uint64_t operand = rnd(&x), v = 0, want = 0;

		steps = m;
		if (!model_user_insn(&m, fu, fk, now, ecx, operand, &v)) {
			assert_same_model(&m, &steps);
			declined++;
			continue;
		}
		model_user_stretch(&steps, fu, fk);
		if (ecx >= 0)
			assert_int_equal(model_rdpmc(&steps, now, ecx, &want), 0);
		else
			model_spflt(&steps, now, operand);
		model_set_cpl(&steps, now, 3);
		assert_same_model(&m, &steps);
		assert_int_equal(v, want);
		taken++;
	}
	assert_true(taken > 5000);
	assert_true(declined > 1000);
}

/*
 * The model presenting architectural perfmon (Intel SDM Vol. 3B §18.2; MSRs
 * from Vol. 4 Table 2-2, spelled out here): CPUID leaf 0AH as a Knights
 * Landing core reports it describes 2 counters of 40 bits at IA32_PMC0
 * 0xC1 and IA32_PERFEVTSEL0 0x186, global registers at 0x38E-0x390, no
 * SPFLT; a version 1 leaf, or one of no counters, is refused.
 */
#define A_PMC0     0xc1u
#define A_PMC1     0xc2u
#define A_EVTSEL0  0x186u
#define A_STATUS   0x38eu
#define A_GLOBAL   0x38fu
#define A_OVF      0x390u
#define A_INST     0x00c0u /* INST_RETIRED.ANY_P (Table 18-1) */
#define A_FIXED0   0x309u  /* IA32_FIXED_CTR0; 1 and 2 follow */
#define A_FIXED_CTRL 0x38du /* IA32_FIXED_CTR_CTRL: 4 bits per counter, OS 0, USR 1, AnyThread 2, PMI 3 */

static void test_arch_description(void **state)
{
	(void)state;
	struct pmu_desc d;

	assert_true(pmu_arch_describe(&d, 0x07280203u, 0x503u)); /* version 3, 2 x 40 bits, EBX length 7; 3 fixed x 40 */
	assert_int_equal(d.version, 3);
	assert_int_equal(d.counters, 2);
	assert_int_equal(d.width, 40);
	assert_true(d.ctr_mask == MASK40 && pmu_knc_desc.ctr_mask == MASK40); /* and KNC's, 327357-001 §1.4.3.2 */
	assert_int_equal(d.fixed, 3);
	assert_int_equal(d.fixed_width, 40);
	assert_int_equal(d.fixed_ctr0, A_FIXED0);
	assert_int_equal(d.fixed_ctrl, A_FIXED_CTRL);
	assert_int_equal(pmu_knc_desc.fixed, 0);
	assert_int_equal(d.ctr0, A_PMC0);
	assert_int_equal(d.evtsel0, A_EVTSEL0);
	assert_int_equal(d.global_status, A_STATUS);
	assert_int_equal(d.global_ctrl, A_GLOBAL);
	assert_int_equal(d.global_ovf_ctrl, A_OVF);
	assert_int_equal(d.spflt_ctrl, 0);
	assert_int_equal(d.ev_instructions, A_INST);
	assert_true(d.max_period < (1ULL << 31)); /* 32-bit writes, sign-extended */
	assert_true(pmu_arch_describe(&d, 0x07300803u, 0)); /* 8 counters of 48 bits: the first PMU_MAX_COUNTERS */
	assert_int_equal(d.counters, PMU_MAX_COUNTERS);
	assert_int_equal(d.width, 48);
	assert_true(d.ctr_mask == (1ULL << 48) - 1);
	assert_int_equal(d.fixed, 0); /* EDX 0: none */
	assert_true(pmu_arch_describe(&d, 0x07300803u, 0x0607u)); /* 7 fixed of 48 bits: the first PMU_MAX_FIXED */
	assert_int_equal(d.fixed, PMU_MAX_FIXED);
	assert_int_equal(d.fixed_width, 48);
	assert_true(pmu_arch_describe(&d, 0x07300803u, 0x0003u)); /* 3 fixed of 0 bits: none used */
	assert_int_equal(d.fixed, 0);
	assert_false(pmu_arch_describe(&d, 0x07280201u, 0)); /* version 1: no global control */
	assert_false(pmu_arch_describe(&d, 0x07280003u, 0)); /* no counters */
	assert_false(pmu_arch_describe(&d, 0x07280103u, 0)); /* one: the driver uses two */
	assert_false(pmu_arch_describe(&d, 0, 0));          /* TCG's leaf of zeros */
}

/* The model presenting KNL's leaf (d), reset at tick 0. */
static void present_knl(struct pmu_desc *d, struct pmu_model *m)
{
	assert_true(pmu_arch_describe(d, 0x07280203u, 0x503u));
	model_present(d);
	model_reset(m, 0);
}

static void test_arch_registers(void **state)
{
	(void)state;
	struct pmu_desc d;
	struct pmu_model m;
	uint64_t v;

	present_knl(&d, &m);
	/* A counter write takes bits 31:0 sign-extended (§18.2.1): 2^40 - 5 from its low 32 bits. */
	WR(&m, 0, A_PMC0, 0xfffffffbULL);
	READS(&m, 0, A_PMC0, TWO40 - 5);
	WR(&m, 0, A_PMC1, 0x123456789ULL); /* bit 32 and above ignored, bit 31 clear */
	READS(&m, 0, A_PMC1, 0x23456789ULL);
	/* Bit 19 (PC) is an EvtSel bit here, not reserved as on KNC; bits 63:32 are. */
	WR(&m, 0, A_EVTSEL0, A_INST | OS | USR | RSVD19 | INT | EN);
	REFUSED_WR(&m, 0, A_EVTSEL0, 1ULL << 32);
	WR(&m, 0, A_EVTSEL0, A_INST | OS | USR | INT | EN);
	WR(&m, 0, A_GLOBAL, 1);
	/* Counts INST_RETIRED by the tick, wraps after 5, status bit 0 and the PMI line. */
	READS(&m, 4, A_PMC0, TWO40 - 1);
	READS(&m, 6, A_PMC0, 1);
	READS(&m, 6, A_STATUS, 1);
	assert_true(m.rose);
	WR(&m, 6, A_OVF, 1);
	READS(&m, 6, A_STATUS, 0);
	REFUSED_WR(&m, 6, A_STATUS, 0);
	/* No SPFLT_CONTROL, and KNC's MSRs are not this PMU's. */
	assert_int_equal(model_rdmsr(&m, 6, SPFLT, &v), -1);
	assert_int_equal(model_rdmsr(&m, 6, PERFCTR0, &v), -1);
	REFUSED_WR(&m, 6, GLOBAL, 1);
	/* RDPMC: counters 0 and 1. */
	assert_int_equal(model_rdpmc(&m, 7, 0, &v), 0);
	assert_int_equal(v, 2);
	assert_int_equal(model_rdpmc(&m, 7, 2, &v), -1);
	model_present(&pmu_knc_desc);
}

/*
 * The fixed counters (§18.2.2): IA32_FIXED_CTR_CTRL's OS/USR bits and
 * GLOBAL_CTRL bit 32 + j gate counter j, which counts every unhalted tick
 * at those levels (instructions, core and reference cycles: one each per
 * tick in the model); it wraps at 40 bits into GLOBAL_STATUS bit 32 + j,
 * which GLOBAL_OVF_CTRL clears, and raises the PMI line only with its PMI
 * bit; RDPMC reads it with ECX = 2^30 + j. KNC has none.
 */
static void test_arch_fixed_counters(void **state)
{
	(void)state;
	struct pmu_desc d;
	struct pmu_model m;
	uint64_t v;

	present_knl(&d, &m);
	WR(&m, 0, A_FIXED_CTRL, 0x2 | 0x1 << 4 | 0x3 << 8); /* 0: USR, 1: OS, 2: both */
	WR(&m, 0, A_GLOBAL, 7ULL << 32);
	model_set_cpl(&m, 10, 3);  /* 10 ticks in Ring 0 */
	model_set_cpl(&m, 30, 0);  /* 20 in Ring 3 */
	READS(&m, 30, A_FIXED0, 20);
	READS(&m, 30, A_FIXED0 + 1, 10);
	READS(&m, 30, A_FIXED0 + 2, 30);
	model_set_halted(&m, 30, true); /* unhalted events: none while halted */
	model_set_halted(&m, 50, false);
	READS(&m, 50, A_FIXED0 + 2, 30);
	/* GLOBAL_CTRL gates them: bit 33 off stops counter 1 alone. */
	WR(&m, 50, A_GLOBAL, 5ULL << 32);
	READS(&m, 60, A_FIXED0 + 1, 10);
	READS(&m, 60, A_FIXED0 + 2, 40);
	READS(&m, 60, A_GLOBAL, 5ULL << 32);
	/* A wrap: status bit 34, no PMI line without the PMI bit; then with it. */
	WR(&m, 60, A_FIXED0 + 2, 0xfffffffeULL); /* bits 31:0 sign-extended, as the PMCs' */
	READS(&m, 60, A_FIXED0 + 2, MASK40 - 1);
	READS(&m, 63, A_FIXED0 + 2, 1);
	READS(&m, 63, A_STATUS, 1ULL << 34);
	assert_false(m.line);
	WR(&m, 63, A_FIXED_CTRL, 0x2 | 0x1 << 4 | 0xb << 8);
	assert_true(m.line);
	WR(&m, 63, A_OVF, 1ULL << 34);
	READS(&m, 63, A_STATUS, 0);
	assert_false(m.line);
	/* RDPMC ECX 2^30 + j; j past the PMU's fixed counters, or a KNC's, #GP. */
	assert_int_equal(model_rdpmc(&m, 64, (1u << 30) + 2, &v), 0);
	assert_int_equal(v, 2);
	assert_int_equal(model_rdpmc(&m, 64, (1u << 30) + 3, &v), -1);
	/* Reserved: AnyThread (refused by the model, which counts one thread), bits past counter 2, GLOBAL bit 35. */
	REFUSED_WR(&m, 64, A_FIXED_CTRL, 0x4);
	REFUSED_WR(&m, 64, A_FIXED_CTRL, 0x1 << 12);
	REFUSED_WR(&m, 64, A_GLOBAL, 1ULL << 35);
	REFUSED_WR(&m, 64, A_OVF, 1ULL << 35);
	assert_int_equal(model_rdmsr(&m, 64, A_FIXED0 + 3, &v), -1);
	model_present(&pmu_knc_desc);
	model_reset(&m, 0);
	assert_int_equal(model_rdpmc(&m, 0, 1u << 30, &v), -1);
	assert_int_equal(model_rdmsr(&m, 0, A_FIXED0, &v), -1);
	REFUSED_WR(&m, 0, A_FIXED_CTRL, 0);
	REFUSED_WR(&m, 0, GLOBAL, 1ULL << 32);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reset),
		cmocka_unit_test(test_counter_40_bits),
		cmocka_unit_test(test_enable_and_global),
		cmocka_unit_test(test_usr_os_filter),
		cmocka_unit_test(test_spflt_gating),
		cmocka_unit_test(test_halted_not_counted),
		cmocka_unit_test(test_events_counted),
		cmocka_unit_test(test_overflow),
		cmocka_unit_test(test_status_without_int),
		cmocka_unit_test(test_pmi_line_edges),
		cmocka_unit_test(test_pmi_line_is_or_of_int_bits),
		cmocka_unit_test(test_msr_access),
		cmocka_unit_test(test_reserved_bits),
		cmocka_unit_test(test_ticks_to_overflow),
		cmocka_unit_test(test_cmask_inv),
		cmocka_unit_test(test_edge_detect),
		cmocka_unit_test(test_rdpmc),
		cmocka_unit_test(test_advance_backwards),
		cmocka_unit_test(test_write_while_counting),
		cmocka_unit_test(test_ring_and_state_changes),
		cmocka_unit_test(test_add),
		cmocka_unit_test(test_user_insn_same_as_steps),
		cmocka_unit_test(test_arch_description),
		cmocka_unit_test(test_arch_registers),
		cmocka_unit_test(test_arch_fixed_counters),
	};

	alarm(60); /* a hang is a failure too */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
