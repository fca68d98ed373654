/* Baseline for `make bench`: a Multiboot 1 kernel that does nothing but print
 * the shell prompt on COM1, so QEMU start-up, firmware and image loading can
 * be subtracted from pmuos's boot time. */

#include "bench/multiboot.h"

	multiboot_header

	.text
	.code32
	.globl _start
_start:
	mov	$prompt, %esi
	call	puts
halt:
	cli
	hlt
	jmp	halt

	com1_output

	.section .rodata
prompt:
	.asciz "pmuos> "

	.section .note.GNU-stack, "", @progbits
