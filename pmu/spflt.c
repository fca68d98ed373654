/*
 * SPFLT regions of the calling CPU (pmu/pmu.h): whether one is open, and
 * who is told when the emulated SPFLT opens or closes one (the mailbox
 * service, which keeps the host's work off a measured core meanwhile:
 * docs/design.md §7).
 */
#include "pmu/pmu.h"
#include "pmu/internal.h"
#include "kernel/percpu.h"

/* Who is told: the mailbox service and, on a PC in QEMU, kernel/hosttlb.c. */
#define REGION_HOOKS 2
static void (*region_hooks[REGION_HOOKS])(bool open);

/* PERF_SPFLT_CONTROL: a counter gated (SPFLT_EN) while USER_PREF is 1 (327357-001 §1.4.3.4, Table 1-7). */
bool pmu_spflt_open(uint64_t spflt)
{
	return (spflt & SPFLT_USER_PREF) && (spflt & pmu_all_counters(pmu_hw));
}

bool pmu_region_open(void)
{
	uint64_t v;

	return pmu_ops && this_cpu()->pmu && pmu_hw->spflt_ctrl && pmu_ops->rdmsr(pmu_hw->spflt_ctrl, &v) == 0 &&
	       pmu_spflt_open(v);
}

bool pmu_on_region(void (*fn)(bool open))
{
	for (int i = 0; i < REGION_HOOKS; i++)
		if (!region_hooks[i]) {
			region_hooks[i] = fn;
			return true;
		}
	return false;
}

void pmu_region_note(bool was_open, bool open)
{
	for (int i = 0; was_open != open && i < REGION_HOOKS && region_hooks[i]; i++)
		region_hooks[i](open);
}
