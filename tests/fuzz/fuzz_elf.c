/*
 * libFuzzer target for the program loader: kernel/elf_check.c checks the
 * image, kernel/elf.c maps it (vm_map, vm_copy_to in kernel/vm.c) with the
 * stack, as task_launch does, then vm_destroy frees the address space. The
 * pages come from the page-allocator double (tests/unit/page_double.h).
 *
 * Input: a 2-byte header, the page budget (little-endian, mod 1024: up to
 * 4 MiB of host memory, room for the 1 MiB stack and 3 MiB of segments), then
 * the image. Checked for every input: no crash,
 * hang or sanitizer report; a refused image gets a message; an accepted one
 * is described within the user region; a load that succeeds puts every
 * segment's bytes, zeroes and rights where they belong; a load that fails
 * only because the budget ran out; and vm_destroy gives back every page.
 */
#include <stdlib.h>
#include <string.h>
#include "kernel/elf.h"
#include "kernel/vm.h"
#include "kernel/pmm.h"
#include "tests/unit/page_double.h"
#include <pmuos/syscall.h>

#define HEADER 2
#define BUDGET_MAX 1024 /* <= PAGE_DOUBLE_MAX */
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_image im;
	char err[128];

	if (size < HEADER)
		return 0;
	uint64_t budget = (data[0] | data[1] << 8) % BUDGET_MAX;
	const uint8_t *img = data + HEADER; /* ends where libFuzzer's buffer ends: ASan guards it */
	size_t len = size - HEADER;

	memset(err, 0, sizeof(err));
	if (!elf_check(img, len, &im, err, sizeof(err))) {
		check(err[0] && memchr(err, 0, sizeof(err)));
		return 0;
	}
	check_description(&im, len);

	page_double_reset(budget);
	uint64_t as = vm_create();
	if (!as) {
		check(budget == 0 && page_double_in_use() == 0);
		return 0;
	}
	bool ok = elf_load(img, &im, as) && vm_map(as, STACK_BOTTOM, USER_STACK_SIZE, VM_WRITE);
	if (ok) {
		for (unsigned i = 0; i < im.nseg; i++)
			if (!shares_pages(&im, i))
				check_segment(as, img, &im.seg[i]);
		check(vm_user_range_ok(as, STACK_BOTTOM, USER_STACK_SIZE, true));
	} else {
		check(page_double_left() == 0); /* the only reason a checked program does not load */
	}
	vm_destroy(as);
	check(page_double_in_use() == 0);
	return 0;
}
