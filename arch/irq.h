/*
 * Interrupt and exception plumbing: the trap frame every vector builds, the
 * vector map (one place), and handler registration.
 */
#ifndef KERNEL_IRQ_H
#define KERNEL_IRQ_H

#include <stdint.h>

/* Vector map. Higher vectors are higher APIC priority classes. */
#define VEC_PIC_BASE   0x20 /* legacy 8259s, remapped here and masked */
#define VEC_ISA_BASE   0x30 /* IOAPIC-routed ISA IRQ n -> 0x30 + n */
#define VEC_TIMER      0xe0 /* local APIC timer */
#define VEC_CALL       0xf0 /* cross-CPU function call IPI */
#define VEC_WAKE       0xf1 /* "your call is done": wakes a halted caller */
#define VEC_PMI        0xf8 /* LVT 0x340: performance-counter overflow (pmu/) */
#define VEC_SPURIOUS   0xff

/* Exceptions (Intel SDM Vol. 3A, 6.3.1) */
#define EXC_DE 0
#define EXC_DB 1
#define EXC_NMI 2
#define EXC_BP 3
#define EXC_UD 6
#define EXC_DF 8
#define EXC_GP 13
#define EXC_PF 14
#define EXC_MC 18

/* Pushed by kernel/isr.S; order matches the push sequence, lowest address first. */
struct trap_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector, error;
	uint64_t rip, cs, rflags, rsp, ss; /* pushed by the CPU */
};

typedef void (*irq_handler)(struct trap_frame *f);

/* Loads the IDT on the calling CPU (builds it on the first call). */
void idt_load(void);
/* Installs handler for vector (32..255). Vectors >= 32 get an EOI after the handler. */
void irq_register(uint8_t vector, irq_handler h);
/*
 * Runs vector's handler (32..255) on frame f, as if the CPU took that
 * interrupt at f's instruction boundary; no EOI (the APIC did not deliver
 * it). For interrupts the kernel raises in software while it handles
 * another one that f is the context of (pmu/model.c's PMI).
 */
void irq_invoke(uint8_t vector, struct trap_frame *f);
/* Routes ISA IRQ `irq` (0..15) through the IOAPIC to the calling CPU. */
void irq_route_isa(unsigned irq, irq_handler h);

/*
 * Exception hooks: a handler returns 1 if it dealt with the exception (the
 * faulting context resumes), 0 to fall through to the fault report.
 */
typedef int (*exc_handler)(struct trap_frame *f);
void exc_register(uint8_t vector, exc_handler h);

#endif
