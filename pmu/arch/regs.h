/*
 * Architectural performance monitoring (Intel SDM Vol. 3B §18.2, the MSRs
 * in Vol. 4 Table 2-2): the MSR numbers, CPUID leaf 0AH's fields, and the
 * description (pmu/desc.h) made from them. Knights Landing (Xeon Phi x200)
 * is version 3 with 2 general-purpose and 3 fixed counters per thread
 * (likwid's KNL counter list; libpfm4's `knl` PMU). Only the arch backend
 * and the software model of this PMU name these.
 */
#ifndef PMU_ARCH_REGS_H
#define PMU_ARCH_REGS_H

#include <stdint.h>
#include <stdbool.h>
#include "pmu/desc.h"

#define MSR_ARCH_PMC0               0xc1  /* IA32_PMC0; IA32_PMCi is + i */
#define MSR_ARCH_PERFEVTSEL0        0x186 /* IA32_PERFEVTSEL0 */
#define MSR_ARCH_FIXED_CTR0         0x309 /* IA32_FIXED_CTR0 (instructions retired) */
#define MSR_ARCH_FIXED_CTR_CTRL     0x38d /* IA32_FIXED_CTR_CTRL */
#define MSR_ARCH_PERF_GLOBAL_STATUS 0x38e /* IA32_PERF_GLOBAL_STATUS (version 2 and later) */
#define MSR_ARCH_PERF_GLOBAL_CTRL   0x38f /* IA32_PERF_GLOBAL_CTRL */
#define MSR_ARCH_PERF_GLOBAL_OVF_CTRL 0x390 /* IA32_PERF_GLOBAL_OVF_CTRL */

/* The architectural events the driver and the model use (SDM Vol. 3B Table 18-1, umask 0). */
#define ARCH_EV_INSTRUCTIONS_RETIRED 0xc0
#define ARCH_EV_UNHALTED_CORE_CYCLES 0x3c

/* CPUID leaf 0AH (SDM Vol. 2A, CPUID): EAX and EDX fields. */
#define CPUID_0A_VERSION(eax)     ((eax) & 0xff)
#define CPUID_0A_COUNTERS(eax)    (((eax) >> 8) & 0xff)
#define CPUID_0A_WIDTH(eax)       (((eax) >> 16) & 0xff)
#define CPUID_0A_FIXED(edx)       ((edx) & 0x1f)
#define CPUID_0A_FIXED_WIDTH(edx) (((edx) >> 5) & 0xff)

/*
 * What CPUID leaf 0AH reports on a Knights Landing core, for the software
 * model that presents one (QEMU's TCG reports a leaf of zeros): version 3,
 * 2 counters of 40 bits, 7 architectural events; 3 fixed counters of 40
 * bits. The counts are likwid's and Linux's for KNL; the widths are
 * Silvermont's, whose core KNL's is (Linux commit 1e7b9390 "Add perf core
 * PMU support for Intel Knights Landing"), not read from a KNL.
 */
#define KNL_CPUID_0A_EAX 0x07280203u
#define KNL_CPUID_0A_EDX 0x00000503u

/*
 * Fills *d from CPUID leaf 0AH's EAX and EDX: true for version 2 or later
 * with PMU_MAX_COUNTERS or more counters of 32 to 63 bits (those beyond
 * are not used); false, *d untouched, otherwise (version 1 has no global
 * control: not supported). Its fixed counters, up to PMU_MAX_FIXED, when
 * they are 32 to 63 bits wide too; none otherwise.
 */
bool pmu_arch_describe(struct pmu_desc *d, uint32_t eax, uint32_t edx);

/* The description in use by the arch backend, or by the model presenting KNL (pmu/arch/backend.c). */
extern struct pmu_desc pmu_arch_desc;

#endif
