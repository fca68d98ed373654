/*
 * `pmuctl stat -M GROUP[,GROUP]`: the metric groups of pmu/metrics.h (the
 * table the card's shell uses too) evaluated in floating point and printed
 * in stat's formats. Pure; unit-tested on the host (tests/unit/test_metrics.c).
 */
#ifndef HOST_METRIC_FMT_H
#define HOST_METRIC_FMT_H

#include <stdint.h>
#include <stdio.h>
#include "host/stat_fmt.h"
#include "pmu/metrics.h"

/*
 * Metric m over the counts c[0..n) (found by exact name): 0 and *v, or -1
 * ("n/a") when an event it names is missing or not ok, its denominator is
 * 0 or less, or it is per second and tsc_hz is 0.
 */
int metric_value(const struct metric *m, const struct metric_count *c, int n, uint64_t tsc_hz, double *v);

/* metric_value as every format prints it into out[0..len): 6 significant digits, whole numbers from a million, or "n/a". */
void metric_text(const struct metric *m, const struct metric_count *c, int n, uint64_t tsc_hz, char *out, size_t len);

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

/*
 * --metric-only (perf's): the metrics of g[0..ng) in columns, "UNIT NAME"
 * over each: metrics_print_columns_head prints the heading line (the table
 * and -x; nothing for --json), metrics_print_columns a line of values (with
 * --json one object, each metric's "UNIT NAME" its key). t as above.
 */
void metrics_print_columns_head(const struct stat_format *f, const struct metric_group *const *g, int ng);
void metrics_print_columns(const struct stat_format *f, const struct metric_group *const *g, int ng,
			   const struct metric_count *c, int n, double t);

/* `pmuctl stat -M list`: every group, its metrics, their units and formulas. */
void metrics_list(FILE *out);

#endif
