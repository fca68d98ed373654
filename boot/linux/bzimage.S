/*
 * build/pmuos.bzImage: the kernel as a Linux bzImage, boot protocol 2.12
 * (Linux Documentation/x86/boot.rst; offsets in boot/linux/bootparams.h).
 * Not kernel code: boot/linux/linux.mk assembles it around the kernel's
 * flat image and links it at 0, so labels are file offsets.
 *
 *   0x0000  boot sector: zeros, the setup header from 0x1F1, 0xAA55 at 0x1FE
 *   0x0200  jump over the header; the header to 0x268
 *   0x1000  setup16, the real-mode entry, past the 4 KiB zero page
 *   0x2000  the 32-bit part (setup_sects = 15): startup_32, the kernel, relocate
 *
 * Two ways in, both reaching startup_32 with ESI = boot_params:
 *
 *  16-bit, from a loader that runs the setup code. QEMU's Linux loader
 *    (QEMU hw/i386/x86.c x86_load_linux, pc-bios/optionrom/linuxboot_dma.c;
 *    measured on QEMU 7.2) loads the setup at 0x10000 and the 32-bit part at
 *    0x100000 whatever the header asks, writes the header fields it owns, and
 *    jumps to 0x1020:0000 (setup + 0x200) in real mode with DS = ES = SS =
 *    0x1000. It puts no memory map in boot_params: setup16 asks the BIOS
 *    (INT 15h, EAX = 0xE820) and writes it there. Here boot_params is the
 *    setup segment's first 4 KiB itself, which is why nothing of ours lies
 *    between the header and 0x1000 (e820_table is at 0x2D0..0xCD0).
 *
 *  32-bit, from a loader that builds boot_params itself (boot.rst "32-bit
 *    Boot Protocol"): a KNC card's bootstrap enters the 32-bit part with
 *    ESI = boot_params, paging off (Intel Xeon Phi Coprocessor System
 *    Software Developer's Guide 328207 §2.2.4, as quoted by
 *    Lasimeri/Intel-Phi-3120A docs/research/boot-protocol.md). Where it
 *    loads the 32-bit part, and whether it copies it, no public source says;
 *    its GDT is not boot.rst's (KEEP_SEGMENTS). So startup_32 assumes
 *    nothing but flat segments: it finds its own address, loads its own GDT,
 *    and copies the kernel to the address it is linked at.
 *
 * The kernel (linker.ld) is linked at 1 MiB and is not position-independent:
 * relocate copies its flat image from wherever the 32-bit part sits to
 * KERNEL_START (as boot/uefi/loader.c places PT_LOAD segments at p_paddr),
 * then enters boot/entry.S linux_entry32, which zeroes .bss. Before copying
 * it checks that nothing still needed is in the way, and stops (cli; hlt
 * with EAX = the check's number and EBX = the address at fault, both also
 * at file offset 0x2008 of the image, and on a card the POST code "R" and
 * the number: see "fail"; no console exists yet) if
 *   1: boot_params overlaps [KERNEL_START, KERNEL_END), the copy and .bss;
 *   2: the first BOOT_INFO_CMDLINE bytes of the command line (what the
 *      kernel reads) overlap it;
 *   3: relocate itself lies where the copy writes (the 32-bit part loaded
 *      below 1 MiB, or within the kernel's size above it).
 * Loaded at 0x100000 (QEMU) the copy moves the kernel down by 16 bytes.
 */
#include "boot/linux/bootparams.h"
#include "arch/regs.h"
#include "include/pmuos/post.h"
#include "kernel_syms.h" /* KERNEL_START, KERNEL_END, LINUX_ENTRY32: from kernel.elf */

#define SETUP_SECTS   15         /* the 32-bit part starts at (15 + 1) * 512 = 0x2000 */
#define PROTOCOL      0x020c     /* 2.12: xloadflags is the newest field we fill */
#define BOOT_CS       0x10       /* boot.rst's __BOOT_CS */
#define BOOT_DS       0x18       /* boot.rst's __BOOT_DS */
#define SMAP          0x534d4150 /* "SMAP": INT 15h E820's signature (ACPI 6.4 §15.1) */
#define CMDLINE_READ  256        /* the kernel reads at most this much (BOOT_INFO_CMDLINE) */
#define R(x)          ((x) - startup_32) /* offset in the 32-bit part */
#define STOP_KEY_LEN  11         /* "pmuos.stop=" */

