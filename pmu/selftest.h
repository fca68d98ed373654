/* `pmu selftest` (pmu/selftest.c). */
#ifndef PMU_SELFTEST_H
#define PMU_SELFTEST_H

/* Runs the checks on the calling CPU, printing one line each; returns the failures. */
int pmu_selftest(void);

#endif
