/*
 * The boot memory map, edited before the page allocator reads it: the
 * host's boot image (pmuos.image=, below) and the mailbox in card memory (`pmuos.mbox=BASE,SIZE` on the command line, the
 * place the host chose when it booted the card) is taken out of the RAM the
 * kernel allocates, as Linux's `memmap=SIZE$BASE` takes a range out
 * (Documentation/admin-guide/kernel-parameters.txt). Pure: host-tested
 * (tests/unit/test_bootmmap.c).
 */
#ifndef BOOT_MMAP_H
#define BOOT_MMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pmuos/bootinfo.h>

/* A physical range, bytes. */
struct boot_range {
	uint64_t base, size;
};

/*
 * Reads `pmuos.mbox=BASE,SIZE` (numbers as parse_u64: decimal or 0x hex)
 * from bi's command line and takes that range out of bi's usable RAM (its
 * entry becomes BOOT_MEM_HOST). BASE must be 4 KiB-aligned, SIZE a power of
 * two from MBOX_MIN_SIZE up, the range inside one usable entry, clear of
 * `keep` (the kernel image) and of every module, and the map must have room
 * for the split. Returns NULL with *out = the range ({0, 0} when the
 * parameter is absent), or why the parameter cannot be used (bi unchanged).
 */
const char *boot_take_host_memory(struct boot_info *bi, struct boot_range keep, struct boot_range *out);

/*
 * Reads `pmuos.image=BASE,SIZE`: where the host left the image it booted and
 * the command line after it (pmuctl boot adds it), and takes that range,
 * rounded up to whole pages, out of bi's usable RAM (a BOOT_MEM_IMAGE
 * entry), so that the image is still there for the host to boot again after
 * a reset (pmuctl reset --warm). BASE must be 4 KiB-aligned, SIZE 1 byte to
 * 1 GiB; the rest as boot_take_host_memory. Returns NULL with *out = the
 * range ({0, 0} when the parameter is absent), or why it cannot be kept.
 */
const char *boot_keep_image(struct boot_info *bi, struct boot_range keep, struct boot_range *out);

/*
 * A page for the AP start-up code (kernel/smp.c): a SIPI vector is a page
 * number below 1 MiB (SDM Vol. 3A, 8.4.4.1), and a card's bootstrap gives
 * RAM there only at 0x50000-0x5FFFF and 0x80000-0xCFFFF (PHI3120
 * docs/results/2026-09-14-p4-tty-smp.md), not at a PC's usual 0x8000.
 *
 * boot_low_page_free: whether the 4 KiB at `page` (4 KiB-aligned, not 0)
 * lie below 1 MiB inside one usable entry of bi's map, clear of every module
 * and of the n ranges `avoid` (what the boot still uses: boot_params, ...).
 * boot_low_page: the highest such page (from the top down, as Linux's
 * memblock allocates its real-mode trampoline), or 0 if there is none.
 */
bool boot_low_page_free(const struct boot_info *bi, uint64_t page, const struct boot_range *avoid, size_t n);
uint64_t boot_low_page(const struct boot_info *bi, const struct boot_range *avoid, size_t n);

#endif
