/*
 * The plugin's timing model of a KNC core: how many cycles a thread's
 * instructions take, and the pipeline events that follow (docs/design.md
 * §11 "The timing model"). A KNC core is an in-order P54C derivative with a
 * U and a V pipe (Intel, "Intel Xeon Phi Coprocessor Vector
 * Microarchitecture": "the VPU is an extension to the P54C core"), four
 * hardware threads issued round-robin, and a thread "cannot issue
 * instructions ... in back-to-back cycles" (Intel 328207-002, the System
 * Software Developer's Guide, §2.1), so one thread issues at most every
 * other cycle and n >= 2 busy threads of a core every n-th cycle each.
 *
 * The model, per thread:
 *  - A block's instructions issue in order, in groups of one or of a
 *    U/V pair (tm_can_pair: the Pentium's pairing rules as far as they
 *    are about registers and pipes, below), each group at least `gap`
 *    cycles after the thread's last, gap = max(2, busy threads of the
 *    core);
 *  - a group waits for its source registers (each result usable `lat`
 *    cycles after its instruction issued; an address register one cycle
 *    later still: the Pentium's address generation interlock, AGI);
 *  - a multi-cycle instruction keeps the thread's E stage for `exec`
 *    cycles; a microcoded one's cycles are MICROCODE_CYCLES;
 *  - a data read or fetch that misses the L1 adds the latency of where it
 *    was served (tm_latency below), in full: the in-order thread waits;
 *  - a mispredicted branch, or a taken one the BTB missed, flushes the
 *    pipeline: TM_FLUSH cycles.
 * Every constant is in the table below with its source; where no public
 * figure for KNC was found the Pentium's (P54C's) is taken or the value is
 * marked assumed. What it does not model is listed in docs/design.md §11.
 * Pure code, unit-tested (tests/unit/test_timing.c).
 */
#ifndef PLUGIN_TIMING_H
#define PLUGIN_TIMING_H

#include <stdbool.h>
#include <stdint.h>

/* ---- the constants, cycles ---- */

/* A thread's issues are at least this far apart (328207-002 §2.1: no back-to-back issue from one thread). */
#define TM_ISSUE_GAP 2
/* Hardware threads whose issue turns the core shares (327357-001 §1.2: "4-way threaded"). */
#define TM_THREADS 4
/*
 * Load-to-use of an L1D hit: "Accessing the L1 cache involves latency of
 * only one cycle" (Intel's KNC tuning guide, Intel document 671479, on
 * memory latency). With the issue gap a dependent load chain runs at 2
 * cycles per load from the L1.
 */
#define TM_L1_LAT 1
/*
 * An L1 miss served by the core's L2: 24 cycles. Intel 671479 gives
 * "15-30 cycle latency"; John McCalpin measured 23.4 cycles with scalar
 * pointer chasing on a Xeon Phi SE10P (Intel's MIC developer forum, topic
 * 499156, 2013). The measured figure is taken, rounded.
 */
#define TM_L2_LAT 24
/*
 * An L2 miss served by memory (GDDR5): Intel 671479 gives "a latency of
 * 500-1000 cycles". The low end is taken: a pointer chase on an idle card
 * queues behind nothing (the range's upper part is memory under load,
 * which the model does not simulate).
 */
#define TM_MEM_LAT 500
/*
 * An L2 miss served by another core's L2 over the ring: no public figure
 * for KNC was found; assumed as memory's, since the request goes round
 * the ring to the line's tag directory either way (328207-002 §2.1).
 */
#define TM_REMOTE_LAT 500
/*
 * A pipeline flush (mispredicted branch, taken branch that missed the BTB):
 * the Pentium's 3 cycles for a branch in the U pipe (4 in the V pipe: Agner
 * Fog, "The microarchitecture of Intel, AMD and VIA CPUs", the Pentium's
 * chapter). For KNC Intel's "Intel Xeon Phi Coprocessor Developer's Quick
 * Start Guide" says only that "due to the short in-order pipeline, the
 * overhead for branch misprediction is low".
 */
#define TM_FLUSH 3
/* An SSE/AVX (VPU stand-in) result: "most instructions with 4-cycle latency" (Vector Microarchitecture). */
#define TM_VPU_LAT 4
/* An address register is usable one cycle after the E stage could use it (the Pentium's AGI). */
#define TM_AGI 1

/* ---- an instruction, as the schedule sees it ---- */

enum tm_pipe {
	TM_UV, /* pairs in either pipe */
	TM_PU, /* pairs only in the U pipe (first of a pair) */
	TM_PV, /* pairs only in the V pipe (second of a pair) */
	TM_NP, /* pairs with nothing */
};

