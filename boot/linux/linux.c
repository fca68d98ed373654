/*
 * The kernel's side of the Linux boot protocol: boot_params (its address
 * from the bzImage's 32-bit entry, boot/linux/bzimage.S) -> boot_info, with
 * what the conversion found said on the console.
 */
#include "boot/linux/bootparams.h"
#include "kernel/boot.h"
#include "kernel/console.h"
#include "lib/lib.h"

#define BOOT_MAP_END (4ULL << 30) /* boot/entry.S identity-maps the low 4 GiB */

/* Physical memory as the boot page tables map it: the low 4 GiB. */
static size_t read_mapped(void *ctx, uint64_t addr, void *dst, size_t len)
{
	if (addr >= BOOT_MAP_END)
		return 0;
	len = MIN(len, BOOT_MAP_END - addr);
	memcpy(dst, (const void *)addr, len);
	return len;
}

bool linux_to_boot_info(uint64_t boot_params, struct boot_info *bi)
{
	struct bp_report r;

	if (bootparams_to_boot_info((const uint8_t *)boot_params, read_mapped, NULL, bi, &r) != 0) {
		kprintf("pmuos: boot_params at %#lx: %s\n", boot_params, r.error);
		return false;
	}
	if (r.e820_used < r.e820_given)
		kprintf("pmuos: boot_params: e820_entries is %u, the table holds %u: the rest are ignored\n",
			r.e820_given, r.e820_used);
	if (r.e820_overlap)
		kprintf("pmuos: boot_params: e820 entries overlap; where they do, the higher type counts\n");
	if (r.cmdline_truncated)
		kprintf("pmuos: command line at %#lx is longer than %u bytes: cut there\n", r.cmdline_addr,
			BOOT_INFO_CMDLINE - 1);
	if (r.cmdline_unreadable)
		kprintf("pmuos: command line at %#lx: only %lu bytes readable below 4 GiB, no NUL among them\n",
			r.cmdline_addr, strlen(bi->cmdline));
	return true;
}
