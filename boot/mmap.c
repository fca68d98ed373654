/* The mailbox's place and the host's boot image taken out of the boot memory map; see boot/mmap.h. */
#include "boot/mmap.h"
#include "lib/lib.h"
#include <pmuos/mailbox.h>

#define KEY "pmuos.mbox"
#define IMAGE_KEY "pmuos.image"
#define IMAGE_MAX (1ULL << 30) /* pmuctl boot reads at most a 1 GiB image */

static bool overlaps(uint64_t b1, uint64_t s1, uint64_t b2, uint64_t s2)
{
	return b1 < b2 + s2 && b2 < b1 + s1;
}

/* "BASE,SIZE" of n bytes at v. */
static bool parse_range(const char *v, size_t n, struct boot_range *r)
{
	char buf[48];
	const char *comma = NULL;

	if (n >= sizeof(buf))
		return false;
	memcpy(buf, v, n);
	buf[n] = 0;
	for (size_t i = 0; i < n && !comma; i++)
		if (buf[i] == ',')
			comma = buf + i;
	if (!comma)
		return false;
	buf[comma - buf] = 0;
	return parse_u64(buf, UINT64_MAX, &r->base) && parse_u64(comma + 1, UINT64_MAX, &r->size);
}

/* Takes r out of bi's usable RAM as an entry of `type`; NULL, or why not (bi unchanged). */
static const char *take(struct boot_info *bi, struct boot_range r, uint32_t type, struct boot_range keep)
{
	if (r.base & 0xfff)
		return "BASE is not a multiple of 4 KiB";
	if (r.base + r.size < r.base)
		return "BASE + SIZE is past the end of the address space";
	if (overlaps(r.base, r.size, keep.base, keep.size))
		return "the range overlaps the kernel image";
	for (uint32_t i = 0; i < bi->module_count && i < BOOT_INFO_MODULES; i++)
		if (overlaps(r.base, r.size, bi->modules[i].base, bi->modules[i].size))
			return "the range overlaps a module the loader placed";

	uint32_t i = 0;
	for (; i < bi->mmap_count; i++) {
		const struct boot_mmap_entry *e = &bi->mmap[i];
		if (e->type == BOOT_MEM_USABLE && r.base >= e->base && r.base + r.size <= e->base + e->length)
			break;
	}
	if (i == bi->mmap_count)
		return "the range is not inside one usable RAM range of the memory map";

	/* Entry i becomes up to three: RAM before, the range, RAM after. */
	struct boot_mmap_entry e = bi->mmap[i];
	struct boot_mmap_entry parts[3];
	uint32_t np = 0;
	if (r.base > e.base)
		parts[np++] = (struct boot_mmap_entry){ e.base, r.base - e.base, BOOT_MEM_USABLE, 0 };
	parts[np++] = (struct boot_mmap_entry){ r.base, r.size, type, 0 };
	if (r.base + r.size < e.base + e.length)
		parts[np++] = (struct boot_mmap_entry){ r.base + r.size, e.base + e.length - r.base - r.size,
							BOOT_MEM_USABLE, 0 };
	if (bi->mmap_count + np - 1 > BOOT_INFO_MMAP_MAX)
		return "the memory map has no room for the split";
	memmove(&bi->mmap[i + np], &bi->mmap[i + 1], (bi->mmap_count - i - 1) * sizeof(bi->mmap[0]));
	memcpy(&bi->mmap[i], parts, np * sizeof(parts[0]));
	bi->mmap_count += np - 1;
	return NULL;
}

/* The mailbox's SIZE: a power of two from MBOX_MIN_SIZE. */
static const char *mbox_size(struct boot_range *r)
{
	if (r->size < MBOX_MIN_SIZE || (r->size & (r->size - 1)))
		return "SIZE is not a power of two of at least 1 MiB";
	return NULL;
}

/* The image's SIZE: 1 byte to IMAGE_MAX, kept as whole pages (the allocator hands out pages). */
static const char *image_size(struct boot_range *r)
{
	if (r->size == 0 || r->size > IMAGE_MAX)
		return "SIZE is not 1 byte to 1 GiB";
	r->size = (r->size + 0xfff) & ~0xfffULL;
	return NULL;
}

/* `key`=BASE,SIZE from bi's command line, its SIZE checked (and adjusted) by `size`, taken as `type`. */
static const char *take_param(struct boot_info *bi, const char *key, uint32_t type,
			      const char *(*size)(struct boot_range *), struct boot_range keep, struct boot_range *out)
{
	struct boot_range r;
	const char *v, *why;
	size_t n;

	out->base = out->size = 0;
	if (!cmdline_find(bi->cmdline, key, &v, &n))
		return NULL;
	if (!parse_range(v, n, &r))
		return "not BASE,SIZE (two numbers, decimal or 0x hex)";
	if ((why = size(&r)) || (why = take(bi, r, type, keep)))
		return why;
	*out = r;
	return NULL;
}

const char *boot_take_host_memory(struct boot_info *bi, struct boot_range keep, struct boot_range *out)
{
	return take_param(bi, KEY, BOOT_MEM_HOST, mbox_size, keep, out);
}

const char *boot_keep_image(struct boot_info *bi, struct boot_range keep, struct boot_range *out)
{
	return take_param(bi, IMAGE_KEY, BOOT_MEM_IMAGE, image_size, keep, out);
}

#define LOW_END 0x100000ULL /* 1 MiB */
#define PAGE    0x1000ULL

bool boot_low_page_free(const struct boot_info *bi, uint64_t page, const struct boot_range *avoid, size_t n)
{
	if (!page || page & (PAGE - 1) || page >= LOW_END)
		return false;
	for (uint32_t i = 0; i < bi->module_count && i < BOOT_INFO_MODULES; i++)
		if (overlaps(page, PAGE, bi->modules[i].base, bi->modules[i].size))
			return false;
	for (size_t i = 0; i < n; i++)
		if (overlaps(page, PAGE, avoid[i].base, avoid[i].size))
			return false;
	for (uint32_t i = 0; i < bi->mmap_count && i < BOOT_INFO_MMAP_MAX; i++) {
		const struct boot_mmap_entry *e = &bi->mmap[i];
		if (e->type == BOOT_MEM_USABLE && page >= e->base && page + PAGE <= e->base + e->length)
			return true;
	}
	return false;
}

uint64_t boot_low_page(const struct boot_info *bi, const struct boot_range *avoid, size_t n)
{
	for (uint64_t page = LOW_END - PAGE; page; page -= PAGE)
		if (boot_low_page_free(bi, page, avoid, n))
			return page;
	return 0;
}
