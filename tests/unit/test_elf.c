/*
 * kernel/elf_check.c on the host: which ELF64 images are pmuos programs
 * (kernel/elf.h). elf_check.c is compiled with the kernel's vsnprintf/memset/
 * memcmp renamed to k_ (tests/unit.mk) and linked with lib/fmt.c and
 * lib/lib.c. Every image lives in a heap buffer of its exact length, so
 * AddressSanitizer stops the test at the first byte read past the end.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/elf.h"
#include "kernel/vm.h"
#include <pmuos/syscall.h>

#define EHDR 64
#define PHDR 56
#define PT_NULL 0
#define PT_LOAD 1
#define PT_NOTE 4
#define PT_PHDR 6
#define PT_GNU_STACK 0x6474e551u
#define PF_X 1
#define PF_W 2
#define PF_R 4

/* The first byte of the stack area: segments must end at or below it. */
#define STACK_BOTTOM (USER_STACK_TOP - USER_STACK_SIZE)

/* ------------------------------------------------------------ image builder */

static void put16(uint8_t *p, uint16_t v) { p[0] = v; p[1] = v >> 8; }
static void put32(uint8_t *p, uint32_t v) { put16(p, v); put16(p + 2, v >> 16); }
static void put64(uint8_t *p, uint64_t v) { put32(p, v); put32(p + 4, v >> 32); }
static uint16_t get16(const uint8_t *p) { return p[0] | p[1] << 8; }
static uint32_t get32(const uint8_t *p) { return get16(p) | (uint32_t)get16(p + 2) << 16; }
static uint64_t get64(const uint8_t *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }

struct ph {
	uint32_t type, flags;
	uint64_t offset, vaddr, filesz, memsz;
};

/*
 * A valid ELF64 x86-64 ET_EXEC header with entry point `entry` and the program
 * headers ph[0..n) at offset 64, followed by the file bytes of every segment
 * (offsets below 64 KiB; larger ones are bogus on purpose and add nothing).
 * The buffer is exactly *lenp bytes long; the caller frees it.
 */
static uint8_t *build(uint64_t entry, const struct ph *ph, unsigned n, size_t *lenp)
{
	size_t len = EHDR + (size_t)n * PHDR;

	for (unsigned i = 0; i < n; i++)
		if (ph[i].offset <= 0x10000 && ph[i].filesz <= 0x10000 && ph[i].offset + ph[i].filesz > len)
			len = ph[i].offset + ph[i].filesz;
	uint8_t *img = malloc(len ? len : 1);
	assert_non_null(img);
	memset(img, 0, len);
	for (unsigned i = 0; i < n; i++)
		if (ph[i].offset <= 0x10000 && ph[i].filesz <= 0x10000)
			memset(img + ph[i].offset, 0xc0 + i, ph[i].filesz);

	memcpy(img, "\177ELF", 4);
	img[4] = 2; /* ELFCLASS64 */
	img[5] = 1; /* ELFDATA2LSB */
	img[6] = 1; /* EV_CURRENT */
	put16(img + 16, 2);  /* ET_EXEC */
	put16(img + 18, 62); /* EM_X86_64 */
	put32(img + 20, 1);  /* e_version */
	put64(img + 24, entry);
	put64(img + 32, EHDR); /* e_phoff */
	put64(img + 40, 0);    /* e_shoff: no sections */
	put16(img + 52, EHDR);
	put16(img + 54, PHDR);
	put16(img + 56, n);
	put16(img + 58, 64);
	for (unsigned i = 0; i < n; i++) {
		uint8_t *p = img + EHDR + i * PHDR;
		put32(p + 0, ph[i].type);
		put32(p + 4, ph[i].flags);
		put64(p + 8, ph[i].offset);
		put64(p + 16, ph[i].vaddr);
		put64(p + 24, ph[i].vaddr); /* p_paddr */
		put64(p + 32, ph[i].filesz);
		put64(p + 40, ph[i].memsz);
		put64(p + 48, 0x1000);
	}
	*lenp = len;
	return img;
}

/* The valid program: text R+X (64 bytes) and data R+W (32 file bytes, 4 KiB in memory). */
#define TEXT_VA  USER_TEXT
#define DATA_VA  (USER_TEXT + 0x1000)
#define ENTRY    (USER_TEXT + 0x10)
#define VALID_LEN 0x160
static const struct ph valid_ph[] = {
	{ PT_LOAD, PF_R | PF_X, 0x100, TEXT_VA, 0x40, 0x40 },
	{ PT_LOAD, PF_R | PF_W, 0x140, DATA_VA, 0x20, 0x1000 },
};

static uint8_t *valid(size_t *lenp)
{
	uint8_t *img = build(ENTRY, valid_ph, 2, lenp);
	assert_int_equal(*lenp, VALID_LEN);
	return img;
}

/* Byte offset of program header i's field at `off` in an image built above. */
#define PH(i, off) (EHDR + (i) * PHDR + (off))

/* ------------------------------------------------------------ checkers */

/* elf_check(img, len) accepts; *im is its description. */
static void ok(const char *file, int line, const uint8_t *img, size_t len, struct elf_image *im)
{
	char err[160] = "", what[256];

	memset(im, 0xa5, sizeof(*im));
	bool r = elf_check(img, len, im, err, sizeof(err));
	snprintf(what, sizeof(what), "elf_check accepts the %zu-byte image (err: %s)", len, err);
	_assert_true(r, what, file, line);
}

