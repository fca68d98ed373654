/*
 * memtest: runs functions of user/measured.c in SPFLT regions and prints
 * what the two counters counted over them (RDPMC before and after). With
 * PERF_SPFLT_CONTROL set for both counters (`pmu spflt CPU both`), a region
 * holds exactly: the CALL of the function (one write: the return address),
 * the function with its RET, and the SPFLT that ends the region. Modes:
 *   walk BYTES STRIDE PASSES [keep]   read the word at every STRIDE bytes of BYTES, PASSES times
 *   store BYTES STRIDE PASSES [keep]  the same with writes
 *   random BYTES COUNT                COUNT reads at pseudo-random offsets of BYTES
 *   ops N, rmw N                      ms_ops, ms_rmw over N words
 *   matmul N                          ms_matmul of two N x N matrices (N up to 418: 3 N^2 words in 4 MiB)
 *   vec N                             ms_vec: N SSE2 iterations over 32 N bytes (vectest only)
 *   branches N                        ms_branches(N)
 *   nops                              ms_nops: 16 KiB of code
 *   tlb                               read every 4 KiB of a 4 MiB buffer (2 MiB-aligned) never touched before
 *   stack BYTES PASSES [write]        read (then write) every line of BYTES of the stack below this
 *                                     frame, which the loader zeroed last and this task never touched
 *   stackstore BYTES                  write every line of BYTES of that stack
 * Before walk, store, random, ops, rmw, vec and nops the buffer is written,
 * then a 1 MiB scratch buffer, so the buffer and the code start out of the
 * L1s and the L2 (the L2 is inclusive); `keep` leaves the buffer in them.
 * BYTES: a power of two from 64 to 4 MiB (the stack: up to 256 KiB). memtest
 * is card code; with -DMEMTEST_VEC (user/programs/vectest.c) this is
 * vectest, memtest with `vec`, whose SSE2 makes it QEMU-only. The same
 * source built with -DMEMTEST_LINUX -DMEMTEST_VEC (tests/tests.mk) is the
 * Linux program valgrind measures: the same object code after the same
 * set-up, with no regions and no counters.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <pmuos/pmu.h>
#include "../measured.h"

#define MAX_BYTES     (4u << 20)
#define SCRATCH_BYTES (1u << 20)
#define STACK_BYTES   (256u << 10)
#define CTR_MASK      ((1ULL << 40) - 1)
#ifdef MEMTEST_VEC
#define PROGRAM  "vectest"
#define VEC_MODE "|vec"
#else
#define PROGRAM  "memtest"
#define VEC_MODE ""
#endif

/*
 * On the card 2 MiB-aligned: `tlb` spans exactly two 2 MiB regions. On Linux
 * page-aligned (valgrind reads no symbols of a program with 2 MiB-aligned
 * segments), which maps the buffer onto the L1D's sets as on the card.
 */
#ifdef MEMTEST_LINUX
#define BUF_ALIGN 4096
#else
#define BUF_ALIGN (2 << 20)
#endif
static uint64_t buf[MAX_BYTES / 8 + 8] __attribute__((aligned(BUF_ALIGN)));
static uint64_t scratch[SCRATCH_BYTES / 8];

uint64_t region_call(void *fn, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3);
#ifdef MEMTEST_LINUX
uint64_t region_call(void *fn, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3)
{
	uint64_t r = ((uint64_t (*)(uint64_t, uint64_t, uint64_t, uint64_t))fn)(a0, a1, a2, a3);

	__asm__ volatile("" ::: "memory"); /* a CALL, not a tail jump: valgrind's --toggle-collect sees calls */
	return r;
}
#define COUNTER(i) 0ULL
#else
/*
 * A region: SPFLT 1 (spflt eax = C5 FB AE F0), CALL, SPFLT 0 (spflt ebx =
 * C5 FB AE F3). RBX is saved, which also keeps the stack 16-byte aligned at
 * the call; the whole function is in one cache line.
 */
