/*
 * pmuctl boot, and reset --warm of a card with registers: a Xeon Phi (KNC)
 * card from reset to a READY pmuos, from user space, as Intel's host driver
 * did (Linux drivers/misc/mic/host/mic_boot.c mic_reset and mic_x100.c,
 * v3.13-v5.9: mic_x100_reset_fw_ready, mic_x100_hw_reset, mic_x100_is_fw_ready,
 * mic_x100_load_firmware, mic_x100_load_command_line,
 * mic_x100_send_firmware_intr; MPSS uos_download.c adapter_reset). Registers: platform/knc/sbox.h, each with
 * its source; facts and open questions: docs/knc.md.
 *
 * Here it runs against the simulated card (tests/cardsim/card.py): its
 * memory and BAR4 are files the simulation plays the bootstrap on. On a
 * real card it maps the same two BARs through sysfs; that has not been run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pmuos/mailbox.h>
#include <pmuos/post.h>
#include "boot/linux/bootparams.h"
#include "boot/linux/bzimage_check.h"
#include "host/boot.h"
#include "host/bootimage.h"
#include "host/cardtext.h"
#include "host/mbox.h"
#include "host/place.h"
#include "platform/knc/sbox.h"

#define BAR4_BYTES     0x20000   /* DBOX + SBOX (docs/knc.md "SBOX and DBOX registers") */
#define RESET_HOLD_MS  1000      /* LNX-C mic_x100_hw_reset: reset, then wait before polling */
#define READY_MS       60000     /* the bootstrap back to ready after a reset: 9.3 s on a 3120A (PHI3120), LNX mic_reset 45 s */
#define BOOT_MS        120000    /* the boot interrupt to a READY mailbox (244 threads in QEMU) */
#define CHUNK          4096      /* aperture writes: 4 KiB, each read back (PHI3120 card.rs) */

struct knc_card {
	struct card_place place;
	int mem_fd, regs_fd;
	uint64_t mem_size;       /* bytes of card memory the host can reach */
	volatile uint8_t *bar4;  /* DBOX at +0, SBOX at +0x10000 */
};

/* Pauses ms on card_time's clock, in its naps: a test's fake card runs in them (tests/unit/test_boot.c). */
static void nap_ms(unsigned ms)
{
	uint64_t end = card_time->now_ms() + ms;

	while (card_time->now_ms() < end)
		card_time->nap();
}

static uint32_t sbox(struct knc_card *k, uint32_t off) { return knc_reg_read(k->bar4 + KNC_BAR4_SBOX, off); }
static void sbox_write(struct knc_card *k, uint32_t off, uint32_t v) { knc_reg_write(k->bar4 + KNC_BAR4_SBOX, off, v); }

static uint32_t postcode(struct knc_card *k) { return knc_reg_read(k->bar4 + KNC_BAR4_DBOX, KNC_DBOX_POSTCODE); }

/* POST code register value v as its two characters, or what it is instead. */
static const char *post(uint32_t v, char buf[16])
{
	char two[3];

	switch (knc_postcode_decode(v, two)) {
	case KNC_POST_CODE: snprintf(buf, 16, "'%s'", two); break;
	case KNC_POST_NOTHING: snprintf(buf, 16, "none yet"); break;
	case KNC_POST_OFF_BUS: snprintf(buf, 16, "off the bus"); break;
	default: snprintf(buf, 16, "garbled"); break;
	}
	return buf;
}

/* pmuos's marks in boot order (include/pmuos/post.h): the milestone reached, and what comes next. */
static const struct {
	uint32_t code;
	const char *meaning;
} marks[] = {
	{ PMUOS_POST_ENTRY32, "the image's 32-bit entry ran; the kernel's copy to 1 MiB was next" },
	{ PMUOS_POST_RELOCATED, "the kernel was copied to 1 MiB; its 32-bit entry and 64-bit mode were next" },
	{ PMUOS_POST_LONG_MODE, "64-bit mode on the boot page tables; kernel_main was next" },
	{ PMUOS_POST_KERNEL, "kernel_main ran and chose the platform; memory, paging and the SFI tables were next" },
	{ PMUOS_POST_MEMORY, "memory, paging and the platform's tables up; the TSC rate, local APIC, timer and PMU "
			     "were next, then the APs" },
	{ PMUOS_POST_APS, "the local APIC, timer and PMU up; starting the APs (one at a time, each AP has its own "
			   "mark)" },
	{ PMUOS_POST_APS_DONE, "every AP online or reported; the PMU calibration and the mailbox were next" },
	{ PMUOS_POST_READY, "the mailbox said READY" },
};

