/* Software model of the KNC core PMU; see pmu/model.h. Pure, unit-tested on the host. */
#include "pmu/model.h"
#include "pmu/regs.h"

bool model_counts_event(uint32_t evtsel)
{
	uint32_t code = EVTSEL_CODE(evtsel);

	return code == KNC_EV_INSTRUCTIONS_EXECUTED || code == KNC_EV_CPU_CLK_UNHALTED;
}

void model_reset(struct pmu_model *m, uint64_t now)
{
	*m = (struct pmu_model){ .last = now };
}

/* Counter i accumulates events in the current state, at CPL 0 or (`user`) at CPL 1-3. */
static bool counts_at(const struct pmu_model *m, int i, bool user)
{
	uint32_t e = m->evtsel[i];

	if (!(e & EVTSEL_EN) || !(m->global_ctrl & GLOBAL_CTR(i)) || m->halted)
		return false;
	if (!(e & (user ? EVTSEL_USR : EVTSEL_OS)))
		return false;
	if ((m->spflt & SPFLT_EN(i)) && !(m->spflt & SPFLT_USER_PREF))
		return false;
	return model_counts_event(e);
}

/* The CMASK/INV comparison for one tick with one event in it. */
static bool tick_condition(uint32_t e)
{
	uint32_t cmask = EVTSEL_CMASK(e);

	if (cmask == 0)
		return true;
	return (1 >= cmask) != !!(e & EVTSEL_INV);
}

static void update_line(struct pmu_model *m)
{
	uint32_t intr = 0;

	for (int i = 0; i < KNC_NUM_COUNTERS; i++)
		if (m->evtsel[i] & EVTSEL_INT)
			intr |= GLOBAL_CTR(i);
	bool line = (m->status & intr) != 0;
	if (line && !m->line)
		m->rose = true;
	m->line = line;
}

void model_advance(struct pmu_model *m, uint64_t now)
{
	if (now <= m->last)
		return;
	uint64_t ticks = now - m->last;
	uint32_t status = m->status;

	m->last = now;
	if (!m->active)
		return; /* and every edge condition is false (select_active) */
	for (int i = 0; i < KNC_NUM_COUNTERS; i++) {
		if (!(m->active & GLOBAL_CTR(i)))
			continue;
		uint32_t e = m->evtsel[i];
		bool cond = tick_condition(e);
		uint64_t inc = 0;

		if (e & EVTSEL_EDGE)
			inc = cond && !(m->cond & GLOBAL_CTR(i));
		else if (cond)
			inc = ticks;
		m->cond = cond ? m->cond | GLOBAL_CTR(i) : m->cond & ~GLOBAL_CTR(i);
		if (inc == 0)
			continue;
		uint64_t v = m->ctr[i] + inc;
		if (v > KNC_CTR_MASK)
			m->status |= GLOBAL_CTR(i); /* sticky, with or without INT (000 §1.4.3.5) */
		m->ctr[i] = v & KNC_CTR_MASK;
	}
	if (m->status != status)
		update_line(m);
}

void model_add(struct pmu_model *m, int i, uint64_t n)
{
	uint64_t v = m->ctr[i] + n;

	if (v > KNC_CTR_MASK) {
		m->status |= GLOBAL_CTR(i); /* sticky (000 §1.4.3.5) */
		update_line(m);
	}
	m->ctr[i] = v & KNC_CTR_MASK;
}

/*
 * Which counters count from now on (advance and ticks_to_overflow look only
 * at those); edge detection starts afresh for the others.
 */
static void select_active(struct pmu_model *m)
{
	m->active = m->active_at[m->cpl != 0];
	m->cond &= m->active;
}

/* After a change of anything but the CPL: the counters that count at each privilege level. */
static void state_changed(struct pmu_model *m)
{
	m->active_at[0] = m->active_at[1] = 0;
	for (int i = 0; i < KNC_NUM_COUNTERS; i++) {
		if (counts_at(m, i, false))
			m->active_at[0] |= GLOBAL_CTR(i);
		if (counts_at(m, i, true))
			m->active_at[1] |= GLOBAL_CTR(i);
	}
	select_active(m);
}

