/*
 * softfloat: double and float through pmuos-cc's soft-float ABI (glibc's
 * soft-fp helpers, newlib's printf, strtod and libm), in lines a test can
 * compare with other builds of this same source (tests/system/test_softfloat.py):
 *   exact: ...  IEEE 754 gives one answer (+, -, *, /, sqrt, conversions,
 *               correctly rounded strtod and printf): the Linux build prints
 *               the same line
 *   libm: ...   newlib's libm (exp, log, pow, sin), not correctly rounded:
 *               equal only to a build with the same libm (pmuos-cc --qemu-sse)
 *   lib: ...    qsort, malloc and memcpy over doubles
 * Values print as %.17g (enough digits to give the double back) and as
 * their bits; NaNs only as bits (C libraries spell their sign differently).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t bits(double x)
{
	uint64_t b;
	memcpy(&b, &x, sizeof b);
	return b;
}

static void show(const char *kind, const char *what, double x)
{
	if (isnan(x))
		printf("%s: %s = nan %016llx\n", kind, what, (unsigned long long)bits(x));
	else
		printf("%s: %s = %.17g %016llx\n", kind, what, x, (unsigned long long)bits(x));
}

/* Operands that exercise rounding: ties, subnormals, overflow, signed zeros. */
static const double OPERANDS[] = {
	1.0, 3.0, 0.1, 1e16, 2.5, -7.25, 0x1.fffffffffffffp-1, 0x1p-1074, 0x1.8p-1022,
	1.7976931348623157e308, -0.0, 123456789.123456789, 1e-300, 0.3,
};
#define NOPS (sizeof OPERANDS / sizeof OPERANDS[0])

static const char *const DECIMALS[] = {
	"0.1", "1e23", "9007199254740993", "2.2250738585072011e-308", "4.9e-324", "2.4703282292062327e-324",
	"1.7976931348623157e308", "1.7976931348623159e308", "-0.0", "3.14159265358979323846264338327950288",
	"123456789012345678901234567890", "0.000001", "inf", "-1e-400",
};

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(void)
{
	char what[64];
	/* volatile: the operations run now, through the helpers, not in the compiler. */
	for (unsigned i = 0; i < NOPS; i++)
		for (unsigned j = 0; j < NOPS; j += 3) {
			volatile double x = OPERANDS[i], y = OPERANDS[j];
			snprintf(what, sizeof what, "op[%u] + op[%u]", i, j);
			show("exact", what, x + y);
			snprintf(what, sizeof what, "op[%u] - op[%u]", i, j);
			show("exact", what, x - y);
			snprintf(what, sizeof what, "op[%u] * op[%u]", i, j);
			show("exact", what, x * y);
			snprintf(what, sizeof what, "op[%u] / op[%u]", i, j);
			show("exact", what, x / y);
		}
	for (unsigned i = 0; i < NOPS; i++) {
		volatile double x = OPERANDS[i];
		volatile float f = (float)x;
		snprintf(what, sizeof what, "sqrt(op[%u])", i);
		show("exact", what, sqrt(x));
		snprintf(what, sizeof what, "(double)(float)op[%u]", i);
		show("exact", what, f);
		snprintf(what, sizeof what, "(float)op[%u] * 3", i);
		show("exact", what, f * 3.0f);
		snprintf(what, sizeof what, "op[%u] < 1, == 0.3", i);
		printf("exact: %s = %d %d\n", what, x < 1.0, x == 0.3);
		if (fabs(x) < 9e18)
			printf("exact: (long long)op[%u] = %lld\n", i, (long long)x);
	}
	volatile long long big = 9007199254740993LL;
	volatile unsigned long long ubig = 18446744073709551615ULL;
	show("exact", "(double)9007199254740993", big);
	show("exact", "(double)2^64-1", ubig);
	for (unsigned i = 0; i < sizeof DECIMALS / sizeof DECIMALS[0]; i++) {
		snprintf(what, sizeof what, "strtod(\"%s\")", DECIMALS[i]);
		show("exact", what, strtod(DECIMALS[i], NULL));
	}
	printf("exact: printf %%.3f %%e %%g = %.3f %e %g\n", 2.0 / 3.0, 6.02214076e23, 1e-5);
	printf("exact: printf %%.20f = %.20f\n", 0.1);

	for (int i = -3; i <= 3; i++) {
		snprintf(what, sizeof what, "exp(%d.5)", i);
		show("libm", what, exp(i + 0.5));
		snprintf(what, sizeof what, "log(%d.5)", i + 4);
		show("libm", what, log(i + 4.5));
		snprintf(what, sizeof what, "sin(%d.5)", i);
		show("libm", what, sin(i + 0.5));
		snprintf(what, sizeof what, "pow(1.5, %d.25)", i);
		show("libm", what, pow(1.5, i + 0.25));
	}

	enum { N = 1000 };
	double *v = malloc(N * sizeof *v), *w = malloc(N * sizeof *w);
	if (!v || !w) {
		printf("softfloat: out of memory\n");
		return 1;
	}
	uint64_t s = 88172645463325252ull;
	for (int i = 0; i < N; i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		v[i] = (double)(int64_t)s / 3e15;
	}
	memcpy(w, v, N * sizeof *v);
	qsort(w, N, sizeof *w, by_value);
	double sum = 0;
	int sorted = 1;
	for (int i = 0; i < N; i++) {
		sum += w[i];
		sorted &= i == 0 || w[i - 1] <= w[i];
	}
	printf("lib: qsort of %d doubles sorted %d, min %.17g, max %.17g\n", N, sorted, w[0], w[N - 1]);
	show("lib", "sum sorted", sum);
	free(v);
	free(w);
	return 0;
}
