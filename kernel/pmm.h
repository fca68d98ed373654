/*
 * Physical page allocator: a bitmap over every 4 KiB page up to the top of
 * usable RAM in the boot memory map. Physical memory is identity-mapped, so
 * a page's physical address is also its kernel pointer.
 */
#ifndef KERNEL_PMM_H
#define KERNEL_PMM_H

#include <stdint.h>
#include <stddef.h>
#include <pmuos/bootinfo.h>

#define PAGE_SIZE 4096ULL
#define PMM_NONE UINT64_MAX

/* The bitmap core (pure, host-tested). A set bit is a used page. */
struct pmm {
	uint64_t *bitmap;
	uint64_t npages; /* pages covered, from physical address 0 */
	uint64_t nfree;
	uint64_t hint;   /* where the next search starts: no page below it is free */
};

/* Starts with every page used; bitmap must hold npages bits. */
void pmm_core_init(struct pmm *m, uint64_t *bitmap, uint64_t npages);
/* Marks pages [first, first+count) free or used; clips at npages. */
void pmm_core_set(struct pmm *m, uint64_t first, uint64_t count, int used);
/* First fit of `count` contiguous free pages; page index or PMM_NONE. */
uint64_t pmm_core_alloc(struct pmm *m, uint64_t count);

/* Kernel allocator over the boot memory map (BSP, once, before SMP). */
void pmm_init(const struct boot_info *bi);
/* `count` contiguous zeroed pages, or NULL when memory is exhausted. Any CPU. */
void *page_alloc(uint64_t count);
void page_free(void *p, uint64_t count);
uint64_t pmm_usable_bytes(void); /* RAM the map reported usable */
uint64_t pmm_free_bytes(void);
uint64_t pmm_top(void);          /* end of the highest usable range, bytes */

#endif
