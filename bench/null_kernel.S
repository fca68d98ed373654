/* Baseline for `make bench`: a Multiboot 1 kernel that does nothing but print
 * the shell prompt on COM1, so QEMU start-up, firmware and image loading can
 * be subtracted from pmuos's boot time. */

#define MB_MAGIC	0x1BADB002
#define MB_FLAGS	0		/* ELF image: QEMU loads it from the program headers */
#define COM1		0x3F8
#define LSR_THRE	0x20		/* line status: transmit holding register empty */

	.section .multiboot, "a"
	.balign 4
	.long MB_MAGIC, MB_FLAGS, -(MB_MAGIC + MB_FLAGS)

	.text
	.code32
	.globl _start
_start:
	mov	$prompt, %esi
	mov	$prompt_end - prompt, %ecx
next:
	mov	$COM1 + 5, %dx
wait:
	in	%dx, %al
	test	$LSR_THRE, %al
	jz	wait
	mov	$COM1, %dx
	lodsb
	out	%al, %dx
	loop	next
halt:
	cli
	hlt
	jmp	halt

	.section .rodata
prompt:
	.ascii "pmuos> "
prompt_end:

	.section .note.GNU-stack, "", @progbits
