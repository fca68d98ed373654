/*
 * Local APIC interface (docs/design.md §4): register access, LVT entries, IPIs
 * (fixed, INIT, SIPI), EOI, the timer, and the IOAPIC routes the kernel
 * uses. The performance-counter LVT (0x340) is programmed only through
 * apic_lvt_pc_*(), which pmu/ owns.
 */
#ifndef APIC_APIC_H
#define APIC_APIC_H

#include <stdint.h>
#include <stdbool.h>
#include "apic/regs.h"

/*
 * The ID layout every APIC access uses from now on (apic/regs.h: the
 * platform's, or the one pmuos.apic= names). BSP, before apic_init_bsp.
 */
void apic_use_layout(const struct apic_layout *l);
/* layout.c: the register page (apic_init_bsp) and the layout in use; read through the accessors below. */
extern volatile uint8_t *apic_mmio;
extern const struct apic_layout *apic_layout_in_use;

static inline const struct apic_layout *apic_layout(void)
{
	return apic_layout_in_use;
}
/* The local APIC's physical base (IA32_APIC_BASE): its page must be mapped uncached (SDM Vol. 3A, 10.4.1: strong UC). */
uint64_t apic_phys_base(void);
/* Points the accessors below at the local APIC, on the BSP, once that page is mapped. */
void apic_init_bsp(void);
/*
 * The layout under which the calling CPU's ID register holds CPUID's
 * initial APIC ID (CPUID.1:EBX[31:24], 8 bits): the one in use if it does,
 * else the first that does (apic_layout_matching); NULL if none. A card's
 * boot CPU (ID 0xE0) tells xAPIC and KNC apart; a CPU with ID 0 cannot.
 */
const struct apic_layout *apic_fitting_layout(void);
/* Enables the calling CPU's local APIC: SVR, LVTs masked, TPR 0. */
void apic_enable_local(void);

/* A local APIC register (apic/regs.h offsets); inline: the PMI and EOI paths are counted (bench/pmi.py). */
static inline uint32_t apic_read(uint32_t reg)
{
	return *(volatile uint32_t *)(apic_mmio + reg);
}

static inline void apic_write(uint32_t reg, uint32_t v)
{
	*(volatile uint32_t *)(apic_mmio + reg) = v;
}

/* The calling CPU's APIC ID (0..apic_layout()->max_id). */
static inline uint32_t apic_id(void)
{
	return apic_layout_id(apic_layout(), apic_read(APIC_ID));
}

/* End of interrupt for the vector in service; inline, as the two above. */
static inline void apic_eoi(void)
{
	apic_write(APIC_EOI, 0);
}

/* LVT 0x340: fixed delivery to `vector`, masked or not. */
void apic_lvt_pc_set(uint8_t vector, bool masked);
/*
 * Clears the mask bit the APIC set when it delivered the PMI (327357-001
 * §1.4.3.9): writes the entry apic_lvt_pc_set last gave, unmasked, without
 * reading it first (one register access per PMI, not two).
 */
void apic_lvt_pc_unmask(void);
uint32_t apic_lvt_pc_read(void);
/*
 * What the APIC does when the PMU's interrupt line rises (327357-001 §1.4.3.9), for
 * a PMU implemented in software: unless LVT 0x340 is masked, set its mask
 * bit and raise its vector on this CPU. Returns false (the edge is lost, as
 * in hardware) if the entry was masked.
 */
bool apic_lvt_pc_raise(void);
/*
 * The delivery's auto-mask alone (327357-001 §1.4.3.9): sets LVT 0x340's mask bit
 * and returns its vector, or -1 (the edge is lost) if it was masked. For a
 * PMU in software whose line rises while the CPU handles an interrupt or
 * system call: the caller takes the PMI at once on that context
 * (irq_invoke), which is where the CPU would take the raised vector.
 */
int apic_lvt_pc_take(void);

/*
 * IPIs to one APIC ID. Each waits (bounded, ~1 ms) for the previous send to
 * leave the ICR; returns false if the ICR stayed busy.
 */
bool apic_send_fixed(uint32_t apic_id, uint8_t vector);
/* The same to the calling CPU itself (apic_on_ipi_sent's function is not called). */
bool apic_send_self(uint8_t vector);
/*
 * Registers fn(), called on the sending CPU after each IPI above sent to
 * another CPU (fixed, INIT assert, SIPI), in any context. One; init/main.c
 * gives it the platform's (platform/platform.h ipi_sent).
 */
void apic_on_ipi_sent(void (*fn)(void));
/* INIT, level-triggered: assert, then de-assert (Linux arch/x86/kernel/smpboot.c send_init_sequence). */
bool apic_send_init(uint32_t apic_id);
bool apic_send_init_deassert(uint32_t apic_id);
/* Start-up IPI: the AP starts in real mode at page << 12. */
bool apic_send_sipi(uint32_t apic_id, uint8_t page);

/* Timer. apic_timer_calibrate() runs once on the BSP, after tsc_hz is measured (platform_time_init). */
void apic_timer_calibrate(void);
/* Sets up the calling CPU's APIC timer to raise `vector`; it stays stopped until apic_timer_set. */
void apic_timer_init_local(uint8_t vector);
/*
 * Arms the calling CPU's APIC timer to interrupt at TSC tick `deadline`
 * (one-shot mode: at least 1 APIC tick from now, at most 2^32 - 1 ticks,
 * after which the core re-arms); 0 stops it.
 */
void apic_timer_set(uint64_t deadline);

/*
 * Masks the 8259 PICs for good and every pin of the IOAPIC at physical
 * address `base` (0: none), whose first pin is GSI `gsi_base`.
 */
void ioapic_init(uint64_t base, uint32_t gsi_base);
/* IOAPIC: route GSI to `vector` on APIC ID `dest` (edge/level, polarity); false if no pin has that GSI. */
bool ioapic_route(uint32_t gsi, uint8_t vector, uint32_t dest, bool level, bool active_low);

#endif
