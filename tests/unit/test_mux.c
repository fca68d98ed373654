/*
 * pmu/mux.c on the host: multiplexing more counting events than the two
 * counters. The driver calls it makes (pmu.c: program a counter, read its
 * events, start) are doubles here over two fake counters that count one
 * event per tick of a fake TSC while started, so every count and time the
 * rotation accounts can be checked exactly; the slice timer is a double the
 * test fires by hand.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>
#include <cmocka.h>

#include "pmu/internal.h"
#include "arch/tsc.h" /* tests/unit/shadow: rdtsc() is ours */

#define INSTR  0x0016u /* INSTRUCTIONS_EXECUTED (327357-001 Table 1-6) */
#define CLK    0x002au /* CPU_CLK_UNHALTED */
#define L2A    0x10cbu /* L2 events, counter 0 only (docs/design.md §5.1) */
#define L2B    0x10ccu
#define SLICE  1000    /* ticks */

/* ------------------------------------------------------------ test doubles */

static uint64_t now;                 /* the fake TSC */
static uint32_t on_ctr[2];           /* EvtSel programmed on each counter; 0 = none */
static uint64_t ctr_base[2];         /* counter value at the last start or stop */
static bool started;                 /* GLOBAL_CTRL enables the programmed counters */
static struct timer *armed;          /* the slice timer, if armed */

uint64_t rdtsc(void) { return now; }

/* kernel/stamp.h: NULL, the TSC; or the thread's own clock, `own` (pmu/model/share.h model_clock). */
const volatile uint64_t *stamp_clock;
static uint64_t own;

/* Events counter i has counted: one per tick of the model's clock while started. */
static uint64_t ctr_value(int i, struct pmu_cpu *pc)
{
	return ctr_base[i] + (started && on_ctr[i] ? model_clock() - pc->start_tsc : 0);
}

static struct pmu_cpu cpu;

static int op_wrmsr(uint32_t msr, uint64_t v)
{
	assert_int_equal(msr, pmu_knc_desc.global_ctrl); /* mux.c only stops the counters itself */
	assert_int_equal(v, 0);
	for (int i = 0; i < 2; i++)
		ctr_base[i] = ctr_value(i, &cpu);
	started = false;
	return 0;
}

static const struct pmu_ops test_ops = { .name = "test", .wrmsr = op_wrmsr };
const struct pmu_ops *pmu_ops = &test_ops;
const struct pmu_desc *pmu_hw = &pmu_knc_desc;

uint64_t pmu_counter_events(struct pmu_cpu *pc, int i) { return ctr_value(i, pc); }

void pmu_program_counter(struct pmu_cpu *pc, int i, uint32_t evtsel, uint64_t period)
{
	assert_false(started); /* counters change only while stopped */
	assert_int_equal(period, 0);
	assert_true(i == 0 || !knc_event_counter0_only(EVTSEL_CODE(evtsel)));
	on_ctr[i] = evtsel;
	ctr_base[i] = 0;
	pc->evtsel[i] = evtsel;
}

void pmu_counters_go(struct pmu_cpu *pc)
{
	pc->start_tsc = model_clock();
	started = true;
}

void timer_arm(struct timer *t, uint64_t deadline, timer_fn fn, void *arg)
{
	t->deadline = deadline;
	t->fn = fn;
	t->arg = arg;
	t->armed = true;
	armed = t;
}

void timer_cancel(struct timer *t)
{
	t->armed = false;
	armed = NULL;
}

/* ------------------------------------------------------------ helpers */

static int reset(void **state)
{
	(void)state;
	memset(&cpu, 0, sizeof(cpu));
	memset(on_ctr, 0, sizeof(on_ctr));
	memset(ctr_base, 0, sizeof(ctr_base));
	started = false;
	armed = NULL;
	now = 1000000;
	stamp_clock = NULL;
	own = 0;
	return 0;
}

/* Configures and starts multiplexing of `n` events, bit i of `paired` making i and i+1 one group, as pmu.c does. */
static void start_groups(const uint32_t *ev, uint32_t n, uint32_t paired)
{
	cpu.mux_cfg.nev = n;
	cpu.mux_cfg.paired = paired;
	memcpy(cpu.mux_cfg.evtsel, ev, n * sizeof(*ev));
	cpu.mux_cfg.slice_ticks = SLICE;
	mux_setup(&cpu);
	cpu.running = true;
	pmu_counters_go(&cpu);
	mux_started(&cpu);
}

static void start(const uint32_t *ev, uint32_t n)
{
	start_groups(ev, n, 0);
}

/* Lets the fake clock reach the slice timer and fires it. */
static void next_slice(void)
{
	assert_non_null(armed);
	assert_true(armed->deadline >= now);
	now = armed->deadline;
	armed->fn(armed);
}

static struct pmu_reading read_now(void)
{
	struct pmu_reading r = { 0 };
	mux_read(&cpu, &r, cpu.running ? model_clock() - cpu.start_tsc : 0);
	return r;
}

