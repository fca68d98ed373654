/*
 * pmuctl: drive a pmuos card from the host through its mailbox (DESIGN §8).
 *   pmuctl [--card NAME|PATH] info
 *   pmuctl events [PATTERN]
 *   pmuctl [--card ...] stat -e EV[,EV] [-C CPUS] [--spflt] [-x SEP | --json] -- PROGRAM.elf [ARGS]
 *   pmuctl [--card ...] run [-C CPUS] PROGRAM.elf [ARGS]
 * Event names come from libpfm4 (its knc PMU); CPU sets are written "1-3,8".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <perfmon/pfmlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host/mbox.h"
#include "kernel/cpuset.h"
#include "pmu/regs.h"

#define CALL_MS 5000
#define MAX_EVENTS 2

static const char *card_name = "card0";

/* kernel/cpuset.c and kernel/fmt.c, built for the host with k_ names (host/host.mk). */
bool k_cpuset_parse(const char *s, uint32_t ncpus, struct cpuset *out, char *err, size_t errlen);

static int usage(void)
{
	fprintf(stderr,
		"usage: pmuctl [--card NAME|PATH] COMMAND ...\n"
		"  info                                   the card: CPUs, PMU backend, exactness\n"
		"  events [PATTERN]                       KNC events (libpfm4)\n"
		"  stat -e EV[,EV] [-C CPUS] [--spflt] [-x SEP|--json] -- PROGRAM.elf [ARGS]\n"
		"                                         count events while the program runs\n"
		"  run [-C CPUS] PROGRAM.elf [ARGS]       upload, run, show its output, exit with its status\n");
	return 2;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die_status(const char *what, int st)
{
	fprintf(stderr, "pmuctl: %s: %s\n", what, mbox_strerror(st));
	exit(1);
}

static int call(struct card *c, uint16_t op, const struct cpuset *set, const void *p, uint32_t len,
		struct mbox_response *resp)
{
	return card_call(c, op, set ? set->bits : NULL, p, len, resp, CALL_MS);
}

static struct mbox_response resp; /* 16 KiB: not on the stack */

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

static int all_ended(const struct mbox_response *r, int *status)
{
	const struct mbox_task *t = (const struct mbox_task *)r->payload;
	int n = r->len / sizeof(*t);

	*status = 0;
	for (int i = 0; i < n; i++) {
		if (t[i].state == MBOX_TASK_READY || t[i].state == MBOX_TASK_RUNNING)
			return 0;
		if (t[i].state == MBOX_TASK_EXITED && t[i].exit_status && !*status)
			*status = t[i].exit_status & 0xff;
		if (t[i].state == MBOX_TASK_FAULTED)
			*status = 128 + 11;
		if (t[i].state == MBOX_TASK_KILLED && !*status)
			*status = 128 + 9;
	}
	return 1;
}

/* Copies console bytes [*from, head) to stdout. */
static void drain_console(struct card *c, uint64_t *from)
{
	uint64_t head = __atomic_load_n(&c->hdr->console_head, __ATOMIC_ACQUIRE);
	const uint8_t *ring = c->base + c->hdr->console_off;

	if (head - *from > MBOX_CONSOLE_SIZE)
		*from = head - MBOX_CONSOLE_SIZE;
	for (; *from < head; (*from)++)
		if (ring[*from % MBOX_CONSOLE_SIZE] != '\r')
			putchar(ring[*from % MBOX_CONSOLE_SIZE]);
	fflush(stdout);
}

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
		drain_console(c, &from);
		die_status("run", st);
	}
	uint32_t launch;
	memcpy(&launch, resp.payload, sizeof(launch));
	int status;
	for (;;) {
		drain_console(c, &from);
		st = call(c, MBOX_OP_STATUS, NULL, &launch, sizeof(launch), &resp);
		if (st != MBOX_OK)
			die_status("status", st);
		if (all_ended(&resp, &status))
			break;
		usleep(20000);
	}
	drain_console(c, &from);
	return status;
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

