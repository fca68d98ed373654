/*
 * Local APIC and IOAPIC register layout, described once (Intel SDM Vol. 3A,
 * ch. 10/11; 82093AA IOAPIC datasheet). Every accessor in apic/ and every
 * user of the LVT derives from these.
 */
#ifndef APIC_REGS_H
#define APIC_REGS_H

/* ---- local APIC, xAPIC MMIO offsets ---- */
#define APIC_DEFAULT_BASE 0xfee00000ULL
#define APIC_ID          0x020 /* bits 31:24 */
#define APIC_VERSION     0x030
#define APIC_TPR         0x080
#define APIC_EOI         0x0b0
#define APIC_LDR         0x0d0
#define APIC_DFR         0x0e0
#define APIC_SVR         0x0f0
#define APIC_ESR         0x280
#define APIC_ICR_LO      0x300
#define APIC_ICR_HI      0x310 /* destination in bits 31:24 */
#define APIC_LVT_TIMER   0x320
#define APIC_LVT_THERMAL 0x330
#define APIC_LVT_PC      0x340 /* performance-counter overflow: the PMI (327357-001 §1.4.3.9) */
#define APIC_LVT_LINT0   0x350
#define APIC_LVT_LINT1   0x360
#define APIC_LVT_ERROR   0x370
#define APIC_TIMER_INIT  0x380
#define APIC_TIMER_CUR   0x390
#define APIC_TIMER_DIV   0x3e0

#define APIC_ID_GET(v)   ((v) >> 24)

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
#define APIC_ICR_DEST(id)    ((uint32_t)(id) << 24) /* in ICR_HI */

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

#endif