/* boot.rst's GDT: null, unused, __BOOT_CS, __BOOT_DS; flat 4 GiB, 32-bit. */
.macro boot_gdt
	.quad 0
	.quad 0
	.quad 0x00cf9a000000ffff /* code: present, DPL 0, execute/read, G, D */
	.quad 0x00cf92000000ffff /* data: present, DPL 0, read/write, G, B */
.endm

	.text
	.code16
	.org BP_SETUP_SECTS
	.byte SETUP_SECTS
	.word 0                  /* root_flags */
	.long (bzimage_end - startup_32 + 15) / 16 /* syssize, paragraphs */
	.word 0                  /* ram_size: obsolete */
	.word 0xffff             /* vid_mode: "normal" */
	.word 0                  /* root_dev */
	.org BP_BOOT_FLAG
	.word 0xaa55             /* boot_flag */

	.org BP_JUMP
	.byte 0xeb, header_end - 1f /* the jump; its offset gives the header's length */
1:	.org BP_HEADER
	.ascii "HdrS"
	.org BP_VERSION
	.word PROTOCOL
	.long 0                  /* realmode_swtch: no hook */
	.word 0x1000             /* start_sys_seg: obsolete, Linux's value */
	.org BP_KERNEL_VERSION
	.word version_string - 0x200
	.org BP_TYPE_OF_LOADER
	.byte 0xff               /* "undefined" until a loader writes its ID */
	.org BP_LOADFLAGS
	.byte BP_LOADED_HIGH     /* exactly 1: bzImage; MPSS's verify_bzImage wants byte 0x211 == 1 */
	.word 0                  /* setup_move_size: protocols 2.00-2.01 only */
	.org BP_CODE32_START
	.long KERNEL_START       /* default load address of the 32-bit part */
	.long 0, 0               /* ramdisk_image, ramdisk_size: no initrd */
	.long 0                  /* bootsect_kludge: obsolete */
	.word 0                  /* heap_end_ptr: the loader's */
	.byte 0, 0               /* ext_loader_ver, ext_loader_type: the loader's */
	.org BP_CMD_LINE_PTR
	.long 0                  /* cmd_line_ptr: the loader's */
	.org BP_INITRD_ADDR_MAX
	.long 0x7fffffff         /* initrd_addr_max: Linux's; pmuos takes no initrd */
	.org BP_KERNEL_ALIGNMENT
	.long 0x1000             /* kernel_alignment: 4 KiB, a KNC download address's (SPAD2 31:12) */
	.org BP_RELOCATABLE
	.byte 1                  /* relocatable_kernel: startup_32 runs at any address */
	.org BP_MIN_ALIGNMENT
	.byte 12                 /* min_alignment: 2^12 */
	.org BP_XLOADFLAGS
	.word 0                  /* xloadflags: no 64-bit entry, nothing above 4 GiB, no EFI */
	.org BP_CMDLINE_SIZE
	.long BP_PMUOS_CMDLINE_SIZE
	.long 0                  /* hardware_subarch: x86/PC */
	.quad 0                  /* hardware_subarch_data */
	.long 0, 0               /* payload_offset, payload_length: no compressed payload */
	.quad 0                  /* setup_data: the loader's */
	.org BP_PREF_ADDRESS
	.quad KERNEL_START       /* pref_address */
	.org BP_INIT_SIZE
	/* From the runtime start: the 32-bit part and, at KERNEL_START, the kernel with its .bss. */
	.long KERNEL_END - KERNEL_START
	.org BP_HANDOVER_OFFSET
	.long 0                  /* handover_offset: no EFI handover */
	.org BP_HEADER_END
header_end:
	jmp setup16

/*
 * Real mode, from a loader: DS = ES = SS = the setup segment, SS:SP a stack
 * (boot.rst "Running the Kernel"); A20 on (QEMU's loader leaves it on).
 */
	.org 0x1000
setup16:
	cli
	cld
	/* The BIOS memory map (ACPI 6.4 §15.1; Linux arch/x86/boot/memory.c does the same). */
	movb $0, BP_E820_ENTRIES
	xorl %ebx, %ebx
