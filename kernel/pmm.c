/* Physical page allocator; see kernel/pmm.h. */
#include "kernel/pmm.h"
#include "lib/lib.h"
#include "arch/sync.h"

#define BITS 64

static bool page_used(const struct pmm *m, uint64_t i)
{
	return m->bitmap[i / BITS] & (1ULL << (i % BITS));
}

void pmm_core_init(struct pmm *m, uint64_t *bitmap, uint64_t npages)
{
	m->bitmap = bitmap;
	m->npages = npages;
	m->nfree = 0;
	m->hint = 0;
	memset(bitmap, 0xff, (npages + BITS - 1) / BITS * 8);
}

void pmm_core_set(struct pmm *m, uint64_t first, uint64_t count, int used)
{
	uint64_t end = first + count;

	if (first > m->npages)
		return;
	if (end > m->npages || end < first)
		end = m->npages;
	for (uint64_t i = first; i < end; i++) {
		uint64_t *w = &m->bitmap[i / BITS];
		/* A whole word all the other way (pmm_init frees all of RAM): 64 pages at once. */
		if (i % BITS == 0 && end - i >= BITS && *w == (used ? 0 : ~0ULL)) {
			*w = ~*w;
			m->nfree += used ? -BITS : BITS;
			i += BITS - 1;
			continue;
		}
		if (page_used(m, i) == !!used)
			continue;
		m->bitmap[i / BITS] ^= 1ULL << (i % BITS);
		m->nfree += used ? -1 : 1;
	}
	if (!used && first < m->hint)
		m->hint = first;
}

/*
 * The hint stays the lowest page that may be free: a first fit past used
 * pages moves it to the first free page the search met. Kept only when the
 * fit began at the hint, it stayed at the kernel's first free page for
 * good, and every allocation walked every page allocated since: loading 243
 * tasks took 4 times the instructions of 243 single loads (issue 23.10).
 */
uint64_t pmm_core_alloc(struct pmm *m, uint64_t count)
{
	if (count == 0 || count > m->nfree)
		return PMM_NONE;
	uint64_t run = 0, first_free = PMM_NONE;

	for (uint64_t i = m->hint; i < m->npages; i++) {
		if (run == 0 && i % BITS == 0 && m->bitmap[i / BITS] == ~0ULL) {
			i += BITS - 1; /* whole word used */
			continue;
		}
		run = page_used(m, i) ? 0 : run + 1;
		if (run == 1 && first_free == PMM_NONE)
			first_free = i;
		if (run == count) {
			uint64_t first = i + 1 - count;
			pmm_core_set(m, first, count, 1);
			m->hint = first_free == first ? i + 1 : first_free;
			return first;
		}
	}
	if (first_free != PMM_NONE)
		m->hint = first_free;
	return PMM_NONE;
}

/* ---- the kernel's instance ---- */

extern char __kernel_start[], __kernel_end[];
static struct pmm pmm;
static struct spinlock pmm_lock;
static uint64_t usable_bytes, top;

/* The first page-aligned address >= s where len bytes overlap no loader-placed module. */
static uint64_t past_modules(uint64_t s, uint64_t len, const struct boot_info *bi)
{
	for (bool moved = true; moved;) {
		moved = false;
		for (uint32_t i = 0; i < bi->module_count; i++) {
			uint64_t mb = bi->modules[i].base, me = mb + bi->modules[i].size;
			if (s < me && s + len > mb) {
				s = ALIGN_UP(me, PAGE_SIZE);
				moved = true;
			}
		}
	}
	return s;
}

void pmm_init(const struct boot_info *bi)
{
	const uint64_t low = 1 << 20; /* below 1 MiB: BIOS areas, the AP trampoline */
	uint64_t kstart = (uint64_t)__kernel_start, kend = ALIGN_UP((uint64_t)__kernel_end, PAGE_SIZE);

	for (uint32_t i = 0; i < bi->mmap_count; i++) {
		const struct boot_mmap_entry *e = &bi->mmap[i];
		if (e->type != BOOT_MEM_USABLE)
			continue;
		usable_bytes += e->length;
		top = MAX(top, e->base + e->length);
	}
	uint64_t npages = top / PAGE_SIZE;
	uint64_t bm_bytes = ALIGN_UP((npages + 7) / 8, PAGE_SIZE);

	/* The bitmap goes in the first usable range above 1 MiB clear of the kernel and modules. */
	uint64_t bm = 0;
	for (uint32_t i = 0; i < bi->mmap_count && !bm; i++) {
		const struct boot_mmap_entry *e = &bi->mmap[i];
		uint64_t s = ALIGN_UP(MAX(e->base, low), PAGE_SIZE), end = e->base + e->length;

		if (e->type != BOOT_MEM_USABLE)
			continue;
		if (s < kend && s + bm_bytes > kstart)
			s = kend;
		s = past_modules(s, bm_bytes, bi);
		if (s + bm_bytes <= end)
			bm = s;
	}
	pmm_core_init(&pmm, (uint64_t *)bm, npages);
	for (uint32_t i = 0; i < bi->mmap_count; i++) {
		const struct boot_mmap_entry *e = &bi->mmap[i];
		if (e->type != BOOT_MEM_USABLE)
			continue;
		/* Only whole pages inside the range are free. */
		uint64_t s = ALIGN_UP(e->base, PAGE_SIZE) / PAGE_SIZE;
		uint64_t end = ALIGN_DOWN(e->base + e->length, PAGE_SIZE) / PAGE_SIZE;
		if (end > s)
			pmm_core_set(&pmm, s, end - s, 0);
	}
	pmm_core_set(&pmm, 0, low / PAGE_SIZE, 1);
	pmm_core_set(&pmm, kstart / PAGE_SIZE, (kend - kstart) / PAGE_SIZE, 1);
	pmm_core_set(&pmm, bm / PAGE_SIZE, bm_bytes / PAGE_SIZE, 1);
	/* Loader-placed files (user programs) stay where they are. */
	for (uint32_t i = 0; i < bi->module_count; i++) {
		uint64_t s = ALIGN_DOWN(bi->modules[i].base, PAGE_SIZE);
		uint64_t e = ALIGN_UP(bi->modules[i].base + bi->modules[i].size, PAGE_SIZE);
		pmm_core_set(&pmm, s / PAGE_SIZE, (e - s) / PAGE_SIZE, 1);
	}
}

void *page_alloc(uint64_t count)
{
	uint64_t f = spin_lock_irq(&pmm_lock);
	uint64_t first = pmm_core_alloc(&pmm, count);

	spin_unlock_irq(&pmm_lock, f);
	if (first == PMM_NONE)
		return NULL;
	void *p = (void *)(first * PAGE_SIZE);
	memset(p, 0, count * PAGE_SIZE);
	return p;
}

void page_free(void *p, uint64_t count)
{
	uint64_t f = spin_lock_irq(&pmm_lock);

	pmm_core_set(&pmm, (uint64_t)p / PAGE_SIZE, count, 0);
	spin_unlock_irq(&pmm_lock, f);
}

uint64_t pmm_usable_bytes(void) { return usable_bytes; }
uint64_t pmm_free_bytes(void) { return pmm.nfree * PAGE_SIZE; }
uint64_t pmm_top(void) { return top; }
