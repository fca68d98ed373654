/*
 * pmuctl's reset and boot of a card (host/boot.c) against a fake card: its
 * BAR4 and memory are files in /dev/shm, as for tests/cardsim/card.py, and
 * the card runs inside the clock's naps (card_time), one virtual ms each, so
 * a 3120A's whole reset (9.3 s) takes no real time. The card replays the
 * 3120A's POST trace after an RGCR reset (PHI3120 results/2026-09-13-reset-2.md)
 * and records what the host did and when: the order of the reset (Linux
 * mic_boot.c mic_reset: mic_x100_reset_fw_ready, then mic_x100_hw_reset;
 * MPSS adapter_reset), card memory untouched before POST "12", the boot
 * interrupt to SPAD2's APIC ID (mic_x100_send_firmware_intr).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <pmuos/mailbox.h>
#include <pmuos/post.h>
#include "boot/linux/bootparams.h"
#include "host/boot.h"
#include "host/mbox.h"
#include "platform/knc/sbox.h"

#define BAR4_BYTES 0x20000
#define MEM_BYTES  (512ull << 20)
#define OFF_BUS    0 /* a trace step: all ones until the next */

/* A 3120A after an RGCR write: ms, POST code (PHI3120 reset-2.md). */
static const struct { unsigned ms; uint32_t code; } trace[] = {
	{ 201, OFF_BUS }, { 211, 0x6330 }, { 362, 0x3033 }, { 372, 0x3933 }, { 443, 0x3433 }, { 463, 0x3733 },
	{ 483, 0x3933 }, { 554, 0x4333 }, { 2389, 0x6433 }, { 5797, 0x4533 }, { 7799, 0x4633 }, { 7971, 0x3631 },
	{ 7992, 0x3930 }, { 9031, 0x4630 }, { 9042, 0x3031 }, { 9296, KNC_POST_READY },
};

static struct {
	char name[64], mmio[96], ram[96];
	volatile uint32_t *regs;   /* BAR4 as words */
	int ram_fd;
	uint64_t now;              /* virtual ms */
	int64_t reset_at;          /* -1: not in a reset */
	unsigned step;
	/* how it behaves */
	uint32_t bsp, download;
	bool early_ready;          /* SPAD2 says ready from "30" on (a ready bit that is not this run's) */
	uint32_t fail_code;        /* shown at "3C", then nothing more */
	/* what it saw */
	unsigned resets;
	uint64_t reset_seen;       /* when it saw RGCR bit 0 */
	uint32_t spad2_at_reset;
	int64_t ready_at, touched_at; /* -1: not yet */
	bool sent;
	uint32_t icr_hi, icr_lo, spad5;
} card;

static uint32_t *reg(uint32_t bar4_off) { return (uint32_t *)&card.regs[bar4_off / 4]; }
#define SBOX(off) (*reg(KNC_BAR4_SBOX + (off)))
#define POST      (*reg(KNC_BAR4_DBOX + KNC_DBOX_POSTCODE))

static uint64_t fake_now(void) { return card.now; }

/* The card's bootstrap at card.now, as far as the trace has got. */
static void card_step(void)
{
	struct stat st;

	if (SBOX(KNC_RGCR) & KNC_RGCR_RESET) {
		card.spad2_at_reset = SBOX(KNC_SPAD(KNC_SPAD_DOWNLOAD));
		card.resets++;
		SBOX(KNC_RGCR) &= ~KNC_RGCR_RESET;
		card.reset_at = (int64_t)card.now;
		card.reset_seen = card.now;
		card.step = 0;
		assert_int_equal(fallocate(card.ram_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, MEM_BYTES), 0);
	}
	if (card.reset_at >= 0 && card.touched_at < 0 && fstat(card.ram_fd, &st) == 0 && st.st_blocks)
		card.touched_at = (int64_t)card.now; /* a page of card memory before "12" */
	while (card.reset_at >= 0 && card.step < sizeof(trace) / sizeof(trace[0]) &&
	       card.now - (uint64_t)card.reset_at >= trace[card.step].ms) {
		uint32_t code = trace[card.step++].code;
		if (code == OFF_BUS) {
			POST = KNC_POST_GONE;
		} else if (code == KNC_POST_READY) {
			SBOX(KNC_SPAD(KNC_SPAD_DOWNLOAD)) = knc_download_encode(true, card.bsp, card.download);
			POST = code;
			card.reset_at = -1;
			card.ready_at = (int64_t)card.now;
		} else if (code == 0x4333 && card.fail_code) {
			POST = card.fail_code;
			card.reset_at = -1;
		} else {
			POST = code;
			if (code == 0x3033 && card.early_ready)
				SBOX(KNC_SPAD(KNC_SPAD_DOWNLOAD)) = 0x040001c1;
		}
	}
	uint32_t lo = SBOX(KNC_APICICR(KNC_APICICR_BOOT));
	if (lo & KNC_ICR_SEND) {
		card.sent = true;
		card.icr_lo = lo;
		card.icr_hi = SBOX(KNC_APICICR_HI(KNC_APICICR_BOOT));
		card.spad5 = SBOX(KNC_SPAD(KNC_SPAD_IMAGE_SIZE));
		SBOX(KNC_APICICR(KNC_APICICR_BOOT)) = lo & ~KNC_ICR_SEND;
		struct mbox_header h = { .magic = MBOX_MAGIC, .version = MBOX_VERSION, .state = MBOX_READY,
					 .cpu_count = 4, .kernel_version = "test" };
		assert_int_equal(pwrite(card.ram_fd, &h, sizeof(h), MBOX_CARD_BASE), (ssize_t)sizeof(h));
	}
}