e820_next:
	movw %ds, %ax
	movw %ax, %es
	movzbw BP_E820_ENTRIES, %di
	imulw $BP_E820_ENTRY, %di, %di
	addw $BP_E820_TABLE, %di         /* ES:DI = the next e820_table entry */
	movl $0xe820, %eax
	movl $BP_E820_ENTRY, %ecx
	movl $SMAP, %edx
	pushw %ds
	int $0x15
	popw %ds
	jc e820_done                     /* an error, or (some BIOSes) past the last entry */
	cmpl $SMAP, %eax
	jne e820_done
	incb BP_E820_ENTRIES
	testl %ebx, %ebx                 /* EBX = 0: that was the last one */
	jz e820_done
	cmpb $BP_E820_MAX, BP_E820_ENTRIES
	jb e820_next
e820_done:
	/* Protected mode on boot.rst's GDT, as its 32-bit protocol wants for code32_start. */
	movw %ds, %ax
	movzwl %ax, %esi
	shll $4, %esi                    /* ESI = linear address of boot_params */
	leal gdt16(%esi), %eax
	movl %eax, gdtr16 + 2
	lgdtl gdtr16
	leal pm32(%esi), %eax
	movl %eax, pm32_far
	movl %cr0, %eax
	orb $1, %al                      /* CR0.PE */
	movl %eax, %cr0
	ljmpl *pm32_far

	.code32
pm32:
	movl $BOOT_DS, %eax
	movl %eax, %ds
	movl %eax, %es
	movl %eax, %fs
	movl %eax, %gs
	movl %eax, %ss
	xorl %ebx, %ebx                  /* boot.rst: EBP, EDI and EBX zero */
	xorl %edi, %edi
	xorl %ebp, %ebp
	jmpl *BP_CODE32_START(%esi)      /* where the loader put the 32-bit part */

	.balign 8
gdt16:
	boot_gdt
gdtr16:
	.word 4 * 8 - 1
	.long 0                          /* base: linear, set above */
pm32_far:
	.long 0                          /* offset: linear, set above */
	.word BOOT_CS

version_string:
	.ascii "pmuos "
	.asciz PMUOS_VERSION

/* ------------------------------------------------------------ 32-bit part */
	.org (SETUP_SECTS + 1) * 512
startup_32:
	jmp relocate
	.org startup_32 + 8
relocate_status:                         /* file offset 0x2008: see "fail" */
	.long 0
relocate_fault:
	.long 0
	.balign 16
kernel_image:
	.incbin KERNEL_BIN
kernel_image_end:

relocate:
	cli
	cld
	rdtsc                            /* boot_tsc: the kernel's first instruction */
	movl %eax, %ebx
	movl %edx, %edi
	/*
	 * Our own address from a call, on boot_params.scratch as a 4-byte
	 * stack (boot.rst zero page 0x1E4 is "scratch field for the kernel
	 * setup code"; Linux's startup_32 and Barrelfish tools/weever/boot.S
	 * do the same): no loader promises a stack.
	 */
	leal BP_SCRATCH + 4(%esi), %esp
	call 1f
1:	popl %ebp
	subl $R(1b), %ebp                /* EBP = startup_32's address */
	movl %ebx, R(tsc)(%ebp)
	movl %edi, R(tsc) + 4(%ebp)
	movl %esi, R(boot_params)(%ebp)

	leal R(gdt32)(%ebp), %eax
	movl %eax, R(gdtr32) + 2(%ebp)
	lgdt R(gdtr32)(%ebp)
	leal R(2f)(%ebp), %eax
	movl %eax, R(far32)(%ebp)
	ljmp *R(far32)(%ebp)
2:	movl $BOOT_DS, %eax
	movl %eax, %ds
	movl %eax, %es
	movl %eax, %fs
	movl %eax, %gs
	movl %eax, %ss

	/*
	 * pmuos.stop=XY on the command line (include/pmuos/post.h): post_stop =
	 * "XY", where post_mark halts. A word at the line's start or after a
	 * space, within the CMDLINE_READ bytes the kernel reads.
	 */
	cmpl $0, BP_EXT_CMD_LINE_PTR(%esi)
	jne 3f
	movl BP_CMD_LINE_PTR(%esi), %ebx
	testl %ebx, %ebx
	jz 3f
	leal CMDLINE_READ - STOP_KEY_LEN - 2(%ebx), %edx /* EDX = the last place the word fits */
	movl %ebx, %eax                  /* EAX = the line's start */
1:	cmpb $0, (%ebx)
	je 3f
	cmpl %eax, %ebx
	je 2f
	cmpb $' ', -1(%ebx)
	jne 4f
