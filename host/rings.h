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

/*
 * An output ring as pmuctl reads it, whole lines, "[rank N] " first when the
 * launch has several ranks; `task` is the first task listed with it (the
 * threads of a process share their main thread's ring, which the RUN answer
 * lists alone).
 */
struct task_out {
	uint32_t task, ring, rank, nranks, cpu;
	uint64_t pos;     /* bytes of the ring consumed */
	char line[512];
	size_t len;
	int gone;         /* the ring went to another task before we read it all */
	uint32_t drain;   /* outputs.drains + 1 while the current call has drained it */
};

struct outputs {
	struct task_out t[MBOX_CPUSET_WORDS * 64];
	int n;
	uint32_t drains;  /* outputs_drain calls so far */
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
 * MBOX_OUTPUT_SIZE bytes per ring; `last`: also their unfinished lines.
 * Rings are followed once however many tasks share one (a process's
 * threads); rings beyond the first CPUSET_MAX, and tasks with no ring, are skipped.
 */
void outputs_drain(struct card *c, struct outputs *o, const struct mbox_response *r, int last, FILE *out);

/*
 * Exit status of a launch from its STATUS answer: 0-255, 128 + signal, or -1
 * while a task still runs. A process's exit status is its main thread's
 * (thread 0): other threads' are not the process's.
 */
int launch_status(const struct mbox_response *r);

/*
 * The pid pmuctl gives a launch's program (perf.data's, stat --per-thread's):
 * its tasks' tids are PERF_PID + the thread number (a threaded launch: the
 * main thread's tid is the pid, as on Linux) or PERF_PID + the CPU (an
 * instance per CPU).
 */
#define PERF_PID 1000

/*
 * Each CPU's tid from a STATUS answer `r` into tid[0..CPUSET_MAX): as
 * PERF_PID says, by thread when `threads` (the launch asked for
 * MBOX_RUN_THREADS) and its tasks are all rank 0, else by CPU (a card that
 * ran an instance per CPU anyway gets an instance's tids); 0 (perf's idle
 * task) for a CPU no task was on. A CPU listed twice keeps its first task;
 * CPUs from CPUSET_MAX on are left out. Returns how many CPUs have a task.
 */
int launch_tids(const struct mbox_response *r, int threads, uint32_t tid[CPUSET_MAX]);

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
