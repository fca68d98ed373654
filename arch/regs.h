/*
 * x86 architectural constants (Intel SDM Vol. 3A §2.5 control registers,
 * Vol. 1 §3.4.3 RFLAGS, Vol. 4 MSRs), each written once, for C and for
 * assembly (boot/entry.S, boot/trampoline.S): plain numbers and shifts, no
 * casts. In C a bit is an unsigned long (64 bits), so a bit 31 or above is
 * safe in either. A KNC core has them all at the same places (its 64-bit
 * mode is x86-64's; SSDG 328207-002).
 */
#ifndef ARCH_REGS_H
#define ARCH_REGS_H

#ifdef __ASSEMBLER__
#define X86_BIT(n) (1 << (n))
#else
#define X86_BIT(n) (1UL << (n))
#endif

/* CR0 (SDM Vol. 3A §2.5) */
#define CR0_PE X86_BIT(0)   /* protected mode */
#define CR0_MP X86_BIT(1)   /* WAIT/FWAIT honours TS */
#define CR0_EM X86_BIT(2)   /* x87 emulation: #NM on every x87 instruction */
#define CR0_ET X86_BIT(4)   /* reads 1 on every processor since the i486 */
#define CR0_NE X86_BIT(5)   /* x87 errors as #MF, not the PC's IRQ 13 */
#define CR0_NW X86_BIT(29)  /* not write-through: with CD, caching off */
#define CR0_CD X86_BIT(30)  /* cache disable */
#define CR0_PG X86_BIT(31)  /* paging */

/* CR4 (SDM Vol. 3A §2.5) */
#define CR4_PAE        X86_BIT(5)  /* 64-bit page table entries (long mode needs them) */
#define CR4_PGE        X86_BIT(7)  /* global pages: a KNC core raises #GP on it (arch/x86.h cr4_refused) */
#define CR4_PCE        X86_BIT(8)  /* RDPMC allowed at CPL 3 */
#define CR4_OSFXSR     X86_BIT(9)  /* FXSAVE/FXRSTOR save SSE state; SSE allowed */
#define CR4_OSXMMEXCPT X86_BIT(10) /* SSE exceptions as #XM */

/* RFLAGS (SDM Vol. 1 §3.4.3) */
#define RFLAGS_TF   X86_BIT(8)   /* single step */
#define RFLAGS_IF   X86_BIT(9)   /* interrupts enabled */
#define RFLAGS_DF   X86_BIT(10)  /* string operations go down */
#define RFLAGS_IOPL (X86_BIT(12) | X86_BIT(13)) /* I/O privilege level, 2 bits */
#define RFLAGS_NT   X86_BIT(14)  /* nested task */
#define RFLAGS_AC   X86_BIT(18)  /* alignment check (with CR0.AM, at CPL 3) */

/* MSRs (SDM Vol. 4, Table 2-2) */
#define MSR_APIC_BASE      0x1b
#define MSR_TSC_DEADLINE   0x6e0
#define MSR_EFER           0xc0000080
#define MSR_STAR           0xc0000081 /* SYSCALL/SYSRET segment selectors */
#define MSR_LSTAR          0xc0000082 /* SYSCALL's 64-bit entry point */
#define MSR_FMASK          0xc0000084 /* RFLAGS bits SYSCALL clears */
#define MSR_FS_BASE        0xc0000100
#define MSR_GS_BASE        0xc0000101
#define MSR_KERNEL_GS_BASE 0xc0000102 /* SWAPGS's other GS base */

/* IA32_EFER (SDM Vol. 4, Table 2-2) */
#define EFER_SCE X86_BIT(0)  /* SYSCALL/SYSRET */
#define EFER_LME X86_BIT(8)  /* long mode enable */
#define EFER_NXE X86_BIT(11) /* the execute-disable bit of page table entries */

#endif
