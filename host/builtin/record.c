/* pmuctl record: samples from the card's per-CPU rings into a file (host/record.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/pfm.h"
#include "host/pmuctl.h"
#include "host/progress.h"
#include "host/record.h"
#include "host/rings.h"

static FILE *rec_out;
static uint64_t rec_samples, rec_lost;

static void drain_samples(struct card *c, const struct cpuset *set)
{
	int st = samples_drain(c, set, rec_out, &rec_samples);
	if (st != 0)
		die_status(c, "record", st);
	snprintf(progress_note, sizeof(progress_note), "%llu samples", (unsigned long long)rec_samples);
}

#define FREQ_DEFAULT 4000 /* perf record's default: -F 4000 */

/* record's options, as its table stores them; the defaults perf's and ours. */
static struct {
	const char *ev, *cpus, *file;
	uint64_t period, freq;
	int callchain, threads;
} opt = { .ev = "cycles", .cpus = "1", .file = "pmuos.data" };

enum { OPT_THREADS = 256 };

const struct cli_opt record_opts[] = {
	{ "event", 'e', "EV", "the event that samples (default cycles), as stat -e; or cpu-clock[,EV[,EV]]: a sample "
			      "every period of card time, with the counts of up to 2 events", .str = &opt.ev },
	/*
	 * The card checks PERIOD's top (its PMU's max_period, its verdict in the shell's words);
	 * pmuctl only what the card cannot: 0, which the wire reads as counting,
	 * and more than the wire's 64 bits.
	 */
	{ "count", 'c', "PERIOD", "a sample every PERIOD events (cpu-clock: ns); the card takes up to its PMU's "
				  "longest period (KNC 2^40, KNL 2^31 - 1; cpu-clock: 10^4 to 10^9 ns)", 1, UINT64_MAX,
	  .uval = &opt.period },
	{ "freq", 'F', "FREQ", "about FREQ samples a second (default 4000): a fixed period of the card's TSC rate / FREQ "
			       "events (right for cycles; the card adapts no period)", 1, 100000, .uval = &opt.freq },
	{ "cpu", 'C', "CPUS", "the card CPUs the program runs on (default 1)", .str = &opt.cpus },
	{ "output", 'o', "FILE", "the recording (default pmuos.data)", .str = &opt.file },
	{ "call-graph", 'g', NULL, "each sample with its call chain: up to 16 return addresses, by frame pointers "
				   "(pmuos-cc keeps them)", .flag = &opt.callchain },
	THREADS_OPT(OPT_THREADS, &opt.threads),
	{ 0 },
};

/*
 * The card's PMI throttle (its limit of PMIs a second a thread, `pmu limit`
 * on the console) holds the counters back: events then go uncounted and
 * unsampled. Says so, with the CPUs, from the card's read.
 */
static void report_throttled(struct card *c, const struct cpuset *set, uint64_t period)
{
	char cpus[256] = "";
	size_t n = 0;

	if (call(c, MBOX_OP_PMU_READ, set, NULL, 0, &resp) != MBOX_OK)
		return;
	const struct mbox_pmu_count *r = (const struct mbox_pmu_count *)resp.payload;
	for (size_t k = 0; k < resp.len / sizeof(*r) && n < sizeof(cpus) - 12; k++)
		if (r[k].slot == 0 && (r[k].flags & MBOX_COUNT_THROTTLED))
			n += snprintf(cpus + n, sizeof(cpus) - n, "%s%u", n ? "," : "", r[k].cpu);
	if (n)
		fprintf(stderr, "[ pmuctl record: throttled on CPU %s: a sample every %llu events came faster than the "
			"card's PMI limit allows, and the counters were held back meanwhile (events neither counted nor "
			"sampled); give a larger -c or a lower -F ]\n", cpus, (unsigned long long)period);
}

/*
 * The events counted beside cpu-clock ("cpu-clock,EV,EV") on counters 0
 * and 1, counting only; each time sample carries both counters. Exits 2
 * naming what is wrong.
 */
static void counting_events(const char *ev, struct mbox_pmu_config *cfg0, struct mbox_pmu_config *cfg1)
{
	uint32_t sel[PMU_SAMPLE_COUNTERS] = { 0 };
	char name[PMU_SAMPLE_COUNTERS][64];

	if (strlen(ev) >= sizeof(((struct rec_header *)0)->event)) {
		fprintf(stderr, "pmuctl: record: -e %s: at most %zu characters\n", ev,
			sizeof(((struct rec_header *)0)->event) - 1);
		exit(2);
	}
	if (rec_cpu_clock_events(ev, sel, name) < 0) {
		fprintf(stderr, "pmuctl: record: -e %s: cpu-clock counts at most 2 events beside it (a KNC hardware "
			"thread has 2 counters, Intel 327357-001 §1.2)\n", ev);
		exit(2);
	}
	cfg0->period = 0;
	cfg0->evtsel = sel[0];
	cfg1->evtsel = sel[1];
}

