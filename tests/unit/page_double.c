/*
 * Page-allocator double; see page_double.h. Pages come from one static pool
 * (a fuzz target allocates and frees thousands per input: the pool keeps that
 * fast), and a free page is poisoned, so AddressSanitizer stops at any access
 * to it as it would at a use after free.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sanitizer/asan_interface.h>
#include "tests/unit/page_double.h"
#include "kernel/paging.h"
#include "kernel/pmm.h"

static uint64_t kernel_pml4[512] __attribute__((aligned(4096))) = { PAGE_DOUBLE_SLOT0 };
uint64_t kernel_cr3 = (uint64_t)kernel_pml4;

static uint8_t pool[PAGE_DOUBLE_MAX][PAGE_SIZE] __attribute__((aligned(4096)));
static bool used[PAGE_DOUBLE_MAX];
static uint32_t free_list[PAGE_DOUBLE_MAX], nfree; /* indices of the free pages */
static uint64_t left, in_use;

void page_double_reset(uint64_t budget)
{
	static bool ready;

	if (budget > PAGE_DOUBLE_MAX)
		abort();
	if (!ready || in_use) { /* else every page is on the free list already */
		nfree = 0;
		for (uint32_t i = PAGE_DOUBLE_MAX; i-- > 0;) {
			used[i] = false;
			free_list[nfree++] = i;
		}
		ASAN_POISON_MEMORY_REGION(pool, sizeof(pool));
		ready = true;
	}
	left = budget;
	in_use = 0;
}

void page_double_allow(uint64_t pages)
{
	if (pages > nfree)
		abort();
	left = pages;
}

uint64_t page_double_in_use(void) { return in_use; }
uint64_t page_double_left(void) { return left; }
uint64_t pmm_free_bytes(void) { return left * PAGE_SIZE; }

/* vm.c takes one page at a time. */
void *page_alloc(uint64_t count)
{
	if (count != 1)
		abort();
	if (left == 0)
		return NULL;
	uint32_t i = free_list[--nfree];
	used[i] = true;
	left--;
	in_use++;
	ASAN_UNPOISON_MEMORY_REGION(pool[i], PAGE_SIZE);
	memset(pool[i], 0, PAGE_SIZE);
	return pool[i];
}

/* The page goes back to the budget; a pointer that is not an allocated page stops the program. */
void page_free(void *p, uint64_t count)
{
	uint64_t off = (uint8_t *)p - &pool[0][0];

	if (count != 1 || (uint8_t *)p < &pool[0][0] || off % PAGE_SIZE || off / PAGE_SIZE >= PAGE_DOUBLE_MAX ||
	    !used[off / PAGE_SIZE])
		abort();
	used[off / PAGE_SIZE] = false;
	free_list[nfree++] = off / PAGE_SIZE;
	left++;
	in_use--;
	ASAN_POISON_MEMORY_REGION(p, PAGE_SIZE);
}
