/* chase: a pointer chase through a random cyclic permutation (memory latency). */
#include <stdio.h>
#include <stdlib.h>
#include <pmuos/pmu.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1 << 16, steps = 4 * n;
	long *next = malloc(n * sizeof(long));

	if (!next || n < 2) {
		fprintf(stderr, "chase: cannot allocate %ld slots\n", n);
		return 1;
	}
	/* Sattolo's algorithm: one cycle through every slot. */
	for (long i = 0; i < n; i++)
		next[i] = i;
	srand(1);
	for (long i = n - 1; i > 0; i--) {
		long j = rand() % i, t = next[i];
		next[i] = next[j];
		next[j] = t;
	}
	long p = 0;
	uint64_t t0 = pmu_rdtsc();
	pmu_region_begin("chase");
	for (long s = 0; s < steps; s++)
		p = next[p];
	pmu_region_end("chase");
	uint64_t t = pmu_rdtsc() - t0;
	printf("chase: %ld slots, %ld steps, %.1f ticks per step (end at %ld)\n", n, steps, (double)t / steps, p);
	return 0;
}
