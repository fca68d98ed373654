/* triad: the STREAM triad a[i] = b[i] + s * c[i], timed with the TSC. */
#include <stdio.h>
#include <stdlib.h>
#include <pmuos/pmu.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000, reps = 5;
	double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double)), *c = malloc(n * sizeof(double));

	if (!a || !b || !c || n <= 0) {
		fprintf(stderr, "triad: cannot allocate 3 x %ld doubles\n", n);
		return 1;
	}
	for (long i = 0; i < n; i++) {
		a[i] = 0;
		b[i] = i;
		c[i] = 2 * i;
	}
	uint64_t best = ~0ULL;
	for (long r = 0; r < reps; r++) {
		uint64_t t0 = pmu_rdtsc();
		pmu_region_begin("triad");
		for (long i = 0; i < n; i++)
			a[i] = b[i] + 3.0 * c[i];
		pmu_region_end("triad");
		uint64_t t = pmu_rdtsc() - t0;
		if (t < best)
			best = t;
	}
	double check = 0;
	for (long i = 0; i < n; i++)
		check += a[i];
	double secs = (double)best / pmuos_tsc_hz();
	printf("triad: n=%ld best %llu ticks, %.1f MB/s, checksum %.0f\n", n, (unsigned long long)best,
	       3.0 * n * sizeof(double) / secs / 1e6, check);
	return 0;
}
