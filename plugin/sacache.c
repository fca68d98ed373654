/* Set-associative LRU array; see plugin/sacache.h. */
#include "plugin/sacache.h"

#include <stdlib.h>
#include <string.h>
#define NIBBLES 0x11111111u
#define BYTES   0x0101010101010101ull

bool sa_init(struct sacache *c, uint32_t entries, uint32_t ways, bool with_data)
{
	memset(c, 0, sizeof(*c));
	if (ways == 0 || ways > SA_MAX_WAYS || entries < ways || entries % ways)
		return false;
	c->ways = ways;
	c->sets = entries / ways;
	if (c->sets & (c->sets - 1))
		return false; /* the set index is a mask of the key's low bits */
	c->set_bits = (uint32_t)__builtin_ctz(c->sets);
	c->tag_ways = (ways == 8 ? BYTES : BYTES & ((1ull << 8 * ways) - 1)) * 0x80;
	/* A set's keys in as few host cache lines as may be (8 ways: one line). */
	c->key = aligned_alloc(64, (sizeof(*c->key) * entries + 63) & ~(size_t)63);
	c->data = with_data ? calloc(entries, sizeof(*c->data)) : NULL;
	c->set = aligned_alloc(64, (sizeof(*c->set) * c->sets + 63) & ~(size_t)63);
	if (!c->key || (with_data && !c->data) || !c->set) {
		sa_free(c);
		return false;
	}
	sa_clear(c);
	return true;
}

void sa_free(struct sacache *c)
{
	free(c->key);
	free(c->data);
	free(c->set);
	memset(c, 0, sizeof(*c));
}

/* A way's tag: the byte of its key just above the set index (neighbouring lines of one set differ there). */
static inline uint64_t tag_of(const struct sacache *c, uint64_t key)
{
	return (uint8_t)(key >> c->set_bits);
}

/* Gives way w of `set` the tag of key. */
static inline void set_tag(struct sacache *c, uint32_t set, uint32_t w, uint64_t key)
{
	uint64_t *tags = &c->set[set].tags;

	*tags = (*tags & ~(0xffull << 8 * w)) | tag_of(c, key) << 8 * w;
}

void sa_clear(struct sacache *c)
{
	uint32_t identity = 0;

	for (uint32_t w = c->ways; w-- > 0;)
		identity = identity << 4 | w;
	for (uint32_t i = 0; i < c->sets * c->ways; i++)
		c->key[i] = SA_EMPTY;
	for (uint32_t s = 0; s < c->sets; s++)
		c->set[s] = (struct sa_set){ .mru = SA_EMPTY, .tags = (c->tag_ways >> 7) * tag_of(c, SA_EMPTY),
					     .order = identity };
}

static uint32_t set_of(const struct sacache *c, uint64_t key)
{
	return (uint32_t)(key & (c->sets - 1));
}

/*
 * The way of `set` that holds key, or -1. The tags first: a byte of
 * tags ^ (tag * BYTES) is zero where the way's tag is key's (exact per
 * byte: no borrow crosses bytes); only those ways' keys are compared, most
 * often none on a miss and one on a hit.
 */
static inline __attribute__((always_inline)) int find(const struct sacache *c, uint32_t set, uint64_t key)
{
	const uint64_t *keys = &c->key[set * c->ways];
	uint64_t x = c->set[set].tags ^ tag_of(c, key) * BYTES;
	uint64_t zero = ~(((x & (0x7f * BYTES)) + 0x7f * BYTES) | x) & c->tag_ways;

	for (; zero; zero &= zero - 1) {
		unsigned w = (unsigned)__builtin_ctzll(zero) / 8;
		if (keys[w] == key)
			return (int)w;
	}
	return -1;
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

	c->set[set].mru = key;
	c->set[set].order = (uint32_t)(after | before << 4 | w);
}

/* Makes way w of `set` the least recent: the ways after it move one place forward. */
static void to_back(struct sacache *c, uint32_t set, uint32_t w)
{
	uint64_t o = c->set[set].order;
	unsigned p = place((uint32_t)o, w) * 4, last = 4 * (c->ways - 1);
	uint64_t before = o & ((1ull << p) - 1), after = (o >> (p + 4)) << p;

	uint32_t order = (uint32_t)(before | after | (uint64_t)w << last);
	c->set[set].mru = c->key[set * c->ways + (order & 15)];
	c->set[set].order = order;
}

uint8_t *sa_lookup_slow(struct sacache *c, uint64_t key, uint64_t *data)
{
	uint32_t set = set_of(c, key), b = set * c->ways;
	int w = find(c, set, key);

	if (w < 0)
		return NULL;
	to_front(c, set, (uint32_t)w, key);
	if (data && c->data)
		*data = c->data[b + (uint32_t)w];
	return &c->set[set].state[w];
}

uint8_t *sa_peek(struct sacache *c, uint64_t key)
{
	uint32_t set = set_of(c, key);
	int w = find(c, set, key);

	return w < 0 ? NULL : &c->set[set].state[w];
}

struct sa_way sa_insert(struct sacache *c, uint64_t key, uint8_t state, uint64_t data)
{
	uint32_t set = set_of(c, key), w = (c->set[set].order >> (4 * (c->ways - 1))) & 15, i = set * c->ways + w;
	struct sa_way out = { c->key[i], c->set[set].state[w], 0 };

	/* An empty way, if any, is least recent (removals put theirs there): the victim either way. */
	c->key[i] = key;
	c->set[set].state[w] = state;
	if (c->data) {
		out.data = c->data[i];
		c->data[i] = data;
	}
	set_tag(c, set, w, key);
	to_front(c, set, w, key);
	return out;
}

bool sa_remove(struct sacache *c, uint64_t key, uint8_t *state)
{
	uint32_t set = set_of(c, key), b = set * c->ways;
	int w = find(c, set, key);

	if (w < 0)
		return false;
	if (state)
		*state = c->set[set].state[w];
	c->key[b + (uint32_t)w] = SA_EMPTY;
	c->set[set].state[w] = 0;
	set_tag(c, set, (uint32_t)w, SA_EMPTY);
	to_back(c, set, (uint32_t)w); /* the next fill of the set takes it */
	return true;
}
