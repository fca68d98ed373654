/*
 * platform/pc/acpi_parse.c on the host: checksum, MADT, FADT and \_S5 parsers.
 * Every table is handed over in a heap buffer of exactly its length, so
 * AddressSanitizer stops the binary on any read past the end.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "platform/pc/acpi.h"

/* ------------------------------------------------------------ helpers */

static struct acpi_info *new_info(void)
{
	return calloc(1, sizeof(struct acpi_info));
}

static int madt_exact(const uint8_t *bytes, size_t len, struct acpi_info *out)
{
	uint8_t *p = malloc(len);
	memcpy(p, bytes, len);
	int r = acpi_parse_madt(p, len, out);
	free(p);
	return r;
}

static int fadt_exact(const uint8_t *bytes, size_t len, struct acpi_info *out)
{
	uint8_t *p = malloc(len);
	memcpy(p, bytes, len);
	int r = acpi_parse_fadt(p, len, out);
	free(p);
	return r;
}

/* MADT header (44 bytes, LAPIC address 0xFEE00000) followed by `entries`. */
static int madt_with(const uint8_t *entries, size_t n, struct acpi_info *out)
{
	uint8_t *p = calloc(1, 44 + n);
	memcpy(p, "APIC", 4);
	p[4] = (uint8_t)(44 + n);
	p[5] = (uint8_t)((44 + n) >> 8);
	p[38] = 0xe0;
	p[39] = 0xfe;
	if (n)
		memcpy(p + 44, entries, n);
	int r = madt_exact(p, 44 + n, out);
	free(p);
	return r;
}

/* A QEMU-like MADT, 106 bytes, checksum 0xF7 computed offline. */
static const uint8_t qemu_madt[106] = {
	'A', 'P', 'I', 'C', 106, 0, 0, 0, 3, 0xf7,          /* signature, length, revision, checksum */
	'B', 'O', 'C', 'H', 'S', ' ',                      /* OEM ID */
	'B', 'X', 'P', 'C', ' ', ' ', ' ', ' ', 1, 0, 0, 0, /* OEM table ID, revision */
	'B', 'X', 'P', 'C', 1, 0, 0, 0,                    /* creator ID, revision */
	0x00, 0x00, 0xe0, 0xfe, 0x01, 0x00, 0x00, 0x00,    /* LAPIC address 0xFEE00000, flags PCAT_COMPAT */
	0x00, 8, 0, 0, 0x01, 0, 0, 0,                      /* 44: LAPIC uid 0 id 0 enabled */
	0x00, 8, 1, 1, 0x01, 0, 0, 0,                      /* 52: LAPIC uid 1 id 1 enabled */
	0x00, 8, 2, 5, 0x02, 0, 0, 0,                      /* 60: LAPIC uid 2 id 5 online-capable, not enabled */
	0x01, 12, 2, 0, 0x00, 0x00, 0xc0, 0xfe, 0, 0, 0, 0, /* 68: IOAPIC id 2 at 0xFEC00000, GSI base 0 */
	0x02, 10, 0, 0, 2, 0, 0, 0, 0x00, 0x00,            /* 80: ISO bus 0 IRQ 0 -> GSI 2, flags 0 */
	0x02, 10, 0, 9, 9, 0, 0, 0, 0x0d, 0x00,            /* 90: ISO IRQ 9 -> GSI 9, level, active high */
	0x04, 6, 0xff, 0x00, 0x00, 0x01,                   /* 100: LAPIC NMI (ignored) */
};

/* ------------------------------------------------------------ checksum */

/* The checksum is right when all bytes sum to 0 modulo 256. */
static void test_checksum(void **state)
{
	(void)state;
	static const uint8_t zero[1] = { 0 }, ok2[2] = { 0x01, 0xff }, bad2[2] = { 0x01, 0xfe },
			     wrap[3] = { 0x80, 0x80, 0x00 }, bad1[1] = { 0x01 };
	uint8_t t[sizeof(qemu_madt)];

	assert_true(acpi_checksum_ok(zero, 0));
	assert_true(acpi_checksum_ok(zero, 1));
	assert_true(acpi_checksum_ok(ok2, 2));
	assert_false(acpi_checksum_ok(bad2, 2));
	assert_true(acpi_checksum_ok(wrap, 3));
	assert_false(acpi_checksum_ok(bad1, 1));
	assert_false(acpi_checksum_ok(ok2, 1)); /* only len bytes count */
	assert_true(acpi_checksum_ok(qemu_madt, sizeof(qemu_madt)));
	memcpy(t, qemu_madt, sizeof(t));
	t[50] ^= 0x10;
	assert_false(acpi_checksum_ok(t, sizeof(t)));
}

