/*
 * boot/mmap.c on the host: `pmuos.mbox=BASE,SIZE` takes the mailbox's place
 * (and `pmuos.image=BASE,SIZE` the host's boot image) out of the usable RAM
 * of a boot memory map, or names what is wrong with
 * it and leaves the map alone; the AP start-up page comes from the map's
 * RAM below 1 MiB.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "boot/mmap.h"

#define MiB (1ULL << 20)
static const struct boot_range image = { 0x100000, 0x200000 }; /* the kernel at 1-3 MiB */

/* SeaBIOS's map for 512 MiB (as `mem` shows it) and a module at 16 MiB. */
static void qemu_map(struct boot_info *bi, const char *cmdline)
{
	memset(bi, 0, sizeof(*bi));
	bi->mmap[0] = (struct boot_mmap_entry){ 0, 0x9fc00, BOOT_MEM_USABLE, 0 };
	bi->mmap[1] = (struct boot_mmap_entry){ 0x9fc00, 0x400, BOOT_MEM_RESERVED, 0 };
	bi->mmap[2] = (struct boot_mmap_entry){ 0xf0000, 0x10000, BOOT_MEM_RESERVED, 0 };
	bi->mmap[3] = (struct boot_mmap_entry){ 0x100000, 512 * MiB - 0x100000 - 0x20000, BOOT_MEM_USABLE, 0 };
	bi->mmap[4] = (struct boot_mmap_entry){ 512 * MiB - 0x20000, 0x20000, BOOT_MEM_RESERVED, 0 };
	bi->mmap_count = 5;
	bi->module_count = 1;
	bi->modules[0] = (struct boot_module){ 16 * MiB, 100000, "calib.elf" };
	snprintf(bi->cmdline, sizeof(bi->cmdline), "%s", cmdline);
}

static void test_absent(void **state __attribute__((unused)))
{
	struct boot_info bi, before;
	struct boot_range r = { 1, 1 };

	qemu_map(&bi, "acpi=off pmuos.mboxx=1");
	before = bi;
	assert_null(boot_take_host_memory(&bi, image, &r));
	assert_int_equal(r.base, 0);
	assert_int_equal(r.size, 0);
	assert_memory_equal(&bi, &before, sizeof(bi));
}

static void test_split_in_three(void **state __attribute__((unused)))
{
	struct boot_info bi;
	struct boot_range r;

	qemu_map(&bi, "x=1 pmuos.mbox=0x10000000,0x2000000");
	assert_null(boot_take_host_memory(&bi, image, &r));
	assert_int_equal(r.base, 0x10000000);
	assert_int_equal(r.size, 32 * MiB);
	assert_int_equal(bi.mmap_count, 7);
	assert_int_equal(bi.mmap[3].base, 0x100000);
	assert_int_equal(bi.mmap[3].length, 0x10000000 - 0x100000);
	assert_int_equal(bi.mmap[3].type, BOOT_MEM_USABLE);
	assert_int_equal(bi.mmap[4].base, 0x10000000);
	assert_int_equal(bi.mmap[4].length, 32 * MiB);
	assert_int_equal(bi.mmap[4].type, BOOT_MEM_HOST);
	assert_int_equal(bi.mmap[5].base, 0x12000000);
	assert_int_equal(bi.mmap[5].length, 512 * MiB - 0x20000 - 0x12000000);
	assert_int_equal(bi.mmap[5].type, BOOT_MEM_USABLE);
	assert_int_equal(bi.mmap[6].base, 512 * MiB - 0x20000); /* what followed moved up */
	assert_int_equal(bi.mmap[6].type, BOOT_MEM_RESERVED);
}

