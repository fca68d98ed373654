/*
 * `pmuctl stat`'s named regions (likwid's marker API, `likwid-perfctr -m`):
 * the lines a program's pmu_region_begin/end write at its exit (user/regions.c:
 * "region NAME: calls N, counter0 V|sampling, counter1 V|sampling[ (still
 * open)]"), taken out of its output and added up over its ranks, then
 * printed per region with the events' names, calls and the -M groups'
 * metrics in stat's three formats. The counts are RDPMC deltas of the two
 * counters, so they mean an event only while the events stay on the
 * counters for the whole run (no multiplexing).
 */
#ifndef HOST_REGIONS_H
#define HOST_REGIONS_H

#include <stddef.h>
#include <stdint.h>

#include "host/metrics.h"

#define REGIONS_MAX 32 /* PMU_REGIONS of <pmuos/pmu.h> */

struct region_total {
	char name[64];
	uint64_t calls, count[2];
	int sampling[2]; /* the counter sampled in the region: its count is unknown */
	int open;        /* a begin without its end at exit */
};

/*
 * Parses one output line (len bytes, its '\n' included or not) into *r.
 * Returns 1 if it is a region line, 0 if not (any other output).
 */
int region_parse(const char *line, size_t len, struct region_total *r);

/* Output hook (host/rings.h): a region line is kept (added to its name's totals) and not printed. Returns 1 then. */
int regions_take_line(const char *line, size_t len);

/*
 * After stat's totals: one table per region kept (with -x, lines that start
 * with the region's name; with --json one object per region, without
 * perf's "event" key, so perf's parsers see only the run's lines). names[0..nev) are stat's
 * events; on[i] the event on counter i (-1: none) for the whole run, or
 * `why` says why the counters' deltas mean no event (then the regions are
 * listed with that reason instead of counts). g[0..ng) the -M groups.
 * With f->runs > 1 (stat -r) the totals of every run are divided by the
 * runs (rounded): a run's mean, as stat's counts.
 */
void regions_print(const struct stat_format *f, const char *const *names, int nev, const int on[2],
		   const char *why, const struct metric_group *const *g, int ng);

#endif
