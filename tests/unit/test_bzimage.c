#define _GNU_SOURCE /* memmem */
/*
 * The bzImage header: boot/linux/bzimage_check.c on images laid out per
 * Linux Documentation/x86/boot.rst (each defect a loader must refuse), and
 * build/pmuos.bzImage itself, field by field, against what
 * boot/linux/bzimage.S promises and the kernel's System.map. Images are
 * handed over in buffers of exactly their size (AddressSanitizer).
 *
 * BZIMAGE, SYSTEM_MAP, KERNEL_BIN and PMUOS_VERSION come from tests/unit.mk.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "boot/linux/bootparams.h"
#include "boot/linux/bzimage_check.h"

/* ------------------------------------------------------------ helpers */

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)v); put16(p + 2, (uint16_t)(v >> 16)); }
static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t *p) { return rd16(p) | (uint32_t)rd16(p + 2) << 16; }
static uint64_t rd64(const uint8_t *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

#define SMALL_SETUP 1   /* setup sectors */
#define SMALL_CODE  64  /* bytes of 32-bit part */
#define SMALL_LEN   ((SMALL_SETUP + 1) * 512 + SMALL_CODE)

/* A minimal good protocol 2.10 bzImage: one setup sector, 64 bytes of 32-bit part. */
static void small_image(uint8_t *img)
{
	memset(img, 0, SMALL_LEN);
	img[BP_SETUP_SECTS] = SMALL_SETUP;
	put32(img + BP_SYSSIZE, SMALL_CODE / 16);
	put16(img + BP_BOOT_FLAG, 0xaa55);
	img[BP_JUMP] = 0xeb;
	img[BP_JUMP + 1] = BP_INIT_SIZE + 4 - 0x202;
	memcpy(img + BP_HEADER, "HdrS", 4);
	put16(img + BP_VERSION, 0x020a);
	put16(img + BP_KERNEL_VERSION, 0x300 - 0x200);
	memcpy(img + 0x300, "test 1.2", 9);
	img[BP_LOADFLAGS] = BP_LOADED_HIGH;
	put32(img + BP_CODE32_START, 0x100000);
	put32(img + BP_KERNEL_ALIGNMENT, 0x200000);
	img[BP_RELOCATABLE] = 1;
	put32(img + BP_CMDLINE_SIZE, 2047);
	put32(img + BP_PREF_ADDRESS, 0x1000000);
	put32(img + BP_INIT_SIZE, 0x400000);
}

/* bzimage_check on a copy of exactly len bytes. */
static int check(const uint8_t *img, size_t len, struct bzimage_info *info, char *why)
{
	uint8_t *p = malloc(len ? len : 1);
	memcpy(p, img, len);
	int r = bzimage_check(p, len, info, why, 200);
	free(p);
	return r;
}

static void expect_reject(const uint8_t *img, size_t len, const char *phrase)
{
	struct bzimage_info info;
	char why[200] = "";

	assert_int_equal(check(img, len, &info, why), -1);
	if (!strstr(why, phrase))
		fail_msg("'%s' does not say '%s'", why, phrase);
}

/* ------------------------------------------------------------ the checks */

static void test_good_image(void **state)
{
	(void)state;
	uint8_t img[SMALL_LEN];
	struct bzimage_info info;
	char why[200] = "";

	small_image(img);
	assert_int_equal(check(img, sizeof(img), &info, why), 0);
	assert_int_equal(info.protocol, 0x020a);
	assert_int_equal(info.setup_size, 1024);
	assert_int_equal(info.code32_size, SMALL_CODE);
	assert_int_equal(info.cmdline_size, 2047);
	assert_int_equal(info.init_size, 0x400000);
	assert_int_equal(info.kernel_alignment, 0x200000);
	assert_int_equal(info.pref_address, 0x1000000);
	assert_string_equal(info.kernel_version, "test 1.2");
}

static void test_not_a_bzimage(void **state)
{
	(void)state;
	uint8_t img[SMALL_LEN];

	small_image(img);
	expect_reject(img, 0, "not a Linux bzImage");
	expect_reject(img, BP_HEADER + 3, "not a Linux bzImage");
	img[BP_HEADER + 3] = 's';
	expect_reject(img, sizeof(img), "not a Linux bzImage");
	/* An ELF file (kernel.elf) is not one either. */
	memset(img, 0, sizeof(img));
	memcpy(img, "\177ELF", 4);
	expect_reject(img, sizeof(img), "not a Linux bzImage");
}

static void test_too_short_for_the_header(void **state)
{
	(void)state;
	uint8_t img[SMALL_LEN];

	small_image(img);
	expect_reject(img, BP_INIT_SIZE + 3, "too short");
}

static void test_boot_flag(void **state)
{
	(void)state;
	uint8_t img[SMALL_LEN];

	small_image(img);
	put16(img + BP_BOOT_FLAG, 0x55aa);
	expect_reject(img, sizeof(img), "boot_flag at 0x1fe is 0x55aa");
}

static void test_old_protocol(void **state)
{
	(void)state;
	uint8_t img[SMALL_LEN];

	small_image(img);
	put16(img + BP_VERSION, 0x0209);
	expect_reject(img, sizeof(img), "boot protocol 2.09");
	put16(img + BP_VERSION, 0x0300);
	struct bzimage_info info;
	char why[200];
	assert_int_equal(check(img, sizeof(img), &info, why), 0); /* 3.00 is newer */
}

static void test_zimage(void **state)
{
	(void)state;
	uint8_t img[SMALL_LEN];

	small_image(img);
	img[BP_LOADFLAGS] = 0x80;
	expect_reject(img, sizeof(img), "LOADED_HIGH");
}

static void test_not_relocatable(void **state)
{
	(void)state;
	uint8_t img[SMALL_LEN];

	small_image(img);
	img[BP_RELOCATABLE] = 0;
	expect_reject(img, sizeof(img), "runs only at 0x100000");
}

/* setup_sects 0 means 4 (boot.rst): 2560 bytes of setup leave nothing of a 1088-byte file. */
static void test_setup_past_the_end(void **state)
{
	(void)state;
	uint8_t img[SMALL_LEN];

	small_image(img);
	img[BP_SETUP_SECTS] = 0;
	expect_reject(img, sizeof(img), "setup (2560 bytes) leaves no 32-bit part");
	img[BP_SETUP_SECTS] = 2; /* 1536 bytes of setup in a 1088-byte file */
	expect_reject(img, sizeof(img), "setup (1536 bytes)");
	img[BP_SETUP_SECTS] = 1;
	expect_reject(img, 1024, "leaves no 32-bit part"); /* exactly the setup */
}

/* syssize counts 16-byte paragraphs, rounded up: 1..15 bytes short is the rounding, 16 is truncation. */
static void test_truncated(void **state)
{
	(void)state;
	uint8_t img[SMALL_LEN];
	struct bzimage_info info;
	char why[200];

	small_image(img);
	assert_int_equal(check(img, sizeof(img) - 15, &info, why), 0);
	assert_int_equal(info.code32_size, SMALL_CODE - 15);
	expect_reject(img, sizeof(img) - 16, "truncated: syssize says the 32-bit part has 64 bytes, the file holds 48");
	put32(img + BP_SYSSIZE, 0);
	expect_reject(img, sizeof(img), "syssize is 0");
	put32(img + BP_SYSSIZE, 0xffffffff); /* 2^36 bytes: no overflow in the comparison */
	expect_reject(img, sizeof(img), "truncated");
}

static void test_no_command_line(void **state)
{
	(void)state;
	uint8_t img[SMALL_LEN];

	small_image(img);
	put32(img + BP_CMDLINE_SIZE, 0);
	expect_reject(img, sizeof(img), "cmdline_size is 0");
}

/* The version string counts only if it is NUL-terminated inside the setup. */
static void test_version_string_bounds(void **state)
{
	(void)state;
	uint8_t img[SMALL_LEN];
	struct bzimage_info info;
	char why[200];

	small_image(img);
	put16(img + BP_KERNEL_VERSION, 0);
	assert_int_equal(check(img, sizeof(img), &info, why), 0);
	assert_string_equal(info.kernel_version, "");
	put16(img + BP_KERNEL_VERSION, 1024 - 0x200 - 4); /* 4 bytes before the 32-bit part */
	memcpy(img + 1020, "abcd", 4);
	assert_int_equal(check(img, sizeof(img), &info, why), 0);
	assert_string_equal(info.kernel_version, "");
	put16(img + BP_KERNEL_VERSION, 0xffff);
	assert_int_equal(check(img, sizeof(img), &info, why), 0);
	assert_string_equal(info.kernel_version, "");
}

/* ------------------------------------------------------------ build/pmuos.bzImage */

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s (run make)", path);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	rewind(f);
	uint8_t *p = malloc(*len);
	assert_int_equal(fread(p, 1, *len, f), *len);
	fclose(f);
	return p;
}

