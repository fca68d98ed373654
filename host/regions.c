/* `pmuctl stat`'s named regions; see host/regions.h. */
#include "host/regions.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cpuset.h"

static struct region_total regions[REGIONS_MAX];
static int nregions;
/* -A: region k's totals of the tasks on CPU c alone, in by_cpu[k][c]; calls or ticks say a CPU ran it */
static struct region_total by_cpu[REGIONS_MAX][CPUSET_MAX];

/*
 * One counter's field after "calls N" or the counter before: `tag` (", ",
 * or ", fixed " for a fixed counter), then "WHAT V", WHAT its event's name
 * (user/regions.c) or counterK, V a count or "sampling"; WHAT into
 * name[REGION_NAME] unless name is NULL. Returns what follows it, or NULL
 * if s is no such field.
 */
static const char *parse_counter(const char *s, const char *tag, uint64_t *v, int *sampling, char *name)
{
	const char *what = s + strlen(tag), *space = strchr(what, ' ');
	char *end;

	if (strncmp(s, tag, strlen(tag)) || !space || space == what || memchr(what, ',', space - what))
		return NULL;
	if (name) {
		if (space - what >= REGION_NAME)
			return NULL;
		memcpy(name, what, space - what);
		name[space - what] = 0;
	}
	*sampling = strncmp(space + 1, "sampling", 8) == 0;
	if (*sampling)
		return space + 9;
	if (space[1] < '0' || space[1] > '9')
		return NULL;
	*v = strtoull(space + 1, &end, 10);
	return end;
}

/*
 * The line's end after the counts: ", tsc D" (the calls' TSC ticks; a
 * program built before it has none), " (still open)", the newline.
 * Returns 0, or -1 if anything else follows.
 */
static int parse_end(const char *s, struct region_total *r)
{
	char *end;

	if (!strncmp(s, ", tsc ", 6) && s[6] >= '0' && s[6] <= '9') {
		r->ticks = strtoull(s + 6, &end, 10);
		s = end;
	}
	r->open = strncmp(s, " (still open)", 13) == 0;
	for (s += r->open ? 13 : 0; *s == '\r' || *s == '\n'; s++)
		;
	return *s ? -1 : 0;
}

/* The taking-turns fields after "calls N": ", enabled T, events V/R ...". Returns 0, or -1. */
static int parse_turns(const char *s, struct region_total *r)
{
	char *end;

	if (strncmp(s, ", enabled ", 10) || s[10] < '0' || s[10] > '9')
		return -1;
	r->enabled = strtoull(s + 10, &end, 10);
	if (strncmp(end, ", events", 8))
		return -1;
	for (s = end + 8; *s == ' ' && s[1] >= '0' && s[1] <= '9'; s = end) {
		if (r->nev == REGION_EVENTS)
			return -1;
		r->value[r->nev] = strtoull(s + 1, &end, 10);
		if (*end != '/' || end[1] < '0' || end[1] > '9')
			return -1;
		r->running[r->nev++] = strtoull(end + 1, &end, 10);
	}
	return r->nev ? parse_end(s, r) : -1;
}

int region_parse(const char *line, size_t len, struct region_total *r)
{
	char buf[512];
	const char *calls;

	if (len >= sizeof(buf) || len < 8 || memcmp(line, "region ", 7))
		return 0;
	memcpy(buf, line, len);
	buf[len] = 0;
	/* the name runs to the last ": calls " (a name may hold ": ") */
	for (const char *p = strstr(buf, ": calls "); p; p = strstr(p + 1, ": calls "))
		calls = p;
	if (!strstr(buf, ": calls ") || calls - (buf + 7) >= (long)sizeof(r->name) || calls == buf + 7)
		return 0;
	memset(r, 0, sizeof(*r));
	memcpy(r->name, buf + 7, calls - (buf + 7));
	char *end;
	if (calls[8] < '0' || calls[8] > '9')
		return 0;
	r->calls = strtoull(calls + 8, &end, 10);
	if (!strncmp(end, ", enabled ", 10))
		return parse_turns(end, r) == 0;
	const char *s = parse_counter(end, ", ", &r->count[0], &r->sampling[0], NULL);
	if (!s || !(s = parse_counter(s, ", ", &r->count[1], &r->sampling[1], NULL)))
		return 0;
	while (!strncmp(s, ", fixed ", 8)) { /* the fixed counters, which never sample */
		int sampling;
		if (r->nfixed == REGION_FIXED)
			return 0;
		s = parse_counter(s, ", fixed ", &r->fixed[r->nfixed], &sampling, r->fixed_name[r->nfixed]);
		if (!s || sampling)
			return 0;
		r->nfixed++;
	}
	return parse_end(s, r) == 0;
}

