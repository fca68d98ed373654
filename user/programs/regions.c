/*
 * regions: two named regions of known work, for `pmuctl stat`'s region
 * tables (tests/system/test_views.py). "sum" (sum_words: 4096 loads,
 * called 3 times) and "mix" (mix: a multiply-add loop, called 2 times),
 * and "empty", which holds nothing: its count per call is what the markers
 * add to every region. With `spflt NAME` the same calls run between SPFLT 1
 * and SPFLT 0 (pmu_spflt) instead, without markers, so a counter gated by
 * SPFLT counts exactly that region's work. With `times N` all of it runs N
 * times (a run long enough for multiplexed events to take turns).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pmuos/pmu.h>

#define WORDS 4096

static uint64_t buf[WORDS];

__attribute__((noinline)) static uint64_t sum_words(const uint64_t *b)
{
	uint64_t s = 0;
	for (int i = 0; i < WORDS; i++)
		s += b[i];
	return s;
}

__attribute__((noinline)) static uint64_t mix(uint64_t x)
{
	for (int i = 0; i < 10000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

static volatile uint64_t sink;

/* Runs region `name`'s work once, with markers, or with SPFLT if `spflt` names it: one copy for every region, so the markers cost each the same. */
__attribute__((noinline)) static void run(const char *name, const char *spflt, uint64_t (*work)(uint64_t))
{
	int gated = spflt && strcmp(spflt, name) == 0;

	if (gated)
		pmu_spflt(1);
	else if (!spflt)
		pmu_region_begin(name);
	sink = work(sink);
	if (gated)
		pmu_spflt(0);
	else if (!spflt)
		pmu_region_end(name);
}

static uint64_t do_sum(uint64_t x) { return x + sum_words(buf); }
static uint64_t do_mix(uint64_t x) { return mix(x); }
static uint64_t do_nothing(uint64_t x) { return x; }

int main(int argc, char **argv)
{
	const char *spflt = NULL;
	long times = 1;
	int bad = argc % 2 == 0;

	for (int a = 1; a + 1 < argc && !bad; a += 2) {
		if (strcmp(argv[a], "spflt") == 0)
			spflt = argv[a + 1];
		else if (strcmp(argv[a], "times") == 0)
			times = atol(argv[a + 1]);
		else
			bad = 1;
	}
	if (bad || times < 1) {
		fprintf(stderr, "usage: regions [spflt sum|mix|empty] [times N (1 or more)]\n");
		return 2;
	}
	for (int i = 0; i < WORDS; i++)
		buf[i] = i;
	for (long t = 0; t < times; t++) {
		for (int k = 0; k < 3; k++)
			run("sum", spflt, do_sum);
		for (int k = 0; k < 2; k++)
			run("mix", spflt, do_mix);
		for (int k = 0; k < 4; k++)
			run("empty", spflt, do_nothing);
	}
	printf("regions: done (%llu)\n", (unsigned long long)sink);
	return 0;
}
