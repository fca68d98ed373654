/*
 * The metric groups (perf stat -M, likwid's performance groups): the table
 * and what the card's shell and pmuctl both do with it; see pmu/metrics.h.
 * Every event named here is one the card counts (pmu/plugin_events.h, or the
 * model's INSTRUCTIONS_EXECUTED and CPU_CLK_UNHALTED). Sources:
 *   [TG]  Intel, "Optimization and Performance Tuning for Intel Xeon Phi
 *         Coprocessors, Part 2: Understanding and Using Hardware Events"
 *         (the KNC tuning guide), its metric of the same name.
 *   [LW]  likwid's KNC performance groups, groups/phi/<FILE>.txt in
 *         github.com/RRZE-HPC/likwid.
 *   [000] Intel 327357-001 (KNC PMU manual), Table 1-6: the event definitions.
 *   [003] Intel, Core i7 / Xeon 5500 performance analysis guide, "Bandwidth per
 *         core": cache lines times 64 bytes over the time.
 *   [LWK] likwid's Knights Landing groups, groups/knl/<FILE>.txt: every
 *         group's CPI (its fixed counters' CPU_CLK_UNHALTED_CORE over
 *         INSTR_RETIRED_ANY), DATA.txt's load to store ratio.
 * A Knights Landing card's groups (metric_groups_knl) name libpfm4's knl
 * events the card counts there (the model's INSTRUCTION_RETIRED and
 * UNHALTED_CORE_CYCLES, pmu/plugin_events.h KNL_PLUGIN_EVENTS).
 */
#include "pmu/metrics.h"
#include "lib/fmt.h"
#include "lib/lib.h"

#define LINE 64 /* bytes per cache line (KNC's L1 and L2, plugin/memsys.h) */

const struct metric_group metric_groups[METRIC_NGROUPS] = {
	{ "CPI", "cycles per instruction", {
		/* [TG] CPI; [LW] CPI.txt (CPI and IPC) */
		{ "CPI", "cycles/instruction", { "CPU_CLK_UNHALTED" }, { "INSTRUCTIONS_EXECUTED" }, 1, 0 },
		{ "IPC", "instructions/cycle", { "INSTRUCTIONS_EXECUTED" }, { "CPU_CLK_UNHALTED" }, 1, 0 },
	} },
	{ "L1", "L1 data cache hits and misses", {
		/* [TG] L1 Hit Rate, its L1 misses without L1_DATA_HIT_INFLIGHT_PF1 (no prefetcher: plugin/memsys.h) */
		{ "L1 hit rate", "%", { "DATA_READ_OR_WRITE", "-DATA_READ_MISS_OR_WRITE_MISS" }, { "DATA_READ_OR_WRITE" }, 100, 0 },
		/* [LW] READ_MISS_RATIO.txt, WRITE_MISS_RATIO.txt */
		{ "L1 read miss ratio", "%", { "DATA_READ_MISS" }, { "DATA_READ" }, 100, 0 },
		{ "L1 write miss ratio", "%", { "DATA_WRITE_MISS" }, { "DATA_WRITE" }, 100, 0 },
	} },
	{ "L2", "L2 hits and misses of L1 misses", {
		/* [000] L2_READ_HIT_E/M/S and L2_READ_MISS split the code and data reads that reach the L2 */
		{ "L2 hit rate", "%", { "L2_READ_HIT_E", "L2_READ_HIT_M", "L2_READ_HIT_S" },
		  { "L2_READ_HIT_E", "L2_READ_HIT_M", "L2_READ_HIT_S", "L2_READ_MISS" }, 100, 0 },
		/* misses per kilo-instruction, as perf's L2MPKI (Intel's perfmon metrics) */
		{ "L2 misses per 1000 instructions", "misses", { "L2_READ_MISS" }, { "INSTRUCTIONS_EXECUTED" }, 1000, 0 },
	} },
	{ "TLB", "data TLB misses", {
		/* [TG] L1 TLB miss ratio, L2 TLB miss ratio, L1 TLB misses per L2 TLB miss; [LW] TLB_L1.txt, TLB_L2.txt, TLB.txt */
		{ "L1 TLB miss ratio", "%", { "DATA_PAGE_WALK" }, { "DATA_READ_OR_WRITE" }, 100, 0 },
		{ "L2 TLB miss ratio", "%", { "LONG_DATA_PAGE_WALK" }, { "DATA_READ_OR_WRITE" }, 100, 0 },
		{ "L1 TLB misses per L2 TLB miss", "misses", { "DATA_PAGE_WALK" }, { "LONG_DATA_PAGE_WALK" }, 1, 0 },
	} },
	{ "BRANCH", "branches and mispredictions", {
		/* likwid's BRANCH groups of other Intel cores (e.g. groups/skylakeX/BRANCH.txt), with KNC's events */
		{ "branch misprediction ratio", "%", { "BRANCHES_MISPREDICTED" }, { "BRANCHES" }, 100, 0 },
		{ "branch rate", "branches/instruction", { "BRANCHES" }, { "INSTRUCTIONS_EXECUTED" }, 1, 0 },
		{ "branch misprediction rate", "mispredictions/instruction", { "BRANCHES_MISPREDICTED" },
		  { "INSTRUCTIONS_EXECUTED" }, 1, 0 },
		{ "instructions per branch", "instructions", { "INSTRUCTIONS_EXECUTED" }, { "BRANCHES" }, 1, 0 },
	} },
	{ "VPU", "vectorization and compute to data access ratios (SSE/AVX stand in for the VPU)", {
		/* [TG] Vectorization Intensity, L1 and L2 Compute to Data Access Ratio; [LW] VECTOR.txt,
		 * CACHE.txt, COMPUTE_TO_DATA_RATIO.txt */
		{ "vectorization intensity", "elements/instruction", { "VPU_ELEMENTS_ACTIVE" }, { "VPU_INSTRUCTIONS_EXECUTED" }, 1, 0 },
		{ "L1 compute to data access ratio", "elements/access", { "VPU_ELEMENTS_ACTIVE" }, { "DATA_READ_OR_WRITE" }, 1, 0 },
		{ "L2 compute to data access ratio", "elements/miss", { "VPU_ELEMENTS_ACTIVE" },
		  { "DATA_READ_MISS_OR_WRITE_MISS" }, 1, 0 },
	} },
	{ "MEM", "estimated memory read and L1-L2 bandwidth", {
		/* [TG] memory read bandwidth in bytes per clock, without HWP_L2MISS (no hardware prefetcher);
		 * its write bandwidth needs L2_VICTIM_REQ_WITH_DATA, which the plugin does not count */
		{ "memory read bandwidth", "bytes/cycle", { "L2_DATA_READ_MISS_MEM_FILL", "L2_DATA_WRITE_MISS_MEM_FILL" },
		  { "CPU_CLK_UNHALTED" }, LINE, 0 },
		/* [003] lines over time; [TG] bandwidth = bytes per clock times the clock */
		{ "memory read bandwidth", "MB/s", { "L2_DATA_READ_MISS_MEM_FILL", "L2_DATA_WRITE_MISS_MEM_FILL" },
		  { "CPU_CLK_UNHALTED" }, LINE, 1000000 },
		/* [LW] MEM.txt: L1 misses (line fills) and L1 write-backs, lines between the L1 and the L2 */
		{ "L1-L2 bandwidth", "MB/s", { "DATA_READ_MISS_OR_WRITE_MISS", "DATA_CACHE_LINES_WRITTEN_BACK" },
		  { "CPU_CLK_UNHALTED" }, LINE, 1000000 },
	} },
};

