/*
 * kernel/vm.c on the host, on the page-allocator double (page_double.h):
 * what an address space holds and counts, the per-task limit vm_map
 * enforces (page tables included), and that a vm_map that fails leaves the
 * address space as it was, pages mapped before the call included.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/vm.h"
#include "kernel/pmm.h"
#include "kernel/paging.h"
#include "tests/unit/page_double.h"
#include <pmuos/syscall.h>

#define KIB 1024ULL
#define MIB (1024 * KIB)
#define GIB (1024 * MIB)
#define P PAGE_SIZE
/* A 2 MiB-aligned address (one page table maps 2 MiB) away from the user region's start. */
#define VA USER_TEXT
#define BIG_LIMIT (1024 * P)

static uint64_t as;

static int setup(void **state)
{
	(void)state;
	page_double_reset(PAGE_DOUBLE_MAX);
	as = vm_create(BIG_LIMIT);
	assert_int_not_equal(as, 0);
	return 0;
}

/* A fresh address space with another limit. */
static void recreate(uint64_t limit)
{
	vm_destroy(as);
	assert_int_equal(page_double_in_use(), 0);
	as = vm_create(limit);
	assert_int_not_equal(as, 0);
}

static int teardown(void **state)
{
	(void)state;
	vm_destroy(as);
	assert_int_equal(page_double_in_use(), 0); /* every page came back */
	return 0;
}

/* Every byte of [va, va+len) is mapped and reads `byte`. */
static void assert_filled(uint64_t va, uint64_t len, uint8_t byte)
{
	for (uint64_t a = va; a < va + len; a++) {
		uint8_t *p = vm_translate(as, a);
		assert_non_null(p);
		assert_int_equal(*p, byte);
	}
}

static void fill(uint64_t va, uint64_t len, uint8_t byte)
{
	uint8_t buf[256];

	memset(buf, byte, sizeof(buf));
	for (uint64_t off = 0; off < len; off += sizeof(buf))
		assert_true(vm_copy_to(as, va + off, buf, len - off < sizeof(buf) ? len - off : sizeof(buf)));
}

static void create_holds_the_pml4_and_shares_the_kernel_slot(void **state)
{
	(void)state;
	assert_int_equal(page_double_in_use(), 1);
	assert_int_equal(vm_size(as), P);
	assert_int_equal(vm_limit(as), BIG_LIMIT);
	assert_int_equal(((uint64_t *)as)[0], PAGE_DOUBLE_SLOT0);
	assert_null(vm_translate(as, VA));
	/* A limit is counted in whole pages. */
	uint64_t other = vm_create(10 * P + P - 1);
	assert_int_equal(vm_limit(other), 10 * P);
	vm_destroy(other);
}

static void one_page_costs_its_three_tables(void **state)
{
	(void)state;
	assert_int_equal(vm_map_cost(as, VA + 100, 1), 4 * P); /* PDPT, PD, page table, page */
	assert_int_equal(vm_map(as, VA + 100, 1, VM_WRITE), VM_OK);
	assert_int_equal(vm_size(as), 5 * P);
	assert_int_equal(page_double_in_use(), 5);
	assert_filled(VA, P, 0);
	assert_true(vm_user_range_ok(as, VA, P, true));
	assert_false(vm_user_range_ok(as, VA, P + 1, false));
}

static void tables_are_counted_once_per_region_they_map(void **state)
{
	(void)state;
	/* 4 MiB from a 2 MiB boundary: 1024 pages, two page tables, one PD, one PDPT. */
	assert_int_equal(vm_map_cost(as, VA, 4 * MIB), (1024 + 2 + 1 + 1) * P);
	/* One page less on each side of a boundary: the same tables. */
	assert_int_equal(vm_map_cost(as, VA + P, 4 * MIB - 2 * P), (1022 + 2 + 1 + 1) * P);
	/* Across a 1 GiB boundary: two PDs, two page tables. */
	assert_int_equal(vm_map_cost(as, ((VA + GIB) & ~(GIB - 1)) - P, 2 * P), (2 + 2 + 2 + 1) * P);
	recreate(4096 * P);
	assert_int_equal(vm_map(as, VA, 4 * MIB, 0), VM_OK);
	assert_int_equal(vm_size(as), (1 + 1024 + 2 + 1 + 1) * P);
	assert_int_equal(page_double_in_use(), 1 + 1024 + 2 + 1 + 1);
	/* Now mapped: nothing more to pay for it, and one page past it needs only itself. */
	assert_int_equal(vm_map_cost(as, VA, 4 * MIB), 0);
	assert_int_equal(vm_map_cost(as, VA + 4 * MIB - 1, 2), P + P); /* a page and its page table */
	assert_int_equal(vm_map_cost(as, VA + 2 * MIB, 1), 0);
}

