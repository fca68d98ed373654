/*
 * A set-associative array with true LRU replacement: the building block of
 * the plugin's caches (keys: line addresses), TLBs (page numbers) and branch
 * target buffer (branch addresses). Key k lives in set k % sets, in a way
 * that keeps its place; each set's recency order is a list of its way
 * numbers packed 4 bits each into one word, most recently used first, so a
 * hit reorders the set by arithmetic on that word and a hit on the most
 * recent way changes nothing (the fast path). A look-up compares a byte
 * per way first (the key's bits just above the set index, packed into one
 * word per set), so a miss mostly reads no key at all. Each way holds a
 * key, an 8-bit state (MESI state, dirty bit, 2-bit counter ...), kept with
 * its set's order and tags, and, in an array with data, a 64-bit datum
 * (branch target). Pure code, unit-tested on the host
 * (tests/unit/test_sacache.c).
 */
#ifndef PLUGIN_SACACHE_H
#define PLUGIN_SACACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SA_EMPTY UINT64_MAX /* key of an empty way (no line, page or branch has it) */

#define SA_MAX_WAYS 8 /* way numbers are 4 bits; 8 of them fill a 32-bit order */

/*
 * A set's recency: its order word, and the key of its most recent way (found
 * with one load); its ways' tags and states. 32 bytes, two sets to a host
 * cache line: a hit on the most recent way reads this alone.
 */
struct sa_set {
	uint64_t mru;    /* key[front way] */
	uint64_t tags;   /* byte w: sa_tag of way w's key (of SA_EMPTY when empty); bytes from `ways` up 0 */
	uint32_t order;  /* way numbers, the most recent in bits 0-3, the least in 4 * (ways - 1) up */
	uint8_t state[SA_MAX_WAYS];
};
_Static_assert(sizeof(struct sa_set) == 32, "two sets to a 64-byte host cache line");

struct sacache {
	uint32_t sets, ways;
	uint32_t set_bits;  /* log2(sets) */
	uint64_t tag_ways;  /* 0x80 in the bytes of the ways that exist */
	struct sa_set *set;
	uint64_t *key;    /* [sets][ways] */
	uint64_t *data;   /* NULL without data (sa_init) */
};

/* A hit, or the way a fill evicted (valid only when `key` != SA_EMPTY; `data` 0 without data). */
struct sa_way {
	uint64_t key;
	uint8_t state;
	uint64_t data;
};

/*
 * entries = sets * ways; sets a power of two, 1 <= ways <= SA_MAX_WAYS; a
 * datum per way only `with_data` (a cache has none: a fill then touches no
 * datum, whose array would be one more host cache line per fill). Returns
 * false if not, or out of memory.
 */
bool sa_init(struct sacache *c, uint32_t entries, uint32_t ways, bool with_data);
void sa_free(struct sacache *c);
/* Empties every way (a TLB flush). */
void sa_clear(struct sacache *c);
/*
 * Looks key up; on a hit makes it the most recently used way of its set and
 * returns a pointer to its state (valid until the next call on this set),
 * else NULL. *data (if data is not NULL, and the array has data) gets the
 * way's datum.
 */
static inline uint8_t *sa_lookup(struct sacache *c, uint64_t key, uint64_t *data);
/* Like sa_lookup, without touching the recency order (a snoop's look). */
uint8_t *sa_peek(struct sacache *c, uint64_t key);
/*
 * Inserts key (not present) as the most recently used way with state and
 * datum (ignored without data); returns the least recently used way it
 * evicted (key SA_EMPTY if the set had room).
 */
struct sa_way sa_insert(struct sacache *c, uint64_t key, uint8_t state, uint64_t data);
/* Removes key if present (an invalidation); returns whether it was, with its state in *state. */
bool sa_remove(struct sacache *c, uint64_t key, uint8_t *state);

/*
 * The datum of the way whose state sa_lookup, sa_peek returned (valid as
 * long as that pointer; with data only): the state's set and way.
 */
static inline uint64_t *sa_data(const struct sacache *c, const uint8_t *state)
{
	size_t at = (size_t)((const char *)state - (const char *)c->set);
	size_t set = at / sizeof(struct sa_set), way = at % sizeof(struct sa_set) - offsetof(struct sa_set, state);

	return &c->data[set * c->ways + way];
}

/*
 * The state of key if it is its set's most recent way (a lookup of it would
 * change nothing), else NULL, whether it is present or not.
 */
static inline uint8_t *sa_mru(const struct sacache *c, uint64_t key)
{
	uint32_t i = (uint32_t)(key & (c->sets - 1));
	const struct sa_set *set = &c->set[i];

	return set->mru == key ? (uint8_t *)&set->state[set->order & 15] : NULL;
}

/* ---- the fast path: a hit on the most recent way changes nothing ---- */
uint8_t *sa_lookup_slow(struct sacache *c, uint64_t key, uint64_t *data);

static inline uint8_t *sa_lookup(struct sacache *c, uint64_t key, uint64_t *data)
{
	uint8_t *st = sa_mru(c, key);

	if (!st)
		return sa_lookup_slow(c, key, data);
	if (data && c->data)
		*data = *sa_data(c, st);
	return st;
}

#endif
