/*
 * memtest: runs one function of user/measured.c in an SPFLT region and
 * prints what the two counters counted over the region (RDPMC before and
 * after). With PERF_SPFLT_CONTROL set for both counters (`pmu spflt CPU
 * both`), the region holds exactly: the CALL of the function (one write:
 * the return address), the function with its RET, and the SPFLT that ends
 * the region. Before the region the buffer is written, then a 1 MiB
 * scratch buffer, so that the buffer starts out of the L1 and L2 caches.
 *   memtest walk BYTES STRIDE PASSES   read every STRIDE bytes of BYTES, PASSES times
 *   memtest random BYTES COUNT         COUNT reads at pseudo-random offsets
 *   memtest ops N                      ms_ops over N words
 *   memtest rmw N                      ms_rmw over N words
 * BYTES: a power of two from 64 to 4 MiB. The same source built with
 * -DMEMTEST_LINUX (tests/tests.mk) is the Linux program valgrind measures:
 * the same object code (build/user/measured.o) after the same set-up, with
 * no region and no counters.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <pmuos/pmu.h>
#include "../measured.h"

#define MAX_BYTES (4u << 20)
#define SCRATCH_BYTES (1u << 20)
#define CTR_MASK ((1ULL << 40) - 1)

static uint64_t buf[MAX_BYTES / 8 + 8], scratch[SCRATCH_BYTES / 8];

uint64_t region_call(void *fn, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3);
#ifdef MEMTEST_LINUX
uint64_t region_call(void *fn, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3)
{
	return ((uint64_t (*)(uint64_t, uint64_t, uint64_t, uint64_t))fn)(a0, a1, a2, a3);
}
#define COUNTER(i) 0ULL
#else
/*
 * The region: SPFLT 1 (spflt eax = C5 FB AE F0), CALL, SPFLT 0 (spflt ebx =
 * C5 FB AE F3). RBX is saved, which also keeps the stack 16-byte aligned at
 * the call.
 */
__asm__(".text\n"
	".globl region_call\n"
	"region_call:\n\t"
	"push %rbx\n\t"
	"mov %rdi, %r11\n\t"
	"mov %rsi, %rdi\n\t"
	"mov %rdx, %rsi\n\t"
	"mov %rcx, %rdx\n\t"
	"mov %r8, %rcx\n\t"
	"mov $1, %eax\n\t"
	"xor %ebx, %ebx\n\t"
	".byte 0xc5, 0xfb, 0xae, 0xf0\n\t"
	"call *%r11\n\t"
	".byte 0xc5, 0xfb, 0xae, 0xf3\n\t"
	"pop %rbx\n\t"
	"ret\n");
#define COUNTER(i) pmu_rdpmc(i)
#endif

static int usage(void)
{
	fprintf(stderr, "usage: memtest walk BYTES STRIDE PASSES | random BYTES COUNT | ops N | rmw N\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return usage();
	unsigned long bytes = strtoul(argv[2], NULL, 0), a = argc > 3 ? strtoul(argv[3], NULL, 0) : 0;
	unsigned long b = argc > 4 ? strtoul(argv[4], NULL, 0) : 0;
	void *fn;
	uint64_t args[3];

	if (strcmp(argv[1], "walk") == 0 && argc == 5) {
		fn = (void *)ms_walk;
		args[0] = bytes, args[1] = a, args[2] = b;
		if (a == 0 || a % 8 || b == 0)
			return usage();
	} else if (strcmp(argv[1], "random") == 0 && argc == 4) {
		fn = (void *)ms_random;
		args[0] = bytes, args[1] = a, args[2] = 12345;
	} else if ((strcmp(argv[1], "ops") == 0 || strcmp(argv[1], "rmw") == 0) && argc == 3) {
		fn = argv[1][0] == 'o' ? (void *)ms_ops : (void *)ms_rmw;
		args[0] = bytes, args[1] = args[2] = 0;
		bytes *= 16; /* ms_ops writes a second half */
	} else {
		return usage();
	}
	if (bytes < 64 || bytes > MAX_BYTES || (bytes & (bytes - 1)))
		return usage();
	ms_fill(buf, bytes + 64, 1);
	ms_fill(scratch, SCRATCH_BYTES, 2); /* the buffer leaves the L1 and the L2 */
	uint64_t c0 = COUNTER(0), c1 = COUNTER(1);
	uint64_t r = region_call(fn, (uint64_t)(uintptr_t)buf, args[0], args[1], args[2]);
	c0 = (COUNTER(0) - c0) & CTR_MASK;
	c1 = (COUNTER(1) - c1) & CTR_MASK;
	printf("memtest: %s: counter0 %llu counter1 %llu (result %llu)\n", argv[1], (unsigned long long)c0,
	       (unsigned long long)c1, (unsigned long long)r);
	return 0;
}
