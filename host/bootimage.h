/* What pmuctl boot copies to a card (host/bootimage.c), for host/boot.c. */
#ifndef HOST_BOOTIMAGE_H
#define HOST_BOOTIMAGE_H

#include <stddef.h>
#include <stdint.h>

#define MBOX_CARD_SIZE (32ull << 20) /* the mailbox boot asks for at MBOX_CARD_BASE (pmuos.mbox=) */

/* What boot copies to a card: a checked image and its whole command line. */
struct boot_image {
	const char *what;   /* for messages: the file, or "the image in card memory" */
	uint8_t *img;       /* malloc'ed */
	size_t len;
	const char *extra;  /* the caller's part of the command line */
	char line[2048];    /* the command line with pmuos.mbox= and pmuos.image= */
	int n;              /* its length, bytes */
};

/* The whole file at path, malloc'ed (under 1 GiB), its length in *len; NULL said why on stderr. */
uint8_t *read_file(const char *path, size_t *len);

/* CRC-32 of IEEE 802.3 (reflected, polynomial 0xEDB88320; Python's zlib.crc32) of p[0..n). */
uint32_t crc32_ieee(const uint8_t *p, size_t n);

/* b->line for an image at card address `at` with CRC crc (0 until sealed); see host/bootimage.c. */
void line_build(struct boot_image *b, uint32_t at, uint32_t crc);

/* Checks b->img is a bzImage a card boots and builds its command line from extra; 0, or -1 said why. */
int image_prepare(struct boot_image *b, const char *extra);

#endif
