/*
 * The general registers of a struct trap_frame (arch/irq.h), pushed and
 * popped in one order by every entry path (kernel/isr.S, kernel/user.S).
 */
#ifndef ARCH_TRAPFRAME_H
#define ARCH_TRAPFRAME_H
#ifdef __ASSEMBLER__

.macro PUSH_GPRS
	pushq %rax
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
.endm

.macro POP_GPRS
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
.endm

#endif
#endif