static void test_at_the_ends_of_a_range(void **state __attribute__((unused)))
{
	struct boot_info bi;
	struct boot_range r;

	/* Ends where the usable range ends: two entries, nothing after. */
	qemu_map(&bi, "pmuos.mbox=0x1ce00000,16777216");
	bi.mmap[3].length = 0x1de00000 - 0x100000;
	assert_null(boot_take_host_memory(&bi, image, &r));
	assert_int_equal(bi.mmap_count, 6);
	assert_int_equal(bi.mmap[4].base, 0x1ce00000);
	assert_int_equal(bi.mmap[4].type, BOOT_MEM_HOST);
	assert_int_equal(bi.mmap[5].type, BOOT_MEM_RESERVED);
	/* Starts where it starts: the low range, nothing before. */
	qemu_map(&bi, "pmuos.mbox=0x0,0x100000");
	assert_string_equal(boot_take_host_memory(&bi, image, &r),
			    "the range is not inside one usable RAM range of the memory map"); /* 0x9FC00 < 1 MiB */
	bi.mmap[0].length = 0x100000;
	bi.mmap[3].base = 0x100000; /* keep the rest apart */
	assert_null(boot_take_host_memory(&bi, (struct boot_range){ 0x200000, 0x1000 }, &r));
	assert_int_equal(bi.mmap[0].type, BOOT_MEM_HOST);
	assert_int_equal(bi.mmap[0].length, 0x100000);
	assert_int_equal(bi.mmap_count, 5);
}

/* Each bad value is named, and the map is left as it was. */
static void bad(const char *cmdline, const char *why)
{
	struct boot_info bi, before;
	struct boot_range r = { 1, 1 };

	qemu_map(&bi, cmdline);
	before = bi;
	const char *got = boot_take_host_memory(&bi, image, &r);
	assert_non_null(got);
	assert_string_equal(got, why);
	assert_memory_equal(&bi, &before, sizeof(bi));
}

static void test_bad_values(void **state __attribute__((unused)))
{
	bad("pmuos.mbox", "not BASE,SIZE (two numbers, decimal or 0x hex)");
	bad("pmuos.mbox=0x10000000", "not BASE,SIZE (two numbers, decimal or 0x hex)");
	bad("pmuos.mbox=0x10000000,", "not BASE,SIZE (two numbers, decimal or 0x hex)");
	bad("pmuos.mbox=0x1000000g,0x100000", "not BASE,SIZE (two numbers, decimal or 0x hex)");
	bad("pmuos.mbox=0x10000000,0x100000,1", "not BASE,SIZE (two numbers, decimal or 0x hex)");
	bad("pmuos.mbox=0x10000000,0x100000000000000000000000000000000000000", "not BASE,SIZE (two numbers, decimal or 0x hex)");
	bad("pmuos.mbox=0x10000800,0x100000", "BASE is not a multiple of 4 KiB");
	bad("pmuos.mbox=0x10000000,0x180000", "SIZE is not a power of two of at least 1 MiB");
	bad("pmuos.mbox=0x10000000,0x80000", "SIZE is not a power of two of at least 1 MiB");
	bad("pmuos.mbox=0x10000000,0", "SIZE is not a power of two of at least 1 MiB");
	bad("pmuos.mbox=0xfffffffffff00000,0x200000", "BASE + SIZE is past the end of the address space");
	bad("pmuos.mbox=0x200000,0x100000", "the range overlaps the kernel image");
	bad("pmuos.mbox=0x1000000,0x100000", "the range overlaps a module the loader placed");
	bad("pmuos.mbox=0x1ff00000,0x100000", "the range is not inside one usable RAM range of the memory map");
	bad("pmuos.mbox=0x40000000,0x100000", "the range is not inside one usable RAM range of the memory map");
	bad("pmuos.mbox=0xf0000000,0x100000", "the range is not inside one usable RAM range of the memory map");
}

static void test_full_map(void **state __attribute__((unused)))
{
	struct boot_info bi, before;
	struct boot_range r;

	qemu_map(&bi, "pmuos.mbox=0x10000000,0x100000");
	for (uint32_t i = 5; i < BOOT_INFO_MMAP_MAX - 1; i++)
		bi.mmap[i] = (struct boot_mmap_entry){ 0x100000000ULL + i * 0x1000, 0x1000, BOOT_MEM_RESERVED, 0 };
	bi.mmap_count = BOOT_INFO_MMAP_MAX - 1; /* room for one more entry, the split needs two */
	before = bi;
	assert_string_equal(boot_take_host_memory(&bi, image, &r), "the memory map has no room for the split");
	assert_memory_equal(&bi, &before, sizeof(bi));
	bi.mmap_count = BOOT_INFO_MMAP_MAX - 2;
	assert_null(boot_take_host_memory(&bi, image, &r));
	assert_int_equal(bi.mmap_count, BOOT_INFO_MMAP_MAX);
}