/* ------------------------------------------------------------ MADT */

/* A well-formed MADT: processors (enabled and not), the IOAPIC, the overrides. */
static void test_madt_qemu(void **state)
{
	(void)state;
	struct acpi_info *a = new_info();

	assert_int_equal(madt_exact(qemu_madt, sizeof(qemu_madt), a), 0);
	assert_int_equal(a->lapic_addr, 0xfee00000);
	assert_int_equal(a->ncpus, 3);
	assert_int_equal(a->cpus[0].uid, 0);
	assert_int_equal(a->cpus[0].apic_id, 0);
	assert_true(a->cpus[0].enabled);
	assert_int_equal(a->cpus[1].uid, 1);
	assert_int_equal(a->cpus[1].apic_id, 1);
	assert_true(a->cpus[1].enabled);
	assert_int_equal(a->cpus[2].uid, 2);
	assert_int_equal(a->cpus[2].apic_id, 5);
	assert_false(a->cpus[2].enabled);
	assert_true(a->have_ioapic);
	assert_int_equal(a->ioapic_addr, 0xfec00000);
	assert_int_equal(a->ioapic_gsi_base, 0);
	assert_int_equal(a->niso, 2);
	assert_int_equal(a->iso[0].irq, 0);
	assert_int_equal(a->iso[0].gsi, 2);
	assert_int_equal(a->iso[0].flags, 0);
	assert_int_equal(a->iso[1].irq, 9);
	assert_int_equal(a->iso[1].gsi, 9);
	assert_int_equal(a->iso[1].flags, 0x000d);
	free(a);
}

/* A LAPIC address override (type 5) replaces the 32-bit address with its 64-bit one. */
static void test_madt_lapic_override(void **state)
{
	(void)state;
	static const uint8_t e[] = {
		0x00, 8, 0, 0, 1, 0, 0, 0,
		0x05, 12, 0, 0, 0x00, 0x60, 0x45, 0x23, 0x01, 0x00, 0x00, 0x00, /* 0x123456000 */
	};
	struct acpi_info *a = new_info();

	assert_int_equal(madt_with(e, sizeof(e), a), 0);
	assert_int_equal(a->lapic_addr, 0x123456000ULL);
	assert_int_equal(a->ncpus, 1);
	free(a);
}

/* LAPIC flags: bit 0 alone decides "enabled"; other bits are ignored. */
static void test_madt_lapic_flags(void **state)
{
	(void)state;
	static const uint8_t e[] = {
		0x00, 8, 7, 3, 0x00, 0, 0, 0,    /* disabled */
		0x00, 8, 8, 4, 0x03, 0, 0, 0,    /* enabled + online-capable */
		0x00, 8, 9, 6, 0x00, 0, 0, 0x01, /* bit 24 only: disabled */
	};
	struct acpi_info *a = new_info();

	assert_int_equal(madt_with(e, sizeof(e), a), 0);
	assert_int_equal(a->ncpus, 3);
	assert_false(a->cpus[0].enabled);
	assert_int_equal(a->cpus[0].uid, 7);
	assert_int_equal(a->cpus[0].apic_id, 3);
	assert_true(a->cpus[1].enabled);
	assert_int_equal(a->cpus[1].apic_id, 4);
	assert_false(a->cpus[2].enabled);
	free(a);
}

/* Only the first IOAPIC is kept (it serves the ISA IRQs). */
static void test_madt_first_ioapic(void **state)
{
	(void)state;
	static const uint8_t e[] = {
		0x01, 12, 0, 0, 0x00, 0x00, 0xc0, 0xfe, 0x00, 0, 0, 0,
		0x01, 12, 1, 0, 0x00, 0x10, 0xc0, 0xfe, 0x18, 0, 0, 0,
	};
	struct acpi_info *a = new_info();

	assert_int_equal(madt_with(e, sizeof(e), a), 0);
	assert_true(a->have_ioapic);
	assert_int_equal(a->ioapic_addr, 0xfec00000);
	assert_int_equal(a->ioapic_gsi_base, 0);
	free(a);
}