static void fake_nap(void)
{
	card.now++;
	card_step();
}

static const struct card_time fake_time = { fake_now, fake_nap };
const struct card_time *card_time = &fake_time; /* host/mbox.c's, which this test does not link */

/* A card waiting at "12" with a ready SPAD2, as a 3120A after power-on (0x040001c1 with BSP 224). */
static int card_up(void **state)
{
	(void)state;
	memset(&card, 0, sizeof(card));
	snprintf(card.name, sizeof(card.name), "sim:unitboot%d", (int)getpid());
	snprintf(card.mmio, sizeof(card.mmio), "/dev/shm/pmuos-unitboot%d-mmio", (int)getpid());
	snprintf(card.ram, sizeof(card.ram), "/dev/shm/pmuos-unitboot%d-ram", (int)getpid());
	int fd = open(card.mmio, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0 && ftruncate(fd, BAR4_BYTES) == 0);
	card.regs = mmap(NULL, BAR4_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(card.regs != MAP_FAILED);
	close(fd);
	card.ram_fd = open(card.ram, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(card.ram_fd >= 0 && ftruncate(card.ram_fd, MEM_BYTES) == 0);
	card.bsp = 224;
	card.download = 0x04000000;
	card.reset_at = card.ready_at = card.touched_at = -1;
	SBOX(KNC_SPAD(KNC_SPAD_DOWNLOAD)) = knc_download_encode(true, card.bsp, card.download);
	POST = KNC_POST_READY;
	return 0;
}

static int card_down(void **state)
{
	(void)state;
	munmap((void *)card.regs, BAR4_BYTES);
	close(card.ram_fd);
	unlink(card.mmio);
	unlink(card.ram);
	return 0;
}

/* What f(arg) printed on stderr, in a static buffer. */
static const char *stderr_of(int (*f)(void *), void *arg, int *ret)
{
	static char out[8192];
	FILE *tmp = tmpfile();
	int saved = dup(2);

	fflush(stderr);
	dup2(fileno(tmp), 2);
	*ret = f(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	size_t n = pread(fileno(tmp), out, sizeof(out) - 1, 0);
	out[n == (size_t)-1 ? 0 : n] = 0;
	fclose(tmp);
	return out;
}

static int do_reset(void *arg) { (void)arg; return cmd_card_reset(card.name); }
static int do_boot(void *arg) { return cmd_boot(card.name, arg, "", 0); }

/* pmuctl boot of the built image on a card whose SPAD2 names download; its stderr. */
static const char *boot_at(uint32_t download, int *ret)
{
	card.download = download;
	SBOX(KNC_SPAD(KNC_SPAD_DOWNLOAD)) = knc_download_encode(true, card.bsp, card.download);
	return stderr_of(do_boot, BZIMAGE, ret);
}

/*
 * The reset boot begins with: SPAD2 = 0 before RGCR; nothing in card memory
 * before "12"; done at "12" (9296 ms), not before. The image goes above the
 * mailbox, so the first page written after "12" is the mailbox's.
 */
static void test_reset_order(void **state)
{
	(void)state;
	int r;
	const char *err = boot_at(0x12000000, &r);

	assert_int_equal(r, 0);
	assert_int_equal(card.resets, 1);
	assert_int_equal(card.spad2_at_reset, 0);       /* cleared before the reset, not 0x040001c1 */
	assert_int_equal(card.ready_at - card.reset_seen, 9296);
	assert_true((int64_t)card.now >= card.ready_at); /* returned after "12" */
	assert_true(card.touched_at < 0);               /* no page of card memory before "12" */
	assert_non_null(strstr(err, "card POST code '3C'")); /* seen while training */
	assert_non_null(strstr(err, "card POST code '12'"));
	/* After "12", the mailbox's magic is cleared: a page now exists at MBOX_CARD_BASE. */
	assert_int_equal(lseek(card.ram_fd, 0, SEEK_DATA), (off_t)MBOX_CARD_BASE);
}

/* A ready bit during training (stale, or not this run's) is not enough: POST "12" too. */
static void test_ready_bit_alone_is_not_ready(void **state)
{
	(void)state;
	int r;

	card.early_ready = true;
	boot_at(0x12000000, &r);
	assert_int_equal(r, 0);
	assert_int_equal(card.ready_at - card.reset_seen, 9296);
	assert_true(card.touched_at < 0);
}

/* "F2" (GDDR training failed: MPSS RESET_FAILED_F2) ends the wait with the reason. */
static void test_failed_reset(void **state)
{
	(void)state;
	int r;

	card.fail_code = KNC_POST_FAILED_F2;
	const char *err = boot_at(0x12000000, &r);
	assert_int_equal(r, 1);
	assert_true(card.now - card.reset_seen < 9296);
	assert_non_null(strstr(err, "the card's reset failed (POST code 'F2'"));
	assert_true(card.touched_at < 0);
}

/* The image at SPAD2's address (above the mailbox here), the command line after it, SPAD5, then the
 * interrupt to SPAD2's APIC ID (224, a 3120A's BSP) with vector 229 and SEND (0x20e5). */
static void test_boot_sequence(void **state)
{
	(void)state;
	int r;

	const char *err = boot_at(0x12000000, &r);
	assert_int_equal(r, 0);
	assert_true(card.sent && card.touched_at < 0);
	assert_int_equal(card.icr_hi, 224);
	assert_int_equal(card.icr_lo, 0x20e5);
	FILE *f = fopen(BZIMAGE, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	assert_int_equal(card.spad5, (uint32_t)len);
	uint8_t *img = malloc(len), *got = malloc(len + 128);
	rewind(f);
	assert_int_equal(fread(img, 1, len, f), (size_t)len);
	fclose(f);
	assert_int_equal(pread(card.ram_fd, got, len + 128, card.download), len + 128);
	uint32_t cmd_at = card.download + (uint32_t)len;
	memcpy(img + BP_CMD_LINE_PTR, &cmd_at, 4); /* the copy points at its command line */
	assert_memory_equal(got, img, len);
	/* The line: the mailbox's place, where image and line are, and (once READY) the image's CRC-32. */
	char want[128];
	snprintf(want, sizeof(want), "pmuos.mbox=0x10000000,33554432 pmuos.image=0x12000000,0x%08lx pmuos.image_crc=0x",
		 (unsigned long)len + strlen("pmuos.mbox=0x10000000,33554432 pmuos.image=0x12000000,0x12345678 "
					    "pmuos.image_crc=0x12345678") + 1); /* image, line, NUL */
	assert_memory_equal(got + len, want, strlen(want));
	assert_int_equal(strlen((char *)got + len), strlen(want) + 8);
	assert_string_not_equal((char *)got + len + strlen(want), "00000000");
	assert_non_null(strstr(err, "boot interrupt sent to APIC ID 224"));
	free(img);
	free(got);
}

/*
 * reset --warm: a card never booted is left alone (status 1, the reason);
 * once booted, RGCR and the same image again; an image changed in card
 * memory is refused by its CRC-32, the card not reset.
 */
static void test_warm_reset(void **state)
{
	(void)state;
	int r;

	const char *err = stderr_of(do_reset, NULL, &r);
	assert_int_equal(r, 1);
	assert_int_equal(card.resets, 0);
	assert_non_null(strstr(err, "no image in card memory to boot again: the scratchpads name none"));
	boot_at(0x12000000, &r);
	assert_int_equal(r, 0);
	card.sent = false;
	err = stderr_of(do_reset, NULL, &r);
	assert_int_equal(r, 0);
	assert_int_equal(card.resets, 2);
	assert_true(card.sent);
	assert_non_null(strstr(err, "the image in card memory ("));
	uint8_t b;
	assert_int_equal(pread(card.ram_fd, &b, 1, card.download + 0x3000), 1);
	b ^= 0x80;
	assert_int_equal(pwrite(card.ram_fd, &b, 1, card.download + 0x3000), 1);
	err = stderr_of(do_reset, NULL, &r);
	assert_int_equal(r, 1);
	assert_int_equal(card.resets, 2);
	assert_non_null(strstr(err, "it changed since it was booted (CRC-32 "));
}

/* An image that would reach into the mailbox is refused, and no interrupt sent. */
static void test_boot_refuses_an_overlap(void **state)
{
	(void)state;
	int r;

	const char *err = boot_at(0x0fe00000, &r);
	assert_int_equal(r, 1);
	assert_false(card.sent);
	assert_non_null(strstr(err, "overlap the mailbox's place (0x10000000-0x12000000)"));
	assert_int_equal(lseek(card.ram_fd, card.download, SEEK_DATA), (off_t)MBOX_CARD_BASE); /* nothing below */
}

/* Each mark's two characters as the register holds them (low byte first), and what pmuctl says of it. */
static void test_post_meaning(void **state)
{
	static const struct { uint32_t code; const char *two, *says; } cases[] = {
		{ PMUOS_POST_ENTRY32, "P1", "32-bit entry ran" },
		{ PMUOS_POST_RELOCATED, "P2", "copied to 1 MiB" },
		{ PMUOS_POST_LONG_MODE, "P3", "64-bit mode" },
		{ PMUOS_POST_KERNEL, "P4", "kernel_main ran" },
		{ PMUOS_POST_MEMORY, "P5", "memory, paging" },
		{ PMUOS_POST_APS, "P6", "starting the APs" },
		{ PMUOS_POST_APS_DONE, "P7", "every AP online" },
		{ PMUOS_POST_READY, "P8", "READY" },
		{ PMUOS_POST_AP(0x01), "ab", "APIC ID 0x1," },
		{ PMUOS_POST_AP(0xd0), "na", "APIC ID 0xd0," },
		{ PMUOS_POST_AP(0xf3), "pd", "APIC ID 0xf3," },
		{ PMUOS_POST_RELOCATE_FAILED(1), "R1", "boot_params lies" },
		{ PMUOS_POST_RELOCATE_FAILED(3), "R3", "relocator itself" },
		{ KNC_POST_READY, "12", "waits for an image" },
		{ KNC_POST_DONE, "FF", "never wrote its first mark" },
		{ KNC_POST_FAILED_F2, "F2", "training failed" },
		{ 0x4333, "3C", "GDDR memory training" },
	};
	char out[160], two[3];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(knc_postcode_decode(cases[i].code, two), KNC_POST_CODE);
		assert_string_equal(two, cases[i].two);
		post_meaning(cases[i].code, out, sizeof(out));
		if (!strstr(out, cases[i].says))
			fail_msg("%s: \"%s\" lacks \"%s\"", cases[i].two, out, cases[i].says);
	}
	post_meaning(0x5a5a, out, sizeof(out)); /* "ZZ": nobody's */
	assert_string_equal(out, "");
	post_meaning(PMUOS_POST_AP(0x10) | 1u << 16, out, sizeof(out)); /* not a code at all */
	assert_string_equal(out, "");
	post_meaning(PMUOS_POST_KERNEL, out, 8); /* cut to fit */
	assert_string_equal(out, "kernel_");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reset_order, card_up, card_down),
		cmocka_unit_test_setup_teardown(test_ready_bit_alone_is_not_ready, card_up, card_down),
		cmocka_unit_test_setup_teardown(test_failed_reset, card_up, card_down),
		cmocka_unit_test_setup_teardown(test_boot_sequence, card_up, card_down),
		cmocka_unit_test_setup_teardown(test_boot_refuses_an_overlap, card_up, card_down),
		cmocka_unit_test_setup_teardown(test_warm_reset, card_up, card_down),
		cmocka_unit_test(test_post_meaning),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
