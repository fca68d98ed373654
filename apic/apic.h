/*
 * Local APIC interface (DESIGN §4): register access, LVT entries, IPIs
 * (fixed, NMI, INIT, SIPI), EOI, the timer, and the IOAPIC routes the kernel
 * uses. The performance-counter LVT (0x340) is programmed only through
 * apic_lvt_pc_*(), which pmu/ owns.
 */
#ifndef APIC_APIC_H
#define APIC_APIC_H

#include <stdint.h>
#include <stdbool.h>
#include "apic/regs.h"

struct trap_frame; /* kernel/irq.h */

/* Maps the local APIC (physical base from IA32_APIC_BASE) on the BSP. */
void apic_init_bsp(void);
/* Enables the calling CPU's local APIC: SVR, LVTs masked, TPR 0. */
void apic_enable_local(void);

uint32_t apic_read(uint32_t reg);
void apic_write(uint32_t reg, uint32_t v);
/* The calling CPU's APIC ID (0..255). */
uint32_t apic_id(void);
void apic_eoi(void);

/* LVT 0x340: fixed delivery to `vector`, masked or not. */
void apic_lvt_pc_set(uint8_t vector, bool masked);
/* Clears the mask bit the APIC set when it delivered the PMI (000 §1.4.3.9). */
void apic_lvt_pc_unmask(void);
uint32_t apic_lvt_pc_read(void);
/*
 * What the APIC does when the PMU's interrupt line rises (000 §1.4.3.9), for
 * a PMU implemented in software: unless LVT 0x340 is masked, set its mask
 * bit and raise its vector on this CPU. Returns false (the edge is lost, as
 * in hardware) if the entry was masked.
 */
bool apic_lvt_pc_raise(void);
/*
 * The same, when the line rises while the CPU handles an interrupt or
 * system call whose context f it is about to return to: the PMI is taken
 * at once on f, which is where the CPU would take the raised vector (f's
 * instruction boundary), without a second entry. Returns false, as above,
 * if LVT 0x340 was masked.
 */
bool apic_lvt_pc_deliver(struct trap_frame *f);

/*
 * IPIs to one APIC ID. Each waits (bounded, ~1 ms) for the previous send to
 * leave the ICR; returns false if the ICR stayed busy.
 */
bool apic_send_fixed(uint32_t apic_id, uint8_t vector);
bool apic_send_nmi(uint32_t apic_id);
bool apic_send_init(uint32_t apic_id);
/* Start-up IPI: the AP starts in real mode at page << 12. */
bool apic_send_sipi(uint32_t apic_id, uint8_t page);

/* Timer. apic_timer_calibrate() runs once on the BSP, after tsc_calibrate(). */
void apic_timer_calibrate(void);
/* Sets up the calling CPU's hardware timer behind its software timer queue. */
void apic_timer_init_local(void);
bool apic_timer_tsc_deadline(void); /* TSC-deadline mode in use */
uint64_t apic_timer_hz(void);       /* APIC timer ticks per second (one-shot mode) */

/* IOAPIC: route GSI to `vector` on APIC ID `dest` (edge/level, polarity from flags). */
void ioapic_init(void);
bool ioapic_route(uint32_t gsi, uint8_t vector, uint32_t dest, bool level, bool active_low);

#endif
