/*
 * pmuctl: drive a pmuos card from the host through its mailbox (DESIGN §8).
 *   pmuctl [--card NAME|PATH] info
 *   pmuctl events [PATTERN]
 *   pmuctl [--card ...] stat -e EV[,EV...] [-C CPUS] [--spflt] [-I MS] [--mux-interval MS]
 *                            [-x SEP | --json] -- PROGRAM.elf [ARGS]
 *   pmuctl [--card ...] run [-C CPUS] PROGRAM.elf [ARGS]
 *   pmuctl [--card ...] record -e EV -c PERIOD [-C CPUS] [-o FILE] -- PROGRAM.elf [ARGS]
 *   pmuctl report [-i FILE] [--folded]
 *   pmuctl [--card ...] reset --warm | --init CPU
 *   pmuctl [--card ...] console
 * Event names come from libpfm4 (its knc PMU); symbols from the program's ELF
 * (elfutils libelf); CPU sets are written "1-3,8".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <perfmon/pfmlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fcntl.h>
#include <gelf.h>

#include "host/mbox.h"
#include "kernel/cpuset.h"
#include "pmu/regs.h"

#define CALL_MS 5000
#define MAX_EVENTS 8     /* more than the 2 counters: time-sliced (multiplexed) */

static const char *card_name = "card0";

/* kernel/cpuset.c and kernel/fmt.c, built for the host with k_ names (host/host.mk). */
bool k_cpuset_parse(const char *s, uint32_t ncpus, struct cpuset *out, char *err, size_t errlen);