/* ------------------------------------------------------------ tests */

/*
 * With the plugin's clock (each thread's own instructions) a slice is SLICE
 * ticks of the thread's clock: a timer that comes when the TSC got there
 * but the thread, sharing it with others, did not, ends no slice and is
 * armed again for the rest; running times are the thread's ticks.
 */
static void slices_are_the_threads_own_ticks(void **state)
{
	(void)state;
	const uint32_t ev[] = { INSTR, CLK, INSTR | EVTSEL_USR };

	stamp_clock = &own;
	own = 5000;
	start(ev, 3);
	assert_int_equal(armed->deadline, now + SLICE); /* the earliest the thread can get there */
	now += SLICE;
	own += SLICE / 4; /* three other threads ran the rest */
	armed->fn(armed);
	assert_int_equal(on_ctr[0], INSTR);
	assert_int_equal(on_ctr[1], CLK);
	assert_true(armed && armed->deadline == now + SLICE * 3 / 4);
	now += SLICE * 3 / 4;
	own += SLICE * 3 / 4;
	armed->fn(armed); /* the slice ends: events 0 and 1 counted SLICE each, over SLICE ticks */
	assert_int_equal(on_ctr[0], INSTR | EVTSEL_USR);
	struct pmu_reading r = read_now();
	assert_int_equal(r.value[0], SLICE);
	assert_int_equal(r.running_ticks[0], SLICE);
	assert_int_equal(r.value[1], SLICE);
	assert_int_equal(r.running_ticks[1], SLICE);
	assert_int_equal(r.value[2], 0);
}

/* Three events, two counters: each slice moves on by two, so each event is on a counter 2 of 3 slices. */
static void three_events_take_turns_and_account_exactly(void **state)
{
	(void)state;
	const uint32_t ev[] = { INSTR, CLK, INSTR | EVTSEL_USR };

	start(ev, 3);
	assert_int_equal(on_ctr[0], ev[0]);
	assert_int_equal(on_ctr[1], ev[1]);
	assert_int_equal(armed->deadline, now + SLICE);
	uint32_t seen[3][2] = { { 0 } };
	for (int s = 0; s < 6; s++) {
		for (int i = 0; i < 2; i++)
			for (int e = 0; e < 3; e++)
				seen[e][i] += on_ctr[i] == ev[e];
		next_slice();
	}
	struct pmu_reading r = read_now();
	assert_true(r.mux);
	assert_int_equal(r.nev, 3);
	for (int e = 0; e < 3; e++) {
		assert_int_equal(r.evtsel[e], ev[e]);
		assert_int_equal(seen[e][0] + seen[e][1], 4);
		/* One event per tick on a counter: the count is exactly the time on a counter. */
		assert_int_equal(r.running_ticks[e], 4 * SLICE);
		assert_int_equal(r.value[e], 4 * SLICE);
	}
}

/* A reading in the middle of a slice includes that slice's counts and time. */
static void a_reading_includes_the_current_slice(void **state)
{
	(void)state;
	const uint32_t ev[] = { INSTR, CLK, INSTR | EVTSEL_OS };

	start(ev, 3);
	next_slice();     /* events 0, 1 had a slice; now 2 and 0 */
	now += SLICE / 4;
	struct pmu_reading r = read_now();
	assert_int_equal(r.value[0], SLICE + SLICE / 4);
	assert_int_equal(r.running_ticks[0], SLICE + SLICE / 4);
	assert_int_equal(r.value[1], SLICE);
	assert_int_equal(r.value[2], SLICE / 4);
}

/* Stopped, nothing counts and the timer is off; restarted, the slice goes on for what it had left. */
static void stop_keeps_the_slice_and_restart_finishes_it(void **state)
{
	(void)state;
	const uint32_t ev[] = { INSTR, CLK, INSTR | EVTSEL_OS };

	start(ev, 3);
	now += 300;
	op_wrmsr(pmu_knc_desc.global_ctrl, 0);
	cpu.running = false;
	mux_stopped(&cpu, now);
	assert_null(armed);
	now += 5000; /* stopped: no counts, no time */
	struct pmu_reading r = read_now();
	assert_int_equal(r.value[0], 300);
	assert_int_equal(r.running_ticks[0], 300);
	cpu.running = true;
	pmu_counters_go(&cpu);
	mux_started(&cpu);
	assert_int_equal(armed->deadline, now + SLICE - 300);
	next_slice();
	r = read_now();
	assert_int_equal(r.value[0], SLICE);
	assert_int_equal(r.running_ticks[1], SLICE);
	assert_int_equal(r.value[2], 0);
}

