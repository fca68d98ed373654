/*
 * Kernel page tables: physical memory identity-mapped with 2 MiB pages,
 * supervisor-only. Built once by the BSP; every CPU loads the same CR3.
 */
#ifndef KERNEL_PAGING_H
#define KERNEL_PAGING_H

#include <stdint.h>
#include <stdbool.h>

#define PTE_P    (1ULL << 0)
#define PTE_W    (1ULL << 1)
#define PTE_U    (1ULL << 2)
#define PTE_PWT  (1ULL << 3)
#define PTE_PCD  (1ULL << 4)
#define PTE_PS   (1ULL << 7)
#define PTE_NX   (1ULL << 63)
#define PTE_ADDR 0x000ffffffffff000ULL
#define PAGE_2M  (2ULL << 20)

extern uint64_t kernel_cr3;

/* Builds the kernel map: [0, 4 GiB) and all RAM in the boot map; loads it. */
void paging_init(void);
/*
 * Identity-maps [phys, phys+len) with 2 MiB pages (uncached if `uncached`,
 * for device memory above 4 GiB). Returns false when out of page-table memory.
 */
bool paging_map_identity(uint64_t phys, uint64_t len, bool uncached);

#endif
