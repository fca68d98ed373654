/*
 * Multiboot 1 (Multiboot Specification 0.6.96, 3.1 and 3.3): the header a
 * kernel carries, the magic a loader passes in EAX and the information it
 * leaves at EBX. One copy for the kernel (boot/entry.S, boot/multiboot.c)
 * and the simulated card's bootstrap (tests/cardsim/knc_bootstrap.c, a
 * 32-bit program): fixed-width and packed, so the same layout in both.
 * Usable from assembly (the structs are C only).
 */
#ifndef BOOT_MULTIBOOT_H
#define BOOT_MULTIBOOT_H

#define MB_HEADER_MAGIC 0x1badb002 /* 3.1.2: the header's first word */
#define MB_HEADER_ALIGN (1 << 0)   /* 3.1.2 flags: modules page-aligned */
#define MB_HEADER_MMAP  (1 << 1)   /*              the memory map wanted */
#define MB_BOOT_MAGIC   0x2badb002 /* 3.2: EAX at the kernel's entry */

/* 3.3: which fields of struct mb_info are valid */
#define MB_INFO_CMDLINE (1u << 2)
#define MB_INFO_MODS    (1u << 3)
#define MB_INFO_MMAP    (1u << 6)
#define MB_INFO_LOADER  (1u << 9)

#ifndef __ASSEMBLER__
#include <stdint.h>

struct mb_info {
	uint32_t flags, mem_lower, mem_upper, boot_device, cmdline;
	uint32_t mods_count, mods_addr, syms[4];
	uint32_t mmap_length, mmap_addr;
	uint32_t drives_length, drives_addr, config_table, boot_loader_name;
} __attribute__((packed));

struct mb_module {
	uint32_t start, end, string, reserved;
} __attribute__((packed));

/* A memory map entry; `size` counts the bytes after itself (3.3). */
struct mb_mmap {
	uint32_t size;
	uint64_t base, length;
	uint32_t type;
} __attribute__((packed));
#endif

#endif
