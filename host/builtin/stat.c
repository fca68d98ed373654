/* pmuctl stat: counting, multiplexed when there are more events than counters. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/metric_fmt.h"
#include "host/plot.h"
#include "host/pfm.h"
#include "host/pmuctl.h"
#include "host/progress.h"
#include "host/regions.h"
#include "host/rings.h"
#include "host/stat_fmt.h"
#include "pmu/knc/regs.h"
#include "pmu/rules.h"

/* The card's PMU, whose rules place and pair stat's events (host/mbox.h card_pmu): set as cmd_stat starts. */
static const struct pmu_desc *stat_pmu = &pmu_knc_desc;

static struct {
	int nev, counted[MAX_EVENTS], ngroups;
	const char *names[MAX_EVENTS];
	const char *metric_names[MAX_EVENTS]; /* what -M's metrics call each: a -e alias's KNC name (cycles: CPU_CLK_UNHALTED) */
	const struct metric_group *groups[METRIC_NGROUPS]; /* -M, each once: their events are among names */
	uint32_t sel[MAX_EVENTS];
	uint32_t paired; /* bit i: events i and i+1 are one {group} (struct mbox_pmu_mux) */
	struct stat_count now[MAX_EVENTS][CPUSET_MAX], then[MAX_EVENTS][CPUSET_MAX];
	struct stat_count runs_sum[MAX_EVENTS][CPUSET_MAX]; /* -r: every run's counts added */
	double mean[MAX_EVENTS + 1], m2[MAX_EVENTS + 1];    /* -r: Welford's running mean and squares; the last: seconds */
	double noise[MAX_EVENTS];
	struct stat_format fmt;
	const struct cpuset *set;
	int interval_ms;
	const char *plot; /* --plot FILE */
	uint32_t plot_cpus[CPUSET_MAX]; /* with -A: the chart's line per CPU */
	int plot_ncpu;
	int threads;              /* --threads: MBOX_RUN_THREADS */
	uint32_t tid[CPUSET_MAX]; /* --per-thread: each CPU's thread as the card last listed it (launch_tids) */
	double start, next_print, last_print;
} st;

/*
 * Gives the card the events as one list (MBOX_OP_PMU_MUX): it puts them on
 * the counters itself (an L2 event only on counter 0) and they stay there
 * when they fit, else they take turns every mux_ms. pmuctl places nothing.
 */
static void stat_configure(struct card *c, const struct cpuset *set, int mux_ms)
{
	struct mbox_pmu_mux m = { .nev = st.nev, .slice_us = mux_ms * 1000, .paired = st.paired };
	int rc;

	memcpy(m.evtsel, st.sel, st.nev * sizeof(st.sel[0]));
	if ((rc = call(c, MBOX_OP_PMU_MUX, set, &m, sizeof(m), &resp)) != MBOX_OK)
		die_status(c, "configure", rc);
}

/* Reads every CPU's counts into st.now. */
static void stat_read(struct card *c, const struct cpuset *set)
{
	int rc = call(c, MBOX_OP_PMU_READ, set, NULL, 0, &resp);
	if (rc != MBOX_OK)
		die_status(c, "read", rc);
	const struct mbox_pmu_count *r = (const struct mbox_pmu_count *)resp.payload;
	for (size_t k = 0; k < resp.len / sizeof(*r); k++) {
		uint32_t ev = r[k].slot; /* the event's place in the list */
		if (!(r[k].flags & MBOX_COUNT_MUX) || ev >= (uint32_t)st.nev || r[k].cpu >= CPUSET_MAX)
			continue;
		st.now[ev][r[k].cpu] = (struct stat_count){ r[k].value, r[k].enabled, r[k].running,
							     !!(r[k].flags & MBOX_COUNT_SHARED) };
		st.counted[ev] = !!(r[k].flags & MBOX_COUNT_COUNTED);
	}
}

