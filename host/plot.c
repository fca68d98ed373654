/* stat -I's chart through gnuplot; see host/plot.h. */
#include "host/plot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static struct {
	int nev, ncpu;
	const uint32_t *cpus;
	double *t;        /* t[i]: the end of interval i, seconds */
	uint64_t *count;  /* count[i * nev * ncpu + e * ncpu + k] */
	size_t n, cap, max;
} pl;

void plot_setup(int nev, int ncpu, const uint32_t *cpus)
{
	pl.nev = nev;
	pl.ncpu = ncpu;
	pl.cpus = cpus;
	pl.max = PLOT_VALUES / (size_t)(nev * ncpu);
}

void plot_add(double t, const uint64_t *count)
{
	size_t series = (size_t)pl.nev * pl.ncpu;

	if (pl.n >= pl.max) {
		if (pl.n++ == pl.max)
			fprintf(stderr, "pmuctl: --plot: only the first %zu intervals are drawn\n", pl.max);
		return;
	}
	if (pl.n == pl.cap) {
		size_t cap = pl.cap ? 2 * pl.cap : 256;
		double *nt = realloc(pl.t, cap * sizeof(*nt));
		uint64_t *nc = nt ? realloc(pl.count, cap * series * sizeof(*nc)) : NULL;
		if (nt)
			pl.t = nt;
		if (!nc) {
			fprintf(stderr, "pmuctl: --plot: out of memory for %zu intervals\n", pl.n);
			exit(1);
		}
		pl.count = nc;
		pl.cap = cap;
	}
	pl.t[pl.n] = t;
	memcpy(pl.count + pl.n * series, count, series * sizeof(*count));
	pl.n++;
}

/* A string for gnuplot between double quotes (its escapes: backslash and the quote). */
static void quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* Events per second of interval i on series s (event e, line k: e * ncpu + k). */
static double rate(size_t i, int s)
{
	double dt = pl.t[i] - (i ? pl.t[i - 1] : 0);

	return dt > 0 ? pl.count[i * pl.nev * pl.ncpu + s] / dt : 0;
}

/* The unit of event e's axis: the largest power of 1000 (up to G) its largest rate reaches. */
static void unit_of(int e, size_t n, double *div, const char **name)
{
	static const char *const names[] = { "", "k", "M", "G" };
	double top = 0;
	int u = 0;

	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < pl.ncpu; k++)
			top = rate(i, e * pl.ncpu + k) > top ? rate(i, e * pl.ncpu + k) : top;
	for (*div = 1; u < 3 && top >= *div * 1000; u++)
		*div *= 1000;
	*name = names[u];
}

/* Rows of intervals [from, to) in the datablock `name`: the time, then every series' rate in its event's unit. */
static void datablock(FILE *g, const char *name, size_t from, size_t to, const double *div)
{
	fprintf(g, "%s << EOD\n", name);
	for (size_t i = from; i < to; i++) {
		fprintf(g, "%.6f", pl.t[i]);
		for (int s = 0; s < pl.nev * pl.ncpu; s++)
			fprintf(g, " %.9g", rate(i, s) / div[s / pl.ncpu]);
		fputc('\n', g);
	}
	fputs("EOD\n", g);
}

/* Event e's panel: its own y-axis, a line per series, the partial interval as hollow points. */
static void panel(FILE *g, int e, const char *name, const char *unit, size_t full, int partial, double part_ms,
		  int interval_ms)
{
	int keyed = pl.ncpu > 1 && pl.ncpu <= PLOT_KEYED_CPUS;

	fprintf(g, "set ylabel '%s%sevents/s'\n", unit, *unit ? " " : "");
	fputs("set title ", g);
	quoted(g, name);
	fputs(" noenhanced\n", g);
	fputs(e == pl.nev - 1 ? "set xlabel 'time (s)'\n" : "unset xlabel\n", g);
	fputs("plot ", g);
	for (int k = 0; full && k < pl.ncpu; k++) {
		fprintf(g, "%s$full using 1:%d with linespoints lt %d pt 7 ps 0.5 ", k ? ", " : "", 2 + e * pl.ncpu + k,
			k + 1);
		if (keyed)
			fprintf(g, "title 'CPU %u'", pl.cpus[k]);
		else
			fputs("notitle", g);
	}
	for (int k = 0; partial && k < pl.ncpu; k++) {
		fprintf(g, "%s$last using 1:%d with points lt %d pt 6 ps 1.5 ", full || k ? ", " : "", 2 + e * pl.ncpu + k,
			k + 1);
		if (k == 0)
			fprintf(g, "title 'last interval: %.0f ms of %d, its rate'", part_ms, interval_ms);
		else
			fputs("notitle", g);
	}
	fputc('\n', g);
}

int plot_write(const char *path, const char *title, const char *const *names, int interval_ms)
{
	size_t n = pl.n > pl.max ? pl.max : pl.n;
	double div[8];
	const char *unit[8];

	if (!n) {
		fprintf(stderr, "pmuctl: --plot %s: no interval to draw (the program ended within the first -I)\n", path);
		return -1;
	}
	double last_ms = 1000 * (pl.t[n - 1] - (n > 1 ? pl.t[n - 2] : 0));
	int partial = pl.n <= pl.max && last_ms < 0.9 * interval_ms; /* the run ended inside it */
	size_t full = n - partial;
	for (int e = 0; e < pl.nev; e++)
		unit_of(e, n, &div[e], &unit[e]);
	FILE *g = popen("gnuplot", "w");
	if (!g) {
		fprintf(stderr, "pmuctl: --plot: cannot run gnuplot (Debian package gnuplot-nox)\n");
		return -1;
	}
	datablock(g, "$full", 0, full, div);
	datablock(g, "$last", full, n, div);
	fprintf(g, "set terminal svg size 1000,%d dynamic enhanced background rgb 'white' font 'Verdana,11'\n"
		"set output ", 80 + 190 * pl.nev);
	quoted(g, path);
	fputs("\nset multiplot layout ", g);
	fprintf(g, "%d,1 title ", pl.nev);
	quoted(g, title);
	fputs(" noenhanced\nset grid\nset format x '%g'\nset format y '%g'\nset yrange [0:*]\nset lmargin 12\n"
	      "set key below horizontal noenhanced\nset autoscale xfixmax\n", g);
	if (pl.ncpu > PLOT_KEYED_CPUS)
		fprintf(g, "set label 1 'one line per CPU (%d CPUs)' at graph 0.01, graph 0.92\n", pl.ncpu);
	for (int e = 0; e < pl.nev; e++)
		panel(g, e, names[e], unit[e], full, partial, last_ms, interval_ms);
	fputs("unset multiplot\n", g);
	int st = pclose(g);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "pmuctl: --plot %s: gnuplot failed (status %d); is Debian's gnuplot-nox installed?\n",
			path, st == -1 ? -1 : WEXITSTATUS(st));
		return -1;
	}
	return 0;
}
