/*
 * Build-time generator of the kernel's KNC event table from libpfm4's "knc"
 * PMU (docs/design.md §5.3: no hand-typed event table). Runs on the build host and
 * prints a C header: one row per event with its name, code (umask << 8 |
 * event, as libpfm4 encodes it) and description.
 */
#include <perfmon/pfmlib.h>
#include <stdio.h>
#include <string.h>

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

int main(void)
{
	pfm_pmu_info_t pmu = { .size = sizeof(pmu) };
	int n = 0;

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
