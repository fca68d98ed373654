/*
 * The recording file of pmuctl record, read by report and by the perf.data
 * converter (host/perfdata.c) through rec_open/rec_next only: this header,
 * then the samples as the card's rings hold them (include/pmuos/sample.h:
 * a struct pmu_sample, then its call chain's slots). Version 1 (before call
 * chains and build IDs) ends its header at `tsc_hz` and its samples have
 * no chains, version 2 (before threads) at `tid`; both are still read.
 */
#ifndef HOST_RECORD_H
#define HOST_RECORD_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <pmuos/sample.h>
#include "host/rings.h"

#define REC_MAGIC "PMUOSREC"
#define REC_VERSION 3
#define REC_BUILD_ID_MAX 20 /* a SHA-1 build ID (ld --build-id=sha1) */

struct rec_header {
	char magic[8];
	uint32_t version;
	uint32_t frames;           /* call-chain frames asked for (record -g), 0: none; version 1: 0 */
	uint64_t nsamples, lost, period;
	char program[256];         /* as given on the command line */
	char event[64];            /* as given (-e) */
	/* Version 2 */
	uint64_t tsc_hz;           /* the card's TSC: sample times in seconds */
	uint32_t evtsel;           /* the event's EvtSel without EN/INT (327357-001 Table 1-5) */
	uint32_t build_id_len;     /* 0: the program has no build ID */
	uint8_t build_id[REC_BUILD_ID_MAX];
	uint32_t pmu;              /* the card's PMU, whose event names -e gave: pfm_pmu_at (0 knc: files before it, 0) */
	char path[4096];           /* the program's absolute path when recorded */
	/* Version 3 */
	uint32_t tid[CPUSET_MAX];  /* the tid of each CPU's samples (host/rings.h launch_tids); before: PERF_PID + CPU */
};
#define REC_HEADER_V1 ((size_t)&((struct rec_header *)0)->tsc_hz)
#define REC_HEADER_V2 ((size_t)&((struct rec_header *)0)->tid)

/* The tid of `cpu`'s samples: the header's, PERF_PID + cpu for a CPU past it; 0 is perf's idle task (pid 0). */
static inline uint32_t rec_tid(const struct rec_header *h, uint32_t cpu)
{
	return cpu < CPUSET_MAX ? h->tid[cpu] : PERF_PID + cpu;
}

/*
 * Whether the recording is of time samples (record -e cpu-clock[,EV..]):
 * `period` is then ns of card time and each sample's ctr[] the counters
 * counting the events after "cpu-clock," (40 bits, from 0 at the start).
 */
static inline int rec_names_cpu_clock(const char *ev)
{
	return !strncmp(ev, "cpu-clock", 9) && (!ev[9] || ev[9] == ',');
}
static inline int rec_timed(const struct rec_header *h)
{
	return h->evtsel == 0 && rec_names_cpu_clock(h->event);
}
/*
 * The events of a cpu-clock -e list ("cpu-clock,EV,EV", rec_names_cpu_clock)
 * counted beside it: their EvtSels into sel[] and names into name[] (each
 * cut to 63 characters); how many, 0 to 2 (a KNC hardware thread's counters),
 * or -1 for more. The names are of the PMU pfm_setup set up (host/pfm.h);
 * one libpfm4 does not know exits 2 naming it (encode).
 */
int rec_cpu_clock_events(const char *ev, uint32_t sel[PMU_SAMPLE_COUNTERS], char name[PMU_SAMPLE_COUNTERS][64]);
/* What a recording's period counts: "ns" (rec_timed) or "events". */
static inline const char *rec_period_unit(const struct rec_header *h)
{
	return rec_timed(h) ? "ns" : "events";
}

/* A sample with its call chain as read back. */
struct rec_sample {
	struct pmu_sample s;
	uint64_t chain[PMU_CALLCHAIN_MAX]; /* s.nframes return addresses, innermost caller first */
};

/*
 * Opens recording `file` and reads its header (a version 1 one completed:
 * path = program, no build ID). NULL, with "pmuctl: FILE: why" on stderr,
 * if it cannot be read or is not a recording of a version this pmuctl reads.
 */
FILE *rec_open(const char *file, struct rec_header *h);
/* The next sample: 1, 0 at the end, -1 (and a message) for a truncated or malformed one. */
int rec_next(FILE *f, const char *file, struct rec_sample *out);

/* The build ID of ELF file `path` into id[0..REC_BUILD_ID_MAX): its length, 0 if it has none or cannot be read. */
uint32_t rec_build_id(const char *path, uint8_t *id);

/* perfdata.c: writes recording `in` as perf.data file `out`, the card's kernel mapped as System.map
 * `system_map` spans; pmuctl's exit status. */
int perf_convert(const char *in, const char *out, const char *system_map);

#endif
