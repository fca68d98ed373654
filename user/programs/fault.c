/*
 * fault KIND: does one thing a Ring-3 task must not, so the kernel ends it
 * with a report and goes on (or, with "spin", runs until killed).
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

static int __attribute__((noinline)) recurse(int n)
{
	volatile char pad[512];
	pad[0] = n;
	return recurse(n + 1) + pad[0];
}

int main(int argc, char **argv)
{
	const char *k = argc > 1 ? argv[1] : "";

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
		while (malloc(1 << 20))                                /* sbrk until refused */
			mib++;
		printf("fault: heap: %ld MiB\n", mib);
		return 7;
	} else if (!strcmp(k, "spin"))
		for (;;)
			;
	else {
		fprintf(stderr, "fault: unknown kind '%s'\n", k);
		return 2;
	}
	return 0;
}