static void overlapping_maps_charge_new_pages_and_add_rights(void **state)
{
	(void)state;
	assert_int_equal(vm_map(as, VA, 2 * P, 0), VM_OK);
	fill(VA, 2 * P, 0x5a);
	assert_false(vm_user_range_ok(as, VA, 2 * P, true));
	uint64_t before = vm_size(as);
	assert_int_equal(vm_map(as, VA + P, 2 * P, VM_WRITE), VM_OK);
	assert_int_equal(vm_size(as), before + P);
	assert_int_equal(page_double_in_use() * P, vm_size(as));
	assert_filled(VA, 2 * P, 0x5a); /* kept, not replaced */
	assert_filled(VA + 2 * P, P, 0);
	assert_false(vm_user_range_ok(as, VA, P, true));
	assert_true(vm_user_range_ok(as, VA + P, 2 * P, true));
}

static void the_limit_counts_every_page_the_task_holds(void **state)
{
	(void)state;
	/* 10 pages: PML4, PDPT, PD, page table and 6 user pages fit, a 7th does not. */
	recreate(10 * P);
	assert_int_equal(vm_map(as, VA, 7 * P, VM_WRITE), VM_ELIMIT);
	assert_int_equal(vm_size(as), P);
	assert_int_equal(page_double_in_use(), 1);
	assert_int_equal(vm_map(as, VA, 6 * P, VM_WRITE), VM_OK);
	assert_int_equal(vm_size(as), 10 * P);
	assert_int_equal(vm_map(as, VA + 6 * P, 1, VM_WRITE), VM_ELIMIT);
	/* What is mapped already costs nothing, so it may still be mapped again. */
	assert_int_equal(vm_map(as, VA, 6 * P, VM_EXEC), VM_OK);
	/* Pages of a new page table need that table too: 6 pages here need 7. */
	recreate(10 * P);
	assert_int_equal(vm_map(as, VA + 2 * MIB - 3 * P, 6 * P, VM_WRITE), VM_ELIMIT); /* PML4, PDPT, PD, 2 tables + 6 > 10 */
	assert_int_equal(vm_map(as, VA + 2 * MIB - 3 * P, 5 * P, VM_WRITE), VM_OK);     /* PML4, PDPT, PD, 2 tables + 5 = 10 */
	assert_int_equal(vm_size(as), 10 * P);
	assert_int_equal(page_double_in_use(), 10);
}

static void a_huge_request_is_refused_at_once(void **state)
{
	(void)state;
	/* 256 GiB would take 2^26 pages: refused by the count, before any page is taken. */
	assert_int_equal(vm_map(as, VA, 256 * GIB, VM_WRITE), VM_ELIMIT);
	assert_int_equal(page_double_in_use(), 1);
	/* Pages, page tables (VA is 2 MiB-aligned), PDs (VA is 4 MiB past a 1 GiB boundary), the PDPT. */
	assert_int_equal(vm_map_cost(as, VA, 256 * GIB), (256 * GIB / P + 256 * 512 + 257 + 1) * P);
	/* The whole user region, from an address space already holding a page in it. */
	assert_int_equal(vm_map(as, VA, 1, 0), VM_OK);
	assert_int_equal(vm_map(as, USER_BASE, USER_END - USER_BASE, VM_WRITE), VM_ELIMIT);
	assert_int_equal(vm_size(as), 5 * P);
}

