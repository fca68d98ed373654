/*
 * platform/knc/sbox.c on the host: every register word decoder against
 * values the sources give or read from a real card (PHI3120: a 3120A), and
 * the offsets against the sources that state them twice.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "platform/knc/sbox.h"

/* Offsets the sources give both directly and by index. */
static void test_offsets(void **state)
{
	(void)state;
	assert_int_equal(KNC_SPAD(0), 0xab20);              /* LNX-H MIC_X100_SBOX_SPAD0 */
	assert_int_equal(KNC_SPAD(KNC_SPAD_STATUS_CTRL), 0xab40); /* BF xeon_phi_serial.dev ctrl */
	assert_int_equal(KNC_SPAD(KNC_SPAD_STATUS_DATA), 0xab5c); /* BF data */
	assert_int_equal(KNC_SPAD(KNC_SPAD_DOWNLOAD), 0xab28);    /* MPSS SCRATCH2 */
	assert_int_equal(KNC_SPAD(KNC_SPAD_PLATFORM), 0xab30);    /* INTEL-K1OM MIC_SBOX_SCRATCH4 */
	assert_int_equal(KNC_SPAD(KNC_SPAD_IMAGE_SIZE), 0xab34);
	assert_int_equal(KNC_APICICR(KNC_APICICR_BOOT), 0xaa08);  /* LNX-H MIC_X100_SBOX_APICICR7 */
	assert_int_equal(KNC_APICICR_HI(0), 0xa9d4);              /* BF icr_hi */
	assert_int_equal(KNC_SDBIC(1), 0xcc94);                   /* INTEL-K1OM intelmic.c SBOX_SDBIC1 (MK1OM) */
	assert_int_equal(KNC_MXAR(0), 0x9044);
	assert_int_equal(KNC_RDMASR(0), 0xb180);
	assert_int_equal(KNC_CARD_SBOX_BASE - KNC_CARD_DBOX_BASE, KNC_BAR4_SBOX - KNC_BAR4_DBOX);
}

/* POST codes: two ASCII characters, low byte first (BF and PHI3120 tables; MPSS). */
static void test_postcode(void **state)
{
	(void)state;
	static const struct {
		uint32_t v;
		enum knc_post kind;
		const char *text;
	} cases[] = {
		{ KNC_POST_READY, KNC_POST_CODE, "12" },  /* BF postcode_ready 0x3231 */
		{ KNC_POST_DONE, KNC_POST_CODE, "FF" },
		{ 12870, KNC_POST_CODE, "F2" },            /* MPSS RESET_FAILED_F2 */
		{ 13382, KNC_POST_CODE, "F4" },            /* MPSS RESET_FAILED_F4 */
		{ 0x4530, KNC_POST_CODE, "0E" },           /* BF "Program MP table" */
		{ 0x304b, KNC_POST_CODE, "K0" },           /* PHI3120's own card-side codes */
		{ 0, KNC_POST_NOTHING, "??" },
		{ 0xffffffff, KNC_POST_OFF_BUS, "??" },    /* read during reset (PHI3120 reset-2.md) */
		{ 0x00013231, KNC_POST_GARBLED, "??" },
		{ 0x0000310a, KNC_POST_GARBLED, "??" },
		{ 0x00008031, KNC_POST_GARBLED, "??" },
	};
	char out[3];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(knc_postcode_decode(cases[i].v, out), cases[i].kind);
		assert_string_equal(out, cases[i].text);
	}
}

/* SPAD0 0x02e80000 on a 6 GB 3120A (PHI3120 first-contact.md): 5952 MiB, the e820 top. */
static void test_meminfo(void **state)
{
	(void)state;
	struct knc_meminfo m = knc_meminfo_decode(0x02e80000);

	assert_int_equal(m.size, 0x174000000ULL);
	assert_int_equal(m.usage, 0);
	assert_false(m.memtest_disabled);
	m = knc_meminfo_decode(0x00000007);
	assert_true(m.memtest_disabled);
	assert_int_equal(m.usage, 3);
	assert_int_equal(m.size, 0);
	m = knc_meminfo_decode(0xfffffff8);
	assert_int_equal(m.size, 0x1fffffffULL * 1024);
}

