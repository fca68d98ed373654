/* `pmuctl stat`'s named regions; see host/regions.h. */
#include "host/regions.h"

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

/* One event's count in a region: `val` is its text ("<not counted>" & co. when none). */
static void print_count(const struct stat_format *f, const struct region_total *r, const char *event,
			const char *val, const char *digits)
{
	if (f->json)
		fprintf(f->out, "{\"region\" : \"%s\", \"calls\" : %llu, \"counter-value\" : \"%s\", \"unit\" : \"\", "
			"\"event\" : \"%s\"}\n", r->name, (unsigned long long)r->calls, val, event);
	else if (f->sep)
		fprintf(f->out, "%s%s%s%s%s%s\n", r->name, f->sep, val, f->sep, f->sep, event);
	else
		fprintf(f->table, "%20s      %s\n", digits, event);
}

void regions_print(const struct stat_format *f, const char *const *names, int nev, const int on[2],
		   const char *why, const struct metric_group *const *g, int ng)
{
	for (int k = 0; k < nregions; k++) {
		const struct region_total *r = &regions[k];
		struct metric_count mc[8];
		int n = 0;
		if (!f->json && !f->sep)
			fprintf(f->table, "\n Region '%s': %llu call%s%s\n\n", r->name, (unsigned long long)r->calls,
				r->calls == 1 ? "" : "s", r->open ? " (one still open at exit)" : "");
		if (f->sep)
			fprintf(f->out, "%s%s%llu%s%scalls\n", r->name, f->sep, (unsigned long long)r->calls, f->sep, f->sep);
		if (why) {
			for (int e = 0; e < nev; e++)
				print_count(f, r, names[e], "<not counted>", "<not counted>");
			if (!f->json && !f->sep)
				fprintf(f->table, "\n (%s)\n", why);
			continue;
		}
		for (int i = 0; i < 2; i++) {
			if (on[i] < 0 || on[i] >= nev)
				continue;
			char val[32], digits[40];
			int ok = !r->sampling[i];
			snprintf(val, sizeof(val), ok ? "%llu" : "<sampling>", (unsigned long long)r->count[i]);
			if (ok)
				group_digits(r->count[i], digits);
			else
				snprintf(digits, sizeof(digits), "<sampling>");
			print_count(f, r, names[on[i]], val, digits);
			mc[n++] = (struct metric_count){ names[on[i]], r->count[i], ok };
		}
		metrics_print(f, g, ng, mc, n, -1);
	}
}