static void ranges_outside_the_user_region_are_refused(void **state)
{
	(void)state;
	assert_int_equal(vm_map(as, USER_BASE - P, 2 * P, 0), VM_ERANGE);
	assert_int_equal(vm_map(as, USER_END - P, 2 * P, 0), VM_ERANGE);
	assert_int_equal(vm_map(as, USER_END, 0, 0), VM_ERANGE);
	/* va + len wraps around 2^64: not a short range. */
	assert_int_equal(vm_map(as, VA + 100, UINT64_MAX - 50, 0), VM_ERANGE);
	assert_int_equal(vm_map_cost(as, VA + 100, UINT64_MAX - 50), 0);
	/* Nothing to map. */
	assert_int_equal(vm_map(as, VA + 100, 0, VM_WRITE), VM_OK);
	assert_null(vm_translate(as, VA));
	assert_int_equal(page_double_in_use(), 1);
}

/* The card runs out of pages half-way through a call: the call leaves nothing behind. */
static void a_failed_map_undoes_exactly_its_own_pages(void **state)
{
	(void)state;
	/* Mapped before: two read-only pages with data, in a page table that exists. */
	assert_int_equal(vm_map(as, VA + 2 * MIB - 2 * P, 2 * P, 0), VM_OK);
	fill(VA + 2 * MIB - 2 * P, 2 * P, 0x77);
	uint64_t size = vm_size(as), in_use = page_double_in_use();
	/* Over those pages, 4 new ones in this table and 8 in the next (+ its table): 13 pages. */
	uint64_t va = VA + 2 * MIB - 6 * P, len = 14 * P;
	assert_int_equal(vm_map_cost(as, va, len), 13 * P);
	for (uint64_t left = 0; left < 13; left++) {
		page_double_allow(left);
		assert_int_equal(vm_map(as, va, len, VM_WRITE | VM_EXEC), VM_ENOMEM);
		assert_int_equal(page_double_in_use(), in_use); /* what this call took, given back */
		assert_int_equal(vm_size(as), size);
		assert_filled(VA + 2 * MIB - 2 * P, 2 * P, 0x77);
		assert_false(vm_user_range_ok(as, VA + 2 * MIB - 2 * P, P, true)); /* rights unchanged */
		assert_null(vm_translate(as, va));
		assert_null(vm_translate(as, VA + 2 * MIB + P));
		assert_int_equal(vm_map_cost(as, va, len), 13 * P);
	}
	page_double_allow(13);
	assert_int_equal(vm_map(as, va, len, VM_WRITE), VM_OK);
	assert_int_equal(page_double_in_use(), in_use + 13);
	assert_int_equal(vm_size(as), size + 13 * P);
	assert_filled(VA + 2 * MIB - 2 * P, 2 * P, 0x77);
	assert_filled(va, 4 * P, 0);
	assert_true(vm_user_range_ok(as, va, len, true));
}

/* Out of pages for the first page of the user region: not even a table is left. */
static void a_failed_first_map_leaves_only_the_pml4(void **state)
{
	(void)state;
	page_double_allow(3);
	assert_int_equal(vm_map(as, VA, 1, VM_WRITE), VM_ENOMEM);
	assert_int_equal(((uint64_t *)as)[1], 0);
	assert_int_equal(page_double_in_use(), 1);
	assert_int_equal(vm_size(as), P);
}

/* sbrk's pattern: grow the heap by odd amounts until refused; the limit holds exactly. */
static void a_growing_heap_stops_at_the_limit(void **state)
{
	(void)state;
	uint64_t brk = VA, limit = 300 * P;
	int r;

	recreate(limit);
	while ((r = vm_map(as, brk, 64 * KIB + 5, VM_WRITE)) == VM_OK) {
		brk += 64 * KIB + 5;
		assert_true(vm_size(as) <= limit);
	}
	assert_int_equal(r, VM_ELIMIT);
	assert_true(vm_size(as) + vm_map_cost(as, brk, 64 * KIB + 5) > limit);
	assert_int_equal(page_double_in_use() * P, vm_size(as));
	assert_true(vm_user_range_ok(as, VA, brk - VA, true));
}

