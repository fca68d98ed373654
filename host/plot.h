/*
 * `pmuctl stat -I MS --plot FILE`: each event's count per interval over
 * time as a line chart, drawn by gnuplot (Debian's gnuplot-nox, its svg
 * terminal) into FILE, a self-contained SVG. The counts are kept as stat
 * prints them (scaled when events take turns).
 */
#ifndef HOST_PLOT_H
#define HOST_PLOT_H

#include <stdint.h>

/* Up to this many intervals are kept; later ones are dropped with a note. */
#define PLOT_POINTS 100000

/* Interval ending at t seconds: count[e] of event e, for e < nev (nev <= 8, the same every call). */
void plot_add(double t, const uint64_t *count, int nev);

/*
 * Draws the intervals added so far into `path` (SVG) with one line per
 * event names[0..nev), titled `title`. Returns 0, or -1 with a message on
 * stderr (gnuplot missing or failing, no interval to draw).
 */
int plot_write(const char *path, const char *title, const char *const *names, int nev);

#endif