int model_wrmsr(struct pmu_model *m, uint64_t now, uint32_t msr, uint64_t v)
{
	model_advance(m, now);
	switch (msr) {
	case MSR_KNC_PERFCTR0:
	case MSR_KNC_PERFCTR1:
		if (v & ~KNC_CTR_MASK)
			return -1;
		m->ctr[msr - MSR_KNC_PERFCTR0] = v;
		return 0; /* a count: what counts and the line stay as they are */
	case MSR_KNC_EVNTSEL0:
	case MSR_KNC_EVNTSEL1:
		if (v > 0xffffffffULL || (v & EVTSEL_RESERVED))
			return -1;
		m->evtsel[msr - MSR_KNC_EVNTSEL0] = v;
		update_line(m); /* EvtSel.INT gates the line */
		break;
	case MSR_KNC_SPFLT_CTRL:
		if (v & ~SPFLT_VALID)
			return -1;
		m->spflt = v;
		break;
	case MSR_KNC_GLOBAL_OVF_CTRL:
		if (v & ~(uint64_t)GLOBAL_VALID)
			return -1;
		m->status &= ~(uint32_t)v;
		update_line(m);
		return 0;
	case MSR_KNC_GLOBAL_CTRL:
		if (v & ~(uint64_t)GLOBAL_VALID)
			return -1;
		m->global_ctrl = v;
		break;
	default: /* GLOBAL_STATUS is read-only; anything else is not the PMU's */
		return -1;
	}
	state_changed(m);
	return 0;
}

int model_rdmsr(struct pmu_model *m, uint64_t now, uint32_t msr, uint64_t *v)
{
	model_advance(m, now);
	switch (msr) {
	case MSR_KNC_PERFCTR0:
	case MSR_KNC_PERFCTR1:
		*v = m->ctr[msr - MSR_KNC_PERFCTR0];
		return 0;
	case MSR_KNC_EVNTSEL0:
	case MSR_KNC_EVNTSEL1:
		*v = m->evtsel[msr - MSR_KNC_EVNTSEL0];
		return 0;
	case MSR_KNC_SPFLT_CTRL:
		*v = m->spflt;
		return 0;
	case MSR_KNC_GLOBAL_STATUS:
		*v = m->status;
		return 0;
	case MSR_KNC_GLOBAL_CTRL:
		*v = m->global_ctrl;
		return 0;
	default: /* GLOBAL_OVF_CTRL is write-only */
		return -1;
	}
}

int model_rdpmc(struct pmu_model *m, uint64_t now, uint32_t ecx, uint64_t *v)
{
	if (ecx >= KNC_NUM_COUNTERS)
		return -1;
	return model_rdmsr(m, now, MSR_KNC_PERFCTR(ecx), v);
}

void model_spflt(struct pmu_model *m, uint64_t now, uint64_t operand)
{
	model_advance(m, now);
	if (operand & 1)
		m->spflt |= SPFLT_USER_PREF;
	else
		m->spflt &= ~SPFLT_USER_PREF;
	state_changed(m);
}

void model_set_cpl(struct pmu_model *m, uint64_t now, uint8_t cpl)
{
	model_advance(m, now);
	m->cpl = cpl;
	select_active(m);
}

void model_set_halted(struct pmu_model *m, uint64_t now, bool halted)
{
	model_advance(m, now);
	m->halted = halted;
	state_changed(m);
}

uint64_t model_ticks_to_overflow(const struct pmu_model *m)
{
	uint64_t best = UINT64_MAX;

	if (!m->active)
		return best;
	for (int i = 0; i < KNC_NUM_COUNTERS; i++) {
		uint32_t e = m->evtsel[i];
		if (!(m->active & GLOBAL_CTR(i)) || (e & EVTSEL_EDGE) || !tick_condition(e))
			continue;
		uint64_t left = KNC_CTR_MASK + 1 - m->ctr[i];
		if (left < best)
			best = left;
	}
	return best;
}
