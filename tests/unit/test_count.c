/*
 * plugin/count.c on the host: the plugin's events counted under the
 * registers the model publishes, by 327357-001 §1.4.3.3-7 (EN, GLOBAL_CTRL, USR/OS,
 * SPFLT, CMASK, INV, edge detect), with the plugin's cycle = an instruction.
 * Register bits are spelled out from 327357-001's tables.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "plugin/count.h"

/* 327357-001 Table 1-5 */
#define USR       (1u << 16)
#define OS        (1u << 17)
#define EDGE      (1u << 18)
#define EN        (1u << 22)
#define INV       (1u << 23)
#define CMASK(n)  ((uint32_t)(n) << 24)
/* 327357-001 Table 1-7 */
#define USER_PREF (1ULL << 63)
/* 327357-001 Table 1-6 */
#define DATA_READ  0x00u
#define DATA_WRITE 0x01u
#define INST_EXEC  0x16u

static int event_of(uint32_t code)
{
	return code == DATA_READ ? PEV_DATA_READ : code == DATA_WRITE ? PEV_DATA_WRITE : -1;
}

static struct pmushare_thread sh;
static struct count_state s;

/* The model publishes a register set (seq goes up by 2, as share_publish does). */
static void publish(uint32_t sel0, uint32_t sel1, uint32_t global, uint64_t spflt)
{
	sh.seq += 1;
	sh.evtsel[0] = sel0;
	sh.evtsel[1] = sel1;
	sh.global_ctrl = global;
	sh.spflt = spflt;
	sh.seq += 1;
}

static int setup(void **state)
{
	(void)state;
	memset(&sh, 0, sizeof(sh));
	count_init(&s, &sh, event_of);
	return 0;
}

/* One instruction (a block of one) at privilege `user` with `reads` DATA_READ events. */
static void insn(bool user, uint64_t reads)
{
	count_block(&s, user, 1);
	if (reads)
		count_event(&s, PEV_DATA_READ, reads, 0);
}

static void test_enables(void **state)
{
	(void)state;
	insn(true, 5);
	assert_int_equal(sh.delta[0], 0); /* nothing published */
	publish(DATA_READ | USR | OS | EN, 0, 1, 0);
	insn(true, 5);
	insn(false, 2);
	assert_int_equal(sh.delta[0], 7);
	publish(DATA_READ | USR | OS | EN, 0, 0, 0); /* GLOBAL_CTRL[0] = 0 */
	insn(true, 5);
	publish(DATA_READ | USR | OS, 0, 1, 0); /* EvtSel.EN = 0 */
	insn(true, 5);
	publish(DATA_WRITE | USR | OS | EN, DATA_READ | USR | OS | EN, 3, 0);
	insn(true, 5); /* counter 0 counts writes now */
	assert_int_equal(sh.delta[0], 7);
	assert_int_equal(sh.delta[1], 5);
	publish(INST_EXEC | USR | OS | EN, 0, 1, 0); /* not the plugin's event */
	insn(true, 5);
	assert_int_equal(sh.delta[0], 7);
}

/* `programmed`: the events the EvtSels name, whether they count or not (the plugin's TLB switch). */
static void test_programmed(void **state)
{
	(void)state;
	publish(DATA_READ | USR, 0, 0, 0); /* neither EN nor GLOBAL_CTRL: named all the same */
	insn(true, 0);
	assert_int_equal(s.programmed, 1ull << PEV_DATA_READ);
	assert_int_equal(s.counted[1], 0);
	publish(DATA_READ | USR | EN, DATA_WRITE | OS | EN, 3, 1); /* gated by SPFLT, USER_PREF 0 */
	insn(true, 0);
	assert_int_equal(s.programmed, 1ull << PEV_DATA_READ | 1ull << PEV_DATA_WRITE);
	publish(INST_EXEC | USR | EN, INST_EXEC, 1, 0); /* not the plugin's event (an EvtSel of 0 names DATA_READ) */
	insn(true, 0);
	assert_int_equal(s.programmed, 0);
}

static void test_usr_os(void **state)
{
	(void)state;
	publish(DATA_READ | USR | EN, DATA_READ | OS | EN, 3, 0);
	insn(true, 3);
	insn(false, 4);
	insn(true, 1);
	assert_int_equal(sh.delta[0], 4);
	assert_int_equal(sh.delta[1], 4);
}

/* SPFLT_CONTROL[i] set: counter i counts only while USER_PREF is 1 (327357-001 §1.4.3.4). */
static void test_spflt(void **state)
{
	(void)state;
	publish(DATA_READ | USR | EN, DATA_READ | USR | EN, 3, 1);
	insn(true, 3);
	assert_int_equal(sh.delta[0], 0);
	assert_int_equal(sh.delta[1], 3);
	publish(DATA_READ | USR | EN, DATA_READ | USR | EN, 3, 1 | USER_PREF);
	insn(true, 3);
	assert_int_equal(sh.delta[0], 3);
	assert_int_equal(sh.delta[1], 6);
}