static int usage(void)
{
	fprintf(stderr,
		"usage: pmuctl [--card NAME|PATH] COMMAND ...\n"
		"  info                                   the card: CPUs, PMU backend, exactness\n"
		"  events [PATTERN]                       KNC events (libpfm4)\n"
		"  stat -e EV[,EV...] [-C CPUS] [--spflt] [-I MS] [--mux-interval MS] [-x SEP|--json]\n"
		"       -- PROGRAM.elf [ARGS]             count events while the program runs (up to 8:\n"
		"                                         more than 2 take turns and are scaled, as perf\n"
		"                                         does); -I: the counts of every MS milliseconds\n"
		"  run [-C CPUS] PROGRAM.elf [ARGS]       upload, run, show its output, exit with its status\n"
		"  record -e EV -c PERIOD [-C CPUS] [-o FILE] -- PROGRAM.elf [ARGS]\n"
		"                                         sample every PERIOD events into FILE (pmuos.data)\n"
		"  report [-i FILE] [--folded]            hottest functions of a recording\n"
		"  ping [N]                               N info round trips: median and p99 latency\n"
		"  reset --warm | --init CPU              warm reset (PMU registers to 0) or INIT one AP (kept)\n"
		"  console                                the card's shell, a line at a time, through the mailbox\n");
	return 2;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- progress on stderr for long operations, only when it is a terminal ---- */

static int progress_shown;

/* Replaces the progress line (at most 4 times a second). */
static void __attribute__((format(printf, 1, 2))) progress(const char *fmt, ...)
{
	static double last;
	static int tty = -1;
	va_list ap;

	if (tty < 0)
		tty = isatty(2);
	if (!tty || now_s() - last < 0.25)
		return;
	last = now_s();
	fprintf(stderr, "\r\033[K");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fflush(stderr);
	progress_shown = 1;
}

/* Erases the progress line before other output. */
static void progress_clear(void)
{
	if (progress_shown)
		fprintf(stderr, "\r\033[K");
	progress_shown = 0;
}

static void die_status(const char *what, int st)
{
	progress_clear();
	fprintf(stderr, "pmuctl: %s: %s\n", what, mbox_strerror(st));
	exit(1);
}

static int call(struct card *c, uint16_t op, const struct cpuset *set, const void *p, uint32_t len,
		struct mbox_response *resp)
{
	return card_call(c, op, set ? set->bits : NULL, p, len, resp, CALL_MS);
}

static struct mbox_response resp; /* 16 KiB: not on the stack */

static int by_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* `pmuctl ping N`: N INFO round trips; prints the median and 99th percentile in microseconds. */
static int cmd_ping(struct card *c, int n)
{
	double *t = calloc(n, sizeof(*t));

	for (int i = 0; i < n; i++) {
		double t0 = now_s();
		int st = call(c, MBOX_OP_INFO, NULL, NULL, 0, &resp);
		t[i] = (now_s() - t0) * 1e6;
		if (st != MBOX_OK)
			die_status("info", st);
	}
	qsort(t, n, sizeof(*t), by_double);
	printf("info round trips: %d, median %.1f us, p99 %.1f us\n", n, t[n / 2], t[(n * 99) / 100]);
	free(t);
	return 0;
}

static int cmd_info(struct card *c)
{
	int st = call(c, MBOX_OP_INFO, NULL, NULL, 0, &resp);
	if (st != MBOX_OK)
		die_status("info", st);
	struct mbox_info *i = (struct mbox_info *)resp.payload;
	printf("card       %s\n", c->path);
	printf("kernel     pmuos %.16s\n", i->kernel_version);
	printf("cpus       %u (%u online)\n", i->cpu_count, i->cpus_online);
	printf("tsc        %.3f MHz\n", i->tsc_hz / 1e6);
	printf("backend    %.16s\n", i->backend);
	printf("exact      %s\n", i->capabilities & MBOX_CAP_EXACT ? "yes" : "no");
	printf("heartbeat  %llu\n", (unsigned long long)c->hdr->heartbeat);
	return 0;
}

/* ---- events (libpfm4) ---- */

static pfm_pmu_info_t knc;

static void pfm_setup(void)
{
	/* libpfm4 encodes only for PMUs it detects: the card's is not the host's. */
	setenv("LIBPFM_FORCE_PMU", "knc", 1);
	if (pfm_initialize() != PFM_SUCCESS) {
		fprintf(stderr, "pmuctl: libpfm4 failed to initialise\n");
		exit(1);
	}
	knc.size = sizeof(knc);
	if (pfm_get_pmu_info(PFM_PMU_INTEL_KNC, &knc) != PFM_SUCCESS) {
		fprintf(stderr, "pmuctl: this libpfm4 has no knc PMU\n");
		exit(1);
	}
}

static int cmd_events(const char *pattern)
{
	pfm_setup();
	for (int i = knc.first_event; i != -1; i = pfm_get_event_next(i)) {
		pfm_event_info_t e = { .size = sizeof(e) };
		if (pfm_get_event_info(i, PFM_OS_NONE, &e) != PFM_SUCCESS)
			continue;
		if (pattern && !strcasestr(e.name, pattern))
			continue;
		printf("%-34s 0x%04llx  %s\n", e.name, (unsigned long long)e.code, e.desc ? e.desc : "");
	}
	return 0;
}

static int distance(const char *a, const char *b)
{
	int la = strlen(a), lb = strlen(b), d[64][64];
	if (la > 63 || lb > 63)
		return 99;
	for (int i = 0; i <= la; i++)
		d[i][0] = i;
	for (int j = 0; j <= lb; j++)
		d[0][j] = j;
	for (int i = 1; i <= la; i++)
		for (int j = 1; j <= lb; j++) {
			int sub = d[i - 1][j - 1] + ((a[i - 1] | 32) != (b[j - 1] | 32));
			int del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
			d[i][j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
	return d[la][lb];
}

/* EvtSel without EN/INT for a libpfm4 event string; exits naming the closest events if unknown. */
static uint32_t encode(const char *ev)
{
	uint64_t code = 0;
	pfm_pmu_encode_arg_t arg = { .size = sizeof(arg), .codes = &code, .count = 1 };
	int r = pfm_get_os_event_encoding(ev, PFM_PLM0 | PFM_PLM3, PFM_OS_NONE, &arg);

	if (r == PFM_SUCCESS)
		return (uint32_t)code & ~(EVTSEL_EN | EVTSEL_INT);
	char name[64];
	const char *base = strncmp(ev, "knc::", 5) ? ev : ev + 5;
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(base, ":"), base);
	fprintf(stderr, "pmuctl: event '%s': %s", ev, pfm_strerror(r));
	const char *best[3] = { 0 };
	int bestd[3] = { 99, 99, 99 };
	for (int i = knc.first_event; i != -1; i = pfm_get_event_next(i)) {
		pfm_event_info_t e = { .size = sizeof(e) };
		if (pfm_get_event_info(i, PFM_OS_NONE, &e) != PFM_SUCCESS)
			continue;
		int d = distance(name, e.name);
		for (int k = 0; k < 3; k++)
			if (d < bestd[k]) {
				memmove(&best[k + 1], &best[k], (2 - k) * sizeof(best[0]));
				memmove(&bestd[k + 1], &bestd[k], (2 - k) * sizeof(bestd[0]));
				best[k] = e.name;
				bestd[k] = d;
				break;
			}
	}
	fprintf(stderr, "; closest: %s, %s, %s\n", best[0], best[1], best[2]);
	exit(1);
}

/* ---- programs ---- */

static uint8_t *read_program(const char *path, uint32_t *len)
{
	FILE *f = fopen(path, "rb");
	static uint8_t buf[MBOX_UPLOAD_SIZE + 1];

	if (!f) {
		fprintf(stderr, "pmuctl: cannot open %s: %s\n", path, strerror(errno));
		exit(1);
	}
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	if (n > MBOX_UPLOAD_SIZE) {
		fprintf(stderr, "pmuctl: %s is too large: the card takes programs up to %u bytes\n", path,
			MBOX_UPLOAD_SIZE);
		exit(1);
	}
	/* ELF64, little-endian, x86-64 executable: the card checks the rest. */
	if (n < 64 || memcmp(buf, "\177ELF", 4) || buf[4] != 2 || buf[5] != 1 || buf[16] != 2 || buf[18] != 62) {
		fprintf(stderr, "pmuctl: %s is not a pmuos program (build it with build/bin/pmuos-cc)\n", path);
		exit(1);
	}
	*len = n;
	return buf;
}

/* Exit status of a launch from STATUS, or -1 while a task still runs. */
static int launch_status(const struct mbox_response *r)
{
	const struct mbox_task *t = (const struct mbox_task *)r->payload;
	int n = r->len / sizeof(*t), status = 0;

	for (int i = 0; i < n; i++) {
		if (t[i].state == MBOX_TASK_READY || t[i].state == MBOX_TASK_RUNNING)
			return -1;
		if (t[i].state == MBOX_TASK_EXITED && t[i].exit_status && !status)
			status = t[i].exit_status & 0xff;
		if (t[i].state == MBOX_TASK_FAULTED)
			status = 128 + 11;
		if (t[i].state == MBOX_TASK_KILLED && !status)
			status = 128 + 9;
	}
	return status;
}

/* Copies console bytes [*from, head) to `out`. */
static void drain_console(struct card *c, uint64_t *from, FILE *out)
{
	uint64_t head = __atomic_load_n(&c->hdr->console_head, __ATOMIC_ACQUIRE);
	const uint8_t *ring = c->base + c->hdr->console_off;

	if (head - *from > MBOX_CONSOLE_SIZE)
		*from = head - MBOX_CONSOLE_SIZE;
	for (; *from < head; (*from)++)
		if (ring[*from % MBOX_CONSOLE_SIZE] != '\r')
			putc(ring[*from % MBOX_CONSOLE_SIZE], out);
	fflush(out);
}

/* ---- program output: each task's ring, whole lines, "[rank N] " first when there are several ---- */

static struct task_out {
	uint32_t task, ring, rank, nranks;
	uint64_t pos;     /* bytes of the ring consumed */
	char line[512];
	size_t len;
	int gone;         /* the ring went to another task before we read it all */
} outs[MBOX_CPUSET_WORDS * 64];
static int nouts;

static void out_flush(struct task_out *o)
{
	if (!o->len)
		return;
	progress_clear();
	if (o->nranks > 1)
		printf("[rank %u] ", o->rank);
	fwrite(o->line, 1, o->len, stdout);
	o->len = 0;
}

static void out_drain(struct card *c, struct task_out *o)
{
	const struct mbox_output_ring *r = (const struct mbox_output_ring *)(c->base + c->hdr->output_off) + o->ring;
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);

	if (o->gone || __atomic_load_n(&r->task, __ATOMIC_ACQUIRE) != o->task) {
		if (!o->gone)
			fprintf(stderr, "pmuctl: rank %u's output ring went to a newer task; its output is lost\n", o->rank);
		o->gone = 1;
		return;
	}
	if (head - o->pos > MBOX_OUTPUT_SIZE) {
		fprintf(stderr, "pmuctl: rank %u: %llu bytes of output lost (written faster than read)\n", o->rank,
			(unsigned long long)(head - o->pos - MBOX_OUTPUT_SIZE));
		o->pos = head - MBOX_OUTPUT_SIZE;
	}
	for (; o->pos < head; o->pos++) {
		char ch = r->data[o->pos % MBOX_OUTPUT_SIZE];
		o->line[o->len++] = ch;
		if (ch == '\n' || o->len == sizeof(o->line))
			out_flush(o);
	}
}

/* Shows what the tasks of a STATUS answer wrote since last time; `last`: also unfinished lines. */
static void drain_output(struct card *c, const struct mbox_response *r, int last)
{
	const struct mbox_task *t = (const struct mbox_task *)r->payload;

	for (size_t i = 0; i < r->len / sizeof(*t); i++) {
		if (t[i].output_ring >= MBOX_OUTPUT_RINGS)
			continue;
		int k = 0;
		while (k < nouts && outs[k].task != t[i].id)
			k++;
		if (k == nouts) {
			if (nouts == (int)(sizeof(outs) / sizeof(outs[0])))
				continue;
			outs[nouts++] = (struct task_out){ .task = t[i].id, .ring = t[i].output_ring, .rank = t[i].rank,
							   .nranks = r->len / sizeof(*t) };
		}
		out_drain(c, &outs[k]);
		if (last)
			out_flush(&outs[k]);
	}
	fflush(stdout);
}

/* A signal that should end the program on the card (Ctrl-C, a closed pipe, kill): */
static volatile sig_atomic_t stop_signal;
static void on_stop_signal(int sig) { stop_signal = sig; }

/* What the command adds to the progress line (record: samples so far). */
static char progress_note[64];

/* Called while a program runs, and once after it ended (record drains samples here). */
static void (*while_running)(struct card *c, const struct cpuset *set);

/* Uploads and runs the program on `set`, showing the console meanwhile; returns its exit status. */
static int run_program(struct card *c, const struct cpuset *set, int argc, char **argv)
{
	uint32_t len;
	uint8_t *img = read_program(argv[0], &len);
	struct mbox_run run = { .image_len = len };
	size_t off = 0;

	for (int i = 0; i < argc; i++) {
		const char *a = i == 0 ? (strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0]) : argv[i];
		size_t n = strlen(a) + 1;
		if (argc > 16 || off + n > sizeof(run.args)) {
			fprintf(stderr, "pmuctl: too many or too long arguments (16 and %zu bytes at most)\n",
				sizeof(run.args));
			exit(2);
		}
		memcpy(run.args + off, a, n);
		off += n;
	}
	run.argc = argc;
	uint64_t from = c->hdr->console_head;
	card_hold(c);
	memcpy(c->base + c->hdr->upload_off, img, len);
	int st = call(c, MBOX_OP_RUN, set, &run, sizeof(run), &resp);
	card_release(c);
	if (st != MBOX_OK) {
		drain_console(c, &from, stderr); /* the card's reason */
		die_status("run", st);
	}
	uint32_t launch;
	memcpy(&launch, resp.payload, sizeof(launch));
	/* The program must not outlive us: a signal ends it on the card (and stat still prints). */
	static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
	struct sigaction sa = { .sa_handler = on_stop_signal };
	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
		sigaction(stop_signals[i], &sa, NULL);
	int status, killed = 0;
	double t0 = now_s();
	for (;;) {
		if (while_running)
			while_running(c, set);
		if (stop_signal && !killed) {
			fprintf(stderr, "pmuctl: %s: ending the program on the card\n", strsignal(stop_signal));
			if ((st = call(c, MBOX_OP_KILL, NULL, &launch, sizeof(launch), &resp)) != MBOX_OK)
				die_status("kill", st);
			killed = 1;
		}
		st = call(c, MBOX_OP_STATUS, NULL, &launch, sizeof(launch), &resp);
		if (st != MBOX_OK)
			die_status("status", st);
		status = launch_status(&resp);
		drain_output(c, &resp, status >= 0);
		if (status >= 0)
			break;
		progress("pmuctl: %s on %d CPU(s): %.1f s%s%s", run.args, (int)(resp.len / sizeof(struct mbox_task)),
			 now_s() - t0, progress_note[0] ? ", " : "", progress_note);
		usleep(20000);
	}
	if (while_running)
		while_running(c, set);
	progress_clear();
	return stop_signal ? 128 + stop_signal : status;
}

