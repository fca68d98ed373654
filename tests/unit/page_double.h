/*
 * Page-allocator double for kernel/vm.c on the host (unit tests and fuzz
 * targets): page_alloc/page_free (kernel/pmm.h) hand out 4 KiB-aligned, zeroed
 * host memory one page at a time, at most a budget of pages (up to
 * PAGE_DOUBLE_MAX), and count the pages in use; pmm_free_bytes is what is
 * left of the budget;
 * kernel_cr3 (kernel/paging.h) is a kernel PML4 whose slot 0 the address
 * spaces share. Host pointers fit the PTE address field (bits 12-51), so
 * vm.c's tables hold them as it holds identity-mapped physical addresses.
 */
#ifndef TESTS_UNIT_PAGE_DOUBLE_H
#define TESTS_UNIT_PAGE_DOUBLE_H

#include <stdint.h>

/* Most pages a budget may hold. */
#define PAGE_DOUBLE_MAX 4096

/* The kernel PML4's slot 0, as vm_create must copy it. */
#define PAGE_DOUBLE_SLOT0 0x1003ULL /* a present, writable table at 4 KiB */

/*
 * Starts afresh: every page free (pages still in use are forgotten), and
 * page_alloc returns NULL rather than have more than `budget` in use.
 */
void page_double_reset(uint64_t budget);
/* From now on page_alloc hands out `pages` more (plus what page_free gives back), then NULL. */
void page_double_allow(uint64_t pages);
/* Pages allocated and not yet freed. */
uint64_t page_double_in_use(void);
/* Pages page_alloc may still hand out. */
uint64_t page_double_left(void);

#endif
