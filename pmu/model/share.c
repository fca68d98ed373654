/* The page shared with the QEMU plugin; see pmu/model/share.h. */
#include "pmu/model/share.h"
#include "pmu/events.h"
#include "pmu/plugin_events.h"
#include "kernel/console.h"
#include "kernel/paging.h"
#include "platform/platform.h"
#include "arch/sync.h"
#include "lib/lib.h"

#define SAMPLING_REACH (1ULL << 32) /* events from overflow */

#include "knl_plugin.h" /* generated: $(BUILD)/gen/knl_plugin.h, rows of struct knl_plugin_event */

_Static_assert(PMU_MAX_COUNTERS <= PMUSHARE_COUNTERS, "a slot holds every counter of the model");
static struct pmushare *page;
/*
 * The plugin counts by KNC's event codes (pmu/plugin_events.h). On KNC an
 * EvtSel goes to it as it is; on a card presenting Knights Landing the
 * codes of KNL_PLUGIN_EVENTS go as the plugin event's KNC code (as_knc),
 * and the plugin's cycles, the KNC timing model's, are not used.
 */
static bool knc_codes;
static int32_t knl_as_knc[KNL_PLUGIN_COUNT]; /* knl_plugin[k]'s plugin event's KNC code, -1: none (0 is DATA_READ's) */
/* Bit c: the plugin counts the event whose umask << 8 | event code is c (EVTSEL_CODE). */
static uint8_t counted[(EVTSEL_UMASK_MASK | EVTSEL_EVENT_MASK) / 8 + 1];

static void count_code(uint32_t code)
{
	counted[code / 8] |= 1 << (code % 8);
}

/* The plugin's events the card's PMU selects: KNC's every one, KNL's by KNL_PLUGIN_EVENTS. */
static void plugin_codes(void)
{
	static const char *const names[PEV_COUNT] = PLUGIN_EVENT_NAMES;

	knc_codes = model_desc == &pmu_knc_desc;
	for (int i = 0; knc_codes && i < PEV_COUNT; i++) {
		const struct pmu_event *e = knc_event_named(names[i]);
		if (e) /* a name libpfm4 lacks: nothing selects it */
			count_code(e->code);
	}
	for (int k = 0; k < KNL_PLUGIN_COUNT; k++) {
		const struct pmu_event *e = knc_event_named(names[knl_plugin[k].pev]);
		knl_as_knc[k] = e && !strcmp(model_desc->pfm, "knl") ? (int32_t)e->code : -1;
		if (knl_as_knc[k] >= 0)
			count_code(knl_plugin[k].code);
	}
}

/* EvtSel e as the plugin reads it: KNC's as it is, another PMU's with the plugin's KNC code (0: none). */
static uint32_t for_plugin(uint32_t e)
{
	if (knc_codes)
		return e;
	for (int k = 0; k < KNL_PLUGIN_COUNT; k++)
		if (knl_as_knc[k] >= 0 && EVTSEL_CODE(e) == knl_plugin[k].code)
			return (e & ~(EVTSEL_UMASK_MASK | EVTSEL_EVENT_MASK)) | (uint32_t)knl_as_knc[k];
	return 0;
}

bool share_init(void)
{
	uint64_t base, size;

	for (unsigned n = 0; platform_shared_memory(n, &base, &size); n++) {
		if (size != PMUSHARE_BYTES)
			continue;
		if (!paging_map_identity(base, size, false))
			break;
		struct pmushare *p = (struct pmushare *)base;
		if (p->magic != PMUSHARE_MAGIC || p->version != PMUSHARE_VERSION)
			continue;
		plugin_codes();
		page = p;
		page->counters = model_desc->counters;
		page->card_seen = 1;
		model_plugin_cycles = knc_codes;
		stamp_use_clock(&page->clock); /* before any AP starts: each thread counts its own instructions */
		if (knc_codes)
			kprintf("pmu: QEMU plugin's page at %#lx: %d more events counted from execution\n", base, PEV_COUNT);
		else
			kprintf("pmu: QEMU plugin's page at %#lx: each thread's own clock, and %d of %s's events "
				"counted from execution\n", base, KNL_PLUGIN_COUNT, model_desc->name);
		return true;
	}
	return false;
}

struct pmushare_thread *share_slot(uint32_t apic_id)
{
	return page && apic_id < PMUSHARE_CPUS ? &page->thread[apic_id] : NULL;
}