/* elf_check(img, len) rejects with a NUL-terminated message containing part1 and part2 (if not NULL). */
static void bad(const char *file, int line, const uint8_t *img, size_t len, const char *part1, const char *part2)
{
	struct elf_image im;
	char err[160], what[320];

	memset(err, 'Z', sizeof(err));
	bool r = elf_check(img, len, &im, err, sizeof(err));
	_assert_true(memchr(err, 0, sizeof(err)) != NULL, "err is NUL-terminated", file, line);
	snprintf(what, sizeof(what), "elf_check rejects the %zu-byte image (err: %s)", len, err);
	_assert_true(!r, what, file, line);
	_assert_true(err[0] != 0, "err is set", file, line);
	const char *parts[2] = { part1, part2 };
	for (int k = 0; k < 2; k++) {
		if (!parts[k])
			continue;
		snprintf(what, sizeof(what), "err \"%s\" names \"%s\"", err, parts[k]);
		_assert_true(strstr(err, parts[k]) != NULL, what, file, line);
	}
}

#define OK(img, len, im) ok(__FILE__, __LINE__, img, len, im)
#define BAD(img, len, part) bad(__FILE__, __LINE__, img, len, part, NULL)
#define BAD2(img, len, p1, p2) bad(__FILE__, __LINE__, img, len, p1, p2)

/* Builds ph[] with `entry`, expects a rejection naming p1 (and p2), frees. */
#define BAD_PH(entry, ph, p1, p2) do { \
	size_t len_; \
	uint8_t *img_ = build(entry, ph, sizeof(ph) / sizeof(ph[0]), &len_); \
	bad(__FILE__, __LINE__, img_, len_, p1, p2); \
	free(img_); \
} while (0)

/* Builds ph[] with `entry`, expects acceptance into *im, frees. */
#define OK_PH(entry, ph, im) do { \
	size_t len_; \
	uint8_t *img_ = build(entry, ph, sizeof(ph) / sizeof(ph[0]), &len_); \
	ok(__FILE__, __LINE__, img_, len_, im); \
	free(img_); \
} while (0)

static void seg_is(const char *file, int line, const struct elf_segment *s,
		   uint64_t vaddr, uint64_t memsz, uint64_t offset, uint64_t filesz, int flags)
{
	_assert_int_equal(s->vaddr, vaddr, file, line);
	_assert_int_equal(s->memsz, memsz, file, line);
	_assert_int_equal(s->offset, offset, file, line);
	_assert_int_equal(s->filesz, filesz, file, line);
	_assert_int_equal(s->flags, flags, file, line);
}
#define SEG_IS(s, va, ms, off, fs, fl) seg_is(__FILE__, __LINE__, s, va, ms, off, fs, fl)

/* ------------------------------------------------------------ accepted images */

/* Text and data at USER_TEXT: every field of the description. */
static void test_valid(void **state)
{
	(void)state;
	size_t len;
	uint8_t *img = valid(&len);
	struct elf_image im;

	OK(img, len, &im);
	assert_int_equal(im.entry, ENTRY);
	assert_int_equal(im.end, DATA_VA + 0x1000);
	assert_int_equal(im.nseg, 2);
	SEG_IS(&im.seg[0], TEXT_VA, 0x40, 0x100, 0x40, VM_EXEC);
	SEG_IS(&im.seg[1], DATA_VA, 0x1000, 0x140, 0x20, VM_WRITE);
	free(img);

	/* Order does not matter: end is the highest segment's end, not the last one's. */
	const struct ph swapped[] = { valid_ph[1], valid_ph[0] };
	OK_PH(ENTRY, swapped, &im);
	assert_int_equal(im.nseg, 2);
	assert_int_equal(im.end, DATA_VA + 0x1000);
	SEG_IS(&im.seg[0], DATA_VA, 0x1000, 0x140, 0x20, VM_WRITE);
	SEG_IS(&im.seg[1], TEXT_VA, 0x40, 0x100, 0x40, VM_EXEC);
}

/* Only W and X of p_flags become VM_ flags; R alone gives 0 (W+X allowed here by an executable stack's mark). */
static void test_flags(void **state)
{
	(void)state;
	struct elf_image im;
	const struct ph ph[] = {
		{ PT_LOAD, PF_R | PF_X, 0x200, USER_TEXT, 0x10, 0x10 },
		{ PT_LOAD, PF_R, 0x210, USER_TEXT + 0x1000, 0x10, 0x10 },
		{ PT_LOAD, PF_R | PF_W | PF_X, 0x220, USER_TEXT + 0x2000, 0x10, 0x10 },
		{ PT_LOAD, PF_X, 0x230, USER_TEXT + 0x3000, 0x10, 0x10 },
		{ PT_LOAD, PF_W, 0x240, USER_TEXT + 0x4000, 0x10, 0x10 },
		{ PT_LOAD, 0, 0x250, USER_TEXT + 0x5000, 0x10, 0x10 },
		{ PT_GNU_STACK, PF_R | PF_W | PF_X, 0, 0, 0, 0 },
	};

	OK_PH(USER_TEXT, ph, &im);
	assert_true(im.wx);
	assert_int_equal(im.nseg, 6);
	assert_int_equal(im.seg[0].flags, VM_EXEC);
	assert_int_equal(im.seg[1].flags, 0);
	assert_int_equal(im.seg[2].flags, VM_WRITE | VM_EXEC);
	assert_int_equal(im.seg[3].flags, VM_EXEC);
	assert_int_equal(im.seg[4].flags, VM_WRITE);
	assert_int_equal(im.seg[5].flags, 0);
	assert_int_equal(im.end, USER_TEXT + 0x5010);
}