/* Unknown entry types (NMI, x2APIC, anything) are skipped by their length. */
static void test_madt_unknown_entries(void **state)
{
	(void)state;
	static const uint8_t e[] = {
		0x04, 6, 0xff, 0, 0, 1,                                       /* LAPIC NMI */
		0x09, 16, 0, 0, 0x00, 0x01, 0, 0, 1, 0, 0, 0, 7, 0, 0, 0,     /* x2APIC */
		0x7f, 2,                                                      /* minimal unknown */
		0x00, 8, 1, 2, 1, 0, 0, 0,
	};
	struct acpi_info *a = new_info();

	assert_int_equal(madt_with(e, sizeof(e), a), 0);
	assert_int_equal(a->ncpus, 1);
	assert_int_equal(a->cpus[0].apic_id, 2);
	assert_int_equal(a->niso, 0);
	assert_false(a->have_ioapic);
	free(a);
}

/* A header alone (no entries) is valid. */
static void test_madt_no_entries(void **state)
{
	(void)state;
	struct acpi_info *a = new_info();

	assert_int_equal(madt_with(NULL, 0, a), 0);
	assert_int_equal(a->lapic_addr, 0xfee00000);
	assert_int_equal(a->ncpus, 0);
	free(a);
}

/* A table shorter than the 44-byte MADT header is rejected without reading it. */
static void test_madt_too_short(void **state)
{
	(void)state;
	struct acpi_info *a = new_info();

	for (size_t len = 0; len < 44; len++)
		assert_int_equal(madt_exact(qemu_madt, len, a), -1);
	assert_int_equal(a->ncpus, 0);
	free(a);
}

/* Entry length 0 or 1 is malformed (and would loop forever or misparse). */
static void test_madt_entry_length_0_1(void **state)
{
	(void)state;
	static const uint8_t len0[] = { 0x00, 0, 0, 0, 1, 0, 0, 0 };
	static const uint8_t len1[] = { 0x00, 1, 0, 0, 1, 0, 0, 0 };
	static const uint8_t unk0[] = { 0x7f, 0 };
	/* unknown type, length 1: stepping 1 byte would reparse "12 ..." as a valid IOAPIC */
	static const uint8_t unk1[] = { 0x7f, 1, 12, 0, 0, 0, 0xc0, 0xfe, 0, 0, 0, 0, 0 };
	static const uint8_t after[] = { 0x00, 8, 0, 0, 1, 0, 0, 0, 0x02, 0 };
	struct acpi_info *a = new_info();

	assert_int_equal(madt_with(len0, sizeof(len0), a), -1);
	assert_int_equal(madt_with(len1, sizeof(len1), a), -1);
	assert_int_equal(madt_with(unk0, sizeof(unk0), a), -1);
	assert_int_equal(madt_with(unk1, sizeof(unk1), a), -1);
	assert_int_equal(madt_with(after, sizeof(after), a), -1);
	free(a);
}

/* An entry header or body running past the end of the table is rejected. */
static void test_madt_entry_past_end(void **state)
{
	(void)state;
	static const uint8_t one_byte[] = { 0x00 };                        /* no length byte */
	static const uint8_t lapic[] = { 0x00, 8, 0, 0, 1, 0 };            /* 6 of 8 bytes */
	static const uint8_t ioapic[] = { 0x01, 12, 0, 0, 0, 0, 0xc0, 0xfe, 0, 0, 0 }; /* 11 of 12 */
	static const uint8_t unk[] = { 0x7f, 255, 0, 0 };
	static const uint8_t tail[] = { 0x00, 8, 0, 0, 1, 0, 0, 0, 0x02 }; /* good entry, then 1 byte */
	struct acpi_info *a = new_info();

	assert_int_equal(madt_with(one_byte, sizeof(one_byte), a), -1);
	assert_int_equal(madt_with(lapic, sizeof(lapic), a), -1);
	assert_int_equal(madt_with(ioapic, sizeof(ioapic), a), -1);
	assert_int_equal(madt_with(unk, sizeof(unk), a), -1);
	assert_int_equal(madt_with(tail, sizeof(tail), a), -1);
	free(a);
}

