/* ELF64 program checks (System V gABI, ELF-64 Object File Format 1.5); pure, host-tested. */
#include <stdarg.h>
#include "kernel/elf.h"
#include "lib/fmt.h"
#include "lib/lib.h"
#include "kernel/vm.h"
#include <pmuos/syscall.h>

#define EHDR_SIZE 64
#define PHDR_SIZE 56
#define PT_LOAD 1
#define PT_GNU_STACK 0x6474e551u /* GNU extension: its p_flags are the stack's rights (ld -z execstack) */
#define PF_X 1
#define PF_W 2
#define PAGE_BYTES 4096ULL /* vm_map maps 4 KiB pages */

static uint16_t rd16(const uint8_t *p) { return p[0] | p[1] << 8; }
static uint32_t rd32(const uint8_t *p) { return rd16(p) | (uint32_t)rd16(p + 2) << 16; }
static uint64_t rd64(const uint8_t *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

static bool __attribute__((format(printf, 3, 4))) fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return false;
}

/* Whether segments a and b (neither empty) have a page in common. */
static bool share_page(const struct elf_segment *a, const struct elf_segment *b)
{
	return ALIGN_DOWN(a->vaddr, PAGE_BYTES) < ALIGN_UP(b->vaddr + b->memsz, PAGE_BYTES) &&
	       ALIGN_DOWN(b->vaddr, PAGE_BYTES) < ALIGN_UP(a->vaddr + a->memsz, PAGE_BYTES);
}

/*
 * W^X: no page both writable and executable, whether one segment asks for
 * both or two segments share a page (vm_map gives a shared page the union
 * of their rights). False with the segment(s) named in err.
 */
static bool wx_ok(const struct elf_image *im, char *err, size_t errlen)
{
	static const char why[] = "(W^X; ld -z execstack allows it)"; /* fits a 96-byte err */

	for (unsigned i = 0; i < im->nseg; i++) {
		const struct elf_segment *a = &im->seg[i];
		if ((a->flags & (VM_WRITE | VM_EXEC)) == (VM_WRITE | VM_EXEC))
			return fail(err, errlen, "segment %u at %#lx is writable and executable %s", a->phdr, a->vaddr, why);
		for (unsigned j = 0; j < i; j++) {
			const struct elf_segment *b = &im->seg[j];
			if ((a->flags | b->flags) != (VM_WRITE | VM_EXEC) || !a->memsz || !b->memsz)
				continue;
			if (share_page(a, b))
				return fail(err, errlen, "segments %u and %u share page %#lx: W and X %s", b->phdr,
					    a->phdr, MAX(ALIGN_DOWN(a->vaddr, PAGE_BYTES), ALIGN_DOWN(b->vaddr, PAGE_BYTES)), why);
		}
	}
	return true;
}

/* elf_image.shared_text: see kernel/elf.h. */
static bool text_shareable(const struct elf_image *im)
{
	if (im->wx)
		return false;
	for (unsigned i = 0; i < im->nseg; i++)
		for (unsigned j = 0; j < im->nseg; j++)
			if (!(im->seg[i].flags & VM_WRITE) && (im->seg[j].flags & VM_WRITE) && im->seg[i].memsz &&
			    im->seg[j].memsz && share_page(&im->seg[i], &im->seg[j]))
				return false;
	return true;
}

bool elf_check(const uint8_t *img, size_t len, struct elf_image *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (len < EHDR_SIZE)
		return fail(err, errlen, "image of %lu bytes is shorter than an ELF header", (unsigned long)len);
	if (memcmp(img, "\177ELF", 4) != 0)
		return fail(err, errlen, "not an ELF file (bad magic)");
	if (img[4] != 2 || img[5] != 1)
		return fail(err, errlen, "not a 64-bit little-endian ELF (class %u, data %u)", img[4], img[5]);
	if (img[6] != 1 || rd32(img + 20) != 1)
		return fail(err, errlen, "unknown ELF version (EI_VERSION %u, e_version %u)", img[6], rd32(img + 20));
	if (rd16(img + 16) != 2)
		return fail(err, errlen, "e_type %u is not ET_EXEC (a static executable)", rd16(img + 16));
	if (rd16(img + 18) != 62)
		return fail(err, errlen, "e_machine %u is not x86-64 (62)", rd16(img + 18));

	uint64_t phoff = rd64(img + 32);
	uint16_t phentsize = rd16(img + 54), phnum = rd16(img + 56);
	if (phentsize != PHDR_SIZE)
		return fail(err, errlen, "e_phentsize %u is not %d", phentsize, PHDR_SIZE);
	if (phnum == 0 || phnum > 64)
		return fail(err, errlen, "e_phnum %u is not 1-64", phnum);
	if (phoff > len || (uint64_t)phnum * PHDR_SIZE > len - phoff)
		return fail(err, errlen, "program headers at %#lx run past the end of the %lu-byte image", phoff, (unsigned long)len);

	for (unsigned i = 0; i < phnum; i++) {
		const uint8_t *ph = img + phoff + i * PHDR_SIZE;
		if (rd32(ph) == PT_GNU_STACK)
			out->wx = rd32(ph + 4) & PF_X;
		if (rd32(ph) != PT_LOAD)
			continue;
		uint64_t off = rd64(ph + 8), va = rd64(ph + 16), filesz = rd64(ph + 32), memsz = rd64(ph + 40);
		uint32_t fl = rd32(ph + 4);
		if (out->nseg == ELF_MAX_SEGMENTS)
			return fail(err, errlen, "more than %d PT_LOAD segments", ELF_MAX_SEGMENTS);
		if (filesz > memsz)
			return fail(err, errlen, "segment %u: p_filesz is larger than p_memsz", i);
		if (off > len || filesz > len - off)
			return fail(err, errlen, "segment %u: file bytes run past the end of the image (offset %#lx)", i, off);
		if (va < USER_BASE || va >= USER_STACK_TOP - USER_STACK_SIZE || memsz > USER_STACK_TOP - USER_STACK_SIZE - va)
			return fail(err, errlen, "segment %u at %#lx is outside the user region (link with pmuos-cc)", i, va);
		struct elf_segment *s = &out->seg[out->nseg++];
		s->vaddr = va;
		s->memsz = memsz;
		s->offset = off;
		s->filesz = filesz;
		s->flags = (fl & PF_W ? VM_WRITE : 0) | (fl & PF_X ? VM_EXEC : 0);
		s->phdr = i;
		out->end = MAX(out->end, va + memsz);
	}
	if (out->nseg == 0)
		return fail(err, errlen, "no PT_LOAD segment");
	if (!out->wx && !wx_ok(out, err, errlen))
		return false;
	out->shared_text = text_shareable(out);
	out->entry = rd64(img + 24);
	for (unsigned i = 0; i < out->nseg; i++) {
		const struct elf_segment *s = &out->seg[i];
		if ((s->flags & VM_EXEC) && out->entry >= s->vaddr && out->entry < s->vaddr + s->memsz)
			return true;
	}
	return fail(err, errlen, "entry point %#lx is not in an executable segment", out->entry);
}