/*
 * W^X: a page writable and executable is refused, naming the segment(s),
 * unless PT_GNU_STACK has PF_X (ld -z execstack), in any order of headers.
 */
static void test_wx(void **state)
{
	(void)state;
	struct elf_image im;

	/* The valid program does not ask. */
	size_t len;
	uint8_t *img = valid(&len);
	OK(img, len, &im);
	assert_false(im.wx);
	free(img);

	/* One segment W+X: refused, with or without a non-executable stack's header. */
	const struct ph rwx[] = {
		{ PT_LOAD, PF_R | PF_X, 0x100, USER_TEXT, 0x10, 0x10 },
		{ PT_LOAD, PF_R | PF_W | PF_X, 0x110, USER_TEXT + 0x1000, 0x10, 0x10 },
	};
	BAD_PH(USER_TEXT, rwx, "segment 1 at 0x8000401000 is writable and executable", "(W^X; ld -z execstack allows it)");
	const struct ph rwx_nx[] = {
		{ PT_GNU_STACK, PF_R | PF_W, 0, 0, 0, 0 },
		{ PT_LOAD, PF_R | PF_W | PF_X, 0x100, USER_TEXT, 0x10, 0x10 },
	};
	BAD_PH(USER_TEXT, rwx_nx, "segment 1 at 0x8000400000 is writable and executable", NULL);
	/* W only or X only, but on one page: refused (the page would get both). */
	const struct ph shared[] = {
		{ PT_LOAD, PF_R | PF_X, 0x100, USER_TEXT, 0x40, 0x40 },
		{ PT_LOAD, PF_R | PF_W, 0x140, USER_TEXT + 0xff0, 0x10, 0x20 },
	};
	BAD_PH(USER_TEXT, shared, "segments 0 and 1 share page 0x8000400000: W and X", "execstack");
	/* Sharing a page with a read-only segment, or touching at a page boundary, is fine. */
	const struct ph fine[] = {
		{ PT_LOAD, PF_R | PF_X, 0x100, USER_TEXT, 0x1000, 0x1000 },
		{ PT_LOAD, PF_R, 0x100, USER_TEXT + 0x800, 0x10, 0x10 },
		{ PT_LOAD, PF_R | PF_W, 0x110, USER_TEXT + 0x1000, 0x10, 0x1000 },
	};
	OK_PH(USER_TEXT, fine, &im);
	assert_false(im.wx);

	/* Asked for: the mark before or after the segments. */
	const struct ph asked_after[] = {
		{ PT_LOAD, PF_R | PF_W | PF_X, 0x100, USER_TEXT, 0x10, 0x10 },
		{ PT_GNU_STACK, PF_R | PF_W | PF_X, 0, 0, 0, 0 },
	};
	OK_PH(USER_TEXT, asked_after, &im);
	assert_true(im.wx);
	assert_int_equal(im.seg[0].flags, VM_WRITE | VM_EXEC);
	const struct ph asked_before[] = {
		{ PT_GNU_STACK, PF_X, 0, 0, 0, 0 },
		{ PT_LOAD, PF_R | PF_X, 0x100, USER_TEXT, 0x40, 0x40 },
		{ PT_LOAD, PF_R | PF_W, 0x140, USER_TEXT + 0xff0, 0x10, 0x20 },
	};
	OK_PH(USER_TEXT, asked_before, &im);
	assert_true(im.wx);
}

/*
 * A launch shares one copy of the read-only segments (elf_image.shared_text)
 * unless the program asks for writable code or a read-only segment has a
 * page in common with a writable one (that page must be each task's own).
 */
static void test_shared_text(void **state)
{
	(void)state;
	struct elf_image im;
	size_t len;
	uint8_t *img = valid(&len);

	OK(img, len, &im);
	assert_true(im.shared_text);
	free(img);
	/* Text, read-only data on the text's last page, writable data from the next page on. */
	const struct ph apart[] = {
		{ PT_LOAD, PF_R | PF_X, 0x100, USER_TEXT, 0x800, 0x800 },
		{ PT_LOAD, PF_R, 0x100, USER_TEXT + 0x800, 0x10, 0x10 },
		{ PT_LOAD, PF_R | PF_W, 0x110, USER_TEXT + 0x1000, 0x10, 0x1000 },
	};
	OK_PH(USER_TEXT, apart, &im);
	assert_true(im.shared_text);
	/* Read-only data and writable data on one page: private copies. */
	const struct ph mixed[] = {
		{ PT_LOAD, PF_R | PF_X, 0x100, USER_TEXT, 0x1000, 0x1000 },
		{ PT_LOAD, PF_R, 0x100, USER_TEXT + 0x1000, 0x10, 0x10 },
		{ PT_LOAD, PF_R | PF_W, 0x110, USER_TEXT + 0x1ff0, 0x10, 0x1000 },
	};
	OK_PH(USER_TEXT, mixed, &im);
	assert_false(im.shared_text);
	/* An empty writable segment on a read-only page takes no page. */
	const struct ph empty[] = {
		{ PT_LOAD, PF_R | PF_X, 0x100, USER_TEXT, 0x1000, 0x1000 },
		{ PT_LOAD, PF_R | PF_W, 0x110, USER_TEXT + 0x800, 0, 0 },
	};
	OK_PH(USER_TEXT, empty, &im);
	assert_true(im.shared_text);
	/* Writable code asked for (ld -z execstack): every page private, even apart. */
	const struct ph asked[] = {
		{ PT_LOAD, PF_R | PF_X, 0x100, USER_TEXT, 0x10, 0x10 },
		{ PT_LOAD, PF_R | PF_W, 0x110, USER_TEXT + 0x1000, 0x10, 0x10 },
		{ PT_GNU_STACK, PF_R | PF_W | PF_X, 0, 0, 0, 0 },
	};
	OK_PH(USER_TEXT, asked, &im);
	assert_true(im.wx);
	assert_false(im.shared_text);
}

