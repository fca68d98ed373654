/*
 * boot/linux/bootparams.c on the host: boot_params images laid out as Linux
 * Documentation/x86/zero-page.rst and boot.rst say, converted to boot_info.
 * boot_params is handed over in a heap buffer of exactly 4096 bytes and the
 * command line in buffers of exactly their size, so AddressSanitizer stops
 * the binary on any read past them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "boot/linux/bootparams.h"
#include "tests/unit/physmem.h"

/* ------------------------------------------------------------ helpers */

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)v); put16(p + 2, (uint16_t)(v >> 16)); }
static void put64(uint8_t *p, uint64_t v) { put32(p, (uint32_t)v); put32(p + 4, (uint32_t)(v >> 32)); }

/* A zero page as QEMU's Linux loader leaves it for a protocol 2.12 image (QEMU x86_load_linux). */
static uint8_t *new_bp(void)
{
	uint8_t *bp = calloc(1, BP_SIZE);
	memcpy(bp + BP_HEADER, "HdrS", 4);
	put16(bp + BP_VERSION, 0x020c);
	bp[BP_TYPE_OF_LOADER] = 0xb0;
	bp[BP_LOADFLAGS] = 0x81;
	return bp;
}

static void add_e820(uint8_t *bp, uint64_t addr, uint64_t size, uint32_t type)
{
	uint8_t *e = bp + BP_E820_TABLE + bp[BP_E820_ENTRIES]++ * BP_E820_ENTRY;
	put64(e, addr);
	put64(e + 8, size);
	put32(e + 16, type);
}

/* SeaBIOS's E820 map for QEMU q35 with 512 MiB (read by pmuos's `mem` over Multiboot). */
static const struct boot_mmap_entry seabios_map[] = {
	{ 0x0, 0x9fc00, 1, 0 },
	{ 0x9fc00, 0x400, 2, 0 },
	{ 0xf0000, 0x10000, 2, 0 },
	{ 0x100000, 0x1fee0000, 1, 0 },
	{ 0x1ffe0000, 0x20000, 2, 0 },
	{ 0xb0000000, 0x10000000, 2, 0 },
	{ 0xfed1c000, 0x4000, 2, 0 },
	{ 0xfffc0000, 0x40000, 2, 0 },
};

static int convert(uint8_t *bp, struct physmem *m, struct boot_info *bi, struct bp_report *rep)
{
	return bootparams_to_boot_info(bp, physmem_read, m, bi, rep);
}

static void assert_map(const struct boot_info *bi, const struct boot_mmap_entry *want, uint32_t n)
{
	assert_int_equal(bi->mmap_count, n);
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(bi->mmap[i].base, want[i].base);
		assert_int_equal(bi->mmap[i].length, want[i].length);
		assert_int_equal(bi->mmap[i].type, want[i].type);
	}
}

/* ------------------------------------------------------------ whole conversions */

/* QEMU's Linux loader: command line at 0x20000, loader 0xB0, SeaBIOS's map. */
static void test_qemu_boot_params(void **state)
{
	(void)state;
	uint8_t *bp = new_bp();
	struct boot_info *bi = malloc(sizeof(*bi));
	struct bp_report rep;
	struct physmem m = { 0 };
	static const char line[] = "console=ttyS0 pmuos.mbox=0x1000,4096";

	for (size_t i = 0; i < 8; i++)
		add_e820(bp, seabios_map[i].base, seabios_map[i].length, seabios_map[i].type);
	put32(bp + BP_CMD_LINE_PTR, 0x20000);
	physmem_add(&m, 0x20000, line, sizeof(line));

	assert_int_equal(convert(bp, &m, bi, &rep), 0);
	assert_null(rep.error);
	assert_int_equal(bi->magic, BOOT_INFO_MAGIC);
	assert_int_equal(bi->boot_path, BOOT_PATH_LINUX);
	assert_int_equal(bi->rsdp, 0);
	assert_int_equal(bi->module_count, 0);
	assert_string_equal(bi->loader, "QEMU");
	assert_string_equal(bi->cmdline, line);
	assert_int_equal(rep.cmdline_addr, 0x20000);
	assert_false(rep.cmdline_truncated);
	assert_false(rep.cmdline_unreadable);
	assert_int_equal(rep.e820_given, 8);
	assert_int_equal(rep.e820_used, 8);
	assert_false(rep.e820_overlap);
	assert_map(bi, seabios_map, 8);
	physmem_free(&m);
	free(bi);
	free(bp);
}

