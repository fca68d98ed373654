/*
 * calls: three call levels with a known split of instructions, for call
 * chains (pmuctl record -g): main -> a -> b and main -> c. Each function's
 * own work is a loop of exactly 2 instructions an iteration (DEC, JNZ:
 * integer, in-line assembly the compiler cannot change), so of the
 * 20 x UNIT instructions of the work, b runs 50 %, a 20 % and c 30 %
 * (UNIT from argv[1], default 1,000,000); start-up, calls, printf and exit
 * add a few thousand. Prints the TSC ticks the work took (-icount shift=0:
 * guest instructions, the PMIs' included: make bench's cost per sample).
 */
#include <stdio.h>
#include <stdlib.h>
#include <pmuos/pmu.h>

#define SPIN(n) do { unsigned long k_ = (n); __asm__ volatile("1: dec %0\n\tjnz 1b" : "+r"(k_)); } while (0)

static void __attribute__((noinline)) b(unsigned long unit) { SPIN(5 * unit); }

static void __attribute__((noinline)) a(unsigned long unit)
{
	SPIN(2 * unit);
	b(unit);
	__asm__ volatile(""); /* after the call: not a tail call (a jump to b would leave a out of b's chain) */
}

static void __attribute__((noinline)) c(unsigned long unit) { SPIN(3 * unit); }

int main(int argc, char **argv)
{
	long unit = argc > 1 ? atol(argv[1]) : 1000000;

	if (unit <= 0) {
		fprintf(stderr, "calls: usage: calls [UNIT], UNIT > 0 (the work is 20 x UNIT instructions)\n");
		return 2;
	}
	uint64_t t0 = pmu_rdtsc();
	a(unit);
	c(unit);
	uint64_t t1 = pmu_rdtsc();
	printf("calls: %lu instructions of work in %lu TSC ticks\n", 20 * (unsigned long)unit,
	       (unsigned long)(t1 - t0));
	return 0;
}
