/*
 * platform/sfi.c on the host: SFI tables laid out per the SFI 0.8.2
 * specification (24-byte header, entries packed) in simulated physical
 * memory (tests/unit/physmem.h: regions of exact size under
 * AddressSanitizer), and the tables tests/cardsim/sfi_gen writes (SFI_GEN
 * comes from tests/unit.mk).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <pmuos/bootinfo.h>
#include "platform/sfi.h"
#include "tests/unit/physmem.h"

/* ------------------------------------------------------------ building tables */

static void put32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static void put64(uint8_t *p, uint64_t v) { put32(p, (uint32_t)v); put32(p + 4, (uint32_t)(v >> 32)); }

/* The F segment as a card's bootstrap leaves it: the SYST search window, all RAM. */
#define WIN_BASE SFI_SEARCH_START
#define WIN_LEN  (SFI_SEARCH_END - SFI_SEARCH_START)

static uint8_t *window(struct physmem *m)
{
	return physmem_add(m, WIN_BASE, NULL, WIN_LEN);
}

static void fix_checksum(uint8_t *t)
{
	uint32_t len = t[4] | t[5] << 8 | t[6] << 16 | (uint32_t)t[7] << 24;
	uint8_t sum = 0;

	t[9] = 0;
	for (uint32_t i = 0; i < len; i++)
		sum += t[i];
	t[9] = (uint8_t)-sum;
}

/* Writes a table (header + n bytes of payload) at physical addr inside win; returns it. */
static uint8_t *put_table(uint8_t *win, uint64_t addr, const char *sig, const void *payload, uint32_t n)
{
	uint8_t *t = win + (addr - WIN_BASE);

	memcpy(t, sig, 4);
	put32(t + 4, SFI_HEADER + n);
	t[8] = 1;
	memcpy(t + 10, "INTEL ", 6);
	memcpy(t + 16, "KNC     ", 8);
	if (n)
		memcpy(t + SFI_HEADER, payload, n);
	fix_checksum(t);
	return t;
}

static uint8_t *put_syst(uint8_t *win, uint64_t addr, const uint64_t *tables, uint32_t n)
{
	uint8_t p[SFI_MAX_TABLES * 8 + 64];

	for (uint32_t i = 0; i < n; i++)
		put64(p + 8 * i, tables[i]);
	return put_table(win, addr, "SYST", p, n * 8);
}

static uint8_t *put_cpus(uint8_t *win, uint64_t addr, uint32_t first, uint32_t n)
{
	uint8_t *p = malloc(4 * n + 1);
	for (uint32_t i = 0; i < n; i++)
		put32(p + 4 * i, first + i);
	uint8_t *t = put_table(win, addr, "CPUS", p, 4 * n);
	free(p);
	return t;
}

static void mmap_entry(uint8_t *e, uint32_t type, uint64_t base, uint64_t pages, uint64_t attr)
{
	put32(e, type);
	put64(e + 4, base);
	put64(e + 12, 0xffff800000000000ULL + base); /* virt_start: ignored */
	put64(e + 20, pages);
	put64(e + 28, attr);
}

/* A 3120A's layout (PHI3120 first-boot.md): SYST at 0xEF180, 228 CPUs, one I/O APIC at SBOX + 0xA800. */
#define KNC_SYST 0xef180
#define KNC_CPUS 0xef200
#define KNC_APIC 0xef600
#define KNC_MMAP 0xef700
#define KNC_IOAPIC 0x8007da800ULL

static const struct sfi_mem_range knc_mem[] = {
	{ 0x50000, 0x10000, SFI_UEFI_CONVENTIONAL, 0xf },
	{ 0x80000, 0x50000, SFI_UEFI_CONVENTIONAL, 0xf },
	{ 0xe0000, 0x20000, SFI_UEFI_RESERVED, 0x1 },
	{ 0x100000, 0xfed00000, SFI_UEFI_CONVENTIONAL, 0xf },
	{ 0xfee00000, 0x1000, SFI_UEFI_MMIO, 0x1 },
	{ 0x100000000ULL, 0x73fff000ULL, SFI_UEFI_CONVENTIONAL, 0xf },
};