/* While the card rewrites the registers (odd seq) the plugin keeps the last stable set. */
static void test_publication_in_progress(void **state)
{
	(void)state;
	publish(DATA_READ | USR | EN, 0, 1, 0);
	insn(true, 0); /* the plugin reads the stable set */
	sh.seq += 1;
	sh.global_ctrl = 0;
	insn(true, 2);
	assert_int_equal(sh.delta[0], 2);
	sh.seq += 1;
	insn(true, 2);
	assert_int_equal(sh.delta[0], 2);
}

/* CMASK: 1 per instruction with at least CMASK events; INV: with fewer, instructions without any included. */
static void test_cmask_inv(void **state)
{
	(void)state;
	publish(DATA_READ | USR | EN | CMASK(2), DATA_READ | USR | EN | CMASK(2) | INV, 3, 0);
	static const uint64_t k[] = { 1, 2, 0, 3, 2, 1 };
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		insn(true, k[i]);
	insn(false, 5); /* closes the last user instruction; counts nothing itself (USR only) */
	insn(true, 0);  /* closes the kernel one */
	assert_int_equal(sh.delta[0], 3); /* k = 2, 3, 2 */
	assert_int_equal(sh.delta[1], 3); /* k = 1, 0, 1 */
	/* INV without CMASK has no effect. */
	publish(DATA_READ | USR | EN | INV, 0, 1, 0);
	insn(true, 4);
	insn(true, 0);
	assert_int_equal(sh.delta[0], 7);
}

/* Edge detect: instructions whose condition is true after one whose was false. */
static void test_edge(void **state)
{
	(void)state;
	publish(DATA_READ | USR | EN | EDGE, DATA_READ | USR | EN | EDGE | CMASK(2), 3, 0);
	static const uint64_t k[] = { 1, 1, 0, 2, 3, 1, 2 };
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		insn(true, k[i]);
	insn(true, 0);
	assert_int_equal(sh.delta[0], 2); /* runs of k >= 1: {1,1}, {2,3,1,2} */
	assert_int_equal(sh.delta[1], 2); /* runs of k >= 2: {2,3}, {2} */
	/* An instruction the counter does not count (the kernel's) breaks a run. */
	insn(true, 1);
	insn(false, 1);
	insn(true, 1);
	insn(true, 0);
	assert_int_equal(sh.delta[0], 4);
}

/* Blocks of several instructions: CMASK and edge detect still go instruction by instruction. */
static void test_blocks(void **state)
{
	(void)state;
	publish(DATA_READ | USR | EN | CMASK(1), DATA_READ | USR | EN | EDGE, 3, 0);
	count_block(&s, true, 5); /* reads: 2, 0, 1, 1, 0 */
	count_event(&s, PEV_DATA_READ, 2, 0);
	count_event(&s, PEV_DATA_READ, 1, 2);
	count_event(&s, PEV_DATA_READ, 1, 3);
	assert_int_equal(sh.delta[0], 0); /* a block is closed when the next one starts */
	count_block(&s, true, 2); /* reads: 1, 1 */
	assert_int_equal(sh.delta[0], 3); /* instructions with a read */
	assert_int_equal(sh.delta[1], 2); /* runs of them: {0}, {2, 3} */
	count_event(&s, PEV_DATA_READ, 1, 0);
	count_event(&s, PEV_DATA_READ, 1, 1);
	count_block(&s, false, 3);
	assert_int_equal(sh.delta[0], 5);
	assert_int_equal(sh.delta[1], 3); /* the second block's run starts after instruction 4's 0 */
	/* A plain counter adds everything at once; an event of another block's privilege too. */
	publish(DATA_READ | USR | EN, 0, 1, 0);
	count_block(&s, true, 4);
	count_event(&s, PEV_DATA_READ, 7, 3);
	count_event_at(&s, false, PEV_DATA_READ, 1); /* OS: not counted by a USR counter */
	count_event_at(&s, true, PEV_DATA_READ, 1);
	assert_int_equal(sh.delta[0], 13);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_enables, setup),
		cmocka_unit_test_setup(test_programmed, setup),
		cmocka_unit_test_setup(test_usr_os, setup),
		cmocka_unit_test_setup(test_spflt, setup),
		cmocka_unit_test_setup(test_publication_in_progress, setup),
		cmocka_unit_test_setup(test_cmask_inv, setup),
		cmocka_unit_test_setup(test_edge, setup),
		cmocka_unit_test_setup(test_blocks, setup),
	};

	alarm(60);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
