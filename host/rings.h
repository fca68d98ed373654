/*
 * What the card writes into the mailbox without being asked: its console
 * ring, each task's output ring and the per-CPU sample rings; and a
 * launch's state from a STATUS answer (include/pmuos/mailbox.h).
 */
#ifndef HOST_RINGS_H
#define HOST_RINGS_H

#include <stdio.h>
#include "host/mbox.h"
#include "lib/cpuset.h"

/*
 * Copies console bytes [*from, head) to `out` (without '\r') and advances
 * *from: the last MBOX_CONSOLE_SIZE bytes at most (older ones are
 * overwritten); none if the head went back (the card restarted).
 */
void console_drain(struct card *c, uint64_t *from, FILE *out);

/* A task's output as pmuctl reads it: whole lines, "[rank N] " first when there are several. */
struct task_out {
	uint32_t task, ring, rank, nranks, cpu;
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
 * If set, each whole line of a task's output goes to it first (len bytes,
 * '\n' included, and the CPU the task ran on); returning 1 means taken:
 * outputs_drain does not print it.
 */
extern int (*output_line_hook)(const char *line, size_t len, uint32_t cpu);

/*
 * Writes to `out` what the tasks of a STATUS answer `r` (checked by
 * card_call: whole struct mbox_task) wrote since last time, at most
 * MBOX_OUTPUT_SIZE bytes per task; `last`: also their unfinished lines.
 * Tasks beyond the first CPUSET_MAX, or with no ring, are skipped.
 */
void outputs_drain(struct card *c, struct outputs *o, const struct mbox_response *r, int last, FILE *out);

/* Exit status of a launch from its STATUS answer: 0-255, 128 + signal, or -1 while a task still runs. */
int launch_status(const struct mbox_response *r);

/*
 * Writes the samples of the CPUs of `set` (below c->cpu_count) to `out`
 * (struct pmu_sample each, then its call chain's slots: include/pmuos/sample.h),
 * at most MBOX_SAMPLE_SLOTS slots per ring, empties their rings and adds
 * their number to *n. Returns 0, or a CARD_* status (c->err says why) if
 * the card restarted, a ring's head is further from its tail than the ring
 * holds, or a sample's chain is longer than PMU_CALLCHAIN_MAX or passes the head.
 */
int samples_drain(struct card *c, const struct cpuset *set, FILE *out, uint64_t *n);

#endif
