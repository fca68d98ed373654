/* `pmu bench` (pmu/bench.c). */
#ifndef PMU_BENCH_H
#define PMU_BENCH_H

/* Measures and prints the cost of one counting and one sampling overflow; returns 0. */
int pmu_bench(void);

#endif
