/*
 * fault KIND: does one thing a Ring-3 task must not, so the kernel ends it
 * with a report and goes on (or, with "spin", runs until killed). The
 * "flags" and "fpu-*" kinds are hostile but legal: the kernel must survive
 * them and the task must go on (or the next task must not see them).
 * fault is card code: its fpu kinds leave and check the x87's state. With
 * -DFAULT_SSE (user/programs/ssefault.c) this is ssefault, QEMU-only, whose
 * fpu kinds also leave and check every XMM register and MXCSR.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pmuos/syscall.h>

/* These faults are the point: keep the compiler from warning about them or folding them. */
#pragma GCC diagnostic ignored "-Winfinite-recursion"
#pragma GCC diagnostic ignored "-Warray-bounds"

static volatile int zero, seven = 7;

#include "../../arch/regs.h" /* RFLAGS_*: the kernel's own definitions */

/*
 * Sets `set` in RFLAGS, enters the kernel (SYSCALL getcpu, or the #UD of an
 * RDPMC that the kernel emulates on QEMU), then clears them again before any
 * C code runs (the ABI wants DF clear). Returns RAX (the CPU, or counter 0's
 * low half).
 */
static long __attribute__((noinline)) with_flags(unsigned long set, int trap)
{
	long r;

	if (trap)
		__asm__ volatile("pushfq; orq %1, (%%rsp); popfq; rdpmc; pushfq; andq %2, (%%rsp); popfq"
				 : "=a"(r) : "r"(set), "r"(~set), "c"(0) : "rdx", "memory", "cc");
	else
		__asm__ volatile("pushfq; orq %2, (%%rsp); popfq; syscall; pushfq; andq %3, (%%rsp); popfq"
				 : "=a"(r) : "a"((long)SYS_GETCPU), "r"(set), "r"(~set) : "rcx", "r11", "memory", "cc");
	return r;
}

static unsigned long rflags(void)
{
	unsigned long f;
	__asm__ volatile("pushfq; popq %0" : "=r"(f));
	return f;
}

