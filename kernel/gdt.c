/* Per-CPU GDT and TSS; see kernel/gdt.h. */
#include "kernel/gdt.h"
#include "kernel/percpu.h"
#include "lib/lib.h"

void gdt_load(struct percpu *p)
{
	uint64_t base = (uint64_t)&p->tss;
	uint64_t limit = sizeof(p->tss) - 1;

	memset(&p->tss, 0, sizeof(p->tss));
	p->tss.rsp[0] = p->tstack_top; /* entries from Ring 3 land on the task stack */
	for (int i = 0; i < 3; i++)
		p->tss.ist[i] = p->ist_top[i];
	p->tss.iopb = sizeof(p->tss); /* no I/O bitmap: Ring 3 gets no ports */

	p->gdt[0] = 0;
	p->gdt[1] = 0x00af9a000000ffffULL; /* kernel code, 64-bit */
	p->gdt[2] = 0x00cf92000000ffffULL; /* kernel data */
	p->gdt[3] = 0x00cffa000000ffffULL; /* user code, 32-bit (SYSRET layout) */
	p->gdt[4] = 0x00cff2000000ffffULL; /* user data */
	p->gdt[5] = 0x00affa000000ffffULL; /* user code, 64-bit */
	p->gdt[6] = (limit & 0xffff) | ((base & 0xffffff) << 16) | (0x89ULL << 40) |
		    (((limit >> 16) & 0xf) << 48) | (((base >> 24) & 0xff) << 56);
	p->gdt[7] = base >> 32;

	struct { uint16_t limit; uint64_t base; } __attribute__((packed)) gdtr = {
		sizeof(p->gdt) - 1, (uint64_t)p->gdt,
	};
	__asm__ volatile(
		"lgdt %0\n\t"
		"pushq %1\n\t"
		"leaq 1f(%%rip), %%rax\n\t"
		"pushq %%rax\n\t"
		"lretq\n"
		"1:\n\t"
		"movw %w2, %%ax\n\t"
		"movw %%ax, %%ds\n\t"
		"movw %%ax, %%es\n\t"
		"movw %%ax, %%ss\n\t"
		"ltr %w3"
		:: "m"(gdtr), "i"(SEL_KCODE), "r"(SEL_KDATA), "r"(SEL_TSS)
		: "rax", "memory");
}