static const char *const relocate_checks[] = {
	"boot_params lies where the kernel goes",
	"the command line lies where the kernel goes",
	"the relocator itself lies where the kernel goes",
};

/* The milestone mark `code` is (marks[]), or NULL. */
static const char *milestone(uint32_t code)
{
	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
		if (code == marks[i].code)
			return marks[i].meaning;
	return NULL;
}

/* The APIC ID an AP mark's two characters name (PMUOS_POST_AP: letters a-p, high nibble first), or -1. */
static int ap_of_mark(const char two[3])
{
	if (two[0] < 'a' || two[0] > 'p' || two[1] < 'a' || two[1] > 'p')
		return -1;
	return (two[0] - 'a') << 4 | (two[1] - 'a');
}

void post_meaning(uint32_t code, char *out, size_t n)
{
	char two[3];
	const char *said = milestone(code);

	out[0] = 0;
	if (knc_postcode_decode(code, two) != KNC_POST_CODE)
		return;
	uint8_t hi = (uint8_t)two[1];
	if (said)
		snprintf(out, n, "%s", said);
	else if (ap_of_mark(two) >= 0)
		snprintf(out, n, "the boot CPU was starting the AP with APIC ID %#x, one at a time",
			 (unsigned)ap_of_mark(two));
	else if (two[0] == 'R' && hi >= '1' && hi <= '3')
		snprintf(out, n, "the image's relocator stopped: %s (check %c, boot/linux/bzimage.S)",
			 relocate_checks[hi - '1'], hi);
	else if (code == KNC_POST_READY)
		snprintf(out, n, "the bootstrap waits for an image: the image never ran");
	else if (code == KNC_POST_DONE)
		snprintf(out, n, "the bootstrap jumped to the image, which never wrote its first mark (P1)");
	else if (code == KNC_POST_FAILED_F2)
		snprintf(out, n, "GDDR memory training failed");
	else if (code == KNC_POST_FAILED_F4)
		snprintf(out, n, "memory preservation failed");
	else if (two[0] == KNC_POST_TRAINING)
		snprintf(out, n, "GDDR memory training");
}

/* Whether code is one of pmuos's marks (not the bootstrap's, not a relocator failure). */
static bool is_mark(uint32_t code)
{
	char two[3];

	return milestone(code) || (knc_postcode_decode(code, two) == KNC_POST_CODE && ap_of_mark(two) >= 0);
}

/*
 * The mark a pmuos.stop=XY word of the command line names (include/pmuos/post.h),
 * in *code (0 without one). 0, or -1 said why: a word that names no mark.
 */
static int stop_mark(const char *line, uint32_t *code)
{
	static const char key[] = "pmuos.stop=";

	*code = 0;
	for (const char *w = line; (w = strstr(w, key)); w++) {
		if (w != line && w[-1] != ' ')
			continue;
		const char *v = w + sizeof(key) - 1;
		size_t n = strcspn(v, " ");
		uint32_t c = n == 2 ? (uint8_t)v[0] | (uint32_t)(uint8_t)v[1] << 8 : 0;
		if (!is_mark(c)) {
			fprintf(stderr, "pmuctl: pmuos.stop=%.*s: not a POST mark (P1-P8, or aa-pp: the AP with that APIC "
				"ID; docs/knc.md \"POST marks\"); the card was not touched\n", (int)n, v);
			return -1;
		}
		*code = c;
	}
	return 0;
}

