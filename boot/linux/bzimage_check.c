/* bzImage header checks; see boot/linux/bzimage_check.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "boot/linux/bootparams.h"
#include "boot/linux/bzimage_check.h"

#define PARAGRAPH 16 /* syssize unit */
#define SECTOR    512

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t *p) { return rd16(p) | (uint32_t)rd16(p + 2) << 16; }
static uint64_t rd64(const uint8_t *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

static int reject(char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, why_len, fmt, ap);
	va_end(ap);
	return -1;
}

/* The string at kernel_version + 0x200, if it is NUL-terminated inside the setup. */
static void version_string(const uint8_t *img, const struct bzimage_info *in, char *out, size_t out_len)
{
	uint32_t off = rd16(img + BP_KERNEL_VERSION);
	size_t at = (size_t)off + 0x200;

	out[0] = 0;
	if (off == 0 || at >= in->setup_size)
		return;
	const uint8_t *nul = memchr(img + at, 0, in->setup_size - at);
	if (nul && (size_t)(nul - (img + at)) < out_len)
		memcpy(out, img + at, (size_t)(nul - (img + at)) + 1);
}

int bzimage_check(const uint8_t *img, size_t len, struct bzimage_info *info, char *why, size_t why_len)
{
	memset(info, 0, sizeof(*info));
	if (len < BP_HEADER + 4 || rd32(img + BP_HEADER) != BP_HDRS)
		return reject(why, why_len, "no \"HdrS\" at 0x202: not a Linux bzImage");
	if (len < BP_INIT_SIZE + 4)
		return reject(why, why_len, "%zu bytes: too short for a protocol 2.10 setup header", len);
	if (rd16(img + BP_BOOT_FLAG) != 0xaa55)
		return reject(why, why_len, "boot_flag at 0x1fe is 0x%04x, not 0xaa55", rd16(img + BP_BOOT_FLAG));
	info->protocol = rd16(img + BP_VERSION);
	if (info->protocol < BZIMAGE_MIN_PROTOCOL)
		return reject(why, why_len, "boot protocol %u.%02u: 2.10 or later is needed (init_size, pref_address)",
			      info->protocol >> 8, info->protocol & 0xff);
	if (!(img[BP_LOADFLAGS] & BP_LOADED_HIGH))
		return reject(why, why_len, "loadflags bit 0 (LOADED_HIGH) is clear: a zImage, loaded below 1 MiB");
	if (!img[BP_RELOCATABLE])
		return reject(why, why_len, "relocatable_kernel is 0: it runs only at 0x%x, not at a card's download address",
			      rd32(img + BP_CODE32_START));

	uint32_t sects = img[BP_SETUP_SECTS] ? img[BP_SETUP_SECTS] : 4; /* boot.rst: 0 means 4 */
	info->setup_size = (sects + 1) * SECTOR;
	if (info->setup_size >= len)
		return reject(why, why_len, "setup_sects %u: the setup (%u bytes) leaves no 32-bit part in a %zu-byte file",
			      img[BP_SETUP_SECTS], info->setup_size, len);
	info->code32_size = (uint32_t)(len - info->setup_size);
	uint64_t syssize = (uint64_t)rd32(img + BP_SYSSIZE) * PARAGRAPH;
	if (syssize == 0)
		return reject(why, why_len, "syssize is 0: the size of the 32-bit part is unknown");
	/* syssize rounds up to a paragraph: up to 15 bytes more than the file holds. */
	if (syssize > (uint64_t)info->code32_size + PARAGRAPH - 1)
		return reject(why, why_len, "truncated: syssize says the 32-bit part has %llu bytes, the file holds %u",
			      (unsigned long long)syssize, info->code32_size);
	info->cmdline_size = rd32(img + BP_CMDLINE_SIZE);
	if (info->cmdline_size == 0)
		return reject(why, why_len, "cmdline_size is 0: the kernel takes no command line");
	info->init_size = rd32(img + BP_INIT_SIZE);
	info->kernel_alignment = rd32(img + BP_KERNEL_ALIGNMENT);
	info->pref_address = rd64(img + BP_PREF_ADDRESS);
	version_string(img, info, info->kernel_version, sizeof(info->kernel_version));
	return 0;
}
