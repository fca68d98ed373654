/*
 * Per-CPU GDT and TSS. Selector layout fits SYSCALL/SYSRET (STAR): kernel
 * code/data, then user 32-bit code, user data, user 64-bit code, then the TSS.
 */
#ifndef KERNEL_GDT_H
#define KERNEL_GDT_H

#define SEL_KCODE   0x08
#define SEL_KDATA   0x10
#define SEL_UCODE32 0x1b
#define SEL_UDATA   0x23
#define SEL_UCODE   0x2b
#define SEL_TSS     0x30
#define GDT_ENTRIES 8 /* the TSS descriptor takes two */

/* IST slots (1-based in the IDT gate) */
#define IST_NMI 1
#define IST_DF  2
#define IST_MC  3

#ifndef __ASSEMBLER__
#include <stdint.h>

struct tss {
	uint32_t reserved0;
	uint64_t rsp[3];
	uint64_t reserved1;
	uint64_t ist[7];
	uint64_t reserved2;
	uint16_t reserved3;
	uint16_t iopb;
} __attribute__((packed));

struct percpu;
/* Builds and loads p's GDT and TSS (IST stacks from p->ist_top, RSP0 = kstack_top). */
void gdt_load(struct percpu *p);

#endif /* __ASSEMBLER__ */
#endif
