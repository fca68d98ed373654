/*
 * `pmu selftest`: Ring-0 checks of the counting and PMI paths on the calling
 * CPU (the shell's, CPU 0), measured through the driver:
 *  1. INSTRUCTIONS_EXECUTED:k over regions of K = 1, 100 and 10^6
 *     instructions counts exactly K (a region's count minus the empty
 *     region's), where the backend's counts are exact;
 *  2. sampling with period P: the j-th PMI comes after the counter wrapped
 *     at exactly the j-th multiple of P events (checked against counter 1
 *     counting the same event) and its RIP lies in the loop;
 *  3. both counters overflowing in the same instruction and in consecutive
 *     ones, 10,000 times: no PMI lost (327357-001 §1.4.3.9).
 * It uses and then clears CPU 0's counters.
 */
#include "pmu/selftest.h"
#include "pmu/pmu.h"
#include "pmu/internal.h"
#include "apic/apic.h"
#include "kernel/console.h"
#include "lib/fmt.h"
#include "lib/lib.h"
#include "kernel/percpu.h"
#include "arch/x86.h"
#include "pmu/calib.h"

#define SAMPLE_PERIOD 100000
#define OVERFLOW_ROUNDS 10000
#define OVERFLOW_AT 60 /* events after the start at which counter 0 wraps */

static int failures;

static void check(bool ok, const char *what)
{
	if (!ok)
		failures++;
	kprintf("  %-4s %s\n", ok ? "ok" : "FAIL", what);
}

static void exact_counts(void)
{
	static const struct { void (*fn)(void); uint64_t k; } regions[] = {
		{ pmu_calib_1, 1 }, { pmu_calib_100, 100 }, { pmu_calib_1m, 1000000 },
	};
	char line[96];

	if (!pmu_counts_exact()) {
		kprintf("  skip exact counts: this backend's counts are not exact\n");
		return;
	}
	uint64_t empty = pmu_count_region(pmu_calib_empty);
	for (unsigned i = 0; i < 3; i++) {
		uint64_t got = pmu_count_region(regions[i].fn) - empty;
		snprintf(line, sizeof(line), "INSTRUCTIONS_EXECUTED:k over %lu instructions: %lu",
			 regions[i].k, got);
		check(got == regions[i].k, line);
	}
}

static struct cpuset self_set(void)
{
	struct cpuset s = { 0 };
	cpuset_add(&s, this_cpu()->cpu);
	return s;
}

static void sampling(void)
{
	struct cpuset me = self_set();
	uint32_t ev = pmu_hw->ev_instructions | EVTSEL_OS;
	static struct pmu_sample s[32];
	char line[120];
	uint64_t overwritten;

	pmu_configure(&me, 0, ev, SAMPLE_PERIOD);
	pmu_configure(&me, 1, ev, 0);
	pmu_clear(&me);
	pmu_start(&me);
	pmu_calib_1m();
	pmu_stop(&me);
	size_t n = pmu_samples(this_cpu()->cpu, s, 32, &overwritten);

	snprintf(line, sizeof(line), "period %u over 10^6 instructions: %lu samples", SAMPLE_PERIOD, n);
	check(n >= 9 && n <= 11 && overwritten == 0, line);
	uint64_t bad_rip = 0, bad_period = 0;
	for (size_t j = 0; j < n; j++) {
		/* Counter 0 wrapped at every P-th event and has counted ctr[0] since (the reload keeps them). */
		if (s[j].ctr[1] - s[j].ctr[0] != (j + 1) * SAMPLE_PERIOD)
			bad_period++;
		if (s[j].rip < (uint64_t)pmu_calib_1m || s[j].rip >= (uint64_t)pmu_calib_1m_end)
			bad_rip++;
	}
	snprintf(line, sizeof(line), "each PMI after exactly %u events (counter 1 as reference): %lu of %lu",
		 SAMPLE_PERIOD, n - bad_period, n);
	check(n && !bad_period, line);
	snprintf(line, sizeof(line), "sampled RIP inside the loop [%#lx, %#lx): %lu of %lu",
		 (uint64_t)pmu_calib_1m, (uint64_t)pmu_calib_1m_end, n - bad_rip, n);
	check(n && !bad_rip, line);
}

static void overflows(void)
{
	struct cpuset me = self_set();
	struct pmu_cpu *pc = pmu_this();
	uint32_t ev = pmu_hw->ev_instructions | EVTSEL_OS;
	/* A period far beyond a round: each counter wraps exactly once per round. */
	uint64_t period = 1000000;
	char line[120];
	unsigned agree = 0, one_pmi = 0;

	pmu_configure(&me, 0, ev, period);
	pmu_configure(&me, 1, ev, period);
	pmu_clear(&me);
	pc->running = true;
	for (unsigned r = 0; r < OVERFLOW_ROUNDS; r++) {
		uint64_t s0 = pc->samples[0], s1 = pc->samples[1], pmis = pc->pmis, status;
		uint64_t head = pc->ring_written;
		/* Even rounds: both wrap in the same instruction; odd: counter 1 one later. */
		uint64_t f = irq_save();
		pmu_ops->wrmsr(pmu_ctr_msr(pmu_hw, 0), pmu_ctr_mask(pmu_hw) + 1 - OVERFLOW_AT);
		pmu_ops->wrmsr(pmu_ctr_msr(pmu_hw, 1), pmu_ctr_mask(pmu_hw) + 1 - OVERFLOW_AT - (r & 1));
		pmu_ops->wrmsr(pmu_hw->global_ctrl, GLOBAL_CTR(0) | GLOBAL_CTR(1));
		sti();
		pmu_calib_100();
		cli();
		pmu_ops->wrmsr(pmu_hw->global_ctrl, 0);
		irq_restore(f);
		pmu_ops->rdmsr(pmu_hw->global_status, &status);

		unsigned bits = 0, records = pc->ring_written - head;
		for (unsigned i = 0; i < records; i++)
			bits += popcount64(pc->ring[(head + i) % PMU_SAMPLE_RING].ovf_mask);
		bool ok = pc->samples[0] == s0 + 1 && pc->samples[1] == s1 + 1 && bits == 2 &&
			  status == 0 && !(apic_lvt_pc_read() & APIC_LVT_MASKED);
		agree += ok;
		one_pmi += ok && pc->pmis == pmis + 1;
	}
	pc->running = false;
	snprintf(line, sizeof(line), "%u double overflows (same and consecutive instruction): %u handled in full, "
		 "%u with one PMI", OVERFLOW_ROUNDS, agree, one_pmi);
	check(agree == OVERFLOW_ROUNDS, line);
	pmu_configure(&me, 0, 0, 0);
	pmu_configure(&me, 1, 0, 0);
	pmu_clear(&me);
}

int pmu_selftest(void)
{
	uint32_t limit = pmu_pmi_limit();

	failures = 0;
	kprintf("pmu selftest on CPU %u, backend %s:\n", this_cpu()->cpu, pmu_backend_name());
	/* The checks measure the PMI protocol, not the rate limit. */
	pmu_set_pmi_limit(PMU_PMI_LIMIT_MAX);
	exact_counts();
	sampling();
	overflows();
	pmu_set_pmi_limit(limit);
	kprintf("pmu selftest: %s\n", failures ? "FAIL" : "PASS");
	return failures;
}