2:	movl %ebx, %esi
	leal R(stop_key)(%ebp), %edi
	movl $STOP_KEY_LEN, %ecx
	repe cmpsb
	jne 4f
	movw (%esi), %cx
	movw %cx, R(post_stop)(%ebp)
	jmp 3f
4:	incl %ebx
	cmpl %edx, %ebx
	jb 1b
3:	movl R(boot_params)(%ebp), %esi
	movl $PMUOS_POST_ENTRY32, %ecx
	call post_mark

	/* Check 1: boot_params clear of [KERNEL_START, KERNEL_END). */
	movl $1, %eax
	movl %esi, %ebx
	cmpl $KERNEL_END, %ebx
	jae 3f
	leal BP_SIZE(%ebx), %ecx
	cmpl $KERNEL_START, %ecx
	ja fail
3:	/* Check 2: the command line too, unless above 4 GiB or absent. */
	movl $2, %eax
	cmpl $0, BP_EXT_CMD_LINE_PTR(%esi)
	jne 4f
	movl BP_CMD_LINE_PTR(%esi), %ebx
	testl %ebx, %ebx
	jz 4f
	cmpl $KERNEL_END, %ebx
	jae 4f
	leal CMDLINE_READ(%ebx), %ecx
	cmpl $KERNEL_START, %ecx
	ja fail
4:	/* Check 3: [relocate, bzimage_end) clear of what the copy writes. */
	movl $3, %eax
	leal R(relocate)(%ebp), %ebx
	cmpl $(KERNEL_START + kernel_image_end - kernel_image), %ebx
	jae 5f
	leal R(bzimage_end)(%ebp), %ecx
	cmpl $KERNEL_START, %ecx
	ja fail
5:	/* memmove(KERNEL_START, kernel_image, its size). */
	leal R(kernel_image)(%ebp), %esi
	movl $KERNEL_START, %edi
	movl $(kernel_image_end - kernel_image), %ecx
	cmpl %esi, %edi
	je 7f
	jb 6f
	leal -1(%esi, %ecx), %esi        /* destination above: copy backwards */
	leal -1(%edi, %ecx), %edi
	std
	rep movsb
	cld
	jmp 7f
6:	rep movsb
7:	movw R(post_stop)(%ebp), %ax     /* for the kernel's own marks (kernel/post.h) */
	movw %ax, BOOT_POST_STOP
	movl $PMUOS_POST_RELOCATED, %ecx
	call post_mark
	movl R(boot_params)(%ebp), %esi
	movl R(tsc)(%ebp), %eax
	movl R(tsc) + 4(%ebp), %edx
	ljmp $BOOT_CS, $LINUX_ENTRY32

/*
 * A check failed: EAX = its number, EBX = the address at fault. Both go to
 * relocate_status and relocate_fault in the image itself (only our own
 * bytes are written), where a card's host reads them through the aperture
 * at the download address + 0x2008 if the bootstrap ran the image where the
 * host put it. On a card the POST code becomes "R" and the check's digit
 * (post_mark), which pmuctl shows when no READY comes. Nothing else runs
 * any more: this CPU halts, EAX and EBX as they were.
 */
fail:
	movl %eax, R(relocate_status)(%ebp)
	movl %ebx, R(relocate_fault)(%ebp)
	movl %eax, %esi
	leal '0'(%eax), %ecx
	shll $8, %ecx
	orl $'R', %ecx                   /* PMUOS_POST_RELOCATE_FAILED(n): two ASCII characters, low byte first */
	call post_mark
	movl %esi, %eax
	movl R(relocate_fault)(%ebp), %ebx
7:	cli
	hlt
	jmp 7b

/*
 * POST mark ECX (include/pmuos/post.h) into the card's POST code register;
 * then, if it is pmuos.stop's, a halt for good. EBP = startup_32; ESI and
 * EBP kept, EAX, EBX, ECX, EDX and EDI not; one word of stack (the return
 * address: boot_params.scratch is all there is). Written only on a KNC
 * core (CPUID family 0x0B): the DBOX lies above 4 GiB, so this turns on
 * PAE paging (SDM Vol. 3A §4.4) with one page directory that
 * identity-maps the gigabyte holding this code in 2 MiB pages, but for one
 * entry far from the code, which maps the DBOX's page uncached, and turns
 * it off again (SDM Vol. 3A §9.9.2: PG cleared from identity-mapped code,
 * then CR3 = 0 to flush the TLB).
 *
 * EFER.LME off first: a bootstrap may leave it set (it ran in long mode to
 * park the APs), and with LME, CR0.PG would enter IA-32e mode, taking CR3
 * for a PML4 and these 2 MiB entries for 1 GiB pages, which a KNC core
 * lacks: a triple fault, not a POST code. The kernel's entry sets LME again.
 */
