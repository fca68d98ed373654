/*
 * Our UEFI loader's information -> struct boot_info (boot/uefi/loader.c
 * builds a struct boot_info itself, include/pmuos/bootinfo.h): checked and
 * copied, its counts bounded, like the Multiboot and Linux paths' converters.
 */
#include <pmuos/bootinfo.h>
#include "kernel/boot.h"

bool uefi_to_boot_info(uint64_t info, struct boot_info *bi)
{
	const struct boot_info *in = (const struct boot_info *)info;

	if (in->magic != BOOT_INFO_MAGIC)
		return false;
	*bi = *in;
	if (bi->mmap_count > BOOT_INFO_MMAP_MAX)
		bi->mmap_count = BOOT_INFO_MMAP_MAX;
	if (bi->module_count > BOOT_INFO_MODULES)
		bi->module_count = BOOT_INFO_MODULES;
	return true;
}