static void put_knc_tables(uint8_t *win)
{
	uint8_t apic[8], mm[6 * SFI_MMAP_ENTRY];
	const uint64_t tables[] = { KNC_CPUS, KNC_APIC, KNC_MMAP };

	put_cpus(win, KNC_CPUS, 0, 228);
	put64(apic, KNC_IOAPIC);
	put_table(win, KNC_APIC, "APIC", apic, 8);
	for (int i = 0; i < 6; i++)
		mmap_entry(mm + i * SFI_MMAP_ENTRY, knc_mem[i].type, knc_mem[i].base, knc_mem[i].length / 4096,
			   knc_mem[i].attribute);
	put_table(win, KNC_MMAP, "MMAP", mm, sizeof(mm));
	put_syst(win, KNC_SYST, tables, 3);
}

static int parse(struct physmem *m, uint64_t syst, struct sfi_info *out)
{
	return sfi_parse(physmem_read, m, syst, out);
}

static void expect_error(struct physmem *m, uint64_t syst, const char *phrase)
{
	struct sfi_info *out = malloc(sizeof(*out));

	assert_int_equal(parse(m, syst, out), -1);
	if (!strstr(out->error, phrase))
		fail_msg("'%s' does not say '%s'", out->error, phrase);
	free(out);
}

/* ------------------------------------------------------------ good tables */

static void test_checksum(void **state)
{
	(void)state;
	static const uint8_t ok[3] = { 0x80, 0x7f, 0x01 }, bad[3] = { 0x80, 0x7f, 0x02 };

	assert_true(sfi_checksum_ok(ok, 3));
	assert_false(sfi_checksum_ok(bad, 3));
	assert_true(sfi_checksum_ok(bad, 0));
}

static void test_knc_tables(void **state)
{
	(void)state;
	struct physmem m = { 0 };
	struct sfi_info *out = malloc(sizeof(*out));

	put_knc_tables(window(&m));
	assert_int_equal(sfi_find_syst(physmem_read, &m, SFI_SEARCH_START, SFI_SEARCH_END), KNC_SYST);
	assert_int_equal(parse(&m, KNC_SYST, out), 0);
	assert_int_equal(out->syst, KNC_SYST);
	assert_true(out->have_cpus && out->have_apic && out->have_mmap);
	assert_int_equal(out->ncpus, 228);
	assert_int_equal(out->cpus_total, 228);
	for (uint32_t i = 0; i < 228; i++)
		assert_int_equal(out->cpu_apic_id[i], i);
	assert_int_equal(out->nioapics, 1);
	assert_int_equal(out->ioapic_addr[0], KNC_IOAPIC);
	assert_int_equal(out->nmem, 6);
	for (uint32_t i = 0; i < 6; i++) {
		assert_int_equal(out->mem[i].base, knc_mem[i].base);
		assert_int_equal(out->mem[i].length, knc_mem[i].length);
		assert_int_equal(out->mem[i].type, knc_mem[i].type);
		assert_int_equal(out->mem[i].attribute, knc_mem[i].attribute);
	}
	physmem_free(&m);
	free(out);
}