/* A symbol's address from System.map; every line "address type name", ascending. */
static uint64_t map_symbol(const char *name)
{
	FILE *f = fopen(SYSTEM_MAP, "r");
	char line[256], sym[200], type;
	unsigned long long addr, prev = 0, found = 0;
	int lines = 0;

	if (!f)
		fail_msg("cannot open %s (run make)", SYSTEM_MAP);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%16llx %c %199s", &addr, &type, sym) != 3 || line[16] != ' ')
			fail_msg("System.map line not in nm format: %s", line);
		if (strchr("aNUw", type))
			fail_msg("System.map keeps an absolute, debugging or undefined symbol: %s", line);
		assert_true(addr >= prev);
		prev = addr;
		lines++;
		if (strcmp(sym, name) == 0)
			found = addr;
	}
	fclose(f);
	assert_true(lines > 100);
	if (!found)
		fail_msg("%s is not in System.map", name);
	return found;
}

/* Every header field bzimage.S sets, as it promises. */
static void test_pmuos_bzimage_header(void **state)
{
	(void)state;
	size_t len;
	uint8_t *img = read_file(BZIMAGE, &len);
	uint64_t kstart = map_symbol("__kernel_start"), kend = map_symbol("__kernel_end");
	uint32_t setup = 16 * 512, code32 = (uint32_t)(len - setup);

	assert_int_equal(img[BP_SETUP_SECTS], 15);
	assert_int_equal(rd16(img + 0x1f2), 0);                       /* root_flags */
	assert_int_equal(rd32(img + BP_SYSSIZE), (code32 + 15) / 16);
	assert_int_equal(rd16(img + 0x1fa), 0xffff);                  /* vid_mode "normal" */
	assert_int_equal(rd16(img + 0x1fc), 0);                       /* root_dev */
	assert_int_equal(rd16(img + BP_BOOT_FLAG), 0xaa55);
	assert_int_equal(img[BP_JUMP], 0xeb);
	assert_int_equal(0x202 + img[BP_JUMP + 1], BP_HEADER_END);
	assert_memory_equal(img + BP_HEADER, "HdrS", 4);
	assert_int_equal(rd16(img + BP_VERSION), 0x020c);
	assert_int_equal(rd32(img + 0x208), 0);                       /* realmode_swtch */
	assert_int_equal(rd16(img + 0x20c), 0x1000);                  /* start_sys_seg */
	assert_string_equal((const char *)img + 0x200 + rd16(img + BP_KERNEL_VERSION), "pmuos " PMUOS_VERSION);
	assert_true(rd16(img + BP_KERNEL_VERSION) < 15 * 0x200);      /* boot.rst: less than 0x200 * setup_sects */
	assert_int_equal(img[BP_TYPE_OF_LOADER], 0xff);
	assert_int_equal(img[BP_LOADFLAGS], 1);                       /* exactly: MPSS verify_bzImage */
	assert_int_equal(rd16(img + 0x212), 0);                       /* setup_move_size */
	assert_int_equal(rd32(img + BP_CODE32_START), kstart);
	assert_int_equal(kstart, 0x100000);
	for (unsigned off = 0x218; off < BP_CMD_LINE_PTR + 4; off++)  /* ramdisk, kludge, heap, ext_loader, cmd_line_ptr */
		assert_int_equal(img[off], 0);
	assert_int_equal(rd32(img + BP_INITRD_ADDR_MAX), 0x7fffffff);
	assert_int_equal(rd32(img + BP_KERNEL_ALIGNMENT), 0x1000);
	assert_int_equal(img[BP_RELOCATABLE], 1);
	assert_int_equal(img[BP_MIN_ALIGNMENT], 12);
	assert_int_equal(rd16(img + BP_XLOADFLAGS), 0);
	assert_int_equal(rd32(img + BP_CMDLINE_SIZE), BOOT_INFO_CMDLINE - 1);
	for (unsigned off = 0x23c; off < BP_PREF_ADDRESS; off++)     /* subarch, payload, setup_data */
		assert_int_equal(img[off], 0);
	assert_int_equal(rd64(img + BP_PREF_ADDRESS), kstart);
	assert_int_equal(rd32(img + BP_INIT_SIZE), kend - kstart);
	assert_true(rd32(img + BP_INIT_SIZE) >= code32);             /* the 32-bit part fits in it too */
	assert_int_equal(rd32(img + BP_HANDOVER_OFFSET), 0);

	/* The zero page: nothing of ours but the header, so a loader's boot_params can be this page. */
	for (unsigned off = 0; off < BP_SETUP_SECTS; off++)
		assert_int_equal(img[off], 0);
	assert_int_equal(img[BP_HEADER_END], 0xe9);                   /* jmp rel16 to the real-mode entry */
	assert_int_equal(BP_HEADER_END + 3 + rd16(img + BP_HEADER_END + 1), 0x1000);
	for (unsigned off = BP_HEADER_END + 3; off < BP_SIZE; off++)
		assert_int_equal(img[off], 0);

	/* The checker a host tool uses agrees. */
	struct bzimage_info info;
	char why[200] = "";
	if (bzimage_check(img, len, &info, why, sizeof(why)) != 0)
		fail_msg("bzimage_check refuses build/pmuos.bzImage: %s", why);
	assert_int_equal(info.setup_size, setup);
	assert_string_equal(info.kernel_version, "pmuos " PMUOS_VERSION);
	free(img);
}

