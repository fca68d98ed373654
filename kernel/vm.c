/* Ring-3 address spaces; see kernel/vm.h. */
#include "kernel/vm.h"
#include "kernel/lib.h"
#include "kernel/paging.h"
#include "kernel/pmm.h"
#include <pmuos/syscall.h>

#define IDX(va, level) (((va) >> (12 + 9 * (level))) & 511)

uint64_t vm_create(void)
{
	uint64_t *pml4 = page_alloc(1);

	if (!pml4)
		return 0;
	/* Slot 0: the kernel identity map, supervisor-only, shared. */
	pml4[0] = ((uint64_t *)kernel_cr3)[0];
	return (uint64_t)pml4;
}

/* The page-table entry for va at level 0 (4 KiB), creating tables on the way. */
static uint64_t *walk(uint64_t as, uint64_t va, bool create)
{
	uint64_t *t = (uint64_t *)as;

	for (int level = 3; level > 0; level--) {
		uint64_t *e = &t[IDX(va, level)];
		if (!(*e & PTE_P)) {
			if (!create)
				return NULL;
			uint64_t *n = page_alloc(1);
			if (!n)
				return NULL;
			*e = (uint64_t)n | PTE_P | PTE_W | PTE_U;
		}
		t = (uint64_t *)(*e & PTE_ADDR);
	}
	return &t[IDX(va, 0)];
}

bool vm_map(uint64_t as, uint64_t va, uint64_t len, int flags)
{
	uint64_t start = ALIGN_DOWN(va, PAGE_SIZE), end = ALIGN_UP(va + len, PAGE_SIZE);

	if (va < USER_BASE || end > USER_END || end < start)
		return false;
	for (uint64_t a = start; a < end; a += PAGE_SIZE) {
		uint64_t *pte = walk(as, a, true);
		if (!pte)
			return false;
		if (*pte & PTE_P) {
			/* Two segments sharing a page: the union of their rights. */
			if (flags & VM_WRITE)
				*pte |= PTE_W;
			if (flags & VM_EXEC)
				*pte &= ~PTE_NX;
			continue;
		}
		void *page = page_alloc(1);
		if (!page)
			return false;
		*pte = (uint64_t)page | PTE_P | PTE_U | (flags & VM_WRITE ? PTE_W : 0) |
		       (flags & VM_EXEC ? 0 : PTE_NX);
	}
	return true;
}

void *vm_translate(uint64_t as, uint64_t va)
{
	if (va < USER_BASE || va >= USER_END)
		return NULL;
	uint64_t *pte = walk(as, va, false);
	if (!pte || !(*pte & PTE_P))
		return NULL;
	return (void *)((*pte & PTE_ADDR) + (va & (PAGE_SIZE - 1)));
}

bool vm_user_range_ok(uint64_t as, uint64_t va, uint64_t len, bool write)
{
	if (va < USER_BASE || va + len > USER_END || va + len < va)
		return false;
	for (uint64_t a = ALIGN_DOWN(va, PAGE_SIZE); a < va + len; a += PAGE_SIZE) {
		uint64_t *pte = walk(as, a, false);
		if (!pte || !(*pte & PTE_P) || (write && !(*pte & PTE_W)))
			return false;
	}
	return true;
}

bool vm_copy_to(uint64_t as, uint64_t va, const void *src, size_t len)
{
	const uint8_t *s = src;

	while (len) {
		uint8_t *d = vm_translate(as, va);
		size_t n = MIN(len, PAGE_SIZE - (va & (PAGE_SIZE - 1)));
		if (!d)
			return false;
		memcpy(d, s, n);
		s += n;
		va += n;
		len -= n;
	}
	return true;
}

static void free_level(uint64_t *t, int level)
{
	for (int i = 0; i < 512; i++) {
		if (!(t[i] & PTE_P))
			continue;
		uint64_t *next = (uint64_t *)(t[i] & PTE_ADDR);
		if (level > 0)
			free_level(next, level - 1);
		else
			page_free(next, 1);
	}
	page_free(t, 1);
}

void vm_destroy(uint64_t as)
{
	uint64_t *pml4 = (uint64_t *)as;

	/* Only slot 1 is the task's own; slot 0 is the shared kernel map. */
	if (pml4[1] & PTE_P)
		free_level((uint64_t *)(pml4[1] & PTE_ADDR), 2);
	page_free(pml4, 1);
}
