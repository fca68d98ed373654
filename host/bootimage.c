/* What pmuctl boot copies to a card: the image, checked, and its command line; see host/bootimage.h. */
#define _GNU_SOURCE
#include "host/bootimage.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmuos/mailbox.h>
#include "boot/linux/bzimage_check.h"

uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;

	if (!f) {
		fprintf(stderr, "pmuctl: cannot read %s: %s\n", path, strerror(errno));
		return NULL;
	}
	if (fseek(f, 0, SEEK_END) == 0) {
		long n = ftell(f);
		rewind(f);
		if (n > 0 && n < (1L << 30) && (buf = malloc(n)) && fread(buf, 1, n, f) == (size_t)n)
			*len = n;
		else {
			fprintf(stderr, "pmuctl: cannot read %s: %s\n", path, n >= (1L << 30) ? "larger than 1 GiB" : "empty or unreadable");
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
	return buf;
}

/* CRC-32 of IEEE 802.3 (reflected, polynomial 0xEDB88320; Python's zlib.crc32), bit by bit. */
uint32_t crc32_ieee(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffff;

	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = c >> 1 ^ (0xedb88320 & -(c & 1));
	}
	return ~c;
}

/*
 * The whole command line for an image at card address `at`: the caller's
 * words, the mailbox's place, where image and line are (pmuos.image=, which
 * the kernel keeps out of the RAM it hands out, so that a warm reset finds
 * them: boot/mmap.h) and the image's CRC-32 once booted (pmuos.image_crc=,
 * 0 until then: image_seal; only reset --warm reads it, and refuses an image
 * that changed rather than boot it).
 * The numbers have a fixed width, so the line's length, part of the size it
 * gives, is known before the address.
 */
void line_build(struct boot_image *b, uint32_t at, uint32_t crc)
{
	for (int pass = 0; pass < 2; pass++)
		b->n = snprintf(b->line, sizeof(b->line), "%s%spmuos.mbox=%#llx,%u pmuos.image=0x%08x,0x%08x "
				"pmuos.image_crc=0x%08x", b->extra, *b->extra ? " " : "", (unsigned long long)MBOX_CARD_BASE,
				(unsigned)MBOX_CARD_SIZE, at, (uint32_t)(b->len + (b->n > 0 ? b->n : 0) + 1), crc);
}

/* Checks b->img and builds the command line from extra; 0, or -1 said why. */
int image_prepare(struct boot_image *b, const char *extra)
{
	struct bzimage_info info;
	char why[160];

	if (bzimage_check(b->img, b->len, &info, why, sizeof(why)) != 0) {
		fprintf(stderr, "pmuctl: %s is not a bzImage a card can boot: %s\n", b->what, why);
		return -1;
	}
	b->extra = extra;
	b->n = 0;
	line_build(b, 0, 0);
	if (b->n < 0 || (size_t)b->n > info.cmdline_size || (size_t)b->n >= sizeof(b->line)) {
		fprintf(stderr, "pmuctl: the command line is %d bytes with pmuos.mbox=; %s takes at most %u\n", b->n,
			b->what, info.cmdline_size);
		return -1;
	}
	return 0;
}
