/*
 * A set-associative array with true LRU replacement: the building block of
 * the plugin's caches (keys: line addresses), TLBs (page numbers) and branch
 * target buffer (branch addresses). Key k lives in set k % sets; each set
 * keeps its ways in recency order, most recently used first, so a hit on the
 * most recent way changes nothing (the fast path). Each way holds a key, an
 * 8-bit state (MESI state, dirty bit, 2-bit counter ...) and a 64-bit datum
 * (branch target). Pure code, unit-tested on the host (tests/unit/test_sacache.c).
 */
#ifndef PLUGIN_SACACHE_H
#define PLUGIN_SACACHE_H

#include <stdbool.h>
#include <stdint.h>

#define SA_EMPTY UINT64_MAX /* key of an empty way (no line, page or branch has it) */

struct sacache {
	uint32_t sets, ways;
	uint64_t *key;   /* [sets][ways], most recently used first */
	uint8_t *state;
	uint64_t *data;
};

/* A hit, or the way a fill evicted (valid only when `key` != SA_EMPTY). */
struct sa_way {
	uint64_t key;
	uint8_t state;
	uint64_t data;
};

/* entries = sets * ways; both at least 1. Returns false if out of memory. */
bool sa_init(struct sacache *c, uint32_t entries, uint32_t ways);
void sa_free(struct sacache *c);
/* Empties every way (a TLB flush). */
void sa_clear(struct sacache *c);
/*
 * Looks key up; on a hit makes it the most recently used way of its set and
 * returns a pointer to its state (valid until the next call on this set),
 * else NULL. *data (if data is not NULL) gets the way's datum.
 */
static inline uint8_t *sa_lookup(struct sacache *c, uint64_t key, uint64_t *data);
/* Like sa_lookup, without touching the recency order (a snoop's look). */
uint8_t *sa_peek(struct sacache *c, uint64_t key);
/*
 * Inserts key (not present) as the most recently used way with state and
 * datum; returns the least recently used way it evicted (key SA_EMPTY if the
 * set had room).
 */
struct sa_way sa_insert(struct sacache *c, uint64_t key, uint8_t state, uint64_t data);
/* Sets the datum of a present key without touching the recency order. */
void sa_set_data(struct sacache *c, uint64_t key, uint64_t data);
/* Removes key if present (an invalidation); returns whether it was, with its state in *state. */
bool sa_remove(struct sacache *c, uint64_t key, uint8_t *state);

/* ---- the fast path: a hit on the most recent way changes nothing ---- */
uint8_t *sa_lookup_slow(struct sacache *c, uint64_t key, uint64_t *data);

static inline uint8_t *sa_lookup(struct sacache *c, uint64_t key, uint64_t *data)
{
	uint32_t b = (uint32_t)(key & (c->sets - 1)) * c->ways;

	if (c->key[b] != key)
		return sa_lookup_slow(c, key, data);
	if (data)
		*data = c->data[b];
	return &c->state[b];
}

#endif
