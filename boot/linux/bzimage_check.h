/*
 * Is a file a bzImage that a KNC card's bootstrap (or QEMU's Linux loader)
 * can start at a download address? The checks a host tool makes before it
 * touches a card (issue 11: `pmuctl boot` "checks the image before touching
 * the card"). Host code: not part of the kernel. Field offsets and meanings:
 * Linux Documentation/x86/boot.rst, in boot/linux/bootparams.h.
 */
#ifndef BOOT_LINUX_BZIMAGE_CHECK_H
#define BOOT_LINUX_BZIMAGE_CHECK_H

#include <stddef.h>
#include <stdint.h>

#define BZIMAGE_MIN_PROTOCOL 0x020a /* 2.10: init_size, pref_address, min_alignment */

struct bzimage_info {
	uint16_t protocol;         /* (major << 8) | minor */
	uint32_t setup_size;       /* bytes before the 32-bit part: (setup_sects + 1) * 512 */
	uint32_t code32_size;      /* bytes of the 32-bit part in the file */
	uint32_t cmdline_size;     /* longest command line the kernel takes, bytes without the NUL */
	uint32_t init_size;        /* bytes the kernel needs from its runtime start */
	uint32_t kernel_alignment; /* bytes */
	uint64_t pref_address;     /* physical address */
	char kernel_version[64];   /* the header's version string, "" if none */
};

/*
 * Checks the len-byte file at img. Returns 0 with *info filled, or -1 with
 * a message in why (why_len bytes, NUL-terminated) naming the first
 * problem: too short for a setup header; no "HdrS" at 0x202 (not a Linux
 * kernel image); boot_flag not 0xAA55; protocol older than 2.10; LOADED_HIGH
 * clear (a zImage); not relocatable (runs only at its code32_start); a setup
 * that leaves no 32-bit part; syssize 0, or larger than the 32-bit part
 * the file holds (a truncated file); cmdline_size 0.
 */
int bzimage_check(const uint8_t *img, size_t len, struct bzimage_info *info, char *why, size_t why_len);

#endif
