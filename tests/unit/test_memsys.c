/*
 * plugin/memsys.c on the host: the cores' L1D, L1I and L2 (sizes, LRU,
 * inclusion, write-back) and MESI coherence between cores, checked event
 * by event against the rules of plugin/memsys.h.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "plugin/memsys.h"
#include "pmu/plugin_events.h"

struct thread {
	uint64_t n[PEV_COUNT];
};

static void record(void *thread, int ev, uint64_t n)
{
	((struct thread *)thread)->n[ev] += n;
}

static struct memsys m;
static struct thread t0, t0b, t1; /* t0 and t0b: threads of core 0; t1: of core 1 */

static int setup(void **state)
{
	(void)state;
	memset(&t0, 0, sizeof(t0));
	memset(&t0b, 0, sizeof(t0b));
	memset(&t1, 0, sizeof(t1));
	assert_true(memsys_init(&m, 2, record));
	assert_true(memsys_attach(&m, 0, &t0));
	assert_true(memsys_attach(&m, 0, &t0b));
	assert_true(memsys_attach(&m, 1, &t1));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	memsys_free(&m);
	return 0;
}

/* Events other than those listed (ev, count pairs, -1 ends) are 0. */
static void only_(const struct thread *t, const char *file, int line, ...)
{
	uint64_t want[PEV_COUNT] = { 0 };
	va_list ap;

	va_start(ap, line);
	for (int ev; (ev = va_arg(ap, int)) >= 0;)
		want[ev] = va_arg(ap, uint64_t);
	va_end(ap);
	for (int ev = 0; ev < PEV_COUNT; ev++)
		if (t->n[ev] != want[ev])
			_fail(file, line); /* the event number is ev: see pmu/plugin_events.h */
}
#define ONLY(t, ...) only_(t, __FILE__, __LINE__, __VA_ARGS__, -1)

static void clear(void)
{
	memset(&t0, 0, sizeof(t0));
	memset(&t0b, 0, sizeof(t0b));
	memset(&t1, 0, sizeof(t1));
}

/* Line numbers (addresses / 64). L1D lines in one set: 64 sets, so lines 64 apart. L2: 1024 sets. */
#define L1SET(k) (0x1000 + 64 * (uint64_t)(k))
#define L2SET(k) (0x2000 + 1024 * (uint64_t)(k))

static void test_read_hierarchy(void **state)
{
	(void)state;
	assert_true(memsys_data(&m, 0, &t0, 0x1000, false));
	ONLY(&t0, PEV_L2_READ_MISS, 1ULL, PEV_L2_DATA_READ_MISS_MEM_FILL, 1ULL);
	clear();
	assert_false(memsys_data(&m, 0, &t0b, 0x1000, false)); /* the other thread of the core: the same L1D */
	ONLY(&t0b, -1, 0ULL);
	for (int k = 1; k <= 8; k++) /* 8 more lines of the set evict 0x1000 from the L1D, not from the L2 */
		assert_true(memsys_data(&m, 0, &t0, L1SET(k), false));
	clear();
	assert_true(memsys_data(&m, 0, &t0, 0x1000, false));
	ONLY(&t0, PEV_L2_READ_HIT_E, 1ULL);
	assert_false(memsys_data(&m, 0, &t0, L1SET(8), false)); /* 7 ways after it stayed */
	assert_false(memsys_data(&m, 0, &t0, L1SET(2), false));
	assert_true(memsys_data(&m, 0, &t0, L1SET(1), false)); /* the one 0x1000 evicted */
}

/* A VPREFETCH1 fills the L2 alone: a read's miss events, then a demand read misses the L1D and hits the L2. */
static void test_l2_prefetch(void **state)
{
	(void)state;
	assert_true(memsys_l2_prefetch(&m, 0, &t0, 0x1000));
	ONLY(&t0, PEV_L2_READ_MISS, 1ULL, PEV_L2_DATA_READ_MISS_MEM_FILL, 1ULL);
	clear();
	assert_false(memsys_l2_prefetch(&m, 0, &t0, 0x1000)); /* in the L2 already: nothing */
	ONLY(&t0, -1, 0ULL);
	assert_true(memsys_data(&m, 0, &t0, 0x1000, false)); /* not in the L1D */
	ONLY(&t0, PEV_L2_READ_HIT_E, 1ULL);
	clear();
	assert_true(memsys_l2_prefetch(&m, 1, &t1, 0x2000)); /* another core's: its own L2 */
	ONLY(&t1, PEV_L2_READ_MISS, 1ULL, PEV_L2_DATA_READ_MISS_MEM_FILL, 1ULL);
}