/* The limits themselves are accepted. */
static void test_boundaries(void **state)
{
	(void)state;
	struct elf_image im;

	/* A segment at USER_BASE, one ending exactly at the stack, entry at the first byte. */
	const struct ph edges[] = {
		{ PT_LOAD, PF_R | PF_X, 0x100, USER_BASE, 0x10, 0x10 },
		{ PT_LOAD, PF_R | PF_W, 0x110, STACK_BOTTOM - 0x2000, 0x10, 0x2000 },
	};
	OK_PH(USER_BASE, edges, &im);
	assert_int_equal(im.nseg, 2);
	assert_int_equal(im.entry, USER_BASE);
	assert_int_equal(im.end, STACK_BOTTOM);

	/* Entry at the last byte of the text. */
	OK_PH(USER_BASE + 0xf, edges, &im);
	assert_int_equal(im.entry, USER_BASE + 0xf);

	/* The last segment byte in memory is the last byte below the stack. */
	const struct ph top[] = { { PT_LOAD, PF_R | PF_X, 0x78, STACK_BOTTOM - 1, 1, 1 } };
	OK_PH(STACK_BOTTOM - 1, top, &im);
	assert_int_equal(im.end, STACK_BOTTOM);

	/* The whole region below the stack as one segment. */
	const struct ph all[] = { { PT_LOAD, PF_R | PF_X, 0x78, USER_BASE, 8, STACK_BOTTOM - USER_BASE } };
	OK_PH(USER_TEXT, all, &im);
	assert_int_equal(im.seg[0].memsz, STACK_BOTTOM - USER_BASE);
	assert_int_equal(im.end, STACK_BOTTOM);

	/* filesz == memsz; file bytes ending exactly at the end of the image (built that way). */
	const struct ph exact[] = { { PT_LOAD, PF_R | PF_X, 0x78, USER_TEXT, 0x88, 0x88 } };
	size_t len;
	uint8_t *img = build(USER_TEXT, exact, 1, &len);
	assert_int_equal(len, 0x100);
	OK(img, len, &im);
	SEG_IS(&im.seg[0], USER_TEXT, 0x88, 0x78, 0x88, VM_EXEC);
	free(img);

	/* A memory-only segment (filesz 0) whose offset is the end of the image. */
	const struct ph bss[] = {
		{ PT_LOAD, PF_R | PF_X, 0xb0, USER_TEXT, 0x10, 0x10 },
		{ PT_LOAD, PF_R | PF_W, 0xc0, USER_TEXT + 0x1000, 0, 0x3000 },
	};
	img = build(USER_TEXT, bss, 2, &len);
	assert_int_equal(len, 0xc0);
	OK(img, len, &im);
	SEG_IS(&im.seg[1], USER_TEXT + 0x1000, 0x3000, 0xc0, 0, VM_WRITE);
	assert_int_equal(im.end, USER_TEXT + 0x4000);
	free(img);

	/* Program headers at the very end of the file (after the segment data). */
	img = valid(&len);
	uint8_t *moved = malloc(len + 2 * PHDR);
	assert_non_null(moved);
	memcpy(moved, img, len);
	memcpy(moved + len, img + EHDR, 2 * PHDR);
	memset(moved + EHDR, 0xee, 2 * PHDR); /* the old place is garbage now */
	put64(moved + 32, len);
	OK(moved, len + 2 * PHDR, &im);
	assert_int_equal(im.nseg, 2);
	SEG_IS(&im.seg[1], DATA_VA, 0x1000, 0x140, 0x20, VM_WRITE);
	free(moved);
	free(img);

	/* Exactly 64 program headers and exactly ELF_MAX_SEGMENTS PT_LOAD among them. */
	struct ph many[64];
	for (unsigned i = 0; i < 64; i++)
		many[i] = (struct ph){ PT_NOTE, 0, 0x2000, 0, 0x10, 0x10 };
	for (unsigned i = 0; i < ELF_MAX_SEGMENTS; i++)
		many[i * 4] = (struct ph){ PT_LOAD, PF_R | PF_X, 0x1000 + i, USER_TEXT + i * 0x1000, 1, 0x1000 };
	OK_PH(USER_TEXT + 5 * 0x1000 + 7, many, &im);
	assert_int_equal(im.nseg, ELF_MAX_SEGMENTS);
	for (unsigned i = 0; i < ELF_MAX_SEGMENTS; i++)
		SEG_IS(&im.seg[i], USER_TEXT + i * 0x1000, 0x1000, 0x1000 + i, 1, VM_EXEC);
	assert_int_equal(im.end, USER_TEXT + ELF_MAX_SEGMENTS * 0x1000);
}