static void destroy_gives_back_every_page(void **state)
{
	(void)state;
	assert_int_equal(vm_map(as, VA, 3 * P, VM_EXEC), VM_OK);
	assert_int_equal(vm_map(as, VA + 5 * GIB, 3 * MIB, VM_WRITE), VM_OK);
	assert_int_equal(vm_map(as, USER_STACK_TOP - USER_STACK_SIZE, USER_STACK_SIZE, VM_WRITE), VM_ELIMIT);
	assert_int_equal(vm_map(as, USER_STACK_TOP - 64 * KIB, 64 * KIB, VM_WRITE), VM_OK);
	assert_int_equal(page_double_in_use() * P, vm_size(as));
	/* teardown: vm_destroy, then no page in use */
}

/*
 * A shared text (vm_share): its pages mapped read-only into two address
 * spaces, the same bytes, counted against each one's limit but allocated
 * once; freed when the text's holder and both address spaces let go, in any
 * order; a writable or missing page of the text is refused, changing nothing.
 */
static void a_shared_text_is_one_copy_freed_by_the_last(void **state)
{
	(void)state;
	uint64_t text = vm_text_create(BIG_LIMIT);
	assert_int_not_equal(text, 0);
	assert_int_equal(vm_map(text, VA, 3 * P, VM_EXEC), VM_OK);
	assert_true(vm_copy_to(text, VA + P, "text", 5));

	uint64_t other = vm_create(BIG_LIMIT);
	for (uint64_t a = as; a; a = a == as ? other : 0) {
		uint64_t before = page_double_in_use();
		assert_int_equal(vm_share(a, text, VA, 3 * P), VM_OK);
		assert_int_equal(page_double_in_use() - before, 3); /* PDPT, PD, page table: no page */
		assert_int_equal(vm_size(a), (1 + 3 + 3) * P);
		assert_ptr_equal(vm_translate(a, VA + P), vm_translate(text, VA + P));
		assert_string_equal(vm_translate(a, VA + P), "text");
		assert_true(vm_user_range_ok(a, VA, 3 * P, false));
		assert_false(vm_user_range_ok(a, VA, P, true));
	}
	/* Writable pages are never shared; pages the text lacks cannot be; neither changes as. */
	uint64_t size = vm_size(as), in_use = page_double_in_use();
	assert_int_equal(vm_map(text, VA + 4 * P, P, VM_WRITE), VM_OK);
	assert_int_equal(vm_share(as, text, VA + 4 * P, P), VM_ERANGE);
	assert_int_equal(vm_share(as, text, VA + 2 * P, 2 * P), VM_ERANGE);
	assert_int_equal(vm_share(as, text, USER_BASE - P, P), VM_ERANGE);
	assert_int_equal(vm_size(as), size);
	assert_int_equal(page_double_in_use(), in_use + 1);
	assert_null(vm_translate(as, VA + 3 * P));
	/* Over the limit: refused for the page tables as for pages of its own. */
	uint64_t small = vm_create(4 * P);
	assert_int_equal(vm_share(small, text, VA, 3 * P), VM_ELIMIT);
	vm_destroy(small);

	/* The holder lets go first: the text stays while it is mapped, and goes with the last. */
	in_use = page_double_in_use();
	vm_text_put(text);
	assert_int_equal(page_double_in_use(), in_use);
	vm_destroy(other);
	assert_int_equal(page_double_in_use(), in_use - 4); /* its PML4 and 3 tables, not the text's pages */
	assert_string_equal(vm_translate(as, VA + P), "text");
	/* teardown: vm_destroy(as) frees the text (every page of it) too, then no page in use */
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(create_holds_the_pml4_and_shares_the_kernel_slot),
		T(one_page_costs_its_three_tables),
		T(tables_are_counted_once_per_region_they_map),
		T(overlapping_maps_charge_new_pages_and_add_rights),
		T(the_limit_counts_every_page_the_task_holds),
		T(a_huge_request_is_refused_at_once),
		T(ranges_outside_the_user_region_are_refused),
		T(a_failed_map_undoes_exactly_its_own_pages),
		T(a_failed_first_map_leaves_only_the_pml4),
		T(a_growing_heap_stops_at_the_limit),
		T(destroy_gives_back_every_page),
		T(a_shared_text_is_one_copy_freed_by_the_last),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