/*
 * A 3120A bootstrap's e820 (PHI3120 docs/results/2026-09-14-first-boot.md
 * and 2026-09-14-p4-tty-smp.md): RAM below 1 MiB only at 0x50000-0x5FFFF
 * and 0x80000-0xCFFFF, then 0x100000-0xFEDFFFFF and 4 GiB up to 0x173FFEFFF;
 * the local APIC's page and 0xFF000000 up reserved.
 */
static void card_map(struct boot_info *bi)
{
	memset(bi, 0, sizeof(*bi));
	bi->mmap[0] = (struct boot_mmap_entry){ 0x50000, 0x10000, BOOT_MEM_USABLE, 0 };
	bi->mmap[1] = (struct boot_mmap_entry){ 0x80000, 0x50000, BOOT_MEM_USABLE, 0 };
	bi->mmap[2] = (struct boot_mmap_entry){ 0x100000, 0xfed00000, BOOT_MEM_USABLE, 0 };
	bi->mmap[3] = (struct boot_mmap_entry){ 0xfee00000, 0x1000, BOOT_MEM_RESERVED, 0 };
	bi->mmap[4] = (struct boot_mmap_entry){ 0xff000000, 0x1000000, BOOT_MEM_RESERVED, 0 };
	bi->mmap[5] = (struct boot_mmap_entry){ 0x100000000, 0x73fff000, BOOT_MEM_USABLE, 0 };
	bi->mmap_count = 6;
}

static void test_card_has_no_ram_at_0x8000(void **state __attribute__((unused)))
{
	struct boot_info bi;

	card_map(&bi);
	assert_false(boot_low_page_free(&bi, 0x8000, NULL, 0)); /* the old fixed start-up page */
	assert_false(boot_low_page_free(&bi, 0x4f000, NULL, 0));
	assert_true(boot_low_page_free(&bi, 0x50000, NULL, 0));
	assert_true(boot_low_page_free(&bi, 0x5f000, NULL, 0));
	assert_false(boot_low_page_free(&bi, 0x60000, NULL, 0));
	assert_true(boot_low_page_free(&bi, 0xcf000, NULL, 0));
	assert_false(boot_low_page_free(&bi, 0xd0000, NULL, 0));
	assert_false(boot_low_page_free(&bi, 0x100000, NULL, 0)); /* RAM, but no SIPI vector reaches it */
	assert_false(boot_low_page_free(&bi, 0x80800, NULL, 0)); /* not a page boundary */
	assert_int_equal(boot_low_page(&bi, NULL, 0), 0xcf000);
}

static void test_card_page_avoids_what_the_boot_uses(void **state __attribute__((unused)))
{
	struct boot_info bi;
	/* boot_params in a page of the 0x80000 range; the command line across the top two pages. */
	const struct boot_range avoid[] = { { 0x80000, 0x1000 }, { 0xcef00, 0x200 } };

	card_map(&bi);
	assert_false(boot_low_page_free(&bi, 0x80000, avoid, 2));
	assert_false(boot_low_page_free(&bi, 0xce000, avoid, 2));
	assert_int_equal(boot_low_page(&bi, avoid, 2), 0xcd000);
	bi.module_count = 1;
	bi.modules[0] = (struct boot_module){ 0x80000, 0x50000, "in the way" };
	assert_int_equal(boot_low_page(&bi, avoid, 2), 0x5f000);
}

static void test_no_low_ram_no_page(void **state __attribute__((unused)))
{
	struct boot_info bi;

	card_map(&bi);
	bi.mmap[0].type = BOOT_MEM_RESERVED;
	bi.mmap[1].type = BOOT_MEM_RESERVED;
	assert_int_equal(boot_low_page(&bi, NULL, 0), 0);
	/* Page 0 is never one, though a PC's map starts its RAM there. */
	memset(&bi, 0, sizeof(bi));
	bi.mmap[0] = (struct boot_mmap_entry){ 0, 0x1000, BOOT_MEM_USABLE, 0 };
	bi.mmap_count = 1;
	assert_int_equal(boot_low_page(&bi, NULL, 0), 0);
}

