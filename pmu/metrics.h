/*
 * Metric groups (perf stat -M, likwid's performance groups): each group
 * names the metrics it computes, and a metric is a quotient of sums of
 * event counts. The events a group needs are the ones its formulas name,
 * in order of first use, so that a ratio's two events take the same
 * multiplexing slice when they can. Pure, one table for the card's shell
 * (`pmu metrics`) and pmuctl (`stat -M`, host/metric_fmt.h, which prints in
 * floating point); unit-tested on the host (tests/unit/test_metrics.c).
 */
#ifndef PMU_METRICS_H
#define PMU_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define METRIC_TERMS 4   /* events summed in a numerator or denominator */
#define GROUP_METRICS 4  /* metrics in a group */

/*
 * value = scale * (sum of num) / (sum of den), with per_second:
 * value = scale * (sum of num) / (sum of den / TSC Hz) / per_second, the
 * denominator being CPU_CLK_UNHALTED, which the model counts in TSC ticks
 * (pmu/plugin_events.h). Terms are libpfm4 event names; a leading '-'
 * subtracts the event. Integers, so the card (no floating point in the
 * kernel) evaluates the same table.
 */
struct metric {
	const char *name;              /* "L1 hit rate" */
	const char *unit;              /* "%", "cycles/instruction", "MB/s" */
	const char *num[METRIC_TERMS]; /* NULL after the last */
	const char *den[METRIC_TERMS];
	uint32_t scale;
	uint32_t per_second;           /* 0, or a divisor of the rate per second (1000000: MB/s) */
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

/* The groups (the unit test checks each has a name and events): KNC's, and a Knights Landing card's. */
#define METRIC_NGROUPS 7
#define METRIC_NGROUPS_KNL 4
extern const struct metric_group metric_groups[METRIC_NGROUPS];
extern const struct metric_group metric_groups_knl[METRIC_NGROUPS_KNL];

/* The groups of the PMU libpfm4 names `pfm` ("knl": KNL's; any other, NULL too: KNC's), *n of them. */
const struct metric_group *metric_groups_of(const char *pfm, int *n);
/* PMU pfm's group named `name` (case-insensitive), or NULL; metric_group_find: KNC's. */
const struct metric_group *metric_group_find_of(const char *pfm, const char *name);
const struct metric_group *metric_group_find(const char *name);

/* "CPI, L1, ...": every group's name (of PMU pfm; KNC's), into out (len bytes, truncated). */
void metric_group_names_of(const char *pfm, char *out, size_t len);
void metric_group_names(char *out, size_t len);

/*
 * Appends the events group g needs that names[0..n) does not hold yet (exact
 * names), in order of first use; returns the new count, or -1 if that
 * would be more than max (names past n are then left undefined).
 */
int metric_group_events(const struct metric_group *g, const char **names, int n, int max);

/*
 * The sums of metric m's numerator and denominator terms over the counts
 * c[0..n) (found by exact name; a '-' term subtracts): 0, or -1 ("n/a")
 * when an event it names is missing or not ok or the denominator is 0 or
 * less. Events, as counted (scaled when multiplexed).
 */
int metric_sums(const struct metric *m, const struct metric_count *c, int n, int64_t *num, int64_t *den);

/*
 * Metric m over the counts c[0..n) (found by exact name), in thousandths
 * of its unit, rounded to the nearest: 0 and *milli, or -1 ("n/a") when an
 * event it names is missing or not ok, its denominator is 0 or less, it is
 * per second and tsc_hz is 0, or the value does not fit in 64 bits.
 */
int metric_value_milli(const struct metric *m, const struct metric_count *c, int n, uint64_t tsc_hz, int64_t *milli);

/* m's formula as text, e.g. "100 * (A - B) / A", into out (len bytes, truncated). */
void metric_formula(const struct metric *m, char *out, size_t len);

#endif
