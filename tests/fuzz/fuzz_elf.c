/*
 * libFuzzer target for the program loader: kernel/elf_check.c checks the
 * image, kernel/elf.c builds the address space as task_launch has it build
 * one (vm_create, vm_map and vm_copy_to in kernel/vm.c: segments, stack), a
 * heap grows as sys_sbrk grows it, and vm_destroy frees it all. The pages come
 * from the page-allocator double (tests/unit/page_double.h).
 *
 * Input: a 6-byte header, then the image. The header holds three
 * little-endian 16-bit numbers: the pages the card has free (mod 1024: up to
 * 4 MiB of host memory, room for the 1 MiB stack and 3 MiB more), the task's
 * limit in pages (mod 1024), and the heap growth in KiB. Checked for every
 * input: no crash, hang or sanitizer report; a refused image gets a message;
 * an accepted one is described within the user region; a load that succeeds
 * puts every segment's bytes, zeroes and rights where they belong, and holds
 * no more than the limit; a load that fails leaves no page allocated; the
 * heap grows by exactly its cost, or is refused for the limit or for want of
 * pages and changes nothing; the address space's count of its pages is the
 * allocator's; and vm_destroy gives back every page. An image whose
 * read-only segments a launch may share is loaded that way too (load_shared).
 */
#include <stdlib.h>
#include <string.h>
#include "kernel/elf.h"
#include "kernel/vm.h"
#include "kernel/pmm.h"
#include "tests/unit/page_double.h"
#include <pmuos/syscall.h>

#define HEADER 6
#define PAGES_MAX 1024 /* budget and limit: <= PAGE_DOUBLE_MAX */
#define STACK_BOTTOM (USER_STACK_TOP - USER_STACK_SIZE)

#define check(cond) do { if (!(cond)) abort(); } while (0)

/* What elf_check promised about a program it accepted. */
static void check_description(const struct elf_image *im, size_t len)
{
	bool entry_ok = false;

	check(im->nseg >= 1 && im->nseg <= ELF_MAX_SEGMENTS);
	for (unsigned i = 0; i < im->nseg; i++) {
		const struct elf_segment *s = &im->seg[i];
		check(s->filesz <= s->memsz && s->offset <= len && s->filesz <= len - s->offset);
		check(s->vaddr >= USER_BASE && s->vaddr <= STACK_BOTTOM && s->memsz <= STACK_BOTTOM - s->vaddr);
		check(s->vaddr + s->memsz <= im->end && im->end <= STACK_BOTTOM);
		entry_ok |= (s->flags & VM_EXEC) && im->entry >= s->vaddr && im->entry - s->vaddr < s->memsz;
	}
	check(entry_ok);
}

