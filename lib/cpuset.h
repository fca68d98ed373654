/* Sets of logical CPUs, written like "0-3,8" or "all" in the shell and tools. */
#ifndef LIB_CPUSET_H
#define LIB_CPUSET_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>

#define CPUSET_MAX 256

struct cpuset {
	uint64_t bits[CPUSET_MAX / 64];
};

static inline void cpuset_add(struct cpuset *s, uint32_t cpu) { s->bits[cpu / 64] |= 1ULL << (cpu % 64); }
static inline void cpuset_del(struct cpuset *s, uint32_t cpu) { s->bits[cpu / 64] &= ~(1ULL << (cpu % 64)); }
static inline bool cpuset_has(const struct cpuset *s, uint32_t cpu)
{
	return cpu < CPUSET_MAX && (s->bits[cpu / 64] >> (cpu % 64)) & 1;
}

/*
 * Parses "all" or a comma-separated list of CPU numbers and ranges "a-b"
 * (a <= b) into `out`, accepting CPUs 0..ncpus-1 only. Returns true, or
 * false with a message naming the bad part in err (errlen bytes).
 */
bool cpuset_parse(const char *s, uint32_t ncpus, struct cpuset *out, char *err, size_t errlen);
uint32_t cpuset_count(const struct cpuset *s);

#endif