uint64_t model_clock_of(uint32_t apic_id)
{
	return page && apic_id < PMUSHARE_CPUS ? READ_ONCE(page->thread[apic_id].clock) : rdtsc();
}

bool share_counts(uint32_t evtsel)
{
	uint32_t c = EVTSEL_CODE(evtsel); /* a table, not a search: every sync of a sampling counter asks */

	return counted[c / 8] >> (c % 8) & 1;
}

void share_publish(struct pmushare_thread *s, const struct pmu_model *m)
{
	uint32_t seq = READ_ONCE(s->seq) | 1; /* odd while the registers change */

	WRITE_ONCE(s->seq, seq);
	barrier();
	for (int i = 0; i < PMU_MAX_COUNTERS; i++)
		WRITE_ONCE(s->evtsel[i], for_plugin(m->evtsel[i]));
	WRITE_ONCE(s->global_ctrl, m->global_ctrl);
	WRITE_ONCE(s->spflt, m->spflt);
	barrier();
	WRITE_ONCE(s->seq, seq + 1);
}

void share_prefetch_loads(uint64_t vprefetch0, uint64_t vprefetch1)
{
	if (!page)
		return;
	WRITE_ONCE(page->prefetch_load[0], vprefetch0);
	WRITE_ONCE(page->prefetch_load[1], vprefetch1);
}

void share_task_assigned(uint32_t apic_id, uint32_t launch)
{
	struct pmushare_thread *s = share_slot(apic_id);

	if (!s)
		return;
	WRITE_ONCE(s->task_launch, launch + 1);
	WRITE_ONCE(s->task_clock, 0);
	WRITE_ONCE(s->task_state, PMUSHARE_TASK_RUN);
	__atomic_add_fetch(&page->task_gen, 1, __ATOMIC_RELEASE);
}

void share_task_start(uint32_t apic_id)
{
	struct pmushare_thread *s = share_slot(apic_id);

	if (!s)
		return;
	WRITE_ONCE(s->task_clock, model_clock());
	__atomic_add_fetch(&page->task_gen, 1, __ATOMIC_RELEASE);
}

void share_task_end(uint32_t apic_id, bool own)
{
	struct pmushare_thread *s = share_slot(apic_id);

	if (!s)
		return;
	/* another CPU's clock is not this one's to read: that task stops sharing at once */
	WRITE_ONCE(s->task_clock, own ? model_clock() - READ_ONCE(s->task_clock) : 0);
	WRITE_ONCE(s->task_state, PMUSHARE_TASK_ENDED);
	__atomic_add_fetch(&page->task_gen, 1, __ATOMIC_RELEASE);
}

void share_drop(struct pmushare_thread *s)
{
	for (int i = 0; i < PMU_MAX_COUNTERS; i++)
		__atomic_exchange_n(&s->delta[i], 0, __ATOMIC_RELAXED);
}

uint64_t share_poll_ticks(const struct pmushare_thread *s, const struct pmu_model *m)
{
	uint64_t poll = UINT64_MAX;

	for (int i = 0; i < PMU_MAX_COUNTERS; i++) {
		uint32_t e = m->evtsel[i];
		if ((e & (EVTSEL_EN | EVTSEL_INT)) != (EVTSEL_EN | EVTSEL_INT) || !(m->global_ctrl & GLOBAL_CTR(i)) ||
		    !share_counts(e))
			continue;
		uint64_t v = m->ctr[i] + READ_ONCE(s->delta[i]);
		if (v < model_mask() + 1 - SAMPLING_REACH)
			continue;
		uint64_t left = v > model_mask() ? 1 : model_mask() + 1 - v, ticks = SHARE_POLL_TICKS;
		uint64_t ran = m->last - m->set_at[i], got = v >= m->set_val[i] ? v - m->set_val[i] : 0;
		if (!got) { /* nothing counted since the write yet: the stretch before it */
			ran = m->prior_ran[i];
			got = m->prior_got[i];
		}
		while (ran >> 31) { /* left * ran below 2^63 (left is below 2^32) */
			ran >>= 1;
			got >>= 1;
		}
		if (got)
			ticks = left * ran / got * SHARE_POLL_EARLY / 8;
		ticks = ticks < SHARE_POLL_MIN ? SHARE_POLL_MIN : ticks > SHARE_POLL_TICKS ? SHARE_POLL_TICKS : ticks;
		poll = ticks < poll ? ticks : poll;
	}
	return poll;
}
