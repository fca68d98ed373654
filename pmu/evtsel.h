/*
 * The event-select and global-control layout KNC shares with Intel's
 * architectural performance monitoring (327357-001 §1.4.3.3 Table 1-5 and
 * §1.4.3.5-7; Intel SDM Vol. 3B §18.2.1 IA32_PERFEVTSELx, §18.2.2
 * IA32_PERF_GLOBAL_CTRL/STATUS/OVF_CTRL): bit positions only, no MSR numbers
 * (those are each PMU's, pmu/desc.h).
 */
#ifndef PMU_EVTSEL_H
#define PMU_EVTSEL_H

#include <stdint.h>

/* EvtSel (327357-001 Table 1-5) */
#define EVTSEL_EVENT_MASK   0x000000ffu
#define EVTSEL_UMASK_SHIFT  8
#define EVTSEL_UMASK_MASK   0x0000ff00u
#define EVTSEL_USR          (1u << 16) /* count at CPL 1-3 */
#define EVTSEL_OS           (1u << 17) /* count at CPL 0 */
#define EVTSEL_EDGE         (1u << 18)
#define EVTSEL_RESERVED     (1u << 19) /* KNC: reserved; architectural perfmon: PC (pin control) */
#define EVTSEL_INT          (1u << 20) /* PMI through the local APIC on overflow */
#define EVTSEL_ANY          (1u << 21) /* thread count mode: any thread */
#define EVTSEL_EN           (1u << 22)
#define EVTSEL_INV          (1u << 23)
#define EVTSEL_CMASK_SHIFT  24
#define EVTSEL_CMASK_MASK   0xff000000u

#define EVTSEL_EVENT(v)  ((v) & EVTSEL_EVENT_MASK)
#define EVTSEL_UMASK(v)  (((v) & EVTSEL_UMASK_MASK) >> EVTSEL_UMASK_SHIFT)
#define EVTSEL_CMASK(v)  (((v) & EVTSEL_CMASK_MASK) >> EVTSEL_CMASK_SHIFT)
/* Event code as libpfm4 writes it: umask << 8 | event. */
#define EVTSEL_CODE(v)   ((v) & (EVTSEL_UMASK_MASK | EVTSEL_EVENT_MASK))

/* GLOBAL_STATUS, GLOBAL_OVF_CTRL, GLOBAL_CTRL: bit i is general-purpose counter i (327357-001 §1.4.3.5-7). */
#define GLOBAL_CTR(i)   (1u << (i))
/* ... and bit 32 + j fixed counter j (architectural perfmon version 2 on, Intel SDM Vol. 3B §18.2.2). */
#define GLOBAL_FIXED(j) (1ULL << (32 + (j)))

/*
 * IA32_FIXED_CTR_CTRL (Intel SDM Vol. 3B §18.2.2): four bits
 * per fixed counter j, from bit 4j: count at CPL 0, count at CPL > 0, any
 * thread of the core (version 3), PMI on overflow.
 */
#define FIXED_CTRL_OS(j)   (1ULL << (4 * (j)))
#define FIXED_CTRL_USR(j)  (1ULL << (4 * (j) + 1))
#define FIXED_CTRL_ANY(j)  (1ULL << (4 * (j) + 2))
#define FIXED_CTRL_PMI(j)  (1ULL << (4 * (j) + 3))
#define FIXED_CTRL_BITS(j) (0xfULL << (4 * (j)))

/* RDPMC's ECX bit 30 selects a fixed counter, ECX[29:0] its number (Intel SDM Vol. 2B, RDPMC). */
#define RDPMC_FIXED (1u << 30)

/*
 * PERF_SPFLT_CONTROL, for a PMU that has one (pmu_desc.spflt_ctrl; KNC:
 * 327357-001 §1.4.3.4, Table 1-7): bit i lets SPFLT gate counter i, bit 63
 * is USER_PREF, which the SPFLT instruction sets and clears.
 */
#define SPFLT_EN(i)          (1ULL << (i))
#define SPFLT_USER_PREF      (1ULL << 63)

#endif
