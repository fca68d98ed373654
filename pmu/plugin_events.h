/*
 * The KNC events the QEMU plugin (plugin/, build/pmuos-pmu.so) counts from
 * the guest's execution, with a one-line definition each: the one table the
 * plugin counts by and the shell shows (`pmu events`). Names are libpfm4's
 * (the generated knc_events.h gives their codes; no code is typed here); the
 * event descriptions are Intel 327357-001 Table 1-6. The plugin's counting code
 * counts PEV_<NAME>. "Line" is a 64-byte cache line, "L1D"/"L1I"/"L2" the
 * core's caches (plugin/memsys.h), "an instruction" an executed instruction.
 * The model's own event (INSTRUCTIONS_EXECUTED) is in MODEL_EVENTS.
 * Which execution counts: an access counts once, in the execution of its instruction that retires; the accesses that deliver an
 * interrupt or exception (IDT, descriptors, TSS, the frame) count nowhere
 * (the retired-instruction rule, docs/design.md §11).
 */
#ifndef PMU_PLUGIN_EVENTS_H
#define PMU_PLUGIN_EVENTS_H

#define PLUGIN_EVENTS(X) \
	X(DATA_READ, "data reads: one per memory operand an instruction reads (QEMU's split accesses of one operand are one read)") \
	X(DATA_WRITE, "data writes: one per memory operand an instruction writes") \
	X(DATA_PAGE_WALK, "data page walks: data TLB misses (per page an operand touches)") \
	X(DATA_READ_MISS, "data reads that missed the L1D in any line they touched; uncacheable (device) reads included") \
	X(DATA_WRITE_MISS, "data writes that missed the L1D in any line they touched (write-allocate); uncacheable writes excluded") \
	X(DATA_CACHE_LINES_WRITTEN_BACK, "dirty L1D lines written back to the L2 (evicted, back-invalidated or snooped)") \
	X(CODE_READ, "instruction fetches: one per executed instruction") \
	X(CODE_PAGE_WALK, "code page walks: code TLB misses") \
	X(CODE_CACHE_MISS, "instruction fetches that missed the L1I in any line the instruction occupies") \
	X(BRANCHES, "branches executed, taken or not: Jcc, JrCXZ, LOOPcc, JMP, CALL, RET, INT n/INT3/INT1/SYSCALL/SYSENTER, IRET/SYSRET/SYSEXIT") \
	X(DATA_READ_OR_WRITE, "DATA_READ + DATA_WRITE") \
	X(DATA_READ_MISS_OR_WRITE_MISS, "DATA_READ_MISS + DATA_WRITE_MISS") \
	X(BRANCHES_MISPREDICTED, "near branches that hit the BTB and were mispredicted (direction, or target of a taken one); BTB misses never count") \
	X(LONG_DATA_PAGE_WALK, "data page walks that also missed the L2 TLB") \
	X(LONG_CODE_PAGE_WALK, "code page walks that also missed the L2 TLB") \
	X(L2_READ_HIT_E, "code and data reads (L1 misses) that hit an L2 line in state E") \
	X(L2_READ_HIT_M, "code and data reads (L1 misses) that hit an L2 line in state M") \
	X(L2_READ_HIT_S, "code and data reads (L1 misses) that hit an L2 line in state S") \
	X(L2_READ_MISS, "code and data reads (L1 misses) that missed the L2 (read-for-ownership excluded)") \
	X(L2_WRITE_HIT, "reads for ownership (L1D write misses, writes to an S line) that hit the L2") \
	X(SNP_HIT_L2, "snoops from another core's miss or ownership request that found this L2's line in state E or S") \
	X(SNP_HITM_L2, "snoops from another core's miss or ownership request that found this L2's line in state M") \
	X(L2_CODE_READ_MISS_CACHE_FILL, "code reads that missed the L2 and were filled from another core's L2") \
	X(L2_DATA_READ_MISS_CACHE_FILL, "data reads that missed the L2 and were filled from another core's L2") \
	X(L2_DATA_WRITE_MISS_CACHE_FILL, "reads for ownership that missed the L2 and were filled from another core's L2") \
	X(L2_CODE_READ_MISS_MEM_FILL, "code reads that missed the L2 and were filled from memory") \
	X(L2_DATA_READ_MISS_MEM_FILL, "data reads that missed the L2 and were filled from memory") \
	X(L2_DATA_WRITE_MISS_MEM_FILL, "reads for ownership that missed the L2 and were filled from memory") \
	X(VPU_DATA_READ, "lines read by SSE/AVX instructions (the VPU's stand-ins): one per line an operand touches") \
	X(VPU_DATA_WRITE, "lines written by SSE/AVX instructions: one per line an operand touches") \
	X(VPU_DATA_READ_MISS, "lines read by SSE/AVX instructions that missed the L1D") \
	X(VPU_DATA_WRITE_MISS, "lines written by SSE/AVX instructions that missed the L1D") \
	X(VPU_INSTRUCTIONS_EXECUTED, "SSE/AVX instructions executed (XMM/YMM operations; MMX, MXCSR and state saves excluded)") \
	X(VPU_ELEMENTS_ACTIVE, "elements SSE/AVX instructions operate on: vector bytes / element bytes, 1 for scalar forms (all active: no masks)") \
	X(CPU_CLK_UNHALTED, "cycles of the thread's core while the thread ran, by the timing model (plugin/timing.h): issue turns, stalls, misses, flushes") \
	X(EXEC_STAGE_CYCLES, "E-stage cycles of the thread's instructions: one per issue group, a multi-cycle instruction's all") \
	X(FE_STALLED, "cycles the thread could issue and did not: waits for results (AGI included), multi-cycle instructions, L1 misses, flushes") \
	X(INSTRUCTIONS_EXECUTED_V_PIPE, "instructions that issued in the V pipe, paired with the one before (the Pentium's pairing rules)") \
	X(MEMORY_ACCESSES_IN_BOTH_PIPES, "pairs whose both instructions access data memory") \
	X(MICROCODE_CYCLES, "cycles of microcoded instructions (DIV, IDIV, CPUID, MSR access, IRET, string instructions ...)") \
	X(PIPELINE_FLUSHES, "mispredicted branches and taken branches that missed the BTB") \
	X(PIPELINE_AGI_STALLS, "issue groups an address generation interlock held back (an address register written less than a cycle before)") \
	X(L1_DATA_PF1, "VPREFETCH0s (emulated: QEMU has none) seen by the L1D, dropped ones included") \
	X(L1_DATA_PF1_MISS, "VPREFETCH0s that missed the L1D: each fills the L1D and the L2") \
	X(L1_DATA_PF1_DROP, "VPREFETCH0s dropped: their line in flight from an earlier prefetch of the thread's, or device memory") \
	X(L1_DATA_HIT_INFLIGHT_PF1, "data reads and writes of a line a VPREFETCH0 of the thread's has not yet brought in (the rest of its latency waited)") \
	X(L2_DATA_PF1_MISS, "VPREFETCH0s that missed the L2 too") \
	X(L1_DATA_PF2, "VPREFETCH1s seen by the L1D, dropped ones included") \
	X(L2_DATA_PF2, "VPREFETCH1s seen by the L2 (all but those to device memory)") \
	X(L2_DATA_PF2_DROP, "VPREFETCH1s the L2 dropped: their line in flight from an earlier prefetch of the thread's") \
	X(L2_DATA_PF2_MISS, "VPREFETCH1s that missed the L2: each fills the L2 only") \
	X(L2_DATA_HIT_INFLIGHT_PF2, "L1 misses of a line a VPREFETCH1 of the thread's has not yet brought into the L2")

