/* Event names as pmuctl takes them: libpfm4's table of the card's PMU and perf's generic names; see host/pfm.h. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <perfmon/pfmlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/pfm.h"
#include "host/pmuctl.h"
#include "host/cardtext.h"
#include "pmu/evtsel.h"

/*
 * perf's generic hardware events (perf_event_open(2), PERF_COUNT_HW_*) as
 * the KNC events Linux counts for them (arch/x86/events/intel/knc.c,
 * knc_perfmon_event_map), by their libpfm4 names: libpfm4 gives the codes.
 */
static const struct pfm_generic knc_generic[] = {
	{ "cycles", "CPU_CLK_UNHALTED" },          { "cpu-cycles", "CPU_CLK_UNHALTED" },
	{ "instructions", "INSTRUCTIONS_EXECUTED" }, { "branches", "BRANCHES" },
	{ "branch-instructions", "BRANCHES" },     { "branch-misses", "BRANCHES_MISPREDICTED" },
	{ "cache-references", "DATA_READ_OR_WRITE" }, { "cache-misses", "DATA_READ_MISS_OR_WRITE_MISS" },
	/* perf's cache events (PERF_TYPE_HW_CACHE, perf list's names) as knc_hw_cache_event_ids maps them. */
	{ "L1-dcache-loads", "DATA_READ" },        { "L1-dcache-load-misses", "DATA_READ_MISS" },
	{ "L1-dcache-stores", "DATA_WRITE" },      { "L1-dcache-store-misses", "DATA_WRITE_MISS" },
	{ "L1-dcache-prefetches", "L1_DATA_PF1" }, { "L1-dcache-prefetch-misses", "L1_DATA_PF1_MISS" },
	{ "L1-icache-loads", "CODE_READ" },        { "L1-icache-load-misses", "CODE_CACHE_MISS" },
	{ "LLC-load-misses", "L2_READ_MISS" },     { "LLC-stores", "L2_WRITE_HIT" },
	{ "LLC-prefetches", "L2_DATA_PF2" },       { "LLC-prefetch-misses", "L2_DATA_PF2_MISS" },
	{ "dTLB-loads", "DATA_READ" },             { "dTLB-load-misses", "DATA_PAGE_WALK" },
	{ "dTLB-stores", "DATA_WRITE" },           { "dTLB-store-misses", "DATA_PAGE_WALK" },
	{ "iTLB-loads", "CODE_READ" },             { "iTLB-load-misses", "CODE_PAGE_WALK" },
	{ "branch-loads", "BRANCHES" },            { "branch-load-misses", "BRANCHES_MISPREDICTED" },
	{ NULL, NULL },
};

/* perf's cache events knc_hw_cache_event_ids maps to no event (0 there): perf says <not supported>. */
static const char *const knc_none[] = { "LLC-loads", "LLC-store-misses", "L1-icache-prefetches",
					"L1-icache-prefetch-misses", "dTLB-prefetches", "dTLB-prefetch-misses", NULL };

/*
 * Architectural perfmon's (Knights Landing's, libpfm4's knl and ix86arch
 * names): the architectural events Linux's intel_perfmon_event_map counts
 * for the generic ones (arch/x86/events/intel/core.c).
 */
static const struct pfm_generic arch_generic[] = {
	{ "cycles", "UNHALTED_CORE_CYCLES" },         { "cpu-cycles", "UNHALTED_CORE_CYCLES" },
	{ "instructions", "INSTRUCTION_RETIRED" },    { "branches", "BRANCH_INSTRUCTIONS_RETIRED" },
	{ "branch-instructions", "BRANCH_INSTRUCTIONS_RETIRED" }, { "branch-misses", "MISPREDICTED_BRANCH_RETIRED" },
	{ "cache-references", "LLC_REFERENCES" },     { "cache-misses", "LLC_MISSES" },
	{ NULL, NULL },
};
static const char *const arch_none[] = { NULL };

/* The PMUs a card can have (include/pmuos/mailbox.h mbox_header.pmu), by libpfm4's names. */
static const struct pmu_names {
	const char *name;
	pfm_pmu_t id;
	const struct pfm_generic *generic;
	const char *const *none; /* generic names the PMU's Linux driver maps to no event */
	const char *driver;      /* whose map the generic names follow */
} pmus[] = {
	{ "knc", PFM_PMU_INTEL_KNC, knc_generic, knc_none, "Linux's KNC driver" },
	{ "knl", PFM_PMU_INTEL_KNL, arch_generic, arch_none, "Linux's Intel core driver" },
	{ "ix86arch", PFM_PMU_INTEL_X86_ARCH, arch_generic, arch_none, "Linux's Intel core driver" },
};

