/* The PMU's rules and event placement; see pmu/rules.h. Pure, unit-tested on the host. */
#include "pmu/rules.h"
#include <pmuos/sample.h>

enum pmu_err pmu_check_evtsel(uint32_t evtsel)
{
	/* EN and INT are the driver's; bit 19 is reserved (327357-001 Table 1-5). */
	return evtsel & (EVTSEL_RESERVED | EVTSEL_EN | EVTSEL_INT) ? PMU_ERR_EVENT : PMU_OK;
}

static struct pmu_result refuse(enum pmu_err err, uint64_t value)
{
	return (struct pmu_result){ .err = err, .value = value };
}

struct pmu_result pmu_check_config(uint64_t ctr, uint32_t evtsel, uint64_t period)
{
	if (ctr >= KNC_NUM_COUNTERS)
		return refuse(PMU_ERR_COUNTER, ctr);
	if (pmu_check_evtsel(evtsel) != PMU_OK)
		return refuse(PMU_ERR_EVENT, evtsel);
	if (ctr != 0 && knc_event_counter0_only(EVTSEL_CODE(evtsel)))
		return refuse(PMU_ERR_L2_COUNTER, evtsel);
	/* A counter's 40 bits hold at most 2^40 events to an overflow (327357-001 §1.4.3.2). */
	if (period > PMU_MAX_PERIOD || (period && !evtsel))
		return refuse(PMU_ERR_PERIOD, period);
	return refuse(PMU_OK, 0);
}

static bool l2(uint32_t evtsel)
{
	return knc_event_counter0_only(EVTSEL_CODE(evtsel));
}

bool pmu_pair_fits(uint32_t a, uint32_t b)
{
	return !(l2(a) && l2(b));
}

struct pmu_result pmu_check_mux(uint32_t nev, const uint32_t *evtsel, uint32_t paired, uint64_t slice_ticks,
				uint64_t tsc_hz)
{
	if (nev < 1 || nev > MBOX_MUX_MAX)
		return refuse(PMU_ERR_TOO_MANY, nev);
	for (uint32_t i = 0; i < nev; i++)
		if (pmu_check_evtsel(evtsel[i]) != PMU_OK)
			return refuse(PMU_ERR_EVENT, evtsel[i]);
	/* A pair ends inside the list, and two counters hold no group of three. */
	if (paired >> (nev - 1) || paired & (paired >> 1))
		return refuse(PMU_ERR_GROUP, paired);
	for (uint32_t i = 0; i + 1 < nev; i++)
		if (paired & (1u << i) && !pmu_pair_fits(evtsel[i], evtsel[i + 1]))
			return refuse(PMU_ERR_GROUP_L2, i);
	if (slice_ticks < tsc_hz / PMU_SLICE_MIN_PER_S || slice_ticks > tsc_hz)
		return refuse(PMU_ERR_SLICE, slice_ticks);
	return refuse(PMU_OK, 0);
}

struct pmu_result pmu_check_spflt(uint64_t mask)
{
	return refuse(mask & ~(SPFLT_EN(0) | SPFLT_EN(1)) ? PMU_ERR_SPFLT : PMU_OK, mask);
}

struct pmu_result pmu_check_callchain(uint32_t frames)
{
	return refuse(frames > PMU_CALLCHAIN_MAX ? PMU_ERR_FRAMES : PMU_OK, frames);
}

struct pmu_result pmu_check_cpu_clock(uint64_t ns)
{
	return refuse(ns && (ns < PMU_CPU_CLOCK_MIN_NS || ns > PMU_CPU_CLOCK_MAX_NS) ? PMU_ERR_CPU_CLOCK : PMU_OK, ns);
}

uint32_t pmu_place(uint32_t nev, const uint32_t *evtsel, uint32_t paired, uint32_t first,
		   int on[KNC_NUM_COUNTERS])
{
	uint32_t second = (first + 1) % nev;
	bool pair = paired & (1u << first);

	on[0] = first;
	/* A single event shares its slice with the next unless that one starts a pair. */
	on[1] = nev > 1 && (pair || !(paired & (1u << second))) ? (int)second : -1;
	if (on[1] >= 0 && l2(evtsel[on[1]])) {
		if (l2(evtsel[on[0]]))
			on[1] = -1; /* never in a pair: pmu_check_mux refuses two L2 events paired */
		else {
			int t = on[0];
			on[0] = on[1];
			on[1] = t;
		}
	}
	return on[1] >= 0 ? 2 : 1;
}

bool pmu_mux_rotates(uint32_t nev, const uint32_t *evtsel, uint32_t paired)
{
	int on[KNC_NUM_COUNTERS];

	return nev && pmu_place(nev, evtsel, paired, 0, on) < nev;
}

uint64_t pmu_time_to_ticks(uint64_t n, uint64_t per_second, uint64_t tsc_hz)
{
	/* n * tsc_hz / per_second without the 2^72 product. */
	return n * (tsc_hz / per_second) + n * (tsc_hz % per_second) / per_second;
}
