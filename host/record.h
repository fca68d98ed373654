/* The recording file of pmuctl record / report: this header, then struct pmu_sample records. */
#ifndef HOST_RECORD_H
#define HOST_RECORD_H

#include <stdint.h>

#define REC_MAGIC "PMUOSREC"

struct rec_header {
	char magic[8];
	uint32_t version, reserved;
	uint64_t nsamples, lost, period;
	char program[256], event[64];
};

#endif
