/*
 * Named regions of <pmuos/pmu.h>: RDPMC of both counters at begin and end,
 * added up per name, reported at exit. Counter deltas are taken modulo 2^40
 * (the counters' width, 327357-001 §1.4.3.2).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pmuos/pmu.h>

#define CTR_MASK ((1ULL << 40) - 1)

struct region {
	const char *name;
	uint64_t calls, count[2], start[2];
	int open;
};

static struct region regions[PMU_REGIONS];
static int nregions, registered;

static void report(void)
{
	for (int i = 0; i < nregions; i++)
		printf("region %s: calls %llu, counter0 %llu, counter1 %llu%s\n", regions[i].name,
		       (unsigned long long)regions[i].calls, (unsigned long long)regions[i].count[0],
		       (unsigned long long)regions[i].count[1], regions[i].open ? " (still open)" : "");
}

static struct region *find(const char *name)
{
	for (int i = 0; i < nregions; i++)
		if (strcmp(regions[i].name, name) == 0)
			return &regions[i];
	if (nregions == PMU_REGIONS) {
		fprintf(stderr, "pmu: more than %d regions; '%s' is not recorded\n", PMU_REGIONS, name);
		return NULL;
	}
	if (!registered++)
		atexit(report);
	regions[nregions].name = name;
	return &regions[nregions++];
}

void pmu_region_begin(const char *name)
{
	struct region *r = find(name);

	if (!r)
		return;
	r->open = 1;
	r->start[0] = pmu_rdpmc(0);
	r->start[1] = pmu_rdpmc(1);
}

void pmu_region_end(const char *name)
{
	uint64_t c0 = pmu_rdpmc(0), c1 = pmu_rdpmc(1);
	struct region *r = find(name);

	if (!r || !r->open)
		return;
	r->count[0] += (c0 - r->start[0]) & CTR_MASK;
	r->count[1] += (c1 - r->start[1]) & CTR_MASK;
	r->calls++;
	r->open = 0;
}
