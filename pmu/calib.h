/*
 * Kernel code of known instruction counts (pmu/calib.S), for the exactness
 * check (pmu_calibrate) and `pmu selftest` / `pmu bench`: each is called,
 * and a region's count minus pmu_calib_empty's is exactly its instructions
 * (1, 100, 10^6). pmu_calib_1m_end is the first address past pmu_calib_1m's
 * loop, for samples that must land inside it.
 */
#ifndef PMU_CALIB_H
#define PMU_CALIB_H

void pmu_calib_empty(void);
void pmu_calib_1(void);
void pmu_calib_100(void);
void pmu_calib_1m(void);
extern char pmu_calib_1m_end[];

#endif