static void parse_cpus(struct card *c, const char *s, struct cpuset *set)
{
	char err[96];

	if (!k_cpuset_parse(s, c->hdr->cpu_count, set, err, sizeof(err))) {
		fprintf(stderr, "pmuctl: -C %s: %s\n", s, err);
		exit(2);
	}
}

static int cmd_run(struct card *c, int argc, char **argv)
{
	struct cpuset set;
	const char *cpus = "1";
	int o;

	optind = 1;
	while ((o = getopt(argc, argv, "+C:")) != -1) {
		if (o != 'C')
			return usage();
		cpus = optarg;
	}
	if (optind >= argc)
		return usage();
	parse_cpus(c, cpus, &set);
	return run_program(c, &set, argc - optind, argv + optind);
}

static void group_digits(uint64_t v, char *out)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v), j = 0;

	for (int i = 0; i < n; i++) {
		out[j++] = tmp[i];
		if ((n - i - 1) % 3 == 0 && i != n - 1)
			out[j++] = ',';
	}
	out[j] = 0;
}

/* ---- stat: counting, multiplexed when there are more events than counters ---- */

struct count {
	uint64_t value, enabled, running; /* events; TSC ticks */
};

static struct {
	int nev, mux, counted[MAX_EVENTS];
	char *names[MAX_EVENTS];
	uint32_t sel[MAX_EVENTS];
	int on[KNC_NUM_COUNTERS];          /* without multiplexing: the event on counter i, -1: none */
	struct count now[MAX_EVENTS][MBOX_CPUSET_WORDS * 64], then[MAX_EVENTS][MBOX_CPUSET_WORDS * 64];
	uint64_t tsc_hz;
	const struct cpuset *set;
	const char *sep, *cpus;
	int json, interval_ms;
	double start, next_print, last_print;
} st;