/* No "HdrS" at 0x202: not boot_params at all (e.g. a Multiboot info block). */
static void test_bad_signature(void **state)
{
	(void)state;
	struct boot_info *bi = malloc(sizeof(*bi));
	struct bp_report rep;
	struct physmem m = { 0 };
	static const char *const bad[] = { "HdrT", "hdrs", "SrdH", "\0\0\0\0" };

	for (size_t i = 0; i < 4; i++) {
		uint8_t *bp = new_bp();
		add_e820(bp, 0, 0x9fc00, 1);
		memcpy(bp + BP_HEADER, bad[i], 4);
		assert_int_equal(convert(bp, &m, bi, &rep), -1);
		assert_non_null(strstr(rep.error, "HdrS"));
		free(bp);
	}
	/* The signature one byte off its place does not count either. */
	uint8_t *bp = new_bp();
	add_e820(bp, 0, 0x9fc00, 1);
	memset(bp + BP_HEADER, 0, 4);
	memcpy(bp + BP_HEADER + 1, "HdrS", 4);
	assert_int_equal(convert(bp, &m, bi, &rep), -1);
	free(bp);
	free(bi);
}

/* ------------------------------------------------------------ e820 */

/* The same map in reverse order comes out sorted. */
static void test_e820_unsorted(void **state)
{
	(void)state;
	uint8_t *bp = new_bp();
	struct boot_info *bi = malloc(sizeof(*bi));
	struct bp_report rep;

	for (int i = 7; i >= 0; i--)
		add_e820(bp, seabios_map[i].base, seabios_map[i].length, seabios_map[i].type);
	assert_int_equal(convert(bp, NULL, bi, &rep), 0);
	assert_false(rep.e820_overlap);
	assert_map(bi, seabios_map, 8);
	free(bi);
	free(bp);
}

/* Overlaps: the higher type wins, so no usable byte covers a reserved one. */
static void test_e820_overlap(void **state)
{
	(void)state;
	uint8_t *bp = new_bp();
	struct boot_info *bi = malloc(sizeof(*bi));
	struct bp_report rep;
	static const struct boot_mmap_entry want[] = {
		{ 0x0, 0x9f000, 1, 0 },
		{ 0x9f000, 0x61000, 2, 0 },  /* reserved: over usable's end and past it */
		{ 0x100000, 0x100000, 1, 0 },
		{ 0x200000, 0x2000, 4, 0 },  /* ACPI NVS over usable, reserved and usable again */
		{ 0x202000, 0xfe000, 1, 0 },
	};

	add_e820(bp, 0x0, 0xa0000, 1);
	add_e820(bp, 0x9f000, 0x61000, 2);
	add_e820(bp, 0x100000, 0x200000, 1);
	add_e820(bp, 0x201000, 0x1000, 2);
	add_e820(bp, 0x200000, 0x2000, 4);
	add_e820(bp, 0x201000, 0x1000, 1);
	assert_int_equal(convert(bp, NULL, bi, &rep), 0);
	assert_true(rep.e820_overlap);
	assert_map(bi, want, sizeof(want) / sizeof(want[0]));
	free(bi);
	free(bp);
}

/* Touching entries of one type merge (not an overlap); duplicates are one entry. */
static void test_e820_merge_and_duplicates(void **state)
{
	(void)state;
	uint8_t *bp = new_bp();
	struct boot_info *bi = malloc(sizeof(*bi));
	struct bp_report rep;
	static const struct boot_mmap_entry want[] = { { 0x1000, 0x3000, 1, 0 }, { 0x4000, 0x1000, 2, 0 } };

	add_e820(bp, 0x1000, 0x1000, 1);
	add_e820(bp, 0x2000, 0x2000, 1);
	add_e820(bp, 0x4000, 0x1000, 2);
	assert_int_equal(convert(bp, NULL, bi, &rep), 0);
	assert_false(rep.e820_overlap);
	assert_map(bi, want, 2);

	add_e820(bp, 0x4000, 0x1000, 2); /* the same range twice */
	assert_int_equal(convert(bp, NULL, bi, &rep), 0);
	assert_true(rep.e820_overlap);
	assert_map(bi, want, 2);
	free(bi);
	free(bp);
}

