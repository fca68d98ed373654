/* plugin/sacache.c on the host: the set-associative LRU array under the plugin's caches, TLBs and BTB. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "plugin/sacache.h"

static void test_geometry(void **state)
{
	(void)state;
	struct sacache c;

	assert_false(sa_init(&c, 10, 4, true));  /* not a whole number of sets */
	assert_false(sa_init(&c, 12, 4, true));  /* 3 sets: not a power of two */
	assert_false(sa_init(&c, 4, 0, true));
	assert_false(sa_init(&c, 16, 16, true)); /* more ways than an order word holds */
	assert_true(sa_init(&c, 16, 4, true));
	assert_int_equal(c.sets, 4);
	assert_int_equal(c.ways, 4);
	sa_free(&c);
}

/* Keys 0, 4, 8, 12 ... share set 0 of a 4-set cache. */
static void test_lru_replacement(void **state)
{
	(void)state;
	struct sacache c;
	uint64_t d = 0;

	assert_true(sa_init(&c, 8, 2, true)); /* 4 sets of 2 ways */
	assert_null(sa_lookup(&c, 0, NULL));
	assert_int_equal(sa_insert(&c, 0, 1, 100).key, SA_EMPTY);
	assert_int_equal(sa_insert(&c, 4, 2, 104).key, SA_EMPTY); /* set 0 is full: 4 recent, 0 least recent */
	assert_int_equal(sa_insert(&c, 1, 3, 101).key, SA_EMPTY); /* set 1: nothing evicted from set 0 */
	uint8_t *st = sa_lookup(&c, 0, &d);                        /* 0 becomes the most recent */
	assert_non_null(st);
	assert_int_equal(*st, 1);
	assert_int_equal(d, 100);
	struct sa_way v = sa_insert(&c, 8, 4, 108); /* evicts 4, the least recently used */
	assert_int_equal(v.key, 4);
	assert_int_equal(v.state, 2);
	assert_int_equal(v.data, 104);
	assert_null(sa_lookup(&c, 4, NULL));
	assert_non_null(sa_lookup(&c, 0, NULL));
	assert_non_null(sa_lookup(&c, 8, NULL));
	assert_non_null(sa_lookup(&c, 1, NULL));
	sa_free(&c);
}

/* Without data (a cache's array) a fill keeps no datum and a look-up reports none. */
static void test_without_data(void **state)
{
	(void)state;
	struct sacache c;
	uint64_t d = 77;

	assert_true(sa_init(&c, 2, 2, false)); /* one set of 2 ways */
	assert_null(c.data);
	sa_insert(&c, 0, 1, 100);
	sa_insert(&c, 1, 2, 101);
	uint8_t *st = sa_lookup(&c, 0, &d); /* the slow path: 1 was the most recent */
	assert_non_null(st);
	assert_int_equal(*st, 1);
	assert_int_equal(d, 77);
	assert_non_null(sa_lookup(&c, 0, &d)); /* the fast path */
	assert_int_equal(d, 77);
	struct sa_way v = sa_insert(&c, 2, 3, 102); /* evicts 1 */
	assert_int_equal(v.key, 1);
	assert_int_equal(v.state, 2);
	assert_int_equal(v.data, 0);
	sa_free(&c);
}

/* A peek (a snoop's look) leaves the recency order alone; the state it returns can be changed. */
static void test_peek_keeps_order(void **state)
{
	(void)state;
	struct sacache c;

	assert_true(sa_init(&c, 2, 2, true)); /* one set of 2 ways */
	sa_insert(&c, 10, 0, 0);
	sa_insert(&c, 11, 0, 0); /* 10 is least recent */
	uint8_t *st = sa_peek(&c, 10);
	assert_non_null(st);
	*st = 7;
	assert_null(sa_peek(&c, 12));
	assert_int_equal(sa_insert(&c, 12, 0, 0).key, 10); /* still the victim */
	assert_int_equal(sa_insert(&c, 13, 0, 0).key, 11);
	sa_free(&c);
}

