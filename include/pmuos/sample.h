/*
 * One PMU sample, as the PMI handler records it (pmu/pmi.c) and as host
 * tools will read it from the per-CPU sample rings. Fixed-width types only.
 */
#ifndef PMUOS_SAMPLE_H
#define PMUOS_SAMPLE_H

#include <stdint.h>

struct pmu_sample {
	uint64_t tsc;      /* TSC ticks when the PMI handler ran */
	uint64_t rip;      /* interrupted instruction pointer */
	uint64_t ctr[2];   /* both counters, 40 bits, read after stopping them */
	uint32_t cpu;      /* logical CPU number */
	uint8_t cpl;       /* privilege level of the interrupted code (0 or 3) */
	uint8_t ovf_mask;  /* GLOBAL_STATUS bits this sample handled */
	uint16_t reserved;
};

#endif
