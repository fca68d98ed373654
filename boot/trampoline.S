/*
 * AP start-up: the real-mode trampoline an INIT-SIPI-SIPI sequence enters
 * (SIPI vector VV -> CS:IP = VV00:0000, SDM Vol. 3A, 8.4.4.1), and the
 * 64-bit landing point.
 *
 * kernel/smp.c copies trampoline_start..trampoline_end to a free page below
 * 1 MiB the memory map gives (a card has no RAM at a PC's usual 0x8000) and
 * adds the page's address to each 32-bit word trampoline_fixups lists: the
 * code is assembled for address 0. Real-mode data is read through DS = CS.
 * It enters long mode on the boot page tables (below 4 GiB, reachable from
 * 32-bit code) and jumps to ap_entry64, which finds the AP's own stack by
 * its APIC ID. All APs may run it at once: it writes no memory.
 */
#include "apic/regs.h" /* APIC_ID_LIMIT */
#include "arch/regs.h"

#define O(x) ((x) - trampoline_start) /* offset in the page */
/* Protected mode with x87 errors as #MF and WAIT honouring TS (arch/fpu.c sets MP and NE anyway); caches on. */
#define CR0_TRAMPOLINE (CR0_PE | CR0_MP | CR0_ET | CR0_NE)

	.section .rodata
	.globl trampoline_start, trampoline_end, trampoline_fixups, trampoline_fixups_end
	.balign 16
	.code16
trampoline_start:
	cli
	cld
	/*
	 * CR0 is loaded whole, not ORed into what the AP had: an INIT keeps
	 * CD and NW as they were (SDM Vol. 3A Table 9-1, note 2), so an AP
	 * the bootstrap left with caches off would stay so. WBINVD first, as
	 * Linux's trampoline_start (arch/x86/realmode/rm/trampoline_64.S), the
	 * start-up code that ran on a card, does: nothing cached with caching
	 * off outlives the switch. ap_main stops an AP that still has CD or NW.
	 */
	wbinvd
	movw %cs, %ax
	movw %ax, %ds
	lgdtl O(tramp_gdtr)
	movl $CR0_TRAMPOLINE, %eax
	movl %eax, %cr0
	.byte 0x66, 0xea                /* ljmpl $0x08, $page + O(tramp32) */
fix_jmp32:
	.long O(tramp32)
	.word 0x08

	.code32
tramp32:
	movw $0x10, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	movl %cr4, %eax
	orl $CR4_PAE, %eax
	movl %eax, %cr4
	movl $boot_pml4, %eax
	movl %eax, %cr3
	movl $MSR_EFER, %ecx
	rdmsr
	orl $(EFER_LME | EFER_NXE), %eax
	wrmsr
	movl $(CR0_TRAMPOLINE | CR0_PG), %eax /* the GDT above has the 64-bit code segment already */
	movl %eax, %cr0
	.byte 0xea                      /* ljmpl $0x18, $page + O(tramp64) */
fix_jmp64:
	.long O(tramp64)
	.word 0x18

	.code64
tramp64:
	movq $ap_entry64, %rax
	jmpq *%rax

	.balign 8
tramp_gdt:
	.quad 0
	.quad 0x00cf9a000000ffff        /* 0x08: 32-bit code */
	.quad 0x00cf92000000ffff        /* 0x10: data */
	.quad 0x00af9a000000ffff        /* 0x18: 64-bit code */
tramp_gdtr:
	.word 4 * 8 - 1
fix_gdt:
	.long O(tramp_gdt)
trampoline_end:

	.balign 2
trampoline_fixups:                      /* offsets of the words that get the page's address added */
	.word O(fix_jmp32), O(fix_jmp64), O(fix_gdt)
trampoline_fixups_end:

	.text
	.globl ap_entry64
ap_entry64:
	lgdt boot_gdtr
	movw $0x10, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	/* The kernel's map: the local APIC's page is uncached there (apic/apic.h). */
	movq kernel_cr3, %rax
	movq %rax, %cr3
	/* The APIC ID from the ID register, in the layout in use (apic/lapic.c): 9 bits on KNC. */
	movl $0x1b, %ecx                /* IA32_APIC_BASE */
	rdmsr
	shlq $32, %rdx
	orq %rdx, %rax
	movabsq $0xffffff000, %rdx
	andq %rdx, %rax
	movl 0x20(%rax), %ebx           /* APIC_ID */
	movl ap_apic_id_shift, %ecx
	shrl %cl, %ebx
	andl ap_apic_id_mask, %ebx
	cmpl $APIC_ID_LIMIT, %ebx
	jae 2f
	movq ap_stack_by_apic(, %rbx, 8), %rsp
	testq %rsp, %rsp
	jz 2f                           /* not a CPU we started: park it */
	xorl %ebp, %ebp
	movl %ebx, %edi
	pushq $0x08
	pushq $1f
	lretq
1:	call ap_main
2:	cli
	hlt
	jmp 2b
