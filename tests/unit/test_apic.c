/*
 * apic/layout.c on the host: where the local APIC keeps APIC IDs, xAPIC's
 * way (ID and ICR destination in bits 31:24, Intel SDM Vol. 3A 10.4.6 and
 * 10.6.1) and KNC's (ID in bits 31:23, ICR destination in 31:16: Barrelfish
 * devices/xapic.dev id_xeon_phi and icr_hi_xeon_phi), with the readings of
 * a real 3120A: its boot CPU, APIC ID 0xE0 (CPUID's initial APIC ID), read
 * 0x70 through the xAPIC layout (PHI3120 docs/results/2026-09-14-first-boot.md,
 * "APIC ID mismatch. CPUID: 0x00e0 APIC: 0x0070"), 0xE0 through KNC's
 * (2026-09-14-p4-tty-smp.md).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "apic/regs.h"

static const struct apic_layout *const xapic = &apic_layout_xapic, *const knc = &apic_layout_knc;

static void test_the_3120a_boot_cpu(void **state __attribute__((unused)))
{
	/* The register a card's boot CPU holds: ID 0xE0 in bits 31:23. */
	assert_int_equal(apic_layout_id_reg(knc, 0xe0), 0x70000000);
	assert_int_equal(apic_layout_id(knc, 0x70000000), 0xe0);
	assert_int_equal(apic_layout_id(xapic, 0x70000000), 0x70); /* what Linux read through xAPIC's field */
	assert_ptr_equal(apic_layout_matching(0x70000000, 0xe0), knc);
}

static void test_id_register(void **state __attribute__((unused)))
{
	const uint32_t ids[] = { 0, 1, 3, 4, 0xe0, 0xe3, 0xf3, 0xff, 0x100, 0x1ff };
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		assert_int_equal(apic_layout_id_reg(knc, ids[i]), ids[i] << 23);
		assert_int_equal(apic_layout_id(knc, ids[i] << 23), ids[i]);
	}
	assert_int_equal(apic_layout_id_reg(knc, 0x1ff), 0xff800000);
	assert_int_equal(apic_layout_id(knc, 0x007fffff), 0);     /* bits 22:0 are not the ID */
	assert_int_equal(apic_layout_id(knc, 0xffffffff), 0x1ff);
	assert_int_equal(apic_layout_id_reg(xapic, 0xe0), 0xe0000000);
	assert_int_equal(apic_layout_id(xapic, 0x01000000), 1);
	assert_int_equal(apic_layout_id(xapic, 0x00ffffff), 0);
	assert_int_equal(apic_layout_id(xapic, 0xffffffff), 0xff);
	/* QEMU's xAPIC holds ID 1 as 0x01000000: KNC's field reads 2 there. */
	assert_int_equal(apic_layout_id(knc, 0x01000000), 2);
}

static void test_icr_destination(void **state __attribute__((unused)))
{
	assert_int_equal(apic_layout_dest(knc, 0), 0);
	assert_int_equal(apic_layout_dest(knc, 1), 0x00010000);
	assert_int_equal(apic_layout_dest(knc, 224), 0x00e00000);
	assert_int_equal(apic_layout_dest(knc, 243), 0x00f30000); /* a 7120's last thread */
	assert_int_equal(apic_layout_dest(knc, 0x1ff), 0x01ff0000);
	assert_int_equal(apic_layout_dest(xapic, 0), 0);
	assert_int_equal(apic_layout_dest(xapic, 1), 0x01000000);
	assert_int_equal(apic_layout_dest(xapic, 224), 0xe0000000);
	/* Sent with xAPIC's field, KNC ID 1's INIT would go to ID 0x100 (bits 31:16 = 0x0100). */
	assert_int_equal(apic_layout_dest(xapic, 1) >> 16, 0x100);
	assert_int_equal(xapic->max_id, 0xfe);
	assert_int_equal(knc->max_id, 0x1ff);
	assert_true(knc->max_id < APIC_ID_LIMIT && xapic->max_id < APIC_ID_LIMIT);
}

static void test_matching(void **state __attribute__((unused)))
{
	assert_ptr_equal(apic_layout_matching(0x01000000, 1), xapic);
	assert_ptr_equal(apic_layout_matching(0x00800000, 1), knc);
	assert_ptr_equal(apic_layout_matching(0, 0), xapic);            /* ID 0 cannot tell them apart */
	assert_null(apic_layout_matching(0x70000000, 0x71));
	assert_ptr_equal(apic_layout_matching(0x80000000, 0), knc);     /* KNC ID 0x100: CPUID's 8 bits are 0 */
}

static void test_boot_switch(void **state __attribute__((unused)))
{
	const char *bad;
	size_t n;

	assert_null(apic_layout_choose("platform=knc", &bad, &n));
	assert_null(bad);
	assert_ptr_equal(apic_layout_choose("a=1 pmuos.apic=xapic platform=knc", &bad, &n), xapic);
	assert_null(bad);
	assert_ptr_equal(apic_layout_choose("pmuos.apic=knc", &bad, &n), knc);
	assert_null(bad);
	assert_null(apic_layout_choose("pmuos.apic=x2apic", &bad, &n));
	assert_non_null(bad);
	assert_int_equal(n, 6);
	assert_memory_equal(bad, "x2apic", 6);
	assert_null(apic_layout_choose("pmuos.apic=xapicc", &bad, &n));
	assert_int_equal(n, 6);
	assert_null(apic_layout_choose("pmuos.apic= x", &bad, &n));
	assert_non_null(bad);
	assert_int_equal(n, 0);
	assert_null(apic_layout_choose("pmuos.apicx=xapic", &bad, &n));
	assert_null(bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_3120a_boot_cpu),
		cmocka_unit_test(test_id_register),
		cmocka_unit_test(test_icr_destination),
		cmocka_unit_test(test_matching),
		cmocka_unit_test(test_boot_switch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