/* Every event's line since `then` (NULL: the start), then the -M metrics over the same counts. */
static void stat_print_all(struct stat_count (*then)[CPUSET_MAX], double t)
{
	struct metric_count mc[MAX_EVENTS];
	uint64_t counts[MAX_EVENTS * CPUSET_MAX];

	if (st.fmt.tid) /* a process's threads appear as it makes them: -I lines them up as they come */
		launch_tids(&launch_tasks, st.threads, st.tid);
	for (int e = 0; e < st.nev; e++) {
		st.fmt.noise = st.noise[e];
		if (!st.fmt.metric_only)
			stat_print(&st.fmt, st.names[e], st.counted[e], st.set, st.now[e], then ? then[e] : NULL, t);
		struct stat_count sum = stat_sum(st.set, st.now[e], then ? then[e] : NULL);
		mc[e] = (struct metric_count){ st.metric_names[e], stat_total(&sum), st.counted[e] && sum.running };
		counts[e * st.plot_ncpu] = mc[e].value;
		for (int k = 0; st.fmt.per_cpu && k < st.plot_ncpu; k++) {
			struct cpuset one = { 0 };
			cpuset_add(&one, st.plot_cpus[k]);
			struct stat_count c = stat_sum(&one, st.now[e], then ? then[e] : NULL);
			counts[e * st.plot_ncpu + k] = stat_total(&c);
		}
	}
	if (st.plot && t >= 0)
		plot_add(t, counts);
	if (st.fmt.metric_only)
		metrics_print_columns(&st.fmt, st.groups, st.ngroups, mc, st.nev, t);
	else
		metrics_print(&st.fmt, st.groups, st.ngroups, mc, st.nev, t);
}

/* The core of each CPU (struct mbox_info.core), from the card's INFO answer; exits naming a failed call. */
static const uint16_t *card_cores(struct card *c)
{
	static struct mbox_info info;
	int rc = call(c, MBOX_OP_INFO, NULL, NULL, 0, &resp);

	if (rc != MBOX_OK)
		die_status(c, "info", rc);
	memcpy(&info, resp.payload, sizeof(info));
	return info.core;
}

/* One event of -e's list, by name: exits with status 2 when the list is full. */
static void add_event(char *e)
{
	if (st.nev == MAX_EVENTS) { /* the card would refuse more, but the request holds no more */
		fprintf(stderr, "pmuctl: at most %d events\n", MAX_EVENTS);
		exit(2);
	}
	st.names[st.nev] = st.metric_names[st.nev] = e;
	st.sel[st.nev++] = encode(e);
}

/* A {group} of events first..st.nev: on the counters together, so at most 2, not two L2 events. */
static void close_group(const char *list, int first)
{
	int n = st.nev - first;

	if (n > stat_pmu->counters) {
		fprintf(stderr, "pmuctl: -e %s: a group of %d events ({%s,...}), but a group is counted all at "
			"once and a KNC hardware thread has %d counters (Intel 327357-001 §1.2): split it or leave "
			"the braces out to multiplex\n", list, n, st.names[first], stat_pmu->counters);
		exit(2);
	}
	if (n == 2 && !pmu_pair_fits(stat_pmu, st.sel[first], st.sel[first + 1])) {
		fprintf(stderr, "pmuctl: -e %s: group {%s,%s} cannot be counted at once: both are L2 events, "
			"which count only on counter 0 (docs/design.md §5.1)\n", list, st.names[first],
			st.names[first + 1]);
		exit(2);
	}
	if (n == 2)
		st.paired |= 1u << first;
}

/*
 * -e EV[,EV...] with perf's groups, {EV,EV}: events counted at once, in
 * every slice when the others take turns. Exits with status 2 naming a
 * brace that does not pair up or a group that cannot fit the counters.
 */
