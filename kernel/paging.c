/* Kernel identity map; see kernel/paging.h. */
#include "kernel/paging.h"
#include "kernel/pmm.h"
#include "lib/lib.h"
#include "arch/x86.h"

uint64_t kernel_cr3;

/* Next-level table under entry `e`, allocated if absent; NULL when out of memory. */
static uint64_t *next_table(uint64_t *e)
{
	if (!(*e & PTE_P)) {
		uint64_t *t = page_alloc(1);
		if (!t)
			return NULL;
		*e = (uint64_t)t | PTE_P | PTE_W;
	}
	return (uint64_t *)(*e & PTE_ADDR);
}

bool paging_map_identity(uint64_t phys, uint64_t len, bool uncached)
{
	uint64_t *pml4 = (uint64_t *)kernel_cr3;
	uint64_t flags = PTE_P | PTE_W | PTE_PS | (uncached ? PTE_PCD | PTE_PWT : 0);

	for (uint64_t a = ALIGN_DOWN(phys, PAGE_2M); a < phys + len; a += PAGE_2M) {
		uint64_t *pdpt = next_table(&pml4[(a >> 39) & 511]);
		uint64_t *pd = pdpt ? next_table(&pdpt[(a >> 30) & 511]) : NULL;
		if (!pd)
			return false;
		pd[(a >> 21) & 511] = a | flags;
		__asm__ volatile("invlpg (%0)" :: "r"(a) : "memory");
	}
	return true;
}

void paging_init(void)
{
	kernel_cr3 = (uint64_t)page_alloc(1);
	/* The low 4 GiB hold the kernel, the APIC and IOAPIC pages and 32-bit BARs. */
	paging_map_identity(0, 4ULL << 30, false);
	if (pmm_top() > (4ULL << 30))
		paging_map_identity(4ULL << 30, pmm_top() - (4ULL << 30), false);
	write_cr3(kernel_cr3);
}