/* The scan: 16-byte steps from the low end, the first valid SYST; invalid ones are passed over. */
static void test_find_syst(void **state)
{
	(void)state;
	struct physmem m = { 0 };
	uint8_t *win = window(&m);
	const uint64_t none[1] = { 0 };

	assert_int_equal(sfi_find_syst(physmem_read, &m, SFI_SEARCH_START, SFI_SEARCH_END), 0);
	put_syst(win, 0xf0000, none, 0);                           /* valid, but later */
	assert_int_equal(sfi_find_syst(physmem_read, &m, SFI_SEARCH_START, SFI_SEARCH_END), 0xf0000);
	put_syst(win, 0xe0008, none, 0);                           /* not on a 16-byte boundary */
	put_syst(win, 0xe0ff0, (const uint64_t[]){ 0xf0000 }, 1);  /* 32 bytes across 0xE1000 */
	put_syst(win, 0xe2000, none, 0)[9] ^= 1;                   /* bad checksum */
	put_table(win, 0xe3000, "SYSX", NULL, 0);                  /* wrong signature */
	put_table(win, 0xe4000, "SYST", "abc", 3);                 /* length not 24 + 8n */
	assert_int_equal(sfi_find_syst(physmem_read, &m, SFI_SEARCH_START, SFI_SEARCH_END), 0xf0000);
	put_syst(win, 0xe5000, none, 0);                           /* valid and lower: it wins */
	assert_int_equal(sfi_find_syst(physmem_read, &m, SFI_SEARCH_START, SFI_SEARCH_END), 0xe5000);
	/* The window given is the window searched; an unaligned start rounds up. */
	assert_int_equal(sfi_find_syst(physmem_read, &m, 0xe5001, SFI_SEARCH_END), 0xf0000);
	assert_int_equal(sfi_find_syst(physmem_read, &m, SFI_SEARCH_START, 0xe5000), 0);
	physmem_free(&m);
}

/* A SYST at the window's very end whose bytes run past readable memory is no SYST. */
static void test_find_syst_at_the_edge(void **state)
{
	(void)state;
	struct physmem m = { 0 };
	uint8_t *win = window(&m);

	memcpy(win + WIN_LEN - 16, "SYST", 4);
	put32(win + WIN_LEN - 12, 24);
	assert_int_equal(sfi_find_syst(physmem_read, &m, SFI_SEARCH_START, SFI_SEARCH_END), 0);
	physmem_free(&m);
}

/* Other tables (FREQ, OEMx) are checked and skipped; absent tables are said absent. */
static void test_other_and_missing_tables(void **state)
{
	(void)state;
	struct physmem m = { 0 };
	uint8_t *win = window(&m);
	struct sfi_info *out = malloc(sizeof(*out));
	uint8_t freq[12] = { 0x4c, 0x04 };

	put_table(win, 0xe1000, "FREQ", freq, sizeof(freq));
	put_table(win, 0xe1100, "OEM0", "any length", 10);
	put_cpus(win, 0xe1200, 0, 4);
	put_syst(win, 0xe0000, (const uint64_t[]){ 0xe1000, 0xe1100, 0xe1200 }, 3);
	assert_int_equal(parse(&m, 0xe0000, out), 0);
	assert_true(out->have_cpus);
	assert_false(out->have_apic);
	assert_false(out->have_mmap);
	assert_int_equal(out->ncpus, 4);
	assert_int_equal(out->nioapics, 0);

	/* As Linux: one bad table, even one pmuos does not use, rejects them all. */
	win[0x1100 + 12] ^= 0xff;
	expect_error(&m, 0xe0000, "OEM0 at 0xe1100: bad checksum");
	physmem_free(&m);
	free(out);
}

/* The first CPUS table counts; a second one (as Linux's sfi_get_table) is only checked. */
static void test_duplicate_tables(void **state)
{
	(void)state;
	struct physmem m = { 0 };
	uint8_t *win = window(&m);
	struct sfi_info *out = malloc(sizeof(*out));

	put_cpus(win, 0xe1000, 100, 2);
	put_cpus(win, 0xe1100, 200, 3);
	put_syst(win, 0xe0000, (const uint64_t[]){ 0xe1000, 0xe1100 }, 2);
	assert_int_equal(parse(&m, 0xe0000, out), 0);
	assert_int_equal(out->ncpus, 2);
	assert_int_equal(out->cpu_apic_id[0], 100);
	assert_int_equal(out->cpu_apic_id[1], 101);
	physmem_free(&m);
	free(out);
}

/* ------------------------------------------------------------ bad tables */