/* Types outside 1..5 (0, 7 persistent memory, 12, 0xF0000000) count as reserved; size 0 is no entry. */
static void test_e820_types_and_empty_entries(void **state)
{
	(void)state;
	uint8_t *bp = new_bp();
	struct boot_info *bi = malloc(sizeof(*bi));
	struct bp_report rep;
	static const struct boot_mmap_entry want[] = {
		{ 0x0, 0x1000, 2, 0 }, { 0x1000, 0x1000, 3, 0 }, { 0x2000, 0x1000, 4, 0 },
		{ 0x3000, 0x1000, 5, 0 }, { 0x4000, 0x3000, 2, 0 },
	};

	add_e820(bp, 0x0, 0x1000, 0);
	add_e820(bp, 0x1000, 0x1000, 3);
	add_e820(bp, 0x2000, 0x1000, 4);
	add_e820(bp, 0x3000, 0x1000, 5);
	add_e820(bp, 0x4000, 0x1000, 7);
	add_e820(bp, 0x5000, 0x1000, 12);
	add_e820(bp, 0x6000, 0x1000, 0xf0000000);
	add_e820(bp, 0x8000, 0, 1);
	assert_int_equal(convert(bp, NULL, bi, &rep), 0);
	assert_map(bi, want, 5);
	free(bi);
	free(bp);
}

/* An entry whose size runs past 2^64 ends at 2^64. */
static void test_e820_top_of_address_space(void **state)
{
	(void)state;
	uint8_t *bp = new_bp();
	struct boot_info *bi = malloc(sizeof(*bi));
	struct bp_report rep;

	add_e820(bp, 0xfffffffffffff000ULL, 0x2000, 2);
	add_e820(bp, 0x100000, 0x100000, 1);
	assert_int_equal(convert(bp, NULL, bi, &rep), 0);
	assert_int_equal(bi->mmap_count, 2);
	assert_int_equal(bi->mmap[0].base, 0x100000);
	assert_int_equal(bi->mmap[1].base, 0xfffffffffffff000ULL);
	assert_int_equal(bi->mmap[1].length, 0x1000);
	assert_int_equal(bi->mmap[1].type, 2);
	free(bi);
	free(bp);
}

/* e820_entries above the table's 128: 128 are read, the bytes after the table are not. */
static void test_e820_too_many(void **state)
{
	(void)state;
	uint8_t *bp = new_bp();
	struct boot_info *bi = malloc(sizeof(*bi));
	struct bp_report rep;

	for (uint64_t i = 0; i < BP_E820_MAX; i++)
		add_e820(bp, i * 0x2000, 0x1000, 1 + (uint32_t)(i % 2)); /* gaps: nothing merges */
	/* Entry 128 would lie over eddbuf (zero-page.rst 0xD00): a usable range that must not appear. */
	add_e820(bp, 0x40000000, 0x1000, 1);
	bp[BP_E820_ENTRIES] = 200;
	assert_int_equal(convert(bp, NULL, bi, &rep), 0);
	assert_int_equal(rep.e820_given, 200);
	assert_int_equal(rep.e820_used, BP_E820_MAX);
	assert_int_equal(bi->mmap_count, BP_E820_MAX);
	for (uint32_t i = 0; i < bi->mmap_count; i++) {
		assert_int_equal(bi->mmap[i].base, i * 0x2000);
		assert_int_equal(bi->mmap[i].type, 1 + i % 2);
	}
	free(bi);
	free(bp);
}

/* The most pieces 128 entries can make, 255 (one usable range, 127 reserved pages in it): all kept. */
static void test_e820_most_pieces(void **state)
{
	(void)state;
	uint8_t *bp = new_bp();
	struct boot_info *bi = malloc(sizeof(*bi));
	struct bp_report rep;

	add_e820(bp, 0, 255 * 0x1000, 1);
	for (uint64_t i = 0; i < BP_E820_MAX - 1; i++)
		add_e820(bp, (2 * i + 1) * 0x1000, 0x1000, 2);
	assert_int_equal(convert(bp, NULL, bi, &rep), 0);
	assert_true(rep.e820_overlap);
	assert_int_equal(bi->mmap_count, 2 * BP_E820_MAX - 1);
	for (uint32_t i = 0; i < bi->mmap_count; i++) {
		assert_int_equal(bi->mmap[i].base, i * 0x1000);
		assert_int_equal(bi->mmap[i].length, 0x1000);
		assert_int_equal(bi->mmap[i].type, i % 2 ? 2 : 1);
	}
	free(bi);
	free(bp);
}

/* A map with no entry, or only empty ones, is no map: the kernel cannot run. */
static void test_e820_none(void **state)
{
	(void)state;
	uint8_t *bp = new_bp();
	struct boot_info *bi = malloc(sizeof(*bi));
	struct bp_report rep;

	assert_int_equal(convert(bp, NULL, bi, &rep), -1);
	assert_non_null(strstr(rep.error, "memory map"));
	add_e820(bp, 0x100000, 0, 1);
	assert_int_equal(convert(bp, NULL, bi, &rep), -1);
	assert_non_null(strstr(rep.error, "memory map"));
	free(bi);
	free(bp);
}