static void test_write_back(void **state)
{
	(void)state;
	assert_true(memsys_data(&m, 0, &t0, 0x1000, true)); /* write miss: read for ownership, to memory */
	ONLY(&t0, PEV_L2_DATA_WRITE_MISS_MEM_FILL, 1ULL);
	clear();
	assert_false(memsys_data(&m, 0, &t0, 0x1000, true));
	assert_true(memsys_data(&m, 0, &t0, 0x1001, false));
	assert_false(memsys_data(&m, 0, &t0, 0x1001, true)); /* E -> M silently */
	ONLY(&t0, PEV_L2_READ_MISS, 1ULL, PEV_L2_DATA_READ_MISS_MEM_FILL, 1ULL);
	clear();
	for (int k = 1; k <= 8; k++) /* evicts the dirty 0x1000 */
		memsys_data(&m, 0, &t0, L1SET(k), false);
	ONLY(&t0, PEV_L2_READ_MISS, 8ULL, PEV_L2_DATA_READ_MISS_MEM_FILL, 8ULL, PEV_DATA_CACHE_LINES_WRITTEN_BACK, 1ULL);
	clear();
	assert_true(memsys_data(&m, 0, &t0, 0x1000, false));
	ONLY(&t0, PEV_L2_READ_HIT_M, 1ULL);
	clear();
	assert_true(memsys_data(&m, 0, &t0, 0x1002, false)); /* E in the L2 ... */
	for (int k = 1; k <= 8; k++) /* ... out of the L1D */
		memsys_data(&m, 0, &t0, 0x1002 + 64 * (uint64_t)k, false);
	clear();
	assert_true(memsys_data(&m, 0, &t0, 0x1002, true)); /* ... a write miss that hits the L2 */
	ONLY(&t0, PEV_L2_WRITE_HIT, 1ULL);
}

/* Inclusion: a line the L2 evicts leaves the L1D (written back if dirty) and the L1I. */
static void test_inclusion(void **state)
{
	(void)state;
	assert_true(memsys_data(&m, 0, &t0, L2SET(0), true));
	assert_true(memsys_code(&m, 0, &t0, L2SET(1)));
	for (int k = 2; k <= 9; k++) /* 8 more lines of the L2 set: L2SET(0) and L2SET(1) go */
		memsys_data(&m, 0, &t0, L2SET(k), false);
	assert_int_equal(t0.n[PEV_DATA_CACHE_LINES_WRITTEN_BACK], 1);
	clear();
	/* Both miss the L1 and the L2 now (evicting the clean L2SET(2) and L2SET(3)). */
	assert_true(memsys_data(&m, 0, &t0, L2SET(0), false));
	assert_true(memsys_code(&m, 0, &t0, L2SET(1)));
	ONLY(&t0, PEV_L2_READ_MISS, 2ULL, PEV_L2_DATA_READ_MISS_MEM_FILL, 1ULL, PEV_L2_CODE_READ_MISS_MEM_FILL, 1ULL);
}

static void test_code(void **state)
{
	(void)state;
	assert_true(memsys_code(&m, 0, &t0, 0x3000));
	assert_false(memsys_code(&m, 0, &t0, 0x3000));
	assert_false(memsys_code(&m, 0, &t0b, 0x3000));
	ONLY(&t0, PEV_L2_READ_MISS, 1ULL, PEV_L2_CODE_READ_MISS_MEM_FILL, 1ULL);
	ONLY(&t0b, -1, 0ULL);
	clear();
	assert_true(memsys_code(&m, 1, &t1, 0x3000)); /* core 1: from core 0's L2, which had it E */
	ONLY(&t1, PEV_L2_READ_MISS, 1ULL, PEV_L2_CODE_READ_MISS_CACHE_FILL, 1ULL);
	ONLY(&t0, PEV_SNP_HIT_L2, 1ULL);
	ONLY(&t0b, PEV_SNP_HIT_L2, 1ULL); /* a core's event: both its threads see it */
	clear();
	for (int k = 1; k <= 8; k++) /* evict 0x3000 from core 0's L1I; it stays S in its L2 */
		memsys_code(&m, 0, &t0, 0x3000 + 64 * (uint64_t)k);
	clear();
	assert_true(memsys_code(&m, 0, &t0, 0x3000));
	ONLY(&t0, PEV_L2_READ_HIT_S, 1ULL);
}

/* MESI between two cores. */
static void test_coherence(void **state)
{
	(void)state;
	memsys_data(&m, 0, &t0, 0x4000, true); /* core 0: M, dirty in its L1D */
	clear();
	assert_true(memsys_data(&m, 1, &t1, 0x4000, false));
	ONLY(&t1, PEV_L2_READ_MISS, 1ULL, PEV_L2_DATA_READ_MISS_CACHE_FILL, 1ULL);
	ONLY(&t0, PEV_SNP_HITM_L2, 1ULL, PEV_DATA_CACHE_LINES_WRITTEN_BACK, 1ULL);
	clear();
	/* Both S. Core 0 writes: its L1D hit asks the L2 for ownership, core 1's copy goes. */
	assert_false(memsys_data(&m, 0, &t0, 0x4000, true));
	ONLY(&t0, PEV_L2_WRITE_HIT, 1ULL);
	ONLY(&t1, PEV_SNP_HIT_L2, 1ULL);
	clear();
	assert_true(memsys_data(&m, 1, &t1, 0x4000, true)); /* core 1 writes: M moves over */
	ONLY(&t1, PEV_L2_DATA_WRITE_MISS_CACHE_FILL, 1ULL);
	ONLY(&t0, PEV_SNP_HITM_L2, 1ULL, PEV_DATA_CACHE_LINES_WRITTEN_BACK, 1ULL);
	clear();
	assert_true(memsys_data(&m, 0, &t0, 0x4000, false)); /* core 0 lost it: a miss, from core 1 */
	ONLY(&t0, PEV_L2_READ_MISS, 1ULL, PEV_L2_DATA_READ_MISS_CACHE_FILL, 1ULL);
	ONLY(&t1, PEV_SNP_HITM_L2, 1ULL, PEV_DATA_CACHE_LINES_WRITTEN_BACK, 1ULL);
	clear();
	assert_true(memsys_data(&m, 0, &t0, 0x5000, false)); /* nobody has it: E */
	assert_true(memsys_data(&m, 1, &t1, 0x5000, true));  /* RFO: the E copy is invalidated */
	ONLY(&t1, PEV_L2_DATA_WRITE_MISS_CACHE_FILL, 1ULL);
	ONLY(&t0, PEV_L2_READ_MISS, 1ULL, PEV_L2_DATA_READ_MISS_MEM_FILL, 1ULL, PEV_SNP_HIT_L2, 1ULL);
}

