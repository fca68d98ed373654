/*
 * Freestanding C library subset the kernel uses (the compiler may also emit
 * calls to memcpy, memset, memmove and memcmp on its own).
 */
#ifndef LIB_LIB_H
#define LIB_LIB_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define ALIGN_UP(x, a) (((x) + (a) - 1) & ~((uint64_t)(a) - 1))
#define ALIGN_DOWN(x, a) ((x) & ~((uint64_t)(a) - 1))

void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t max);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
/* Copies at most size-1 bytes and always NUL-terminates (size > 0). */
size_t strlcpy(char *dst, const char *src, size_t size);

/*
 * Parses an unsigned integer: decimal, or hex with 0x. The whole string must
 * be digits. Returns false (and leaves *out alone) on empty input, a stray
 * character or a value above max.
 */
bool parse_u64(const char *s, uint64_t max, uint64_t *out);

/*
 * A boot command line's parameter (words separated by spaces, as Linux's
 * Documentation/admin-guide/kernel-parameters.rst): the last word that is
 * `key` or `key=VALUE` wins. Returns true with *val pointing at VALUE in
 * `line` (not NUL-terminated) and *len its length in bytes (0 for a bare
 * `key`); false, leaving both alone, when no word has that key.
 */
bool cmdline_find(const char *line, const char *key, const char **val, size_t *len);

/* Little-endian loads at any alignment, for firmware tables (ACPI, SFI). */
static inline uint16_t get_le16(const uint8_t *p) { return p[0] | p[1] << 8; }
static inline uint32_t get_le32(const uint8_t *p) { return get_le16(p) | (uint32_t)get_le16(p + 2) << 16; }
static inline uint64_t get_le64(const uint8_t *p) { return get_le32(p) | (uint64_t)get_le32(p + 4) << 32; }

/*
 * The number of set bits of x (0..64). In C: POPCNT is not a KNC instruction,
 * and without it the compiler calls libgcc's __popcountdi2, whose Debian
 * build starts with ENDBR64 (a 0F 1E hint NOP, which a KNC core lacks too;
 * scripts/knc-audit.py). The SWAR sum of Hacker's Delight §5-1.
 */
static inline unsigned popcount64(uint64_t x)
{
	x -= (x >> 1) & 0x5555555555555555ull;
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (unsigned)((x * 0x0101010101010101ull) >> 56);
}

/*
 * floor(n / d) of a 128-bit n, where the quotient fits in 64 bits: false
 * (and *q untouched) when it would not, or d is 0. One DIV: libgcc's
 * 128-bit division (__udivti3) pads with multi-byte NOPs, which a KNC core
 * lacks (tests/system/test_knc_text.py).
 */
static inline bool udiv128_64(unsigned __int128 n, uint64_t d, uint64_t *q)
{
	uint64_t hi = n >> 64, lo = (uint64_t)n, r;

	if (hi >= d)
		return false;
	__asm__("divq %4" : "=a"(*q), "=d"(r) : "a"(lo), "d"(hi), "rm"(d));
	return true;
}

/*
 * Whether the len bytes at p sum to 0 modulo 256: the checksum of ACPI
 * tables (ACPI 6.x §5.2.5, §5.2.6) and of SFI tables (SFI 0.8.2 §5.1).
 */
bool bytes_sum_to_zero(const void *p, size_t len);

#endif
