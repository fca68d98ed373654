/*
 * Interrupts and exceptions as the CPU sees them: the vector map (one
 * place) and the trap frame every vector builds. Registering handlers is
 * the core's (kernel/trap.h).
 */
#ifndef ARCH_IRQ_H
#define ARCH_IRQ_H

#ifndef __ASSEMBLER__
#include <stdint.h>
#endif

/* Vector map. Higher vectors are higher APIC priority classes. */
#define VEC_PIC_BASE   0x20 /* legacy 8259s, remapped here and masked */
#define VEC_ISA_BASE   0x30 /* IOAPIC-routed ISA IRQ n -> 0x30 + n */
#define VEC_DOORBELL   0x50 /* the host's doorbell (MSI-X from platform/; mailbox/doorbell.c) */
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

#ifndef __ASSEMBLER__ /* kernel/isr.S takes the vectors */
/* Pushed by kernel/isr.S; order matches the push sequence, lowest address first. */
struct trap_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector, error;
	uint64_t rip, cs, rflags, rsp, ss; /* pushed by the CPU */
};
#endif

#endif