/* Adds one line's region r to the totals t. */
static void add(struct region_total *t, const struct region_total *r)
{
	memcpy(t->name, r->name, sizeof(t->name));
	t->calls += r->calls;
	t->ticks += r->ticks;
	if (r->nev > t->nev)
		t->nev = r->nev;
	t->enabled += r->enabled;
	for (int e = 0; e < r->nev; e++) {
		t->value[e] += r->value[e];
		t->running[e] += r->running[e];
	}
	for (int i = 0; i < PMU_SAMPLE_COUNTERS; i++) {
		t->count[i] += r->count[i];
		t->sampling[i] |= r->sampling[i];
	}
	for (int j = 0; j < r->nfixed; j++) {
		memcpy(t->fixed_name[j], r->fixed_name[j], sizeof(t->fixed_name[j]));
		t->fixed[j] += r->fixed[j];
	}
	if (r->nfixed > t->nfixed)
		t->nfixed = r->nfixed;
	t->open |= r->open;
}

int regions_take_line(const char *line, size_t len, uint32_t cpu)
{
	struct region_total r;
	int k = 0;

	if (!region_parse(line, len, &r))
		return 0;
	while (k < nregions && strcmp(regions[k].name, r.name))
		k++;
	if (k == REGIONS_MAX)
		return 0; /* printed as the program wrote it */
	if (k == nregions)
		regions[nregions++] = (struct region_total){ .calls = 0 };
	add(&regions[k], &r);
	if (cpu < CPUSET_MAX)
		add(&by_cpu[k][cpu], &r);
	return 1;
}

/*
 * A region's events as printed: mc[0..n) (names, counts, whether known),
 * none[e] the text in place of an unknown count, pcnt[e] the event's share
 * of the region's time on a counter (scaled: under 100); `why` no event is
 * counted (then mc names every event of stat's, none of them counted).
 */
struct region_view {
	struct metric_count mc[REGION_EVENTS + REGION_FIXED];
	const char *none[REGION_EVENTS + REGION_FIXED];
	double pcnt[REGION_EVENTS + REGION_FIXED];
	int n, turns;
	const char *why;
	bool shared; /* the counts include other threads' (regions_print) */
};

static void view_of(struct region_view *v, const struct region_total *r, const char *const *names, int nev,
		    const int on[PMU_SAMPLE_COUNTERS], const char *why, const char *turns)
{
	memset(v, 0, sizeof(*v));
	v->turns = r->nev > 0;
	v->why = why ? why : !r->nev ? turns : r->nev != nev ? "the program's events are not stat's" : NULL;
	if (v->why) {
		for (v->n = 0; v->n < nev && v->n < REGION_EVENTS; v->n++) {
			v->mc[v->n] = (struct metric_count){ names[v->n], 0, 0 };
			v->none[v->n] = "<not counted>";
		}
		return;
	}
	if (v->turns) {
		for (int e = 0; e < nev; e++) {
			struct stat_count c = { r->value[e], r->enabled, r->running[e], false };
			v->mc[v->n] = (struct metric_count){ names[e], stat_total(&c), c.running > 0 };
			v->none[v->n] = c.running ? NULL : "<not counted>";
			v->pcnt[v->n++] = stat_pcnt(&c);
		}
		return;
	}
	for (int i = 0; i < PMU_SAMPLE_COUNTERS; i++)
		if (on[i] >= 0 && on[i] < nev) {
			v->mc[v->n] = (struct metric_count){ names[on[i]], r->count[i], !r->sampling[i] };
			v->none[v->n] = r->sampling[i] ? "<sampling>" : NULL;
			v->pcnt[v->n++] = 100.0;
		}
	for (int j = 0; j < r->nfixed; j++) {
		v->mc[v->n] = (struct metric_count){ r->fixed_name[j], r->fixed[j], true };
		v->pcnt[v->n++] = 100.0;
	}
}

/* Event e's count as printed: the number, grouped by thousands for the table (`group`), or why none. */
static const char *count_text(const struct region_view *v, int e, int group, char buf[40])
{
	if (v->none[e])
		return v->none[e];
	if (group)
		group_digits(v->mc[e].value, buf);
	else
		snprintf(buf, 40, "%llu", (unsigned long long)v->mc[e].value);
	return buf;
}