/* PT_NULL, PT_NOTE, PT_PHDR, PT_GNU_STACK with nonsense fields are skipped. */
static void test_skip_non_load(void **state)
{
	(void)state;
	struct elf_image im;
	const struct ph ph[] = {
		{ PT_PHDR, PF_R, 0x40, 0, 0x1000, 0x10 },               /* filesz > memsz, vaddr 0 */
		{ PT_LOAD, PF_R | PF_X, 0x200, TEXT_VA, 0x40, 0x40 },
		{ PT_NOTE, PF_R, UINT64_MAX - 4, 0x400000, 0x100, 0x100 }, /* offset past the end */
		{ PT_GNU_STACK, PF_R | PF_W, 0, 0, 0, 0 },
		{ PT_NULL, 0, 0, UINT64_MAX, UINT64_MAX, 1 },
		{ PT_LOAD, PF_R | PF_W, 0x240, DATA_VA, 0x20, 0x1000 },
		{ 0x70000000, PF_R, 0, USER_STACK_TOP, 0, UINT64_MAX }, /* processor-specific */
	};

	OK_PH(ENTRY, ph, &im);
	assert_int_equal(im.nseg, 2);
	assert_int_equal(im.entry, ENTRY);
	assert_int_equal(im.end, DATA_VA + 0x1000);
	SEG_IS(&im.seg[0], TEXT_VA, 0x40, 0x200, 0x40, VM_EXEC);
	SEG_IS(&im.seg[1], DATA_VA, 0x1000, 0x240, 0x20, VM_WRITE);

	/* A bad PT_LOAD after skipped headers is named by its program header index. */
	const struct ph third[] = {
		{ PT_GNU_STACK, PF_R | PF_W, 0, 0, 0, 0 },
		{ PT_LOAD, PF_R | PF_X, 0x200, TEXT_VA, 0x40, 0x40 },
		{ PT_LOAD, PF_R | PF_W, 0x240, 0x601000, 0x20, 0x1000 },
	};
	BAD_PH(ENTRY, third, "segment 2 at 0x601000", "outside the user region");
}

/* ------------------------------------------------------------ rejected headers */

static void test_reject_short(void **state)
{
	(void)state;
	size_t len;
	uint8_t *img = valid(&len);

	for (size_t n = 0; n < EHDR; n++) {
		uint8_t *p = malloc(n ? n : 1);
		assert_non_null(p);
		memcpy(p, img, n);
		char part[64];
		snprintf(part, sizeof(part), "image of %zu bytes is shorter than an ELF header", n);
		BAD(p, n, part);
		free(p);
	}
	free(img);
}

static void test_reject_ident(void **state)
{
	(void)state;
	size_t len;
	uint8_t *img = valid(&len);

	for (int i = 0; i < 4; i++) {
		uint8_t save = img[i];
		img[i] ^= 0x20;
		BAD(img, len, "bad magic");
		img[i] = save;
	}
	/* ELF32 and big-endian images, with the values named. */
	img[4] = 1;
	BAD2(img, len, "not a 64-bit little-endian ELF", "class 1, data 1");
	img[4] = 0;
	BAD2(img, len, "64-bit little-endian", "class 0");
	img[4] = 2;
	img[5] = 2;
	BAD2(img, len, "not a 64-bit little-endian ELF", "class 2, data 2");
	img[5] = 0;
	BAD2(img, len, "64-bit little-endian", "data 0");
	img[5] = 1;
	/* EI_VERSION 0, then e_version 0. */
	img[6] = 0;
	BAD(img, len, "unknown ELF version (EI_VERSION 0, e_version 1)");
	img[6] = 2;
	BAD(img, len, "unknown ELF version (EI_VERSION 2, e_version 1)");
	img[6] = 1;
	put32(img + 20, 0);
	BAD(img, len, "unknown ELF version (EI_VERSION 1, e_version 0)");
	put32(img + 20, 1);
	OK(img, len, &(struct elf_image){ 0 });
	free(img);
}

static void test_reject_type_machine(void **state)
{
	(void)state;
	size_t len;
	uint8_t *img = valid(&len);

	put16(img + 16, 3); /* ET_DYN: a PIE or shared library */
	BAD2(img, len, "e_type 3", "ET_EXEC");
	put16(img + 16, 1); /* ET_REL */
	BAD(img, len, "e_type 1");
	put16(img + 16, 4); /* ET_CORE */
	BAD(img, len, "e_type 4");
	put16(img + 16, 2);
	put16(img + 18, 3); /* EM_386 */
	BAD2(img, len, "e_machine 3", "x86-64");
	put16(img + 18, 183); /* EM_AARCH64 */
	BAD(img, len, "e_machine 183");
	put16(img + 18, 62);
	put16(img + 54, 32); /* an Elf32_Phdr size */
	BAD(img, len, "e_phentsize 32 is not 56");
	put16(img + 54, 64);
	BAD(img, len, "e_phentsize 64");
	put16(img + 54, 56);
	put16(img + 56, 0);
	BAD(img, len, "e_phnum 0 is not 1-64");
	put16(img + 56, 65);
	BAD(img, len, "e_phnum 65 is not 1-64");
	put16(img + 56, 0xffff); /* PN_XNUM: the real count would be in section 0 */
	BAD(img, len, "e_phnum 65535");
	put16(img + 56, 2);
	OK(img, len, &(struct elf_image){ 0 });
	free(img);
}