/* Why a card file cannot be opened, and what to do about it. */
static int open_failed(const struct card_place *p, const char *path)
{
	int e = errno;

	if (e == EACCES || e == EPERM)
		fprintf(stderr, "pmuctl: cannot open %s: %s: run as root, or give your user the card's memory and "
			"registers (chown $USER %s %s; docs/knc.md)\n", path, strerror(e), p->path, p->regs);
	else if (p->dev[0])
		fprintf(stderr, "pmuctl: cannot open %s: %s (no such PCI device? lspci -D -d 8086:)\n", path,
			strerror(e));
	else
		fprintf(stderr, "pmuctl: cannot open %s: %s (is the simulated card running? tests/cardsim/card.py)\n",
			path, strerror(e));
	return -1;
}

static int knc_open(struct knc_card *k, const char *name)
{
	char err[320];
	struct stat st;

	memset(k, 0, sizeof(*k));
	k->mem_fd = k->regs_fd = -1;
	if (card_place_parse(name, &k->place, err, sizeof(err)) != 0) {
		fprintf(stderr, "pmuctl: %s\n", err);
		return -1;
	}
	if (!k->place.regs[0]) {
		fprintf(stderr, "pmuctl: --card %s has no card registers: boot needs a card, --card sim:NAME or pci:BDF\n",
			name);
		return -1;
	}
	if (card_driver_bound(&k->place, err, sizeof(err))) {
		fprintf(stderr, "pmuctl: %s\n", err);
		return -1;
	}
	if (card_decoding_said(&k->place) != 0)
		return -1;
	k->regs_fd = open(k->place.regs, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (k->regs_fd < 0)
		return open_failed(&k->place, k->place.regs);
	if (fstat(k->regs_fd, &st) != 0 || st.st_size < BAR4_BYTES) {
		fprintf(stderr, "pmuctl: %s is not a KNC card's BAR4 (%lld bytes, want %d)\n", k->place.regs,
			(long long)st.st_size, BAR4_BYTES);
		return -1;
	}
	k->bar4 = mmap(NULL, BAR4_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, k->regs_fd, 0);
	if (k->bar4 == MAP_FAILED) {
		fprintf(stderr, "pmuctl: cannot map %s: %s\n", k->place.regs, strerror(errno));
		return -1;
	}
	k->mem_fd = open(k->place.path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (k->mem_fd < 0)
		return open_failed(&k->place, k->place.path);
	if (fstat(k->mem_fd, &st) != 0 || st.st_size <= 0) {
		fprintf(stderr, "pmuctl: %s: no card memory to map\n", k->place.path);
		return -1;
	}
	k->mem_size = st.st_size;
	return 0;
}

static void knc_close(struct knc_card *k)
{
	if (k->bar4 && k->bar4 != MAP_FAILED)
		munmap((void *)k->bar4, BAR4_BYTES);
	if (k->regs_fd >= 0)
		close(k->regs_fd);
	if (k->mem_fd >= 0)
		close(k->mem_fd);
}

/*
 * Copies n bytes to card physical address `at` through the aperture, 4 KiB
 * at a time, each chunk read back. Returns 0, or -1 said why.
 */
static int card_write(struct knc_card *k, uint64_t at, const void *src, size_t n)
{
	uint64_t start = at & ~(uint64_t)(CHUNK - 1), len = at + n - start;
	uint8_t *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, k->mem_fd, (off_t)start);

	if (map == MAP_FAILED) {
		fprintf(stderr, "pmuctl: cannot map card memory at %#llx: %s\n", (unsigned long long)start, strerror(errno));
		return -1;
	}
	volatile uint8_t *dst = map + (at - start);
	const uint8_t *s = src;
	for (size_t done = 0; done < n; done += CHUNK) {
		size_t c = n - done < CHUNK ? n - done : CHUNK;
		for (size_t i = 0; i < c; i++)
			dst[done + i] = s[done + i];
		for (size_t i = 0; i < c; i++)
			if (dst[done + i] != s[done + i]) {
				fprintf(stderr, "pmuctl: card memory at %#llx did not keep what was written\n",
					(unsigned long long)(at + done + i));
				munmap(map, len);
				return -1;
			}
	}
	munmap(map, len);
	return 0;
}

/*
 * Waits up to timeout_ms for the bootstrap to wait for an image: POST "12"
 * and SPAD2's ready bit (knc_bootstrap_state), printing each new POST code.
 * 0 with *dl filled; -1 said why (timeout, or the bootstrap's "F2"/"F4").
 */
static int wait_bootstrap(struct knc_card *k, struct knc_download *dl, unsigned timeout_ms)
{
	char now[16], shown[16] = "";
	uint64_t end = card_time->now_ms() + timeout_ms;

	for (;;) {
		/* The POST code first: SPAD2 read after a "12" was written after it (the bootstrap's order). */
		uint32_t code = postcode(k);
		uint32_t spad2 = sbox(k, KNC_SPAD(KNC_SPAD_DOWNLOAD));
		enum knc_bootstrap state = knc_bootstrap_state(code, spad2);

		post(code, now);
		if (strcmp(now, shown)) {
			fprintf(stderr, "pmuctl: card POST code %s\n", now);
			strcpy(shown, now);
		}
		if (state == KNC_BOOTSTRAP_READY) {
			*dl = knc_download_decode(spad2);
			return 0;
		}
		if (state == KNC_BOOTSTRAP_FAILED) {
			fprintf(stderr, "pmuctl: the card's reset failed (POST code %s: GDDR training or memory "
				"preservation failed; MPSS gives such a card up)\n", now);
			return -1;
		}
		if (card_time->now_ms() > end) {
			fprintf(stderr, "pmuctl: the card's bootstrap is not ready after %u s (last POST code %s)\n",
				timeout_ms / 1000, now);
			return -1;
		}
		nap_ms(50);
	}
}

/*
 * The reset of LNX-C/mic_boot.c mic_reset and MPSS adapter_reset: SPAD2 = 0
 * (the scratchpads survive the reset, sbox.h), RGCR bit 0, 1 s, then the
 * bootstrap ready again within timeout_ms (wait_bootstrap). Nothing touches
 * card memory before that: during GDDR training an aperture write reset a
 * 3120A's host (PHI3120). Then the mailbox's magic in card memory is
 * cleared: what the last pmuos left there must not pass for a running card.
 */
static int hw_reset(struct knc_card *k, struct knc_download *dl, unsigned timeout_ms)
{
	static const uint64_t no_mailbox = 0;

	fprintf(stderr, "pmuctl: resetting the card (SPAD2 = 0, then RGCR)\n");
	sbox_write(k, KNC_SPAD(KNC_SPAD_DOWNLOAD), 0);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	sbox_write(k, KNC_RGCR, sbox(k, KNC_RGCR) | KNC_RGCR_RESET);
	nap_ms(RESET_HOLD_MS);
	if (wait_bootstrap(k, dl, timeout_ms) != 0)
		return -1;
	if (k->mem_size >= MBOX_CARD_BASE + sizeof(no_mailbox) &&
	    card_write(k, MBOX_CARD_BASE, &no_mailbox, sizeof(no_mailbox)) != 0)
		return -1;
	return 0;
}

/* The mailbox header at MBOX_CARD_BASE once it says READY; 0, or -1 said why. */
static int wait_ready(struct knc_card *k, unsigned timeout_ms, uint32_t stop)
{
	struct mbox_header *h = mmap(NULL, sizeof(*h), PROT_READ, MAP_SHARED, k->mem_fd, (off_t)MBOX_CARD_BASE);
	uint64_t end = card_time->now_ms() + timeout_ms;
	char status[64] = "", p[16];
	size_t ns = 0;
	bool line_open = false;

	if (h == MAP_FAILED) {
		fprintf(stderr, "pmuctl: cannot map the mailbox's place: %s\n", strerror(errno));
		return -1;
	}
	while (!(h->magic == MBOX_MAGIC && h->state == MBOX_READY)) {
		/* Before the status characters: a card that stops writes its last words before the mark. */
		uint32_t code = postcode(k);
		/* Status characters the card may leave in SPAD8/SPAD15 (BF convention): taken and acknowledged. */
		char c4[4];
		unsigned n = knc_status_decode(sbox(k, KNC_SPAD(KNC_SPAD_STATUS_CTRL)), sbox(k, KNC_SPAD(KNC_SPAD_STATUS_DATA)), c4);
		if (n) {
			/* Shown as they come; the last ones kept for an error. */
			sbox_write(k, KNC_SPAD(KNC_SPAD_STATUS_CTRL), 0);
			for (unsigned i = 0; i < n; i++) {
				if (!line_open)
					fputs("card: ", stderr);
				if (c4[i] == '\n')
					fputc('\n', stderr);
				else
					print_card_text(stderr, &c4[i], 1);
				line_open = c4[i] != '\n';
				if (ns + 1 == sizeof(status)) {
					memmove(status, status + 1, --ns);
				}
				status[ns++] = c4[i] == '\n' ? ' ' : c4[i];
				status[ns] = 0;
			}
		}
		if (h->magic == MBOX_MAGIC && h->state == MBOX_PANIC) {
			fprintf(stderr, "pmuctl: the card panicked while booting (mailbox state PANIC)\n");
			munmap(h, sizeof(*h));
			return -1;
		}
		if (stop && code == stop) {
			char meaning[160];
			post_meaning(code, meaning, sizeof(meaning));
			if (line_open)
				fputc('\n', stderr);
			fprintf(stderr, "pmuctl: the card stopped at POST mark %s, as pmuos.stop= asked: %s\n", post(code, p),
				meaning);
			munmap(h, sizeof(*h));
			return -1;
		}
		if (card_time->now_ms() > end) {
			fprintf(stderr, "pmuctl: no READY from the card within %u s (card status characters: '", timeout_ms / 1000);
			print_card_text(stderr, status, sizeof(status));
			char meaning[160];
			post_meaning(code, meaning, sizeof(meaning));
			fprintf(stderr, "'; last POST code %s%s%s)\n", post(code, p), meaning[0] ? ": " : "", meaning);
			munmap(h, sizeof(*h));
			return -1;
		}
		if (!n)
			nap_ms(1);
	}
	if (line_open)
		fputc('\n', stderr);
	char version[sizeof(h->kernel_version)];
	memcpy(version, h->kernel_version, sizeof(version)); /* the card's 16 bytes, a NUL among them or not */
	printf("card %s: pmuos ", k->place.path);
	print_card_text(stdout, version, sizeof(version));
	printf(" READY, %u CPUs", h->cpu_count);
	if (h->cpus_online < h->cpu_count)
		printf(" (%u did not come online: the card's messages above say why)", h->cpu_count - h->cpus_online);
	printf("\n");
	munmap(h, sizeof(*h));
	return 0;
}

/*
 * The card is READY: the CRC-32 of the image as its boot left it (the boot
 * code writes its own variables into it as it runs, boot/linux/bzimage.S:
 * the TSC, boot_params, its GDT pointer) goes into the line's
 * pmuos.image_crc= word, in place (the kernel has read its line). 0, or -1
 * said why.
 */
static int image_seal(struct knc_card *k, struct boot_image *b, uint32_t at)
{
	uint64_t start = at & ~(uint64_t)(CHUNK - 1), maplen = at + b->len - start;
	uint8_t *map = mmap(NULL, maplen, PROT_READ, MAP_SHARED, k->mem_fd, (off_t)start);

	if (map == MAP_FAILED) {
		fprintf(stderr, "pmuctl: cannot map the image in card memory at %#x: %s\n", at, strerror(errno));
		return -1;
	}
	uint32_t crc = crc32_ieee(map + (at - start), b->len);
	munmap(map, maplen);
	line_build(b, at, crc);
	return card_write(k, at + b->len, b->line, b->n + 1);
}

/*
 * Resets the card, copies b to it as Intel's loader placed an image (the
 * image at the download address, the command line right after it), sends
 * the boot interrupt and waits for READY. 0, or -1 said why.
 */
static int image_boot(struct knc_card *k, struct boot_image *b, unsigned timeout_s)
{
	struct knc_download dl;
	uint32_t stop;

	if (stop_mark(b->line, &stop) != 0 || hw_reset(k, &dl, timeout_s ? timeout_s * 1000 : READY_MS) != 0)
		return -1;
	uint64_t cmd_at = dl.addr + b->len, end = cmd_at + b->n + 1; /* b->n: fixed by image_prepare */
	if (end > k->mem_size) {
		fprintf(stderr, "pmuctl: image (%zu bytes) and command line at %#x end at %#llx, past card memory\n",
			b->len, dl.addr, (unsigned long long)end);
		return -1;
	}
	if (dl.addr < MBOX_CARD_BASE + MBOX_CARD_SIZE && end > MBOX_CARD_BASE) {
		fprintf(stderr, "pmuctl: image (%zu bytes) and command line at %#x-%#llx overlap the mailbox's place "
			"(%#llx-%#llx)\n", b->len, dl.addr, (unsigned long long)end, (unsigned long long)MBOX_CARD_BASE,
			(unsigned long long)(MBOX_CARD_BASE + MBOX_CARD_SIZE));
		return -1;
	}
	if (MBOX_CARD_BASE + MBOX_CARD_SIZE > k->mem_size) {
		fprintf(stderr, "pmuctl: card memory (%llu MiB) ends before the mailbox's place\n",
			(unsigned long long)(k->mem_size >> 20));
		return -1;
	}
	/* Where the command line is, in the copy's header too (whether the bootstrap sets it is unknown). */
	uint32_t v = (uint32_t)cmd_at;
	memcpy(b->img + BP_CMD_LINE_PTR, &v, sizeof(v));
	line_build(b, dl.addr, 0); /* the CRC once READY: image_seal */
	if (card_write(k, dl.addr, b->img, b->len) != 0 || card_write(k, cmd_at, b->line, b->n + 1) != 0)
		return -1;
	sbox_write(k, KNC_SPAD(KNC_SPAD_IMAGE_SIZE), (uint32_t)b->len);
	/*
	 * The status characters' ctrl word emptied: what the bootstrap or an
	 * earlier boot left there (a 3120A: 0x00008086) is no character of
	 * this boot's (BF usr/drivers/xeon_phi/serial.c xeon_phi_serial_init
	 * clears it after a reset too).
	 */
	sbox_write(k, KNC_SPAD(KNC_SPAD_STATUS_CTRL), 0);
	/* The boot interrupt: destination first, then the low dword that sends (LNX-C mic_x100_send_firmware_intr). */
	sbox_write(k, KNC_APICICR_HI(KNC_APICICR_BOOT), dl.bsp_apic_id);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	sbox_write(k, KNC_APICICR(KNC_APICICR_BOOT), knc_boot_icr_low());
	fprintf(stderr, "pmuctl: %s (%zu bytes) at %#x, command line '%s'; boot interrupt sent to APIC ID %u\n", b->what,
		b->len, dl.addr, b->line, dl.bsp_apic_id);
	if (wait_ready(k, timeout_s ? timeout_s * 1000 : BOOT_MS, stop) != 0)
		return -1;
	return image_seal(k, b, dl.addr);
}

int cmd_boot(const char *name, const char *image, const char *extra, unsigned timeout_s)
{
	/* The image first: nothing touches the card for a file it could not boot. */
	struct boot_image b = { .what = image };
	struct knc_card k;
	int r = 1;
	if (!(b.img = read_file(image, &b.len)) || image_prepare(&b, extra) != 0) {
		free(b.img);
		return 1;
	}
	if (knc_open(&k, name) == 0 && image_boot(&k, &b, timeout_s) == 0)
		r = 0;
	knc_close(&k);
	free(b.img);
	return r;
}

/*
 * The image and command line the last boot left in card memory (SPAD2's
 * download address, SPAD5's size, the command line right after), without
 * the pmuos.mbox= and pmuos.image= that boot adds again. NULL, or why there
 * is none to boot.
 */
static const char *image_from_card(struct knc_card *k, struct boot_image *b, char *extra, size_t extra_len)
{
	struct knc_download dl = knc_download_decode(sbox(k, KNC_SPAD(KNC_SPAD_DOWNLOAD)));
	uint64_t len = sbox(k, KNC_SPAD(KNC_SPAD_IMAGE_SIZE)), at = dl.addr;
	char line[2048], two[3];

	/* Not from a card in reset or training: its memory is not the host's then (wait_bootstrap). */
	if (knc_postcode_decode(postcode(k), two) != KNC_POST_CODE ||
	    two[0] == KNC_POST_TRAINING)
		return "the card is in reset or training (its memory is not the host's)";
	if (!at || !len)
		return "the scratchpads name none (SPAD2's download address or SPAD5's size is 0: never booted)";
	if (at + len + sizeof(line) > k->mem_size || len > (256u << 20))
		return "the scratchpads name one past card memory";
	uint64_t start = at & ~(uint64_t)(CHUNK - 1), maplen = at + len + sizeof(line) - start;
	uint8_t *map = mmap(NULL, maplen, PROT_READ, MAP_SHARED, k->mem_fd, (off_t)start);
	if (map == MAP_FAILED)
		return "card memory cannot be mapped there";
	if (!(b->img = malloc(len))) {
		munmap(map, maplen);
		return "out of host memory";
	}
	memcpy(b->img, map + (at - start), len);
	memcpy(line, map + (at - start) + len, sizeof(line));
	munmap(map, maplen);
	b->len = len;
	b->what = "the image in card memory";
	if (!memchr(line, 0, sizeof(line)))
		return "no command line after it (card memory there was overwritten)";
	/* Every word but the three boot adds again; the CRC the image had when written. */
	static char why[96];
	unsigned long crc = 0;
	bool has_crc = false;
	extra[0] = 0;
	for (char *w = strtok(line, " "); w; w = strtok(NULL, " ")) {
		if (!strncmp(w, "pmuos.image_crc=", 16))
			has_crc = sscanf(w + 16, "%lx", &crc) == 1;
		else if (strncmp(w, "pmuos.mbox=", 11) && strncmp(w, "pmuos.image=", 12) &&
			 strlen(extra) + strlen(w) + 2 < extra_len)
			strcat(strcat(extra, *extra ? " " : ""), w);
	}
	if (!has_crc)
		return "its command line has no pmuos.image_crc= (not booted by this pmuctl, or overwritten)";
	if (!crc)
		return "the card never said READY with it (no CRC-32 of it was taken)";
	if (crc32_ieee(b->img, b->len) != crc) {
		snprintf(why, sizeof(why), "it changed since it was booted (CRC-32 %08x, %08lx when written)",
			 crc32_ieee(b->img, b->len), crc);
		return why;
	}
	return NULL;
}

int cmd_card_reset(const char *name)
{
	struct knc_card k;
	struct boot_image b = { 0 };
	char extra[2048];
	const char *why = NULL;
	int r = 1;

	if (knc_open(&k, name) != 0)
		goto out;
	/*
	 * A warm reset of a card: RGCR, then the same image and command line
	 * again, back to READY. Without an image to boot the card is left as it
	 * is: a reset would only leave it in its bootstrap.
	 */
	if ((why = image_from_card(&k, &b, extra, sizeof(extra)))) {
		fprintf(stderr, "pmuctl: reset --warm: no image in card memory to boot again: %s; the card was not "
			"reset (`pmuctl boot IMAGE` resets and boots it)\n", why);
	} else if (image_prepare(&b, extra) != 0) {
		fprintf(stderr, "pmuctl: reset --warm: the image in card memory was overwritten; the card was not "
			"reset (`pmuctl boot IMAGE` resets and boots it)\n");
	} else if (image_boot(&k, &b, 0) == 0) {
		printf("card %s: reset through RGCR and booted again\n", k.place.path);
		r = 0;
	}
out:
	knc_close(&k);
	free(b.img);
	return r;
}

int card_has_registers(const char *name)
{
	struct card_place p;
	char err[320];

	return card_place_parse(name, &p, err, sizeof(err)) == 0 && p.regs[0] && access(p.regs, F_OK) == 0;
}
