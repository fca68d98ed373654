/*
 * The boot memory map, edited before the page allocator reads it: the
 * mailbox in card memory (`pmuos.mbox=BASE,SIZE` on the command line, the
 * place the host chose when it booted the card) is taken out of the RAM the
 * kernel allocates, as Linux's `memmap=SIZE$BASE` takes a range out
 * (Documentation/admin-guide/kernel-parameters.txt). Pure: host-tested
 * (tests/unit/test_bootmmap.c).
 */
#ifndef BOOT_MMAP_H
#define BOOT_MMAP_H

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

#endif