/* SPAD2 0x040001c1 at bootstrap-ready on a 3120A: ready, BSP APIC 224, download at 64 MiB. */
static void test_download(void **state)
{
	(void)state;
	struct knc_download d = knc_download_decode(0x040001c1);

	assert_true(d.ready);
	assert_int_equal(d.bsp_apic_id, 224);
	assert_int_equal(d.addr, 0x04000000);
	assert_int_equal(knc_download_encode(true, 224, 0x04000000), 0x040001c1);
	assert_int_equal(knc_download_encode(false, 224, 0x04000000), 0x040001c0);
	d = knc_download_decode(0);                   /* the host's "not ready" (LNX-C reset_fw_ready) */
	assert_false(d.ready);
	assert_int_equal(knc_download_encode(true, 511, 0xfffff000), 0xfffff3ff); /* 11:10 stay 0 */
	assert_int_equal(knc_download_encode(true, 0, 0x04000800), 0); /* not 4 KiB aligned */
	assert_int_equal(knc_download_encode(true, 512, 0x04000000), 0); /* 9 bits */
	d = knc_download_decode(0x00000c00);          /* bits 11:10 unused */
	assert_int_equal(d.addr, 0);
	assert_int_equal(d.bsp_apic_id, 0);
}

/*
 * Where a bootstrap is after an RGCR reset, along the 3120A's POST trace (PHI3120
 * results/2026-09-13-reset-2.md, 10 ms samples): only "12" with SPAD2 ready (0x040001c1,
 * its reading) lets the host write card memory. SPAD2 keeps 0x040001c1 through the reset
 * on that card, so a ready bit alone would pass all through GDDR training.
 */
static void test_bootstrap_state(void **state)
{
	(void)state;
	static const uint32_t trace[] = { /* every code before "12", in order */
		0x6330, 0xffffffff, 0x6330, 0x3033, 0x3933, 0x3433, 0x3733, 0x3933, 0x4333, 0x6433,
		0x4533, 0x4633, 0x3631, 0x3930, 0x4630, 0x3031,
	};

	for (unsigned i = 0; i < sizeof(trace) / sizeof(trace[0]); i++) {
		assert_int_equal(knc_bootstrap_state(trace[i], 0x040001c1), KNC_BOOTSTRAP_BUSY); /* stale SPAD2 */
		assert_int_equal(knc_bootstrap_state(trace[i], 0), KNC_BOOTSTRAP_BUSY);          /* cleared */
	}
	assert_int_equal(knc_bootstrap_state(0x3231, 0x040001c1), KNC_BOOTSTRAP_READY);
	assert_int_equal(knc_bootstrap_state(0x3231, 0x04000001), KNC_BOOTSTRAP_READY);      /* BSP APIC ID 0 */
	assert_int_equal(knc_bootstrap_state(0x3231, 0), KNC_BOOTSTRAP_BUSY);  /* "12" of the last boot, SPAD2 cleared */
	assert_int_equal(knc_bootstrap_state(0x3231, 0x040001c0), KNC_BOOTSTRAP_BUSY); /* not ready */
	assert_int_equal(knc_bootstrap_state(0x3231, 0x000001c1), KNC_BOOTSTRAP_BUSY); /* no download address */
	assert_int_equal(knc_bootstrap_state(0xffffffff, 0xffffffff), KNC_BOOTSTRAP_BUSY); /* off the bus */
	/* SPAD2 read off the bus, POST "12" read once the card was back (the soak saw the
	 * simulated card so, and pmuctl took 0xfffff000 for the download address). */
	assert_int_equal(knc_bootstrap_state(0x3231, 0xffffffff), KNC_BOOTSTRAP_BUSY);
	assert_int_equal(knc_bootstrap_state(12870, 0), KNC_BOOTSTRAP_FAILED);  /* MPSS RESET_FAILED_F2 */
	assert_int_equal(knc_bootstrap_state(13382, 0x040001c1), KNC_BOOTSTRAP_FAILED); /* RESET_FAILED_F4 */
	char two[3];
	assert_int_equal(knc_postcode_decode(KNC_POST_FAILED_F2, two), KNC_POST_CODE);
	assert_string_equal(two, "F2");
	assert_int_equal(knc_postcode_decode(KNC_POST_FAILED_F4, two), KNC_POST_CODE);
	assert_string_equal(two, "F4");
	assert_int_equal(knc_postcode_decode(0x4333, two), KNC_POST_CODE);     /* a training code: "3C" */
	assert_int_equal(two[0], KNC_POST_TRAINING);
}

/* SPAD4 0x2800e6cf on a 3120A: 4 threads, 512 KiB L2, 12 channels, 57 cores, ICC 20. */
static void test_platform(void **state)
{
	(void)state;
	struct knc_platform p = knc_platform_decode(0x2800e6cf);

	assert_int_equal(p.thread_mask, 0xf);
	assert_int_equal(p.threads_per_core, 4);
	assert_int_equal(p.l2_kib, 512);
	assert_int_equal(p.gddr_channels, 12);
	assert_int_equal(p.active_cores, 57);
	assert_int_equal(p.icc_divider, 20);
	assert_false(p.soft_reset);
	assert_false(p.internal_flash);

	p = knc_platform_decode(0xc0000033); /* ICC 0, cache code 3, mask 0b0011, both top bits */
	assert_int_equal(p.icc_divider, KNC_PLATFORM_ICC_NOMINAL); /* MPSS icc_fwd: 0 means 20 */
	assert_int_equal(p.l2_kib, 256);
	assert_int_equal(p.threads_per_core, 2);
	assert_int_equal(p.gddr_channels, 1);
	assert_true(p.soft_reset);
	assert_true(p.internal_flash);
	assert_int_equal(knc_platform_decode(0x3e000000).icc_divider, 31);
	assert_int_equal(knc_platform_decode(0x0000fc00).active_cores, 63);
}