/* The region's calls' time in seconds (its TSC ticks at the card's rate); < 0 when the line had none. */
static double region_seconds(const struct stat_format *f, const struct region_total *r)
{
	return r->ticks && f->tsc_hz ? (double)r->ticks / f->tsc_hz : -1;
}

/*
 * --json: one object per region, {"region", "calls", "seconds", "events" :
 * {EVENT : "VALUE"}, "metrics" : [...]}, with "pcnt-running" : {EVENT :
 * PERCENT} when the events took turns, "cpu" : "N" for one CPU's (-A), no
 * "events" with --metric-only.
 */
static void print_region_json(const struct stat_format *f, const struct region_total *r,
			      const struct region_view *v, const struct metric_group *const *g, int ng, int cpu)
{
	struct json_object *o = json_object_new_object(), *events = json_object_new_object();
	struct json_object *metrics = json_object_new_array(), *pcnt = json_object_new_object();
	char val[40];

	json_add_str(o, "region", r->name);
	if (cpu >= 0) {
		snprintf(val, sizeof(val), "%d", cpu);
		json_add_str(o, "cpu", val);
	}
	json_object_object_add(o, "calls", json_object_new_int64((int64_t)r->calls));
	if (region_seconds(f, r) >= 0)
		json_add_num(o, "seconds", "%.9f", region_seconds(f, r));
	for (int e = 0; e < v->n; e++) {
		json_add_str(events, v->mc[e].name, count_text(v, e, 0, val));
		if (v->turns)
			json_add_num(pcnt, v->mc[e].name, "%.2f", v->pcnt[e]);
	}
	if (f->metric_only)
		json_object_put(events);
	else
		json_object_object_add(o, "events", events);
	if (v->shared && !v->why)
		json_add_str(o, "note", STAT_SHARED_NOTE);
	if (v->turns && !f->metric_only)
		json_object_object_add(o, "pcnt-running", pcnt);
	else
		json_object_put(pcnt);
	for (int i = 0; i < ng && !v->why; i++)
		for_each_metric(m, g[i]) {
			struct json_object *mo = json_object_new_object();
			char unit[96];
			metric_text(m, v->mc, v->n, f->tsc_hz, val, sizeof(val));
			snprintf(unit, sizeof(unit), "%s %s", m->unit, m->name);
			json_add_str(mo, "metric-value", val);
			json_add_str(mo, "metric-unit", unit);
			json_add_str(mo, "metric-group", g[i]->name);
			json_object_array_add(metrics, mo);
		}
	json_object_object_add(o, "metrics", metrics);
	stat_json_end(f, o);
}

/*
 * -x: "NAME SEP VALUE SEP SEP EVENT" per event (a calls line first, then
 * "NAME SEP SECONDS SEP s SEP time"; with "SEP PERCENT" on a counter when
 * the events took turns), a metric "NAME SEP x5 VALUE SEP UNIT NAME": the
 * region's name where perf's lines have a count or nothing, so they are
 * told apart from the run's; one CPU's lines (-A) start "CPUn SEP" as
 * perf's do, and --metric-only leaves the events out. --json
 * (print_region_json) has no "event" key, perf's objects have one.
 */
static void print_region(const struct stat_format *f, const struct region_total *r, const struct region_view *v,
			 const struct metric_group *const *g, int ng, int cpu)
{
	char val[40], who[80];

	if (f->json) {
		print_region_json(f, r, v, g, ng, cpu);
		return;
	}
	if (cpu >= 0)
		snprintf(who, sizeof(who), "CPU%d%s%s", cpu, f->sep, r->name);
	else
		snprintf(who, sizeof(who), "%s", r->name);
	fprintf(f->out, "%s%s%llu%s%scalls\n", who, f->sep, (unsigned long long)r->calls, f->sep, f->sep);
	if (region_seconds(f, r) >= 0)
		fprintf(f->out, "%s%s%.9f%ss%stime\n", who, f->sep, region_seconds(f, r), f->sep, f->sep);
	for (int e = 0; e < v->n && !f->metric_only; e++) {
		fprintf(f->out, "%s%s%s%s%s%s", who, f->sep, count_text(v, e, 0, val), f->sep, f->sep, v->mc[e].name);
		if (v->turns)
			fprintf(f->out, "%s%.2f", f->sep, v->pcnt[e]);
		if (v->shared && !v->none[e])
			fprintf(f->out, "%s%s", f->sep, STAT_SHARED_NOTE);
		fputc('\n', f->out);
	}
	for (int i = 0; i < ng && !v->why; i++)
		for_each_metric(m, g[i]) {
			metric_text(m, v->mc, v->n, f->tsc_hz, val, sizeof(val));
			fprintf(f->out, "%s%s%s%s%s%s%s%s%s %s\n", who, f->sep, f->sep, f->sep, f->sep, f->sep, val,
				f->sep, m->unit, m->name);
		}
}

