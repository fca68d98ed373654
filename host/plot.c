/* stat -I's line chart through gnuplot; see host/plot.h. */
#include "host/plot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static struct point {
	double t;
	uint64_t count[8];
} *points;
static size_t npoints;

void plot_add(double t, const uint64_t *count, int nev)
{
	static size_t cap;

	if (npoints == PLOT_POINTS) {
		if (npoints++ == PLOT_POINTS)
			fprintf(stderr, "pmuctl: --plot: only the first %d intervals are drawn\n", PLOT_POINTS);
		return;
	}
	if (npoints == cap) {
		struct point *p = realloc(points, (cap = cap ? 2 * cap : 256) * sizeof(*p));
		if (!p) {
			fprintf(stderr, "pmuctl: --plot: out of memory for %zu intervals\n", npoints);
			exit(1);
		}
		points = p;
	}
	points[npoints].t = t;
	memcpy(points[npoints].count, count, nev * sizeof(*count));
	npoints++;
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

int plot_write(const char *path, const char *title, const char *const *names, int nev)
{
	size_t n = npoints > PLOT_POINTS ? PLOT_POINTS : npoints;

	if (!n) {
		fprintf(stderr, "pmuctl: --plot %s: no interval to draw (the program ended within the first -I)\n", path);
		return -1;
	}
	FILE *g = popen("gnuplot", "w");
	if (!g) {
		fprintf(stderr, "pmuctl: --plot: cannot run gnuplot (Debian package gnuplot-nox)\n");
		return -1;
	}
	/* the data first, as a datablock (gnuplot 5), then the chart */
	fputs("$counts << EOD\n", g);
	for (size_t i = 0; i < n; i++) {
		fprintf(g, "%.6f", points[i].t);
		for (int e = 0; e < nev; e++)
			fprintf(g, " %llu", (unsigned long long)points[i].count[e]);
		fputc('\n', g);
	}
	fputs("EOD\nset terminal svg size 1000,600 dynamic enhanced background rgb 'white'\nset output ", g);
	quoted(g, path);
	fputs("\nset title ", g);
	quoted(g, title);
	fputs(" noenhanced\nset xlabel 'time (s)'\nset ylabel 'events per interval'\nset grid\nset key outside "
	      "bottom center horizontal noenhanced\nset format y '%.3s%c'\nplot ", g);
	for (int e = 0; e < nev; e++) {
		fprintf(g, "%s$counts using 1:%d with linespoints title ", e ? ", " : "", e + 2);
		quoted(g, names[e]);
	}
	fputs("\n", g);
	int st = pclose(g);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "pmuctl: --plot %s: gnuplot failed (status %d); is Debian's gnuplot-nox installed?\n",
			path, st == -1 ? -1 : WEXITSTATUS(st));
		return -1;
	}
	return 0;
}