/* Program headers that do not fit in the image, including offsets that wrap. */
static void test_reject_phdr_bounds(void **state)
{
	(void)state;
	size_t len;
	uint8_t *img = valid(&len);
	char part[96];

	/* One program header whose last byte is one past the end. */
	put16(img + 56, 1);
	put64(img + 32, len - PHDR + 1);
	snprintf(part, sizeof(part), "program headers at %#zx run past the end of the %zu-byte image", len - PHDR + 1, len);
	BAD(img, len, part);
	/* ... and exactly at the end: that one (garbage, not PT_LOAD) fits; there is then no segment. */
	put64(img + 32, len - PHDR);
	BAD(img, len, "no PT_LOAD segment");
	/* Two headers, the second one short by a byte. */
	put16(img + 56, 2);
	put64(img + 32, len - 2 * PHDR + 1);
	BAD2(img, len, "program headers", "past the end");
	/* Offset at, past and far past the end. */
	put16(img + 56, 1);
	put64(img + 32, len);
	BAD2(img, len, "program headers", "past the end");
	put64(img + 32, len + 1);
	BAD2(img, len, "program headers", "past the end");
	put64(img + 32, UINT64_MAX);
	BAD2(img, len, "program headers at 0xffffffffffffffff", "past the end");
	/* phoff + phnum * 56 wraps to a small number: 2^64 - 112 + 2 * 56 == 0. */
	put16(img + 56, 2);
	put64(img + 32, 0 - (uint64_t)(2 * PHDR));
	BAD2(img, len, "program headers", "past the end");
	/* ... wrapping to exactly the valid offset 64. */
	put16(img + 56, 64);
	put64(img + 32, EHDR - 64 * (uint64_t)PHDR);
	BAD2(img, len, "program headers", "past the end");
	/* 64 headers would need 64 + 3584 bytes. */
	put64(img + 32, EHDR);
	BAD2(img, len, "program headers at 0x40", "352-byte image");
	free(img);
}

/* ------------------------------------------------------------ rejected segments */

static void test_reject_segment_file(void **state)
{
	(void)state;
	size_t len;
	uint8_t *img = valid(&len);

	/* p_filesz > p_memsz (data segment: 0x1001 file bytes in 0x1000). */
	put64(img + PH(1, 32), 0x1001);
	BAD(img, len, "segment 1: p_filesz is larger than p_memsz");
	put64(img + PH(1, 32), 0x20);
	/* p_offset + p_filesz one past the end. */
	put64(img + PH(1, 8), 0x141);
	BAD2(img, len, "segment 1: file bytes run past the end", "offset 0x141");
	/* p_filesz one too many. */
	put64(img + PH(1, 8), 0x140);
	put64(img + PH(1, 32), 0x21);
	BAD(img, len, "segment 1: file bytes run past the end");
	put64(img + PH(1, 32), 0x20);
	/* Offset past the end. */
	put64(img + PH(0, 8), len + 1);
	BAD(img, len, "segment 0: file bytes run past the end");
	/* Offset + filesz wraps around to a small number. */
	put64(img + PH(0, 8), UINT64_MAX - 0xf);
	BAD2(img, len, "segment 0: file bytes run past the end", "offset 0xfffffffffffffff0");
	put64(img + PH(0, 8), 0 - (uint64_t)0x40); /* + 0x40 == 0 */
	BAD(img, len, "segment 0: file bytes run past the end");
	/* Huge filesz (and memsz) at a small offset: offset + filesz wraps. */
	put64(img + PH(0, 8), 0x100);
	put64(img + PH(0, 32), UINT64_MAX - 0xff);
	put64(img + PH(0, 40), UINT64_MAX);
	BAD(img, len, "segment 0: file bytes run past the end");
	put64(img + PH(0, 32), 0x40);
	put64(img + PH(0, 40), 0x40);
	OK(img, len, &(struct elf_image){ 0 });
	free(img);
}

static void test_reject_vaddr(void **state)
{
	(void)state;
	/* A normal Linux static executable: linked at 0x400000. */
	const struct ph linux_ph[] = {
		{ PT_LOAD, PF_R, 0, 0x400000, 0x100, 0x100 },
		{ PT_LOAD, PF_R | PF_X, 0x100, 0x401000, 0x40, 0x40 },
	};
	BAD_PH(0x401000, linux_ph, "segment 0 at 0x400000 is outside the user region", "pmuos-cc");

	/* Just below USER_BASE, even when it reaches into the region. */
	const struct ph below[] = { { PT_LOAD, PF_R | PF_X, 0x78, USER_BASE - 0x1000, 8, 0x2000 } };
	BAD_PH(USER_BASE, below, "segment 0 at 0x7ffffff000", "outside the user region");
	const struct ph zero[] = { { PT_LOAD, PF_R | PF_X, 0x78, 0, 8, 8 } };
	BAD_PH(0, zero, "segment 0 at 0", "outside the user region");

	/* The text fine, the data at or above the stack. */
	const uint64_t high[] = {
		STACK_BOTTOM, STACK_BOTTOM + 0x1000, USER_STACK_TOP - 0x1000, USER_STACK_TOP,
		USER_END, 0xffff800000000000ULL, UINT64_MAX,
	};
	for (size_t k = 0; k < sizeof(high) / sizeof(high[0]); k++) {
		const struct ph ph[] = {
			valid_ph[0],
			{ PT_LOAD, PF_R | PF_W, 0x140, high[k], 0, 0 },
		};
		char part[64];
		snprintf(part, sizeof(part), "segment 1 at %#llx", (unsigned long long)high[k]);
		BAD_PH(ENTRY, ph, part, "outside the user region");
	}

	/* memsz reaching the stack by one byte, from far below and from just below it. */
	const struct ph reach[] = {
		valid_ph[0],
		{ PT_LOAD, PF_R | PF_W, 0x140, DATA_VA, 0x20, STACK_BOTTOM - DATA_VA + 1 },
	};
	BAD_PH(ENTRY, reach, "segment 1", "outside the user region");
	const struct ph reach2[] = {
		valid_ph[0],
		{ PT_LOAD, PF_R | PF_W, 0x140, STACK_BOTTOM - 1, 0, 2 },
	};
	BAD_PH(ENTRY, reach2, "segment 1", "outside the user region");

	/* vaddr + memsz wraps around to a small number (and to exactly USER_BASE). */
	const struct ph wrap[] = {
		valid_ph[0],
		{ PT_LOAD, PF_R | PF_W, 0x140, DATA_VA, 0x20, UINT64_MAX },
	};
	BAD_PH(ENTRY, wrap, "segment 1", "outside the user region");
	const struct ph wrap2[] = {
		valid_ph[0],
		{ PT_LOAD, PF_R | PF_W, 0x140, DATA_VA, 0x20, 0 - DATA_VA + USER_BASE },
	};
	BAD_PH(ENTRY, wrap2, "segment 1", "outside the user region");
}

