/* Ring-3 address spaces; see kernel/vm.h. */
#include "kernel/vm.h"
#include "lib/lib.h"
#include "kernel/paging.h"
#include "kernel/pmm.h"
#include <pmuos/syscall.h>

/* Bytes one entry maps at each level: 4 KiB (page table), 2 MiB, 1 GiB, 512 GiB (PML4). */
#define SHIFT(level) (12 + 9 * (level))
#define IDX(va, level) (((va) >> SHIFT(level)) & 511)

/*
 * An address space's accounting lives in its own PML4, in slots no address
 * space maps (slot 0 is the kernel's, slot 1 the user region): the processor
 * ignores bits 63:1 of an entry whose P bit (bit 0) is clear (Intel SDM
 * Vol. 3A §4.5, Figure 4-11), so the counts are kept there shifted left by
 * one. Nothing else is needed per task, and the PML4 address stays the handle.
 */
#define SLOT_PAGES 2 /* pages held: the PML4, page tables, user pages */
#define SLOT_LIMIT 3 /* most pages it may hold */
#define SLOT_TEXT  4 /* the shared text it maps pages of (vm_share), or 0 */
#define SLOT_REFS  5 /* a shared text's: its holder and every address space mapping it */
/*
 * A page vm_share mapped: the shared text owns it, vm_destroy leaves it.
 * Bit 9 of a 4 KiB page's entry is ignored by the processor (Intel SDM
 * Vol. 3A §4.5, Figure 4-11), free for the OS.
 */
#define PTE_SHARED (1ULL << 9)

static uint64_t get(uint64_t as, int slot) { return ((uint64_t *)as)[slot] >> 1; }
static void set(uint64_t as, int slot, uint64_t v) { ((uint64_t *)as)[slot] = v << 1; }

uint64_t vm_create(uint64_t limit)
{
	uint64_t *pml4 = page_alloc(1);

	if (!pml4)
		return 0;
	/* Slot 0: the kernel identity map, supervisor-only, shared. */
	pml4[0] = ((uint64_t *)kernel_cr3)[0];
	set((uint64_t)pml4, SLOT_PAGES, 1);
	set((uint64_t)pml4, SLOT_LIMIT, limit / PAGE_SIZE);
	return (uint64_t)pml4;
}

uint64_t vm_size(uint64_t as) { return get(as, SLOT_PAGES) * PAGE_SIZE; }
uint64_t vm_limit(uint64_t as) { return get(as, SLOT_LIMIT) * PAGE_SIZE; }

/* A page set aside by vm_map: pages are chained through their first word. */
static void *take(uint64_t **spare)
{
	uint64_t *p = *spare;

	*spare = (uint64_t *)p[0];
	p[0] = 0; /* zeroed, as page_alloc gave it */
	return p;
}

static void give_back(uint64_t *spare)
{
	while (spare) {
		uint64_t *next = (uint64_t *)spare[0];
		page_free(spare, 1);
		spare = next;
	}
}

/*
 * The page-table entry for va at level 0 (4 KiB), or NULL when a table on
 * the way is missing; with `spare`, missing tables are made from its pages.
 */
static uint64_t *walk(uint64_t as, uint64_t va, uint64_t **spare)
{
	uint64_t *t = (uint64_t *)as;

	for (int level = 3; level > 0; level--) {
		uint64_t *e = &t[IDX(va, level)];
		if (!(*e & PTE_P)) {
			if (!spare)
				return NULL;
			*e = (uint64_t)take(spare) | PTE_P | PTE_W | PTE_U;
		}
		t = (uint64_t *)(*e & PTE_ADDR);
	}
	return &t[IDX(va, 0)];
}

/* How many 2^shift-byte blocks [a, end) meets (a < end). */
static uint64_t blocks(uint64_t a, uint64_t end, int shift)
{
	return ((end - 1) >> shift) - (a >> shift) + 1;
}

/*
 * Pages mapping [start, end) (page-aligned, in the user region) adds: pages
 * not yet mapped and the tables they need. Where a table is missing, the
 * whole stretch it would map is new and counted at once, so the cost of this
 * walk is bounded by the tables that exist, not by the length asked for.
 */