__asm__(".text\n"
	".p2align 6\n"
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

/* What to run: one or two regions of fn(a0, a1, a2, a3). */
struct job {
	void *fn, *fn2;
	uint64_t a[4];
};

/*
 * The stack below this frame: the top of the 1 MiB stack, which the loader
 * zeroed last (on the CPU that ran it) and nothing has touched since.
 */
static void __attribute__((noinline)) on_stack(struct job *j, size_t bytes, uint64_t *c)
{
	uint64_t local[STACK_BYTES / 8] __attribute__((aligned(64))); /* no line shared with the calls' pushes below */

	j->a[0] = (uint64_t)(uintptr_t)local;
	c[0] = COUNTER(0), c[1] = COUNTER(1);
	region_call(j->fn, j->a[0], bytes, 64, j->a[3]);
	if (j->fn2)
		region_call(j->fn2, j->a[0], bytes, 64, 1);
	c[0] = (COUNTER(0) - c[0]) & CTR_MASK;
	c[1] = (COUNTER(1) - c[1]) & CTR_MASK;
}

static int usage(void)
{
	fprintf(stderr, "usage: " PROGRAM " walk|store BYTES STRIDE PASSES [keep] | random BYTES COUNT"
			" | ops|rmw|matmul" VEC_MODE "|branches N | nops | tlb | stack BYTES PASSES [write] | stackstore BYTES\n");
	return 2;
}

static unsigned long arg(int argc, char **argv, int i)
{
	return i < argc ? strtoul(argv[i], NULL, 0) : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	const char *mode = argv[1];
	unsigned long n = arg(argc, argv, 2), b = arg(argc, argv, 3), c = arg(argc, argv, 4);
	struct job j = { 0 };
	size_t bytes = n;      /* the buffer the mode uses */
	int prepare = 1;       /* fill, then evict */
	bool stack = false, ok;

	if (!strcmp(mode, "walk") || !strcmp(mode, "store")) {
		j.fn = mode[0] == 'w' ? (void *)ms_walk : (void *)ms_store;
		j.a[1] = n, j.a[2] = b, j.a[3] = c;
		ok = (argc == 5 || (argc == 6 && !strcmp(argv[5], "keep"))) && b && b % 8 == 0 && c;
		prepare = argc == 6 ? 2 : 1;
	} else if (!strcmp(mode, "random")) {
		j.fn = (void *)ms_random;
		j.a[1] = n, j.a[2] = b, j.a[3] = 12345;
		ok = argc == 4;
	} else if (!strcmp(mode, "ops") || !strcmp(mode, "rmw")) {
		j.fn = mode[0] == 'o' ? (void *)ms_ops : (void *)ms_rmw;
		j.a[1] = n;
		bytes = 16 * n; /* ms_ops writes a second half */
		ok = argc == 3;
#ifdef MEMTEST_VEC
	} else if (!strcmp(mode, "vec")) {
		j.fn = (void *)ms_vec;
		j.a[1] = (uint64_t)(uintptr_t)(buf + 2 * n), j.a[2] = n;
		bytes = 32 * n;
		ok = argc == 3 && n;
#endif
	} else if (!strcmp(mode, "matmul")) {
		j.fn = (void *)ms_matmul;
		j.a[1] = (uint64_t)(uintptr_t)(buf + n * n), j.a[2] = (uint64_t)(uintptr_t)(buf + 2 * n * n), j.a[3] = n;
		for (bytes = 64; bytes < 24 * n * n; bytes *= 2)
			;
		ok = argc == 3 && n && n <= 418;
	} else if (!strcmp(mode, "branches")) {
		j.fn = (void *)ms_branches;
		j.a[0] = n;
		prepare = 0, bytes = 64;
		ok = argc == 3 && n && n % 2 == 0;
	} else if (!strcmp(mode, "nops")) {
		j.fn = (void *)ms_nops;
		bytes = 64;
		ok = argc == 2;
	} else if (!strcmp(mode, "tlb")) {
		j.fn = (void *)ms_walk;
		j.a[1] = MAX_BYTES, j.a[2] = 4096, j.a[3] = 1;
		prepare = 0, bytes = MAX_BYTES;
		ok = argc == 2;
	} else if (!strcmp(mode, "stack") || !strcmp(mode, "stackstore")) {
		stack = true;
		j.fn = mode[5] ? (void *)ms_store : (void *)ms_walk;
		j.a[3] = mode[5] ? 1 : b;
		if (!mode[5] && argc == 5 && !strcmp(argv[4], "write"))
			j.fn2 = (void *)ms_store;
		ok = (mode[5] ? argc == 3 : (argc == 4 || j.fn2)) && n <= STACK_BYTES && j.a[3];
	} else {
		ok = false;
	}
	if (!ok || bytes < 64 || bytes > MAX_BYTES || (bytes & (bytes - 1)))
		return usage();

	uint64_t cnt[2];
	if (stack) {
		on_stack(&j, bytes, cnt);
	} else {
		if (prepare)
			ms_fill(buf, bytes + 64, 1);
		if (prepare == 1)
			ms_fill(scratch, SCRATCH_BYTES, 2); /* the buffer and the code leave the L1s and the L2 */
		if (!j.a[0])
			j.a[0] = (uint64_t)(uintptr_t)buf;
		cnt[0] = COUNTER(0), cnt[1] = COUNTER(1);
		region_call(j.fn, j.a[0], j.a[1], j.a[2], j.a[3]);
		cnt[0] = (COUNTER(0) - cnt[0]) & CTR_MASK;
		cnt[1] = (COUNTER(1) - cnt[1]) & CTR_MASK;
	}
	/* Fixed width: the same output whatever the counts (what the kernel does with it stays the same). */
	printf(PROGRAM ": counter0 %13llu counter1 %13llu\n", (unsigned long long)cnt[0], (unsigned long long)cnt[1]);
	return 0;
}
