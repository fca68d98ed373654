/* `pmuctl stat`'s named regions; see host/regions.h. */
#include "host/regions.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

static struct region_total regions[REGIONS_MAX];
static int nregions;

/* One counter's field: a count or "sampling". Returns 0, or -1 if neither. */
static int parse_count(const char *s, uint64_t *v, int *sampling)
{
	char *end;

	*sampling = strncmp(s, "sampling", 8) == 0;
	if (*sampling)
		return 0;
	if (*s < '0' || *s > '9')
		return -1;
	*v = strtoull(s, &end, 10);
	return end == s ? -1 : 0;
}

int region_parse(const char *line, size_t len, struct region_total *r)
{
	char buf[256];
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
	const char *c0 = strstr(calls, ", counter0 "), *c1 = strstr(calls, ", counter1 ");
	char *end;
	r->calls = strtoull(calls + 8, &end, 10);
	if (!c0 || !c1 || end != c0 || parse_count(c0 + 11, &r->count[0], &r->sampling[0]) ||
	    parse_count(c1 + 11, &r->count[1], &r->sampling[1]))
		return 0;
	r->open = strstr(c1, " (still open)") != NULL;
	return 1;
}

int regions_take_line(const char *line, size_t len)
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
	struct region_total *t = &regions[k];
	memcpy(t->name, r.name, sizeof(t->name));
	t->calls += r.calls;
	for (int i = 0; i < 2; i++) {
		t->count[i] += r.count[i];
		t->sampling[i] |= r.sampling[i];
	}
	t->open |= r.open;
	return 1;
}

/* A region's count of mc (its event on a counter; NULL: the events took turns) as printed. */
static const char *count_text(const struct metric_count *mc, char buf[32])
{
	if (!mc || !mc->ok)
		return !mc ? "<not counted>" : "<sampling>";
	snprintf(buf, 32, "%llu", (unsigned long long)mc->value);
	return buf;
}

/* --json: one object per region, {"region", "calls", "events" : {EVENT : "VALUE"}, "metrics" : [...]}. */
static void print_region_json(const struct stat_format *f, const struct region_total *r, const struct metric_count *mc,
			      int n, const char *const *names, int nev, const char *why,
			      const struct metric_group *const *g, int ng)
{
	struct json_object *o = json_object_new_object(), *events = json_object_new_object();
	struct json_object *metrics = json_object_new_array();
	char val[40];

	json_add_str(o, "region", r->name);
	json_object_object_add(o, "calls", json_object_new_int64((int64_t)r->calls));
	for (int e = 0; e < (why ? nev : n); e++)
		json_add_str(events, why ? names[e] : mc[e].name, count_text(why ? NULL : &mc[e], val));
	json_object_object_add(o, "events", events);
	for (int i = 0; i < ng && !why; i++)
		for_each_metric(m, g[i]) {
			struct json_object *mo = json_object_new_object();
			char unit[96];
			metric_text(m, mc, n, f->tsc_hz, val, sizeof(val));
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
 * -x: "NAME SEP VALUE SEP SEP EVENT" per event (a calls line first), a metric
 * "NAME SEP x5 VALUE SEP UNIT NAME": the region's name where perf's lines
 * have a count or nothing, so they are told apart from the run's. --json
 * (print_region_json) has no "event" key, perf's objects have one.
 */
static void print_region(const struct stat_format *f, const struct region_total *r, const struct metric_count *mc,
			 int n, const char *const *names, int nev, const char *why, const struct metric_group *const *g,
			 int ng)
{
	char val[40];

	if (f->json) {
		print_region_json(f, r, mc, n, names, nev, why, g, ng);
		return;
	}
	fprintf(f->out, "%s%s%llu%s%scalls\n", r->name, f->sep, (unsigned long long)r->calls, f->sep, f->sep);
	for (int e = 0; e < (why ? nev : n); e++)
		fprintf(f->out, "%s%s%s%s%s%s\n", r->name, f->sep, count_text(why ? NULL : &mc[e], val), f->sep, f->sep,
			why ? names[e] : mc[e].name);
	for (int i = 0; i < ng && !why; i++)
		for_each_metric(m, g[i]) {
			metric_text(m, mc, n, f->tsc_hz, val, sizeof(val));
			fprintf(f->out, "%s%s%s%s%s%s%s%s%s %s\n", r->name, f->sep, f->sep, f->sep, f->sep, f->sep, val,
				f->sep, m->unit, m->name);
		}
}

void regions_print(const struct stat_format *f, const char *const *names, int nev, const int on[2],
		   const char *why, const struct metric_group *const *g, int ng)
{
	uint64_t runs = f->runs > 1 ? (uint64_t)f->runs : 1;

	for (int k = 0; k < nregions; k++) {
		struct region_total mean = regions[k], *r = &mean; /* -r N: a run's mean, as stat's counts */
		r->calls = (r->calls + runs / 2) / runs;
		for (int i = 0; i < 2; i++)
			r->count[i] = (r->count[i] + runs / 2) / runs;
		struct metric_count mc[2];
		int n = 0;
		for (int i = 0; i < 2 && !why; i++)
			if (on[i] >= 0 && on[i] < nev)
				mc[n++] = (struct metric_count){ names[on[i]], r->count[i], !r->sampling[i] };
		if (f->json || f->sep) {
			print_region(f, r, mc, n, names, nev, why, g, ng);
			continue;
		}
		fprintf(f->table, "\n Region '%s': %llu call%s%s%s\n\n", r->name, (unsigned long long)r->calls,
			r->calls == 1 ? "" : "s", runs > 1 ? ", a run's mean" : "",
			r->open ? " (one still open at exit)" : "");
		for (int e = 0; e < (why ? nev : n); e++) {
			char digits[40];
			if (why || !mc[e].ok)
				snprintf(digits, sizeof(digits), "%s", count_text(why ? NULL : &mc[e], digits));
			else
				group_digits(mc[e].value, digits);
			fprintf(f->table, "%20s      %s\n", digits, why ? names[e] : mc[e].name);
		}
		if (why)
			fprintf(f->table, "\n (%s)\n", why);
		else
			metrics_print(f, g, ng, mc, n, -1);
	}
}
