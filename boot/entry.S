/*
 * Kernel entry points (docs/design.md §2).
 *
 *  multiboot_entry  32-bit protected mode, from QEMU -kernel (Multiboot 1):
 *                   EAX = 0x2BADB002, EBX = Multiboot information.
 *  kernel_entry64   64-bit long mode, from BOOTX64.EFI: RDI = struct boot_info.
 *  linux_entry32    32-bit protected mode, from the bzImage's relocator
 *                   (boot/linux/bzimage.S) once it has copied the kernel
 *                   here: ESI = boot_params, EDX:EAX = TSC at the bzImage's
 *                   32-bit entry; flat 4 GiB segments, no stack, .bss not
 *                   yet zeroed (no loader saw the kernel's ELF).
 *
 * All record the TSC at entry (the boot benchmark's start point), switch to
 * the boot page tables below (identity map of the low 4 GiB in 2 MiB pages,
 * initialised data: no code builds them) and the boot GDT, and call
 * kernel_main() on the boot stack.
 */
#include "boot/multiboot.h"
#define MB_FLAGS   MB_HEADER_MMAP /* give us the memory map */

#include "arch/regs.h"
#include "include/pmuos/post.h"
#define PTE_P_RW   0x003
#define PTE_PS     0x080
#define PTE_UC     0x018       /* PWT, PCD */
#define KNC_FAMILY 0x0b
#define KNC_DBOX   0x8007c0000 /* platform/knc/sbox.h KNC_CARD_DBOX_BASE: the POST code register's page */
#define KNC_DBOX_POSTCODE 0x242c

	.section .multiboot, "a"
	.balign 4
	.long MB_HEADER_MAGIC
	.long MB_FLAGS
	.long -(MB_HEADER_MAGIC + MB_FLAGS)

	.section .data
	.balign 8
	.globl boot_tsc, boot_mb_magic, boot_mb_info, boot_uefi_info, boot_linux_params
boot_tsc:        .quad 0
boot_mb_magic:   .quad 0
boot_mb_info:    .quad 0
boot_uefi_info:  .quad 0
boot_linux_params: .quad 0
	.globl boot_post_stop
boot_post_stop:  .word 0 /* pmuos.stop='s POST mark, set by the bzImage's relocator; 0: none (kernel/post.h) */

/* Boot GDT: null, 64-bit code (0x08), data (0x10). Per-CPU GDTs replace it. */
	.balign 16
boot_gdt:
	.quad 0
	.quad 0x00af9a000000ffff
	.quad 0x00cf92000000ffff
boot_gdt_end:
	.globl boot_gdtr
boot_gdtr:
	.word boot_gdt_end - boot_gdt - 1
	.quad boot_gdt

/*
 * Identity map of 0..4 GiB, and of the 2 MiB page holding a card's DBOX,
 * uncached, for the POST marks before the kernel's own tables; the AP
 * trampoline loads the same CR3.
 */
	.balign 4096
	.globl boot_pml4
boot_pml4:
	.quad boot_pdpt + PTE_P_RW
	.fill 511, 8, 0
boot_pdpt:
	.quad boot_pd + 0x0000 + PTE_P_RW
	.quad boot_pd + 0x1000 + PTE_P_RW
	.quad boot_pd + 0x2000 + PTE_P_RW
	.quad boot_pd + 0x3000 + PTE_P_RW
	.fill (KNC_DBOX >> 30) - 4, 8, 0
	.quad boot_pd_dbox + PTE_P_RW
	.fill 511 - (KNC_DBOX >> 30), 8, 0
boot_pd:
	.set i, 0
	.rept 2048
	.quad (i << 21) + PTE_PS + PTE_P_RW
	.set i, i + 1
	.endr

	.balign 4096
boot_pd_dbox:
	.fill (KNC_DBOX >> 21) & 511, 8, 0
	.quad (KNC_DBOX & ~0x1fffff) + PTE_PS + PTE_UC + PTE_P_RW
	.fill 511 - ((KNC_DBOX >> 21) & 511), 8, 0

	.section .bss
	.balign 16
boot_stack:
	.skip 16384
boot_stack_top:

	.section .text
	.code32
	.globl multiboot_entry
multiboot_entry:
	cli
	movl %eax, %esi
	rdtsc
	movl %eax, boot_tsc
	movl %edx, boot_tsc + 4
	movl %esi, boot_mb_magic
	movl %ebx, boot_mb_info

long_mode32:
	/*
	 * The 64-bit GDT while still in legacy protected mode (its base is
	 * below 4 GiB: LGDT takes the low 32 bits of boot_gdtr's base here): a
	 * KNC core does not support compatibility mode (SSDG 328207 §4.2.3 per
	 * PHI3120), which is where the CPU runs once CR0.PG is set until the far
	 * jump below, so nothing but that jump runs there.
	 */
	lgdt boot_gdtr
	movl %cr4, %eax
	orl $CR4_PAE, %eax
	movl %eax, %cr4
	movl $boot_pml4, %eax
	movl %eax, %cr3
	movl $MSR_EFER, %ecx
	rdmsr
	orl $(EFER_LME | EFER_NXE), %eax
	wrmsr
	movl %cr0, %eax
	orl $CR0_PG, %eax
	movl %eax, %cr0
	ljmp $0x08, $common64

	.globl linux_entry32
linux_entry32:
	movl %eax, boot_tsc
	movl %edx, boot_tsc + 4
	movl $__bss_start, %edi
	movl $__bss_end, %ecx
	subl %edi, %ecx
	xorl %eax, %eax
	cld
	rep stosb
	movl %esi, boot_linux_params
	jmp long_mode32

	.code64
	.globl kernel_entry64
kernel_entry64:
	cli
	movq %rdi, %rsi
	rdtsc
	movl %eax, boot_tsc(%rip)
	movl %edx, boot_tsc + 4(%rip)
	movq %rsi, boot_uefi_info(%rip)
	/* The firmware's map covers us identically; ours is the same for 0..4 GiB. */
	movq $boot_pml4, %rax
	movq %rax, %cr3
	movl $MSR_EFER, %ecx
	rdmsr
	orl $EFER_NXE, %eax
	wrmsr
	lgdt boot_gdtr(%rip)
	pushq $0x08
	leaq common64(%rip), %rax
	pushq %rax
	lretq

common64:
	movw $0x10, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	xorw %ax, %ax
	movw %ax, %fs
	movw %ax, %gs
	movq $boot_stack_top, %rsp
	xorl %ebp, %ebp
	/* POST mark "P3" (include/pmuos/post.h), on a KNC core only; a halt here if it is pmuos.stop's. */
	movl $1, %eax
	cpuid
	shrl $8, %eax
	andl $0xf, %eax
	cmpl $KNC_FAMILY, %eax
	jne 2f
	movabsq $(KNC_DBOX + KNC_DBOX_POSTCODE), %rax
	movl $PMUOS_POST_LONG_MODE, (%rax)
2:	cmpw $PMUOS_POST_LONG_MODE, boot_post_stop(%rip)
	je 1f
	call kernel_main
1:	cli
	hlt
	jmp 1b
