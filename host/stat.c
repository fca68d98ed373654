/* pmuctl stat: counting, multiplexed when there are more events than counters. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/metrics.h"
#include "host/pmuctl.h"
#include "host/progress.h"
#include "host/stat_fmt.h"
#include "pmu/regs.h"

static struct {
	int nev, counted[MAX_EVENTS], ngroups;
	const char *names[MAX_EVENTS];
	const struct metric_group *groups[METRIC_NGROUPS]; /* -M, each once: their events are among names */
	uint32_t sel[MAX_EVENTS];
	struct stat_count now[MAX_EVENTS][CPUSET_MAX], then[MAX_EVENTS][CPUSET_MAX];
	struct stat_format fmt;
	const struct cpuset *set;
	int interval_ms;
	double start, next_print, last_print;
} st;

/*
 * Gives the card the events as one list (MBOX_OP_PMU_MUX): it puts them on
 * the counters itself (an L2 event only on counter 0) and they stay there
 * when they fit, else they take turns every mux_ms. pmuctl places nothing.
 */
static void stat_configure(struct card *c, const struct cpuset *set, int mux_ms)
{
	struct mbox_pmu_mux m = { .nev = st.nev, .slice_us = mux_ms * 1000 };
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
		st.now[ev][r[k].cpu] = (struct stat_count){ r[k].value, r[k].enabled, r[k].running };
		st.counted[ev] = !!(r[k].flags & MBOX_COUNT_COUNTED);
	}
}

/* Every event's line since `then` (NULL: the start), then the -M metrics over the same counts. */
static void stat_print_all(struct stat_count (*then)[CPUSET_MAX], double t)
{
	struct metric_count mc[MAX_EVENTS];

	for (int e = 0; e < st.nev; e++) {
		stat_print(&st.fmt, st.names[e], st.counted[e], st.set, st.now[e], then ? then[e] : NULL, t);
		struct stat_count sum = stat_sum(st.set, st.now[e], then ? then[e] : NULL);
		mc[e] = (struct metric_count){ st.names[e], stat_total(&sum), st.counted[e] && sum.running };
	}
	metrics_print(&st.fmt, st.groups, st.ngroups, mc, st.nev, t);
}

