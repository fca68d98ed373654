/*
 * kernel/pmm.c on the host: only the bitmap core (pmm_core_*). The kernel
 * half of pmm.c is compiled but never called; the linker symbols it names
 * are provided here.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "kernel/pmm.h"

char __kernel_start[1], __kernel_end[1];

#define NPAGES 200 /* not a multiple of 64: the last word is partial */
#define WORDS ((NPAGES + 63) / 64)

struct fixture {
	struct pmm m;
	uint64_t *bitmap; /* exactly WORDS words on the heap: ASan guards the ends */
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	f->bitmap = malloc(WORDS * sizeof(uint64_t));
	pmm_core_init(&f->m, f->bitmap, NPAGES);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	free(f->bitmap);
	free(f);
	return 0;
}

static int used(const struct fixture *f, uint64_t page)
{
	return (f->bitmap[page / 64] >> (page % 64)) & 1;
}

/* Init: every page used (all bitmap bits set, even past npages), nothing free. */
static void test_init_all_used(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(f->m.npages, NPAGES);
	assert_int_equal(f->m.nfree, 0);
	for (int w = 0; w < WORDS; w++)
		assert_int_equal(f->bitmap[w], UINT64_MAX);
	assert_int_equal(pmm_core_alloc(&f->m, 1), PMM_NONE);
}

/* Set frees/uses exactly [first, first+count): bit i of word i/64, set = used. */
static void test_set_bits(void **state)
{
	struct fixture *f = *state;

	pmm_core_set(&f->m, 0, 4, 0);
	assert_int_equal(f->bitmap[0], ~0xfULL);
	pmm_core_set(&f->m, 62, 4, 0); /* across a word boundary */
	assert_int_equal(f->bitmap[0], ~(0xfULL | 3ULL << 62));
	assert_int_equal(f->bitmap[1], ~3ULL);
	assert_int_equal(f->m.nfree, 8);
	pmm_core_set(&f->m, 1, 2, 1);
	assert_int_equal(f->bitmap[0], ~(0x9ULL | 3ULL << 62));
	assert_int_equal(f->m.nfree, 6);
}

/* nfree counts changes only: freeing a free page or using a used one changes nothing. */
static void test_nfree_accounting(void **state)
{
	struct fixture *f = *state;

	pmm_core_set(&f->m, 10, 10, 0);
	assert_int_equal(f->m.nfree, 10);
	pmm_core_set(&f->m, 15, 10, 0); /* 15..19 already free */
	assert_int_equal(f->m.nfree, 15);
	pmm_core_set(&f->m, 0, 12, 1); /* 0..9 already used */
	assert_int_equal(f->m.nfree, 13);
	pmm_core_set(&f->m, 0, NPAGES, 1);
	assert_int_equal(f->m.nfree, 0);
	pmm_core_set(&f->m, 0, NPAGES, 0);
	assert_int_equal(f->m.nfree, NPAGES);
	pmm_core_set(&f->m, 5, 0, 1); /* count 0: no change */
	assert_int_equal(f->m.nfree, NPAGES);
}

/* Set clips at npages: bits past the end stay set, nfree counts real pages only. */
static void test_set_clips_at_npages(void **state)
{
	struct fixture *f = *state;

	pmm_core_set(&f->m, 190, 50, 0); /* pages 190..199: bits 62,63 of word 2, 0..7 of word 3 */
	assert_int_equal(f->m.nfree, 10);
	assert_int_equal(f->bitmap[2], ~(3ULL << 62));
	assert_int_equal(f->bitmap[3], ~0xffULL);
	pmm_core_set(&f->m, NPAGES, 5, 0);      /* starts at the end */
	pmm_core_set(&f->m, NPAGES + 70, 5, 0); /* starts past the end */
	assert_int_equal(f->m.nfree, 10);
	assert_int_equal(f->bitmap[3], ~0xffULL);
	pmm_core_set(&f->m, 100, UINT64_MAX, 0); /* first + count wraps around */
	assert_int_equal(f->m.nfree, 100);
	assert_int_equal(f->bitmap[3], ~0xffULL);
}