static void add_events(const char *list)
{
	char *save, *copy = strdup(list);
	int first = -1; /* the open group's first event */

	for (char *e = copy ? strtok_r(copy, ",", &save) : NULL; e; e = strtok_r(NULL, ",", &save)) {
		if (*e == '{') {
			if (first >= 0)
				break;
			first = st.nev;
			e++;
		}
		size_t len = strlen(e);
		int closes = len && e[len - 1] == '}';
		if (closes)
			e[len - 1] = 0;
		if (!*e || strpbrk(e, "{}") || (closes && first < 0)) {
			first = -2;
			break;
		}
		add_event(e);
		if (closes) {
			close_group(list, first);
			first = -1;
		}
	}
	if (first != -1) {
		fprintf(stderr, "pmuctl: -e %s: a group is {EV,EV}, braces paired and not nested (modifiers go "
			"on each event: {cycles:u,instructions:u})\n", list);
		exit(2);
	}
}

/* -M GROUP[,GROUP]: the groups, and their events added to -e's; exits with status 2 naming what was wrong. */
static void add_groups(const char *list)
{
	for (char *g = strtok(strdup(list), ","); g; g = strtok(NULL, ",")) {
		const struct metric_group *mg = metric_group_find_of(pfm_pmu_name(), g); /* the card's PMU's */
		if (!mg) {
			char known[128];
			metric_group_names_of(pfm_pmu_name(), known, sizeof(known));
			fprintf(stderr, "pmuctl: -M %s: no metric group '%s'; the groups are %s (%s)\n", list, g, known,
				strcmp(pfm_pmu_name(), "knl") ? "pmuctl stat -M list" : "Knights Landing's, pmu/metrics.c");
			exit(2);
		}
		int dup = 0;
		for (int i = 0; i < st.ngroups; i++)
			dup |= st.groups[i] == mg;
		if (dup)
			continue;
		/* room for every event a group can name, to say how many there would be */
		const char *all[MAX_EVENTS + 2 * METRIC_TERMS * GROUP_METRICS];
		memcpy(all, st.names, st.nev * sizeof(all[0]));
		int n = metric_group_events(mg, all, st.nev, sizeof(all) / sizeof(all[0]));
		/* An event -e gave under another name (perf's alias, a raw code) is counted once. */
		int have = st.nev, same[sizeof(all) / sizeof(all[0])], total = have;
		for (int k = have; k < n; k++) {
			uint32_t sel = encode(all[k]);
			same[k] = 0;
			while (same[k] < have && st.sel[same[k]] != sel)
				same[k]++;
			total += same[k] == have;
		}
		if (total > MAX_EVENTS) {
			fprintf(stderr, "pmuctl: -M %s: with group %s that makes %d events; at most %d\n", list, mg->name,
				total, MAX_EVENTS);
			exit(2);
		}
		for (int k = have; k < n; k++)
			if (same[k] < have) {
				st.metric_names[same[k]] = all[k];
			} else {
				st.names[st.nev] = st.metric_names[st.nev] = all[k];
				st.sel[st.nev++] = encode(all[k]);
			}
		st.groups[st.ngroups++] = mg;
	}
}

/*
 * The program's named regions (host/regions.h): their RDPMC deltas are the
 * events the card put on the counters (pmu_place's first slice), and mean
 * nothing when the events take turns (the program then reads the kernel's
 * totals instead) or one is not counted.
 */
static void stat_print_regions(void)
{
	int on[PMU_MAX_COUNTERS];
	char why[160] = "", turns[160] = "";

	pmu_place(stat_pmu, st.nev, st.sel, st.paired, 0, on);
	if (pmu_mux_rotates(stat_pmu, st.nev, st.sel, st.paired))
		snprintf(turns, sizeof(turns), "%d events take turns on the %d counters: a region read with RDPMC is "
			 "counted only with events that stay on them (at most %d, one L2 event)", st.nev,
			 stat_pmu->counters, stat_pmu->counters);
	for (int e = 0; e < st.nev && !why[0]; e++)
		if (!st.counted[e])
			snprintf(why, sizeof(why), "%s is not counted by the card", st.names[e]);
	bool shared = false; /* the counters' counts include other threads': so do the regions' */
	for (int e = 0; e < st.nev; e++)
		shared |= stat_sum(st.set, st.now[e], NULL).shared;
	regions_print(&st.fmt, st.names, st.nev, on, why[0] ? why : NULL, turns[0] ? turns : NULL, st.groups,
		      st.ngroups, shared);
}

