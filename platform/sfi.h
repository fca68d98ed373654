/*
 * Simple Firmware Interface (SFI) tables: how a Xeon Phi (KNC) card's
 * bootstrap tells the OS its hardware threads, I/O APIC and memory instead
 * of ACPI ("CPU count, memory map, and other hardware configuration are
 * reported via SFI tables", Intel SSDG 328207 §2.2.4.2 as quoted by
 * Lasimeri/Intel-Phi-3120A docs/research/os-limitations.md; Intel's card
 * kernel has CONFIG_SFI=y; on a 3120A SYST sat at 0xEF180 with 228 CPUs).
 *
 * Layouts: SFI specification 0.8.2 (simplefirmware.org) as carried by Linux
 * include/linux/sfi.h and drivers/sfi/sfi_core.c (v2.6.32-v5.11), and
 * Nautilus include/nautilus/sfi.h ("from SFI Spec 0.8.2"):
 *   every table: a 24-byte header {char sig[4]; u32 len; u8 rev; u8 csum;
 *     char oem_id[6]; char oem_table_id[8]}, all len bytes summing to 0;
 *   SYST: u64 physical addresses of the other tables;
 *   CPUS: u32 local APIC ID per hardware thread;
 *   APIC: u64 I/O APIC register base per I/O APIC;
 *   MMAP: UEFI 2.1 memory descriptors, packed, 36 bytes each: {u32 type;
 *     u64 phys_start; u64 virt_start; u64 pages (4 KiB); u64 attribute}.
 *
 * The parser is pure: it reads physical memory only through the caller's
 * read function (tests/unit/test_sfi.c runs it on table images).
 */
#ifndef PLATFORM_SFI_H
#define PLATFORM_SFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* "The OS finds the System Table by searching 16-byte boundaries between
 * physical address 0x000E0000 and 0x000FFFFF" (SFI 0.8.2, via Linux sfi_core.c). */
#define SFI_SEARCH_START 0xe0000
#define SFI_SEARCH_END   0x100000 /* exclusive */
#define SFI_SEARCH_STEP  16
#define SFI_SYST_PAGE    4096     /* "The SYST shall not cross a 4KB boundary" */

#define SFI_HEADER       24
#define SFI_SYST_ENTRY   8
#define SFI_CPUS_ENTRY   4
#define SFI_APIC_ENTRY   8
#define SFI_MMAP_ENTRY   36
#define SFI_TABLE_MAX    (1u << 20) /* Linux sfi_verify_table: "arbitrary 1MB limit" */
#define SFI_PAGE         4096       /* MMAP's page unit (UEFI) */

#define SFI_MAX_TABLES   32  /* SYST entries looked at */
#define SFI_MAX_CPUS     512 /* KNC APIC IDs are 9 bits (SSDG 4.2.4 per PHI3120) */
#define SFI_MAX_IOAPICS  8
#define SFI_MAX_MEM      64

/* UEFI memory types in MMAP (UEFI 2.x EFI_MEMORY_TYPE). */
enum sfi_uefi_mem {
	SFI_UEFI_RESERVED = 0, SFI_UEFI_LOADER_CODE = 1, SFI_UEFI_LOADER_DATA = 2,
	SFI_UEFI_BOOT_CODE = 3, SFI_UEFI_BOOT_DATA = 4, SFI_UEFI_RUNTIME_CODE = 5,
	SFI_UEFI_RUNTIME_DATA = 6, SFI_UEFI_CONVENTIONAL = 7, SFI_UEFI_UNUSABLE = 8,
	SFI_UEFI_ACPI_RECLAIM = 9, SFI_UEFI_ACPI_NVS = 10, SFI_UEFI_MMIO = 11,
	SFI_UEFI_MMIO_PORT = 12, SFI_UEFI_PAL_CODE = 13, SFI_UEFI_PERSISTENT = 14,
};

struct sfi_mem_range {
	uint64_t base;      /* physical address, bytes */
	uint64_t length;    /* bytes */
	uint32_t type;      /* enum sfi_uefi_mem as given */
	uint64_t attribute; /* UEFI EFI_MEMORY_* bits as given */
};

struct sfi_info {
	uint64_t syst;                      /* SYST's physical address */
	bool have_cpus, have_apic, have_mmap; /* which tables SYST lists */
	uint32_t ncpus;                     /* APIC IDs kept, <= SFI_MAX_CPUS */
	uint32_t cpus_total;                /* APIC IDs in CPUS */
	uint32_t cpu_apic_id[SFI_MAX_CPUS]; /* in table order (the BSP need not be first) */
	uint32_t nioapics, ioapics_total;
	uint64_t ioapic_addr[SFI_MAX_IOAPICS];
	uint32_t nmem, mem_total;
	struct sfi_mem_range mem[SFI_MAX_MEM];
	char error[112];                    /* what was wrong, when sfi_parse fails */
};

/* Reads up to len bytes of physical memory at addr into dst; returns how many it could. */
typedef size_t (*sfi_read_fn)(void *ctx, uint64_t addr, void *dst, size_t len);

/* Bytes sum to 0 mod 256. */
bool sfi_checksum_ok(const void *p, size_t len);

/*
 * Scans [start, end) on 16-byte boundaries from the low end for the first
 * valid SYST: signature, length 24 + a multiple of 8, within one 4 KiB
 * page, all readable, checksum 0. Returns its physical address, 0 if none.
 * The card's window is SFI_SEARCH_START..SFI_SEARCH_END.
 */
uint64_t sfi_find_syst(sfi_read_fn read, void *ctx, uint64_t start, uint64_t end);

/*
 * Reads the SYST at syst and every table it lists: each must be readable,
 * 24 bytes + whole entries long, at most SFI_TABLE_MAX bytes, sum to 0, and
 * overlap no other (nor SYST); as Linux, one bad table rejects them all.
 * The first CPUS, APIC and MMAP tables fill *out (others, e.g. FREQ or
 * OEMx, are only checked); entries beyond SFI_MAX_* are counted in the
 * *_total fields but not kept. Returns 0, or -1 with out->error naming the
 * table, its address and what was wrong (SYST itself: as sfi_find_syst).
 */
int sfi_parse(sfi_read_fn read, void *ctx, uint64_t syst, struct sfi_info *out);

/*
 * The boot memory-map type (include/pmuos/bootinfo.h enum boot_mem_type) of
 * a UEFI memory type, by the UEFI specification's "Memory Type Usage after
 * ExitBootServices()": loader, boot-services and conventional memory are
 * free RAM; ACPI reclaim and NVS stay so; unusable is bad; the rest reserved.
 */
uint32_t sfi_boot_mem_type(uint32_t uefi_type);

/*
 * The kernel's side (platform/sfi_read.c): finds SYST in the card's window
 * of physical memory and parses it into *out, printing what it found.
 * Returns NULL, or why the processors cannot be found from SFI.
 */
const char *sfi_read(struct sfi_info *out);
/*
 * The APIC IDs in sfi that the APIC layout in use can address (up to
 * apic_layout()->max_id: 0xFE xAPIC, 0x1FF KNC), up to max, in table order;
 * returns how many, and says which it skipped.
 */
uint32_t sfi_cpus(const struct sfi_info *sfi, uint32_t *apic_ids, uint32_t max);

#endif