static void test_pc_page(void **state __attribute__((unused)))
{
	struct boot_info bi;

	qemu_map(&bi, "");
	assert_true(boot_low_page_free(&bi, 0x8000, NULL, 0));
	/* 0x9F000 runs into the EBDA reserved from 0x9FC00. */
	assert_false(boot_low_page_free(&bi, 0x9f000, NULL, 0));
	assert_int_equal(boot_low_page(&bi, NULL, 0), 0x9e000);
}

/* pmuos.image=: the host's image and command line, rounded up to pages, out of RAM beside the mailbox. */
static void test_image_kept(void **state __attribute__((unused)))
{
	struct boot_info bi, before;
	struct boot_range mbox, r = { 1, 1 };

	qemu_map(&bi, "pmuos.mbox=0x10000000,0x2000000 pmuos.image=0x4000000,0x12345");
	assert_null(boot_take_host_memory(&bi, image, &mbox));
	assert_null(boot_keep_image(&bi, image, &r));
	assert_int_equal(r.base, 0x4000000);
	assert_int_equal(r.size, 0x13000);
	assert_int_equal(bi.mmap_count, 9);
	assert_int_equal(bi.mmap[3].base, 0x100000);
	assert_int_equal(bi.mmap[3].length, 0x4000000 - 0x100000);
	assert_int_equal(bi.mmap[3].type, BOOT_MEM_USABLE);
	assert_int_equal(bi.mmap[4].base, 0x4000000);
	assert_int_equal(bi.mmap[4].length, 0x13000);
	assert_int_equal(bi.mmap[4].type, BOOT_MEM_IMAGE);
	assert_int_equal(bi.mmap[5].base, 0x4013000);
	assert_int_equal(bi.mmap[5].length, 0x10000000 - 0x4013000);
	assert_int_equal(bi.mmap[5].type, BOOT_MEM_USABLE);
	assert_int_equal(bi.mmap[6].type, BOOT_MEM_HOST);

	/* Absent: nothing kept, the map as it was. */
	qemu_map(&bi, "pmuos.mbox=0x10000000,0x2000000 pmuos.imagex=1");
	before = bi;
	assert_null(boot_keep_image(&bi, image, &r));
	assert_int_equal(r.size, 0);
	assert_memory_equal(&bi, &before, sizeof(bi));

	/* Each wrong value named, the map left alone; over the mailbox's place it is not usable RAM any more. */
	static const struct { const char *line, *why; } bad[] = {
		{ "pmuos.image=0x4000000", "not BASE,SIZE (two numbers, decimal or 0x hex)" },
		{ "pmuos.image=0x4000800,4096", "BASE is not a multiple of 4 KiB" },
		{ "pmuos.image=0x4000000,0", "SIZE is not 1 byte to 1 GiB" },
		{ "pmuos.image=0x4000000,0x40000001", "SIZE is not 1 byte to 1 GiB" },
		{ "pmuos.image=0x180000,4096", "the range overlaps the kernel image" },
		{ "pmuos.image=0x1000000,4096", "the range overlaps a module the loader placed" },
		{ "pmuos.image=0x40000000,4096", "the range is not inside one usable RAM range of the memory map" },
		{ "pmuos.mbox=0x10000000,0x2000000 pmuos.image=0x11000000,4096",
		  "the range is not inside one usable RAM range of the memory map" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		qemu_map(&bi, bad[i].line);
		assert_null(boot_take_host_memory(&bi, image, &mbox));
		before = bi;
		const char *why = boot_keep_image(&bi, image, &r);
		assert_non_null(why);
		assert_string_equal(why, bad[i].why);
		assert_memory_equal(&bi, &before, sizeof(bi));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_card_has_no_ram_at_0x8000),
		cmocka_unit_test(test_card_page_avoids_what_the_boot_uses),
		cmocka_unit_test(test_no_low_ram_no_page),
		cmocka_unit_test(test_pc_page),
		cmocka_unit_test(test_absent),
		cmocka_unit_test(test_split_in_three),
		cmocka_unit_test(test_at_the_ends_of_a_range),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_full_map),
		cmocka_unit_test(test_image_kept),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
