/* Freestanding string and memory functions; see lib/lib.h. */
#include "lib/lib.h"

/*
 * memcpy and memset move 8 bytes per iteration of REP MOVSQ/STOSQ, then the
 * rest a byte at a time: under QEMU each iteration is one guest instruction
 * (and, with the plugin, one memory access it simulates), so a byte at a
 * time made zeroing a program's memory or the mailbox 8 times as long.
 */
void *memcpy(void *dst, const void *src, size_t n)
{
	void *d = dst;
	size_t q = n / 8, r = n % 8;

	__asm__ volatile("rep movsq" : "+D"(d), "+S"(src), "+c"(q) :: "memory");
	__asm__ volatile("rep movsb" : "+D"(d), "+S"(src), "+c"(r) :: "memory");
	return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	if (d <= s || d >= s + n)
		return memcpy(dst, src, n);
	while (n--)
		d[n] = s[n];
	return dst;
}

void *memset(void *dst, int c, size_t n)
{
	void *d = dst;
	uint64_t v = 0x0101010101010101ULL * (uint8_t)c;
	size_t q = n / 8, r = n % 8;

	__asm__ volatile("rep stosq" : "+D"(d), "+c"(q) : "a"(v) : "memory");
	__asm__ volatile("rep stosb" : "+D"(d), "+c"(r) : "a"(v) : "memory");
	return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;

	for (; n; n--, x++, y++)
		if (*x != *y)
			return *x - *y;
	return 0;
}

size_t strlen(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

size_t strnlen(const char *s, size_t max)
{
	size_t n = 0;

	while (n < max && s[n])
		n++;
	return n;
}

int strcmp(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return (unsigned char)*a - (unsigned char)*b;
}

int strncmp(const char *a, const char *b, size_t n)
{
	for (; n; n--, a++, b++) {
		if (*a != *b)
			return (unsigned char)*a - (unsigned char)*b;
		if (!*a)
			break;
	}
	return 0;
}

size_t strlcpy(char *dst, const char *src, size_t size)
{
	size_t len = strlen(src);
	size_t n = len < size - 1 ? len : size - 1;

	memcpy(dst, src, n);
	dst[n] = 0;
	return len;
}

bool parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0, base = 10;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return false;
	for (; *s; s++) {
		uint64_t d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			return false;
		if (d > max || v > (max - d) / base)
			return false;
		v = v * base + d;
	}
	*out = v;
	return true;
}

bool bytes_sum_to_zero(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint8_t sum = 0;

	for (size_t i = 0; i < len; i++)
		sum += b[i];
	return sum == 0;
}

bool cmdline_find(const char *line, const char *key, const char **val, size_t *len)
{
	size_t klen = strlen(key);
	bool found = false;

	while (*line) {
		while (*line == ' ')
			line++;
		const char *w = line;
		while (*line && *line != ' ')
			line++;
		size_t wlen = (size_t)(line - w);
		if (wlen < klen || strncmp(w, key, klen) != 0)
			continue;
		if (wlen == klen) {
			*val = w + wlen;
			*len = 0;
			found = true;
		} else if (w[klen] == '=') {
			*val = w + klen + 1;
			*len = wlen - klen - 1;
			found = true;
		}
	}
	return found;
}
