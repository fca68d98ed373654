/*
 * What QEMU's CPU does with each instruction a KNC core lacks (Intel
 * 327364-001 App. B), for tests/system/test_knc_cpu.py: a Multiboot ELF32
 * that runs each probe at CPL 0 (CR0.EM clear, CR4.OSFXSR set, the x87
 * initialised) and prints "probe NAME ran", "probe NAME #UD" or
 * "probe NAME #GP" on COM1, then powers off (q35's ACPI PM1a control, port
 * 0x604, SLP_EN). 32-bit protected mode: these encodings mean the same in
 * 64-bit mode.
 */
	.text
	.code32
	.align 4
	.long 0x1BADB002, 0x00000003, -(0x1BADB002 + 0x3)   /* Multiboot 1 header: magic, flags, checksum */
	.globl _start
_start:
	mov $0x90000, %esp
	mov $idt, %edi                  /* 32 interrupt gates: #UD, #GP or any other */
	xor %ecx, %ecx
1:	mov $h_other, %eax
	cmp $6, %ecx
	jne 2f
	mov $h_ud, %eax
2:	cmp $13, %ecx
	jne 3f
	mov $h_gp, %eax
3:	mov %ax, (%edi)
	movw %cs, 2(%edi)
	movw $0x8e00, 4(%edi)
	shr $16, %eax
	mov %ax, 6(%edi)
	add $8, %edi
	inc %ecx
	cmp $32, %ecx
	jne 1b
	lidt idtr
	mov %cr4, %eax
	or $0x600, %eax                 /* OSFXSR, OSXMMEXCPT: SSE is legal where CPUID has it */
	mov %eax, %cr4
	mov %cr0, %eax
	and $~4, %eax                   /* EM clear, MP set */
	or $2, %eax
	mov %eax, %cr0
	fninit
	fld1
	fldz

/* One probe: its name, then the instruction's bytes; a fault resumes after it. */
#define P(name, ...) mov $9f, %eax; mov %eax, resume; mov $pfx, %esi; call puts; mov $8f, %esi; call puts; \
	.byte __VA_ARGS__; mov $ran, %esi; call puts; jmp 9f; 8: .asciz name; 9:
	P("cmove", 0x0f, 0x44, 0xc0)
	P("fcmovb", 0xda, 0xc1)
	P("fcomi", 0xdb, 0xf1)
	P("fucomi", 0xdb, 0xe9)
	P("fcomip", 0xdf, 0xf1)
	P("pxor_xmm", 0x66, 0x0f, 0xef, 0xc0)
	P("movaps", 0x0f, 0x28, 0xc1)
	P("movnti", 0x0f, 0xc3, 0x04, 0x24)
	P("stmxcsr", 0x0f, 0xae, 0x1c, 0x24)
	P("crc32", 0xf2, 0x0f, 0x38, 0xf0, 0xc0)
	P("lfence", 0x0f, 0xae, 0xe8)
	P("mfence", 0x0f, 0xae, 0xf0)
	P("sfence", 0x0f, 0xae, 0xf8)
	P("clflush", 0x0f, 0xae, 0x3c, 0x24)
	P("popcnt", 0xf3, 0x0f, 0xb8, 0xc0)
	P("movbe", 0x0f, 0x38, 0xf0, 0x04, 0x24)
	P("rdtscp", 0x0f, 0x01, 0xf9)
	P("monitor", 0x89, 0xe0, 0x31, 0xc9, 0x31, 0xd2, 0x0f, 0x01, 0xc8)
	P("femms", 0x0f, 0x0e)
	P("pfadd", 0x0f, 0x0f, 0xc1, 0x9e)
	P("emms", 0x0f, 0x77)
	P("movq_mm", 0x0f, 0x6f, 0xc1)
	P("paddb_mm", 0x0f, 0xfc, 0xc1)
	P("movd_mm", 0x0f, 0x6e, 0xc0)
	P("pshufw", 0x0f, 0x70, 0xc1, 0x00)
	P("nopl", 0x0f, 0x1f, 0x00)
	P("nopw", 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00)
	P("hint_nop_0f19", 0x0f, 0x19, 0xc0)
	P("hint_nop_0f18_4", 0x0f, 0x18, 0x20)
	P("endbr32", 0xf3, 0x0f, 0x1e, 0xfb)
	P("pause", 0xf3, 0x90)
	P("prefetcht0", 0x0f, 0x18, 0x0c, 0x24)
	P("prefetchnta", 0x0f, 0x18, 0x04, 0x24)
	P("prefetchw", 0x0f, 0x0d, 0x0c, 0x24)
	/* KNC has these (App. B.1; LZCNT and TZCNT encodings run as BSR and BSF without them) */
	P("fxsave", 0x0f, 0xae, 0x04, 0x24)
	P("rdtsc", 0x0f, 0x31)
	P("lzcnt_bsr", 0xf3, 0x0f, 0xbd, 0xc0)
	P("tzcnt_bsf", 0xf3, 0x0f, 0xbc, 0xc0)
	mov $0x604, %dx
	mov $0x2000, %ax
	outw %ax, %dx
6:	hlt
	jmp 6b

h_ud:	mov $ud, %esi
	jmp 1f
h_gp:	add $4, %esp                    /* its error code */
	mov $gp, %esi
	jmp 1f
h_other: mov $other, %esi
1:	call puts
	mov resume, %eax
	mov %eax, (%esp)                /* return past the probe */
	iret

puts:	mov $0x3f8, %dx
1:	lodsb
	test %al, %al
	jz 2f
	outb %al, %dx
	jmp 1b
2:	ret

	.data
resume:	.long 0
pfx:	.asciz "probe "
ran:	.asciz " ran\n"
ud:	.asciz " #UD\n"
gp:	.asciz " #GP\n"
other:	.asciz " other\n"
	.align 8
idtr:	.word 32 * 8 - 1
	.long idt
	.align 8
idt:	.space 32 * 8