/* The 32-bit part: a jump over 16 bytes, the kernel's flat image, then the relocator. */
static void test_pmuos_bzimage_carries_the_kernel(void **state)
{
	(void)state;
	size_t len, klen;
	uint8_t *img = read_file(BZIMAGE, &len);
	uint8_t *kernel = read_file(KERNEL_BIN, &klen);
	uint32_t setup = 16 * 512;

	assert_true(len > setup + 16 + klen);
	assert_int_equal(img[setup], 0xe9);                           /* jmp rel32 */
	assert_int_equal(setup + 5 + rd32(img + setup + 1), setup + 16 + klen);
	assert_memory_equal(img + setup + 16, kernel, klen);
	/* The relocator enters the kernel at linux_entry32: ljmp $0x10, $addr (EA imm32 imm16). */
	uint64_t entry = map_symbol("linux_entry32");
	uint8_t want[7] = { 0xea, 0, 0, 0, 0, 0x10, 0 };
	put32(want + 1, (uint32_t)entry);
	assert_non_null(memmem(img + setup + 16 + klen, len - setup - 16 - klen, want, sizeof(want)));
	free(kernel);
	free(img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_image),
		cmocka_unit_test(test_not_a_bzimage),
		cmocka_unit_test(test_too_short_for_the_header),
		cmocka_unit_test(test_boot_flag),
		cmocka_unit_test(test_old_protocol),
		cmocka_unit_test(test_zimage),
		cmocka_unit_test(test_not_relocatable),
		cmocka_unit_test(test_setup_past_the_end),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_no_command_line),
		cmocka_unit_test(test_version_string_bounds),
		cmocka_unit_test(test_pmuos_bzimage_header),
		cmocka_unit_test(test_pmuos_bzimage_carries_the_kernel),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
