/* matmul: dense C = A * B in double precision; the inner loop is multiply_row. */
#include <stdio.h>
#include <stdlib.h>
#include <pmuos/pmu.h>

static void __attribute__((noinline)) multiply_row(int n, const double *a, const double *b, double *c)
{
	for (int j = 0; j < n; j++) {
		double s = 0;
		for (int k = 0; k < n; k++)
			s += a[k] * b[k * n + j];
		c[j] = s;
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 64;
	double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * n);
	double *c = malloc(sizeof(double) * n * n);

	if (!a || !b || !c || n <= 0) {
		fprintf(stderr, "matmul: cannot allocate 3 %dx%d matrices\n", n, n);
		return 1;
	}
	for (int i = 0; i < n * n; i++) {
		a[i] = i % 7;
		b[i] = i % 5;
	}
	pmu_region_begin("matmul");
	for (int i = 0; i < n; i++)
		multiply_row(n, a + i * n, b, c + i * n);
	pmu_region_end("matmul");
	double trace = 0;
	for (int i = 0; i < n; i++)
		trace += c[i * n + i];
	printf("matmul: n=%d trace %.0f\n", n, trace);
	return 0;
}
