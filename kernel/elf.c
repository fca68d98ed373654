/* Mapping a checked program into an address space; see kernel/elf.h. */
#include "kernel/elf.h"
#include "kernel/vm.h"

bool elf_load(const uint8_t *img, const struct elf_image *im, uint64_t as)
{
	for (unsigned i = 0; i < im->nseg; i++) {
		const struct elf_segment *s = &im->seg[i];
		if (!vm_map(as, s->vaddr, s->memsz, s->flags))
			return false;
		if (!vm_copy_to(as, s->vaddr, img + s->offset, s->filesz))
			return false;
	}
	return true;
}
