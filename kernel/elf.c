/* Building a task's address space from a checked program; see kernel/elf.h. */
#include "kernel/elf.h"
#include "lib/fmt.h"
#include "lib/lib.h"
#include "kernel/pmm.h"
#include "kernel/vm.h"
#include <pmuos/syscall.h>

/*
 * Maps [va, va+len) for `what` ("segment 2", "the stack"): pages of its own,
 * or text's (not 0); false with the reason in err.
 */
static bool map(uint64_t as, uint64_t va, uint64_t len, int flags, uint64_t text, const char *what, char *err,
		size_t errlen)
{
	switch (text ? vm_share(as, text, va, len) : vm_map(as, va, len, flags)) {
	case VM_OK:
		return true;
	case VM_ELIMIT:
		snprintf(err, errlen, "%s (%lu KiB) takes the task to %lu KiB; its limit is %lu KiB", what,
			 (uint64_t)(ALIGN_UP(va + len, PAGE_SIZE) - ALIGN_DOWN(va, PAGE_SIZE)) >> 10,
			 (vm_size(as) + vm_map_cost(as, va, len)) >> 10, vm_limit(as) >> 10);
		return false;
	default: /* VM_ENOMEM: elf_check kept every segment inside the user region, elf_load_text mapped it */
		snprintf(err, errlen, "out of card memory: %s needs %lu KiB, %lu KiB free", what,
			 vm_map_cost(as, va, len) >> 10, pmm_free_bytes() >> 10);
		return false;
	}
}

/*
 * Maps and fills im's segments into as, in their order: the read-only ones
 * from text's pages if text is not 0; only the read-only ones if `text_only`.
 * False with the reason in err.
 */
static bool load(uint64_t as, const uint8_t *img, const struct elf_image *im, uint64_t text, bool text_only,
		 char *err, size_t errlen)
{
	char what[16];

	for (unsigned i = 0; i < im->nseg; i++) {
		const struct elf_segment *s = &im->seg[i];
		uint64_t from = s->flags & VM_WRITE ? 0 : text;
		if (text_only && (s->flags & VM_WRITE))
			continue;
		snprintf(what, sizeof(what), "segment %u", s->phdr);
		if (!map(as, s->vaddr, s->memsz, s->flags, from, what, err, errlen))
			return false;
		if (!from)
			vm_copy_to(as, s->vaddr, img + s->offset, s->filesz); /* mapped just now: cannot fail */
	}
	return true;
}

/* as (a new address space), or 0 with the reason it is not in err. */
static uint64_t created(uint64_t as, char *err, size_t errlen)
{
	if (!as)
		snprintf(err, errlen, "out of card memory (%lu KiB free)", pmm_free_bytes() >> 10);
	return as;
}

uint64_t elf_load_text(const uint8_t *img, const struct elf_image *im, uint64_t limit, char *err, size_t errlen)
{
	uint64_t text = created(vm_text_create(limit), err, errlen);

	if (!text)
		return 0;
	if (load(text, img, im, 0, true, err, errlen))
		return text;
	vm_text_put(text);
	return 0;
}

uint64_t elf_load(const uint8_t *img, const struct elf_image *im, uint64_t text, uint64_t limit, char *err,
		  size_t errlen)
{
	uint64_t as = created(vm_create(limit), err, errlen);

	if (!as)
		return 0;
	int stack = VM_WRITE | (im->wx ? VM_EXEC : 0);
	if (load(as, img, im, text, false, err, errlen) &&
	    map(as, USER_STACK_TOP - USER_STACK_SIZE, USER_STACK_SIZE, stack, 0, "the stack", err, errlen))
		return as;
	vm_destroy(as);
	return 0;
}