/* Register bits: the 16 GPRs by number (RAX 0 ... R15 15), the flags. */
#define TM_FLAGS (1u << 16)

struct tm_insn {
	uint8_t pipe;     /* enum tm_pipe */
	uint8_t lat;      /* cycles from its issue to the E stage's use of its results */
	uint8_t exec;     /* cycles it holds the E stage (1 for most) */
	bool micro;       /* microcoded: its E-stage cycles are microcode cycles */
	bool mem;         /* it reads or writes data memory */
	bool branch;      /* a branch (the V pipe's; reads the flags of its U partner) */
	uint32_t rd, wr;  /* registers it reads and writes (TM_FLAGS included) */
	uint32_t agen;    /* registers its address generation reads (base, index, RSP of PUSH/POP/CALL/RET) */
};

/* What a run of instructions gives, at one issue gap, its loads hitting the L1. */
struct tm_counts {
	uint32_t cycles;   /* from the run's first possible issue to the next instruction's */
	uint32_t exec;     /* EXEC_STAGE_CYCLES: one per issue group, a multi-cycle instruction's all */
	uint32_t micro;    /* MICROCODE_CYCLES */
	uint16_t groups;   /* issue groups */
	uint16_t vpipe;    /* INSTRUCTIONS_EXECUTED_V_PIPE: instructions that joined a group in the V pipe */
	uint16_t both_mem; /* MEMORY_ACCESSES_IN_BOTH_PIPES: pairs whose both access memory */
	uint16_t agi;      /* PIPELINE_AGI_STALLS: groups an AGI held back */
};

/*
 * The state a run leaves for the instructions right after it, when they
 * come in another block: QEMU ends a block early where -icount's budget
 * ends (and at instructions it runs alone), and the next block goes on
 * with the same stream; with this the two schedule as one block would, so
 * the cycles do not depend on where QEMU cut. After a branch the next
 * block starts afresh: nothing pairs with a branch (it goes in the V pipe,
 * last), and results still in flight are not carried (a simplification).
 */
struct tm_carry {
	/*
	 * When each register is ready, in cycles after the last group's issue
	 * less TM_AGI (0: by then; earlier makes no difference to what follows).
	 */
	uint16_t ready[17];
	uint16_t last_back;  /* cycles from the last group's issue to the run's end */
	bool open;           /* the last group is one instruction a V partner may still join */
	struct tm_insn last; /* that instruction */
};

/*
 * Schedules n >= 1 instructions issued at best every `gap` cycles (2 to
 * TM_THREADS), after `entry` (NULL: a fresh start), into *out, and the
 * state at their end into *exit (may be NULL). An instruction joins the
 * group before it in the V pipe when tm_can_pair allows and its sources
 * are ready when that group issued; else it starts a group of its own,
 * `gap` cycles (or its predecessor's E-stage cycles) after the last one at
 * the earliest, when its sources (and, one cycle later, its address
 * registers) are ready.
 */
void tm_run(const struct tm_insn *in, uint32_t n, unsigned gap, const struct tm_carry *entry, struct tm_counts *out,
	    struct tm_carry *exit);
/* Whether a run after a and a run after b schedule alike (the same registers in flight, the same open group). */
bool tm_carry_same(const struct tm_carry *a, const struct tm_carry *b);

/* A block's schedule at each issue gap 2 .. TM_THREADS (index gap - 2), from a fresh start. */
struct tm_block {
	struct tm_counts at[TM_THREADS - 1];
};

/* tm_run of a block at every gap from a fresh start; exit[gap - 2] its end states (exit may be NULL). */
void tm_schedule(const struct tm_insn *in, uint32_t n, struct tm_block *out, struct tm_carry *exit);

/* Where an L1 miss was served. */
enum tm_level { TM_FROM_L2, TM_FROM_REMOTE, TM_FROM_MEM };

/* Cycles an L1 miss served from `level` adds to the thread's (the L1 hit's are in the schedule). */
static inline uint32_t tm_latency(enum tm_level level)
{
	switch (level) {
	case TM_FROM_L2:
		return TM_L2_LAT - TM_L1_LAT;
	case TM_FROM_REMOTE:
		return TM_REMOTE_LAT - TM_L1_LAT;
	default:
		return TM_MEM_LAT - TM_L1_LAT;
	}
}

/* The issue gap of a thread whose core has `busy` threads not halted (itself included, 1-4): index into tm_block. */
static inline unsigned tm_gap_index(unsigned busy)
{
	return busy <= TM_ISSUE_GAP ? 0 : (busy > TM_THREADS ? TM_THREADS : busy) - TM_ISSUE_GAP;
}

#endif
