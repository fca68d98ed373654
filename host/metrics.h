/*
 * Metric groups for `pmuctl stat -M GROUP[,GROUP]` (perf stat -M, likwid's
 * performance groups): each group names the metrics it computes, and a
 * metric is a quotient of sums of event counts. The events a group needs
 * are the ones its formulas name, in order of first use, so that a ratio's
 * two events take the same multiplexing slice when they can. Pure: no
 * card, no globals but the table; unit-tested on the host
 * (tests/unit/test_metrics.c).
 */
#ifndef HOST_METRICS_H
#define HOST_METRICS_H

#include <stdint.h>
#include <stdio.h>
#include "host/stat_fmt.h"

#define METRIC_TERMS 4   /* events summed in a numerator or denominator */
#define GROUP_METRICS 4  /* metrics in a group */

/*
 * value = scale * (sum of num) / (sum of den), with per_second:
 * value = scale * (sum of num) / (sum of den / TSC Hz) / per_second, the
 * denominator being CPU_CLK_UNHALTED, which the model counts in TSC ticks
 * (pmu/plugin_events.h). Terms are libpfm4 event names; a leading '-'
 * subtracts the event.
 */
struct metric {
	const char *name;              /* "L1 hit rate" */
	const char *unit;              /* "%", "cycles/instruction", "MB/s" */
	const char *num[METRIC_TERMS]; /* NULL after the last */
	const char *den[METRIC_TERMS];
	double scale;
	double per_second;             /* 0, or a divisor of the rate per second (1e6: MB/s) */
};

struct metric_group {
	const char *name; /* "L1" */
	const char *desc;
	struct metric metrics[GROUP_METRICS]; /* a NULL name after the last */
};

/* Every metric m of group g, in the table's order. */
#define for_each_metric(m, g) \
	for (const struct metric *m = (g)->metrics; m < (g)->metrics + GROUP_METRICS && m->name; m++)

/* One counted event as `stat` printed it: its total (scaled when multiplexed, rounded). */
struct metric_count {
	const char *name;
	uint64_t value;
	int ok; /* 0: <not supported> or <not counted>: metrics that need it are n/a */
};

/* The groups (the unit test checks each has a name and events). */
#define METRIC_NGROUPS 7
extern const struct metric_group metric_groups[METRIC_NGROUPS];

/* The group named `name` (case-insensitive), or NULL. */
const struct metric_group *metric_group_find(const char *name);

/* "CPI, L1, ...": every group's name, into out (len bytes, truncated). */
void metric_group_names(char *out, size_t len);

/*
 * Appends the events group g needs that names[0..n) does not hold yet (exact
 * names), in order of first use; returns the new count, or -1 if that
 * would be more than max (names past n are then left undefined).
 */
int metric_group_events(const struct metric_group *g, const char **names, int n, int max);

/*
 * Metric m over the counts c[0..n) (found by exact name): 0 and *v, or -1
 * ("n/a") when an event it names is missing or not ok, its denominator is
 * 0, or it is per second and tsc_hz is 0.
 */
int metric_value(const struct metric *m, const struct metric_count *c, int n, uint64_t tsc_hz, double *v);

/* m's formula as text, e.g. "100 * (A - B) / A", into out (len bytes, truncated). */
void metric_formula(const struct metric *m, char *out, size_t len);

/*
 * The metrics of groups g[0..ng) over c[0..n), after the counts, in the
 * format f names: table lines (value, name, unit; "n/a" when the metric has
 * no value) under a heading per group, or with -x perf's metric columns
 * (five empty fields, metric-value, metric-unit "UNIT NAME"), or with --json
 * one object per metric with perf's metric-value and metric-unit keys. t >= 0
 * starts each line with the interval's time in seconds (-I; no headings).
 */
void metrics_print(const struct stat_format *f, const struct metric_group *const *g, int ng,
		   const struct metric_count *c, int n, double t);

/* `pmuctl stat -M list`: every group, its metrics, their units and formulas. */
void metrics_list(FILE *out);

#endif
