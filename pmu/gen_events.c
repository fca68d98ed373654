/*
 * Build-time generator of the kernel's KNC event table from libpfm4's "knc"
 * PMU (docs/design.md §5.3: no hand-typed event table). Runs on the build host and
 * prints a C header: one row per event with its name, code (umask << 8 |
 * event, as libpfm4 encodes it) and description; with the argument "knl"
 * the Knights Landing table from libpfm4's "knl" PMU, its unit masks a row
 * each; with "knl-plugin" the codes of the KNL events the plugin counts
 * (pmu/plugin_events.h KNL_PLUGIN_EVENTS).
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

/* One row: { "NAME", code, "description" }. */
static void row(const char *name, unsigned long long code, const char *desc)
{
	printf("\t{ ");
	put_c_string(name);
	printf(", 0x%04llx, ", code & 0xffff);
	put_c_string(desc ? desc : "");
	printf(" },\n");
}

/*
 * The table of PMU `id` (libpfm4 calls it `name`) as <name>_events, its length `count`: a row
 * per event, and for an event with unit masks (KNL's; KNC's codes hold
 * theirs) a row per mask, "EVENT:UMASK" with umask << 8 | event, the
 * event's own row then its default mask's code (libpfm4's, as pfm's
 * encoder gives it; none: no row of its own).
 */
static int table(pfm_pmu_t id, const char *name, const char *count)
{
	pfm_pmu_info_t pmu = { .size = sizeof(pmu) };
	int n = 0;

	setenv("LIBPFM_FORCE_PMU", name, 1); /* libpfm4 encodes only for a PMU it detects or is told of */
	if (pfm_initialize() != PFM_SUCCESS || pfm_get_pmu_info(id, &pmu) != PFM_SUCCESS) {
		fprintf(stderr, "gen_events: libpfm4 has no %s PMU\n", name);
		return 1;
	}
	printf("/* Generated from libpfm4's %s PMU (%s) by pmu/gen_events.c; do not edit. */\n", pmu.name, pmu.desc);
	printf("static const struct pmu_event %s_events[] = {\n", name);
	for (int i = pmu.first_event; i != -1; i = pfm_get_event_next(i)) {
		pfm_event_info_t e = { .size = sizeof(e) };
		int umasks = 0, dfl = -1;

		if (pfm_get_event_info(i, PFM_OS_NONE, &e) != PFM_SUCCESS)
			return 1;
		for (int a = 0; a < e.nattrs; a++) {
			pfm_event_attr_info_t at = { .size = sizeof(at) };
			if (pfm_get_event_attr_info(i, a, PFM_OS_NONE, &at) == PFM_SUCCESS && at.type == PFM_ATTR_UMASK) {
				umasks++;
				if (at.is_dfl && dfl < 0)
					dfl = (int)at.code;
			}
		}
		if (!umasks || dfl >= 0)
			row(e.name, e.code | (unsigned long long)(dfl > 0 ? dfl : 0) << 8, e.desc);
		for (int a = 0; a < e.nattrs; a++) {
			pfm_event_attr_info_t at = { .size = sizeof(at) };
			char full[128];
			if (pfm_get_event_attr_info(i, a, PFM_OS_NONE, &at) != PFM_SUCCESS || at.type != PFM_ATTR_UMASK)
				continue;
			snprintf(full, sizeof(full), "%s:%s", e.name, at.name);
			row(full, e.code | at.code << 8, at.desc);
		}
		n++;
	}
	printf("};\n#define %s (sizeof(%s_events) / sizeof(%s_events[0]))\n", count, name, name);
	if (n != pmu.nevents) {
		fprintf(stderr, "gen_events: %d events listed, libpfm4 says %d\n", n, pmu.nevents);
		return 1;
	}
	return 0;
}

/* gen_events knc | knl | knl-plugin: the table of that PMU, or the plugin's KNL codes (knl() above). */
int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "knc";

	if (!strcmp(what, "knl-plugin"))
		return knl();
	if (!strcmp(what, "knl"))
		return table(PFM_PMU_INTEL_KNL, "knl", "KNL_EVENT_COUNT");
	return table(PFM_PMU_INTEL_KNC, "knc", "KNC_EVENT_COUNT");
}
