/* Set-associative LRU array; see plugin/sacache.h. */
#include "plugin/sacache.h"

#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define NIBBLES 0x11111111u

bool sa_init(struct sacache *c, uint32_t entries, uint32_t ways)
{
	memset(c, 0, sizeof(*c));
	if (ways == 0 || ways > SA_MAX_WAYS || entries < ways || entries % ways)
		return false;
	c->ways = ways;
	c->sets = entries / ways;
	if (c->sets & (c->sets - 1))
		return false; /* the set index is a mask of the key's low bits */
	/* A set's keys in as few host cache lines as may be (8 ways: one line). */
	c->key = aligned_alloc(64, (sizeof(*c->key) * entries + 63) & ~(size_t)63);
	c->state = calloc(entries, 1);
	c->data = calloc(entries, sizeof(*c->data));
	c->set = malloc(sizeof(*c->set) * c->sets);
	if (!c->key || !c->state || !c->data || !c->set) {
		sa_free(c);
		return false;
	}
	sa_clear(c);
	return true;
}

void sa_free(struct sacache *c)
{
	free(c->key);
	free(c->state);
	free(c->data);
	free(c->set);
	memset(c, 0, sizeof(*c));
}

void sa_clear(struct sacache *c)
{
	uint32_t identity = 0;

	for (uint32_t w = c->ways; w-- > 0;)
		identity = identity << 4 | w;
	for (uint32_t i = 0; i < c->sets * c->ways; i++)
		c->key[i] = SA_EMPTY;
	for (uint32_t s = 0; s < c->sets; s++)
		c->set[s] = (struct sa_set){ SA_EMPTY, identity };
}

static uint32_t set_of(const struct sacache *c, uint64_t key)
{
	return (uint32_t)(key & (c->sets - 1));
}

/* Bit w set if keys[w] is key, for w < ways. */
static inline uint32_t matches(const uint64_t *keys, uint32_t ways, uint64_t key)
{
	uint32_t hits = 0;

#pragma GCC unroll 8
	for (uint32_t w = 0; w < ways; w++)
		hits |= (uint32_t)(keys[w] == key) << w;
	return hits;
}

#ifdef __SSE2__
/*
 * For the 8 keys of a set (16-byte aligned): bits 2w and 2w + 1 set if
 * keys[w] is key. SSE2 compares 32-bit halves: the two halves' results are
 * narrowed to a byte each, and both must match.
 */
static inline uint32_t matches8(const uint64_t *keys, uint64_t key)
{
	const __m128i *v = (const __m128i *)keys;
	__m128i k = _mm_set1_epi64x((long long)key);
	__m128i h01 = _mm_packs_epi32(_mm_cmpeq_epi32(_mm_load_si128(v), k), _mm_cmpeq_epi32(_mm_load_si128(v + 1), k));
	__m128i h23 = _mm_packs_epi32(_mm_cmpeq_epi32(_mm_load_si128(v + 2), k), _mm_cmpeq_epi32(_mm_load_si128(v + 3), k));
	uint32_t halves = (uint32_t)_mm_movemask_epi8(_mm_packs_epi16(h01, h23));

	return halves & (halves >> 1) & 0x5555;
}
#endif

/*
 * The way of the set at base b that holds key, or -1. Every way is compared
 * (no early exit): where a key sits is data the host cannot predict. The
 * plugin's arrays have 8 or 4 ways: those compare without a loop.
 */
static inline __attribute__((always_inline)) int find(const struct sacache *c, uint32_t b, uint64_t key)
{
	const uint64_t *keys = &c->key[b];
#ifdef __SSE2__
	if (c->ways == 8) {
		uint32_t hits = matches8(keys, key);
		return hits ? __builtin_ctz(hits) / 2 : -1;
	}
#endif
	uint32_t hits = c->ways == 8 ? matches(keys, 8, key) : c->ways == 4 ? matches(keys, 4, key)
									   : matches(keys, c->ways, key);

	return hits ? __builtin_ctz(hits) : -1;
}

/*
 * The place of way w in an order word (0: most recent). A nibble equal to w
 * is a zero nibble of order ^ (w * NIBBLES); the lowest one the borrow trick
 * finds is exact (only nibbles above a true zero can be false positives).
 */
static unsigned place(uint32_t order, uint32_t w)
{
	uint32_t x = order ^ (w * NIBBLES);

	return (unsigned)__builtin_ctz((x - NIBBLES) & ~x & (NIBBLES << 3)) / 4;
}

/* Makes way w of `set`, which holds key, the most recent: the ways before it move one place back. */
static inline __attribute__((always_inline)) void to_front(struct sacache *c, uint32_t set, uint32_t w, uint64_t key)
{
	uint64_t o = c->set[set].order;
	unsigned p = place((uint32_t)o, w) * 4;
	uint64_t before = o & ((1ull << p) - 1), after = o & ~((1ull << (p + 4)) - 1);

	c->set[set] = (struct sa_set){ key, (uint32_t)(after | before << 4 | w) };
}

/* Makes way w of `set` the least recent: the ways after it move one place forward. */
static void to_back(struct sacache *c, uint32_t set, uint32_t w)
{
	uint64_t o = c->set[set].order;
	unsigned p = place((uint32_t)o, w) * 4, last = 4 * (c->ways - 1);
	uint64_t before = o & ((1ull << p) - 1), after = (o >> (p + 4)) << p;

	uint32_t order = (uint32_t)(before | after | (uint64_t)w << last);
	c->set[set] = (struct sa_set){ c->key[set * c->ways + (order & 15)], order };
}

uint8_t *sa_lookup_slow(struct sacache *c, uint64_t key, uint64_t *data)
{
	uint32_t set = set_of(c, key), b = set * c->ways;
	int w = find(c, b, key);

	if (w < 0)
		return NULL;
	to_front(c, set, (uint32_t)w, key);
	if (data)
		*data = c->data[b + (uint32_t)w];
	return &c->state[b + (uint32_t)w];
}

uint8_t *sa_peek(struct sacache *c, uint64_t key)
{
	uint32_t b = set_of(c, key) * c->ways;
	int w = find(c, b, key);

	return w < 0 ? NULL : &c->state[b + (uint32_t)w];
}

struct sa_way sa_insert(struct sacache *c, uint64_t key, uint8_t state, uint64_t data)
{
	uint32_t set = set_of(c, key), w = (c->set[set].order >> (4 * (c->ways - 1))) & 15, i = set * c->ways + w;
	struct sa_way out = { c->key[i], c->state[i], c->data[i] };

	/* An empty way, if any, is least recent (removals put theirs there): the victim either way. */
	c->key[i] = key;
	c->state[i] = state;
	c->data[i] = data;
	to_front(c, set, w, key);
	return out;
}

bool sa_remove(struct sacache *c, uint64_t key, uint8_t *state)
{
	uint32_t set = set_of(c, key), b = set * c->ways;
	int w = find(c, b, key);

	if (w < 0)
		return false;
	if (state)
		*state = c->state[b + (uint32_t)w];
	c->key[b + (uint32_t)w] = SA_EMPTY;
	c->state[b + (uint32_t)w] = 0;
	to_back(c, set, (uint32_t)w); /* the next fill of the set takes it */
	return true;
}
