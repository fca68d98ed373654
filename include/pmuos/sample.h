/*
 * One PMU sample, as the PMI handler records it (pmu/pmi.c) and as host
 * tools read it from the per-CPU sample rings (include/pmuos/mailbox.h)
 * and from pmuctl's recordings. Fixed-width types only.
 *
 * A sample with a call chain (nframes > 0) is followed in its ring by
 * PMU_CHAIN_SLOTS(nframes) slots of the same size, each holding
 * PMU_FRAMES_PER_SLOT return addresses (uint64_t, little-endian; the last
 * slot padded with 0): the caller of the sampled function first, the
 * outermost caller last. The interrupted RIP is the sample's own `rip`.
 * A ring's head only ever moves past a whole sample with its chain.
 */
#ifndef PMUOS_SAMPLE_H
#define PMUOS_SAMPLE_H

#include <stdint.h>

/*
 * Return addresses a sample's call chain holds at most (pmuctl record -g,
 * shell `pmu callchain`): a chain takes at most 4 extra ring slots, so a
 * ring of MBOX_SAMPLE_SLOTS still holds 409 samples with full chains.
 */
#define PMU_CALLCHAIN_MAX 16

#define PMU_SAMPLE_CTR_BITS 40 /* the counters' width: KNC's (Intel 327357-001 §1.4.3.2), KNL's */
/* General-purpose counters a sample holds at most: every PMU the kernel describes has 2 (pmu/desc.h). */
#define PMU_SAMPLE_COUNTERS 2

struct pmu_sample {
	uint64_t tsc;      /* TSC ticks when the PMI handler ran */
	uint64_t rip;      /* interrupted instruction pointer */
	uint64_t ctr[PMU_SAMPLE_COUNTERS]; /* counters 0..ncounters-1, PMU_SAMPLE_CTR_BITS bits, read after stopping them */
	uint32_t cpu;      /* logical CPU number */
	uint8_t cpl;       /* privilege level of the interrupted code (0 or 3) */
	uint8_t ovf_mask;  /* GLOBAL_STATUS bits this sample handled; 0: a time sample (cpu-clock, pmu/cpu_clock.c) */
	uint8_t nframes;   /* 0..PMU_CALLCHAIN_MAX return addresses in the slots that follow */
	/*
	 * The PMU's counters, 1..PMU_SAMPLE_COUNTERS, whose values ctr[] holds
	 * (mailbox version 9; the high byte of a 16-bit nframes before, so 0 in
	 * older recordings, whose samples hold 2).
	 */
	uint8_t ncounters;
};

#define PMU_FRAMES_PER_SLOT (sizeof(struct pmu_sample) / sizeof(uint64_t))
/* Ring slots a chain of n frames takes after its sample. */
#define PMU_CHAIN_SLOTS(n) (((n) + PMU_FRAMES_PER_SLOT - 1) / PMU_FRAMES_PER_SLOT)

#endif
