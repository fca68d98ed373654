/*
 * The Linux boot protocol's boot_params ("zero page") -> struct boot_info.
 *
 * Offsets are from Linux Documentation/x86/zero-page.rst and boot.rst (the
 * setup header sits at 0x1F1 of boot_params, as in the image file). The
 * converter is pure: it reads the 4096-byte boot_params it is given and,
 * for the command line, physical memory through the caller's read function,
 * so the host unit tests (tests/unit/test_bootparams.c) run it on images.
 * The offsets are also what boot/linux/bzimage.S lays its header out by.
 */
#ifndef BOOT_LINUX_BOOTPARAMS_H
#define BOOT_LINUX_BOOTPARAMS_H

#define BP_SIZE              4096  /* boot_params is one 4 KiB page */
#define BP_EXT_CMD_LINE_PTR  0x0c8 /* u32: bits 63:32 of the command line's address */
#define BP_SCRATCH           0x1e4 /* u32: "scratch field for the kernel setup code" */
#define BP_E820_ENTRIES      0x1e8 /* u8: valid entries in e820_table */
#define BP_SETUP_SECTS       0x1f1 /* u8: 512-byte setup sectors after the boot sector (0 means 4) */
#define BP_SYSSIZE           0x1f4 /* u32: 32-bit part, 16-byte paragraphs (2.04+) */
#define BP_BOOT_FLAG         0x1fe /* u16: 0xAA55 */
#define BP_JUMP              0x200 /* 0xEB, then the header's length - 2 */
#define BP_HEADER            0x202 /* u32: "HdrS" */
#define BP_VERSION           0x206 /* u16: boot protocol version, (major << 8) | minor */
#define BP_KERNEL_VERSION    0x20e /* u16: offset of a version string, less 0x200 */
#define BP_TYPE_OF_LOADER    0x210 /* u8: 0xTV, T = loader ID, V = version (written by the loader) */
#define BP_LOADFLAGS         0x211 /* u8: bit 0 LOADED_HIGH, bit 6 KEEP_SEGMENTS, bit 7 CAN_USE_HEAP */
#define BP_CODE32_START      0x214 /* u32: where the 32-bit part was loaded / is entered */
#define BP_EXT_LOADER_VER    0x226 /* u8 (2.02+): loader version bits 11:4 */
#define BP_EXT_LOADER_TYPE   0x227 /* u8 (2.02+): loader ID - 0x10 when T = 0xE */
#define BP_CMD_LINE_PTR      0x228 /* u32 (2.02+): the command line's address, 0 = none */
#define BP_INITRD_ADDR_MAX   0x22c /* u32 (2.03+) */
#define BP_KERNEL_ALIGNMENT  0x230 /* u32 (2.05+) */
#define BP_RELOCATABLE       0x234 /* u8 (2.05+) */
#define BP_MIN_ALIGNMENT     0x235 /* u8 (2.10+): log2 of the least alignment */
#define BP_XLOADFLAGS        0x236 /* u16 (2.12+) */
#define BP_CMDLINE_SIZE      0x238 /* u32 (2.06+): longest command line, without the NUL */
#define BP_PREF_ADDRESS      0x258 /* u64 (2.10+) */
#define BP_INIT_SIZE         0x260 /* u32 (2.10+): bytes needed from the runtime start */
#define BP_HANDOVER_OFFSET   0x264 /* u32 (2.11+): EFI handover entry, 0 = none */
#define BP_HEADER_END        0x268 /* end of the header at protocol 2.12 */
#define BP_E820_TABLE        0x2d0 /* 128 entries of {u64 addr; u64 size; u32 type}, packed */

#define BP_HDRS              0x53726448 /* "HdrS" little-endian */
#define BP_E820_MAX          128
#define BP_E820_ENTRY        20
#define BP_LOADED_HIGH       0x01
#define BP_KEEP_SEGMENTS     0x40 /* loadflags bit 6: the 32-bit entry must not rely on boot.rst's GDT */

/* pmuos's cmdline_size: what boot_info.cmdline holds, without the NUL (bootparams.c checks). */
#define BP_PMUOS_CMDLINE_SIZE 255

#ifndef __ASSEMBLER__
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pmuos/bootinfo.h>

/* Reads up to len bytes of physical memory at addr into dst; returns how many it could. */
typedef size_t (*bp_read_fn)(void *ctx, uint64_t addr, void *dst, size_t len);

/* What the conversion found; error is set (and nothing else valid) when it failed. */
struct bp_report {
	const char *error;       /* NULL on success, else what was wrong */
	uint32_t e820_given;     /* e820_entries as the loader wrote it */
	uint32_t e820_used;      /* entries read (at most BP_E820_MAX) */
	bool e820_overlap;       /* entries overlapped; the higher type won */
	uint64_t cmdline_addr;   /* cmd_line_ptr | ext_cmd_line_ptr << 32; 0 = none */
	bool cmdline_truncated;  /* longer than BOOT_INFO_CMDLINE - 1 bytes: cut there */
	bool cmdline_unreadable; /* not all of it could be read (e.g. above 4 GiB) */
};

/*
 * Fills *bi from boot_params (BP_SIZE bytes at bp): boot path
 * BOOT_PATH_LINUX; loader name from type_of_loader (boot.rst's ID table);
 * command line from cmd_line_ptr/ext_cmd_line_ptr (protocol 2.02+) through
 * read(ctx, ...), at most BOOT_INFO_CMDLINE - 1 bytes; memory map from the
 * e820 table, sorted, without overlaps (where entries overlap, the higher
 * E820 type wins, as Linux's arch/x86/kernel/e820.c e820__update_table
 * does, so RAM never covers a reserved range), adjacent equal ranges merged,
 * types other than 1..5 as reserved. rsdp stays 0 (no ACPI pointer in the
 * protocol). Returns 0, or -1 with rep->error naming the problem: no "HdrS"
 * at 0x202, or no e820 entry of non-zero size.
 */
int bootparams_to_boot_info(const uint8_t *bp, bp_read_fn read, void *ctx, struct boot_info *bi,
			    struct bp_report *rep);

#endif /* __ASSEMBLER__ */
#endif