/* CURRENTRATIO 0x04160416 and SPAD4 0x2800e6cf (PHI3120 sbox-registers.md): 1100 MHz. */
static void test_core_clock(void **state)
{
	(void)state;
	struct knc_ratio r = knc_ratio_decode(0x04160416);

	assert_int_equal(r.current, 0x416);
	assert_int_equal(r.goal, 0x416);
	assert_int_equal(r.fb, 11);
	assert_int_equal(r.ff_div, 2);
	assert_int_equal(knc_core_khz(0x2800e6cf, 0x04160416), 1100000);
	/* Feedforward codes: 3 -> /1, 2 -> /2, 1 and 0 -> /4 (INTEL-K1OM BITS_TO_DIV). */
	assert_int_equal(knc_ratio_decode(0x616).ff_div, 1);
	assert_int_equal(knc_ratio_decode(0x216).ff_div, 4);
	assert_int_equal(knc_ratio_decode(0x016).ff_div, 4);
	assert_int_equal(knc_core_khz(0x2800e6cf, 0x616), 2200000);   /* 200 MHz * 11 / 1 */
	assert_int_equal(knc_core_khz(0x2800e6cf, 0x020), 800000);    /* fb 16, /4 */
	/* ICC 0 reads as 20; another divider scales the reference: 4000 / 25 = 160 MHz. */
	assert_int_equal(knc_core_khz(0x0000e6cf, 0x416), 1100000);
	assert_int_equal(knc_core_khz(0x3200e6cf, 0x416), 880000);
	assert_int_equal(knc_core_khz(0x2600e6cf, 0x416), 1157894);   /* 4000 / 19 * 11 / 2, exact to the kHz */
	/* No ratio programmed (fb 0): no clock, not a guess. */
	assert_int_equal(knc_core_khz(0x2800e6cf, 0x600), 0);
	assert_int_equal(knc_ratio_decode(0x0fff0000).goal, 0xfff);
	assert_int_equal(knc_ratio_decode(0x0fff0000).current, 0);
}

/* COREFREQ 0x80010416 and COREVOLT 0xAB on a 3120A (PHI3120): booted, async, ratio 0x416; 1100 mV. */
static void test_corefreq_and_volt(void **state)
{
	(void)state;
	struct knc_corefreq f = knc_corefreq_decode(0x80010416);

	assert_int_equal(f.ratio, 0x416);
	assert_true(f.booted);
	assert_true(f.async);
	assert_false(f.fuse);
	f = knc_corefreq_decode(0x00008000);
	assert_false(f.booted);
	assert_true(f.fuse);
	assert_int_equal(knc_corevolt_mv(0xab), 1100);
	assert_int_equal(knc_corevolt_mv(0x1), 250);
	assert_int_equal(knc_corevolt_mv(0x0), 0);
	assert_int_equal(knc_corevolt_mv(0xffffff01), 250); /* only 7:0 */
}

/* The boot interrupt: LNX-C writes 229 | (1 << 13) after the APIC ID in the high dword. */
static void test_icr(void **state)
{
	(void)state;
	struct knc_icr i = knc_icr_decode(knc_boot_icr_low(), 224);

	assert_int_equal(knc_boot_icr_low(), 0x20e5);
	assert_int_equal(i.vector, KNC_BOOT_VECTOR);
	assert_true(i.send);
	assert_int_equal(i.mode, 0);
	assert_false(i.logical);
	assert_false(i.pending);
	assert_false(i.level);
	assert_false(i.trigger);
	assert_int_equal(i.shorthand, 0);
	assert_int_equal(i.dest, 224);
	/* An INIT, level assert, logical, all-excluding-self (SDM ICR layout, BF icr_lo). */
	i = knc_icr_decode(0x000c5d00, 0);
	assert_int_equal(i.mode, 5);
	assert_true(i.logical);
	assert_true(i.pending);
	assert_true(i.level);
	assert_false(i.trigger);
	assert_int_equal(i.shorthand, 3);
	assert_int_equal(knc_icr_decode(0x8000, 0).trigger, true);
}

