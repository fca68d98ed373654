/* QEMU's own cost of an interrupt at an exact instruction, for `make bench`
 * (bench/record.py): a Multiboot 1 kernel that runs a loop of 2 x LOOP_ITERS
 * instructions without interrupts, then with the local APIC timer
 * interrupting it every PERIOD_NS ns of virtual time (PERIOD_NS
 * instructions under -icount shift=0), ROUNDS times over. The interrupt
 * does the least a sample needs: periodic mode (QEMU re-arms the timer, the
 * guest writes nothing), the handler a count and the EOI. Every run prints
 * a line on COM1 before and after, so the host can time the loop alone,
 * the timer's with its period and the count of interrupts (8 hex digits
 * each); "floor: done" after the last round.
 * Registers: Intel SDM vol. 3A §11.4.1 (APIC base 0xFEE00000), §11.5.4
 * (timer: divide configuration 0x3E0, LVT timer 0x320 with periodic mode in
 * bit 17, initial count 0x380), §11.8.5 (EOI 0x0B0), §11.9 (spurious
 * vector register 0x0F0, bit 8 enables the APIC); the 8259's interrupt
 * mask register at ports 0x21 and 0xA1 (Intel 8259A data sheet, OCW1). */

#include "bench/multiboot.h"

#define APIC		0xFEE00000
#define APIC_EOI	0x0B0
#define APIC_SVR	0x0F0
#define APIC_LVT_TIMER	0x320
#define APIC_INIT_COUNT	0x380
#define APIC_DIVIDE	0x3E0
#define DIVIDE_BY_1	0xB
#define LVT_PERIODIC	(1 << 17)
#define VEC_TIMER	0x40
#define PERIOD_NS	10000		/* bench/record.py's -c 10000: it checks the period printed */
#define ROUNDS		5		/* pairs of runs, without and with the timer */
#define LOOP_ITERS	80000000	/* 2 instructions each: 160 M, about steady's 151 M cycles */

	multiboot_header

	.text
	.code32
	.globl _start
_start:
	lgdt	gdt_desc
	ljmp	$0x08, $1f
1:	mov	$0x10, %ax
	mov	%ax, %ds
	mov	%ax, %es
	mov	%ax, %ss
	mov	$stack_top, %esp
	/* IDT entry VEC_TIMER: 32-bit interrupt gate, selector 0x08. */
	mov	$timer_irq, %eax
	mov	%ax, idt + 8 * VEC_TIMER
	movw	$0x08, idt + 8 * VEC_TIMER + 2
	movw	$0x8E00, idt + 8 * VEC_TIMER + 4
	shr	$16, %eax
	mov	%ax, idt + 8 * VEC_TIMER + 6
	lidt	idt_desc
	/* The firmware left the 8259 PICs passing the PIT's IRQ 0: masked. */
	mov	$0xFF, %al
	out	%al, $0x21
	out	%al, $0xA1
	movl	$0x1FF, APIC + APIC_SVR

	movl	$DIVIDE_BY_1, APIC + APIC_DIVIDE
	movl	$(VEC_TIMER | LVT_PERIODIC), APIC + APIC_LVT_TIMER
	movl	$ROUNDS, rounds
round:
	mov	$start_quiet, %esi
	call	puts
	call	work
	mov	$end_quiet, %esi
	call	puts

	movl	$0, count
	mov	$start_timer, %esi
	call	puts
	mov	$PERIOD_NS, %ebx
	call	puthex
	movl	$PERIOD_NS, APIC + APIC_INIT_COUNT
	sti
	call	work
	cli
	movl	$0, APIC + APIC_INIT_COUNT
	mov	$end_timer, %esi
	call	puts
	mov	count, %ebx
	call	puthex
	decl	rounds
	jnz	round
	mov	$done, %esi
	call	puts
halt:
	cli
	hlt
	jmp	halt

work:
	mov	$LOOP_ITERS, %ecx
1:	dec	%ecx
	jnz	1b
	ret

/* %ebx as 8 hex digits and a newline; clobbers %eax, %ebx, %edx, %edi. */
puthex:
	mov	$8, %edi
1:	rol	$4, %ebx
	mov	%bl, %al
	and	$0xF, %al
	add	$'0', %al
	cmp	$'9', %al
	jbe	2f
	add	$'a' - '9' - 1, %al
2:	call	putc
	dec	%edi
	jnz	1b
	mov	$'\n', %al
	jmp	putc

timer_irq:
	incl	count
	movl	$0, APIC + APIC_EOI
	iret

	com1_output

	.section .rodata
start_quiet:	.asciz "floor: loop without timer\n"
end_quiet:	.asciz "floor: loop without timer done\n"
start_timer:	.asciz "floor: loop with timer, period "
end_timer:	.asciz "floor: loop with timer done, interrupts "
done:		.asciz "floor: done\n"
	.balign 8
gdt:	.quad 0, 0x00CF9A000000FFFF, 0x00CF92000000FFFF
gdt_desc:
	.word 3 * 8 - 1
	.long gdt
idt_desc:
	.word 256 * 8 - 1
	.long idt

	.bss
	.balign 8
idt:	.skip 256 * 8
count:	.long 0
rounds:	.long 0
	.balign 16
	.skip 4096
stack_top:

	.section .note.GNU-stack, "", @progbits
