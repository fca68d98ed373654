/*
 * Ring 3 plumbing: the SYSCALL entry, the first entry of a task, and the
 * saved scheduler context a leaving task returns to.
 */
#include "kernel/percpu.h"
#include "arch/trapframe.h"
#include "kernel/gdt.h"
#include "kernel/stamp.h"

	.text
	.globl syscall_entry, user_start, ctx_save, ctx_restore

/*
 * SYSCALL: RCX = user RIP, R11 = user RFLAGS, interrupts masked by FMASK.
 * Builds a struct trap_frame (vector 0x100) on the task's kernel stack, so
 * the return shares trap_exit's stamped IRETQ path. 26 kernel instructions
 * run before the clock's read (syscall.c subtracts them).
 */
syscall_entry:
	swapgs
	movq %rsp, %gs:PCPU_SCRATCH_RSP
	movq %gs:PCPU_TSTACK_TOP, %rsp
	pushq $SEL_UDATA                /* ss */
	pushq %gs:PCPU_SCRATCH_RSP      /* rsp */
	pushq %r11                      /* rflags */
	pushq $SEL_UCODE                /* cs */
	pushq %rcx                      /* rip */
	pushq $0                        /* error code */
	pushq $0x100                    /* vector: system call */
	PUSH_GPRS
	CLOCK_READ
	movq %rax, %gs:PCPU_ENTRY_TSC
	movq %rsp, %rdi
	cld
	call syscall_dispatch
	jmp trap_exit

/* user_start(frame): enter Ring 3 through trap_exit with a prepared frame. */
user_start:
	movq %rdi, %rsp
	jmp trap_exit

/* ctx_save(ctx[8]): 0 now, `val` later when ctx_restore(ctx, val) comes back here. */
ctx_save:
	movq %rbx, 0(%rdi)
	movq %rbp, 8(%rdi)
	movq %r12, 16(%rdi)
	movq %r13, 24(%rdi)
	movq %r14, 32(%rdi)
	movq %r15, 40(%rdi)
	leaq 8(%rsp), %rax
	movq %rax, 48(%rdi)
	movq (%rsp), %rax
	movq %rax, 56(%rdi)
	xorl %eax, %eax
	ret

ctx_restore:
	movq 0(%rdi), %rbx
	movq 8(%rdi), %rbp
	movq 16(%rdi), %r12
	movq 24(%rdi), %r13
	movq 32(%rdi), %r14
	movq 40(%rdi), %r15
	movq 48(%rdi), %rsp
	movl %esi, %eax
	jmpq *56(%rdi)