/* L2 events go on counter 0 only; two of them never share a slice. */
static void l2_events_only_on_counter_0(void **state)
{
	(void)state;
	const uint32_t ev[] = { L2A, L2B, INSTR };

	start(ev, 3);
	for (int s = 0; s < 12; s++) {
		assert_false(knc_event_counter0_only(on_ctr[1])); /* also checked in pmu_program_counter */
		next_slice();
	}
	struct pmu_reading r = read_now();
	for (int e = 0; e < 3; e++)
		assert_true(r.running_ticks[e] > 0);
	/* What each counted is what it was on a counter for, whichever counter. */
	for (int e = 0; e < 3; e++)
		assert_int_equal(r.value[e], r.running_ticks[e]);
}

/* Two events that fit the counters need no rotation: no timer, the whole time on a counter. */
static void two_events_do_not_rotate(void **state)
{
	(void)state;
	const uint32_t ev[] = { INSTR, CLK };

	start(ev, 2);
	assert_null(armed);
	now += 12345;
	struct pmu_reading r = read_now();
	assert_int_equal(r.value[0], 12345);
	assert_int_equal(r.running_ticks[1], 12345);
}

/* Two L2 events cannot share the counters: they rotate even though there are two counters. */
static void two_l2_events_rotate(void **state)
{
	(void)state;
	const uint32_t ev[] = { L2A, L2B };

	start(ev, 2);
	assert_int_equal(on_ctr[0], L2A);
	assert_int_equal(on_ctr[1], 0);
	next_slice();
	assert_int_equal(on_ctr[0], L2B);
	next_slice();
	struct pmu_reading r = read_now();
	assert_int_equal(r.running_ticks[0], SLICE);
	assert_int_equal(r.running_ticks[1], SLICE);
}

/*
 * A group (perf's {a,b}) is on the counters together in every slice and no
 * other event joins it: five events, {1,2} and {3,4} paired, event 0 alone.
 * Each group's two events count over exactly the same time, so their ratio
 * is of the same instructions.
 */
static void a_group_shares_every_slice(void **state)
{
	(void)state;
	const uint32_t ev[] = { INSTR, CLK, INSTR | EVTSEL_USR, L2A, CLK | EVTSEL_OS };

	start_groups(ev, 5, 1u << 1 | 1u << 3);
	for (int s = 0; s < 9; s++) {
		int a = -1, b = -1;
		for (int e = 0; e < 5; e++) {
			if (on_ctr[0] == ev[e])
				a = e;
			if (on_ctr[1] == ev[e])
				b = e;
		}
		if (a == 0 || b == 0)   /* the single event is alone */
			assert_true(a == 0 && b == -1);
		else                    /* else a whole group, the L2 event on counter 0 */
			assert_true((a == 1 && b == 2) || (a == 3 && b == 4));
		next_slice();
	}
	struct pmu_reading r = read_now();
	assert_int_equal(r.running_ticks[1], r.running_ticks[2]);
	assert_int_equal(r.running_ticks[3], r.running_ticks[4]);
	for (int e = 0; e < 5; e++)
		assert_int_equal(r.running_ticks[e], 3 * SLICE); /* 9 slices, three turns */
}

/* Two events in one group fit the counters: no rotation, as without the group. */
static void one_group_of_two_does_not_rotate(void **state)
{
	(void)state;
	const uint32_t ev[] = { L2A, INSTR };

	start_groups(ev, 2, 1);
	assert_null(armed);
	assert_int_equal(on_ctr[0], L2A);
	assert_int_equal(on_ctr[1], INSTR);
}

/* Clearing zeroes the counts and times of every event. */
static void clear_zeroes_everything(void **state)
{
	(void)state;
	const uint32_t ev[] = { INSTR, CLK, INSTR | EVTSEL_OS };

	start(ev, 3);
	next_slice();
	now += 10;
	/* pmu.c's clear: counters to 0 while stopped, then mux_clear, then the clock restarts. */
	op_wrmsr(pmu_knc_desc.global_ctrl, 0);
	ctr_base[0] = ctr_base[1] = 0;
	mux_clear(&cpu);
	pmu_counters_go(&cpu);
	struct pmu_reading r = read_now();
	for (int e = 0; e < 3; e++) {
		assert_int_equal(r.value[e], 0);
		assert_int_equal(r.running_ticks[e], 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(three_events_take_turns_and_account_exactly, reset),
		cmocka_unit_test_setup(slices_are_the_threads_own_ticks, reset),
		cmocka_unit_test_setup(a_reading_includes_the_current_slice, reset),
		cmocka_unit_test_setup(stop_keeps_the_slice_and_restart_finishes_it, reset),
		cmocka_unit_test_setup(l2_events_only_on_counter_0, reset),
		cmocka_unit_test_setup(two_events_do_not_rotate, reset),
		cmocka_unit_test_setup(two_l2_events_rotate, reset),
		cmocka_unit_test_setup(clear_zeroes_everything, reset),
		cmocka_unit_test_setup(a_group_shares_every_slice, reset),
		cmocka_unit_test_setup(one_group_of_two_does_not_rotate, reset),
	};
	return cmocka_run_group_tests_name("mux", tests, NULL, NULL);
}