static uint64_t cost(uint64_t as, uint64_t start, uint64_t end, uint64_t *tables)
{
	uint64_t n = 0;

	*tables = 0;
	for (uint64_t a = start; a < end;) {
		uint64_t *t = (uint64_t *)as;
		int level = 3;
		while (level > 0 && (t[IDX(a, level)] & PTE_P)) {
			t = (uint64_t *)(t[IDX(a, level)] & PTE_ADDR);
			level--;
		}
		if (level == 0) {
			n += !(t[IDX(a, 0)] & PTE_P);
			a += PAGE_SIZE;
			continue;
		}
		/* No entry for a at `level`: new tables below it, and new pages, up to the end of what it maps. */
		uint64_t stop = MIN(end, ALIGN_DOWN(a, 1ULL << SHIFT(level)) + (1ULL << SHIFT(level)));
		for (int l = 1; l <= level; l++)
			*tables += blocks(a, stop, SHIFT(l));
		n += (stop - a) / PAGE_SIZE;
		a = stop;
	}
	return n + *tables;
}

static bool in_user_region(uint64_t va, uint64_t len)
{
	return va >= USER_BASE && va < USER_END && len <= USER_END - va;
}

uint64_t vm_map_cost(uint64_t as, uint64_t va, uint64_t len)
{
	uint64_t tables;

	if (!in_user_region(va, len) || len == 0)
		return 0;
	return cost(as, ALIGN_DOWN(va, PAGE_SIZE), ALIGN_UP(va + len, PAGE_SIZE), &tables) * PAGE_SIZE;
}

/*
 * Maps [start, end) (page-aligned, in the user region): with text 0, zeroed
 * pages of its own with the rights in flags; else the pages text maps there
 * (vm_share), which must map every one. Both count every page against the
 * limit; only the first allocates them.
 */
static int map(uint64_t as, uint64_t start, uint64_t end, int flags, uint64_t text)
{
	uint64_t tables, need = cost(as, start, end, &tables), held = get(as, SLOT_PAGES);
	if (held + need > get(as, SLOT_LIMIT))
		return VM_ELIMIT;
	/*
	 * Every page this call needs is taken first, so that running out changes
	 * nothing. They are used in the order page_alloc zeroed them, so the
	 * pages at the highest addresses (a stack's top) were written last, as
	 * when each was allocated where it is mapped: what a cache holds after
	 * loading follows the address order (the plugin's two-core tests use it).
	 */
	uint64_t *spare = NULL, *last = NULL;
	for (uint64_t i = 0; i < (text ? tables : need); i++) {
		uint64_t *p = page_alloc(1); /* zeroed: p[0] ends the chain */
		if (!p) {
			give_back(spare);
			return VM_ENOMEM;
		}
		if (last)
			last[0] = (uint64_t)p;
		else
			spare = p;
		last = p;
	}
	for (uint64_t a = start; a < end; a += PAGE_SIZE) {
		uint64_t *pte = walk(as, a, &spare);
		if (text && !(*pte & PTE_P)) {
			*pte = *walk(text, a, NULL) | PTE_SHARED;
			continue;
		}
		if (*pte & PTE_P) {
			/* Two segments sharing a page: the union of their rights (vm_share's keep the text's). */
			if (flags & VM_WRITE)
				*pte |= PTE_W;
			if (flags & VM_EXEC)
				*pte &= ~PTE_NX;
			continue;
		}
		*pte = (uint64_t)take(&spare) | PTE_P | PTE_U | (flags & VM_WRITE ? PTE_W : 0) |
		       (flags & VM_EXEC ? 0 : PTE_NX);
	}
	set(as, SLOT_PAGES, held + need);
	return VM_OK;
}

int vm_map(uint64_t as, uint64_t va, uint64_t len, int flags)
{
	if (!in_user_region(va, len))
		return VM_ERANGE;
	if (len == 0)
		return VM_OK;
	return map(as, ALIGN_DOWN(va, PAGE_SIZE), ALIGN_UP(va + len, PAGE_SIZE), flags, 0);
}

