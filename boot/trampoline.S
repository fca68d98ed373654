/*
 * AP start-up: the real-mode trampoline an INIT-SIPI-SIPI sequence enters
 * (SIPI vector 0x08 -> CS:IP = 0800:0000), and the 64-bit landing point.
 *
 * kernel/smp.c copies trampoline_start..trampoline_end to TRAMPOLINE_BASE.
 * The code is position-dependent on that base: T(x) is x's address there.
 * It enters long mode on the boot page tables (below 4 GiB, reachable from
 * 32-bit code) and jumps to ap_entry64, which finds the AP's own stack by its
 * initial APIC ID. All APs may run it at once: it writes no memory.
 */
#define TRAMPOLINE_BASE 0x8000
#define T(x) ((x) - trampoline_start + TRAMPOLINE_BASE)

	.section .rodata
	.globl trampoline_start, trampoline_end
	.balign 16
	.code16
trampoline_start:
	cli
	cld
	xorw %ax, %ax
	movw %ax, %ds
	lgdtl T(tramp_gdtr)
	movl %cr0, %eax
	orl $1, %eax                    /* CR0.PE */
	movl %eax, %cr0
	ljmpl $0x08, $T(tramp32)

	.code32
tramp32:
	movw $0x10, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	movl %cr4, %eax
	orl $(1 << 5), %eax             /* CR4.PAE */
	movl %eax, %cr4
	movl $boot_pml4, %eax
	movl %eax, %cr3
	movl $0xc0000080, %ecx          /* EFER: LME, NXE */
	rdmsr
	orl $((1 << 8) | (1 << 11)), %eax
	wrmsr
	movl %cr0, %eax
	orl $(1 << 31), %eax            /* CR0.PG */
	movl %eax, %cr0
	ljmpl $0x18, $T(tramp64)

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
	.long T(tramp_gdt)
trampoline_end:

	.text
	.globl ap_entry64
ap_entry64:
	lgdt boot_gdtr
	movw $0x10, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	/* Initial APIC ID: CPUID.1:EBX[31:24]. */
	movl $1, %eax
	cpuid
	shrl $24, %ebx
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
