/*
 * `pmuctl stat` output, pure (no card, no globals): perf's scaling of
 * multiplexed counts and its three formats, the table (stderr), -x SEP and
 * --json (stdout). Unit-tested on the host (tests/unit/test_stat_fmt.c).
 */
#ifndef HOST_STAT_FMT_H
#define HOST_STAT_FMT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "lib/cpuset.h"

/*
 * What a count that includes other threads' says beside it (MBOX_COUNT_SHARED:
 * the card counts by a clock all its CPUs advance, docs/design.md §5.2).
 */
#define STAT_SHARED_NOTE "includes other CPUs' instructions: no per-thread clock without the QEMU plugin"

/* One event on one CPU: its count (events) and two times in ticks of the card's PMU clock. */
struct stat_count {
	uint64_t value;   /* events counted while on a counter */
	uint64_t enabled; /* ticks the counters ran */
	uint64_t running; /* ticks this event was on a counter (< enabled when multiplexed) */
	bool shared;      /* the count includes other threads' (MBOX_COUNT_SHARED) */
};

struct stat_format {
	const char *sep;  /* -x SEP: perf's CSV columns on `out`; NULL: no CSV */
	int json;         /* --json: one object per event and CPU on `out` */
	uint64_t tsc_hz;  /* TSC ticks per second (> 0), for run times in ns */
	FILE *out;        /* -x and --json (stdout) */
	FILE *table;      /* the table, when neither -x nor --json (stderr) */
	int per_cpu;      /* -A: a line per CPU (--json always has one) */
	const uint16_t *core; /* --per-core: core[cpu] (struct mbox_info.core), a line per core; NULL: off */
	const uint32_t *tid;  /* --per-thread: tid[cpu] (host/rings.h launch_tids, 0: none), a line per thread; NULL: off */
	const char *comm;     /* --per-thread: the threads' COMM, the program's name */
	int metric_only;  /* --metric-only: the metrics in columns, no counts */
	int runs;         /* -r N: with N > 1 each line shows `noise` */
	double noise;     /* the event's spread over the runs, perf's "+- x.xx%": 100 * stddev of the mean / mean */
	int model_cycles; /* the card's cycles are the QEMU plugin's timing model's (MBOX_CAP_MODEL_CYCLES): the tail says so */
};

/* perf's estimate: value * enabled / running, unrounded; 0 when the event never ran (running 0). */
double stat_scale(const struct stat_count *c);

/* Percent of the counting time the event was on a counter: 100 * running / enabled; 100 when enabled is 0. */
double stat_pcnt(const struct stat_count *c);

/*
 * The counts of `set`'s CPUs since `then` (NULL: since the start), summed;
 * now[cpu] and then[cpu] are indexed by CPU number (CPUSET_MAX entries).
 */
struct stat_count stat_sum(const struct cpuset *set, const struct stat_count *now, const struct stat_count *then);

/* The count the table prints for a sum: stat_scale rounded to an event count; 0 when it never ran. */
uint64_t stat_total(const struct stat_count *sum);

/* v in decimal with a comma every three digits ("1,234,567"); out holds at least 27 bytes. */
void group_digits(uint64_t v, char *out);

/*
 * What starts a line of interval t (-I) in seconds: the time column for the
 * table or -x into ts; empty when t < 0 (no -I).
 */
void stat_interval_text(const struct stat_format *f, double t, char ts[32]);

/*
 * --json goes through json-c: a line's object, with perf's "interval" key
 * (seconds, 9 decimals) when t >= 0; stat_json_end prints it as one line on
 * f->out and frees it. json_add_num adds a number written with printf
 * format fmt (perf's decimals: "pcnt-running" 100.00).
 */
struct json_object;
struct json_object *stat_json_start(double t);
void stat_json_end(const struct stat_format *f, struct json_object *o);
void json_add_str(struct json_object *o, const char *key, const char *v);
void json_add_num(struct json_object *o, const char *key, const char *fmt, double v);

/*
 * One event's line(s): its counts since `then` (NULL: since the start), summed
 * over the CPUs of `set` and scaled; with --json one object per CPU instead;
 * with f->core (--per-core) one line or object per core that has CPUs in
 * `set`, perf's S0-D0-Cn with how many CPUs it sums; with f->tid
 * (--per-thread) one per CPU of `set` that held a thread, in CPU order,
 * perf's COMM-TID (a thread's counts are its CPU's: one thread per CPU).
 * now[cpu] and then[cpu] are indexed by CPU number (CPUSET_MAX entries).
 * `counted`: 0 if the card's backend does not count this event ("<not
 * supported>"); an event that never ran shows "<not counted>". t >= 0 starts
 * each line with the interval's time in seconds (-I); t < 0: no time column.
 */
void stat_print(const struct stat_format *f, const char *name, int counted, const struct cpuset *set,
		const struct stat_count *now, const struct stat_count *then, double t);

/* The table's heading before the totals (nothing with -x or --json). */
void stat_print_head(const struct stat_format *f, const char *program, const char *cpus);

/* The table's column heading before the first -I interval (nothing with -x or --json). */
void stat_print_interval_head(const struct stat_format *f);

/* The table's wall time line after the totals, `elapsed` seconds, with runs > 1 its spread (noise) (nothing with -x or --json). */
void stat_print_tail(const struct stat_format *f, double elapsed);

#endif