static void test_reject_too_many_segments(void **state)
{
	(void)state;
	struct ph ph[ELF_MAX_SEGMENTS + 1];

	for (unsigned i = 0; i < ELF_MAX_SEGMENTS + 1; i++)
		ph[i] = (struct ph){ PT_LOAD, PF_R | PF_X, 0x800 + i, USER_TEXT + i * 0x1000, 1, 0x1000 };
	BAD_PH(USER_TEXT, ph, "more than 16 PT_LOAD segments", NULL);
}

static void test_reject_no_load(void **state)
{
	(void)state;
	const struct ph none[] = {
		{ PT_GNU_STACK, PF_R | PF_W, 0, 0, 0, 0 },
		{ PT_NOTE, PF_R, 0x100, USER_TEXT, 0x10, 0x10 },
		{ PT_NULL, 0, 0, 0, 0, 0 },
	};
	BAD_PH(USER_TEXT, none, "no PT_LOAD segment", NULL);
	const struct ph one[] = { { PT_NULL, 0, 0, 0, 0, 0 } };
	BAD_PH(USER_TEXT, one, "no PT_LOAD segment", NULL);
}

static void test_reject_entry(void **state)
{
	(void)state;
	size_t len;
	uint8_t *img = valid(&len);
	struct elf_image im;
	const uint64_t outside[] = {
		0, 0x401000, USER_BASE, TEXT_VA - 1, TEXT_VA + 0x40, /* one past the text */
		DATA_VA + 0x1000, STACK_BOTTOM, USER_STACK_TOP - 8, UINT64_MAX,
	};

	for (size_t k = 0; k < sizeof(outside) / sizeof(outside[0]); k++) {
		char part[96];
		put64(img + 24, outside[k]);
		snprintf(part, sizeof(part), "entry point %#llx is not in an executable segment",
			 (unsigned long long)outside[k]);
		BAD(img, len, part);
	}
	/* Inside the writable, non-executable data: at its start, in the file bytes, in the bss. */
	const uint64_t data[] = { DATA_VA, DATA_VA + 0x1f, DATA_VA + 0x20, DATA_VA + 0xfff };
	for (size_t k = 0; k < sizeof(data) / sizeof(data[0]); k++) {
		put64(img + 24, data[k]);
		BAD(img, len, "is not in an executable segment");
	}
	/* The data made executable (and not writable: W^X): now the entry may be there. */
	put32(img + PH(1, 4), PF_R | PF_X);
	OK(img, len, &im);
	assert_int_equal(im.entry, DATA_VA + 0xfff);
	free(img);

	/* A read-only segment (rodata) is not executable either. */
	const struct ph ro[] = {
		{ PT_LOAD, PF_R | PF_X, 0x100, TEXT_VA, 0x40, 0x40 },
		{ PT_LOAD, PF_R, 0x140, DATA_VA, 0x20, 0x20 },
	};
	BAD_PH(DATA_VA + 4, ro, "entry point 0x8000401004 is not in an executable segment", NULL);
	/* An executable segment of memsz 0 contains nothing. */
	const struct ph empty[] = { { PT_LOAD, PF_R | PF_X, 0x78, TEXT_VA, 0, 0 } };
	BAD_PH(TEXT_VA, empty, "is not in an executable segment", NULL);
}

/* ------------------------------------------------------------ robustness */

/* Every prefix of the valid image is rejected, without reading past its end. */
static void test_truncated(void **state)
{
	(void)state;
	size_t len;
	uint8_t *img = valid(&len);

	for (size_t n = 0; n < len; n++) {
		uint8_t *p = malloc(n ? n : 1);
		assert_non_null(p);
		memcpy(p, img, n);
		if (n < EHDR)
			BAD(p, n, "shorter than an ELF header");
		else if (n < EHDR + 2 * PHDR)
			BAD(p, n, "program headers");
		else if (n < 0x140)  /* cut inside the text segment's file bytes */
			BAD(p, n, "segment 0: file bytes run past the end");
		else                 /* cut inside the data segment's file bytes */
			BAD(p, n, "segment 1: file bytes run past the end");
		free(p);
	}
	/* Text data cut: move the text to the end of the file. */
	const struct ph late[] = {
		{ PT_LOAD, PF_R | PF_W, 0x100, DATA_VA, 0x20, 0x1000 },
		{ PT_LOAD, PF_R | PF_X, 0x120, TEXT_VA, 0x40, 0x40 },
	};
	free(img);
	img = build(ENTRY, late, 2, &len);
	assert_int_equal(len, 0x160);
	for (size_t n = 0x120; n < len; n++) {
		uint8_t *p = malloc(n);
		assert_non_null(p);
		memcpy(p, img, n);
		BAD(p, n, "segment 1: file bytes run past the end");
		free(p);
	}
	struct elf_image im;
	OK(img, len, &im);
	free(img);
}

