/*
 * Multiplexing: more counting events than the two counters, taking turns in
 * time slices, as perf does. Each CPU cuts its own slices with a timer in
 * ticks of its counting time (the model's clock, pmu/model/share.h: the TSC, or
 * with the QEMU plugin the thread's own instructions, so that threads
 * running at once share no time), so an event's share of the time is
 * measured where it counted; readings carry each event's count and time on
 * a counter, and the host scales by enabled / running time. Halted time is
 * not counting time (pmu_idle_enter/exit pause the slice and the enabled
 * time, as perf's task events count only while the task runs): slices spent
 * halted before a short program started left its events on the counters
 * for a fraction of it, and the slice timer would wake a halted CPU inside
 * another CPU's measured time (one -icount clock). Everything here
 * runs on the CPU itself with interrupts off (pmu.c's per-CPU operations
 * and the slice timer); which events share a slice is pmu_place's
 * (pmu/rules.c).
 */
#include "pmu/internal.h"
#include "lib/lib.h"
#include "pmu/model/share.h"

/* Puts the next slice's events on the (stopped) counters, at 0. */
static void slice_load(struct pmu_cpu *pc)
{
	struct pmu_mux *m = &pc->mux;

	m->next = (m->next + pmu_place(pmu_hw, m->nev, m->evtsel, m->paired, m->next, m->on)) % m->nev;
	for (int i = 0; i < pmu_hw->counters; i++)
		pmu_program_counter(pc, i, m->on[i] >= 0 ? m->evtsel[m->on[i]] : 0, 0);
	m->slice_ran = 0;
}

/* Adds the current slice's counts and time to its events. */
static void slice_account(struct pmu_cpu *pc)
{
	struct pmu_mux *m = &pc->mux;

	for (int i = 0; i < pmu_hw->counters; i++) {
		if (m->on[i] < 0)
			continue;
		m->value[m->on[i]] += pmu_counter_events(pc, i);
		m->running[m->on[i]] += m->slice_ran;
	}
}

/* The tick of the model's clock at which the running slice ends. */
static uint64_t slice_due(const struct pmu_cpu *pc)
{
	const struct pmu_mux *m = &pc->mux;

	return pc->start_tsc + m->slice_ticks - MIN(m->slice_ran, m->slice_ticks);
}

/* The slice timer: stop, account, next events, go. */
static void slice_end(struct timer *t)
{
	struct pmu_cpu *pc = t->arg;

	if (!pc->running || !pc->mux.nev)
		return;
	uint64_t due = slice_due(pc);
	if (model_clock() < due) { /* early: the TSC went on while other threads ran (model_clock_deadline) */
		timer_arm(&pc->mux.timer, model_clock_deadline(due), slice_end, pc);
		return;
	}
	pmu_ops->wrmsr(pmu_hw->global_ctrl, 0);
	uint64_t now = model_clock();
	pc->enabled_ticks += now - pc->start_tsc;
	pc->mux.slice_ran += now - pc->start_tsc;
	slice_account(pc);
	slice_load(pc);
	pmu_counters_go(pc);
	timer_arm(&pc->mux.timer, model_clock_deadline(slice_due(pc)), slice_end, pc);
}

void mux_setup(struct pmu_cpu *pc)
{
	struct pmu_mux *m = &pc->mux;

	timer_cancel(&m->timer);
	m->nev = pc->mux_cfg.nev;
	m->paired = pc->mux_cfg.paired;
	memcpy(m->evtsel, pc->mux_cfg.evtsel, sizeof(m->evtsel));
	m->slice_ticks = MAX(pc->mux_cfg.slice_ticks, 1);
	m->next = 0;
	mux_clear(pc);
	slice_load(pc);
}

void mux_off(struct pmu_cpu *pc)
{
	timer_cancel(&pc->mux.timer);
	pc->mux.nev = 0;
	for (int i = 0; i < pmu_hw->counters; i++)
		pmu_program_counter(pc, i, 0, 0);
}

void mux_started(struct pmu_cpu *pc)
{
	struct pmu_mux *m = &pc->mux;

	if (pmu_mux_rotates(pmu_hw, m->nev, m->evtsel, m->paired))
		timer_arm(&m->timer, model_clock_deadline(slice_due(pc)), slice_end, pc);
}

void mux_stopped(struct pmu_cpu *pc, uint64_t now)
{
	if (!pc->mux.nev)
		return;
	timer_cancel(&pc->mux.timer);
	pc->mux.slice_ran += now - pc->start_tsc;
}

void mux_clear(struct pmu_cpu *pc)
{
	struct pmu_mux *m = &pc->mux;

	memset(m->value, 0, sizeof(m->value));
	memset(m->running, 0, sizeof(m->running));
	m->slice_ran = 0;
}

void mux_read(struct pmu_cpu *pc, struct pmu_reading *r, uint64_t live)
{
	const struct pmu_mux *m = &pc->mux;

	r->mux = true;
	r->nev = m->nev;
	for (uint32_t e = 0; e < m->nev; e++) {
		r->evtsel[e] = m->evtsel[e];
		r->value[e] = m->value[e];
		r->running_ticks[e] = m->running[e];
	}
	for (int i = 0; i < pmu_hw->counters; i++) {
		if (m->on[i] < 0)
			continue;
		r->value[m->on[i]] += pmu_counter_events(pc, i);
		r->running_ticks[m->on[i]] += m->slice_ran + live;
	}
}