const struct metric_group metric_groups_knl[METRIC_NGROUPS_KNL] = {
	{ "CPI", "cycles per instruction", {
		/* [LWK] CPI; IPC its inverse */
		{ "CPI", "cycles/instruction", { "UNHALTED_CORE_CYCLES" }, { "INSTRUCTION_RETIRED" }, 1, 0 },
		{ "IPC", "instructions/cycle", { "INSTRUCTION_RETIRED" }, { "UNHALTED_CORE_CYCLES" }, 1, 0 },
	} },
	{ "L1", "L1 data cache read misses", {
		/* KNC's L1 read miss ratio ([TG]) on KNL's load events; per 1000 instructions as the L2 group's */
		{ "L1 read miss ratio", "%", { "MEM_UOPS_RETIRED:L1_MISS_LOADS" }, { "MEM_UOPS_RETIRED:ALL_LOADS" }, 100, 0 },
		{ "L1 read misses per 1000 instructions", "misses", { "MEM_UOPS_RETIRED:L1_MISS_LOADS" },
		  { "INSTRUCTION_RETIRED" }, 1000, 0 },
	} },
	{ "DATA", "loads and stores", {
		/* [LWK] DATA.txt */
		{ "load to store ratio", "loads/store", { "MEM_UOPS_RETIRED:ALL_LOADS" }, { "MEM_UOPS_RETIRED:ALL_STORES" }, 1, 0 },
		{ "loads per instruction", "loads/instruction", { "MEM_UOPS_RETIRED:ALL_LOADS" }, { "INSTRUCTION_RETIRED" }, 1, 0 },
	} },
	{ "BRANCH", "branches and mispredictions", {
		/* KNC's BRANCH group above, on KNL's events */
		{ "branch misprediction ratio", "%", { "BR_MISP_RETIRED:ANY" }, { "BR_INST_RETIRED:ANY" }, 100, 0 },
		{ "branch rate", "branches/instruction", { "BR_INST_RETIRED:ANY" }, { "INSTRUCTION_RETIRED" }, 1, 0 },
		{ "instructions per branch", "instructions", { "INSTRUCTION_RETIRED" }, { "BR_INST_RETIRED:ANY" }, 1, 0 },
	} },
};

static bool same_nocase(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if ((*a | 0x20) != (*b | 0x20) || ((*a | 0x20) < 'a' && *a != *b))
			return false;
	return *a == *b;
}

