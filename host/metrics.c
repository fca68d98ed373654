/*
 * `pmuctl stat -M`: the metric groups and their formulas; see host/metrics.h.
 * Every event named here is one the card counts (pmu/plugin_events.h, or the
 * model's INSTRUCTIONS_EXECUTED and CPU_CLK_UNHALTED). Sources:
 *   [TG]  Intel, "Optimization and Performance Tuning for Intel Xeon Phi
 *         Coprocessors, Part 2: Understanding and Using Hardware Events"
 *         (the KNC tuning guide), its metric of the same name.
 *   [LW]  likwid's KNC performance groups, groups/phi/<FILE>.txt in
 *         github.com/RRZE-HPC/likwid.
 *   [000] seed 000 (KNC PMU manual), Table 1-6: the event definitions.
 *   [003] seed 003 (Nehalem performance analysis guide), "Bandwidth per
 *         core": cache lines times 64 bytes over the time.
 */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "host/metrics.h"

#define LINE 64.0 /* bytes per cache line (KNC's L1 and L2, plugin/memsys.h) */

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
		  { "CPU_CLK_UNHALTED" }, LINE, 1e6 },
		/* [LW] MEM.txt: L1 misses (line fills) and L1 write-backs, lines between the L1 and the L2 */
		{ "L1-L2 bandwidth", "MB/s", { "DATA_READ_MISS_OR_WRITE_MISS", "DATA_CACHE_LINES_WRITTEN_BACK" },
		  { "CPU_CLK_UNHALTED" }, LINE, 1e6 },
	} },
};

const struct metric_group *metric_group_find(const char *name)
{
	for (int i = 0; i < METRIC_NGROUPS; i++)
		if (strcasecmp(metric_groups[i].name, name) == 0)
			return &metric_groups[i];
	return NULL;
}

void metric_group_names(char *out, size_t len)
{
	size_t at = 0;

	out[0] = 0;
	for (int i = 0; i < METRIC_NGROUPS && at < len; i++)
		at += snprintf(out + at, len - at, "%s%s", i ? ", " : "", metric_groups[i].name);
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
static int sum_terms(const char *const t[METRIC_TERMS], const struct metric_count *c, int n, double *sum)
{
	*sum = 0;
	for (int k = 0; k < METRIC_TERMS && t[k]; k++) {
		int i = 0;
		while (i < n && strcmp(c[i].name, event_of(t[k])) != 0)
			i++;
		if (i == n || !c[i].ok)
			return -1;
		*sum += t[k][0] == '-' ? -(double)c[i].value : (double)c[i].value;
	}
	return 0;
}

int metric_value(const struct metric *m, const struct metric_count *c, int n, uint64_t tsc_hz, double *v)
{
	double num, den;

	if (sum_terms(m->num, c, n, &num) || sum_terms(m->den, c, n, &den) || den == 0)
		return -1;
	if (!m->per_second) {
		*v = m->scale * num / den;
		return 0;
	}
	if (!tsc_hz)
		return -1;
	*v = m->scale * num / (den / tsc_hz) / m->per_second;
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
		at += snprintf(out, len, "%.15g * ", m->scale);
	if (at < len)
		at += terms_text(m->num, out + at, len - at);
	if (at < len)
		at += snprintf(out + at, len - at, " / %s", m->per_second ? "(" : "");
	if (at < len)
		at += terms_text(m->den, out + at, len - at);
	if (at < len && m->per_second)
		snprintf(out + at, len - at, " / TSC_Hz) / %.15g", m->per_second);
}

/* A metric's value as every format prints it: 6 significant digits, whole numbers from a million. */
static void value_text(double v, char *out, size_t len)
{
	snprintf(out, len, fabs(v) >= 1e6 ? "%.0f" : "%.6g", v);
}

void metrics_print(const struct stat_format *f, const struct metric_group *const *g, int ng,
		   const struct metric_count *c, int n, double t)
{
	char ts[32], json_t[48];

	stat_interval_text(f, t, ts, json_t);
	for (int i = 0; i < ng; i++) {
		if (!f->json && !f->sep && t < 0)
			fprintf(f->table, "\n %s: %s\n\n", g[i]->name, g[i]->desc);
		for_each_metric(m, g[i]) {
			char val[40], unit[96];
			double v;
			if (metric_value(m, c, n, f->tsc_hz, &v) == 0)
				value_text(v, val, sizeof(val));
			else
				snprintf(val, sizeof(val), "n/a");
			snprintf(unit, sizeof(unit), "%s %s", m->unit, m->name);
			if (f->json)
				fprintf(f->out, "{%s\"metric-value\" : \"%s\", \"metric-unit\" : \"%s\", \"metric-group\" : \"%s\"}\n",
					json_t, val, unit, g[i]->name);
			else if (f->sep)
				fprintf(f->out, "%s%s%s%s%s%s%s%s%s\n", ts, f->sep, f->sep, f->sep, f->sep, f->sep, val,
					f->sep, unit);
			else
				fprintf(f->table, "%s%20s      %-34s %s\n", ts, val, m->name, m->unit);
		}
	}
}

void metrics_list(FILE *out)
{
	char formula[256];

	for (int i = 0; i < METRIC_NGROUPS; i++) {
		fprintf(out, "%s: %s\n", metric_groups[i].name, metric_groups[i].desc);
		for_each_metric(m, &metric_groups[i]) {
			metric_formula(m, formula, sizeof(formula));
			fprintf(out, "  %-34s %-28s = %s\n", m->name, m->unit, formula);
		}
	}
}
