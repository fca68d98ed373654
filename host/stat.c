/* pmuctl stat: counting, multiplexed when there are more events than counters. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/pmuctl.h"
#include "host/progress.h"
#include "host/stat_fmt.h"
#include "pmu/regs.h"

static struct {
	int nev, counted[MAX_EVENTS];
	char *names[MAX_EVENTS];
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
		uint32_t ev = r[k].counter; /* the event's place in the list */
		if (!(r[k].flags & MBOX_COUNT_MUX) || ev >= (uint32_t)st.nev || r[k].cpu >= CPUSET_MAX)
			continue;
		st.now[ev][r[k].cpu] = (struct stat_count){ r[k].value, r[k].enabled, r[k].running };
		st.counted[ev] = !!(r[k].flags & MBOX_COUNT_COUNTED);
	}
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
	for (int e = 0; e < st.nev; e++)
		stat_print(&st.fmt, st.names[e], st.counted[e], st.set, st.now[e], st.then[e], now - st.start);
	st.last_print = now;
	while (st.next_print <= now)
		st.next_print += st.interval_ms / 1000.0;
}

int cmd_stat(struct card *c, int argc, char **argv)
{
	static const struct option longs[] = {
		{ "spflt", no_argument, NULL, 's' }, { "json", no_argument, NULL, 'j' },
		{ "mux-interval", required_argument, NULL, 'M' }, { 0 },
	};
	const char *events = NULL, *cpus = "1";
	int spflt = 0, mux_ms = 4, o;
	struct cpuset set;
	char *end;

	st.fmt.out = stdout;
	st.fmt.table = stderr;
	optind = 1;
	while ((o = getopt_long(argc, argv, "+e:C:x:I:", longs, NULL)) != -1) {
		switch (o) {
		case 'e': events = optarg; break;
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
		case 'M':
			mux_ms = strtol(optarg, &end, 10);
			if (*end || mux_ms < 1 || mux_ms > 1000) {
				fprintf(stderr, "pmuctl: --mux-interval %s: the slice is 1 to 1000 milliseconds\n", optarg);
				return 2;
			}
			break;
		default: return usage();
		}
	}
	if (!events || optind >= argc)
		return usage();
	pfm_setup();
	for (char *e = strtok(strdup(events), ","); e; e = strtok(NULL, ",")) {
		if (st.nev == MAX_EVENTS) {
			fprintf(stderr, "pmuctl: at most %d events\n", MAX_EVENTS);
			return 2;
		}
		st.names[st.nev] = e;
		st.sel[st.nev++] = encode(e);
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
	for (int e = 0; e < st.nev; e++)
		stat_print(&st.fmt, st.names[e], st.counted[e], st.set, st.now[e], NULL, -1);
	stat_print_tail(&st.fmt, elapsed);
	return status;
}