static const struct pmu_names *pmu = &pmus[0];
static pfm_pmu_info_t info;

void pfm_setup(const char *name)
{
	size_t len = name ? strnlen(name, 16) : 0; /* a card's 16 bytes need not end in a NUL */

	pmu = &pmus[0];
	for (size_t i = 0; len && i < sizeof(pmus) / sizeof(pmus[0]); i++)
		if (strlen(pmus[i].name) == len && !strncmp(name, pmus[i].name, len))
			pmu = &pmus[i];
	if (len && (strlen(pmu->name) != len || strncmp(name, pmu->name, len))) {
		fprintf(stderr, "pmuctl: warning: the card's PMU '");
		print_card_text(stderr, name, len);
		fprintf(stderr, "' is not one pmuctl names events of; knc's names are used\n");
	}
	/*
	 * libpfm4 encodes only for PMUs it detects: the card's is not the host's.
	 * pfm_initialize() has no per-PMU form; with LIBPFM_FORCE_PMU it skips
	 * every other PMU's detection and initialises that PMU alone (libpfm(3)).
	 */
	setenv("LIBPFM_FORCE_PMU", pmu->name, 1);
	if (pfm_initialize() != PFM_SUCCESS) {
		fprintf(stderr, "pmuctl: libpfm4 failed to initialise\n");
		exit(1);
	}
	info = (pfm_pmu_info_t){ .size = sizeof(info) };
	if (pfm_get_pmu_info(pmu->id, &info) != PFM_SUCCESS) {
		fprintf(stderr, "pmuctl: this libpfm4 has no %s PMU\n", pmu->name);
		exit(1);
	}
}

const char *pfm_pmu_name(void)
{
	return pmu->name;
}

uint32_t pfm_pmu_index(void)
{
	return (uint32_t)(pmu - pmus);
}

const char *pfm_pmu_at(uint32_t i)
{
	return i < sizeof(pmus) / sizeof(pmus[0]) ? pmus[i].name : NULL;
}

int pfm_first_event(void)
{
	return info.first_event;
}