/* Core 0's L1D epoch: the same exactly while nothing in its L1D changed (the plugin's last-line memo relies on it). */
static uint64_t epoch(void)
{
	return m.core[0].l1d_epoch;
}

/* Its L1I epoch, the same for the L1I (the plugin's memo of a block whose fetches all hit). */
static void test_code_epoch(void **state)
{
	(void)state;
	uint64_t e = m.core[0].l1i_epoch;
	memsys_code(&m, 0, &t0, 0x3000); /* a fill */
	assert_int_not_equal(m.core[0].l1i_epoch, e);
	memsys_code(&m, 0, &t0, 0x3001);
	e = m.core[0].l1i_epoch;
	memsys_code(&m, 0, &t0b, 0x3000); /* most recent of its set, though not the last line: no change */
	memsys_code(&m, 0, &t0, 0x3001);
	memsys_data(&m, 0, &t0, 0x1000, true);
	assert_int_equal(m.core[0].l1i_epoch, e);
	memsys_code(&m, 0, &t0, 0x3000 + 64); /* same set as 0x3000 */
	e = m.core[0].l1i_epoch;
	memsys_code(&m, 0, &t0, 0x3000);      /* a hit that reorders the set */
	assert_int_not_equal(m.core[0].l1i_epoch, e);
	e = m.core[0].l1i_epoch;
	memsys_data(&m, 1, &t1, 0x3000, true); /* another core's ownership: the line leaves the L1I */
	assert_int_not_equal(m.core[0].l1i_epoch, e);
	e = m.core[0].l1i_epoch;
	for (int k = 0; k < 9; k++)            /* data lines of one L2 set: the 9th evicts the first */
		memsys_data(&m, 0, &t0, L2SET(k), false);
	assert_false(sa_peek(&m.core[0].l2, L2SET(0)));
	assert_int_equal(m.core[0].l1i_epoch, e); /* the L1I had none of them: no change */
}

static void test_epoch(void **state)
{
	(void)state;
	uint64_t e = epoch();
	memsys_data(&m, 0, &t0, 0x1000, false); /* a fill */
	assert_int_not_equal(epoch(), e);
	e = epoch();
	memsys_data(&m, 0, &t0b, 0x1000, false); /* a hit on its set's most recent line: no change */
	memsys_code(&m, 0, &t0, 0x3000);         /* the L1I is not the L1D */
	assert_int_equal(epoch(), e);
	memsys_data(&m, 0, &t0, 0x1000, true);  /* its dirty bit */
	assert_int_not_equal(epoch(), e);
	e = epoch();
	memsys_data(&m, 0, &t0, 0x1000, true);  /* dirty already */
	assert_int_equal(epoch(), e);
	memsys_data(&m, 0, &t0, L1SET(1), false);
	e = epoch();
	memsys_data(&m, 0, &t0, 0x1000, false); /* a hit that reorders the set */
	assert_int_not_equal(epoch(), e);
	e = epoch();
	memsys_data(&m, 1, &t1, 0x1000, false); /* another core's read: the dirty line is written back, clean */
	assert_int_not_equal(epoch(), e);
	e = epoch();
	memsys_data(&m, 1, &t1, 0x1000, true);  /* another core's ownership: the line goes */
	assert_int_not_equal(epoch(), e);
	memsys_data(&m, 0, &t0, L2SET(0), false);
	for (int k = 1; k <= 7; k++)
		memsys_data(&m, 0, &t0, L2SET(k), false);
	e = epoch();
	memsys_code(&m, 0, &t0, L2SET(8)); /* a code fill evicts L2SET(0) from the L2, so from the L1D */
	assert_int_not_equal(epoch(), e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_read_hierarchy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_l2_prefetch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inclusion, setup, teardown),
		cmocka_unit_test_setup_teardown(test_code, setup, teardown),
		cmocka_unit_test_setup_teardown(test_coherence, setup, teardown),
		cmocka_unit_test_setup_teardown(test_epoch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_code_epoch, setup, teardown),
	};

	alarm(60);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