/* Every flag a Ring-3 program may set, alone and together, before each way into the kernel. */
static int flags(void)
{
	static const struct { const char *name; unsigned long bits; } f[] = {
		{ "NT", RFLAGS_NT }, { "AC", RFLAGS_AC }, { "DF", RFLAGS_DF },
		{ "NT+AC+DF", RFLAGS_NT | RFLAGS_AC | RFLAGS_DF },
	};
	long cpu = with_flags(0, 0);

	for (unsigned i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		for (int trap = 0; trap < 2; trap++) {
			long r = with_flags(f[i].bits, trap);
			if (!trap && r != cpu) {
				printf("flags: %s before SYSCALL: getcpu gave %ld, not %ld\n", f[i].name, r, cpu);
				return 1;
			}
			printf("flags: %s before %s: survived\n", f[i].name, trap ? "a trap" : "SYSCALL");
		}
	/* POPF in Ring 3 leaves IOPL alone (SDM Vol. 1, 3.4.3.3): it stays 0. */
	__asm__ volatile("pushfq; orq %0, (%%rsp); popfq" :: "r"(RFLAGS_IOPL) : "memory", "cc");
	printf("flags: IOPL after POPF of 3: %lu\n", (rflags() & RFLAGS_IOPL) >> 12);
	return 0;
}

#ifdef FAULT_SSE
static const unsigned long long secret = 0x5ec2e75ec2e75ec2ULL;
static unsigned long long fpu_seen[16][2];
static unsigned int mxcsr_seen;
#endif
static unsigned short fcw_seen, fsw_seen, ftw_seen;

/* Leaves x87 (and SSE) state a next task must not inherit: rounding, unmasked exceptions, data. */
static void __attribute__((noreturn)) fpu_dirty(void)
{
	unsigned short fcw = 0x0c40;          /* x87: round toward zero, every exception unmasked */
#ifdef FAULT_SSE
	unsigned int mxcsr = 0x6000;          /* round toward zero, every exception unmasked */

	__asm__ volatile("movq %0, %%xmm0; pshufd $0x44, %%xmm0, %%xmm0" :: "m"(secret));
	__asm__ volatile("movdqa %xmm0, %xmm1; movdqa %xmm0, %xmm2; movdqa %xmm0, %xmm3;"
			 "movdqa %xmm0, %xmm4; movdqa %xmm0, %xmm5; movdqa %xmm0, %xmm6; movdqa %xmm0, %xmm7;"
			 "movdqa %xmm0, %xmm8; movdqa %xmm0, %xmm9; movdqa %xmm0, %xmm10; movdqa %xmm0, %xmm11;"
			 "movdqa %xmm0, %xmm12; movdqa %xmm0, %xmm13; movdqa %xmm0, %xmm14; movdqa %xmm0, %xmm15");
	__asm__ volatile("ldmxcsr %0" :: "m"(mxcsr));
#endif
	__asm__ volatile("fldcw %0; fld1; fld1" :: "m"(fcw));
	/* Straight to the kernel: no library code runs on this state. */
	__asm__ volatile("syscall" :: "a"((long)SYS_EXIT), "D"(0L) : "rcx", "r11", "memory");
	__builtin_unreachable();
}

/*
 * The state this task found, before any code of its own touched it: a
 * preinit function, which crt0 runs before the runtime's set-up (its
 * malloc and memset are SSE code in the --qemu-sse build).
 */
static void fpu_snapshot(void)
{
	unsigned char env[28];

#ifdef FAULT_SSE
	__asm__ volatile("stmxcsr %0" : "=m"(mxcsr_seen));
	__asm__ volatile("movdqu %%xmm0, 0(%0); movdqu %%xmm1, 16(%0); movdqu %%xmm2, 32(%0);"
			 "movdqu %%xmm3, 48(%0); movdqu %%xmm4, 64(%0); movdqu %%xmm5, 80(%0);"
			 "movdqu %%xmm6, 96(%0); movdqu %%xmm7, 112(%0); movdqu %%xmm8, 128(%0);"
			 "movdqu %%xmm9, 144(%0); movdqu %%xmm10, 160(%0); movdqu %%xmm11, 176(%0);"
			 "movdqu %%xmm12, 192(%0); movdqu %%xmm13, 208(%0); movdqu %%xmm14, 224(%0);"
			 "movdqu %%xmm15, 240(%0)" :: "r"(fpu_seen) : "memory");
#endif
	__asm__ volatile("fnstcw %0; fnstsw %1" : "=m"(fcw_seen), "=m"(fsw_seen));
	__asm__ volatile("fnstenv %0; fldcw %0" : "+m"(env)); /* fnstenv masks exceptions: restore the CW */
	ftw_seen = env[8] | env[9] << 8;
}

__attribute__((section(".preinit_array"), used)) static void (*const take_snapshot)(void) = fpu_snapshot;

static int fpu_check(void)
{
	printf("fpu: ");
#ifdef FAULT_SSE
	printf("mxcsr %#x, ", mxcsr_seen);
#endif
	printf("x87 control %#x, status %#x, tags %#x", fcw_seen, fsw_seen, ftw_seen);
#ifdef FAULT_SSE
	int leaked = 0;

	for (int i = 0; i < 16; i++)
		leaked += fpu_seen[i][0] != 0 || fpu_seen[i][1] != 0;
	printf(", %d of 16 XMM registers not zero", leaked);
#endif
	printf("\n");
	return 0;
}

/* An unmasked x87 exception must reach the task as #MF (CR0.NE), not go unnoticed. */
static int x87_exception(void)
{
	unsigned short fcw = 0x037b; /* default, with zero-divide unmasked */
	double r;

	__asm__ volatile("fldcw %1; fld1; fldz; fdivrp; fstpl %0; fwait" : "=m"(r) : "m"(fcw));
	printf("x87: divide by zero went unnoticed (%f)\n", r);
	return 0;
}

static int __attribute__((noinline)) recurse(int n)
{
	volatile char pad[512];
	pad[0] = n;
	return recurse(n + 1) + pad[0];
}

int main(int argc, char **argv)
{
	const char *k = argc > 1 ? argv[1] : "";

	if (!strcmp(k, "fpu-check")) {
		return fpu_check();
	}
	printf("fault: %s\n", k);
	fflush(stdout);
	if (!strcmp(k, "pf"))
		return *(volatile int *)8;                             /* unmapped: #PF */
	if (!strcmp(k, "kwrite"))
		*(volatile int *)0x100000 = 1;                         /* kernel image: #PF */
	else if (!strcmp(k, "kread"))
		return *(volatile int *)0xfee00020;                    /* APIC page: #PF */
	else if (!strcmp(k, "gp"))
		return *(volatile int *)0x8000000000000000ULL;         /* non-canonical: #GP */
	else if (!strcmp(k, "ud"))
		__asm__ volatile("ud2");
	else if (!strcmp(k, "de"))
		return seven / zero;
	else if (!strcmp(k, "stack"))
		return recurse(0);                                     /* guard page: #PF */
	else if (!strcmp(k, "exec")) {
		volatile uint8_t code[16] = { 0xc3 };                  /* ret, on the stack */
		((void (*)(void))(uintptr_t)code)();
	} else if (!strcmp(k, "wrmsr"))
		__asm__ volatile("wrmsr" :: "c"(0x2f), "a"(3), "d"(0)); /* GLOBAL_CTRL: #GP */
	else if (!strcmp(k, "rdmsr"))
		__asm__ volatile("rdmsr" :: "c"(0x20) : "eax", "edx");
	else if (!strcmp(k, "cr4"))
		__asm__ volatile("mov %0, %%cr4" :: "r"(0UL));
	else if (!strcmp(k, "hlt"))
		__asm__ volatile("hlt");
	else if (!strcmp(k, "rdpmc2"))
		__asm__ volatile("rdpmc" :: "c"(2) : "eax", "edx");    /* no counter 2: #GP */
	else if (!strcmp(k, "heap")) {
		long mib = 0;
		void *volatile p;                                      /* kept: clang drops an unused malloc */
		while ((p = malloc(1 << 20)) != NULL)                  /* sbrk until refused */
			mib++;
		printf("fault: heap: %ld MiB\n", mib);
		return 7;
	} else if (!strcmp(k, "flags"))
		return flags();
	else if (!strcmp(k, "tf"))                                     /* single-step: #DB */
		with_flags(RFLAGS_TF, 0);
	else if (!strcmp(k, "iopl"))
		__asm__ volatile("pushfq; orq %0, (%%rsp); popfq; cli" :: "r"(RFLAGS_IOPL) : "memory", "cc");
	else if (!strcmp(k, "fpu-dirty"))
		fpu_dirty();
	else if (!strcmp(k, "x87"))
		return x87_exception();
	else if (!strcmp(k, "spin"))
		for (;;)
			;
	else {
		fprintf(stderr, "fault: unknown kind '%s'\n", k);
		return 2;
	}
	return 0;
}