/* Alloc is first fit from the lowest free page and marks the pages used. */
static void test_alloc_first_fit(void **state)
{
	struct fixture *f = *state;

	pmm_core_set(&f->m, 10, 10, 0);
	assert_int_equal(pmm_core_alloc(&f->m, 1), 10);
	assert_int_equal(pmm_core_alloc(&f->m, 3), 11);
	assert_int_equal(pmm_core_alloc(&f->m, 1), 14);
	assert_int_equal(f->m.nfree, 5);
	for (int p = 10; p < 15; p++)
		assert_true(used(f, p));
	for (int p = 15; p < 20; p++)
		assert_false(used(f, p));
}

/* Multi-page allocations need a contiguous run: too-short runs before it are skipped. */
static void test_alloc_contiguous(void **state)
{
	struct fixture *f = *state;

	pmm_core_set(&f->m, 0, 4, 0);   /* run of 4 */
	pmm_core_set(&f->m, 6, 2, 0);   /* run of 2 */
	pmm_core_set(&f->m, 10, 10, 0); /* run of 10 */
	assert_int_equal(pmm_core_alloc(&f->m, 5), 10);
	assert_int_equal(pmm_core_alloc(&f->m, 3), 0);
	assert_int_equal(pmm_core_alloc(&f->m, 2), 6);
	assert_int_equal(pmm_core_alloc(&f->m, 2), 15);
	assert_int_equal(pmm_core_alloc(&f->m, 1), 3);
	assert_int_equal(pmm_core_alloc(&f->m, 3), 17);
	assert_int_equal(f->m.nfree, 0);
}

/* Runs that cross 64-page words are found, including skipped fully used words. */
static void test_alloc_across_words(void **state)
{
	struct fixture *f = *state;

	pmm_core_set(&f->m, 130, 1, 0); /* only free page in word 2 */
	assert_int_equal(pmm_core_alloc(&f->m, 1), 130);
	pmm_core_set(&f->m, 60, 10, 0);
	assert_int_equal(pmm_core_alloc(&f->m, 10), 60);
	pmm_core_set(&f->m, 0, NPAGES, 0);
	pmm_core_set(&f->m, 0, NPAGES, 1);
	pmm_core_set(&f->m, 64, 136, 0); /* pages 64..199: the last page is the last real one */
	assert_int_equal(pmm_core_alloc(&f->m, 136), 64);
	assert_int_equal(f->m.nfree, 0);
}

/* The whole range in one allocation. */
static void test_alloc_everything(void **state)
{
	struct fixture *f = *state;

	pmm_core_set(&f->m, 0, NPAGES, 0);
	assert_int_equal(pmm_core_alloc(&f->m, NPAGES), 0);
	assert_int_equal(f->m.nfree, 0);
	assert_int_equal(pmm_core_alloc(&f->m, 1), PMM_NONE);
}

/* PMM_NONE for count 0, count > nfree, exhaustion, and no run long enough; nothing changes. */
static void test_alloc_none(void **state)
{
	struct fixture *f = *state;

	pmm_core_set(&f->m, 0, 1, 0);
	pmm_core_set(&f->m, 2, 1, 0);
	pmm_core_set(&f->m, 4, 1, 0);
	assert_int_equal(pmm_core_alloc(&f->m, 0), PMM_NONE);
	assert_int_equal(pmm_core_alloc(&f->m, 4), PMM_NONE);             /* count > nfree */
	assert_int_equal(pmm_core_alloc(&f->m, UINT64_MAX), PMM_NONE);
	assert_int_equal(pmm_core_alloc(&f->m, 2), PMM_NONE);             /* fragmented */
	assert_int_equal(f->m.nfree, 3);
	assert_int_equal(f->bitmap[0], ~0x15ULL);
	assert_int_equal(pmm_core_alloc(&f->m, 1), 0);
	assert_int_equal(pmm_core_alloc(&f->m, 1), 2);
	assert_int_equal(pmm_core_alloc(&f->m, 1), 4);
	assert_int_equal(pmm_core_alloc(&f->m, 1), PMM_NONE);             /* exhausted */
	assert_int_equal(f->m.nfree, 0);
}