static void test_bad_checksum(void **state)
{
	(void)state;
	struct physmem m = { 0 };
	uint8_t *win = window(&m);

	put_knc_tables(win);
	win[KNC_CPUS - WIN_BASE + SFI_HEADER + 4 * 17] ^= 0x10; /* APIC ID 17 (0x11) reads 0x01: the sum drops by 0x10 */
	expect_error(&m, KNC_SYST, "CPUS at 0xef200: bad checksum (bytes sum to 0xf0, not 0)");
	win[KNC_CPUS - WIN_BASE + SFI_HEADER + 4 * 17] ^= 0x10;
	win[KNC_SYST - WIN_BASE + 30] ^= 0x01; /* SYST's own entry */
	expect_error(&m, KNC_SYST, "SYST at 0xef180: bad checksum");
	physmem_free(&m);
}

/* Lengths: shorter than the header, not whole entries, over 1 MiB, past readable memory. */
static void test_bad_lengths(void **state)
{
	(void)state;
	struct physmem m = { 0 };
	uint8_t *win = window(&m);

	put_knc_tables(win);
	uint8_t *cpus = win + (KNC_CPUS - WIN_BASE);
	put32(cpus + 4, 20);
	fix_checksum(cpus);
	expect_error(&m, KNC_SYST, "CPUS at 0xef200: length 20, shorter than its 24-byte header");
	put32(cpus + 4, SFI_HEADER + 4 * 228 - 2);
	fix_checksum(cpus);
	expect_error(&m, KNC_SYST, "length 934 is not 24 + whole 4-byte entries");
	put32(cpus + 4, SFI_HEADER + 4 * 0x40001);
	expect_error(&m, KNC_SYST, "over the 1 MiB limit");

	put_knc_tables(win);
	uint8_t *mm = win + (KNC_MMAP - WIN_BASE);
	put32(mm + 4, SFI_HEADER + 6 * SFI_MMAP_ENTRY + 1);
	fix_checksum(mm);
	expect_error(&m, KNC_SYST, "length 241 is not 24 + whole 36-byte entries");
	physmem_free(&m);
}

/* A table whose length runs past the memory that holds it: truncated. */
static void test_truncated_table(void **state)
{
	(void)state;
	struct physmem m = { 0 };
	uint8_t *win = window(&m);

	put_cpus(win, 0xfff00, 0, 1); /* 28 bytes, well inside */
	/* A CPUS table for 228 CPUs 256 bytes before the window's end: 936 bytes do not fit. */
	uint8_t *t = win + (0xfff00 - WIN_BASE);
	put32(t + 4, SFI_HEADER + 4 * 228);
	put_syst(win, 0xe0000, (const uint64_t[]){ 0xfff00 }, 1);
	expect_error(&m, 0xe0000, "CPUS at 0xfff00: only 256 of its 936 bytes readable");
	/* A pointer to nothing at all. */
	put_syst(win, 0xe0000, (const uint64_t[]){ 0xdead0000 }, 1);
	expect_error(&m, 0xe0000, "table at 0xdead0000: header not readable");
	/* A table whose end would pass 2^64. */
	physmem_add(&m, 0xfffffffffffff000ULL, NULL, 0x1000);
	uint8_t *top = m.r[1].bytes + 0xff0;
	memcpy(top, "OEMX", 4);
	put32(top + 4, 0x40);
	put_syst(win, 0xe0000, (const uint64_t[]){ 0xfffffffffffffff0ULL }, 1);
	expect_error(&m, 0xe0000, "runs past the top of memory");
	physmem_free(&m);
}