/* The pages vm_map gives segment i meet another segment's. */
static bool shares_pages(const struct elf_image *im, unsigned i)
{
	const struct elf_segment *a = &im->seg[i];
	uint64_t a0 = a->vaddr & ~(PAGE_SIZE - 1), a1 = (a->vaddr + a->memsz + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);

	for (unsigned j = 0; j < im->nseg; j++) {
		const struct elf_segment *b = &im->seg[j];
		uint64_t b0 = b->vaddr & ~(PAGE_SIZE - 1), b1 = (b->vaddr + b->memsz + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
		if (j != i && a0 < b1 && b0 < a1)
			return true;
	}
	return false;
}

/* A loaded segment that shares no page: its file bytes, then zeroes, with its rights. */
static void check_segment(uint64_t as, const uint8_t *img, const struct elf_segment *s)
{
	static const uint8_t zero[PAGE_SIZE];

	for (uint64_t off = 0; off < s->memsz;) {
		uint64_t va = s->vaddr + off, n = PAGE_SIZE - (va & (PAGE_SIZE - 1));
		n = n < s->memsz - off ? n : s->memsz - off;
		const uint8_t *p = vm_translate(as, va);
		check(p);
		uint64_t file = off < s->filesz ? (s->filesz - off < n ? s->filesz - off : n) : 0;
		check(memcmp(p, img + s->offset + off, file) == 0);
		check(memcmp(p + file, zero, n - file) == 0);
		off += n;
	}
	if (s->memsz) {
		check(vm_user_range_ok(as, s->vaddr, s->memsz, false));
		check(vm_user_range_ok(as, s->vaddr, s->memsz, true) == !!(s->flags & VM_WRITE));
	}
}

/* sbrk's vm_map from the initial break: exactly its cost, or nothing at all. */
static void grow_heap(uint64_t as, uint64_t brk, uint64_t len)
{
	uint64_t in_use = page_double_in_use(), cost = vm_map_cost(as, brk, len);

	switch (vm_map(as, brk, len, VM_WRITE)) {
	case VM_OK:
		check(page_double_in_use() == in_use + cost / PAGE_SIZE);
		check(vm_user_range_ok(as, brk, len, true));
		break;
	case VM_ELIMIT:
		check(vm_size(as) + cost > vm_limit(as) && page_double_in_use() == in_use);
		break;
	case VM_ENOMEM:
		check(cost / PAGE_SIZE > page_double_left() && page_double_in_use() == in_use);
		break;
	default: /* the heap lies below the stack: inside the user region */
		abort();
	}
	check(vm_size(as) == page_double_in_use() * PAGE_SIZE && vm_size(as) <= vm_limit(as));
}

/*
 * task_launch's way when the image allows it (im->shared_text): one shared
 * text, two tasks mapping it. Each task's segments as in a private load, the
 * read-only ones on the very same pages; a failed load leaves only what
 * loaded before it; every page comes back once the text's holder and both
 * tasks let go, in that order.
 */
static void load_shared(const uint8_t *img, const struct elf_image *im, uint64_t limit)
{
	char err[128];
	uint64_t as[2] = { 0, 0 };

	page_double_allow(PAGES_MAX); /* on top of what the private load left: room for the text and a task */
	uint64_t text = elf_load_text(img, im, limit, err, sizeof(err));
	if (!text) {
		check(err[0] && page_double_in_use() == 0);
		return;
	}
	for (int k = 0; k < 2; k++) {
		uint64_t in_use = page_double_in_use();
		as[k] = elf_load(img, im, text, limit, err, sizeof(err));
		if (!as[k]) {
			check(err[0] && page_double_in_use() == in_use);
			continue;
		}
		check(vm_size(as[k]) <= limit);
		for (unsigned i = 0; i < im->nseg; i++) {
			const struct elf_segment *s = &im->seg[i];
			if (!shares_pages(im, i))
				check_segment(as[k], img, s);
			if (!(s->flags & VM_WRITE) && s->memsz)
				check(vm_translate(as[k], s->vaddr) == vm_translate(text, s->vaddr));
		}
	}
	vm_text_put(text);
	for (int k = 0; k < 2; k++)
		if (as[k])
			vm_destroy(as[k]);
	check(page_double_in_use() == 0);
}

static uint64_t rd16(const uint8_t *p) { return p[0] | p[1] << 8; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_image im;
	char err[128];

	if (size < HEADER)
		return 0;
	uint64_t budget = rd16(data) % PAGES_MAX, limit = rd16(data + 2) % PAGES_MAX * PAGE_SIZE;
	uint64_t heap = rd16(data + 4) * 1024;
	const uint8_t *img = data + HEADER; /* ends where libFuzzer's buffer ends: ASan guards it */
	size_t len = size - HEADER;

	memset(err, 0, sizeof(err));
	if (!elf_check(img, len, &im, err, sizeof(err))) {
		check(err[0] && memchr(err, 0, sizeof(err)));
		return 0;
	}
	check_description(&im, len);

	page_double_reset(budget);
	uint64_t as = elf_load(img, &im, 0, limit, err, sizeof(err));
	if (!as) {
		check(err[0] && memchr(err, 0, sizeof(err)) && page_double_in_use() == 0);
		return 0;
	}
	check(vm_limit(as) == limit && vm_size(as) == page_double_in_use() * PAGE_SIZE && vm_size(as) <= limit);
	for (unsigned i = 0; i < im.nseg; i++)
		if (!shares_pages(&im, i))
			check_segment(as, img, &im.seg[i]);
	check(vm_user_range_ok(as, STACK_BOTTOM, USER_STACK_SIZE, true));
	uint64_t brk = (im.end + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
	if (brk + heap <= STACK_BOTTOM - PAGE_SIZE) /* sys_sbrk keeps a guard page below the stack */
		grow_heap(as, brk, heap);
	vm_destroy(as);
	check(page_double_in_use() == 0);
	if (im.shared_text)
		load_shared(img, &im, limit);
	return 0;
}