/* Freed pages are found again, even below the previous allocations (first fit). */
static void test_free_then_realloc(void **state)
{
	struct fixture *f = *state;

	pmm_core_set(&f->m, 0, NPAGES, 0);
	assert_int_equal(pmm_core_alloc(&f->m, 3), 0);
	assert_int_equal(pmm_core_alloc(&f->m, 3), 3);
	assert_int_equal(pmm_core_alloc(&f->m, 3), 6);
	pmm_core_set(&f->m, 4, 1, 0);
	assert_int_equal(f->m.nfree, NPAGES - 8);
	assert_int_equal(pmm_core_alloc(&f->m, 1), 4);
	assert_int_equal(pmm_core_alloc(&f->m, 1), 9);
	pmm_core_set(&f->m, 0, 3, 0);
	assert_int_equal(pmm_core_alloc(&f->m, 2), 0);
	assert_int_equal(pmm_core_alloc(&f->m, 2), 10); /* page 2 alone is too short */
	assert_int_equal(pmm_core_alloc(&f->m, 1), 2);
}

/* Alloc/free cycles against a simple reference model: same answers, same nfree. */
static void test_against_model(void **state)
{
	struct fixture *f = *state;
	unsigned char model[NPAGES] = { 0 }; /* 1 = used */
	unsigned seed = 12345;

	pmm_core_set(&f->m, 0, NPAGES, 0);
	for (int step = 0; step < 5000; step++) {
		seed = seed * 1103515245u + 12345u;
		uint64_t count = 1 + (seed >> 16) % 8;
		if ((seed >> 8) & 1) {
			uint64_t want = PMM_NONE;
			for (uint64_t i = 0, run = 0; i < NPAGES; i++) {
				run = model[i] ? 0 : run + 1;
				if (run == count) {
					want = i + 1 - count;
					break;
				}
			}
			assert_int_equal(pmm_core_alloc(&f->m, count), want);
			if (want != PMM_NONE)
				for (uint64_t i = want; i < want + count; i++)
					model[i] = 1;
		} else {
			uint64_t first = (seed >> 20) % NPAGES;
			pmm_core_set(&f->m, first, count, 0);
			for (uint64_t i = first; i < first + count && i < NPAGES; i++)
				model[i] = 0;
		}
		uint64_t nfree = 0;
		for (int i = 0; i < NPAGES; i++)
			nfree += !model[i];
		assert_int_equal(f->m.nfree, nfree);
		for (uint64_t i = 0; i < f->m.hint && i < NPAGES; i++)
			assert_true(model[i]); /* the search starts at the lowest free page or before it */
	}
}

/*
 * The search starts at the lowest free page, wherever the last fit was:
 * page-at-a-time allocation past used pages does not walk them again.
 */
static void test_hint_follows_the_first_free_page(void **state)
{
	struct fixture *f = *state;

	pmm_core_set(&f->m, 100, 100, 0); /* 0..99 used, as the kernel's own pages are */
	assert_int_equal(pmm_core_alloc(&f->m, 1), 100);
	assert_int_equal(f->m.hint, 101);
	assert_int_equal(pmm_core_alloc(&f->m, 1), 101);
	assert_int_equal(f->m.hint, 102);
	pmm_core_set(&f->m, 150, 50, 1);
	pmm_core_set(&f->m, 103, 1, 1);   /* 102 free, then a hole too short for 2 */
	assert_int_equal(pmm_core_alloc(&f->m, 2), 104);
	assert_int_equal(f->m.hint, 102); /* 102 is still free */
	assert_int_equal(pmm_core_alloc(&f->m, 1), 102);
	assert_int_equal(f->m.hint, 103); /* past the fit: nothing below it is free */
	pmm_core_set(&f->m, 7, 1, 0);     /* freed below: found first */
	assert_int_equal(f->m.hint, 7);
	assert_int_equal(pmm_core_alloc(&f->m, 1), 7);
	assert_int_equal(f->m.hint, 8);
	assert_int_equal(pmm_core_alloc(&f->m, 1), 106);
	assert_int_equal(f->m.hint, 107);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_init_all_used),
		T(test_set_bits),
		T(test_nfree_accounting),
		T(test_set_clips_at_npages),
		T(test_alloc_first_fit),
		T(test_alloc_contiguous),
		T(test_alloc_across_words),
		T(test_alloc_everything),
		T(test_alloc_none),
		T(test_free_then_realloc),
		T(test_against_model),
		T(test_hint_follows_the_first_free_page),
	};

	alarm(60); /* a hang is a failure too */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