/* Puts the events on the counters, or has the card multiplex them (more than 2, or two L2 events). */
static void stat_configure(struct card *c, const struct cpuset *set, int mux_ms)
{
	st.on[0] = 0;
	st.on[1] = st.nev > 1 ? 1 : -1;
	if (st.nev == 2 && knc_event_counter0_only(EVTSEL_CODE(st.sel[1]))) {
		st.on[0] = 1; /* an L2 event counts only on counter 0 (DESIGN §5.1) */
		st.on[1] = 0;
	}
	st.mux = st.nev > KNC_NUM_COUNTERS || (st.on[1] >= 0 && knc_event_counter0_only(EVTSEL_CODE(st.sel[st.on[1]])));
	int rc;
	if (st.mux) {
		struct mbox_pmu_mux m = { .nev = st.nev, .slice_us = mux_ms * 1000 };
		memcpy(m.evtsel, st.sel, st.nev * sizeof(st.sel[0]));
		if ((rc = call(c, MBOX_OP_PMU_MUX, set, &m, sizeof(m), &resp)) != MBOX_OK)
			die_status("configure", rc);
		return;
	}
	for (int i = 0; i < KNC_NUM_COUNTERS; i++) {
		struct mbox_pmu_config cfg = { .counter = i, .evtsel = st.on[i] >= 0 ? st.sel[st.on[i]] : 0 };
		if ((rc = call(c, MBOX_OP_PMU_CONFIG, set, &cfg, sizeof(cfg), &resp)) != MBOX_OK)
			die_status("configure", rc);
	}
}

