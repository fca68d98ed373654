/*
 * ACPI tables the kernel reads: RSDP -> RSDT/XSDT -> MADT (processors,
 * IOAPIC, interrupt overrides) and FADT (PM1 control for poweroff, the reset
 * register, DSDT's \_S5 sleep type). ACPI 6.x spec, ch. 5.2.
 */
#ifndef PLATFORM_PC_ACPI_H
#define PLATFORM_PC_ACPI_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

#define ACPI_MAX_CPUS 256
#define ACPI_MAX_ISO  16

struct acpi_cpu {
	uint8_t apic_id;
	uint8_t uid;
	bool enabled; /* MADT flags bit 0; disabled ones are not started */
};

struct acpi_iso {       /* interrupt source override */
	uint8_t irq;    /* ISA IRQ */
	uint32_t gsi;
	uint16_t flags; /* MPS INTI flags: polarity bits 1:0, trigger bits 3:2 */
};

struct acpi_info {
	uint64_t rsdp;
	uint64_t lapic_addr;
	uint32_t ncpus;
	struct acpi_cpu cpus[ACPI_MAX_CPUS];
	bool have_ioapic;
	uint64_t ioapic_addr;
	uint32_t ioapic_gsi_base;
	uint32_t niso;
	struct acpi_iso iso[ACPI_MAX_ISO];
	uint32_t pm1a_cnt;     /* I/O port of PM1a_CNT, 0 if none */
	bool have_reset;       /* FADT RESET_REG, system I/O space only */
	uint16_t reset_port;
	uint8_t reset_value;
	int s5_slp_typ;        /* \_S5 SLP_TYPa, -1 if not found */
	uint64_t dsdt;
};

extern struct acpi_info acpi;

/*
 * Finds the RSDP (rsdp_hint from the boot info, else the BIOS areas) and
 * reads the MADT and FADT into `acpi`. Returns false with a message printed
 * if no valid RSDP or MADT is found.
 */
bool acpi_init(uint64_t rsdp_hint);

/* ---- pure parsers (no memory outside the given buffer is read) ---- */

/* Sum of all bytes is 0 mod 256. */
bool acpi_checksum_ok(const void *p, size_t len);
/*
 * Parses a whole MADT (header included, len = header length field, bytes).
 * Returns 0, or -1 if the table is too short or an entry's length would run
 * past its end. At most ACPI_MAX_CPUS processors are kept.
 */
int acpi_parse_madt(const uint8_t *madt, size_t len, struct acpi_info *out);
/* Parses a FADT (len bytes, header included): PM1a_CNT, reset register, DSDT. */
int acpi_parse_fadt(const uint8_t *fadt, size_t len, struct acpi_info *out);
/* Finds \_S5's SLP_TYPa in a DSDT's AML; -1 if absent or malformed. */
int acpi_find_s5(const uint8_t *dsdt, size_t len);

#endif
