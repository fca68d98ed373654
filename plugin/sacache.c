/* Set-associative LRU array; see plugin/sacache.h. */
#include "plugin/sacache.h"

#include <stdlib.h>
#include <string.h>

bool sa_init(struct sacache *c, uint32_t entries, uint32_t ways)
{
	memset(c, 0, sizeof(*c));
	if (ways == 0 || entries < ways || entries % ways)
		return false;
	c->ways = ways;
	c->sets = entries / ways;
	if (c->sets & (c->sets - 1))
		return false; /* the set index is a mask of the key's low bits */
	c->key = malloc(sizeof(*c->key) * entries);
	c->state = calloc(entries, 1);
	c->data = calloc(entries, sizeof(*c->data));
	if (!c->key || !c->state || !c->data) {
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
	memset(c, 0, sizeof(*c));
}

void sa_clear(struct sacache *c)
{
	for (uint32_t i = 0; i < c->sets * c->ways; i++)
		c->key[i] = SA_EMPTY;
}

static uint32_t set_base(const struct sacache *c, uint64_t key)
{
	return (uint32_t)(key & (c->sets - 1)) * c->ways;
}

static int find(const struct sacache *c, uint32_t b, uint64_t key)
{
	for (uint32_t w = 0; w < c->ways; w++)
		if (c->key[b + w] == key)
			return (int)w;
	return -1;
}

/* Moves way w of the set at b to the front (most recently used); sets are small, so a loop. */
static void to_front(struct sacache *c, uint32_t b, uint32_t w)
{
	uint64_t k = c->key[b + w], d = c->data[b + w];
	uint8_t s = c->state[b + w];

	for (uint32_t i = b + w; i > b; i--) {
		c->key[i] = c->key[i - 1];
		c->data[i] = c->data[i - 1];
		c->state[i] = c->state[i - 1];
	}
	c->key[b] = k;
	c->data[b] = d;
	c->state[b] = s;
}

uint8_t *sa_lookup_slow(struct sacache *c, uint64_t key, uint64_t *data)
{
	uint32_t b = set_base(c, key);
	int w = find(c, b, key);

	if (w < 0)
		return NULL;
	to_front(c, b, (uint32_t)w);
	if (data)
		*data = c->data[b];
	return &c->state[b];
}

uint8_t *sa_peek(struct sacache *c, uint64_t key)
{
	uint32_t b = set_base(c, key);
	int w = find(c, b, key);

	return w < 0 ? NULL : &c->state[b + (uint32_t)w];
}

struct sa_way sa_insert(struct sacache *c, uint64_t key, uint8_t state, uint64_t data)
{
	uint32_t b = set_base(c, key), last = b + c->ways - 1;
	struct sa_way out = { c->key[last], c->state[last], c->data[last] };

	/* An empty way, if any, is at the end (removals move theirs there): the LRU way is the victim either way. */
	c->key[last] = key;
	c->state[last] = state;
	c->data[last] = data;
	to_front(c, b, c->ways - 1);
	return out;
}

void sa_set_data(struct sacache *c, uint64_t key, uint64_t data)
{
	uint32_t b = set_base(c, key);
	int w = find(c, b, key);

	if (w >= 0)
		c->data[b + (uint32_t)w] = data;
}

bool sa_remove(struct sacache *c, uint64_t key, uint8_t *state)
{
	uint32_t b = set_base(c, key);
	int w = find(c, b, key);

	if (w < 0)
		return false;
	if (state)
		*state = c->state[b + (uint32_t)w];
	/* Close the gap and leave the empty way last, where the next fill takes it. */
	uint32_t n = c->ways - 1 - (uint32_t)w;
	memmove(&c->key[b + w], &c->key[b + w + 1], n * sizeof(*c->key));
	memmove(&c->data[b + w], &c->data[b + w + 1], n * sizeof(*c->data));
	memmove(&c->state[b + w], &c->state[b + w + 1], n);
	c->key[b + c->ways - 1] = SA_EMPTY;
	c->state[b + c->ways - 1] = 0;
	return true;
}