/* More entries than kept: counted, the first ones kept; more tables than read: an error. */
static void test_too_many_entries(void **state)
{
	(void)state;
	struct physmem m = { 0 };
	uint8_t *win = window(&m);
	struct sfi_info *out = malloc(sizeof(*out));
	uint8_t apic[10 * 8], mm[70 * SFI_MMAP_ENTRY];

	put_cpus(win, 0xe1000, 1000, SFI_MAX_CPUS + 88);
	for (int i = 0; i < 10; i++)
		put64(apic + 8 * i, 0xfec00000 + 0x1000 * (uint64_t)i);
	put_table(win, 0xe2000, "APIC", apic, sizeof(apic));
	for (int i = 0; i < 70; i++)
		mmap_entry(mm + i * SFI_MMAP_ENTRY, SFI_UEFI_CONVENTIONAL, 0x100000 * (uint64_t)i, 16, 0);
	put_table(win, 0xe3000, "MMAP", mm, sizeof(mm));
	put_syst(win, 0xe0000, (const uint64_t[]){ 0xe1000, 0xe2000, 0xe3000 }, 3);
	assert_int_equal(parse(&m, 0xe0000, out), 0);
	assert_int_equal(out->cpus_total, SFI_MAX_CPUS + 88);
	assert_int_equal(out->ncpus, SFI_MAX_CPUS);
	assert_int_equal(out->cpu_apic_id[SFI_MAX_CPUS - 1], 1000 + SFI_MAX_CPUS - 1);
	assert_int_equal(out->ioapics_total, 10);
	assert_int_equal(out->nioapics, SFI_MAX_IOAPICS);
	assert_int_equal(out->ioapic_addr[SFI_MAX_IOAPICS - 1], 0xfec00000 + 0x1000 * (SFI_MAX_IOAPICS - 1));
	assert_int_equal(out->mem_total, 70);
	assert_int_equal(out->nmem, SFI_MAX_MEM);
	assert_int_equal(out->mem[SFI_MAX_MEM - 1].base, 0x100000ULL * (SFI_MAX_MEM - 1));
	assert_int_equal(out->mem[SFI_MAX_MEM - 1].length, 16 * 4096);

	uint64_t many[SFI_MAX_TABLES + 1];
	for (int i = 0; i <= SFI_MAX_TABLES; i++) {
		many[i] = 0xf0000 + 0x40 * (uint64_t)i;
		put_table(win, many[i], "OEM1", NULL, 0);
	}
	put_syst(win, 0xe0000, many, SFI_MAX_TABLES + 1);
	expect_error(&m, 0xe0000, "lists 33 tables, more than the 32 read");
	physmem_free(&m);
	free(out);
}

/* Tables that share bytes, with each other or with SYST, or listed twice. */
static void test_overlapping_pointers(void **state)
{
	(void)state;
	struct physmem m = { 0 };
	uint8_t *win = window(&m);
	uint8_t apic[8];

	put64(apic, KNC_IOAPIC);
	put_cpus(win, 0xe1000, 0, 8);                      /* [0xe1000, 0xe1038) */
	put_table(win, 0xe1040, "APIC", apic, 8);
	put_syst(win, 0xe0000, (const uint64_t[]){ 0xe1000, 0xe1040 }, 2);
	struct sfi_info *out = malloc(sizeof(*out));
	assert_int_equal(parse(&m, 0xe0000, out), 0);       /* adjacent, not overlapping */
	free(out);

	put_table(win, 0xe1030, "APIC", apic, 8);          /* inside CPUS's last 8 bytes */
	uint8_t *cpus = win + 0x1000;
	fix_checksum(cpus);                                /* CPUS stays valid despite the overwrite */
	put_syst(win, 0xe0000, (const uint64_t[]){ 0xe1000, 0xe1030 }, 2);
	expect_error(&m, 0xe0000, "overlaps");

	put_cpus(win, 0xe1000, 0, 8);
	put_syst(win, 0xe0000, (const uint64_t[]){ 0xe1000, 0xe1000 }, 2);
	expect_error(&m, 0xe0000, "CPUS at 0xe1000 overlaps CPUS at 0xe1000");

	put_syst(win, 0xe0000, (const uint64_t[]){ 0xe0000 }, 1); /* SYST lists itself */
	expect_error(&m, 0xe0000, "SYST at 0xe0000 overlaps SYST at 0xe0000");
	physmem_free(&m);
}

