/*
 * The card's event names and strings (docs/design.md §5.3): its PMU's
 * table, KNC's or Knights Landing's, each generated at build time from
 * libpfm4 (pmu/gen_events.c). Event strings follow libpfm4:
 * "[PMU::]NAME[:UMASK][:mod...]" (PMU knc or knl, UMASK for an event that
 * has unit masks: KNL's) with modifiers u (USR), k (OS), e (edge),
 * i (invert), c=N (CMASK 0-255), t (any thread); or a raw "rHEX" (umask << 8 |
 * event, optionally with the upper EvtSel fields) with the same modifiers.
 * Names, the prefix and modifiers are case-insensitive. Without u or
 * k an event counts at every privilege level, unless a raw value already sets
 * USR or OS.
 */
#ifndef PMU_EVENTS_H
#define PMU_EVENTS_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>

struct pmu_event {
	const char *name; /* "BRANCHES", "MEM_UOPS_RETIRED:L1_MISS_LOADS" */
	uint16_t code;    /* umask << 8 | event */
	const char *desc;
};

/*
 * The card's table from now on: that of the PMU libpfm4 names `pfm` (the
 * description's: "knl" Knights Landing's; KNC's for any other). The kernel
 * chooses at pmu_init; KNC's until then, and on the host (pmuctl names
 * events through libpfm4 itself, host/pfm.c).
 */
void pmu_events_use(const char *pfm);
/* The table's PMU, as libpfm4 names it ("knc", "knl"): its strings' prefix. */
const char *pmu_events_pmu(void);

size_t pmu_event_count(void);
const struct pmu_event *pmu_event_at(size_t i);
/* The first event whose code matches EvtSel's umask and event fields, or NULL. */
const struct pmu_event *pmu_event_by_code(uint32_t evtsel);
/* Event with this exact (libpfm4) name, or NULL. */
const struct pmu_event *pmu_event_named(const char *name);
/* KNC's event of this exact name, whatever the card's table: the plugin counts by KNC's codes. */
const struct pmu_event *knc_event_named(const char *name);
/*
 * What the software PMU counts for the event named `name`: its definition
 * (pmu/plugin_events.h), with *plugin true if the QEMU plugin counts it,
 * false if the model does; NULL if neither does.
 */
const char *pmu_event_definition(const char *name, bool *plugin);

/*
 * Parses an event string into an EvtSel value without EN and INT. Returns
 * true, or false with a message naming the bad part in err.
 */
bool pmu_event_parse(const char *s, uint32_t *evtsel, char *err, size_t errlen);
/* Formats evtsel in event-string syntax ("INSTRUCTIONS_EXECUTED:k:c=1"). */
void pmu_event_format(uint32_t evtsel, char *buf, size_t len);
#endif
