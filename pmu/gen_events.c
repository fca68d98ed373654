/*
 * Build-time generator of the kernel's KNC event table from libpfm4's "knc"
 * PMU (docs/design.md §5.3: no hand-typed event table). Runs on the build host and
 * prints a C header: one row per event with its name, code (umask << 8 |
 * event, as libpfm4 encodes it) and description. With the argument "knl":
 * the codes of the Knights Landing events the plugin counts
 * (pmu/plugin_events.h KNL_PLUGIN_EVENTS), from libpfm4's knl PMU.
 */
#include <perfmon/pfmlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pmu/plugin_events.h"

static void put_c_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		putchar(*s == '\n' || *s == '\t' ? ' ' : *s);
	}
	putchar('"');
}

/* knl: one row { code, PEV_x } per KNL_PLUGIN_EVENTS entry, its code umask << 8 | event. */
static int knl(void)
{
	static const struct { const char *name, *pev; } map[] = {
#define KNL_ROW(knl_name, pev, how) { knl_name, "PEV_" #pev },
		KNL_PLUGIN_EVENTS(KNL_ROW)
#undef KNL_ROW
	};
	int n = sizeof(map) / sizeof(map[0]);

	setenv("LIBPFM_FORCE_PMU", "knl", 1); /* libpfm4 encodes only for a PMU it detects or is told of */
	if (pfm_initialize() != PFM_SUCCESS) {
		fprintf(stderr, "gen_events: libpfm4 failed to initialise for knl\n");
		return 1;
	}
	printf("/* Generated from libpfm4's knl PMU by pmu/gen_events.c knl; do not edit. */\n");
	printf("#define KNL_PLUGIN_COUNT %d\n", n);
	printf("static const struct knl_plugin_event knl_plugin[KNL_PLUGIN_COUNT] = {\n");
	for (int i = 0; i < n; i++) {
		char spec[96];
		pfm_pmu_encode_arg_t a = { .size = sizeof(a) };

		snprintf(spec, sizeof(spec), "knl::%s", map[i].name);
		if (pfm_get_os_event_encoding(spec, PFM_PLM3, PFM_OS_NONE, &a) != PFM_SUCCESS || a.count < 1) {
			fprintf(stderr, "gen_events: libpfm4 has no knl event %s\n", map[i].name);
			return 1;
		}
		printf("\t{ 0x%04llx, %s }, /* %s */\n", (unsigned long long)(a.codes[0] & 0xffff), map[i].pev,
		       map[i].name);
		free(a.codes);
	}
	printf("};\n");
	return 0;
}

int main(int argc, char **argv)
{
	pfm_pmu_info_t pmu = { .size = sizeof(pmu) };
	int n = 0;

	if (argc > 1 && !strcmp(argv[1], "knl"))
		return knl();

	if (pfm_initialize() != PFM_SUCCESS || pfm_get_pmu_info(PFM_PMU_INTEL_KNC, &pmu) != PFM_SUCCESS) {
		fprintf(stderr, "gen_events: libpfm4 has no knc PMU\n");
		return 1;
	}
	printf("/* Generated from libpfm4's %s PMU (%s) by pmu/gen_events.c; do not edit. */\n",
	       pmu.name, pmu.desc);
	printf("#define KNC_EVENT_COUNT %d\n", pmu.nevents);
	printf("static const struct knc_event knc_events[KNC_EVENT_COUNT] = {\n");
	for (int i = pmu.first_event; i != -1; i = pfm_get_event_next(i)) {
		pfm_event_info_t e = { .size = sizeof(e) };

		if (pfm_get_event_info(i, PFM_OS_NONE, &e) != PFM_SUCCESS)
			return 1;
		printf("\t{ ");
		put_c_string(e.name);
		printf(", 0x%04llx, ", (unsigned long long)e.code);
		put_c_string(e.desc ? e.desc : "");
		printf(" },\n");
		n++;
	}
	printf("};\n");
	if (n != pmu.nevents) {
		fprintf(stderr, "gen_events: %d events listed, libpfm4 says %d\n", n, pmu.nevents);
		return 1;
	}
	return 0;
}