int stat_lists_metrics(int argc, char **argv)
{
	return argc == 3 && strcmp(argv[1], "-M") == 0 && strcmp(argv[2], "list") == 0;
}

/* -I: every interval, the counts since the last one. */
static void stat_tick(struct card *c, const struct cpuset *set)
{
	double now = now_s();

	if (now < st.next_print)
		return;
	memcpy(st.then, st.now, sizeof(st.then));
	stat_read(c, set);
	progress_clear();
	if (st.last_print == 0) {
		stat_print_interval_head(&st.fmt);
		if (st.fmt.metric_only)
			metrics_print_columns_head(&st.fmt, st.groups, st.ngroups);
	}
	stat_print_all(st.then, now - st.start);
	st.last_print = now;
	while (st.next_print <= now)
		st.next_print += st.interval_ms / 1000.0;
}

/* -r: run k's totals into the running mean and squares (Welford), its counts into runs_sum. */
static void stat_add_run(int k, double seconds)
{
	for (int e = 0; e <= st.nev; e++) {
		double x = seconds;
		if (e < st.nev) {
			struct stat_count sum = stat_sum(st.set, st.now[e], NULL);
			x = stat_total(&sum);
			for (uint32_t cpu = 0; cpu < CPUSET_MAX; cpu++) {
				st.runs_sum[e][cpu].value += st.now[e][cpu].value;
				st.runs_sum[e][cpu].enabled += st.now[e][cpu].enabled;
				st.runs_sum[e][cpu].running += st.now[e][cpu].running;
				st.runs_sum[e][cpu].shared |= st.now[e][cpu].shared;
			}
		}
		double d = x - st.mean[e];
		st.mean[e] += d / k;
		st.m2[e] += d * (x - st.mean[e]);
	}
}

/* perf's noise over n runs of event e: 100 * the standard deviation of the mean / the mean. */
static double stat_noise(int e, int n)
{
	return st.mean[e] ? 100 * sqrt(st.m2[e] / (n - 1) / n) / st.mean[e] : 0;
}

/* -r n: the mean counts in st.now and each event's noise. */
static void stat_mean_of_runs(int n)
{
	for (int e = 0; e < st.nev; e++) {
		for (uint32_t cpu = 0; cpu < CPUSET_MAX; cpu++)
			st.now[e][cpu] = (struct stat_count){ st.runs_sum[e][cpu].value / n, st.runs_sum[e][cpu].enabled / n,
							      st.runs_sum[e][cpu].running / n, st.runs_sum[e][cpu].shared };
		st.noise[e] = stat_noise(e, n);
	}
}

/*
 * A run too short for every event to take a turn (a multiplexing slice on
 * a counter) leaves events that never had a counter: perf prints them <not counted> without a word; say why.
 */
static void warn_short_run(int mux_ms)
{
	uint64_t enabled = 0;
	int never = 0;

	for (int e = 0; e < st.nev; e++) {
		struct stat_count sum = stat_sum(st.set, st.now[e], NULL);
		never |= st.counted[e] && !sum.running;
		for (uint32_t cpu = 0; cpu < CPUSET_MAX; cpu++)
			if (cpuset_has(st.set, cpu) && st.now[e][cpu].enabled > enabled)
				enabled = st.now[e][cpu].enabled; /* the longest CPU's counting time */
	}
	if (never && st.nev > stat_pmu->counters)
		fprintf(stderr, "pmuctl: warning: the run counted for %.3f ms, too short for %d events to each have a "
			"turn on the %d counters in %d ms multiplexing slices: events that never had one show "
			"<not counted>%s; give a longer run%s\n",
			enabled * 1e3 / st.fmt.tsc_hz, st.nev, stat_pmu->counters, mux_ms,
			st.ngroups ? " and the metrics over them n/a" : "",
			mux_ms > 1 ? " or a shorter --mux-interval (1 ms at least)" : "");
}

