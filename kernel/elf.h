/*
 * Loading pmuos programs: static ELF64 x86-64 executables linked inside the
 * user region (include/pmuos/syscall.h). Every header field the loader uses
 * is checked first; a bad image gets a message naming the field.
 */
#ifndef KERNEL_ELF_H
#define KERNEL_ELF_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>

#define ELF_MAX_SEGMENTS 16

struct elf_segment {
	uint64_t vaddr, memsz, offset, filesz;
	int flags;     /* VM_WRITE | VM_EXEC (kernel/vm.h) */
	unsigned phdr; /* its program header's index, as messages and readelf -l number it */
};

struct elf_image {
	uint64_t entry;
	uint64_t end;  /* first byte after the highest segment: the initial break */
	unsigned nseg;
	struct elf_segment seg[ELF_MAX_SEGMENTS];
	/*
	 * The program asked for writable code: a PT_GNU_STACK with PF_X (ld -z
	 * execstack, the toolchain's one standard mark for "runs code from
	 * writable memory"). Only then may a page be writable and executable
	 * (a PF_W|PF_X segment, or W and X segments sharing a page), and the
	 * stack is executable too, as the mark says.
	 */
	bool wx;
	/*
	 * The tasks of a launch may share one read-only copy of the read-only
	 * segments (elf_load_text): the program does not ask for writable code
	 * (wx), and no page of a read-only segment is also a writable one's.
	 */
	bool shared_text;
};

/*
 * Checks that img[0..len) is a pmuos program and describes its PT_LOAD
 * segments. Pure (reads only the buffer). Returns true, or false with the
 * reason in err; a page that would be writable and executable is refused
 * (naming the segment) unless the program asks (elf_image.wx).
 */
bool elf_check(const uint8_t *img, size_t len, struct elf_image *out, char *err, size_t errlen);
/*
 * Builds a task's address space from a checked image: every segment (its file
 * bytes, then zeroes, with its rights) and the USER_STACK_SIZE stack below
 * USER_STACK_TOP (executable only if im->wx), holding at most `limit` bytes (vm_create).
 * With `text` (elf_load_text's, for this image) the read-only segments map its
 * pages (vm_share) and only the writable ones and the stack are the task's own.
 * Returns the address space, or 0 with the reason in err (out of card memory,
 * or over the limit: which part, its size, what the task would hold and the
 * limit, in KiB); nothing stays allocated then.
 */
uint64_t elf_load(const uint8_t *img, const struct elf_image *im, uint64_t text, uint64_t limit, char *err,
		  size_t errlen);
/*
 * The shared text of a checked image with im->shared_text (kernel/vm.h): its
 * read-only segments' bytes and zeroes, once, for elf_load to map into every
 * task of a launch; at most `limit` bytes. Returns it with one reference (the
 * caller's, vm_text_put), or 0 with the reason in err as elf_load's.
 */
uint64_t elf_load_text(const uint8_t *img, const struct elf_image *im, uint64_t limit, char *err, size_t errlen);

#endif
