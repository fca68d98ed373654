/*
 * Named regions of <pmuos/pmu.h>: RDPMC of both counters at begin and end,
 * added up per name, reported at exit. Counter deltas are taken modulo 2^40
 * (the counters' width, 327357-001 §1.4.3.2). A sampling counter is loaded
 * with 2^40 - period and reloaded by the PMI when it passes 2^40, so the
 * events of a region it samples in are unknown: a counter read at 2^39 or
 * above (no counting run gets there: 2^39 cycles are 500 s at 1.1 GHz), or
 * lower at a region's end than at its begin, makes the region report it as
 * "sampling", never a number. Begin reads the counters last
 * and end reads them first, so what the markers add to a region is the same
 * fixed code for every name (an empty region's count per call).
 *
 * While the CPU's events take turns on the counters (the kernel's
 * multiplexing, docs/design.md §5.6), a counter holds one event for a slice
 * only; then begin and end take the kernel's totals instead (SYS_PMU_COUNTS:
 * every event's count and running time, and the enabled time), asked for
 * once per program whether they take turns, so RDPMC keeps its cost when
 * they do not. The host scales each event by enabled / running, as stat.
 *
 * A PMU with fixed counters (Knights Landing's; KNC has none) has them
 * read too, with RDPMC ECX = 2^30 + j, before the counters at begin and
 * after them at end: the general counters' window is the same as on a PMU
 * without them, and a fixed counter's holds it and the general reads (a
 * fixed number of instructions per call, which the empty region shows).
 * They count in Ring 3 from 0, never sample, and wrap at 2^40 (their width
 * on KNL), which no run reaches.
 *
 * The report is one line per region, read by people and by `pmuctl stat`
 * (host/regions.c), each counter named by its event (SYS_PMU_EVENT_NAMES, asked
 * once with the counts), or counterK if it has none:
 *   region NAME: calls N, EVENT0 V|sampling, EVENT1 V|sampling[, fixed FIXED0 V ...], tsc D[ (still open)]
 *   region NAME: calls N, enabled T, events V/R V/R ..., tsc D[ (still open)]
 * the second while the events take turns: V events in R TSC ticks on a
 * counter of T the region ran, per event in the order of the list. D is
 * the TSC ticks the calls took (likwid's RDTSC runtime): read before the
 * counters at begin and after them at end, so it costs the counts nothing,
 * and written in 20 digits, leading zeros and all, so that the report's own
 * instructions do not depend on the time it reports (a count's digits
 * would: the same program on 1 CPU and on 3 at once would differ).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pmuos/pmu.h>
#include <pmuos/syscall.h>
#include <pmuos/thread.h>

#define CTR_MASK ((1ULL << 40) - 1)
#define CTR_HIGH (1ULL << 39) /* at or above: loaded for sampling */

struct region {
	const char *name;
	uint64_t calls, count[2], start[2];
	uint64_t fixed[PMUOS_FIXED_MAX], fixed0[PMUOS_FIXED_MAX]; /* the fixed counters' sums, and at begin */
	uint64_t tsc0, ticks; /* RDTSC at the open call's begin; TSC ticks of the calls ended */
	int open, sampled[2];
	struct pmuos_counts from, sum; /* taking turns: at begin, and the deltas' totals */
};

/*
 * Each thread's own regions (its counters are its CPU's): the main
 * thread's in .bss, as before there were threads (a calloc of the table
 * at the first region wrote 22 KiB through the L1 just before it, and an
 * 8 KiB chase measured 71 misses), another thread's allocated at its first
 * region. The main thread's are reported at exit, another thread's when it
 * ends (pthread_exit calls pmu_regions_thread_end).
 */
static struct region main_regions[PMU_REGIONS];
static __thread struct region *regions;
static __thread int nregions;
static int asked, reported;
static int turns; /* the events taking turns, 0: RDPMC (asked at the first region) */
static struct pmuos_events events; /* the counters' events' names (asked at the first region) */

/* v in 20 decimal digits into buf (21 bytes): the same instructions for every v. */
static const char *digits20(uint64_t v, char *buf)
{
	for (int i = 19; i >= 0; i--) {
		buf[i] = '0' + v % 10;
		v /= 10;
	}
	buf[20] = 0;
	return buf;
}

static void report_turns(FILE *out, const struct region *r)
{
	fprintf(out, "region %s: calls %llu, enabled %llu, events", r->name, (unsigned long long)r->calls,
		(unsigned long long)r->sum.enabled);
	for (int e = 0; e < turns; e++)
		fprintf(out, " %llu/%llu", (unsigned long long)r->sum.value[e], (unsigned long long)r->sum.running[e]);
	char d[21];

	fprintf(out, ", tsc %s%s\n", digits20(r->ticks, d), r->open ? " (still open)" : "");
}

/*
 * A thread's lines, written to stdout in one call: threads share stdout,
 * and a line of several printf calls took another thread's line into its
 * middle (the host then missed the region). Built in a memory stream; on
 * stdout itself if there is no memory for one.
 */