/* An entry shorter than its type's layout is rejected (its fields would be read past it). */
static void test_madt_entry_too_short_for_type(void **state)
{
	(void)state;
	static const uint8_t lapic[] = { 0x00, 6, 0, 0, 1, 0, 0x7f, 2 };
	static const uint8_t ioapic[] = { 0x01, 10, 0, 0, 0, 0, 0xc0, 0xfe, 0, 0, 0x7f, 2 };
	static const uint8_t iso[] = { 0x02, 9, 0, 0, 2, 0, 0, 0, 0, 0x7f, 2 };
	static const uint8_t ovr[] = { 0x05, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 2 };
	struct acpi_info *a = new_info();

	assert_int_equal(madt_with(lapic, sizeof(lapic), a), -1);
	assert_int_equal(madt_with(ioapic, sizeof(ioapic), a), -1);
	assert_int_equal(madt_with(iso, sizeof(iso), a), -1);
	assert_int_equal(madt_with(ovr, sizeof(ovr), a), -1);
	free(a);
}

/* Every truncation of a good table: 0 exactly at entry boundaries, else -1; never out of bounds. */
static void test_madt_every_truncation(void **state)
{
	(void)state;
	for (size_t len = 0; len <= sizeof(qemu_madt); len++) {
		struct acpi_info *a = new_info();
		int boundary = len == 44 || len == 52 || len == 60 || len == 68 || len == 80 ||
			       len == 90 || len == 100 || len == 106;
		assert_int_equal(madt_exact(qemu_madt, len, a), boundary ? 0 : -1);
		free(a);
	}
}

/* At most ACPI_MAX_CPUS processors and ACPI_MAX_ISO overrides are kept. */
static void test_madt_limits(void **state)
{
	(void)state;
	enum { NCPU = 300, NISO = 20 };
	uint8_t *e = calloc(NCPU * 8 + NISO * 10, 1);
	size_t n = 0;

	for (int i = 0; i < NCPU; i++, n += 8) {
		e[n] = 0x00, e[n + 1] = 8, e[n + 2] = (uint8_t)i, e[n + 3] = (uint8_t)(i + 1), e[n + 4] = 1;
	}
	for (int i = 0; i < NISO; i++, n += 10) {
		e[n] = 0x02, e[n + 1] = 10, e[n + 3] = (uint8_t)i, e[n + 4] = (uint8_t)(i + 100);
	}
	struct acpi_info *a = new_info();
	assert_int_equal(madt_with(e, n, a), 0);
	assert_int_equal(a->ncpus, ACPI_MAX_CPUS);
	assert_int_equal(a->cpus[255].uid, 255);
	assert_int_equal(a->cpus[255].apic_id, 0); /* (255 + 1) & 0xff */
	assert_int_equal(a->niso, ACPI_MAX_ISO);
	assert_int_equal(a->iso[15].irq, 15);
	assert_int_equal(a->iso[15].gsi, 115);
	free(a);
	free(e);
}

/* ------------------------------------------------------------ FADT */

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> 8 * i);
}

/* An ACPI 6 FADT (276 bytes): DSDT 0x7FFE0040, PM1a_CNT 0x604, reset 0x06 to port 0xCF9. */
static void make_fadt(uint8_t f[276])
{
	memset(f, 0, 276);
	memcpy(f, "FACP", 4);
	put32(f + 4, 276);
	put32(f + 40, 0x7ffe0040);  /* DSDT */
	put32(f + 64, 0x604);       /* PM1a_CNT_BLK */
	put32(f + 112, 1u << 10);   /* flags: RESET_REG_SUP */
	f[116] = 1;                 /* RESET_REG: system I/O */
	f[117] = 8;                 /* bit width */
	f[119] = 1;                 /* byte access */
	put32(f + 120, 0xcf9);      /* address, low half */
	f[128] = 0x06;              /* RESET_VALUE */
}

/* The fields the kernel uses are read from their ACPI offsets. */
static void test_fadt_full(void **state)
{
	(void)state;
	uint8_t f[276];
	struct acpi_info *a = new_info();

	make_fadt(f);
	assert_int_equal(fadt_exact(f, sizeof(f), a), 0);
	assert_int_equal(a->dsdt, 0x7ffe0040);
	assert_int_equal(a->pm1a_cnt, 0x604);
	assert_true(a->have_reset);
	assert_int_equal(a->reset_port, 0xcf9);
	assert_int_equal(a->reset_value, 0x06);
	free(a);
}

/* A non-zero X_DSDT (offset 140, 64-bit) wins over DSDT. */
static void test_fadt_x_dsdt(void **state)
{
	(void)state;
	uint8_t f[276];
	struct acpi_info *a = new_info();

	make_fadt(f);
	put32(f + 140, 0x00001000);
	put32(f + 144, 0x00000001);
	assert_int_equal(fadt_exact(f, sizeof(f), a), 0);
	assert_int_equal(a->dsdt, 0x100001000ULL);
	free(a);
}

