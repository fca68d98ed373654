/*
 * `pmuctl stat`'s named regions (likwid's marker API, `likwid-perfctr -m`):
 * the lines a program's pmu_region_begin/end write at its exit (user/regions.c:
 * "region NAME: calls N, counter0 V|sampling, counter1 V|sampling, tsc D[
 * (still open)]"), taken out of its output and added up over its ranks, then
 * printed per region with the events' names, calls and the -M groups'
 * metrics in stat's three formats. The counts are RDPMC deltas of the two
 * counters while the events stay on them; while they take turns
 * (multiplexing) the line holds the kernel's totals per event instead
 * ("region NAME: calls N, enabled T, events V/R V/R ..., tsc D[ (still open)]"),
 * scaled here by T / R as stat scales its totals. A PMU with fixed counters
 * (KNL) adds their counts after the counters' (", fixed INST_RETIRED.ANY:u V" ...),
 * printed after stat's events.
 */
#ifndef HOST_REGIONS_H
#define HOST_REGIONS_H

#include <stddef.h>
#include <stdint.h>
#include <pmuos/mailbox.h>

#include "host/metric_fmt.h"

#define REGIONS_MAX 32 /* PMU_REGIONS of <pmuos/pmu.h> */
#define REGION_EVENTS MBOX_MUX_MAX /* PMUOS_COUNTS_MAX of <pmuos/syscall.h> */
#define REGION_FIXED 3 /* PMUOS_FIXED_MAX of <pmuos/syscall.h> */
#define REGION_NAME 48 /* PMUOS_EVENT_NAME */

struct region_total {
	char name[64];
	uint64_t calls, count[PMU_SAMPLE_COUNTERS];
	uint64_t ticks;  /* TSC ticks the calls took, 0 if the line has none */
	int sampling[PMU_SAMPLE_COUNTERS]; /* the counter sampled in the region: its count is unknown */
	int open;        /* a begin without its end at exit */
	/* the events took turns: nev events, each value[e] in running[e] of `enabled` TSC ticks */
	int nev;
	uint64_t enabled, value[REGION_EVENTS], running[REGION_EVENTS];
	/* the PMU's fixed counters: nfixed counts, each named by its event */
	int nfixed;
	char fixed_name[REGION_FIXED][REGION_NAME];
	uint64_t fixed[REGION_FIXED];
};

/*
 * Parses one output line (len bytes, its '\n' included or not) into *r.
 * Returns 1 if it is a region line, 0 if not (any other output).
 */
int region_parse(const char *line, size_t len, struct region_total *r);

/*
 * Output hook (host/rings.h): a region line of a task on CPU `cpu` is kept
 * (added to its name's totals, and to that CPU's for -A) and not printed.
 * Returns 1 then.
 */
int regions_take_line(const char *line, size_t len, uint32_t cpu);

/*
 * After stat's totals: one table per region kept (with -x, lines that start
 * with the region's name; with --json one object per region, without
 * perf's "event" key, so perf's parsers see only the run's lines). names[0..nev) are stat's
 * events; on[i] the event on counter i (-1: none) for the whole run, or
 * `why` says why no region's counts mean an event, `turns` why the
 * counters' deltas do not (the events take turns: a region counted with
 * RDPMC is listed with that reason instead of counts; one with the kernel's
 * totals is scaled, a scaled count marked with its share of the time as
 * stat marks it). g[0..ng) the -M groups.
 * With f->runs > 1 (stat -r) the totals of every run are divided by the
 * runs (rounded): a run's mean, as stat's counts. `shared`: the counters'
 * counts include other threads' (MBOX_COUNT_SHARED), said on each count's line.
 */
void regions_print(const struct stat_format *f, const char *const *names, int nev, const int on[PMU_SAMPLE_COUNTERS],
		   const char *why, const char *turns, const struct metric_group *const *g, int ng, bool shared);

#endif