/* Reads every CPU's counts into st.now. */
static void stat_read(struct card *c, const struct cpuset *set)
{
	int rc = call(c, MBOX_OP_PMU_READ, set, NULL, 0, &resp);
	if (rc != MBOX_OK)
		die_status("read", rc);
	const struct mbox_pmu_count *r = (const struct mbox_pmu_count *)resp.payload;
	for (size_t k = 0; k < resp.len / sizeof(*r); k++) {
		int ev = r[k].flags & MBOX_COUNT_MUX ? (int)r[k].counter : st.on[r[k].counter & 1];
		if (ev < 0 || ev >= st.nev || r[k].cpu >= MBOX_CPUSET_WORDS * 64)
			continue;
		st.now[ev][r[k].cpu] = (struct count){ r[k].value, r[k].enabled, r[k].running };
		st.counted[ev] = !!(r[k].flags & MBOX_COUNT_COUNTED);
	}
}

/*
 * Prints event e's counts since `then` (all of them if NULL), summed over
 * the CPUs and scaled as perf does: value * enabled / running, with the
 * running percentage. `t` >= 0 starts each line with the interval's time.
 */
static void stat_print(int e, struct count (*then)[MBOX_CPUSET_WORDS * 64], double t)
{
	struct count sum = { 0 };
	char ts[32] = "", json_t[48] = "";

	if (t >= 0) {
		snprintf(ts, sizeof(ts), st.sep ? "%.9f%s" : "%16.9f ", t, st.sep ? st.sep : "");
		snprintf(json_t, sizeof(json_t), "\"interval\" : %.9f, ", t);
	}
	for (uint32_t cpu = 0; cpu < MBOX_CPUSET_WORDS * 64; cpu++) {
		if (!(st.set->bits[cpu / 64] >> (cpu % 64) & 1))
			continue;
		struct count d = st.now[e][cpu];
		if (then) {
			d.value -= then[e][cpu].value;
			d.enabled -= then[e][cpu].enabled;
			d.running -= then[e][cpu].running;
		}
		sum.value += d.value;
		sum.enabled += d.enabled;
		sum.running += d.running;
		if (!st.json)
			continue;
		char val[40];
		double scaled = d.running ? (double)d.value * d.enabled / d.running : 0;
		if (!st.counted[e])
			snprintf(val, sizeof(val), "<not supported>");
		else if (!d.running)
			snprintf(val, sizeof(val), "<not counted>");
		else
			snprintf(val, sizeof(val), "%.6f", scaled);
		printf("{%s\"cpu\" : \"%u\", \"counter-value\" : \"%s\", \"unit\" : \"\", \"event\" : \"%s\", "
		       "\"event-runtime\" : %.0f, \"pcnt-running\" : %.2f}\n", json_t, cpu, val, st.names[e],
		       d.running * 1e9 / st.tsc_hz, d.enabled ? 100.0 * d.running / d.enabled : 100.0);
	}
	if (st.json)
		return;
	double pcnt = sum.enabled ? 100.0 * sum.running / sum.enabled : 100.0;
	uint64_t v = sum.running ? (uint64_t)((double)sum.value * sum.enabled / sum.running + 0.5) : 0;
	const char *none = !st.counted[e] ? "<not supported>" : !sum.running ? "<not counted>" : NULL;
	char val[40];
	if (st.sep) { /* perf's -x layout: [time,] value, unit, event, run time, running percentage */
		snprintf(val, sizeof(val), "%llu", (unsigned long long)v);
		printf("%s%s%s%s%s%s%.0f%s%.2f\n", ts, none ? none : val, st.sep, st.sep, st.names[e], st.sep,
		       sum.running * 1e9 / st.tsc_hz, st.sep, pcnt);
		return;
	}
	if (none)
		snprintf(val, sizeof(val), "%s", none);
	else
		group_digits(v, val);
	if (!none && pcnt < 99.995)
		fprintf(stderr, "%s%20s      %-32s (%.2f%%)\n", ts, val, st.names[e], pcnt);
	else
		fprintf(stderr, "%s%20s      %s\n", ts, val, st.names[e]);
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
	if (!st.json && !st.sep && st.last_print == 0)
		fprintf(stderr, "#           time             counts unit events\n");
	for (int e = 0; e < st.nev; e++)
		stat_print(e, st.then, now - st.start);
	st.last_print = now;
	while (st.next_print <= now)
		st.next_print += st.interval_ms / 1000.0;
}

