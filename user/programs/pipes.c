/*
 * pipes: loops whose every iteration has the same known mix for the
 * timing model's events (plugin/timing.h), each in a region named after
 * it. pipes MODE N runs N iterations of MODE's loop:
 *   chain  64 dependent ADDs (one result feeds the next): CPI 2 alone
 *   pairs  32 pairs of independent ADDs (U and V pipe)
 *   both   16 pairs of loads (a memory access in each pipe)
 *   agi    8 IMULs whose result addresses the next load (an AGI each)
 *   div    4 DIVs (microcoded)
 *   flush  1 branch whose direction alternates (mispredicted each time)
 *   pf0, pf1  a VPREFETCH0 (pf1: VPREFETCH1) of the next line of a buffer
 *          the program wrote 4 MiB of first (its first lines have left the
 *          caches); pf0hit/pf1hit with a load of the line right after it,
 *          pf0twice/pf1twice with the same prefetch twice
 * Each loop ends with DEC RCX / JNZ. The tests take the difference of two
 * runs (N and 2N), which cancels the region's own instructions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pmuos/pmu.h>

#define REP4(x) x x x x
#define REP16(x) REP4(REP4(x))

static long buf[8];

static void chain(long n)
{
	long a = 0;

	__asm__ volatile("1:\n" REP16(REP4("add $1, %0\n")) "dec %1\njnz 1b" : "+r"(a), "+c"(n));
}

static void pairs(long n)
{
	long a = 0, b = 0;

	__asm__ volatile("1:\n" REP16(REP4("add $1, %0\nadd $1, %1\n")) "dec %2\njnz 1b"
			 : "+r"(a), "+r"(b), "+c"(n));
}

static void both(long n)
{
	long x, y;

	__asm__ volatile("1:\n" REP16("mov (%3), %0\nmov 8(%3), %1\n") "dec %2\njnz 1b"
			 : "=&r"(x), "=&r"(y), "+c"(n)
			 : "r"(buf)
			 : "memory");
}

static void agi(long n)
{
	long p = (long)buf, one = 1, x;

	__asm__ volatile("1:\n" REP4("imul %3, %1\nmov (%1), %0\n") REP4("imul %3, %1\nmov (%1), %0\n") "dec %2\njnz 1b"
			 : "=&r"(x), "+r"(p), "+c"(n)
			 : "r"(one)
			 : "memory");
}

static void divs(long n)
{
	long q = 0, d = 3;

	__asm__ volatile("1:\n" REP4("xor %%edx, %%edx\nmov $1000, %%eax\ndiv %2\n") "dec %1\njnz 1b"
			 : "=&a"(q), "+c"(n)
			 : "r"(d)
			 : "rdx");
}

static void flush(long n)
{
	long k = 0;

	__asm__ volatile("1:\ninc %0\ntest $1, %0\njz 2f\nnop\n2:\ndec %1\njnz 1b" : "+r"(k), "+c"(n));
}

/*
 * VPREFETCH0/1 -0x70(%rdi): C5 F8 18 /1 and /2 with a disp8 (Intel
 * 327364-001), which the assembler does not know for x86-64; a QEMU CPU
 * raises #UD and the kernel performs it (pmu/model/emul.c). The operand's form is
 * for objdump, which does not know it either: it prints (bad) for C5 F8 18
 * and decodes on from the ModRM byte, and ModRM 4F or 57 with a disp8 of
 * 90 read as one instruction of no harm (XCHG, or PUSH and NOP), so what
 * follows decodes in step (with (%rdi) it read CMOVs and MMX).
 */
#define VPREFETCH0 ".byte 0xc5, 0xf8, 0x18, 0x4f, 0x90\n"
#define VPREFETCH1 ".byte 0xc5, 0xf8, 0x18, 0x57, 0x90\n"
#define PF_DISP 0x70
#define PF_BYTES (4 << 20)

static char *pf_buf;

/* n prefetches (and what follows each) of consecutive lines of pf_buf; RDI is the line + PF_DISP. */
#define PF_LOOP(name, body)                                                          \
	static void name(long n)                                                     \
	{                                                                            \
		for (char *p = pf_buf; n--; p += 64)                                 \
			__asm__ volatile(body : : "D"(p + PF_DISP) : "rax", "memory"); \
	}
PF_LOOP(pf0, VPREFETCH0)
PF_LOOP(pf0hit, VPREFETCH0 "movzbl -0x70(%0), %%eax")
PF_LOOP(pf0twice, VPREFETCH0 VPREFETCH0)
PF_LOOP(pf1, VPREFETCH1)
PF_LOOP(pf1hit, VPREFETCH1 "movzbl -0x70(%0), %%eax")
PF_LOOP(pf1twice, VPREFETCH1 VPREFETCH1)

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*run)(long);
	} modes[] = { { "chain", chain }, { "pairs", pairs }, { "both", both },     { "agi", agi },
		      { "div", divs },     { "flush", flush }, { "pf0", pf0 },       { "pf0hit", pf0hit },
		      { "pf0twice", pf0twice }, { "pf1", pf1 }, { "pf1hit", pf1hit }, { "pf1twice", pf1twice } };
	long n = argc > 2 ? atol(argv[2]) : 0;

	if (argc > 1 && !strncmp(argv[1], "pf", 2)) {
		if (n > PF_BYTES / 64 / 2 || !(pf_buf = malloc(PF_BYTES))) {
			fprintf(stderr, "pipes: %s takes at most %d lines\n", argv[1], PF_BYTES / 64 / 2);
			return 2;
		}
		memset(pf_buf, 1, PF_BYTES); /* the caches hold its last lines; the first half is in memory */
	}

	for (size_t i = 0; argc > 1 && n > 0 && i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (strcmp(argv[1], modes[i].name) != 0)
			continue;
		pmu_region_begin(modes[i].name);
		modes[i].run(n);
		pmu_region_end(modes[i].name);
		printf("pipes: %s, %ld iterations\n", modes[i].name, n);
		return 0;
	}
	fprintf(stderr, "pipes: usage: pipes chain|pairs|both|agi|div|flush|pf0|pf0hit|pf0twice|pf1|pf1hit|pf1twice N "
			"(N > 0)\n");
	return 2;
}
