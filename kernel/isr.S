/*
 * Entry stubs for all 256 IDT vectors. Each pushes a dummy error code where
 * the CPU pushes none, then its vector, and joins trap_common, which saves the
 * general registers as a struct trap_frame (kernel/irq.h) and calls
 * trap_dispatch(frame). SWAPGS brackets entries from Ring 3.
 */
	.text
	.globl isr_stub_table

/* Vectors for which the CPU pushes an error code (SDM Vol. 3A, 6.13). */
#define HAS_ERROR(v) ((v) == 8 || ((v) >= 10 && (v) <= 14) || (v) == 17 || (v) == 21 || (v) == 29 || (v) == 30)

	.balign 16
isr_stub_base:                          /* stub v at isr_stub_base + 16 * v */
	.set v, 0
	.rept 256
	.balign 16
	.if !HAS_ERROR(v)
	pushq $0
	.endif
	pushq $v
	jmp trap_common
	.set v, v + 1
	.endr

trap_common:
	testb $3, 24(%rsp)              /* CS of the interrupted context */
	jz 1f
	swapgs
1:	pushq %rax
	pushq %rbx
	pushq %rcx
	pushq %rdx
	pushq %rsi
	pushq %rdi
	pushq %rbp
	pushq %r8
	pushq %r9
	pushq %r10
	pushq %r11
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	movq %rsp, %rdi
	cld
	call trap_dispatch
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %r11
	popq %r10
	popq %r9
	popq %r8
	popq %rbp
	popq %rdi
	popq %rsi
	popq %rdx
	popq %rcx
	popq %rbx
	popq %rax
	testb $3, 24(%rsp)
	jz 2f
	swapgs
2:	addq $16, %rsp                  /* vector, error code */
	iretq

	.section .rodata
	.balign 8
isr_stub_table:
	.set v, 0
	.rept 256
	.quad isr_stub_base + v * 16
	.set v, v + 1
	.endr