/* One run of the program with the counters cleared and started; its counts in st.now. Its exit status. */
static int stat_run_once(struct card *c, const struct cpuset *set, char **prog, int nprog, double *seconds)
{
	int rc = call(c, MBOX_OP_PMU_CLEAR, set, NULL, 0, &resp);
	if (rc == MBOX_OK)
		rc = call(c, MBOX_OP_PMU_START, set, NULL, 0, &resp);
	if (rc != MBOX_OK)
		die_status(c, "start", rc);
	st.start = now_s();
	st.next_print = st.start + st.interval_ms / 1000.0;
	st.last_print = 0;
	if (st.interval_ms)
		while_running = stat_tick;
	output_line_hook = regions_take_line;
	int status = run_program(c, set, nprog, prog, st.threads ? MBOX_RUN_THREADS : 0);
	while_running = NULL;
	output_line_hook = NULL;
	if ((rc = call(c, MBOX_OP_PMU_STOP, set, NULL, 0, &resp)) != MBOX_OK)
		die_status(c, "stop", rc);
	*seconds = now_s() - st.start;
	if (st.interval_ms) { /* the last, partial interval */
		st.next_print = 0;
		stat_tick(c, set);
	} else
		stat_read(c, set);
	return status;
}

enum { OPT_SPFLT = 256, OPT_JSON, OPT_MUX, OPT_METRIC_ONLY, OPT_PLOT, OPT_PER_CORE, OPT_PER_THREAD, OPT_THREADS };

/*
 * Without -e: perf stat's first two hardware events, one on each counter, so
 * that even a short program gets both exact (its branches and branch-misses
 * too would multiplex: a run shorter than a slice leaves them <not counted>).
 */
#define DEFAULT_EVENTS "cycles,instructions"

/* stat's options that the table stores, beside those of st's it stores (-x, --json, -I, -A ...). */
static struct {
	const char *metrics, *cpus, *output;
	int spflt, mux_ms, runs, all_cpus, per_core, per_thread;
} opt = { .mux_ms = 4, .runs = 1 };

const struct cli_opt stat_opts[] = {
	{ "event", 'e', "EV[,EV...]", "up to 8 events (-e again adds more): libpfm4 knc names with :u/:k..., perf's "
				      "cycles, instructions, branches, branch-misses, cache-references, cache-misses, or raw "
				      "rUUEE (pmuctl events); without -e or -M, perf's default: " DEFAULT_EVENTS },
	{ "metrics", 'M', "GROUP[,GROUP...]", "count the events of metric groups, then print their metrics; -M list: the groups",
	  .str = &opt.metrics },
	{ "cpu", 'C', "CPUS", "the card CPUs the program runs on, e.g. 1-3,8 (default 1)", .str = &opt.cpus },
	{ "all-cpus", 'a', NULL, "every CPU programs run on (1 to the last; CPU 0 runs the shell)", .flag = &opt.all_cpus },
	{ "output", 'o', "FILE", "the counts (table, -x or --json) into FILE instead of stderr", .str = &opt.output },
	{ "spflt", OPT_SPFLT, NULL, "the program's SPFLT instructions gate the counters (at most 2 events)",
	  .flag = &opt.spflt },
	{ "interval-print", 'I', "MS", "the counts of every MS milliseconds instead of the total", 10, 3600000,
	  .ival = &st.interval_ms },
	/* The card judges the slice (1 ms to 1 s); pmuctl bounds it only so that its microseconds fit the wire's 32 bits. */
	{ "mux-interval", OPT_MUX, "MS", "the multiplexing slice in milliseconds (default 4); the card takes 1 to 1000",
	  0, 1000000, .ival = &opt.mux_ms },
	{ "field-separator", 'x', "SEP", "perf's CSV layout on stderr: value, unit, event, run time, running %",
	  .str = &st.fmt.sep },
	{ "json", OPT_JSON, NULL, "perf's JSON layout on stderr, one object per event and CPU", .flag = &st.fmt.json },
	{ "repeat", 'r', "N", "run the program N times: the mean counts, each with perf's +- spread", 1, 1000,
	  .ival = &opt.runs },
	{ "per-cpu", 'A', NULL, "a count per CPU instead of their sum (table and -x)", .flag = &st.fmt.per_cpu },
	{ "per-core", OPT_PER_CORE, NULL, "a count per core (the threads of one core summed, perf's S0-D0-Cn) instead of "
	  "their sum", .flag = &opt.per_core },
	{ "per-thread", OPT_PER_THREAD, NULL, "a count per thread (perf's COMM-TID lines: a thread's counts are its CPU's; "
	  "an instance per CPU is a thread each) instead of their sum", .flag = &opt.per_thread },
	THREADS_OPT(OPT_THREADS, &st.threads),
	{ "metric-only", OPT_METRIC_ONLY, NULL, "with -M: only the metrics, in columns", .flag = &st.fmt.metric_only },
	{ "plot", OPT_PLOT, "FILE", "with -I: each event's rate over time in a panel of its own (a line per CPU with -A), "
	  "an SVG drawn by gnuplot", .str = &st.plot },
	{ 0 },
};

