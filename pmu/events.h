/*
 * KNC event names and strings (docs/design.md §5.3). The table is generated at build
 * time from libpfm4 (pmu/gen_events.c); event strings follow libpfm4:
 * "[knc::]NAME[:mod...]" with modifiers u (USR), k (OS), e (edge),
 * i (invert), c=N (CMASK 0-255), t (any thread); or a raw "rHEX" (umask << 8 |
 * event, optionally with the upper EvtSel fields) with the same modifiers.
 * Names, the "knc::" prefix and modifiers are case-insensitive. Without u or
 * k an event counts at every privilege level, unless a raw value already sets
 * USR or OS.
 */
#ifndef PMU_EVENTS_H
#define PMU_EVENTS_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>

struct knc_event {
	const char *name;
	uint16_t code; /* umask << 8 | event */
	const char *desc;
};

size_t knc_event_count(void);
const struct knc_event *knc_event_at(size_t i);
/* Event whose code matches EvtSel's umask and event fields, or NULL. */
const struct knc_event *knc_event_by_code(uint32_t evtsel);
/* Event with this exact (libpfm4) name, or NULL. */
const struct knc_event *knc_event_named(const char *name);
/*
 * What the software PMU counts for the event named `name`: its definition
 * (pmu/plugin_events.h), with *plugin true if the QEMU plugin counts it,
 * false if the model does; NULL if neither does.
 */
const char *knc_event_definition(const char *name, bool *plugin);

/*
 * Parses an event string into an EvtSel value without EN and INT. Returns
 * true, or false with a message naming the bad part in err.
 */
bool knc_event_parse(const char *s, uint32_t *evtsel, char *err, size_t errlen);
/* Formats evtsel in event-string syntax ("INSTRUCTIONS_EXECUTED:k:c=1"). */
void knc_event_format(uint32_t evtsel, char *buf, size_t len);
#endif