/* sfi_parse at an address that holds another table, or nothing valid. */
static void test_not_a_syst(void **state)
{
	(void)state;
	struct physmem m = { 0 };
	uint8_t *win = window(&m);

	put_cpus(win, 0xe1000, 0, 4);
	expect_error(&m, 0xe1000, "no SYST at 0xe1000 (signature 'CPUS')");
	put_table(win, 0xe2ff0, "SYST", (uint8_t[16]){ 0 }, 16); /* 40 bytes across a page */
	expect_error(&m, 0xe2ff0, "SYST at 0xe2ff0: length 40 crosses a 4 KiB boundary");
	put_table(win, 0xe3000, "SY\x01T", NULL, 0);
	expect_error(&m, 0xe3000, "signature 'SY?T'");
	physmem_free(&m);
}

/* MMAP: pages are 4 KiB; a range past 2^64 is refused. */
static void test_mmap_ranges(void **state)
{
	(void)state;
	struct physmem m = { 0 };
	uint8_t *win = window(&m);
	struct sfi_info *out = malloc(sizeof(*out));
	uint8_t mm[2 * SFI_MMAP_ENTRY];

	mmap_entry(mm, SFI_UEFI_CONVENTIONAL, 0xfffffffffff00000ULL, 0x100, 0); /* up to 2^64 exactly */
	mmap_entry(mm + SFI_MMAP_ENTRY, SFI_UEFI_ACPI_NVS, 0x1000, 0, 0);       /* empty */
	put_table(win, 0xe1000, "MMAP", mm, sizeof(mm));
	put_syst(win, 0xe0000, (const uint64_t[]){ 0xe1000 }, 1);
	assert_int_equal(parse(&m, 0xe0000, out), 0);
	assert_int_equal(out->mem[0].length, 0x100000);
	assert_int_equal(out->mem[1].length, 0);

	mmap_entry(mm, SFI_UEFI_CONVENTIONAL, 0xfffffffffff00000ULL, 0x101, 0);
	put_table(win, 0xe1000, "MMAP", mm, sizeof(mm));
	expect_error(&m, 0xe0000, "MMAP at 0xe1000: entry 0 (0xfffffffffff00000, 257 pages) runs past 2^64");
	mmap_entry(mm, SFI_UEFI_CONVENTIONAL, 0, 1ULL << 52, 0); /* 2^64 bytes from 0: one too many */
	put_table(win, 0xe1000, "MMAP", mm, sizeof(mm));
	expect_error(&m, 0xe0000, "runs past 2^64");
	physmem_free(&m);
	free(out);
}

/* UEFI "Memory Type Usage after ExitBootServices()". */
static void test_boot_mem_types(void **state)
{
	(void)state;
	static const uint32_t want[] = {
		[SFI_UEFI_RESERVED] = BOOT_MEM_RESERVED, [SFI_UEFI_LOADER_CODE] = BOOT_MEM_USABLE,
		[SFI_UEFI_LOADER_DATA] = BOOT_MEM_USABLE, [SFI_UEFI_BOOT_CODE] = BOOT_MEM_USABLE,
		[SFI_UEFI_BOOT_DATA] = BOOT_MEM_USABLE, [SFI_UEFI_RUNTIME_CODE] = BOOT_MEM_RESERVED,
		[SFI_UEFI_RUNTIME_DATA] = BOOT_MEM_RESERVED, [SFI_UEFI_CONVENTIONAL] = BOOT_MEM_USABLE,
		[SFI_UEFI_UNUSABLE] = BOOT_MEM_BAD, [SFI_UEFI_ACPI_RECLAIM] = BOOT_MEM_ACPI_RECLAIM,
		[SFI_UEFI_ACPI_NVS] = BOOT_MEM_ACPI_NVS, [SFI_UEFI_MMIO] = BOOT_MEM_RESERVED,
		[SFI_UEFI_MMIO_PORT] = BOOT_MEM_RESERVED, [SFI_UEFI_PAL_CODE] = BOOT_MEM_RESERVED,
		[SFI_UEFI_PERSISTENT] = BOOT_MEM_RESERVED,
	};

	for (uint32_t t = 0; t < sizeof(want) / sizeof(want[0]); t++)
		assert_int_equal(sfi_boot_mem_type(t), want[t]);
	assert_int_equal(sfi_boot_mem_type(0x70000000), BOOT_MEM_RESERVED); /* OEM range */
}