#define MODEL_EVENTS(X) \
	X(INSTRUCTIONS_EXECUTED, "ticks of the thread's clock while it ran (not halted): with the plugin its own instructions; else the TSC, one per instruction under QEMU -icount shift=0")
/* Without the plugin the model also counts CPU_CLK_UNHALTED, as TSC ticks while the thread ran (pmu/model/core.h). */

/* The names, in PEV_ order: `static const char *const names[PEV_COUNT] = PLUGIN_EVENT_NAMES;` */
#define PEV_NAME(name, def) #name,
#define PLUGIN_EVENT_NAMES { PLUGIN_EVENTS(PEV_NAME) }

enum plugin_event {
#define PEV_ENUM(name, def) PEV_##name,
	PLUGIN_EVENTS(PEV_ENUM)
#undef PEV_ENUM
	PEV_COUNT
};

/*
 * Knights Landing's events (libpfm4's knl PMU, Intel 334480-001) the
 * plugin counts, each as the plugin event whose definition it shares, on a
 * card presenting KNL (pmu/model/share.c publishes the plugin's KNC code in
 * its place): KNL event name as libpfm4 spells it, the plugin event, and
 * how the two differ. Its codes come from libpfm4 at build time
 * (pmu/gen_events.c knl, build/gen/knl_plugin.h). KNL's L1D and L1I are
 * KNC's geometry (32 KiB, 8-way, 64-byte lines per core); its L2 (1 MiB per
 * 2-core tile) is not the plugin's (512 KiB per core), so no L2 event is
 * mapped, nor cycles (the timing model is KNC's in-order core's).
 */
#define KNL_PLUGIN_EVENTS(X) \
	X("BR_INST_RETIRED:ANY", BRANCHES, "retired branches; the plugin's executed ones are the retired ones") \
	X("BR_MISP_RETIRED:ANY", BRANCHES_MISPREDICTED, "by the plugin's KNC predictor (a BTB and 2-bit counters), not KNL's") \
	X("MEM_UOPS_RETIRED:ALL_LOADS", DATA_READ, "per memory operand read, where KNL counts load uops") \
	X("MEM_UOPS_RETIRED:ALL_STORES", DATA_WRITE, "per memory operand written, where KNL counts store uops") \
	X("MEM_UOPS_RETIRED:L1_MISS_LOADS", DATA_READ_MISS, "reads that missed the 32 KiB L1D") \
	X("ICACHE:MISSES", CODE_CACHE_MISS, "instruction fetches that missed the 32 KiB L1I, per instruction")

/* One of them, with its code: build/gen/knl_plugin.h's rows. */
struct knl_plugin_event {
	unsigned short code; /* umask << 8 | event, libpfm4's knl */
	int pev;             /* enum plugin_event */
};

#endif
