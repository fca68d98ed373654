/*
 * Multiboot 1 information -> struct boot_info (Multiboot Specification
 * 0.6.96, 3.3). The RSDP is not in Multiboot 1: acpi_init() scans for it.
 */
#include <pmuos/bootinfo.h>
#include "kernel/boot.h"
#include "lib/lib.h"
#include "boot/multiboot.h"

/* QEMU names a module by its path: keep the part after the last '/' (the name is what matters). */
static const char *file_name(const char *path)
{
	const char *base = path;

	for (const char *p = path; *p && *p != ' '; p++)
		if (*p == '/')
			base = p + 1;
	return base;
}

bool multiboot_to_boot_info(uint32_t magic, uint32_t info, struct boot_info *bi)
{
	const struct mb_info *mb = (const struct mb_info *)(uint64_t)info;

	if (magic != MB_BOOT_MAGIC || !info)
		return false;
	memset(bi, 0, sizeof(*bi));
	bi->magic = BOOT_INFO_MAGIC;
	bi->boot_path = BOOT_PATH_MULTIBOOT;
	if (mb->flags & MB_INFO_CMDLINE)
		strlcpy(bi->cmdline, (const char *)(uint64_t)mb->cmdline, sizeof(bi->cmdline));
	if (mb->flags & MB_INFO_LOADER)
		strlcpy(bi->loader, (const char *)(uint64_t)mb->boot_loader_name, sizeof(bi->loader));
	if (mb->flags & MB_INFO_MODS) {
		const struct mb_module *m = (const struct mb_module *)(uint64_t)mb->mods_addr;
		for (uint32_t i = 0; i < mb->mods_count && bi->module_count < BOOT_INFO_MODULES; i++) {
			struct boot_module *o = &bi->modules[bi->module_count++];
			o->base = m[i].start;
			o->size = m[i].end > m[i].start ? m[i].end - m[i].start : 0;
			if (m[i].string)
				strlcpy(o->name, file_name((const char *)(uint64_t)m[i].string), sizeof(o->name));
		}
	}
	if (!(mb->flags & MB_INFO_MMAP))
		return true;
	for (uint64_t a = mb->mmap_addr; a + sizeof(struct mb_mmap) <= (uint64_t)mb->mmap_addr + mb->mmap_length &&
	     bi->mmap_count < BOOT_INFO_MMAP_MAX;) {
		const struct mb_mmap *e = (const struct mb_mmap *)a;
		struct boot_mmap_entry *o = &bi->mmap[bi->mmap_count++];

		o->base = e->base;
		o->length = e->length;
		o->type = e->type >= BOOT_MEM_USABLE && e->type <= BOOT_MEM_BAD ? e->type : BOOT_MEM_RESERVED;
		a += e->size + 4;
	}
	return true;
}
