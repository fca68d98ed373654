/*
 * steady: a workload whose mix of user and kernel time is the same in every
 * millisecond: ROUNDS rounds (default 20000) of a WORK-iteration loop
 * (default 2000) and one system call. Multiplexed counts of it should
 * match separate runs (pmuctl stat with more than two events).
 */
#include <stdio.h>
#include <stdlib.h>
#include <pmuos/pmu.h>

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 20000, work = argc > 2 ? atol(argv[2]) : 2000;
	volatile long sink = 0;

	if (rounds <= 0 || work <= 0) {
		fprintf(stderr, "steady: usage: steady [ROUNDS [WORK]], both positive\n");
		return 2;
	}
	for (long r = 0; r < rounds; r++) {
		for (long i = 0; i < work; i++)
			sink += i;
		sink += pmuos_getcpu();
	}
	printf("steady: %ld rounds of %ld iterations and a system call\n", rounds, work);
	return 0;
}
