/* Measured functions; see user/measured.h. No library calls. */
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

uint64_t ms_store(uint64_t *buf, size_t bytes, size_t stride, unsigned passes)
{
	for (unsigned p = 0; p < passes; p++)
		for (size_t off = 0; off < bytes; off += stride)
			*(volatile uint64_t *)((char *)buf + off) = off + p;
	return 0;
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

uint64_t ms_matmul(const uint64_t *a, const uint64_t *b, uint64_t *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			uint64_t s = 0;
			for (size_t k = 0; k < n; k++)
				s += a[i * n + k] * b[k * n + j];
			c[i * n + j] = s;
		}
	return c[0];
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

/* The two below are written in assembly: their instruction counts are part of what the tests expect. */
__asm__(".text\n"
	".p2align 6\n"
	".globl ms_branches\n"
	".type ms_branches, @function\n"
	"ms_branches:\n\t"
	"mov %rdi, %rax\n"
	"1:\n\t"
	"test $1, %al\n\t"
	"jz 2f\n\t"
	"nop\n"
	"2:\n\t"
	"dec %rax\n\t"
	"jnz 1b\n\t"
	"mov %rdi, %rax\n\t"
	"ret\n"
	".size ms_branches, . - ms_branches\n"

	".p2align 12\n"
	".globl ms_nops\n"
	".type ms_nops, @function\n"
	"ms_nops:\n\t"
	".rept 16384\n\t"
	"nop\n\t"
	".endr\n\t"
	"xor %eax, %eax\n\t"
	"ret\n"
	".size ms_nops, . - ms_nops\n");
