/*
 * <pmuos/pmu.h>: performance counters from a Ring-3 pmuos program, without
 * entering the kernel (docs/design.md §5.6, Intel 327357-001 §1.4.2):
 *   pmu_rdpmc(i)        RDPMC: counter i (0 or 1), 40 bits, zero-extended;
 *                       PMU_RDPMC_FIXED + j a fixed counter, where the PMU has
 *                       them (Knights Landing, not KNC: #GP there)
 *   pmu_rdtsc()         RDTSC: the core's time-stamp counter
 *   pmu_spflt(on)       SPFLT: set the user preference bit; counters whose
 *                       PERF_SPFLT_CONTROL bit the OS set count only while it is 1
 *   pmu_region_begin/end(name)  named regions: both counters are read with
 *                       RDPMC at begin and end and added up per region; the
 *                       totals are printed when the program exits (likwid's
 *                       marker API works the same way); a counter that samples
 *                       in a region prints "sampling", not a count; `pmuctl
 *                       stat` takes these lines and prints a table per region
 *                       with the events' names and the -M groups' metrics;
 *                       while the events take turns on the counters
 *                       (multiplexing) begin and end ask the kernel for
 *                       every event's count and running time instead
 * The counters are configured from the shell (`pmu set`) or the host (pmuctl).
 * Also: the task's CPU, its rank among the instances of its launch (SPMD),
 * and the TSC frequency.
 */
#ifndef PMUOS_PMU_H
#define PMUOS_PMU_H

#include <stdint.h>

#define PMU_RDPMC_FIXED (1u << 30) /* RDPMC's ECX bit 30 (Intel SDM Vol. 2B, RDPMC) */

static inline uint64_t pmu_rdpmc(uint32_t counter)
{
	uint32_t lo, hi;
	__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
	return (uint64_t)hi << 32 | lo;
}

static inline uint64_t pmu_rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

/* SPFLT r32, VEX.128.F2.0F.W0 AE /6 with the operand in EAX: C5 FB AE F0. */
static inline void pmu_spflt(uint32_t on)
{
	__asm__ volatile(".byte 0xc5, 0xfb, 0xae, 0xf0" :: "a"(on) : "memory");
}

/* Regions: up to PMU_REGIONS distinct names; nesting different names is fine. */
#define PMU_REGIONS 32
void pmu_region_begin(const char *name);
void pmu_region_end(const char *name);
/* A thread that is not the main one ends: its regions are reported (pthread_exit calls it). */
void pmu_regions_thread_end(void);

int pmuos_getcpu(void);
int pmuos_rank(void);
int pmuos_nranks(void);
uint64_t pmuos_tsc_hz(void);
/* The CPU's counts while its events take turns (SYS_PMU_COUNTS, <pmuos/syscall.h>): nev, 0 when they do not. */
struct pmuos_counts;
int pmuos_pmu_counts(struct pmuos_counts *c);
/* The names of the CPU's events (SYS_PMU_EVENT_NAMES, <pmuos/syscall.h>): nev, or -EFAULT. */
struct pmuos_events;
int pmuos_pmu_events(struct pmuos_events *e);

#endif
