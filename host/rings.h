/*
 * What the card writes into the mailbox without being asked: its console
 * ring, each task's output ring and the per-CPU sample rings; and a
 * launch's state from a STATUS answer (include/pmuos/mailbox.h).
 */
#ifndef HOST_RINGS_H
#define HOST_RINGS_H

#include <stdio.h>
#include "host/mbox.h"
#include "kernel/cpuset.h"

/* Copies console bytes [*from, head) to `out` (without '\r') and advances *from. */
void console_drain(struct card *c, uint64_t *from, FILE *out);

/* A task's output as pmuctl reads it: whole lines, "[rank N] " first when there are several. */
struct task_out {
	uint32_t task, ring, rank, nranks;
	uint64_t pos;     /* bytes of the ring consumed */
	char line[512];
	size_t len;
	int gone;         /* the ring went to another task before we read it all */
};

struct outputs {
	struct task_out t[MBOX_CPUSET_WORDS * 64];
	int n;
};

/*
 * Writes to `out` what the tasks of a STATUS answer `r` wrote since last
 * time; `last`: also their unfinished lines.
 */
void outputs_drain(struct card *c, struct outputs *o, const struct mbox_response *r, int last, FILE *out);

/* Exit status of a launch from its STATUS answer: 0-255, 128 + signal, or -1 while a task still runs. */
int launch_status(const struct mbox_response *r);

/* CPU `cpu`'s sample ring (cpu < the card's CPU count). */
struct mbox_sample_ring *sample_ring(struct card *c, uint32_t cpu);

/* Writes the samples of the CPUs of `set` to `out` (struct pmu_sample each) and empties their rings; returns how many. */
uint64_t samples_drain(struct card *c, const struct cpuset *set, FILE *out);

#endif
