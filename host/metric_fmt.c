/* `pmuctl stat -M`: metric values in floating point and their output; see host/metric_fmt.h. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "host/metric_fmt.h"

int metric_value(const struct metric *m, const struct metric_count *c, int n, uint64_t tsc_hz, double *v)
{
	int64_t num, den;

	if (metric_sums(m, c, n, &num, &den) || (m->per_second && !tsc_hz))
		return -1;
	if (!m->per_second) {
		*v = (double)m->scale * num / den;
		return 0;
	}
	*v = (double)m->scale * num / ((double)den / tsc_hz) / m->per_second;
	return 0;
}

void metric_text(const struct metric *m, const struct metric_count *c, int n, uint64_t tsc_hz, char *out, size_t len)
{
	double v;

	if (metric_value(m, c, n, tsc_hz, &v) == 0)
		snprintf(out, len, fabs(v) >= 1e6 ? "%.0f" : "%.6g", v);
	else
		snprintf(out, len, "n/a");
}

/* The column heading of metric m, "UNIT NAME", and its width in the table. */
static int column(const struct metric *m, char *out, size_t len)
{
	int n = snprintf(out, len, "%s %s", m->unit, m->name);
	return n > 12 ? n : 12;
}

void metrics_print_columns_head(const struct stat_format *f, const struct metric_group *const *g, int ng)
{
	char unit[96];
	const char *sep = f->sep ? f->sep : "  ";

	if (f->json)
		return;
	FILE *out = f->sep ? f->out : f->table;
	for (int i = 0; i < ng; i++)
		for_each_metric(m, g[i]) {
			int w = column(m, unit, sizeof(unit));
			fprintf(out, "%s%*s", i || m != g[i]->metrics ? sep : "", f->sep ? 0 : w, unit);
		}
	fputc('\n', out);
}

void metrics_print_columns(const struct stat_format *f, const struct metric_group *const *g, int ng,
			   const struct metric_count *c, int n, double t)
{
	char ts[32], unit[96], val[40];
	const char *sep = f->sep ? f->sep : "  ";
	struct json_object *o = f->json ? stat_json_start(t) : NULL;
	FILE *out = f->sep ? f->out : f->table;

	stat_interval_text(f, t, ts);
	if (!o)
		fputs(ts, out);
	for (int i = 0; i < ng; i++)
		for_each_metric(m, g[i]) {
			int w = column(m, unit, sizeof(unit));
			metric_text(m, c, n, f->tsc_hz, val, sizeof(val));
			if (o)
				json_add_str(o, unit, val);
			else
				fprintf(out, "%s%*s", i || m != g[i]->metrics ? sep : "", f->sep ? 0 : w, val);
		}
	if (o)
		stat_json_end(f, o);
	else
		fputc('\n', out);
}

void metrics_print(const struct stat_format *f, const struct metric_group *const *g, int ng,
		   const struct metric_count *c, int n, double t)
{
	char ts[32];

	stat_interval_text(f, t, ts);
	for (int i = 0; i < ng; i++) {
		if (!f->json && !f->sep && t < 0)
			fprintf(f->table, "\n %s: %s\n\n", g[i]->name, g[i]->desc);
		for_each_metric(m, g[i]) {
			char val[40], unit[96];
			metric_text(m, c, n, f->tsc_hz, val, sizeof(val));
			snprintf(unit, sizeof(unit), "%s %s", m->unit, m->name);
			if (f->json) {
				struct json_object *o = stat_json_start(t);
				json_add_str(o, "metric-value", val);
				json_add_str(o, "metric-unit", unit);
				json_add_str(o, "metric-group", g[i]->name);
				stat_json_end(f, o);
			} else if (f->sep)
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
