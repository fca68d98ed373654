/*
 * omp: OpenMP on the card (libgomp, user/gomp.mk), built with
 * `pmuos-cc -fopenmp`, which compiles with gcc: integer code only (no
 * soft-float ABI in gcc for x86-64; scripts/knc-cc). A team of one thread
 * per CPU of the process (run --threads; omp_get_num_procs), then:
 *   omp [N]   each thread says where it runs; a `parallel for` sums 1..N
 *             (default 1,000,000) with a reduction, checked against
 *             N(N + 1)/2; exit status 1 if it differs.
 */
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

int sched_getcpu(void);

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000, sum = 0;
	int team = 0;

#pragma omp parallel
	{
#pragma omp critical
		printf("omp: thread %d of %d on CPU %d\n", omp_get_thread_num(), omp_get_num_threads(), sched_getcpu());
#pragma omp single
		team = omp_get_num_threads();
	}
#pragma omp parallel for reduction(+ : sum)
	for (long i = 1; i <= n; i++)
		sum += i;
	long want = n * (n + 1) / 2;
	printf("omp: %d threads, sum of 1..%ld = %ld (expected %ld)%s\n", team, n, sum, want, sum == want ? "" : " WRONG");
	return sum != want;
}
