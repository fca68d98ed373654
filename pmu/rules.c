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

struct pmu_result pmu_check_config(const struct pmu_desc *d, uint64_t ctr, uint32_t evtsel, uint64_t period)
{
	if (ctr >= d->counters)
		return refuse(PMU_ERR_COUNTER, ctr);
	if (pmu_check_evtsel(evtsel) != PMU_OK)
		return refuse(PMU_ERR_EVENT, evtsel);
	if (evtsel && !pmu_counter_can(d, (int)ctr, EVTSEL_CODE(evtsel)))
		return refuse(PMU_ERR_L2_COUNTER, evtsel);
	/* At most the PMU's longest period (KNC: 2^40 events, 327357-001 §1.4.3.2). */
	if (period > d->max_period || (period && !evtsel))
		return refuse(PMU_ERR_PERIOD, period);
	return refuse(PMU_OK, 0);
}

/* An event counter 1 cannot count: on KNC an L2 event (docs/design.md §5.1). */
static bool l2(const struct pmu_desc *d, uint32_t evtsel)
{
	return !pmu_counter_can(d, 1, EVTSEL_CODE(evtsel));
}

bool pmu_pair_fits(const struct pmu_desc *d, uint32_t a, uint32_t b)
{
	return !(l2(d, a) && l2(d, b));
}

struct pmu_result pmu_check_mux(const struct pmu_desc *d, uint32_t nev, const uint32_t *evtsel, uint32_t paired,
				uint64_t slice_ticks, uint64_t tsc_hz)
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
		if (paired & (1u << i) && !pmu_pair_fits(d, evtsel[i], evtsel[i + 1]))
			return refuse(PMU_ERR_GROUP_L2, i);
	if (slice_ticks < tsc_hz / PMU_SLICE_MIN_PER_S || slice_ticks > tsc_hz)
		return refuse(PMU_ERR_SLICE, slice_ticks);
	return refuse(PMU_OK, 0);
}

struct pmu_result pmu_check_spflt(const struct pmu_desc *d, uint64_t mask)
{
	uint64_t can = d->spflt_ctrl ? pmu_all_counters(d) : 0;

	return refuse(mask & ~can ? PMU_ERR_SPFLT : PMU_OK, mask);
}

struct pmu_result pmu_check_callchain(uint32_t frames)
{
	return refuse(frames > PMU_CALLCHAIN_MAX ? PMU_ERR_FRAMES : PMU_OK, frames);
}

struct pmu_result pmu_check_cpu_clock(uint64_t ns)
{
	return refuse(ns && (ns < PMU_CPU_CLOCK_MIN_NS || ns > PMU_CPU_CLOCK_MAX_NS) ? PMU_ERR_CPU_CLOCK : PMU_OK, ns);
}

uint32_t pmu_place(const struct pmu_desc *d, uint32_t nev, const uint32_t *evtsel, uint32_t paired, uint32_t first,
		   int on[PMU_MAX_COUNTERS])
{
	uint32_t second = (first + 1) % nev;
	bool pair = paired & (1u << first);

	for (int i = 2; i < PMU_MAX_COUNTERS; i++)
		on[i] = -1; /* two events share a slice at most (a group is a pair) */
	on[0] = first;
	/* A single event shares its slice with the next unless that one starts a pair. */
	on[1] = nev > 1 && (pair || !(paired & (1u << second))) ? (int)second : -1;
	if (on[1] >= 0 && l2(d, evtsel[on[1]])) {
		if (l2(d, evtsel[on[0]]))
			on[1] = -1; /* never in a pair: pmu_check_mux refuses two L2 events paired */
		else {
			int t = on[0];
			on[0] = on[1];
			on[1] = t;
		}
	}
	return on[1] >= 0 ? 2 : 1;
}

bool pmu_mux_rotates(const struct pmu_desc *d, uint32_t nev, const uint32_t *evtsel, uint32_t paired)
{
	int on[PMU_MAX_COUNTERS];

	return nev && pmu_place(d, nev, evtsel, paired, 0, on) < nev;
}

uint64_t pmu_time_to_ticks(uint64_t n, uint64_t per_second, uint64_t tsc_hz)
{
	/* n * tsc_hz / per_second without the 2^72 product. */
	return n * (tsc_hz / per_second) + n * (tsc_hz % per_second) / per_second;
}