static int cmd_stat(struct card *c, int argc, char **argv)
{
	static const struct option longs[] = {
		{ "spflt", no_argument, NULL, 's' }, { "json", no_argument, NULL, 'j' },
		{ "mux-interval", required_argument, NULL, 'M' }, { 0 },
	};
	const char *events = NULL, *cpus = "1";
	int spflt = 0, mux_ms = 4, o;
	struct cpuset set;
	char *end;

	optind = 1;
	while ((o = getopt_long(argc, argv, "+e:C:x:I:", longs, NULL)) != -1) {
		switch (o) {
		case 'e': events = optarg; break;
		case 'C': cpus = optarg; break;
		case 'x': st.sep = optarg; break;
		case 's': spflt = 1; break;
		case 'j': st.json = 1; break;
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
	st.tsc_hz = c->hdr->tsc_hz ? c->hdr->tsc_hz : 1000000000;
	stat_configure(c, &set, mux_ms);
	if (spflt && st.mux) {
		fprintf(stderr, "pmuctl: --spflt needs the events on the counters for the whole run: give at most %d "
			"(and at most one L2 event)\n", KNC_NUM_COUNTERS);
		return 2;
	}
	uint32_t mask = 0;
	for (int i = 0; spflt && i < KNC_NUM_COUNTERS; i++)
		if (st.on[i] >= 0)
			mask |= 1u << i;
	int rc = call(c, MBOX_OP_PMU_SPFLT, &set, &mask, sizeof(mask), &resp);
	if (rc == MBOX_OK)
		rc = call(c, MBOX_OP_PMU_CLEAR, &set, NULL, 0, &resp);
	if (rc == MBOX_OK)
		rc = call(c, MBOX_OP_PMU_START, &set, NULL, 0, &resp);
	if (rc != MBOX_OK)
		die_status("start", rc);
	st.start = now_s();
	st.next_print = st.start + st.interval_ms / 1000.0;
	if (st.interval_ms)
		while_running = stat_tick;
	int status = run_program(c, &set, argc - optind, argv + optind);
	while_running = NULL;
	if ((rc = call(c, MBOX_OP_PMU_STOP, &set, NULL, 0, &resp)) != MBOX_OK)
		die_status("stop", rc);
	double elapsed = now_s() - st.start;
	if (st.interval_ms) { /* the last, partial interval */
		st.next_print = 0;
		stat_tick(c, &set);
		return status;
	}
	stat_read(c, &set);
	if (!st.json && !st.sep)
		fprintf(stderr, "\n Performance counter stats for '%s' (CPUs %s):\n\n", argv[optind], cpus);
	for (int e = 0; e < st.nev; e++)
		stat_print(e, NULL, -1);
	if (!st.json && !st.sep)
		fprintf(stderr, "\n%16.9f seconds time elapsed\n\n", elapsed);
	return status;
}

/* ---- reset, console ---- */

static int cmd_reset(struct card *c, int argc, char **argv)
{
	uint64_t from = c->hdr->console_head;

	if (argc == 2 && strcmp(argv[1], "--warm") == 0) {
		uint64_t beat = c->hdr->heartbeat;
		int st = call(c, MBOX_OP_RESET_WARM, NULL, NULL, 0, &resp);
		if (st != MBOX_OK)
			die_status("reset", st);
		/* The card boots again and lays the mailbox out anew: heartbeat from 0, then READY. */
		double end = now_s() + 120;
		while (!(c->hdr->magic == MBOX_MAGIC && c->hdr->state == MBOX_READY && c->hdr->heartbeat < beat)) {
			if (now_s() > end) {
				progress_clear();
				fprintf(stderr, "pmuctl: the card did not come back within 120 s of the reset\n");
				return 1;
			}
			progress("pmuctl: waiting for the card to boot again: %.0f s", now_s() + 120 - end);
			usleep(10000);
		}
		progress_clear();
		printf("card %s: warm reset done, READY again\n", c->path);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "--init") == 0) {
		char *end;
		unsigned long cpu = strtoul(argv[2], &end, 0);
		if (*end || cpu >= c->hdr->cpu_count) {
			fprintf(stderr, "pmuctl: --init %s: not a CPU of this card (0-%u)\n", argv[2],
				c->hdr->cpu_count - 1);
			return 2;
		}
		uint32_t v = cpu;
		int st = card_call(c, MBOX_OP_CPU_INIT, NULL, &v, sizeof(v), &resp, 10000);
		drain_console(c, &from, stdout);
		if (st != MBOX_OK)
			die_status(cpu == 0 ? "reset --init 0 (the BSP runs the card; INIT reaches APs)" : "reset --init", st);
		return 0;
	}
	return usage();
}

static int cmd_console(struct card *c)
{
	char line[256];
	int tty = isatty(0);

	for (;;) {
		if (tty) {
			printf("pmuos(%s)> ", card_name);
			fflush(stdout);
		}
		if (!fgets(line, sizeof(line), stdin))
			return 0;
		line[strcspn(line, "\r\n")] = 0;
		if (!line[0])
			continue;
		uint64_t from = c->hdr->console_head;
		int st = call(c, MBOX_OP_SHELL, NULL, line, strlen(line) + 1, &resp);
		if (st == MBOX_E_AGAIN) {
			fprintf(stderr, "pmuctl: %s\n", mbox_strerror(st));
			continue;
		}
		if (st != MBOX_OK)
			die_status("console", st);
		/*
		 * The card runs the line on CPU 0 and says when it has finished
		 * (header.shell_done); Ctrl-C meanwhile interrupts it there.
		 */
		uint32_t seq = resp.seq;
		struct sigaction sa = { .sa_handler = on_stop_signal }, old;
		sigaction(SIGINT, &sa, &old);
		while (__atomic_load_n(&c->hdr->shell_done, __ATOMIC_ACQUIRE) != seq) {
			drain_console(c, &from, stdout);
			if (stop_signal == SIGINT) {
				stop_signal = 0;
				if ((st = call(c, MBOX_OP_SHELL_INTR, NULL, NULL, 0, &resp)) != MBOX_OK)
					die_status("console: Ctrl-C", st);
			}
			usleep(1000);
		}
		sigaction(SIGINT, &old, NULL);
		drain_console(c, &from, stdout);
	}
}

/* ---- record / report ---- */

#define REC_MAGIC "PMUOSREC"

struct rec_header {
	char magic[8];
	uint32_t version, reserved;
	uint64_t nsamples, lost, period;
	char program[256], event[64];
};

static FILE *rec_out;
static uint64_t rec_samples, rec_lost;

static struct mbox_sample_ring *ring_of(struct card *c, uint32_t cpu)
{
	return (struct mbox_sample_ring *)(c->base + c->hdr->samples_off) + cpu;
}

static void drain_samples(struct card *c, const struct cpuset *set)
{
	for (uint32_t cpu = 0; cpu < c->hdr->cpu_count; cpu++) {
		if (!(set->bits[cpu / 64] >> (cpu % 64) & 1))
			continue;
		struct mbox_sample_ring *r = ring_of(c, cpu);
		uint32_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
		for (uint32_t t = r->tail; t != head; t++) {
			fwrite(&r->slot[t % MBOX_SAMPLE_SLOTS], sizeof(struct pmu_sample), 1, rec_out);
			rec_samples++;
		}
		__atomic_store_n(&r->tail, head, __ATOMIC_RELEASE);
	}
	snprintf(progress_note, sizeof(progress_note), "%llu samples", (unsigned long long)rec_samples);
}

static int cmd_record(struct card *c, int argc, char **argv)
{
	const char *ev = NULL, *cpus = "1", *file = "pmuos.data";
	uint64_t period = 0;
	struct cpuset set;
	int o;

	optind = 1;
	while ((o = getopt(argc, argv, "+e:c:C:o:")) != -1) {
		switch (o) {
		case 'e': ev = optarg; break;
		case 'c': period = strtoull(optarg, NULL, 0); break;
		case 'C': cpus = optarg; break;
		case 'o': file = optarg; break;
		default: return usage();
		}
	}
	if (!ev || optind >= argc)
		return usage();
	if (period == 0 || period > (1ULL << KNC_CTR_BITS)) {
		fprintf(stderr, "pmuctl: -c PERIOD must be 1 to 2^40 events\n");
		return 2;
	}
	pfm_setup();
	uint32_t sel = encode(ev);
	parse_cpus(c, cpus, &set);
	if (!(rec_out = fopen(file, "wb"))) {
		fprintf(stderr, "pmuctl: cannot write %s: %s\n", file, strerror(errno));
		return 1;
	}
	struct rec_header h = { .version = 1, .period = period };
	memcpy(h.magic, REC_MAGIC, 8);
	snprintf(h.program, sizeof(h.program), "%s", argv[optind]);
	snprintf(h.event, sizeof(h.event), "%s", ev);
	fwrite(&h, sizeof(h), 1, rec_out);

	struct mbox_pmu_config cfg0 = { .counter = 0, .evtsel = sel, .period = period }, cfg1 = { .counter = 1 };
	uint32_t mask = 0;
	int st = call(c, MBOX_OP_PMU_CONFIG, &set, &cfg0, sizeof(cfg0), &resp);
	if (st == MBOX_OK)
		st = call(c, MBOX_OP_PMU_CONFIG, &set, &cfg1, sizeof(cfg1), &resp);
	if (st == MBOX_OK)
		st = call(c, MBOX_OP_PMU_SPFLT, &set, &mask, sizeof(mask), &resp);
	if (st == MBOX_OK)
		st = call(c, MBOX_OP_PMU_CLEAR, &set, NULL, 0, &resp);
	if (st != MBOX_OK)
		die_status("record", st);
	uint64_t lost0 = 0;
	for (uint32_t cpu = 0; cpu < c->hdr->cpu_count; cpu++)
		if (set.bits[cpu / 64] >> (cpu % 64) & 1) {
			ring_of(c, cpu)->tail = ring_of(c, cpu)->head; /* older samples are not ours */
			lost0 += ring_of(c, cpu)->lost;
		}
	if ((st = call(c, MBOX_OP_PMU_START, &set, NULL, 0, &resp)) != MBOX_OK)
		die_status("start", st);
	while_running = drain_samples;
	double t0 = now_s();
	int status = run_program(c, &set, argc - optind, argv + optind);
	call(c, MBOX_OP_PMU_STOP, &set, NULL, 0, &resp);
	drain_samples(c, &set);
	double wall = now_s() - t0;
	for (uint32_t cpu = 0; cpu < c->hdr->cpu_count; cpu++)
		if (set.bits[cpu / 64] >> (cpu % 64) & 1)
			rec_lost += ring_of(c, cpu)->lost;
	h.nsamples = rec_samples;
	h.lost = rec_lost - lost0;
	fseek(rec_out, 0, SEEK_SET);
	fwrite(&h, sizeof(h), 1, rec_out);
	fclose(rec_out);
	fprintf(stderr, "[ pmuctl record: %llu samples, %llu lost, written to %s in %.3f s of wall time ]\n",
		(unsigned long long)h.nsamples, (unsigned long long)h.lost, file, wall);
	return status;
}

struct sym {
	uint64_t start, end;
	char *name;
};

static int by_start(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* The program's function symbols (elfutils libelf), sorted by address. */
static struct sym *load_symbols(const char *path, size_t *n)
{
	struct sym *syms = NULL;
	size_t cap = 0;
	int fd = open(path, O_RDONLY);

	*n = 0;
	elf_version(EV_CURRENT);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	for (Elf_Scn *scn = NULL; e && (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			if (!gelf_getsym(d, i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC || !s.st_size)
				continue;
			if (*n == cap)
				syms = realloc(syms, (cap = cap ? 2 * cap : 256) * sizeof(*syms));
			syms[(*n)++] = (struct sym){ s.st_value, s.st_value + s.st_size,
						     strdup(elf_strptr(e, sh.sh_link, s.st_name)) };
		}
	}
	if (!e)
		fprintf(stderr, "pmuctl: no symbols from %s: %s\n", path, fd < 0 ? strerror(errno) : elf_errmsg(-1));
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	qsort(syms, *n, sizeof(*syms), by_start);
	return syms;
}

static const char *symbolize(const struct sym *syms, size_t n, const struct pmu_sample *s)
{
	if (s->cpl == 0)
		return "[kernel]";
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s->rip < syms[mid].start)
			hi = mid;
		else if (s->rip >= syms[mid].end)
			lo = mid + 1;
		else
			return syms[mid].name;
	}
	return "[unknown]";
}

struct hit {
	const char *name;
	uint64_t count;
};

static int by_count(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;
	return x->count < y->count ? 1 : x->count > y->count ? -1 : strcmp(x->name, y->name);
}

static int cmd_report(int argc, char **argv)
{
	static const struct option longs[] = { { "folded", no_argument, NULL, 'f' }, { 0 } };
	const char *file = "pmuos.data";
	int folded = 0, o;

	optind = 1;
	while ((o = getopt_long(argc, argv, "i:", longs, NULL)) != -1) {
		if (o == 'i')
			file = optarg;
		else if (o == 'f')
			folded = 1;
		else
			return usage();
	}
	FILE *f = fopen(file, "rb");
	struct rec_header h;
	if (!f || fread(&h, sizeof(h), 1, f) != 1 || memcmp(h.magic, REC_MAGIC, 8) || h.version != 1) {
		fprintf(stderr, "pmuctl: %s is not a pmuctl recording\n", file);
		return 1;
	}
	h.program[sizeof(h.program) - 1] = h.event[sizeof(h.event) - 1] = 0;
	size_t nsyms;
	struct sym *syms = load_symbols(h.program, &nsyms);
	struct hit *hits = NULL;
	size_t nhits = 0;
	uint64_t total = 0;
	struct pmu_sample s;
	while (fread(&s, sizeof(s), 1, f) == 1) {
		const char *name = symbolize(syms, nsyms, &s);
		size_t i = 0;
		while (i < nhits && strcmp(hits[i].name, name))
			i++;
		if (i == nhits) {
			hits = realloc(hits, ++nhits * sizeof(*hits));
			hits[i] = (struct hit){ name, 0 };
		}
		hits[i].count++;
		total++;
	}
	fclose(f);
	qsort(hits, nhits, sizeof(*hits), by_count);
	const char *prog = strrchr(h.program, '/') ? strrchr(h.program, '/') + 1 : h.program;
	if (!folded)
		printf("# %llu samples of %s every %llu events, %llu lost; program %s\n# Overhead  Symbol\n",
		       (unsigned long long)total, h.event, (unsigned long long)h.period,
		       (unsigned long long)h.lost, h.program);
	for (size_t i = 0; i < nhits; i++) {
		if (folded) /* one frame per sample: flame-graph tools take "stack count" lines */
			printf("%s;%s %llu\n", prog, hits[i].name, (unsigned long long)hits[i].count);
		else
			printf("%9.2f%%  %s\n", 100.0 * hits[i].count / total, hits[i].name);
	}
	return total ? 0 : 1;
}

int main(int argc, char **argv)
{
	int i = 1;

	if (i + 1 < argc && strcmp(argv[i], "--card") == 0) {
		card_name = argv[i + 1];
		i += 2;
	}
	if (i >= argc)
		return usage();
	const char *cmd = argv[i];
	if (strcmp(cmd, "events") == 0)
		return cmd_events(i + 1 < argc ? argv[i + 1] : NULL);
	if (strcmp(cmd, "report") == 0)
		return cmd_report(argc - i, argv + i);
	if (strcmp(cmd, "info") && strcmp(cmd, "stat") && strcmp(cmd, "run") && strcmp(cmd, "record") &&
	    strcmp(cmd, "ping") && strcmp(cmd, "reset") && strcmp(cmd, "console")) {
		fprintf(stderr, "pmuctl: unknown command '%s'\n", cmd);
		return usage();
	}
	struct card c;
	if (card_open(&c, card_name) != 0)
		return 1;
	int r = !strcmp(cmd, "info")   ? cmd_info(&c)
		: !strcmp(cmd, "ping")   ? cmd_ping(&c, i + 1 < argc ? atoi(argv[i + 1]) > 0 ? atoi(argv[i + 1]) : 100 : 100)
		: !strcmp(cmd, "stat")   ? cmd_stat(&c, argc - i, argv + i)
		: !strcmp(cmd, "record") ? cmd_record(&c, argc - i, argv + i)
		: !strcmp(cmd, "reset")  ? cmd_reset(&c, argc - i, argv + i)
		: !strcmp(cmd, "console") ? cmd_console(&c)
					 : cmd_run(&c, argc - i, argv + i);
	card_close(&c);
	return r;
}