/* A removed key leaves an empty way, filled before anything is evicted. */
static void test_remove_and_clear(void **state)
{
	(void)state;
	struct sacache c;
	uint8_t st = 0;

	assert_true(sa_init(&c, 3, 3, true)); /* one set of 3 ways */
	sa_insert(&c, 1, 11, 0);
	sa_insert(&c, 2, 12, 0);
	sa_insert(&c, 3, 13, 0);
	assert_true(sa_remove(&c, 2, &st));
	assert_int_equal(st, 12);
	assert_false(sa_remove(&c, 2, &st));
	assert_int_equal(sa_insert(&c, 4, 0, 0).key, SA_EMPTY);
	assert_int_equal(sa_insert(&c, 5, 0, 0).key, 1); /* 1 is the least recent of 1, 3, 4 */
	*sa_data(&c, sa_peek(&c, 3)) = 33;
	uint64_t d = 0;
	assert_non_null(sa_lookup(&c, 3, &d));
	assert_int_equal(d, 33);
	sa_clear(&c);
	for (uint64_t k = 1; k <= 5; k++)
		assert_null(sa_lookup(&c, k, NULL));
	assert_int_equal(sa_insert(&c, 6, 0, 0).key, SA_EMPTY);
	sa_free(&c);
}

/*
 * Against a plain model: one set kept as a list, most recent first (the
 * textbook LRU), under a fixed pseudo-random mix of lookups, peeks,
 * inserts and removals, for every way count from 1 to SA_MAX_WAYS; keys
 * 1 apart (a tag byte each) and 128 apart (two tags for all: the keys are
 * compared behind every matching tag).
 */
static void test_matches_list_model(void **state)
{
	(void)state;
	for (uint32_t run = 0; run < 2 * SA_MAX_WAYS; run++) {
		uint32_t ways = run % SA_MAX_WAYS + 1;
		uint64_t spread = run < SA_MAX_WAYS ? 1 : 128;
		struct sacache c;
		uint64_t list[SA_MAX_WAYS], rng = 0x9e3779b97f4a7c15ULL;
		uint32_t n = 0;

		assert_true(sa_init(&c, ways, ways, true)); /* one set */
		for (int step = 0; step < 20000; step++) {
			rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
			uint64_t key = (rng >> 33) % (ways + 3) * spread;
			int op = (int)(rng >> 60) & 3, at = -1;
			for (uint32_t i = 0; i < n; i++)
				if (list[i] == key)
					at = (int)i;
			if (op == 0) { /* lookup, inserting on a miss */
				if (at >= 0) {
					assert_non_null(sa_lookup(&c, key, NULL));
					memmove(&list[1], &list[0], (size_t)at * sizeof(list[0]));
				} else {
					assert_null(sa_lookup(&c, key, NULL));
					struct sa_way v = sa_insert(&c, key, 0, key);
					assert_int_equal(v.key, n == ways ? list[n - 1] : SA_EMPTY);
					if (n < ways)
						n++;
					memmove(&list[1], &list[0], (n - 1) * sizeof(list[0]));
				}
				list[0] = key;
			} else if (op == 1) { /* removal */
				assert_int_equal(sa_remove(&c, key, NULL), at >= 0);
				if (at >= 0) {
					memmove(&list[at], &list[at + 1], (n - 1 - (uint32_t)at) * sizeof(list[0]));
					n--;
				}
			} else { /* a peek changes nothing; the datum stays with its key */
				uint8_t *st = sa_peek(&c, key);
				assert_int_equal(st != NULL, at >= 0);
				if (st)
					assert_int_equal(*sa_data(&c, st), key);
			}
		}
		sa_free(&c);
	}
}

/*
 * Keys that differ only in their upper 32 bits (a Ring-3 code line's tag
 * beside a physical line) are different keys, in every way of an 8-way set.
 */
static void test_upper_half_keys(void **state)
{
	(void)state;
	struct sacache c;

	assert_true(sa_init(&c, 64, 8, true)); /* 8 sets of 8 ways */
	for (uint64_t w = 0; w < 8; w++)
		sa_insert(&c, (w + 1) << 40 | 8, (uint8_t)w, 0);
	for (uint64_t w = 0; w < 8; w++) {
		assert_null(sa_peek(&c, (w + 9) << 40 | 8));   /* same low half, absent */
		uint8_t *st = sa_peek(&c, (w + 1) << 40 | 8);
		assert_non_null(st);
		assert_int_equal(*st, w);
	}
	sa_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_geometry),
		cmocka_unit_test(test_upper_half_keys),
		cmocka_unit_test(test_lru_replacement),
		cmocka_unit_test(test_without_data),
		cmocka_unit_test(test_peek_keeps_order),
		cmocka_unit_test(test_remove_and_clear),
		cmocka_unit_test(test_matches_list_model),
	};

	alarm(60);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
