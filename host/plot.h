/*
 * `pmuctl stat -I MS --plot FILE`: each event's rate over time, drawn by
 * gnuplot (Debian's gnuplot-nox, its svg terminal) into FILE, a
 * self-contained SVG. One panel per event, each with its own y-axis in
 * events per second with a unit (k, M, G) chosen for its largest value, so
 * a rare event is not flattened under a frequent one; one line per CPU with
 * -A, else the CPUs' sum. A rate, not a count per interval, so the last,
 * partial interval is no cliff; it is drawn as a hollow point and the
 * legend says how long it was. The counts are stat's (scaled when events
 * take turns).
 */
#ifndef HOST_PLOT_H
#define HOST_PLOT_H

#include <stdint.h>

/* Values kept at most (intervals x series); later intervals are dropped with a note. */
#define PLOT_VALUES (1u << 22)
/* Lines per panel up to which the legend names each CPU. */
#define PLOT_KEYED_CPUS 16

/*
 * The chart's series before the first plot_add: `nev` events (1..8), each
 * on `ncpu` lines: CPU cpus[k] (with -A), or with ncpu 1 and cpus NULL
 * the CPUs' sum.
 */
void plot_setup(int nev, int ncpu, const uint32_t *cpus);

/*
 * The interval ending at `t` seconds after the start: count[e * ncpu + k],
 * events of event e on line k since the interval before. Exits with a
 * message when out of memory.
 */
void plot_add(double t, const uint64_t *count);

/*
 * Draws the intervals added so far into `path` (SVG), titled `title`,
 * events named names[0..nev), `interval_ms` the -I period (a shorter last
 * interval is marked as partial). Returns 0, or -1 with a message on stderr
 * (gnuplot missing or failing, no interval to draw).
 */
int plot_write(const char *path, const char *title, const char *const *names, int interval_ms);

#endif