static int cmd_stat(struct card *c, int argc, char **argv)
{
	static const struct option longs[] = {
		{ "spflt", no_argument, NULL, 's' }, { "json", no_argument, NULL, 'j' }, { 0 },
	};
	const char *events = NULL, *cpus = "1", *sep = NULL;
	int spflt = 0, json = 0, o;
	char *names[MAX_EVENTS];
	uint32_t sel[MAX_EVENTS];
	int nev = 0;
	struct cpuset set;

	optind = 1;
	while ((o = getopt_long(argc, argv, "+e:C:x:", longs, NULL)) != -1) {
		switch (o) {
		case 'e': events = optarg; break;
		case 'C': cpus = optarg; break;
		case 'x': sep = optarg; break;
		case 's': spflt = 1; break;
		case 'j': json = 1; break;
		default: return usage();
		}
	}
	if (!events || optind >= argc)
		return usage();
	pfm_setup();
	for (char *e = strtok(strdup(events), ","); e; e = strtok(NULL, ",")) {
		if (nev == MAX_EVENTS) {
			fprintf(stderr, "pmuctl: more than %d events need multiplexing, which this pmuctl "
					"does not do yet\n", MAX_EVENTS);
			return 2;
		}
		names[nev] = e;
		sel[nev++] = encode(e);
	}
	parse_cpus(c, cpus, &set);
	for (int i = 0; i < KNC_NUM_COUNTERS; i++) {
		struct mbox_pmu_config cfg = { .counter = i, .evtsel = i < nev ? sel[i] : 0 };
		int st = call(c, MBOX_OP_PMU_CONFIG, &set, &cfg, sizeof(cfg), &resp);
		if (st == MBOX_E_EVENT && i < nev) {
			fprintf(stderr, "pmuctl: %s cannot count on counter %d (L2 events count only on "
					"counter 0: list it first)\n", names[i], i);
			return 1;
		}
		if (st != MBOX_OK)
			die_status("configure", st);
	}
	uint32_t mask = spflt ? (1u << nev) - 1 : 0;
	int st = call(c, MBOX_OP_PMU_SPFLT, &set, &mask, sizeof(mask), &resp);
	if (st == MBOX_OK)
		st = call(c, MBOX_OP_PMU_CLEAR, &set, NULL, 0, &resp);
	if (st == MBOX_OK)
		st = call(c, MBOX_OP_PMU_START, &set, NULL, 0, &resp);
	if (st != MBOX_OK)
		die_status("start", st);
	double t0 = now_s();
	int status = run_program(c, &set, argc - optind, argv + optind);
	double elapsed = now_s() - t0;
	if ((st = call(c, MBOX_OP_PMU_STOP, &set, NULL, 0, &resp)) != MBOX_OK ||
	    (st = call(c, MBOX_OP_PMU_READ, &set, NULL, 0, &resp)) != MBOX_OK)
		die_status("read", st);

	const struct mbox_pmu_count *r = (const struct mbox_pmu_count *)resp.payload;
	int n = resp.len / sizeof(*r);
	FILE *out = stderr; /* perf stat prints its table on stderr */
	if (!json && !sep)
		fprintf(out, "\n Performance counter stats for '%s' (CPUs %s):\n\n", argv[optind], cpus);
	for (int e = 0; e < nev; e++) {
		uint64_t total = 0;
		int counted = 1;
		for (int k = 0; k < n; k++) {
			if (r[k].counter != (uint32_t)e)
				continue;
			counted &= !!(r[k].flags & 2);
			total += r[k].value;
			if (json) {
				char val[32];
				if (r[k].flags & 2)
					snprintf(val, sizeof(val), "%llu.000000", (unsigned long long)r[k].value);
				else
					snprintf(val, sizeof(val), "<not supported>");
				printf("{\"cpu\" : \"%u\", \"counter-value\" : \"%s\", \"unit\" : \"\", "
				       "\"event\" : \"%s\", \"event-runtime\" : %.0f, \"pcnt-running\" : 100.00}\n",
				       r[k].cpu, val, names[e], elapsed * 1e9);
			}
		}
		if (json)
			continue;
		char v[40];
		group_digits(total, v);
		if (sep) /* perf's -x layout: value, unit, event, run time, running percentage */
			printf("%llu%s%s%s%s%.0f%s100.00\n", (unsigned long long)total, sep, sep, names[e], sep,
			       elapsed * 1e9, sep);
		else
			fprintf(out, "%20s      %s\n", counted ? v : "<not supported>", names[e]);
	}
	if (!json && !sep)
		fprintf(out, "\n%16.9f seconds time elapsed\n\n", elapsed);
	return status;
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
	if (strcmp(cmd, "info") && strcmp(cmd, "stat") && strcmp(cmd, "run")) {
		fprintf(stderr, "pmuctl: unknown command '%s'\n", cmd);
		return usage();
	}
	struct card c;
	if (card_open(&c, card_name) != 0)
		return 1;
	int r = !strcmp(cmd, "info") ? cmd_info(&c) : !strcmp(cmd, "stat") ? cmd_stat(&c, argc - i, argv + i)
									   : cmd_run(&c, argc - i, argv + i);
	card_close(&c);
	return r;
}