/* The message is cut to errlen (NUL included), even errlen 0 with no buffer. */
static void test_err_buffer(void **state)
{
	(void)state;
	size_t len;
	uint8_t *img = valid(&len);
	struct elf_image im;

	put16(img + 16, 3);
	char *err = malloc(8);
	assert_non_null(err);
	assert_false(elf_check(img, len, &im, err, 8));
	assert_string_equal(err, "e_type ");
	assert_false(elf_check(img, len, &im, err, 1));
	assert_string_equal(err, "");
	free(err);
	assert_false(elf_check(img, len, &im, NULL, 0));
	/* The description is cleared on failure before anything else. */
	memset(&im, 0xa5, sizeof(im));
	assert_false(elf_check(img, 10, &im, NULL, 0));
	assert_int_equal(im.nseg, 0);
	assert_int_equal(im.entry, 0);
	assert_int_equal(im.end, 0);
	free(img);
}

/* ------------------------------------------------------------ real files */

/* Reads a whole file into an exact-size heap buffer; NULL if it cannot be opened. */
static uint8_t *read_file(const char *path, size_t *lenp)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, len = 0;
	uint8_t *buf = malloc(cap);
	assert_non_null(buf);
	size_t n;
	while ((n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	assert_false(ferror(f));
	fclose(f);
	uint8_t *exact = malloc(len ? len : 1);
	assert_non_null(exact);
	memcpy(exact, buf, len);
	free(buf);
	*lenp = len;
	return exact;
}

/* build/user/hello.elf (make user), linked by pmuos-cc, is a pmuos program. */
static void test_hello_elf(void **state)
{
	(void)state;
	const char *path = "build/user/hello.elf";
	size_t len;
	uint8_t *img = read_file(path, &len);

	if (!img) {
		print_message("# %s not found (run `make user` from the top): skipped\n", path);
		skip();
	}
	struct elf_image im;
	OK(img, len, &im);

	/* The description agrees with the file's own program headers. */
	uint64_t phoff = get64(img + 32), end = 0;
	unsigned phnum = get16(img + 56), nload = 0;
	assert_int_equal(im.entry, get64(img + 24));
	for (unsigned i = 0; i < phnum; i++) {
		const uint8_t *p = img + phoff + i * PHDR;
		if (get32(p) != PT_LOAD)
			continue;
		assert_true(nload < im.nseg);
		const struct elf_segment *s = &im.seg[nload++];
		uint32_t fl = get32(p + 4);
		SEG_IS(s, get64(p + 16), get64(p + 40), get64(p + 8), get64(p + 32),
		       (fl & PF_W ? VM_WRITE : 0) | (fl & PF_X ? VM_EXEC : 0));
		assert_true(s->vaddr >= USER_TEXT);
		if (s->vaddr + s->memsz > end)
			end = s->vaddr + s->memsz;
	}
	assert_int_equal(im.nseg, nload);
	assert_true(nload >= 2);
	assert_int_equal(im.end, end);
	assert_true(im.entry >= USER_TEXT && im.entry < end);

	/* Its program headers cut short: rejected. */
	BAD2(img, phoff + phnum * PHDR - 1, "program headers", "past the end");
	free(img);
}

/* The test binary itself, a Linux executable, is refused. */
static void test_host_exe(void **state)
{
	(void)state;
	size_t len;
	uint8_t *img = read_file("/proc/self/exe", &len);
	assert_non_null(img);
	assert_true(len > EHDR);
	assert_memory_equal(img, "\177ELF\2\1", 6);

	uint16_t type = get16(img + 16);
	if (type == 3)
		BAD2(img, len, "e_type 3", "ET_EXEC"); /* PIE */
	else
		BAD(img, len, "outside the user region"); /* linked at 0x400000 */

	/* Even passed off as ET_EXEC, its segments are below the user region. */
	put16(img + 16, 2);
	BAD(img, len, "outside the user region");
	free(img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_flags),
		cmocka_unit_test(test_wx),
		cmocka_unit_test(test_shared_text),
		cmocka_unit_test(test_boundaries),
		cmocka_unit_test(test_skip_non_load),
		cmocka_unit_test(test_reject_short),
		cmocka_unit_test(test_reject_ident),
		cmocka_unit_test(test_reject_type_machine),
		cmocka_unit_test(test_reject_phdr_bounds),
		cmocka_unit_test(test_reject_segment_file),
		cmocka_unit_test(test_reject_vaddr),
		cmocka_unit_test(test_reject_too_many_segments),
		cmocka_unit_test(test_reject_no_load),
		cmocka_unit_test(test_reject_entry),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_err_buffer),
		cmocka_unit_test(test_hello_elf),
		cmocka_unit_test(test_host_exe),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