static void report(void)
{
	char *buf = NULL;
	size_t len = 0;

	if (!regions)
		return;
	FILE *out = open_memstream(&buf, &len);
	if (!out)
		out = stdout;
	for (int i = 0; i < nregions; i++) {
		struct region *r = &regions[i];
		if (turns) {
			report_turns(out, r);
			continue;
		}
		fprintf(out, "region %s: calls %llu", r->name, (unsigned long long)r->calls);
		for (int k = 0; k < 2; k++) {
			if (events.name[k][0])
				fprintf(out, ", %s ", events.name[k]);
			else
				fprintf(out, ", counter%d ", k);
			if (r->sampled[k])
				fprintf(out, "sampling");
			else
				fprintf(out, "%llu", (unsigned long long)r->count[k]);
		}
		for (uint32_t j = 0; j < events.nfixed; j++)
			fprintf(out, ", fixed %s %llu", events.fixed[j], (unsigned long long)r->fixed[j]);
		char d[21];
		fprintf(out, ", tsc %s%s\n", digits20(r->ticks, d), r->open ? " (still open)" : "");
	}
	if (out != stdout && fclose(out) == 0)
		fwrite(buf, 1, len, stdout);
	free(buf);
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
	if (!regions && !(regions = pmuos_thread_number() == 0 ? main_regions : calloc(PMU_REGIONS, sizeof(*regions)))) {
		fprintf(stderr, "pmu: no memory for regions; '%s' is not recorded\n", name);
		return NULL;
	}
	if (!__atomic_load_n(&asked, __ATOMIC_ACQUIRE)) { /* threads racing here ask the same and write the same */
		struct pmuos_counts c;
		int n = pmuos_pmu_counts(&c);
		turns = n > 0 && n <= PMUOS_COUNTS_MAX ? n : 0;
		if (pmuos_pmu_events(&events) < 0 || events.nfixed > PMUOS_FIXED_MAX)
			memset(&events, 0, sizeof(events));
		__atomic_store_n(&asked, 1, __ATOMIC_SEQ_CST);
	}
	if (pmuos_thread_number() == 0 && !reported++)
		atexit(report);
	regions[nregions].name = name;
	return &regions[nregions++];
}

void pmu_regions_thread_end(void)
{
	report();
	if (regions != main_regions)
		free(regions);
	regions = NULL;
	nregions = 0;
}

/* Whether a counter read `from` at a region's begin and `to` at its end samples (see above). */
static int sampling(uint64_t from, uint64_t to)
{
	from &= CTR_MASK;
	to &= CTR_MASK;
	return from >= CTR_HIGH || to >= CTR_HIGH || to < from;
}

void pmu_region_begin(const char *name)
{
	struct region *r = find(name);

	if (!r)
		return;
	r->open = 1;
	r->tsc0 = pmu_rdtsc();
	if (turns) {
		pmuos_pmu_counts(&r->from);
		return;
	}
	for (uint32_t j = 0; j < events.nfixed; j++)
		r->fixed0[j] = pmu_rdpmc(PMU_RDPMC_FIXED + j);
	r->start[1] = pmu_rdpmc(1);
	r->start[0] = pmu_rdpmc(0);
}

/* pmu_region_end's fixed counters (a PMU without them: a call, a test and a return, out of the counters' window). */
static __attribute__((noinline)) void end_fixed(uint64_t f[PMUOS_FIXED_MAX])
{
	for (uint32_t j = 0; j < events.nfixed; j++)
		f[j] = pmu_rdpmc(PMU_RDPMC_FIXED + j);
}

/* pmu_region_end while the events take turns: the kernel's totals first, as the counters are read first. */
static __attribute__((noinline)) void end_turns(const char *name)
{
	struct pmuos_counts now;

	pmuos_pmu_counts(&now);
	uint64_t t = pmu_rdtsc();
	struct region *r = find(name);
	if (!r || !r->open)
		return;
	r->ticks += t - r->tsc0;
	r->sum.enabled += now.enabled - r->from.enabled;
	for (int e = 0; e < turns; e++) {
		r->sum.value[e] += now.value[e] - r->from.value[e];
		r->sum.running[e] += now.running[e] - r->from.running[e];
	}
	r->calls++;
	r->open = 0;
}

void pmu_region_end(const char *name)
{
	if (turns) {
		end_turns(name);
		return;
	}
	uint64_t c0 = pmu_rdpmc(0), c1 = pmu_rdpmc(1), f[PMUOS_FIXED_MAX];

	end_fixed(f);
	uint64_t t = pmu_rdtsc();
	struct region *r = find(name);

	if (!r || !r->open)
		return;
	for (uint32_t j = 0; j < events.nfixed; j++)
		r->fixed[j] += (f[j] - r->fixed0[j]) & CTR_MASK;
	r->ticks += t - r->tsc0;
	r->sampled[0] |= sampling(r->start[0], c0);
	r->sampled[1] |= sampling(r->start[1], c1);
	r->count[0] += (c0 - r->start[0]) & CTR_MASK;
	r->count[1] += (c1 - r->start[1]) & CTR_MASK;
	r->calls++;
	r->open = 0;
}