const struct metric_group *metric_groups_of(const char *pfm, int *n)
{
	bool knl = pfm && !strcmp(pfm, "knl");

	*n = knl ? METRIC_NGROUPS_KNL : METRIC_NGROUPS;
	return knl ? metric_groups_knl : metric_groups;
}

const struct metric_group *metric_group_find_of(const char *pfm, const char *name)
{
	int n;
	const struct metric_group *g = metric_groups_of(pfm, &n);

	for (int i = 0; i < n; i++)
		if (same_nocase(g[i].name, name))
			return &g[i];
	return NULL;
}

const struct metric_group *metric_group_find(const char *name)
{
	return metric_group_find_of("knc", name);
}

void metric_group_names_of(const char *pfm, char *out, size_t len)
{
	size_t at = 0;
	int n;
	const struct metric_group *g = metric_groups_of(pfm, &n);

	out[0] = 0;
	for (int i = 0; i < n && at < len; i++)
		at += snprintf(out + at, len - at, "%s%s", i ? ", " : "", g[i].name);
}

void metric_group_names(char *out, size_t len)
{
	metric_group_names_of("knc", out, len);
}

/* A term's event name, without its sign. */
static const char *event_of(const char *term)
{
	return term[0] == '-' ? term + 1 : term;
}

int metric_group_events(const struct metric_group *g, const char **names, int n, int max)
{
	for_each_metric(m, g)
		for (int side = 0; side < 2; side++)
			for (int k = 0; k < METRIC_TERMS; k++) {
				const char *t = side ? m->den[k] : m->num[k];
				if (!t)
					break;
				int seen = 0;
				for (int i = 0; i < n && !seen; i++)
					seen = strcmp(names[i], event_of(t)) == 0;
				if (seen)
					continue;
				if (n == max)
					return -1;
				names[n++] = event_of(t);
			}
	return n;
}

/* The signed sum of terms t over the counts; -1 when one is missing or not ok. */
static int sum_terms(const char *const t[METRIC_TERMS], const struct metric_count *c, int n, int64_t *sum)
{
	*sum = 0;
	for (int k = 0; k < METRIC_TERMS && t[k]; k++) {
		int i = 0;
		while (i < n && strcmp(c[i].name, event_of(t[k])) != 0)
			i++;
		if (i == n || !c[i].ok)
			return -1;
		*sum += t[k][0] == '-' ? -(int64_t)c[i].value : (int64_t)c[i].value;
	}
	return 0;
}

int metric_sums(const struct metric *m, const struct metric_count *c, int n, int64_t *num, int64_t *den)
{
	return sum_terms(m->num, c, n, num) || sum_terms(m->den, c, n, den) || *den <= 0 ? -1 : 0;
}

int metric_value_milli(const struct metric *m, const struct metric_count *c, int n, uint64_t tsc_hz, int64_t *milli)
{
	int64_t sn, sd;
	uint64_t q;

	if (metric_sums(m, c, n, &sn, &sd) || (m->per_second && !tsc_hz))
		return -1;
	/* |value| * 1000 = |num| * scale * 1000 [* tsc_hz] / (den [* per_second]), rounded half up. */
	unsigned __int128 a = (unsigned __int128)(sn < 0 ? -(uint64_t)sn : (uint64_t)sn) * m->scale * 1000;
	uint64_t ps = m->per_second ? m->per_second : 1;
	if (m->per_second)
		a *= tsc_hz;
	a += ((unsigned __int128)(uint64_t)sd * ps) >> 1;
	/* floor(floor(a / den) / ps) = floor(a / (den * ps)), with den * ps past 64 bits */
	if (!udiv128_64(a, (uint64_t)sd, &q) || (q /= ps) > INT64_MAX)
		return -1;
	*milli = sn < 0 ? -(int64_t)q : (int64_t)q;
	return 0;
}

/* One side of a formula: "A", or "(A + B - C)". */
static size_t terms_text(const char *const t[METRIC_TERMS], char *out, size_t len)
{
	size_t at = 0;
	int many = t[1] != NULL;

	at += snprintf(out + at, len - at, "%s", many ? "(" : "");
	for (int k = 0; k < METRIC_TERMS && t[k] && at < len; k++)
		at += snprintf(out + at, len - at, "%s%s", k ? (t[k][0] == '-' ? " - " : " + ") : "", event_of(t[k]));
	if (at < len)
		at += snprintf(out + at, len - at, "%s", many ? ")" : "");
	return at;
}

void metric_formula(const struct metric *m, char *out, size_t len)
{
	size_t at = 0;

	if (m->scale != 1)
		at += snprintf(out, len, "%u * ", m->scale);
	if (at < len)
		at += terms_text(m->num, out + at, len - at);
	if (at < len)
		at += snprintf(out + at, len - at, " / %s", m->per_second ? "(" : "");
	if (at < len)
		at += terms_text(m->den, out + at, len - at);
	if (at < len && m->per_second)
		snprintf(out + at, len - at, " / TSC_Hz) / %u", m->per_second);
}

