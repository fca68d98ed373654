/*
 * KNC core PMU registers and fields, described once (Intel 327357-001 §1.4.3,
 * docs/design.md §5.1). The driver, the software model, the tests and the host tool
 * all derive their accessors from these.
 */
#ifndef PMU_REGS_H
#define PMU_REGS_H

#include <stdint.h>

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

/* IA32_PerfEvtSel0/1 (327357-001 §1.4.3.3, Table 1-5) */
#define EVTSEL_EVENT_MASK   0x000000ffu
#define EVTSEL_UMASK_SHIFT  8
#define EVTSEL_UMASK_MASK   0x0000ff00u
#define EVTSEL_USR          (1u << 16) /* count at CPL 1-3 */
#define EVTSEL_OS           (1u << 17) /* count at CPL 0 */
#define EVTSEL_EDGE         (1u << 18)
#define EVTSEL_RESERVED     (1u << 19)
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

/* PERF_SPFLT_CONTROL (327357-001 §1.4.3.4, Table 1-7) */
#define SPFLT_EN(i)          (1ULL << (i)) /* SPFLT may gate counter i (OS-owned) */
#define SPFLT_USER_PREF      (1ULL << 63)  /* set/cleared by the SPFLT instruction */
#define SPFLT_VALID          (SPFLT_EN(0) | SPFLT_EN(1) | SPFLT_USER_PREF)

/* GLOBAL_STATUS, GLOBAL_OVF_CTRL, GLOBAL_CTRL: bit i is counter i (327357-001 §1.4.3.5-7). */
#define GLOBAL_CTR(i)   (1u << (i))
#define GLOBAL_VALID    (GLOBAL_CTR(0) | GLOBAL_CTR(1))

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

#endif