#define KNC_FAMILY     0x0b
#define DBOX_PAGE_LO   0x00600000 /* the 2 MiB page of the DBOX (0x8007C0000, platform/knc/sbox.h KNC_CARD_DBOX_BASE) */
#define DBOX_PAGE_HI   0x8
#define POSTCODE_AT    (0x1c0000 + 0x242c) /* KNC_DBOX_POSTCODE in that page */
#define PDE_2M         0x83       /* present, writable, 2 MiB */
#define PDE_UC         0x18       /* PWT, PCD */
post_mark:
	movl %ecx, R(post_code)(%ebp)
	movl $1, %eax
	cpuid
	shrl $8, %eax
	andl $0xf, %eax                  /* base family: 0x0B is below 0xF, no extended family */
	cmpl $KNC_FAMILY, %eax
	jne 9f
	movl $MSR_EFER, %ecx
	rdmsr
	andl $~EFER_LME, %eax
	wrmsr
	leal R(pae_space) + 0xfff(%ebp), %edi
	andl $~0xfff, %edi               /* EDI = the page directory, the PDPT 4 KiB above */
	leal R(post_mark)(%ebp), %ecx
	andl $0xc0000000, %ecx           /* this gigabyte */
	xorl %edx, %edx
1:	leal PDE_2M(%ecx), %eax
	movl %eax, (%edi, %edx, 8)
	movl $0, 4(%edi, %edx, 8)
	addl $0x200000, %ecx
	incl %edx
	cmpl $512, %edx
	jb 1b
	leal R(post_mark)(%ebp), %edx
	shrl $21, %edx
	andl $511, %edx
	xorl $256, %edx                  /* EDX = the DBOX's entry, half a gigabyte from this code */
	movl $(DBOX_PAGE_LO | PDE_2M | PDE_UC), (%edi, %edx, 8)
	movl $DBOX_PAGE_HI, 4(%edi, %edx, 8)
	leal 0x1000(%edi), %ebx          /* the PDPT: only this gigabyte's entry present */
	xorl %eax, %eax
	movl $8, %ecx
2:	movl %eax, -4(%ebx, %ecx, 4)
	decl %ecx
	jnz 2b
	leal R(post_mark)(%ebp), %ecx
	shrl $30, %ecx
	leal 1(%edi), %eax
	movl %eax, (%ebx, %ecx, 8)
	leal R(post_mark)(%ebp), %eax
	andl $0xc0000000, %eax
	shll $21, %edx
	orl %edx, %eax                   /* EAX = the DBOX's page, virtual */
	movl %cr4, %edx
	orl $CR4_PAE, %edx
	movl %edx, %cr4
	movl %ebx, %cr3
	movl %cr0, %edx
	orl $CR0_PG, %edx
	movl %edx, %cr0
	movl R(post_code)(%ebp), %ecx
	movl %ecx, POSTCODE_AT(%eax)
	andl $~CR0_PG, %edx
	movl %edx, %cr0
	movl %cr4, %edx
	andl $~CR4_PAE, %edx
	movl %edx, %cr4
	xorl %edx, %edx
	movl %edx, %cr3
9:	movl R(post_code)(%ebp), %ecx
	cmpw R(post_stop)(%ebp), %cx
	jne 8f
7:	cli
	hlt
	jmp 7b
8:	ret
	.balign 8
gdt32:
	boot_gdt
gdtr32:
	.word 4 * 8 - 1
	.long 0                          /* base: set above */
far32:
	.long 0                          /* offset: set above */
	.word BOOT_CS
tsc:
	.quad 0
boot_params:
	.long 0
post_code:                               /* the mark post_mark writes */
	.long 0
post_stop:                               /* pmuos.stop='s mark; 0: none */
	.word 0
stop_key:
	.ascii "pmuos.stop="
	.balign 4
pae_space:                               /* fail's page directory and PDPT, 4 KiB-aligned within */
	.skip 0x2000 + 0x1000
bzimage_end:
