/*
 * Event names as pmuctl takes them: libpfm4's knc PMU (the card's events,
 * Intel 327357-001's names), perf's generic names as Linux's KNC driver
 * maps them (arch/x86/events/intel/knc.c), and raw rUUEE; encode() is in
 * host/pmuctl.h.
 */
#ifndef HOST_PFM_H
#define HOST_PFM_H

#include <stddef.h>

/* One of perf's generic names and the KNC event (libpfm4's name) Linux counts for it. */
struct pfm_generic {
	const char *alias, *knc;
};

/* libpfm4 set up for the knc PMU alone (the card's, not the host's); exits naming what failed. */
void pfm_setup(void);
/* The knc PMU's first event for pfm_get_event_next, after pfm_setup; -1 if it has none. */
int pfm_knc_first_event(void);
/* The i-th generic name (0, 1, ...), or NULL past the last. */
const struct pfm_generic *pfm_generic_at(size_t i);
/* The three event names nearest `name` by edit distance, ignoring case, libpfm4's and the generic ones. */
void pfm_closest(const char *name, const char *best[3]);

#endif
