/*
 * Local APIC and IOAPIC register layout, described once (Intel SDM Vol. 3A,
 * ch. 10/11; 82093AA IOAPIC datasheet). Every accessor in apic/ and every
 * user of the LVT derives from these.
 */
#ifndef APIC_REGS_H
#define APIC_REGS_H

/* APIC IDs any layout can hold: arrays indexed by APIC ID have this many entries. */
#define APIC_ID_LIMIT 512

#ifndef __ASSEMBLER__
#include <stddef.h>
#include <stdint.h>
#endif

/* ---- local APIC, xAPIC MMIO offsets ---- */
#define APIC_DEFAULT_BASE 0xfee00000ULL
#define APIC_ID          0x020 /* where the ID lies: struct apic_layout */
#define APIC_VERSION     0x030
#define APIC_TPR         0x080
#define APIC_EOI         0x0b0
#define APIC_LDR         0x0d0
#define APIC_DFR         0x0e0
#define APIC_SVR         0x0f0
#define APIC_ESR         0x280
#define APIC_ICR_LO      0x300
#define APIC_ICR_HI      0x310 /* the destination: struct apic_layout */
#define APIC_LVT_TIMER   0x320
#define APIC_LVT_THERMAL 0x330
#define APIC_LVT_PC      0x340 /* performance-counter overflow: the PMI (327357-001 §1.4.3.9) */
#define APIC_LVT_LINT0   0x350
#define APIC_LVT_LINT1   0x360
#define APIC_LVT_ERROR   0x370
#define APIC_TIMER_INIT  0x380
#define APIC_TIMER_CUR   0x390
#define APIC_TIMER_DIV   0x3e0

/* IA32_APIC_BASE MSR */
#define APIC_BASE_ENABLE (1ULL << 11)
#define APIC_BASE_BSP    (1ULL << 8)
#define APIC_BASE_ADDR(v) ((v) & 0xffffff000ULL)

/* Spurious-interrupt vector register */
#define APIC_SVR_ENABLE  (1u << 8)

/* LVT entry fields (common to all LVT registers) */
#define APIC_LVT_VECTOR(v)     ((v) & 0xffu)
#define APIC_LVT_DM_FIXED      (0u << 8)
#define APIC_LVT_DM_NMI        (4u << 8)
#define APIC_LVT_DM_EXTINT     (7u << 8)
#define APIC_LVT_PENDING       (1u << 12) /* delivery status, RO */
#define APIC_LVT_MASKED        (1u << 16) /* set by the APIC when it delivers a PMI */
#define APIC_LVT_TIMER_ONESHOT (0u << 17)
#define APIC_LVT_TIMER_PERIODIC (1u << 17)
#define APIC_LVT_TIMER_TSCDEADLINE (2u << 17)

/* Timer divide configuration: divide by 1, for tick-exact deadlines (PMU model) */
#define APIC_TIMER_DIV_1 0xb

/* Interrupt command register, low word */
#define APIC_ICR_VECTOR(v)   ((v) & 0xffu)
#define APIC_ICR_DM_FIXED    (0u << 8)
#define APIC_ICR_DM_NMI      (4u << 8)
#define APIC_ICR_DM_INIT     (5u << 8)
#define APIC_ICR_DM_STARTUP  (6u << 8)
#define APIC_ICR_BUSY        (1u << 12) /* delivery status: send pending */
#define APIC_ICR_ASSERT      (1u << 14)
#define APIC_ICR_LEVEL       (1u << 15)

/* ---- IOAPIC ---- */
#define IOAPIC_REGSEL 0x00
#define IOAPIC_WINDOW 0x10
#define IOAPIC_REG_VER 0x01
#define IOAPIC_VER_MAXREDIR(v) (((v) >> 16) & 0xff)
#define IOAPIC_REDTBL(n) (0x10 + 2 * (n)) /* low word; high word at +1 */
#define IOAPIC_RED_MASKED     (1u << 16)
#define IOAPIC_RED_LEVEL      (1u << 15)
#define IOAPIC_RED_ACTIVE_LOW (1u << 13)
#define IOAPIC_RED_DEST(id)   ((uint32_t)(id) << 24) /* high word */

#ifndef __ASSEMBLER__
/*
 * Where a local APIC keeps APIC IDs, which differs between an xAPIC and a
 * KNC core: the ID field of the ID register (0x20) and the destination
 * field of the ICR's high word (0x310). One layout per platform
 * (platform/platform.h), chosen once at boot (apic_use_layout).
 *
 *   xAPIC: ID in bits 31:24 (8 bits), destination in 31:24 (Intel SDM
 *          Vol. 3A, 10.4.6 "Local APIC ID" and 10.6.1 "Interrupt Command
 *          Register"); ID 0xFF is the broadcast destination (10.6.2.1).
 *   KNC:   ID in bits 31:23 (9 bits), destination in 31:16 (16 bits)
 *          (Barrelfish devices/xapic.dev, id_xeon_phi and icr_hi_xeon_phi;
 *          SSDG 328207 §4.2.4 "expanded ID fields" as quoted by PHI3120,
 *          whose 3120A's boot CPU, ID 0xE0, read 0x70 with the xAPIC layout:
 *          docs/results/2026-09-14-first-boot.md).
 */
struct apic_layout {
	const char *name;    /* "xapic", "knc": the pmuos.apic= value */
	uint8_t id_shift;    /* ID register: the ID's lowest bit */
	uint8_t id_bits;     /* ... and its width */
	uint8_t dest_shift;  /* ICR high word: the destination's lowest bit */
	uint8_t dest_bits;   /* ... and its width */
	uint32_t max_id;     /* the highest ID a CPU can have and be sent an IPI */
};

extern const struct apic_layout apic_layout_xapic, apic_layout_knc;

/* The APIC ID in an ID register value `reg`. */
static inline uint32_t apic_layout_id(const struct apic_layout *l, uint32_t reg)
{
	return (reg >> l->id_shift) & ((1u << l->id_bits) - 1);
}

/* The ID register value that holds APIC ID `id` (the rest zero): the inverse, for tests and simulations. */
static inline uint32_t apic_layout_id_reg(const struct apic_layout *l, uint32_t id)
{
	return (id & ((1u << l->id_bits) - 1)) << l->id_shift;
}

/* The ICR high word that sends to APIC ID `id` (physical destination mode; id <= max_id). */
static inline uint32_t apic_layout_dest(const struct apic_layout *l, uint32_t id)
{
	return (id & ((1u << l->dest_bits) - 1)) << l->dest_shift;
}

/*
 * The layout `pmuos.apic=` names on `cmdline` ("xapic" or "knc"); NULL when
 * the parameter is absent or names neither, and then *bad is the value
 * given (*bad_len bytes; the caller says so) or NULL when absent.
 */
const struct apic_layout *apic_layout_choose(const char *cmdline, const char **bad, size_t *bad_len);

/*
 * The first layout (xAPIC, then KNC) under which ID register value `reg`
 * holds `initial_id` (CPUID.1:EBX[31:24], the 8-bit initial APIC ID) in its
 * low 8 bits; NULL if none. Both read 0 as ID 0: only a non-zero ID tells
 * them apart.
 */
const struct apic_layout *apic_layout_matching(uint32_t reg, uint32_t initial_id);
#endif /* __ASSEMBLER__ */

#endif
