/* What the bench's bare Multiboot 1 kernels (null_kernel.S, timer_floor.S)
 * share: the header QEMU's loader looks for (Multiboot Specification 0.6.96
 * §3.1.1: magic, flags, checksum; flags 0 for an ELF image, loaded from its
 * program headers) and output on COM1 (8250 UART: transmit holding register
 * at 0x3F8, line status at 0x3FD, bit 5 set when it is empty). */

#define MB_MAGIC	0x1BADB002
#define MB_FLAGS	0
#define COM1		0x3F8
#define LSR_THRE	0x20

.macro multiboot_header
	.section .multiboot, "a"
	.balign 4
	.long MB_MAGIC, MB_FLAGS, -(MB_MAGIC + MB_FLAGS)
.endm

/* puts: writes the NUL-terminated string at %esi; putc: the byte in %al.
 * Both clobber %eax, %edx (and puts %esi). */
.macro com1_output
puts:
	lodsb
	test	%al, %al
	jz	2f
	call	putc
	jmp	puts
2:	ret

putc:
	mov	%al, %ah
	mov	$COM1 + 5, %dx
1:	in	%dx, %al
	test	$LSR_THRE, %al
	jz	1b
	mov	$COM1, %dx
	mov	%ah, %al
	out	%al, %dx
	ret
.endm
