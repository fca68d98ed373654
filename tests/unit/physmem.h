/*
 * Physical memory for the unit tests of parsers that read it through a
 * read(ctx, addr, dst, len) function (boot/linux/bootparams.c,
 * platform/sfi.c): a few regions, each a heap buffer of exactly its size, so
 * AddressSanitizer stops the binary on any read the function lets past a
 * region's end. Header-only: each test binary has its own copy.
 */
#ifndef TESTS_UNIT_PHYSMEM_H
#define TESTS_UNIT_PHYSMEM_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct region {
	uint64_t base;
	uint8_t *bytes;
	size_t len;
};

struct physmem {
	struct region r[8];
	int n;
};

/* Copies what [addr, addr + len) holds, up to the end of its region; 0 if in none. */
static inline size_t physmem_read(void *ctx, uint64_t addr, void *dst, size_t len)
{
	struct physmem *m = ctx;

	for (int i = 0; i < m->n; i++) {
		const struct region *r = &m->r[i];
		if (addr >= r->base && addr - r->base < r->len) {
			size_t n = r->len - (addr - r->base);
			n = n < len ? n : len;
			memcpy(dst, r->bytes + (addr - r->base), n);
			return n;
		}
	}
	return 0;
}

/* A region of exactly len bytes at base, copied from bytes (zeros if NULL); returns its buffer. */
static inline uint8_t *physmem_add(struct physmem *m, uint64_t base, const void *bytes, size_t len)
{
	uint8_t *b = calloc(1, len);
	if (bytes)
		memcpy(b, bytes, len);
	m->r[m->n++] = (struct region){ base, b, len };
	return b;
}

static inline void physmem_free(struct physmem *m)
{
	for (int i = 0; i < m->n; i++)
		free(m->r[i].bytes);
	m->n = 0;
}

#endif
