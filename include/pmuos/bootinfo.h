/*
 * Boot-info block: the one handoff from every boot path to the kernel.
 *
 * Every boot path fills this block and enters the kernel with it (docs/design.md §2):
 *   - Multiboot (QEMU -kernel): boot/multiboot.c converts the Multiboot 1
 *     information structure into this block inside the kernel.
 *   - UEFI (boot/uefi/loader.c): BOOTX64.EFI fills it before it calls
 *     ExitBootServices and jumps to the kernel's ELF64 entry point.
 *   - Linux boot protocol (build/pmuos.bzImage: QEMU -kernel, a KNC card's
 *     bootstrap): boot/linux/bootparams.c converts boot_params inside the kernel.
 *
 * UEFI entry protocol: 64-bit long mode, interrupts disabled, the firmware's
 * identity-mapped page tables still loaded, boot services exited, and
 * RDI = physical address of a struct boot_info below 4 GiB (System V ABI).
 * The kernel ELF is linked at physical addresses (p_paddr == p_vaddr) and the
 * loader places every PT_LOAD segment at p_paddr, zeroing p_memsz - p_filesz.
 *
 * This header is shared by the kernel and the loader: fixed-width types only.
 */
#ifndef PMUOS_BOOTINFO_H
#define PMUOS_BOOTINFO_H

#include <stdint.h>

#define BOOT_INFO_MAGIC     0x4f464e49554d50ULL /* "PMUINFO" little-endian */
#define BOOT_INFO_MMAP_MAX  256
#define BOOT_INFO_CMDLINE   256
#define BOOT_INFO_LOADER    32
#define BOOT_INFO_MODULES   16
#define BOOT_INFO_MODNAME   64

/* Memory-map entry types (the E820/ACPI address-range types). */
enum boot_mem_type {
	BOOT_MEM_USABLE      = 1, /* free RAM the kernel may allocate */
	BOOT_MEM_RESERVED    = 2,
	BOOT_MEM_ACPI_RECLAIM = 3,
	BOOT_MEM_ACPI_NVS    = 4,
	BOOT_MEM_BAD         = 5,
	BOOT_MEM_HOST        = 6, /* pmuos's own: shared with the host (the mailbox in card memory) */
	BOOT_MEM_IMAGE       = 7, /* pmuos's own: the image the host booted, kept to boot again (pmuos.image=) */
};

struct boot_mmap_entry {
	uint64_t base;   /* physical address, bytes */
	uint64_t length; /* bytes */
	uint32_t type;   /* enum boot_mem_type */
	uint32_t reserved;
};

enum boot_path {
	BOOT_PATH_MULTIBOOT = 1,
	BOOT_PATH_UEFI      = 2,
	BOOT_PATH_LINUX     = 3,
};

/* A file the loader placed in memory (Multiboot modules: user programs). */
struct boot_module {
	uint64_t base;   /* physical address, bytes */
	uint64_t size;   /* bytes */
	char name[BOOT_INFO_MODNAME]; /* its file name (no directory), NUL-terminated */
};

struct boot_info {
	uint64_t magic;      /* BOOT_INFO_MAGIC */
	uint32_t boot_path;  /* enum boot_path */
	uint32_t mmap_count; /* valid entries in mmap[], <= BOOT_INFO_MMAP_MAX */
	uint64_t rsdp;       /* physical address of the ACPI RSDP, 0 if unknown */
	char cmdline[BOOT_INFO_CMDLINE]; /* NUL-terminated, may be empty */
	char loader[BOOT_INFO_LOADER];   /* boot loader name, NUL-terminated */
	struct boot_mmap_entry mmap[BOOT_INFO_MMAP_MAX];
	uint32_t module_count;  /* valid entries in modules[] */
	uint32_t reserved;
	struct boot_module modules[BOOT_INFO_MODULES];
};

#endif
