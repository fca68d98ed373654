/* Building a task's address space from a checked program; see kernel/elf.h. */
#include "kernel/elf.h"
#include "lib/fmt.h"
#include "lib/lib.h"
#include "kernel/pmm.h"
#include "kernel/vm.h"
#include <pmuos/syscall.h>

/* Maps [va, va+len) for `what` ("segment 2", "the stack"); false with the reason in err. */
static bool map(uint64_t as, uint64_t va, uint64_t len, int flags, const char *what, char *err, size_t errlen)
{
	switch (vm_map(as, va, len, flags)) {
	case VM_OK:
		return true;
	case VM_ELIMIT:
		snprintf(err, errlen, "%s (%lu KiB) takes the task to %lu KiB; its limit is %lu KiB", what,
			 (uint64_t)(ALIGN_UP(va + len, PAGE_SIZE) - ALIGN_DOWN(va, PAGE_SIZE)) >> 10,
			 (vm_size(as) + vm_map_cost(as, va, len)) >> 10, vm_limit(as) >> 10);
		return false;
	default: /* VM_ENOMEM: elf_check kept every segment inside the user region */
		snprintf(err, errlen, "out of card memory: %s needs %lu KiB, %lu KiB free", what,
			 vm_map_cost(as, va, len) >> 10, pmm_free_bytes() >> 10);
		return false;
	}
}

uint64_t elf_load(const uint8_t *img, const struct elf_image *im, uint64_t limit, char *err, size_t errlen)
{
	char what[16];
	uint64_t as = vm_create(limit);

	if (!as) {
		snprintf(err, errlen, "out of card memory (%lu KiB free)", pmm_free_bytes() >> 10);
		return 0;
	}
	for (unsigned i = 0; i < im->nseg; i++) {
		const struct elf_segment *s = &im->seg[i];
		snprintf(what, sizeof(what), "segment %u", s->phdr);
		if (!map(as, s->vaddr, s->memsz, s->flags, what, err, errlen))
			goto fail;
		vm_copy_to(as, s->vaddr, img + s->offset, s->filesz); /* mapped just now: cannot fail */
	}
	int stack = VM_WRITE | (im->wx ? VM_EXEC : 0);
	if (map(as, USER_STACK_TOP - USER_STACK_SIZE, USER_STACK_SIZE, stack, "the stack", err, errlen))
		return as;
fail:
	vm_destroy(as);
	return 0;
}