const struct pfm_generic *pfm_generic_at(size_t i)
{
	for (size_t j = 0; pmu->generic[j].alias; j++)
		if (j == i)
			return &pmu->generic[j];
	return NULL;
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

/* cand into best[0..3) (nearest first, distances in bestd) if nearer to name than one there. */
static void consider(const char *name, const char *cand, const char *best[3], int bestd[3])
{
	int d = distance(name, cand);

	for (int k = 0; k < 3; k++)
		if (d < bestd[k]) {
			memmove(&best[k + 1], &best[k], (2 - k) * sizeof(best[0]));
			memmove(&bestd[k + 1], &bestd[k], (2 - k) * sizeof(bestd[0]));
			best[k] = cand;
			bestd[k] = d;
			return;
		}
}

/* The three event names (libpfm4's table of the PMU and perf's generic ones) closest to name, nearest first. */
void pfm_closest(const char *name, const char *best[3])
{
	int bestd[3] = { 99, 99, 99 };

	best[0] = best[1] = best[2] = "";
	for (int i = info.first_event; i != -1; i = pfm_get_event_next(i)) {
		pfm_event_info_t e = { .size = sizeof(e) };
		if (pfm_get_event_info(i, PFM_OS_NONE, &e) == PFM_SUCCESS)
			consider(name, e.name, best, bestd);
	}
	for (size_t i = 0; pmu->generic[i].alias; i++)
		consider(name, pmu->generic[i].alias, best, bestd);
}

/* The PMU's event name perf's generic event name[0..len) stands for, or NULL. */
static const char *event_alias(const char *name, size_t len)
{
	for (size_t i = 0; pmu->generic[i].alias; i++)
		if (strlen(pmu->generic[i].alias) == len && !strncmp(name, pmu->generic[i].alias, len))
			return pmu->generic[i].event;
	return NULL;
}

/*
 * perf's raw event rUUEE (hex: unit mask, event; more bits as EvtSel's,
 * Intel 327357-001 §2.1.1), with perf's :u/:k modifiers: 1 and the EvtSel in
 * *sel, 0 if ev is not one, exits naming what is wrong in one that looks raw.
 */
static int raw_event(const char *ev, uint32_t *sel)
{
	char *end;

	if (ev[0] != 'r' || !isxdigit((unsigned char)ev[1]))
		return 0;
	errno = 0;
	unsigned long long v = strtoull(ev + 1, &end, 16);
	uint32_t plm = 0;
	if (*end && *end != ':')
		return 0; /* a name that starts with r and a hex digit */
	if (*end == ':')
		for (end++; *end == 'u' || *end == 'k'; end++)
			plm |= *end == 'u' ? EVTSEL_USR : EVTSEL_OS;
	if (*end || !plm != !strchr(ev, ':') || errno || v > 0xffffffffULL || (v & (EVTSEL_EN | EVTSEL_INT))) {
		fprintf(stderr, "pmuctl: event '%s': a raw event is rUUEE[:u|:k|:uk], hex: the unit mask UU and event "
			"EE, up to EvtSel's 32 bits without EN (bit 22) and INT (bit 20)\n", ev);
		exit(2);
	}
	*sel = (uint32_t)v | (plm ? plm : EVTSEL_USR | EVTSEL_OS);
	return 1;
}

/* libpfm4 refused a modifier of ev (its event known): the event's modifiers, from libpfm4. */
static void bad_modifier(const char *ev, int r)
{
	char name[80];
	snprintf(name, sizeof(name), "%s::%.*s", pmu->name, (int)strcspn(ev, ":"), ev);
	int e = pfm_find_event(name);
	pfm_event_info_t ei = { .size = sizeof(ei) };

	fprintf(stderr, "pmuctl: event '%s': %s; the modifiers of %s are", ev, pfm_strerror(r),
		name + strlen(pmu->name) + 2);
	if (e >= 0 && pfm_get_event_info(e, PFM_OS_NONE, &ei) == PFM_SUCCESS)
		for (int a = 0; a < ei.nattrs; a++) {
			pfm_event_attr_info_t at = { .size = sizeof(at) };
			if (pfm_get_event_attr_info(e, a, PFM_OS_NONE, &at) == PFM_SUCCESS && at.type != PFM_ATTR_UMASK)
				fprintf(stderr, "%s :%s%s (%s)", a ? "," : "", at.name,
					at.type == PFM_ATTR_MOD_INTEGER ? "=N" : "", at.desc);
		}
	fputc('\n', stderr);
	exit(2);
}

uint32_t encode(const char *ev)
{
	uint64_t code = 0;
	uint32_t sel;
	pfm_pmu_encode_arg_t arg = { .size = sizeof(arg), .codes = &code, .count = 1 };
	char pmu_name_buf[128];
	size_t base_len = strcspn(ev, ":");
	const char *alias = event_alias(ev, base_len);

	if (raw_event(ev, &sel))
		return sel;
	for (size_t i = 0; pmu->none[i]; i++)
		if (strlen(pmu->none[i]) == base_len && !strncmp(ev, pmu->none[i], base_len)) {
			fprintf(stderr, "pmuctl: event '%s': %s counts no event for it (perf shows "
				"<not supported>); pmuctl events lists those it does\n", ev, pmu->driver);
			exit(1);
		}
	if (alias) {
		snprintf(pmu_name_buf, sizeof(pmu_name_buf), "%s%s", alias, ev + base_len);
		ev = pmu_name_buf;
	}
	int r = pfm_get_os_event_encoding(ev, PFM_PLM0 | PFM_PLM3, PFM_OS_NONE, &arg);
	if (r == PFM_SUCCESS)
		return (uint32_t)code & ~(EVTSEL_EN | EVTSEL_INT);
	if (r == PFM_ERR_ATTR || r == PFM_ERR_ATTR_VAL || r == PFM_ERR_ATTR_SET)
		bad_modifier(ev, r);
	char name[64];
	size_t pl = strlen(pmu->name);
	const char *base = strncmp(ev, pmu->name, pl) || strncmp(ev + pl, "::", 2) ? ev : ev + pl + 2;
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(base, ":"), base);
	fprintf(stderr, "pmuctl: event '%s': %s", ev, pfm_strerror(r));
	const char *best[3];
	pfm_closest(name, best);
	fprintf(stderr, "; closest: %s, %s, %s (or perf's cycles, instructions, branches, branch-misses, "
		"cache-references, cache-misses, or a raw rUUEE)\n", best[0], best[1], best[2]);
	exit(1);
}