/* ------------------------------------------------------------ tests/cardsim/sfi_gen */

/* What sfi_gen writes for N CPUs, loaded at its address, is found and reads back. */
static void gen_and_parse(uint32_t cpus, uint64_t addr, uint32_t bsp)
{
	char file[] = "/tmp/test_sfi.XXXXXX", cmd[512];
	int fd = mkstemp(file);
	assert_true(fd >= 0);
	snprintf(cmd, sizeof(cmd), "%s --cpus %u --addr %#lx --bsp %u --ram 0x20000000 -o %s", SFI_GEN, cpus,
		 (unsigned long)addr, bsp, file);
	assert_int_equal(system(cmd), 0);

	FILE *f = fdopen(fd, "rb");
	fseek(f, 0, SEEK_END);
	size_t len = (size_t)ftell(f);
	rewind(f);
	uint8_t *bytes = malloc(len);
	assert_int_equal(fread(bytes, 1, len, f), len);
	fclose(f);
	unlink(file);

	struct physmem m = { 0 };
	struct sfi_info *out = malloc(sizeof(*out));
	physmem_add(&m, addr, bytes, len);
	free(bytes);
	assert_int_equal(sfi_find_syst(physmem_read, &m, addr & ~0xfffULL, addr + 0x1000), addr);
	assert_int_equal(parse(&m, addr, out), 0);
	assert_int_equal(out->ncpus, cpus);
	assert_int_equal(out->cpu_apic_id[0], bsp);
	for (uint32_t i = 1, id = 0; i < cpus; i++, id++) {
		if (id == bsp)
			id++;
		assert_int_equal(out->cpu_apic_id[i], id);
	}
	assert_int_equal(out->nioapics, 1);
	assert_int_equal(out->ioapic_addr[0], 0xfec00000);
	assert_int_equal(out->nmem, 2);
	assert_int_equal(out->mem[0].base, 0);
	assert_int_equal(out->mem[0].length, 0xa0000);
	assert_int_equal(out->mem[1].base, 0x100000);
	assert_int_equal(out->mem[1].length, 0x20000000 - 0x100000);
	assert_int_equal(sfi_boot_mem_type(out->mem[1].type), BOOT_MEM_USABLE);
	physmem_free(&m);
	free(out);
}

static void test_sfi_gen(void **state)
{
	(void)state;
	gen_and_parse(1, 0x7f00000, 0);
	gen_and_parse(64, 0x7f00010, 0);
	gen_and_parse(244, 0xef180, 224); /* a card's SYST place and BSP */
	/* It refuses what would make a SYST the search cannot find. */
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "%s --cpus 4 --addr 0x7f00008 -o /dev/null 2>/dev/null", SFI_GEN);
	assert_int_not_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s --cpus 4 --addr 0x7f00fe0 -o /dev/null 2>/dev/null", SFI_GEN);
	assert_int_not_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checksum),
		cmocka_unit_test(test_knc_tables),
		cmocka_unit_test(test_find_syst),
		cmocka_unit_test(test_find_syst_at_the_edge),
		cmocka_unit_test(test_other_and_missing_tables),
		cmocka_unit_test(test_duplicate_tables),
		cmocka_unit_test(test_bad_checksum),
		cmocka_unit_test(test_bad_lengths),
		cmocka_unit_test(test_truncated_table),
		cmocka_unit_test(test_too_many_entries),
		cmocka_unit_test(test_overlapping_pointers),
		cmocka_unit_test(test_not_a_syst),
		cmocka_unit_test(test_mmap_ranges),
		cmocka_unit_test(test_boot_mem_types),
		cmocka_unit_test(test_sfi_gen),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