/* The reset register counts only if RESET_REG_SUP is set and it is in system I/O space. */
static void test_fadt_reset_conditions(void **state)
{
	(void)state;
	uint8_t f[276];
	struct acpi_info *a = new_info();

	make_fadt(f);
	put32(f + 112, 0xffffffffu & ~(1u << 10)); /* every flag but RESET_REG_SUP */
	assert_int_equal(fadt_exact(f, sizeof(f), a), 0);
	assert_false(a->have_reset);

	make_fadt(f);
	f[116] = 0; /* system memory space */
	assert_int_equal(fadt_exact(f, sizeof(f), a), 0);
	assert_false(a->have_reset);
	assert_int_equal(a->pm1a_cnt, 0x604);
	free(a);
}

/* Short FADTs (ACPI 1.0 is 116 bytes): only the fields inside len are read. */
static void test_fadt_lengths(void **state)
{
	(void)state;
	uint8_t f[276];
	struct acpi_info *a;

	make_fadt(f);
	put32(f + 140, 0x2000);
	for (size_t len = 0; len < 68; len++) {
		a = new_info();
		assert_int_equal(fadt_exact(f, len, a), -1);
		free(a);
	}
	static const size_t lens[] = { 68, 116, 128, 129, 147, 148, 244 };
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		size_t len = lens[i];
		a = new_info();
		assert_int_equal(fadt_exact(f, len, a), 0);
		assert_int_equal(a->pm1a_cnt, 0x604);
		assert_int_equal(a->have_reset, len >= 129);
		assert_int_equal(a->dsdt, len >= 148 ? 0x2000 : 0x7ffe0040);
		free(a);
	}
}

/* ------------------------------------------------------------ \_S5 */

/* find_s5 on a 36-byte DSDT header followed by `aml`, in an exact-size buffer. */
static int s5(const uint8_t *aml, size_t n)
{
	uint8_t *p = calloc(1, 36 + n);
	memcpy(p, "DSDT", 4);
	if (n)
		memcpy(p + 36, aml, n);
	int r = acpi_find_s5(p, 36 + n);
	free(p);
	return r;
}

#define S5(...) ({ static const uint8_t aml_[] = { __VA_ARGS__ }; s5(aml_, sizeof(aml_)); })
#define NAME_S5 0x08, 0x5f, 0x53, 0x35, 0x5f /* NameOp "_S5_" */

/* SLP_TYPa as ByteConst (0A nn), Zero (00) and One (01). */
static void test_s5_values(void **state)
{
	(void)state;
	assert_int_equal(S5(NAME_S5, 0x12, 0x08, 0x04, 0x0a, 0x05, 0x0a, 0x05, 0x00, 0x00), 5);
	assert_int_equal(S5(NAME_S5, 0x12, 0x08, 0x04, 0x0a, 0x07, 0x0a, 0x07, 0x00, 0x00), 7);
	assert_int_equal(S5(NAME_S5, 0x12, 0x06, 0x04, 0x00, 0x00, 0x00, 0x00), 0);
	assert_int_equal(S5(NAME_S5, 0x12, 0x06, 0x04, 0x01, 0x01, 0x00, 0x00), 1);
	assert_int_equal(S5(NAME_S5, 0x12, 0x05, 0x02, 0x0a, 0xff, 0x00), 255);
}

/* PkgLength with 1..3 extra bytes (lead byte bits 7:6) is skipped whole. */
/* ASL "Name (\\_S5, ...)" puts the root prefix 5C between NameOp and the name. */
static void test_s5_root_prefix(void **state)
{
	(void)state;
	assert_int_equal(S5(0x08, 0x5c, '_', 'S', '5', '_', 0x12, 0x06, 0x04, 0x0a, 0x07, 0x00, 0x00, 0x00), 7);
}

static void test_s5_long_pkglength(void **state)
{
	(void)state;
	assert_int_equal(S5(NAME_S5, 0x12, 0x41, 0x00, 0x04, 0x0a, 0x03), 3);
	assert_int_equal(S5(NAME_S5, 0x12, 0x81, 0x00, 0x00, 0x04, 0x0a, 0x04), 4);
	assert_int_equal(S5(NAME_S5, 0x12, 0xc1, 0x00, 0x00, 0x00, 0x04, 0x0a, 0x06), 6);
}