/* ------------------------------------------------------------ command line */

static uint8_t *bp_with_map(void)
{
	uint8_t *bp = new_bp();
	add_e820(bp, 0x100000, 0x7ff00000, 1);
	return bp;
}

/* cmd_line_ptr 0 (boot.rst: no 2.02+ command line), or a protocol before 2.02: no command line. */
static void test_cmdline_missing(void **state)
{
	(void)state;
	uint8_t *bp = bp_with_map();
	struct boot_info *bi = malloc(sizeof(*bi));
	struct bp_report rep;
	struct physmem m = { 0 };
	static const char line[] = "never read";

	physmem_add(&m, 0x20000, line, sizeof(line));
	assert_int_equal(convert(bp, &m, bi, &rep), 0);
	assert_string_equal(bi->cmdline, "");
	assert_int_equal(rep.cmdline_addr, 0);
	assert_false(rep.cmdline_unreadable);

	put32(bp + BP_CMD_LINE_PTR, 0x20000);
	put16(bp + BP_VERSION, 0x0201);
	assert_int_equal(convert(bp, &m, bi, &rep), 0);
	assert_string_equal(bi->cmdline, "");
	put16(bp + BP_VERSION, 0x0202);
	assert_int_equal(convert(bp, &m, bi, &rep), 0);
	assert_string_equal(bi->cmdline, line);
	physmem_free(&m);
	free(bi);
	free(bp);
}

/* Intel's KNC loaders put it right after the image at the download address (64 MiB). */
static void test_cmdline_after_image(void **state)
{
	(void)state;
	uint8_t *bp = bp_with_map();
	struct boot_info *bi = malloc(sizeof(*bi));
	struct bp_report rep;
	struct physmem m = { 0 };
	static const char line[] = " mem=8192M pmuos.mbox=0x7000000,0x200000";
	uint64_t at = 0x4000000 + 2679168; /* download address + image size: not aligned */

	physmem_add(&m, at, line, sizeof(line));
	put32(bp + BP_CMD_LINE_PTR, (uint32_t)at);
	assert_int_equal(convert(bp, &m, bi, &rep), 0);
	assert_string_equal(bi->cmdline, line);
	assert_int_equal(rep.cmdline_addr, at);
	physmem_free(&m);
	free(bi);
	free(bp);
}

/* ext_cmd_line_ptr gives bits 63:32: a line above 4 GiB is read when read() reaches it. */
static void test_cmdline_above_4g(void **state)
{
	(void)state;
	uint8_t *bp = bp_with_map();
	struct boot_info *bi = malloc(sizeof(*bi));
	struct bp_report rep;
	struct physmem m = { 0 };
	static const char low[] = "the low one", high[] = "the high one";

	physmem_add(&m, 0x00000100, low, sizeof(low));
	physmem_add(&m, 0x100000100ULL, high, sizeof(high));
	put32(bp + BP_CMD_LINE_PTR, 0x100);
	put32(bp + BP_EXT_CMD_LINE_PTR, 1);
	assert_int_equal(convert(bp, &m, bi, &rep), 0);
	assert_int_equal(rep.cmdline_addr, 0x100000100ULL);
	assert_string_equal(bi->cmdline, high);

	/* Where read() cannot reach (the kernel reads below 4 GiB only): empty, and said. */
	physmem_free(&m);
	physmem_add(&m, 0x00000100, low, sizeof(low));
	assert_int_equal(convert(bp, &m, bi, &rep), 0);
	assert_string_equal(bi->cmdline, "");
	assert_true(rep.cmdline_unreadable);
	physmem_free(&m);
	free(bi);
	free(bp);
}

