/*
 * The one text for each PMU verdict (pmu/rules.h): the shell prints it,
 * the mailbox service logs none (it answers with a status code). Apart
 * from pmu/rules.c because it formats event names (pmu/events.c).
 */
#include "pmu/rules.h"
#include "pmu/events.h"
#include "lib/fmt.h"
#include <pmuos/sample.h>

void pmu_result_text(const struct pmu_result *r, char *buf, size_t len)
{
	unsigned long long v = r->value;
	char name[48];

	switch (r->err) {
	case PMU_OK:
		snprintf(buf, len, "%s", "");
		return;
	case PMU_ERR_EVENT:
		snprintf(buf, len, "EvtSel %#llx sets EN, INT or reserved bit 19 (the driver owns them)", v);
		return;
	case PMU_ERR_COUNTER:
		snprintf(buf, len, "counter '%llu' must be 0 or 1", v);
		return;
	case PMU_ERR_L2_COUNTER:
		knc_event_format(r->value & (EVTSEL_UMASK_MASK | EVTSEL_EVENT_MASK), name, sizeof(name));
		snprintf(buf, len, "%s is an L2 event and counts only on counter 0", name);
		return;
	case PMU_ERR_PERIOD:
		if (v && v <= PMU_MAX_PERIOD)
			snprintf(buf, len, "a period needs an event");
		else
			snprintf(buf, len, "period %llu: should be period=N with N from 1 to 2^40 events", v);
		return;
	case PMU_ERR_TOO_MANY:
		snprintf(buf, len, "%llu events: 1 to %d take turns (at most %d events take turns)", v,
			 PMU_MUX_MAX, PMU_MUX_MAX);
		return;
	case PMU_ERR_SLICE:
		snprintf(buf, len, "a slice of %llu TSC ticks: should be slice=MS with MS from 1 to 1000 "
			 "(1 ms to 1 s of counting time)", v);
		return;
	case PMU_ERR_SPFLT:
		snprintf(buf, len, "SPFLT mask %#llx: only counters 0 and 1 can be gated", v);
		return;
	case PMU_ERR_SPFLT_MUX:
		snprintf(buf, len, "CPU %u's events take turns on the counters: SPFLT gating needs them on the "
			 "counters for the whole run (at most 2 events, at most one of them L2)", r->cpu);
		return;
	case PMU_ERR_CPUSET:
		snprintf(buf, len, "no CPU %u on this card (or an empty CPU set)", r->cpu);
		return;
	case PMU_ERR_OFFLINE:
		snprintf(buf, len, "CPU %u is not online (nothing was done)", r->cpu);
		return;
	case PMU_ERR_BUSY:
		snprintf(buf, len, "CPU %u did not answer (%u of the %u CPUs did it)", r->cpu, r->done, r->wanted);
		return;
	case PMU_ERR_NOMEM:
		snprintf(buf, len, "out of memory for CPU %u's sample ring", r->cpu);
		return;
	case PMU_ERR_FRAMES:
		snprintf(buf, len, "a call chain of %llu frames: 0 (none) to %d", v, PMU_CALLCHAIN_MAX);
		return;
	case PMU_ERR_COUNT:
		break;
	}
	snprintf(buf, len, "unknown PMU verdict %d", (int)r->err);
}
