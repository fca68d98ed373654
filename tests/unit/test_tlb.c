/* plugin/tlb.c on the host: TLB geometry (plugin/tlb.h), LRU, page walks and long walks. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <unistd.h>
#include <cmocka.h>

#include "plugin/tlb.h"

#define K4 4096ULL
#define M2 (2ULL << 20)

/* 4 KiB data pages: the first page of a 2 MiB region is a long walk, the rest of it short walks; then hits. */
static void test_data_4k(void **state)
{
	(void)state;
	struct tlbs t;

	assert_true(tlb_init(&t));
	assert_int_equal(tlb_access(&t, false, 0x10000, false), TLB_LONG_WALK);
	assert_int_equal(tlb_access(&t, false, 0x10ff8, false), TLB_HIT); /* same page */
	for (uint64_t p = 1; p < 64; p++)
		assert_int_equal(tlb_access(&t, false, 0x10000 + p * K4, false), TLB_WALK);
	for (uint64_t p = 0; p < 64; p++) /* 64 entries: every page still there */
		assert_int_equal(tlb_access(&t, false, 0x10000 + p * K4, false), TLB_HIT);
	/* A 65th page in the set of page 0x10 (16 sets: pages 0x10, 0x20 ... ) evicts the least recent, 0x10. */
	assert_int_equal(tlb_access(&t, false, 0x10000 + 64 * K4, false), TLB_WALK);
	assert_int_equal(tlb_access(&t, false, 0x10000, false), TLB_WALK);
	assert_int_equal(tlb_access(&t, false, 0x10000 + 16 * K4, false), TLB_WALK); /* it evicted 0x20 */
	tlb_free(&t);
}

/* The epoch: the same exactly while no TLB changed (the plugin's per-instruction page memo relies on it). */
static void test_epoch(void **state)
{
	(void)state;
	struct tlbs t;

	assert_true(tlb_init(&t));
	uint64_t e = t.epoch;
	tlb_access(&t, false, 0x10000, false); /* a miss */
	assert_int_not_equal(t.epoch, e);
	tlb_access(&t, false, 0x11000, false);           /* the next set */
	tlb_access(&t, false, 0x10000 + 16 * K4, false); /* the same set as 0x10000 */
	e = t.epoch;
	tlb_access(&t, false, 0x10000 + 16 * K4, false); /* its most recent entry */
	tlb_access(&t, false, 0x11ff8, false);           /* the next set's most recent entry */
	assert_int_equal(t.epoch, e);
	tlb_access(&t, false, 0x10000, false);           /* a hit that reorders the set */
	assert_int_not_equal(t.epoch, e);
	e = t.epoch;
	tlb_flush(&t);
	assert_int_not_equal(t.epoch, e);
	tlb_free(&t);
}

/* Code and data have their own L1 TLBs and share the L2 TLB; 2 MiB pages have 8 entries. */
static void test_code_data_large(void **state)
{
	(void)state;
	struct tlbs t;

	assert_true(tlb_init(&t));
	assert_int_equal(tlb_access(&t, false, 5 * M2, true), TLB_LONG_WALK);
	assert_int_equal(tlb_access(&t, true, 5 * M2 + 64, true), TLB_WALK); /* the L2 TLB has the region */
	assert_int_equal(tlb_access(&t, true, 5 * M2 + 4096, true), TLB_HIT);
	assert_int_equal(tlb_access(&t, true, 0x8000400000ULL, false), TLB_LONG_WALK);
	for (uint64_t r = 6; r < 13; r++) /* 2 sets of 4: regions 6-12 fill them with 5 */
		assert_int_equal(tlb_access(&t, false, r * M2, true), TLB_LONG_WALK);
	for (uint64_t r = 5; r < 13; r++)
		assert_int_equal(tlb_access(&t, false, r * M2, true), TLB_HIT);
	assert_int_equal(tlb_access(&t, false, 13 * M2, true), TLB_LONG_WALK); /* evicts region 5 (set 1) */
	assert_int_equal(tlb_access(&t, false, 5 * M2, true), TLB_WALK);
	tlb_free(&t);
}

/* The L2 TLB: 64 regions, 16 sets of 4; a flush empties every TLB. */
static void test_l2_and_flush(void **state)
{
	(void)state;
	struct tlbs t;

	assert_true(tlb_init(&t));
	for (uint64_t r = 0; r < 64; r++)
		assert_int_equal(tlb_access(&t, false, r * M2, false), TLB_LONG_WALK);
	/* Region 64 shares a set with 0, 16, 32 and 48 and evicts the least recent, 0. */
	assert_int_equal(tlb_access(&t, false, 64 * M2, false), TLB_LONG_WALK);
	assert_int_equal(tlb_access(&t, false, 0 * M2 + K4, false), TLB_LONG_WALK);
	/* Region 32 is still in the L2 TLB: a page of it the L1 TLB lacks is a short walk. */
	assert_int_equal(tlb_access(&t, false, 32 * M2 + K4, false), TLB_WALK);
	tlb_flush(&t);
	assert_int_equal(tlb_access(&t, false, 64 * M2, false), TLB_LONG_WALK);
	assert_int_equal(tlb_access(&t, true, 64 * M2, false), TLB_WALK);
	tlb_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_data_4k),
		cmocka_unit_test(test_epoch),
		cmocka_unit_test(test_code_data_large),
		cmocka_unit_test(test_l2_and_flush),
	};

	alarm(60);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
