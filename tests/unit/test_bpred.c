/* plugin/bpred.c on the host: the BTB predictor's outcomes, exactly as plugin/bpred.h describes them. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <unistd.h>
#include <cmocka.h>

#include "plugin/bpred.h"

#define PC  0x401000ULL
#define TGT 0x400f00ULL

/* The 2-bit counter: allocated weakly taken, one step per outcome; BTB misses never mispredict. */
static void test_counter(void **state)
{
	(void)state;
	struct bpred b;

	assert_true(bpred_init(&b));
	assert_false(bpred_resolve(&b, PC, true, TGT));  /* miss: allocated at 2 */
	assert_false(bpred_resolve(&b, PC, true, TGT));  /* 2: taken, right; 3 */
	assert_true(bpred_resolve(&b, PC, false, 0));    /* 3: taken, wrong; 2 */
	assert_true(bpred_resolve(&b, PC, false, 0));    /* 2: taken, wrong; 1 */
	assert_false(bpred_resolve(&b, PC, false, 0));   /* 1: not taken, right; 0 */
	assert_false(bpred_resolve(&b, PC, false, 0));   /* 0 stays 0 */
	assert_true(bpred_resolve(&b, PC, true, TGT));   /* 0: not taken, wrong; 1 */
	assert_true(bpred_resolve(&b, PC, true, TGT));   /* 1: wrong; 2 */
	assert_false(bpred_resolve(&b, PC, true, TGT));  /* 2: right */
	/* A branch never taken is never allocated: its first taken run is a miss, not a misprediction. */
	assert_false(bpred_resolve(&b, PC + 2, false, 0));
	assert_false(bpred_resolve(&b, PC + 2, false, 0));
	assert_false(bpred_resolve(&b, PC + 2, true, TGT));
	assert_false(bpred_resolve(&b, PC + 2, true, TGT));
	bpred_free(&b);
}

/* The epoch: the same exactly while the BTB did not change (the plugin's memo of a settled branch relies on it). */
static void test_epoch(void **state)
{
	(void)state;
	struct bpred b;

	assert_true(bpred_init(&b));
	uint64_t e = b.epoch;
	bpred_resolve(&b, PC, false, 0); /* a miss not taken: nothing allocated */
	assert_int_equal(b.epoch, e);
	bpred_resolve(&b, PC, true, TGT); /* allocated */
	assert_int_not_equal(b.epoch, e);
	e = b.epoch;
	bpred_resolve(&b, PC, true, TGT); /* 2 -> 3 */
	assert_int_not_equal(b.epoch, e);
	e = b.epoch;
	bpred_resolve(&b, PC, true, TGT); /* saturated, right: nothing to learn */
	assert_int_equal(b.epoch, e);
	bpred_resolve(&b, PC + 4 * 64, true, TGT); /* same set: PC is no longer its most recent */
	e = b.epoch;
	bpred_resolve(&b, PC, true, TGT); /* a hit that reorders the set */
	assert_int_not_equal(b.epoch, e);
	e = b.epoch;
	bpred_clear(&b);
	assert_int_not_equal(b.epoch, e);
	bpred_free(&b);
}

/* A taken branch to another target (indirect, return) is mispredicted; the new target is learnt. */
static void test_targets(void **state)
{
	(void)state;
	struct bpred b;

	assert_true(bpred_init(&b));
	assert_false(bpred_resolve(&b, PC, true, 0x1000));
	assert_true(bpred_resolve(&b, PC, true, 0x2000));
	assert_false(bpred_resolve(&b, PC, true, 0x2000));
	bpred_free(&b);
}

/* A loop of 10 iterations run 5 times: one misprediction per run (the exit), after the first allocation. */
static void test_loop(void **state)
{
	(void)state;
	struct bpred b;
	int wrong = 0;

	assert_true(bpred_init(&b));
	for (int run = 0; run < 5; run++)
		for (int i = 0; i < 10; i++)
			wrong += bpred_resolve(&b, PC, i < 9, TGT);
	assert_int_equal(wrong, 5);
	bpred_free(&b);
}

/* 256 entries, 4-way: a fifth branch of one set evicts the least recent, which then misses (no misprediction). */
static void test_capacity(void **state)
{
	(void)state;
	struct bpred b;

	assert_true(bpred_init(&b));
	for (uint64_t k = 0; k < 5; k++) /* 64 sets: PCs 64 apart share a set */
		assert_false(bpred_resolve(&b, PC + 64 * k, true, TGT));
	assert_false(bpred_resolve(&b, PC, false, 0)); /* evicted: a miss, so not mispredicted */
	assert_true(bpred_resolve(&b, PC + 64 * 4, false, 0)); /* still there: predicted taken */
	for (uint64_t k = 0; k < 256; k++) /* 256 branches fit */
		bpred_resolve(&b, 0x800000 + k, true, TGT);
	for (uint64_t k = 0; k < 256; k++)
		assert_true(bpred_resolve(&b, 0x800000 + k, false, 0));
	bpred_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counter),
		cmocka_unit_test(test_epoch),
		cmocka_unit_test(test_targets),
		cmocka_unit_test(test_loop),
		cmocka_unit_test(test_capacity),
	};

	alarm(60);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
