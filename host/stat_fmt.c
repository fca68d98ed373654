/* `pmuctl stat` output; see host/stat_fmt.h. Formats follow perf stat's. */
#include "host/stat_fmt.h"

double stat_scale(const struct stat_count *c)
{
	return c->running ? (double)c->value * c->enabled / c->running : 0;
}

double stat_pcnt(const struct stat_count *c)
{
	return c->enabled ? 100.0 * c->running / c->enabled : 100.0;
}

/* One CPU's counts since `then` (NULL: since the start). */
static struct stat_count since(const struct stat_count *now, const struct stat_count *then, uint32_t cpu)
{
	struct stat_count d = now[cpu];

	if (then) {
		d.value -= then[cpu].value;
		d.enabled -= then[cpu].enabled;
		d.running -= then[cpu].running;
	}
	return d;
}

struct stat_count stat_sum(const struct cpuset *set, const struct stat_count *now, const struct stat_count *then)
{
	struct stat_count sum = { 0 };

	for (uint32_t cpu = 0; cpu < CPUSET_MAX; cpu++) {
		if (!cpuset_has(set, cpu))
			continue;
		struct stat_count d = since(now, then, cpu);
		sum.value += d.value;
		sum.enabled += d.enabled;
		sum.running += d.running;
	}
	return sum;
}

uint64_t stat_total(const struct stat_count *sum)
{
	return sum->running ? (uint64_t)(stat_scale(sum) + 0.5) : 0;
}

void group_digits(uint64_t v, char *out)
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

void stat_interval_text(const struct stat_format *f, double t, char ts[32], char json_t[48])
{
	ts[0] = json_t[0] = 0;
	if (t >= 0) {
		snprintf(ts, 32, f->sep ? "%.9f%s" : "%16.9f ", t, f->sep ? f->sep : "");
		snprintf(json_t, 48, "\"interval\" : %.9f, ", t);
	}
}

/* --json: one object per CPU, perf's keys plus "cpu". */
static void print_json(const struct stat_format *f, const char *name, int counted, uint32_t cpu,
		       const struct stat_count *d, const char *json_t)
{
	char val[40];

	if (!counted)
		snprintf(val, sizeof(val), "<not supported>");
	else if (!d->running)
		snprintf(val, sizeof(val), "<not counted>");
	else
		snprintf(val, sizeof(val), "%.6f", stat_scale(d));
	fprintf(f->out, "{%s\"cpu\" : \"%u\", \"counter-value\" : \"%s\", \"unit\" : \"\", \"event\" : \"%s\", "
		"\"event-runtime\" : %.0f, \"pcnt-running\" : %.2f}\n", json_t, cpu, val, name,
		d->running * 1e9 / f->tsc_hz, stat_pcnt(d));
}

void stat_print(const struct stat_format *f, const char *name, int counted, const struct cpuset *set,
		const struct stat_count *now, const struct stat_count *then, double t)
{
	char ts[32], json_t[48];

	stat_interval_text(f, t, ts, json_t);
	if (f->json) {
		for (uint32_t cpu = 0; cpu < CPUSET_MAX; cpu++)
			if (cpuset_has(set, cpu)) {
				struct stat_count d = since(now, then, cpu);
				print_json(f, name, counted, cpu, &d, json_t);
			}
		return;
	}
	struct stat_count sum = stat_sum(set, now, then);
	double pcnt = stat_pcnt(&sum);
	uint64_t v = stat_total(&sum);
	const char *none = !counted ? "<not supported>" : !sum.running ? "<not counted>" : NULL;
	char val[40];
	if (f->sep) { /* perf's -x layout: [time,] value, unit, event, run time, running percentage */
		snprintf(val, sizeof(val), "%llu", (unsigned long long)v);
		fprintf(f->out, "%s%s%s%s%s%s%.0f%s%.2f\n", ts, none ? none : val, f->sep, f->sep, name, f->sep,
			sum.running * 1e9 / f->tsc_hz, f->sep, pcnt);
		return;
	}
	if (none)
		snprintf(val, sizeof(val), "%s", none);
	else
		group_digits(v, val);
	if (!none && pcnt < 99.995)
		fprintf(f->table, "%s%20s      %-32s (%.2f%%)\n", ts, val, name, pcnt);
	else
		fprintf(f->table, "%s%20s      %s\n", ts, val, name);
}

static int is_table(const struct stat_format *f)
{
	return !f->json && !f->sep;
}

void stat_print_head(const struct stat_format *f, const char *program, const char *cpus)
{
	if (is_table(f))
		fprintf(f->table, "\n Performance counter stats for '%s' (CPUs %s):\n\n", program, cpus);
}

void stat_print_interval_head(const struct stat_format *f)
{
	if (is_table(f))
		fprintf(f->table, "#           time             counts unit events\n");
}

void stat_print_tail(const struct stat_format *f, double elapsed)
{
	if (is_table(f))
		fprintf(f->table, "\n%16.9f seconds time elapsed\n\n", elapsed);
}