/* -M GROUP[,GROUP]: the groups, and their events added to -e's; exits with status 2 naming what was wrong. */
static void add_groups(const char *list)
{
	for (char *g = strtok(strdup(list), ","); g; g = strtok(NULL, ",")) {
		const struct metric_group *mg = metric_group_find(g);
		if (!mg) {
			char known[128];
			metric_group_names(known, sizeof(known));
			fprintf(stderr, "pmuctl: -M %s: no metric group '%s'; the groups are %s (pmuctl stat -M list)\n",
				list, g, known);
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
		if (n > MAX_EVENTS) {
			fprintf(stderr, "pmuctl: -M %s: with group %s that makes %d events; at most %d\n", list, mg->name,
				n, MAX_EVENTS);
			exit(2);
		}
		while (st.nev < n) {
			st.names[st.nev] = all[st.nev];
			st.sel[st.nev] = encode(st.names[st.nev]);
			st.nev++;
		}
		st.groups[st.ngroups++] = mg;
	}
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
	if (st.last_print == 0)
		stat_print_interval_head(&st.fmt);
	stat_print_all(st.then, now - st.start);
	st.last_print = now;
	while (st.next_print <= now)
		st.next_print += st.interval_ms / 1000.0;
}

int cmd_stat(struct card *c, int argc, char **argv)
{
	static const struct option longs[] = {
		{ "spflt", no_argument, NULL, 's' }, { "json", no_argument, NULL, 'j' },
		{ "mux-interval", required_argument, NULL, 'm' }, { "metrics", required_argument, NULL, 'M' }, { 0 },
	};
	const char *events = NULL, *metrics = NULL, *cpus = "1";
	int spflt = 0, mux_ms = 4, o;
	struct cpuset set;
	char *end;

	st.fmt.out = stdout;
	st.fmt.table = stderr;
	optind = 1;
	while ((o = getopt_long(argc, argv, "+e:M:C:x:I:", longs, NULL)) != -1) {
		switch (o) {
		case 'e': events = optarg; break;
		case 'M': metrics = optarg; break;
		case 'C': cpus = optarg; break;
		case 'x': st.fmt.sep = optarg; break;
		case 's': spflt = 1; break;
		case 'j': st.fmt.json = 1; break;
		case 'I':
			st.interval_ms = strtol(optarg, &end, 10);
			if (*end || st.interval_ms < 10 || st.interval_ms > 3600000) {
				fprintf(stderr, "pmuctl: -I %s: the interval is 10 to 3600000 milliseconds\n", optarg);
				return 2;
			}
			break;
		case 'm':
			mux_ms = strtol(optarg, &end, 10);
			if (*end || mux_ms < 1 || mux_ms > 1000) {
				fprintf(stderr, "pmuctl: --mux-interval %s: the slice is 1 to 1000 milliseconds\n", optarg);
				return 2;
			}
			break;
		default: return usage();
		}
	}
	if ((!events && !metrics) || optind >= argc)
		return usage();
	pfm_setup();
	for (char *e = events ? strtok(strdup(events), ",") : NULL; e; e = strtok(NULL, ",")) {
		if (st.nev == MAX_EVENTS) {
			fprintf(stderr, "pmuctl: at most %d events\n", MAX_EVENTS);
			return 2;
		}
		st.names[st.nev] = e;
		st.sel[st.nev++] = encode(e);
	}
	if (metrics)
		add_groups(metrics);
	if (!st.nev) {
		fprintf(stderr, "pmuctl: no events: give -e EV[,EV...] or -M GROUP[,GROUP...]\n");
		return 2;
	}
	parse_cpus(c, cpus, &set);
	st.set = &set;
	st.fmt.tsc_hz = c->seen.tsc_hz ? c->seen.tsc_hz : 1000000000;
	stat_configure(c, &set, mux_ms);
	/* SPFLT may gate both counters: one without an event counts nothing either way. */
	uint32_t mask = spflt ? SPFLT_EN(0) | SPFLT_EN(1) : 0;
	int rc = call(c, MBOX_OP_PMU_SPFLT, &set, &mask, sizeof(mask), &resp);
	if (rc == MBOX_E_EVENT && spflt) { /* the card's verdict: the events take turns */
		fprintf(stderr, "pmuctl: --spflt needs the events on the counters for the whole run: give at most %d "
			"(and at most one L2 event)\n", KNC_NUM_COUNTERS);
		return 2;
	}
	if (rc == MBOX_OK)
		rc = call(c, MBOX_OP_PMU_CLEAR, &set, NULL, 0, &resp);
	if (rc == MBOX_OK)
		rc = call(c, MBOX_OP_PMU_START, &set, NULL, 0, &resp);
	if (rc != MBOX_OK)
		die_status(c, "start", rc);
	st.start = now_s();
	st.next_print = st.start + st.interval_ms / 1000.0;
	if (st.interval_ms)
		while_running = stat_tick;
	int status = run_program(c, &set, argc - optind, argv + optind);
	while_running = NULL;
	if ((rc = call(c, MBOX_OP_PMU_STOP, &set, NULL, 0, &resp)) != MBOX_OK)
		die_status(c, "stop", rc);
	double elapsed = now_s() - st.start;
	if (st.interval_ms) { /* the last, partial interval */
		st.next_print = 0;
		stat_tick(c, &set);
		return status;
	}
	stat_read(c, &set);
	stat_print_head(&st.fmt, argv[optind], cpus);
	stat_print_all(NULL, -1);
	stat_print_tail(&st.fmt, elapsed);
	return status;
}