int vm_share(uint64_t as, uint64_t text, uint64_t va, uint64_t len)
{
	if (!in_user_region(va, len) || (get(as, SLOT_TEXT) && get(as, SLOT_TEXT) != text))
		return VM_ERANGE;
	uint64_t start = ALIGN_DOWN(va, PAGE_SIZE), end = ALIGN_UP(va + len, PAGE_SIZE);
	for (uint64_t a = start; a < end; a += PAGE_SIZE) {
		const uint64_t *pte = walk(text, a, NULL);
		if (!pte || !(*pte & PTE_P) || (*pte & PTE_W))
			return VM_ERANGE;
	}
	if (len == 0)
		return VM_OK;
	int r = map(as, start, end, 0, text);
	if (r == VM_OK && !get(as, SLOT_TEXT)) {
		set(as, SLOT_TEXT, text);
		__atomic_add_fetch(&((uint64_t *)text)[SLOT_REFS], 2, __ATOMIC_RELAXED); /* the count, shifted as set() keeps it */
	}
	return r;
}

uint64_t vm_text_create(uint64_t limit)
{
	uint64_t text = vm_create(limit);

	if (text)
		set(text, SLOT_REFS, 1);
	return text;
}

void vm_text_put(uint64_t text)
{
	if (__atomic_sub_fetch(&((uint64_t *)text)[SLOT_REFS], 2, __ATOMIC_ACQ_REL) == 0)
		vm_destroy(text);
}

void *vm_translate(uint64_t as, uint64_t va)
{
	if (va < USER_BASE || va >= USER_END)
		return NULL;
	uint64_t *pte = walk(as, va, NULL);
	if (!pte || !(*pte & PTE_P))
		return NULL;
	return (void *)((*pte & PTE_ADDR) + (va & (PAGE_SIZE - 1)));
}

bool vm_user_range_ok(uint64_t as, uint64_t va, uint64_t len, bool write)
{
	if (va < USER_BASE || va + len > USER_END || va + len < va)
		return false;
	for (uint64_t a = ALIGN_DOWN(va, PAGE_SIZE); a < va + len; a += PAGE_SIZE) {
		uint64_t *pte = walk(as, a, NULL);
		if (!pte || !(*pte & PTE_P) || (write && !(*pte & PTE_W)))
			return false;
	}
	return true;
}

/* Copies between kernel memory and user memory, a page at a time; false at an unmapped page. */
static bool copy_user(uint64_t as, uint64_t va, uint8_t *k, size_t len, bool to_user)
{
	while (len) {
		uint8_t *u = vm_translate(as, va);
		size_t n = MIN(len, PAGE_SIZE - (va & (PAGE_SIZE - 1)));
		if (!u)
			return false;
		memcpy(to_user ? u : k, to_user ? k : u, n);
		k += n;
		va += n;
		len -= n;
	}
	return true;
}

bool vm_copy_to(uint64_t as, uint64_t va, const void *src, size_t len)
{
	return copy_user(as, va, (uint8_t *)src, len, true);
}

bool vm_copy_from(uint64_t as, void *dst, uint64_t va, size_t len)
{
	return copy_user(as, va, dst, len, false);
}

static void free_level(uint64_t *t, int level)
{
	for (int i = 0; i < 512; i++) {
		if (!(t[i] & PTE_P))
			continue;
		uint64_t *next = (uint64_t *)(t[i] & PTE_ADDR);
		if (level > 0)
			free_level(next, level - 1);
		else if (!(t[i] & PTE_SHARED))
			page_free(next, 1);
	}
	page_free(t, 1);
}

void vm_destroy(uint64_t as)
{
	uint64_t *pml4 = (uint64_t *)as;

	uint64_t text = get(as, SLOT_TEXT);

	/* Only slot 1 is the task's own; slot 0 is the shared kernel map. */
	if (pml4[1] & PTE_P)
		free_level((uint64_t *)(pml4[1] & PTE_ADDR), 2);
	page_free(pml4, 1);
	if (text)
		vm_text_put(text);
}
