/*
 * Entry stubs for all 256 IDT vectors. Each pushes a dummy error code where
 * the CPU pushes none, then its vector, and joins trap_common, which saves the
 * general registers as a struct trap_frame (arch/irq.h) and calls
 * trap_dispatch(frame). SWAPGS brackets entries from Ring 3.
 *
 * Entries from and returns to Ring 3 are stamped with the TSC at a fixed
 * instruction distance from the privilege change, so the PMU model splits
 * USR from OS time exactly (docs/design.md §5.2; kernel/trap.c uses the counts below).
 */
#include "kernel/percpu.h"
#include "arch/trapframe.h"
#include "arch/irq.h"
#include "kernel/stamp.h"

	.text
	.globl isr_stub_table, trap_exit, user_iretq

/* Vectors for which the CPU pushes an error code (SDM Vol. 3A, 6.13). */
#define HAS_ERROR(v) ((v) == 8 || ((v) >= 10 && (v) <= 14) || (v) == 17 || (v) == 21 || (v) == 29 || (v) == 30)

	/* Padding after each stub's JMP is never executed: INT3, not the multi-byte NOP KNC lacks. */
	.balign 16, 0xcc
isr_stub_base:                          /* stub v at isr_stub_base + 16 * v */
	.set v, 0
	.rept 256
	.balign 16, 0xcc
	.if !HAS_ERROR(v)
	pushq $0
	.endif
	pushq $v
	.if v == 6 || v == 13
	jmp fast_common                 /* #UD, #GP */
	.elseif v == VEC_PMI
	jmp pmi_common
	.else
	jmp trap_common
	.endif
	.set v, v + 1
	.endr

/* PCPU_ENTRY_TSC = the clock (kernel/stamp.h), every register as it was: 3 instructions before its read. */
.macro STAMP_ENTRY
	movq %rax, %gs:PCPU_SCRATCH0
	movq %rdx, %gs:PCPU_SCRATCH1
	CLOCK_READ
	movq %rax, %gs:PCPU_ENTRY_TSC
	movq %gs:PCPU_SCRATCH0, %rax
	movq %gs:PCPU_SCRATCH1, %rdx
.endm

/*
 * Ring 3 -> 0: 9 instructions of the entry run before the clock's read below
 * (the stub's two pushes and jmp, testb, jnz or jz, swapgs, two movs and
 * CLOCK_READ's first); 8 where the CPU pushed the error code itself.
 * trap.c subtracts that many.
 */
.macro ENTER faults
	testb $3, 24(%rsp)              /* CS of the interrupted context */
	.if \faults
	jnz 3f
	/*
	 * From Ring 0 with the user's GS only if the IRETQ back to Ring 3
	 * faulted after its SWAPGS: back to the kernel's (trap.c ends the task).
	 * Only a fault can come there: that IRETQ runs with interrupts off.
	 */
	cmpq $user_iretq, 16(%rsp)
	jne 1f
	swapgs
	jmp 1f
	.else
	jz 1f
	.endif
3:	swapgs
	STAMP_ENTRY
1:	PUSH_GPRS
	movq %rsp, %rdi
	cld
.endm

trap_common:
	ENTER 1
call_dispatch:
	call trap_dispatch
trap_exit:                              /* RSP = a struct trap_frame to return to */
	POP_GPRS
	testb $3, 24(%rsp)
	jz 2f
	/*
	 * Ring 0 -> 3: the clock's read and the 9 instructions after it up to
	 * and including IRETQ are kernel instructions; the first user
	 * instruction runs at the stamp + 10, which is what PCPU_EXIT_TSC holds.
	 */
	movq %rax, %gs:PCPU_SCRATCH0
	movq %rdx, %gs:PCPU_SCRATCH1
	CLOCK_READ
	addq $10, %rax
	movq %rax, %gs:PCPU_EXIT_TSC
	movq %gs:PCPU_SCRATCH0, %rax
	movq %gs:PCPU_SCRATCH1, %rdx
	swapgs
	addq $16, %rsp                  /* vector, error code */
user_iretq:
	iretq
2:	addq $16, %rsp
	iretq

/*
 * VEC_PMI: the same entry and exit, straight to trap_pmi (kernel/trap.c)
 * without the generic dispatch: a sample's cost (docs/design.md §5.4).
 */
pmi_common:
	ENTER 0
	call trap_pmi
	jmp trap_exit

/*
 * #UD and #GP: from Ring 3, trap_fast (kernel/trap.c) first, which completes
 * an instruction the kernel emulates without the general path; from Ring 0
 * the general path. The entry stamp comes after as many instructions as in
 * trap_common (8, or 7 for #GP's error code), so entry_insns holds.
 */
fast_common:
	testb $3, 24(%rsp)
	jz trap_common
	swapgs
	STAMP_ENTRY
	PUSH_GPRS
	movq %rsp, %rdi
	cld
	call trap_fast
	testb %al, %al
	jnz trap_exit
	movq %rsp, %rdi
	jmp call_dispatch

	.section .rodata
	.balign 8
isr_stub_table:
	.set v, 0
	.rept 256
	.quad isr_stub_base + v * 16
	.set v, v + 1
	.endr
