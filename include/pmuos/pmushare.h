/*
 * The page the card's PMU model and the QEMU plugin (build/pmuos-pmu.so)
 * share: the model owns the PMU registers (Intel 327357-001 §1.4.3) and publishes
 * each thread's EvtSel, GLOBAL_CTRL and PERF_SPFLT_CONTROL here; the plugin
 * counts the events it simulates under those registers and leaves the
 * counts here, per counter, for the model to take. In QEMU it is a second
 * ivshmem-plain device backed by /dev/shm/pmuos-CARD-pmu (scripts/qemu.sh);
 * the plugin maps that file by path and writes the header before the guest
 * runs; the card finds the device by PCI enumeration and this header.
 * Under -icount QEMU runs every vCPU in one thread, the plugin's callbacks
 * included, so the two sides never run at the same time: a plugin callback
 * comes between two guest instructions. The card takes the counts with
 * XCHG (one instruction), so none is lost between its read and its write.
 * The plugin also keeps each thread's own instruction clock here (`clock`).
 */
#ifndef PMUOS_PMUSHARE_H
#define PMUOS_PMUSHARE_H

#include <stdint.h>

#define PMUSHARE_MAGIC   0x4548535f554d5050ULL /* "PPMU_SHE" */
#define PMUSHARE_VERSION 4
#define PMUSHARE_BYTES   65536 /* the device's BAR 2 and the host file: a power of two */
#define PMUSHARE_CPUS    256   /* thread slots, indexed by APIC ID (= QEMU's vCPU index here) */
#define PMUSHARE_COUNTERS 2    /* a slot's counters: EvtSel and delta of counters 0..pmushare.counters-1 */
#define PMUSHARE_TASK_RUN   1 /* pmushare_thread.task_state */
#define PMUSHARE_TASK_ENDED 2

/* One hardware thread. 64 bytes. */
struct pmushare_thread {
	/*
	 * Written by the card: the registers, as in 327357-001 §1.4.3.3-7. seq is odd
	 * while the card rewrites them and goes up by 2 per publication; the
	 * plugin uses a stable (even) set.
	 */
	uint32_t seq;
	uint32_t evtsel[PMUSHARE_COUNTERS];
	uint32_t global_ctrl;
	uint64_t spflt;
	/* Written by the plugin: events counted into counter i since the card last took them (XCHG with 0). */
	uint64_t delta[PMUSHARE_COUNTERS];
	/* Written by the plugin: the thread's clock (see pmushare.clock) while another thread runs. */
	uint64_t clock;
	/*
	 * Written by the card, for the plugin's timing model, which shares a
	 * core's issue turns among the threads that run tasks (plugin/exec.c
	 * busy_threads): the thread's task's launch (its first task's id + 1,
	 * 0: none yet), whether it is assigned or running (PMUSHARE_TASK_RUN)
	 * or ended (PMUSHARE_TASK_ENDED); task_clock is the thread's clock at
	 * the task's first instruction, and once it ended the instructions it
	 * ran.
	 */
	uint32_t task_launch;
	uint32_t task_state;
	uint64_t task_clock;
};

struct pmushare {
	uint64_t magic;            /* PMUSHARE_MAGIC, written by the plugin */
	uint32_t version;          /* PMUSHARE_VERSION */
	uint32_t cpus;             /* vCPUs the plugin simulates */
	uint32_t threads_per_core; /* vCPU i is thread i % this of core i / this */
	uint32_t card_seen;        /* the card writes 1 when it counts with the page */
	/* Statistics of the plugin (host tools and tests read them from the file). */
	uint64_t insns;            /* instructions the plugin saw execute */
	uint64_t xlate_checks;     /* with verify=on: translations checked against QEMU's */
	uint64_t xlate_mismatches; /* ... that differed (0: the translation cache is right) */
	/*
	 * The running thread's clock: the instructions that thread has executed
	 * since the machine started, this one included (QEMU adds 1 before
	 * each instruction; one that faults counts, as it does in -icount's
	 * virtual clock). When QEMU switches to another vCPU, the plugin keeps
	 * the value in the old thread's slot and loads the new one's, before
	 * the new thread's first instruction; QEMU switches vCPUs only between
	 * blocks. So one load by the card reads the reading thread's own
	 * count, whatever the other threads did: the time base of the card's
	 * model (pmu/model/share.h), in place of -icount's one virtual clock, which
	 * every vCPU advances.
	 */
	uint64_t clock;
	/*
	 * Written by the card: the address of the kernel's load that stands
	 * for a task's VPREFETCH0 ([0]) and VPREFETCH1 ([1]), which QEMU cannot
	 * execute (pmu/model/emul.c): the plugin takes that load's access for the
	 * prefetch, the task's. 0: none.
	 */
	uint64_t prefetch_load[2]; /* [0] VPREFETCH0, [1] VPREFETCH1: hints, not counters */
	/* Written by the card: goes up by one at every change of a thread's task_* (the plugin caches what they give). */
	uint32_t task_gen;
	/* Written by the card: the counters it publishes per slot, 1..PMUSHARE_COUNTERS (its PMU's); 0 before it counts. */
	uint32_t counters;
	struct pmushare_thread thread[PMUSHARE_CPUS];
};

#endif
