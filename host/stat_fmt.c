/* `pmuctl stat` output; see host/stat_fmt.h. Formats follow perf stat's. */
#include "host/stat_fmt.h"

#include <json-c/json.h>

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
		sum.shared |= d.shared;
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

void stat_interval_text(const struct stat_format *f, double t, char ts[32])
{
	ts[0] = 0;
	if (t >= 0)
		snprintf(ts, 32, f->sep ? "%.9f%s" : "%16.9f ", t, f->sep ? f->sep : "");
}

void json_add_str(struct json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, json_object_new_string(v));
}

void json_add_num(struct json_object *o, const char *key, const char *fmt, double v)
{
	char text[48];

	snprintf(text, sizeof(text), fmt, v);
	json_object_object_add(o, key, json_object_new_double_s(v, text));
}

struct json_object *stat_json_start(double t)
{
	struct json_object *o = json_object_new_object();

	if (t >= 0)
		json_add_num(o, "interval", "%.9f", t);
	return o;
}

void stat_json_end(const struct stat_format *f, struct json_object *o)
{
	fprintf(f->out, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

/*
 * --json: one object per CPU, perf's keys and value types plus `key` ("cpu",
 * --per-thread's "thread"); with --per-core one per core, perf's "core" and
 * "aggregate-number" (nr > 0).
 */
static void print_json(const struct stat_format *f, const char *name, int counted, const char *key, const char *who,
		       int nr, const struct stat_count *d, double t)
{
	char val[40];
	struct json_object *o = stat_json_start(t);

	if (!counted)
		snprintf(val, sizeof(val), "<not supported>");
	else if (!d->running)
		snprintf(val, sizeof(val), "<not counted>");
	else
		snprintf(val, sizeof(val), "%.6f", stat_scale(d));
	json_add_str(o, nr ? "core" : key, who);
	if (nr)
		json_object_object_add(o, "aggregate-number", json_object_new_int(nr));
	json_add_str(o, "counter-value", val);
	json_add_str(o, "unit", "");
	json_add_str(o, "event", name);
	json_object_object_add(o, "event-runtime", json_object_new_int64((int64_t)(d->running * 1e9 / f->tsc_hz + 0.5)));
	json_add_num(o, "pcnt-running", "%.2f", stat_pcnt(d));
	if (f->runs > 1)
		json_add_num(o, "variance", "%.2f", f->noise);
	if (counted && d->running && d->shared)
		json_add_str(o, "note", STAT_SHARED_NOTE);
	stat_json_end(f, o);
}

/* One line of the table or of -x: the count of `sum`, CPU `cpu` ("CPU1") or all of them (""). */
static void print_line(const struct stat_format *f, const char *name, int counted, const struct stat_count *sum,
		       const char *ts, const char *cpu)
{
	double pcnt = stat_pcnt(sum);
	uint64_t v = stat_total(sum);
	const char *none = !counted ? "<not supported>" : !sum->running ? "<not counted>" : NULL;
	char val[40], noise[32] = "";

	int note = !none && sum->shared;
	if (f->sep) { /* perf's -x layout: [time,][CPU,]value,unit,event,[variance,]run time,running percentage[,note] */
		snprintf(val, sizeof(val), "%llu", (unsigned long long)v);
		if (f->runs > 1)
			snprintf(noise, sizeof(noise), "%.2f%%%s", f->noise, f->sep);
		fprintf(f->out, "%s%s%s%s%s%s%s%s%s%.0f%s%.2f%s%s\n", ts, cpu, *cpu ? f->sep : "", none ? none : val, f->sep,
			f->sep, name, f->sep, noise, sum->running * 1e9 / f->tsc_hz, f->sep, pcnt, note ? f->sep : "",
			note ? STAT_SHARED_NOTE : "");
		return;
	}
	if (none)
		snprintf(val, sizeof(val), "%s", none);
	else
		group_digits(v, val);
	if (f->runs > 1)
		snprintf(noise, sizeof(noise), "  ( +- %5.2f%% )", f->noise);
	int part = !none && pcnt < 99.995; /* multiplexed: its share of the time */
	fprintf(f->table, "%s%-*s%20s      %-*s%s", ts, *cpu ? 8 : 0, cpu, val, part || *noise ? 32 : 0, name, noise);
	if (part)
		fprintf(f->table, " (%.2f%%)", pcnt);
	if (note)
		fprintf(f->table, " (%s)", STAT_SHARED_NOTE);
	fprintf(f->table, "\n");
}

/* --per-core: a line per core that has CPUs in `set`, cores in ascending order, perf's S0-D0-Cn and CPU count. */
static void print_per_core(const struct stat_format *f, const char *name, int counted, const struct cpuset *set,
			   const struct stat_count *now, const struct stat_count *then, double t, const char *ts)
{
	uint32_t next = 0;

	for (;;) {
		uint32_t core = UINT32_MAX;
		for (uint32_t cpu = 0; cpu < CPUSET_MAX; cpu++) /* the lowest core at or past `next` */
			if (cpuset_has(set, cpu) && f->core[cpu] >= next && f->core[cpu] < core)
				core = f->core[cpu];
		if (core == UINT32_MAX)
			return;
		struct cpuset mine = { 0 };
		int nr = 0;
		for (uint32_t cpu = 0; cpu < CPUSET_MAX; cpu++)
			if (cpuset_has(set, cpu) && f->core[cpu] == core) {
				cpuset_add(&mine, cpu);
				nr++;
			}
		struct stat_count sum = stat_sum(&mine, now, then);
		char id[24], who[48];
		snprintf(id, sizeof(id), "S0-D0-C%u", core);
		if (f->json) {
			print_json(f, name, counted, "core", id, nr, &sum, t);
		} else {
			if (f->sep)
				snprintf(who, sizeof(who), "%s%s%d", id, f->sep, nr);
			else
				snprintf(who, sizeof(who), "%-12s%4d", id, nr);
			print_line(f, name, counted, &sum, ts, who);
		}
		next = core + 1;
	}
}

/* --per-thread: a line per CPU of `set` with a thread (f->tid), perf's COMM-TID, "%16s-%-8d" in the table. */
static void print_per_thread(const struct stat_format *f, const char *name, int counted, const struct cpuset *set,
			     const struct stat_count *now, const struct stat_count *then, double t, const char *ts)
{
	char who[300];

	for (uint32_t cpu = 0; cpu < CPUSET_MAX; cpu++) {
		if (!cpuset_has(set, cpu) || !f->tid[cpu])
			continue;
		struct stat_count d = since(now, then, cpu);
		snprintf(who, sizeof(who), f->sep || f->json ? "%s-%u" : "%16s-%-8u", f->comm, f->tid[cpu]);
		if (f->json)
			print_json(f, name, counted, "thread", who, 0, &d, t);
		else
			print_line(f, name, counted, &d, ts, who);
	}
}

void stat_print(const struct stat_format *f, const char *name, int counted, const struct cpuset *set,
		const struct stat_count *now, const struct stat_count *then, double t)
{
	char ts[32], cpu_text[16];

	stat_interval_text(f, t, ts);
	if (f->core) {
		print_per_core(f, name, counted, set, now, then, t, ts);
		return;
	}
	if (f->tid) {
		print_per_thread(f, name, counted, set, now, then, t, ts);
		return;
	}
	for (uint32_t cpu = 0; (f->json || f->per_cpu) && cpu < CPUSET_MAX; cpu++)
		if (cpuset_has(set, cpu)) {
			struct stat_count d = since(now, then, cpu);
			snprintf(cpu_text, sizeof(cpu_text), "%u", cpu);
			if (f->json) {
				print_json(f, name, counted, "cpu", cpu_text, 0, &d, t);
				continue;
			}
			snprintf(cpu_text, sizeof(cpu_text), "CPU%u", cpu);
			print_line(f, name, counted, &d, ts, cpu_text);
		}
	if (!f->json && !f->per_cpu) {
		struct stat_count sum = stat_sum(set, now, then);
		print_line(f, name, counted, &sum, ts, "");
	}
}

static int is_table(const struct stat_format *f)
{
	return !f->json && !f->sep;
}

void stat_print_head(const struct stat_format *f, const char *program, const char *cpus)
{
	if (is_table(f))
		fprintf(f->table, "\n Performance counter stats for '%s' (CPUs %s%s%.0d%s):\n\n", program, cpus,
			f->runs > 1 ? ", " : "", f->runs > 1 ? f->runs : 0, f->runs > 1 ? " runs" : "");
}

void stat_print_interval_head(const struct stat_format *f)
{
	if (is_table(f))
		fprintf(f->table, "#           time             counts unit events\n");
}

void stat_print_tail(const struct stat_format *f, double elapsed)
{
	if (!is_table(f))
		return;
	if (f->runs > 1) /* perf's: the mean, its standard deviation and the relative one */
		fprintf(f->table, "\n%16.9f +- %.9f seconds time elapsed  ( +- %5.2f%% )\n\n", elapsed,
			elapsed * f->noise / 100, f->noise);
	else
		fprintf(f->table, "\n%16.9f seconds time elapsed\n\n", elapsed);
	if (f->model_cycles)
		fprintf(f->table, "cycles are the QEMU plugin's KNC timing model's; seconds are the card's TSC, "
				  "QEMU's -icount virtual time\n\n");
}
