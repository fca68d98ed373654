/* pmuctl's event names: libpfm4's knc PMU (`pmuctl events`, -e EV). */
#define _GNU_SOURCE
#include <perfmon/pfmlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/pmuctl.h"
#include "pmu/regs.h"

static pfm_pmu_info_t knc;

void pfm_setup(void)
{
	/*
	 * libpfm4 encodes only for PMUs it detects: the card's is not the host's.
	 * pfm_initialize() has no per-PMU form; with LIBPFM_FORCE_PMU it skips
	 * every other PMU's detection and initialises the knc PMU alone (libpfm(3)).
	 */
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

int cmd_events(const char *pattern)
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

/* Edit distance between two names, ignoring case; 99 for names over 63 characters. */
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

uint32_t encode(const char *ev)
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
