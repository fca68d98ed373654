/*
 * `pmu metrics`: the shell's `pmuctl stat -M` (perf stat -M): the metric
 * groups of pmu/metrics.h on the card's own counters.
 *   pmu metrics list                        groups, metrics, units, formulas
 *   pmu metrics CPUS GROUP[,GROUP...] [slice=MS]
 *                                           count what the groups need (multiplexed)
 *   pmu metrics [CPUS]                      the metrics of what they counted so far
 * The values are the table's formulas over the counts `pmu read` shows,
 * each scaled by its share of the counting time when multiplexed, as
 * pmuctl scales them; in thousandths (the kernel has no floating point).
 */
#include "shell/cmds_pmu.h"
#include "shell/shell.h"
#include "pmu/events.h"
#include "pmu/metrics.h"
#include "pmu/pmu.h"
#include "kernel/console.h"
#include "kernel/percpu.h"
#include "lib/cpuset.h"
#include "lib/fmt.h"
#include "lib/lib.h"
#include "arch/tsc.h"

/* What the last `pmu metrics CPUS GROUPS` asked for. */
static const struct metric_group *groups[METRIC_NGROUPS];
static int ngroups;
static const char *names[MBOX_MUX_MAX];
static uint32_t evtsel[MBOX_MUX_MAX];
static int nev;
static struct cpuset chosen;

static void list(void)
{
	char formula[256];

	for (int i = 0; i < METRIC_NGROUPS; i++) {
		kprintf("%s: %s\n", metric_groups[i].name, metric_groups[i].desc);
		for_each_metric(m, &metric_groups[i]) {
			metric_formula(m, formula, sizeof(formula));
			kprintf("  %-34s %-28s = %s\n", m->name, m->unit, formula);
		}
	}
}

/* GROUP[,GROUP...] into the groups and the events they need, in order of first use. */
static int choose(const char *arg)
{
	const struct metric_group *g[METRIC_NGROUPS];
	const char *ev[MBOX_MUX_MAX];
	uint32_t sel[MBOX_MUX_MAX];
	char text[128], err[96], *p = text;
	int ng = 0, n = 0;

	strlcpy(text, arg, sizeof(text));
	for (bool more = true; more;) {
		char *end = p;
		while (*end && *end != ',')
			end++;
		more = *end == ',';
		*end = 0;
		const struct metric_group *found = metric_group_find(p);
		if (!found)
			return shell_error("pmu", "no metric group '%.24s' (pmu metrics list shows them)", p);
		if (ng == METRIC_NGROUPS)
			return shell_error("pmu", "at most %d metric groups", METRIC_NGROUPS);
		g[ng++] = found;
		if ((n = metric_group_events(found, ev, n, MBOX_MUX_MAX)) < 0)
			return shell_error("pmu", "these groups need more than %d events", MBOX_MUX_MAX);
		p = end + 1;
	}
	for (int i = 0; i < n; i++)
		if (!pmu_event_parse(ev[i], &sel[i], err, sizeof(err)))
			return shell_error("pmu", "%s", err); /* a table name libpfm4 lacks */
	memcpy(groups, g, sizeof(g));
	ngroups = ng;
	memcpy(names, ev, sizeof(ev));
	memcpy(evtsel, sel, sizeof(sel));
	nev = n;
	return 0;
}

/* Each chosen event's count on `cpu`, scaled by its time on a counter; 0 or -1 (said why). */
static int counts(uint32_t cpu, struct metric_count *c)
{
	struct pmu_reading r;
	enum pmu_err e = pmu_read(cpu, &r);

	if (e != PMU_OK) {
		kprintf("%3u  %s\n", cpu, e == PMU_ERR_OFFLINE ? "not online" : "not answering");
		return -1;
	}
	for (int j = 0; j < nev; j++) {
		c[j] = (struct metric_count){ .name = names[j] };
		for (uint32_t i = 0; i < r.nev; i++) {
			if (r.evtsel[i] != evtsel[j] || !pmu_counts_event(evtsel[j]))
				continue;
			if (!r.mux) {
				c[j].value = r.value[i];
				c[j].ok = 1;
			} else if (r.running_ticks[i]) {
				/* not ok past 2^64 events */
				c[j].ok = udiv128_64((unsigned __int128)r.value[i] * r.enabled_ticks, r.running_ticks[i],
						     &c[j].value);
			}
		}
	}
	return 0;
}

/* Thousandths as a decimal, "-1.250". */
static void milli_text(int64_t v, char *out, size_t len)
{
	uint64_t a = v < 0 ? -(uint64_t)v : (uint64_t)v;

	snprintf(out, len, "%s%lu.%03lu", v < 0 ? "-" : "", a / 1000, a % 1000);
}

/* Per CPU: the counts the metrics use (scaled), then the metrics, as pmuctl stat -M prints them. */
static void show(const struct cpuset *set)
{
	struct metric_count c[MBOX_MUX_MAX];

	for (uint32_t cpu = 0; cpu < cpu_count; cpu++) {
		if (!cpuset_has(set, cpu) || counts(cpu, c))
			continue;
		kprintf("CPU %u\n", cpu);
		for (int j = 0; j < nev; j++)
			if (c[j].ok)
				kprintf("%20lu      %s\n", c[j].value, c[j].name);
			else
				kprintf("%20s      %s\n", "<not counted>", c[j].name);
		for (int g = 0; g < ngroups; g++) {
			kprintf("\n %s: %s\n\n", groups[g]->name, groups[g]->desc);
			for_each_metric(m, groups[g]) {
				int64_t v;
				char val[32];
				if (metric_value_milli(m, c, nev, tsc_hz, &v) == 0)
					milli_text(v, val, sizeof(val));
				else
					strlcpy(val, "n/a", sizeof(val));
				kprintf("%20s      %-34s %s\n", val, m->name, m->unit);
			}
		}
	}
}

int pmu_metrics_cmd(int argc, char **argv)
{
	struct cpuset set;
	uint64_t ms = PMU_MUX_SLICE_MS_DEFAULT;
	char err[80];

	if (argc == 3 && strcmp(argv[2], "list") == 0) {
		list();
		return 0;
	}
	if (argc > 5)
		return shell_error("pmu", "usage: pmu metrics list | CPUS GROUP[,GROUP...] [slice=MS] | [CPUS]");
	if (argc >= 3 && !cpuset_parse(argv[2], cpu_count, &set, err, sizeof(err)))
		return shell_error("pmu", "%s", err);
	if (argc <= 3) {
		if (!ngroups)
			return shell_error("pmu", "no metric groups chosen yet: pmu metrics CPUS GROUP[,GROUP...]");
		show(argc == 3 ? &set : &chosen);
		return 0;
	}
	if (argc == 5 && (strncmp(argv[4], "slice=", 6) != 0 || !parse_u64(argv[4] + 6, UINT32_MAX, &ms)))
		return shell_error("pmu", "'%.32s' is not slice=MS (MS a number of milliseconds)", argv[4]);
	if (choose(argv[3]))
		return 1;
	struct pmu_result r = pmu_mux_configure(&set, nev, evtsel, 0, pmu_time_to_ticks(ms, 1000, tsc_hz));
	if (r.err) {
		ngroups = 0;
		return pmu_verdict(r);
	}
	chosen = set;
	return 0;
}
