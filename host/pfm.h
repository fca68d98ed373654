/*
 * Event names as pmuctl takes them: libpfm4's table of the card's PMU
 * (knc: Intel 327357-001's names; knl; ix86arch), perf's generic names as
 * Linux's driver for it maps them (arch/x86/events/intel/knc.c, core.c),
 * and raw rUUEE; encode() is in host/pmuctl.h.
 */
#ifndef HOST_PFM_H
#define HOST_PFM_H

#include <stddef.h>
#include <stdint.h>

/* One of perf's generic names and the PMU's event (libpfm4's name) Linux counts for it. */
struct pfm_generic {
	const char *alias, *event;
};

/*
 * libpfm4 set up for one PMU alone (the card's, not the host's): libpfm4's
 * name of it, as the card's mailbox header gives it (mbox_header.pmu:
 * "knc", "knl", "ix86arch"), or NULL for knc (no card). A name pmuctl does
 * not know is warned of, and knc's names serve. Exits naming what failed.
 */
void pfm_setup(const char *pmu);
/* The name of the PMU pfm_setup set up, and its index (0 knc, 1 knl, 2 ix86arch: a recording's rec_header.pmu). */
const char *pfm_pmu_name(void);
uint32_t pfm_pmu_index(void);
/* The name of PMU index i, or NULL (knc's names then) for one pmuctl does not know. */
const char *pfm_pmu_at(uint32_t i);
/* Its first event for pfm_get_event_next, after pfm_setup; -1 if it has none. */
int pfm_first_event(void);
/* The i-th generic name (0, 1, ...), or NULL past the last. */
const struct pfm_generic *pfm_generic_at(size_t i);
/* The three event names nearest `name` by edit distance, ignoring case, libpfm4's and the generic ones. */
void pfm_closest(const char *name, const char *best[3]);

#endif
