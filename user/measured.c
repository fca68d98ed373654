/* Measured functions; see user/measured.h. Plain C, no library calls. */
#include "measured.h"

uint64_t ms_fill(uint64_t *buf, size_t bytes, uint64_t seed)
{
	uint64_t v = seed;

	for (size_t i = 0; i < bytes / 8; i++)
		buf[i] = v = seed + i;
	return v;
}

uint64_t ms_walk(const uint64_t *buf, size_t bytes, size_t stride, unsigned passes)
{
	uint64_t sum = 0;

	for (unsigned p = 0; p < passes; p++)
		for (size_t off = 0; off < bytes; off += stride)
			sum += *(const volatile uint64_t *)((const char *)buf + off);
	return sum;
}

uint64_t ms_random(const uint64_t *buf, size_t bytes, size_t count, uint64_t seed)
{
	uint64_t sum = 0, x = seed;

	for (size_t i = 0; i < count; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL; /* Knuth's MMIX LCG */
		sum += *(const volatile uint64_t *)((const char *)buf + ((x >> 20) & (bytes - 8)));
	}
	return sum;
}

uint64_t ms_ops(uint64_t *a, size_t n)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t v = a[i] * 3 + a[i + 1] + sum;
		a[n + i] = v;
		sum += v >> 3;
	}
	return sum;
}

uint64_t ms_rmw(uint64_t *a, size_t n)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++) {
		__asm__ volatile("addq %1, %0" : "+m"(a[i]) : "r"(sum | 1));
		sum += *(volatile uint64_t *)&a[i];
	}
	return sum;
}
