/*
 * badstack: a hostile stack for call chains (pmuctl record -g,
 * pmu/callchain.c). Each kind spins UNIT iterations of a 2-instruction loop
 * (DEC, JNZ) in its own function with RBP, the frame pointer the PMI walks,
 * set to:
 *   loop       two frames on the stack that point at each other
 *   kernel     a kernel address (the card's identity map), then a frame
 *              whose return address is one
 *   unmapped   a page of the user region no one mapped
 *   unaligned  a frame 4 bytes off its 8-byte alignment
 *   deep       a valid chain of 64 rising frames (the walk stops at
 *              PMU_CALLCHAIN_MAX)
 * and `all` runs them one after the other. The walk must end at each
 * without a fault (none can be taken in the PMI) and the card keep serving.
 * Prints the TSC ticks of each kind's spin (make bench: the cost per sample).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pmuos/pmu.h>
#include <pmuos/syscall.h>

#define DEEP 64
#define KERNEL_ADDR 0x100000ULL /* the card kernel's load address (linker.ld), identity-mapped, supervisor-only */

struct frame {
	uint64_t next; /* the caller's RBP */
	uint64_t ret;  /* the return address */
};

/* The spin with RBP = fp; RBP is given back before any C code runs. */
#define SPIN_WITH_RBP(fp, n) do { unsigned long k_ = (n); \
	__asm__ volatile("mov %%rbp, %%r11\n\tmov %1, %%rbp\n1:\tdec %0\n\tjnz 1b\n\tmov %%r11, %%rbp" \
			 : "+r"(k_) : "r"((uint64_t)(fp)) : "r11", "memory"); } while (0)

/* One spinner per kind, so that a sample names its kind: TSC ticks of n iterations with RBP = fp. */
#define SPINNER(name) static uint64_t __attribute__((noinline)) name(uint64_t fp, unsigned long n) \
	{ uint64_t t = pmu_rdtsc(); SPIN_WITH_RBP(fp, n); return pmu_rdtsc() - t; }
SPINNER(spin_loop)
SPINNER(spin_kernel)
SPINNER(spin_unmapped)
SPINNER(spin_unaligned)
SPINNER(spin_deep)

int main(int argc, char **argv)
{
	const char *kind = argc > 1 ? argv[1] : "all";
	long unit = argc > 2 ? atol(argv[2]) : 1000000;
	int all = strcmp(kind, "all") == 0, ran = 0;
	/* The frames live in main's stack frame: above the spinning function's stack pointer, as real ones are. */
	volatile struct frame f[DEEP];
	uint64_t ret = (uint64_t)(uintptr_t)main + 1; /* a return address into main */

	if (unit <= 0) {
		fprintf(stderr, "badstack: usage: badstack [loop|kernel|unmapped|unaligned|deep|all [UNIT]]\n");
		return 2;
	}
	if (all || !strcmp(kind, "loop")) {
		f[0] = (struct frame){ (uint64_t)(uintptr_t)&f[1], ret };
		f[1] = (struct frame){ (uint64_t)(uintptr_t)&f[0], ret };
		printf("badstack: loop %lu ticks\n", (unsigned long)spin_loop((uint64_t)(uintptr_t)&f[0], unit));
		ran++;
	}
	if (all || !strcmp(kind, "kernel")) {
		f[0] = (struct frame){ KERNEL_ADDR, KERNEL_ADDR };
		uint64_t t = spin_kernel(KERNEL_ADDR, unit / 2) + spin_kernel((uint64_t)(uintptr_t)&f[0], unit / 2);
		printf("badstack: kernel %lu ticks\n", (unsigned long)t);
		ran++;
	}
	if (all || !strcmp(kind, "unmapped")) {
		printf("badstack: unmapped %lu ticks\n", (unsigned long)spin_unmapped(USER_END - (1ULL << 30), unit));
		ran++;
	}
	if (all || !strcmp(kind, "unaligned")) {
		f[0] = (struct frame){ (uint64_t)(uintptr_t)&f[1], ret };
		printf("badstack: unaligned %lu ticks\n",
		       (unsigned long)spin_unaligned((uint64_t)(uintptr_t)&f[0] + 4, unit));
		ran++;
	}
	if (all || !strcmp(kind, "deep")) {
		for (int i = 0; i < DEEP; i++)
			f[i] = (struct frame){ i + 1 < DEEP ? (uint64_t)(uintptr_t)&f[i + 1] : 0, ret };
		printf("badstack: deep %lu ticks\n", (unsigned long)spin_deep((uint64_t)(uintptr_t)&f[0], unit));
		ran++;
	}
	if (!ran) {
		fprintf(stderr, "badstack: unknown kind '%s' (loop, kernel, unmapped, unaligned, deep, all)\n", kind);
		return 2;
	}
	return 0;
}