const char stat_more[] =
	"The counts go to stderr, as perf stat's do, table, -x and --json alike (-o FILE: there), so that stdout is "
	"the program's alone. An event the backend does "
	"not count shows <not supported>. More events than the two counters take turns (multiplexing, cut by each "
	"card CPU in its own time) and are scaled, with the running percentage shown. A program's named regions "
	"(pmu_region_begin/end) get a table each after the totals: calls, the events' counts and the -M metrics.";

int cmd_stat(struct card *c, int argc, char **argv)
{
	char *events = NULL, all[32];
	int o;
	struct cpuset set;

	if (stat_lists_metrics(argc, argv)) {
		metrics_list(stdout);
		return 0;
	}
	stat_pmu = c ? card_pmu(c) : &pmu_knc_desc;
	st.fmt.out = stderr; /* perf's -x and -j too: stdout is the program's */
	st.fmt.table = stderr;
	while ((o = cli_next(argc, argv)) != -1) { /* -e alone: the table stores the others */
		if (!events) /* perf's repeated -e: all of them */
			events = strdup(optarg);
		else if ((events = realloc(events, strlen(events) + strlen(optarg) + 2)))
			strcat(strcat(events, ","), optarg);
		if (!events) {
			fprintf(stderr, "pmuctl: out of memory for -e %s\n", optarg);
			return 2;
		}
	}
	if (opt.runs > 1 && st.interval_ms) {
		fprintf(stderr, "pmuctl: -r and -I together: give one (-I prints each interval of one run)\n");
		return 2;
	}
	if (st.fmt.metric_only && !opt.metrics) {
		fprintf(stderr, "pmuctl: --metric-only prints the metrics of -M GROUP: give -M\n");
		return 2;
	}
	if (optind >= argc)
		return usage_arg("no program to run: give -- PROGRAM.elf [ARGS]", NULL);
	if (opt.all_cpus && opt.cpus) {
		fprintf(stderr, "pmuctl: -a and -C %s together: give one (-a is every CPU programs run on)\n", opt.cpus);
		return 2;
	}
	if (!events && !opt.metrics)
		events = strdup(DEFAULT_EVENTS);
	if (opt.per_core && st.fmt.per_cpu) {
		fprintf(stderr, "pmuctl: -A and --per-core together: give one (a line per CPU, or per core)\n");
		return 2;
	}
	if (opt.per_thread && (st.fmt.per_cpu || opt.per_core)) {
		fprintf(stderr, "pmuctl: --per-thread and %s together: give one (a line per thread, or per %s)\n",
			st.fmt.per_cpu ? "-A" : "--per-core", st.fmt.per_cpu ? "CPU" : "core");
		return 2;
	}
	if (st.plot && !st.interval_ms) {
		fprintf(stderr, "pmuctl: --plot %s draws the counts over time: give -I MS too\n", st.plot);
		return 2;
	}
	pfm_setup(c->seen.pmu);
	if (events)
		add_events(events);
	if (opt.metrics)
		add_groups(opt.metrics);
	if (!st.nev) {
		fprintf(stderr, "pmuctl: no events: give -e EV[,EV...] or -M GROUP[,GROUP...]\n");
		return 2;
	}
	if (opt.all_cpus) {
		snprintf(all, sizeof(all), c->cpu_count > 2 ? "1-%u" : "1", c->cpu_count - 1);
		opt.cpus = all;
	} else if (!opt.cpus) {
		opt.cpus = "1";
	}
	parse_cpus(c, opt.cpus, &set);
	if (opt.output && !(st.fmt.out = st.fmt.table = fopen(opt.output, "w"))) {
		fprintf(stderr, "pmuctl: -o %s: %s\n", opt.output, strerror(errno));
		return 2;
	}
	st.set = &set;
	if (opt.per_core)
		st.fmt.core = card_cores(c);
	if (opt.per_thread) { /* a thread's COMM is the program's name, as the card's argv[0] */
		st.fmt.tid = st.tid;
		st.fmt.comm = strrchr(argv[optind], '/') ? strrchr(argv[optind], '/') + 1 : argv[optind];
	}
	for (uint32_t cpu = 0; st.fmt.per_cpu && cpu < CPUSET_MAX; cpu++)
		if (cpuset_has(&set, cpu))
			st.plot_cpus[st.plot_ncpu++] = cpu;
	st.plot_ncpu += !st.plot_ncpu; /* without -A one line: the CPUs' sum */
	plot_setup(st.nev, st.plot_ncpu, st.fmt.per_cpu ? st.plot_cpus : NULL);
	st.fmt.tsc_hz = c->seen.tsc_hz ? c->seen.tsc_hz : 1000000000;
	st.fmt.model_cycles = (c->seen.capabilities & MBOX_CAP_MODEL_CYCLES) != 0;
	stat_configure(c, &set, opt.mux_ms);
	/* SPFLT may gate both counters: one without an event counts nothing either way. */
	uint32_t mask = opt.spflt ? pmu_all_counters(stat_pmu) : 0;
	int rc = call(c, MBOX_OP_PMU_SPFLT, &set, &mask, sizeof(mask), &resp);
	if (rc != MBOX_OK)
		die_status(c, "configure", rc);
	st.fmt.runs = opt.runs;
	double seconds, elapsed = 0;
	int status = 0;
	for (int k = 1; k <= opt.runs; k++) {
		status = stat_run_once(c, &set, argv + optind, argc - optind, &seconds);
		if (opt.runs > 1)
			stat_add_run(k, seconds);
		elapsed = seconds;
		if (status >= 128) { /* a signal ended pmuctl's wait: no more opt.runs */
			opt.runs = st.fmt.runs = k;
			break;
		}
	}
	if (st.interval_ms) {
		stat_print_regions();
		if (st.plot && plot_write(st.plot, argv[optind], st.names, st.interval_ms))
			return status ? status : 1;
		return status;
	}
	if (opt.runs > 1) {
		stat_mean_of_runs(opt.runs);
		elapsed = st.mean[st.nev];
		st.fmt.noise = stat_noise(st.nev, opt.runs);
	}
	warn_short_run(opt.mux_ms);
	stat_print_head(&st.fmt, argv[optind], opt.cpus);
	if (st.fmt.metric_only)
		metrics_print_columns_head(&st.fmt, st.groups, st.ngroups);
	stat_print_all(NULL, -1);
	stat_print_regions();
	st.fmt.noise = opt.runs > 1 ? stat_noise(st.nev, opt.runs) : 0;
	stat_print_tail(&st.fmt, elapsed);
	return status;
}