/* The table of one region (all CPUs' totals, or CPU `cpu`'s): its head, its counts, its metrics. */
static void print_region_table(const struct stat_format *f, const struct region_total *r,
			       const struct region_view *v, const struct metric_group *const *g, int ng, int cpu,
			       uint64_t runs)
{
	char on[24] = "", took[48] = "";

	if (cpu >= 0)
		snprintf(on, sizeof(on), " on CPU %d", cpu);
	if (region_seconds(f, r) >= 0)
		snprintf(took, sizeof(took), ", %.9f s", region_seconds(f, r));
	fprintf(f->table, "\n Region '%s'%s: %llu call%s%s%s%s\n\n", r->name, on, (unsigned long long)r->calls,
		r->calls == 1 ? "" : "s", took, runs > 1 ? ", a run's mean" : "",
		r->open ? " (one still open at exit)" : "");
	if (f->metric_only && !v->why) {
		metrics_print_columns_head(f, g, ng);
		metrics_print_columns(f, g, ng, v->mc, v->n, -1);
		return;
	}
	for (int e = 0; e < v->n; e++) {
		char digits[40];
		int part = !v->none[e] && v->pcnt[e] < 99.995; /* scaled: marked as stat marks it */
		fprintf(f->table, "%20s      %-*s", count_text(v, e, 1, digits), part ? 32 : 0, v->mc[e].name);
		if (part)
			fprintf(f->table, " (%.2f%%)", v->pcnt[e]);
		if (v->shared && !v->none[e])
			fprintf(f->table, " (%s)", STAT_SHARED_NOTE);
		fputc('\n', f->table);
	}
	if (v->why)
		fprintf(f->table, "\n (%s)\n", v->why);
	else
		metrics_print(f, g, ng, v->mc, v->n, -1);
}

/* One region's totals r as printed: in every format, a run's mean with -r. */
static void print_one(const struct stat_format *f, struct region_total mean, const char *const *names, int nev,
		      const int on[PMU_SAMPLE_COUNTERS], const char *why, const char *turns, const struct metric_group *const *g,
		      int ng, bool shared, int cpu)
{
	uint64_t runs = f->runs > 1 ? (uint64_t)f->runs : 1;
	struct region_total *r = &mean; /* -r N: a run's mean, as stat's counts */
	struct region_view v;

	r->calls = (r->calls + runs / 2) / runs;
	r->ticks = (r->ticks + runs / 2) / runs;
	for (int i = 0; i < PMU_SAMPLE_COUNTERS; i++)
		r->count[i] = (r->count[i] + runs / 2) / runs;
	for (int j = 0; j < r->nfixed; j++)
		r->fixed[j] = (r->fixed[j] + runs / 2) / runs;
	for (int e = 0; e < r->nev; e++)
		r->value[e] = (r->value[e] + runs / 2) / runs; /* the time's shares are the runs' together */
	view_of(&v, r, names, nev, on, why, turns);
	v.shared = shared;
	if (f->json || f->sep)
		print_region(f, r, &v, g, ng, cpu);
	else
		print_region_table(f, r, &v, g, ng, cpu, runs);
}

void regions_print(const struct stat_format *f, const char *const *names, int nev, const int on[PMU_SAMPLE_COUNTERS],
		   const char *why, const char *turns, const struct metric_group *const *g, int ng, bool shared)
{
	for (int k = 0; k < nregions; k++) {
		print_one(f, regions[k], names, nev, on, why, turns, g, ng, shared, -1);
		for (int c = 0; f->per_cpu && c < CPUSET_MAX; c++)
			if (by_cpu[k][c].calls || by_cpu[k][c].open)
				print_one(f, by_cpu[k][c], names, nev, on, why, turns, g, ng, shared, c);
	}
}