/* SICR0/SICE0: Intel enables doorbells 0xF and DMA 0xFF (LNX-C mic_x100_enable_interrupts). */
static void test_doorbells(void **state)
{
	(void)state;
	uint32_t enable = KNC_SI_DOORBELLS | KNC_SI_DMAS;

	assert_int_equal(enable, 0xff0f);
	assert_int_equal(knc_si_doorbells(enable), 0xf);
	assert_int_equal(knc_si_doorbells(KNC_SI_DOORBELL(2) | KNC_SI_SBOX_ERROR | KNC_SI_SPI_DONE), 0x4);
	assert_int_equal(KNC_SI_DMA(0), 0x100);
	assert_int_equal(KNC_SI_DMA(7), 0x8000);
	assert_int_equal(knc_si_doorbells(0xfffffff0), 0);
	assert_int_equal(KNC_SDBIC_DBREQ, 0x80000000u); /* LNX-CARD MIC_X100_SBOX_SDBIC0_DBREQ_BIT */
}

/* Status characters: weever's ">UX\n" (BF tools/weever/boot.S), and SPAD8's stale 0x8086. */
static void test_status_chars(void **state)
{
	(void)state;
	char out[4];
	uint32_t data;

	assert_int_equal(knc_status_decode(0x7a7a7a7a, 0x0a58553e, out), 4);
	assert_memory_equal(out, ">UX\n", 4);
	assert_int_equal(knc_status_decode(0x00008086, 0x12345678, out), 0); /* 3120A at ready */
	assert_int_equal(knc_status_decode(0, 0x41414141, out), 0);
	assert_int_equal(knc_status_decode(0x7a00007a, 0x44434241, out), 2);
	assert_memory_equal(out, "AD", 2);

	assert_int_equal(knc_status_encode(">S0\n", 4, &data), 0x7a7a7a7a); /* BF print_status */
	assert_int_equal(data, 0x0a30533e);
	assert_int_equal(knc_status_encode("ok", 2, &data), 0x00007a7a);
	assert_int_equal(data, 0x00006b6f);
	assert_int_equal(knc_status_encode("12345", 5, &data), 0x7a7a7a7a); /* four at most */
	assert_int_equal(data, 0x34333231);
	assert_int_equal(knc_status_decode(knc_status_encode("ok", 2, &data), data, out), 2);
}

/* ETC: 15.625 MHz, the low 5 bits zero, 64 ns a tick (INTEL-K1OM mic_def.h). */
static void test_etc(void **state)
{
	(void)state;
	uint64_t t = 0;

	assert_true(knc_etc_ticks(0x1, 0xffffffe0, 0x1, &t));
	assert_int_equal(t, 0xfffffffULL);
	assert_true(knc_etc_ticks(0, 0x20, 0, &t));
	assert_int_equal(t, 1);
	t = 77;
	assert_false(knc_etc_ticks(0x1, 0x00000020, 0x2, &t)); /* LOW wrapped between the HIGHs */
	assert_int_equal(t, 77);
	assert_int_equal(knc_etc_ns(KNC_ETC_HZ), 1000000000ULL);
	assert_int_equal(knc_etc_ns(1), 64);
}

/* The accessors on a register file in memory: the SBOX's 64 KiB. */
static void test_accessors(void **state)
{
	(void)state;
	static uint32_t sbox[0x10000 / 4];

	sbox[KNC_SPAD(KNC_SPAD_DOWNLOAD) / 4] = 0x040001c1;
	assert_int_equal(knc_reg_read(sbox, KNC_SPAD(KNC_SPAD_DOWNLOAD)), 0x040001c1);
	knc_reg_write(sbox, KNC_SPAD(KNC_SPAD_IMAGE_SIZE), 2679168);
	assert_int_equal(sbox[0xab34 / 4], 2679168);
	knc_reg_write(sbox, KNC_APICICR_HI(KNC_APICICR_BOOT), 224);
	knc_reg_write(sbox, KNC_APICICR(KNC_APICICR_BOOT), knc_boot_icr_low());
	assert_int_equal(sbox[0xaa08 / 4], 0x20e5);
	assert_int_equal(sbox[0xaa0c / 4], 224);
	sbox[KNC_ETC_HIGH / 4] = 3;
	sbox[KNC_ETC_LOW / 4] = 0x40;
	assert_int_equal(knc_etc_read(sbox), (3ULL << 27) | 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_offsets),
		cmocka_unit_test(test_postcode),
		cmocka_unit_test(test_meminfo),
		cmocka_unit_test(test_download),
		cmocka_unit_test(test_bootstrap_state),
		cmocka_unit_test(test_platform),
		cmocka_unit_test(test_core_clock),
		cmocka_unit_test(test_corefreq_and_volt),
		cmocka_unit_test(test_icr),
		cmocka_unit_test(test_doorbells),
		cmocka_unit_test(test_status_chars),
		cmocka_unit_test(test_etc),
		cmocka_unit_test(test_accessors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