int cmd_record(struct card *c, int argc, char **argv)
{
	struct cpuset set;

	while (cli_next(argc, argv) != -1) /* the table stores every option */
		;
	const char *ev = opt.ev, *cpus = opt.cpus, *file = opt.file;
	uint64_t period = opt.period, freq = opt.freq;
	uint32_t frames = opt.callchain ? PMU_CALLCHAIN_MAX : 0;
	if (optind >= argc)
		return usage_arg("no program to run: give -- PROGRAM.elf [ARGS]", NULL);
	if (period && freq) {
		fprintf(stderr, "pmuctl: record: -c PERIOD and -F FREQ: give one\n");
		return 2;
	}
	/* cpu-clock: perf's time-based sampling, its period in ns of card time (-F: 10^9 / FREQ) */
	int timed = rec_names_cpu_clock(ev);
	if (!period) {
		period = (timed ? 1000000000 : c->seen.tsc_hz ? c->seen.tsc_hz : 1000000000) / (freq ? freq : FREQ_DEFAULT);
		period = period ? period : 1;
	}
	pfm_setup(c->seen.pmu);
	parse_cpus(c, cpus, &set);
	struct mbox_pmu_config cfg0 = { .counter = 0, .period = period }, cfg1 = { .counter = 1 };
	uint64_t clock_ns = 0;
	uint32_t sel = 0;
	if (timed) {
		counting_events(ev, &cfg0, &cfg1);
		clock_ns = period;
	} else {
		cfg0.evtsel = sel = encode(ev);
	}
	uint32_t mask = 0;
	int st = call(c, MBOX_OP_PMU_CONFIG, &set, &cfg0, sizeof(cfg0), &resp);
	if (st == MBOX_OK)
		st = call(c, MBOX_OP_PMU_CONFIG, &set, &cfg1, sizeof(cfg1), &resp);
	if (st == MBOX_OK) /* always said, as the chain below */
		st = call(c, MBOX_OP_PMU_CPU_CLOCK, &set, &clock_ns, sizeof(clock_ns), &resp);
	if (st == MBOX_OK)
		st = call(c, MBOX_OP_PMU_SPFLT, &set, &mask, sizeof(mask), &resp);
	if (st == MBOX_OK) /* always said: a chain asked for by an earlier record stays otherwise */
		st = call(c, MBOX_OP_PMU_CALLCHAIN, &set, &frames, sizeof(frames), &resp);
	if (st == MBOX_OK)
		st = call(c, MBOX_OP_PMU_CLEAR, &set, NULL, 0, &resp);
	if (st != MBOX_OK)
		die_status(c, "record", st);
	/* The file, once the card took the configuration. */
	if (!(rec_out = fopen(file, "wb"))) {
		fprintf(stderr, "pmuctl: cannot write %s: %s\n", file, strerror(errno));
		return 1;
	}
	struct rec_header h = { .version = REC_VERSION, .frames = frames, .period = period,
				.tsc_hz = c->seen.tsc_hz, .evtsel = sel, .pmu = pfm_pmu_index() };
	memcpy(h.magic, REC_MAGIC, 8);
	snprintf(h.program, sizeof(h.program), "%s", argv[optind]);
	snprintf(h.event, sizeof(h.event), "%s", ev);
	if (!realpath(argv[optind], h.path))
		snprintf(h.path, sizeof(h.path), "%s", argv[optind]); /* run_program names what is wrong with it */
	h.build_id_len = rec_build_id(h.path, h.build_id);
	fwrite(&h, sizeof(h), 1, rec_out);

	uint64_t lost0 = 0;
	for (uint32_t cpu = 0; cpu < c->cpu_count; cpu++)
		if (cpuset_has(&set, cpu)) {
			c->samples[cpu].tail = c->samples[cpu].head; /* older samples are not ours */
			lost0 += c->samples[cpu].lost;
		}
	if ((st = call(c, MBOX_OP_PMU_START, &set, NULL, 0, &resp)) != MBOX_OK)
		die_status(c, "start", st);
	while_running = drain_samples;
	double t0 = now_s();
	int status = run_program(c, &set, argc - optind, argv + optind, opt.threads ? MBOX_RUN_THREADS : 0);
	call(c, MBOX_OP_PMU_STOP, &set, NULL, 0, &resp);
	launch_tids(&launch_tasks, opt.threads, h.tid); /* every thread the process made, now that it ended */
	drain_samples(c, &set);
	double wall = now_s() - t0;
	for (uint32_t cpu = 0; cpu < c->cpu_count; cpu++)
		if (cpuset_has(&set, cpu))
			rec_lost += c->samples[cpu].lost;
	h.nsamples = rec_samples;
	h.lost = rec_lost - lost0;
	fseek(rec_out, 0, SEEK_SET);
	fwrite(&h, sizeof(h), 1, rec_out);
	fclose(rec_out);
	fprintf(stderr, "[ pmuctl record: %llu samples, %llu lost, written to %s in %.3f s of wall time ]\n",
		(unsigned long long)h.nsamples, (unsigned long long)h.lost, file, wall);
	if (!timed)
		report_throttled(c, &set, period);
	return status;
}
