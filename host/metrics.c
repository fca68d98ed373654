/* `pmuctl stat -M`: metric values in floating point and their output; see host/metrics.h. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "host/metrics.h"

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
