/*
 * The KNC core PMU's registers (Intel 327357-001 §1.4.3, docs/design.md
 * §5.1): its MSR numbers, counter width and the event codes and constraint
 * its description (pmu_knc_desc, pmu/knc/desc.c) is made of. The field
 * layout it shares with architectural perfmon is pmu/evtsel.h. Only the knc
 * backend and the software model of this PMU name these.
 */
#ifndef PMU_KNC_REGS_H
#define PMU_KNC_REGS_H

#include <stdint.h>
#include "pmu/desc.h"
#include "pmu/evtsel.h"

/* MSR addresses (327357-001 §1.4.3, Table 1-2) */
#define MSR_KNC_PERFCTR0         0x20 /* IA32_PerfCnt0, 40 bits, per thread */
#define MSR_KNC_PERFCTR1         0x21
#define MSR_KNC_EVNTSEL0         0x28 /* IA32_PerfEvtSel0, 32 bits */
#define MSR_KNC_EVNTSEL1         0x29
#define MSR_KNC_SPFLT_CTRL       0x2c /* PERF_SPFLT_CONTROL */
#define MSR_KNC_GLOBAL_STATUS    0x2d /* IA32_PERF_GLOBAL_STATUS, RO, sticky */
#define MSR_KNC_GLOBAL_OVF_CTRL  0x2e /* IA32_PERF_GLOBAL_OVF_CTRL, WO */
#define MSR_KNC_GLOBAL_CTRL      0x2f /* IA32_PERF_GLOBAL_CTRL */

#define KNC_NUM_COUNTERS 2
#define MSR_KNC_PERFCTR(i)  (MSR_KNC_PERFCTR0 + (i))
#define MSR_KNC_EVNTSEL(i)  (MSR_KNC_EVNTSEL0 + (i))

/* IA32_PerfCnt0/1 (327357-001 §1.4.3.2): a write sets all 40 bits; reads zero-extend. */
#define KNC_CTR_BITS  40
#define KNC_CTR_MASK  ((1ULL << KNC_CTR_BITS) - 1)

#define SPFLT_VALID          (SPFLT_EN(0) | SPFLT_EN(1) | SPFLT_USER_PREF)
#define GLOBAL_VALID         (GLOBAL_CTR(0) | GLOBAL_CTR(1))

/* Events the software model counts (327357-001 Table 1-6). */
#define KNC_EV_INSTRUCTIONS_EXECUTED 0x16
#define KNC_EV_CPU_CLK_UNHALTED      0x2a

/*
 * L2 (CRI) events, codes 0xC3-0xFF with umask 0x10, count only on counter 0
 * (docs/design.md §5.1).
 */
#define KNC_L2_UMASK 0x10
static inline int knc_event_counter0_only(uint32_t code)
{
	return (code >> 8) == KNC_L2_UMASK && (code & 0xff) >= 0xc3;
}

/* The KNC core PMU as data (pmu/knc/desc.c). */
extern const struct pmu_desc pmu_knc_desc;

#endif