/* cmdline_size is 255: a 255-character line arrives whole, a 256-character one is cut to 255. */
static void test_cmdline_length_limit(void **state)
{
	(void)state;
	uint8_t *bp = bp_with_map();
	struct boot_info *bi = malloc(sizeof(*bi));
	struct bp_report rep;
	struct physmem m = { 0 };
	char line[BP_PMUOS_CMDLINE_SIZE + 3];

	put32(bp + BP_CMD_LINE_PTR, 0x90000);
	memset(line, 'a', sizeof(line));
	line[BP_PMUOS_CMDLINE_SIZE - 1] = 'z';
	line[BP_PMUOS_CMDLINE_SIZE] = 0;
	physmem_add(&m, 0x90000, line, BP_PMUOS_CMDLINE_SIZE + 1);
	assert_int_equal(convert(bp, &m, bi, &rep), 0);
	assert_int_equal(strlen(bi->cmdline), BP_PMUOS_CMDLINE_SIZE);
	assert_int_equal(bi->cmdline[BP_PMUOS_CMDLINE_SIZE - 1], 'z');
	assert_false(rep.cmdline_truncated);
	physmem_free(&m);

	line[BP_PMUOS_CMDLINE_SIZE] = 'y';
	line[BP_PMUOS_CMDLINE_SIZE + 1] = 'x';
	line[BP_PMUOS_CMDLINE_SIZE + 2] = 0;
	physmem_add(&m, 0x90000, line, sizeof(line));
	assert_int_equal(convert(bp, &m, bi, &rep), 0);
	assert_int_equal(strlen(bi->cmdline), BP_PMUOS_CMDLINE_SIZE);
	assert_int_equal(bi->cmdline[BP_PMUOS_CMDLINE_SIZE - 1], 'z');
	assert_true(rep.cmdline_truncated);
	assert_false(rep.cmdline_unreadable);
	physmem_free(&m);
	free(bi);
	free(bp);
}

/* A line that runs into unreadable memory before its NUL: what was read, and said. */
static void test_cmdline_unterminated(void **state)
{
	(void)state;
	uint8_t *bp = bp_with_map();
	struct boot_info *bi = malloc(sizeof(*bi));
	struct bp_report rep;
	struct physmem m = { 0 };

	physmem_add(&m, 0x9fff0, "0123456789abcdef", 16); /* no NUL, and nothing readable after it */
	put32(bp + BP_CMD_LINE_PTR, 0x9fff8);
	assert_int_equal(convert(bp, &m, bi, &rep), 0);
	assert_string_equal(bi->cmdline, "89abcdef");
	assert_true(rep.cmdline_unreadable);
	assert_false(rep.cmdline_truncated);

	put32(bp + BP_CMD_LINE_PTR, 0xa0000); /* not readable at all */
	assert_int_equal(convert(bp, &m, bi, &rep), 0);
	assert_string_equal(bi->cmdline, "");
	assert_true(rep.cmdline_unreadable);
	physmem_free(&m);
	free(bi);
	free(bp);
}

/* ------------------------------------------------------------ loader name */

/* type_of_loader 0xTV, T = 0xE: ID = ext_loader_type + 0x10 (boot.rst's table). */
static void test_loader_names(void **state)
{
	(void)state;
	static const struct {
		uint8_t type, ext;
		const char *name;
	} cases[] = {
		{ 0xb0, 0x00, "QEMU" },
		{ 0x72, 0x00, "GRUB" },
		{ 0x00, 0x00, "LILO" },
		{ 0xd1, 0x00, "kexec-tools" },
		{ 0xe0, 0x01, "Minimal Linux Bootloader" },
		{ 0xe3, 0x02, "OVMF UEFI virtualization stack" },
		{ 0xe4, 0x05, "loader ID 0x15" },
		{ 0xe0, 0xff, "loader ID 0x10f" },
		{ 0x60, 0x00, "loader ID 0x06" },
		{ 0xff, 0x00, "undefined loader (0xFF)" },
		{ 0xf0, 0x00, "loader ID 0x0f" },
	};
	struct boot_info *bi = malloc(sizeof(*bi));
	struct bp_report rep;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t *bp = bp_with_map();
		bp[BP_TYPE_OF_LOADER] = cases[i].type;
		bp[BP_EXT_LOADER_TYPE] = cases[i].ext;
		assert_int_equal(convert(bp, NULL, bi, &rep), 0);
		assert_string_equal(bi->loader, cases[i].name);
		free(bp);
	}
	free(bi);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_qemu_boot_params),
		cmocka_unit_test(test_bad_signature),
		cmocka_unit_test(test_e820_unsorted),
		cmocka_unit_test(test_e820_overlap),
		cmocka_unit_test(test_e820_merge_and_duplicates),
		cmocka_unit_test(test_e820_types_and_empty_entries),
		cmocka_unit_test(test_e820_top_of_address_space),
		cmocka_unit_test(test_e820_too_many),
		cmocka_unit_test(test_e820_most_pieces),
		cmocka_unit_test(test_e820_none),
		cmocka_unit_test(test_cmdline_missing),
		cmocka_unit_test(test_cmdline_after_image),
		cmocka_unit_test(test_cmdline_above_4g),
		cmocka_unit_test(test_cmdline_length_limit),
		cmocka_unit_test(test_cmdline_unterminated),
		cmocka_unit_test(test_loader_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