/* "_S5_" without NameOp before it or without a package after it is passed over. */
static void test_s5_skips_lookalikes(void **state)
{
	(void)state;
	assert_int_equal(S5(0x10, 0x05, 0x5f, 0x53, 0x35, 0x5f, 0x12, 0x04, 0x01, 0x0a, 0x09, /* no NameOp */
			    NAME_S5, 0x0a, 0x05,                                            /* not a package */
			    0x5b, 0x80, NAME_S5, 0x12, 0x06, 0x04, 0x0a, 0x02, 0x00, 0x00), 2);
	assert_int_equal(S5(0xa4, 0x5f, 0x53, 0x35, 0x5f, 0x12, 0x04, 0x01, 0x0a, 0x09), -1);
	assert_int_equal(S5(NAME_S5, 0x0a, 0x05), -1);
}

/* No \_S5 at all, a DSDT of header size or less, and a value of another type give -1. */
static void test_s5_absent(void **state)
{
	(void)state;
	assert_int_equal(S5(0x08, 0x5f, 0x53, 0x34, 0x5f, 0x12, 0x06, 0x04, 0x0a, 0x05), -1); /* _S4_ */
	assert_int_equal(S5(NAME_S5, 0x12, 0x07, 0x04, 0x0b, 0x05, 0x00), -1); /* WordConst */
	assert_int_equal(s5(NULL, 0), -1);
	for (size_t len = 0; len < 36; len++) {
		uint8_t *p = calloc(1, len ? len : 1);
		assert_int_equal(acpi_find_s5(p, len), -1);
		free(p);
	}
}

/* The AML starts after the 36-byte header: an "_S5_" inside the header is not a name. */
static void test_s5_header_not_searched(void **state)
{
	(void)state;
	uint8_t t[44] = { 'D', 'S', 'D', 'T', 44, 0, 0, 0, 0, 0, NAME_S5, 0x12, 0x06, 0x04, 0x0a, 0x05 };
	uint8_t *p = malloc(sizeof(t));

	memcpy(p, t, sizeof(t));
	assert_int_equal(acpi_find_s5(p, sizeof(t)), -1);
	free(p);
}

/* Every truncation of a good \_S5 gives -1 until the value byte is inside the buffer. */
static void test_s5_truncated(void **state)
{
	(void)state;
	static const uint8_t aml[] = { NAME_S5, 0x12, 0x08, 0x04, 0x0a, 0x05, 0x0a, 0x05, 0x00, 0x00 };
	static const uint8_t aml2[] = { NAME_S5, 0x12, 0x81, 0x00, 0x00, 0x04, 0x00 };

	for (size_t n = 0; n <= sizeof(aml); n++)
		assert_int_equal(s5(aml, n), n >= 10 ? 5 : -1);
	for (size_t n = 0; n <= sizeof(aml2); n++)
		assert_int_equal(s5(aml2, n), n >= 11 ? 0 : -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checksum),
		cmocka_unit_test(test_madt_qemu),
		cmocka_unit_test(test_madt_lapic_override),
		cmocka_unit_test(test_madt_lapic_flags),
		cmocka_unit_test(test_madt_first_ioapic),
		cmocka_unit_test(test_madt_unknown_entries),
		cmocka_unit_test(test_madt_no_entries),
		cmocka_unit_test(test_madt_too_short),
		cmocka_unit_test(test_madt_entry_length_0_1),
		cmocka_unit_test(test_madt_entry_past_end),
		cmocka_unit_test(test_madt_entry_too_short_for_type),
		cmocka_unit_test(test_madt_every_truncation),
		cmocka_unit_test(test_madt_limits),
		cmocka_unit_test(test_fadt_full),
		cmocka_unit_test(test_fadt_x_dsdt),
		cmocka_unit_test(test_fadt_reset_conditions),
		cmocka_unit_test(test_fadt_lengths),
		cmocka_unit_test(test_s5_values),
		cmocka_unit_test(test_s5_root_prefix),
		cmocka_unit_test(test_s5_long_pkglength),
		cmocka_unit_test(test_s5_skips_lookalikes),
		cmocka_unit_test(test_s5_absent),
		cmocka_unit_test(test_s5_header_not_searched),
		cmocka_unit_test(test_s5_truncated),
	};

	alarm(60); /* a hang is a failure too */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
