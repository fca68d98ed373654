/* Software model of a core PMU (KNC's by default); see pmu/model/core.h. Pure, unit-tested on the host. */
#include "pmu/model/core.h"

bool model_plugin_cycles;
const struct pmu_desc *model_desc = &pmu_knc_desc;
struct model_fast model_fast = { /* pmu_knc_desc's */
	.mask = KNC_CTR_MASK, .ctr_reserved = ~KNC_CTR_MASK, .sext32 = false,
};

void model_present(const struct pmu_desc *d)
{
	model_desc = d;
	model_fast = (struct model_fast){ .mask = d->ctr_mask, .sext32 = d->ctr_write_sext32,
					  .ctr_reserved = d->ctr_write_sext32 ? ~(uint64_t)INT32_MAX : ~d->ctr_mask };
}

bool model_counts_event(uint32_t evtsel)
{
	uint32_t code = EVTSEL_CODE(evtsel);

	return code == model_desc->ev_instructions || (code == model_desc->ev_cycles && !model_plugin_cycles);
}

void model_reset(struct pmu_model *m, uint64_t now)
{
	*m = (struct pmu_model){ .last = now };
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
	bool line = (m->status & m->intr) != 0;
	if (line && !m->line)
		m->rose = true;
	m->line = line;
}

/* model_advance for counters that are not all plain: edge detect and the CMASK/INV comparison. */
static void advance_general(struct pmu_model *m, uint64_t ticks)
{
	uint64_t mask = model_mask();

	for (int i = 0; i < PMU_MAX_COUNTERS; i++) {
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
		if (v > mask)
			m->status |= GLOBAL_CTR(i); /* sticky, with or without INT (327357-001 §1.4.3.5) */
		m->ctr[i] = v & mask;
	}
	/*
	 * The fixed counters' events, instructions retired, unhalted core
	 * cycles and unhalted reference cycles, are each one per tick the
	 * thread is not halted: a tick is an instruction and, without the
	 * plugin's timing (KNC's alone), a cycle of the TSC's rate.
	 */
	for (int j = 0; j < PMU_MAX_FIXED; j++) {
		if (!(m->active & MODEL_FIXED(j)))
			continue;
		uint64_t v = m->fixed[j] + ticks, fmask = pmu_fixed_mask(model_desc);
		if (v > fmask)
			m->status |= GLOBAL_FIXED(j); /* sticky, as a general counter's (Intel SDM Vol. 3B §18.2.2) */
		m->fixed[j] = v & fmask;
	}
}

/*
 * Every privilege change and emulated access advances the model, mostly
 * with plain counters only: that case is straight-line code
 * (bench/tasks.py, bench/pmi.py count it).
 */
void model_advance_counting(struct pmu_model *m, uint64_t now)
{
	uint64_t ticks = now - m->last, mask = model_mask();
	uint64_t status = m->status;
	uint8_t a = m->active;

	m->last = now;
	if (a & ~m->plain) {
		advance_general(m, ticks);
	} else {
		/* Branch-free: an inactive counter adds 0 (PMU_MAX_COUNTERS is 2). */
		uint64_t v0 = m->ctr[0] + ticks * (a & 1);
		uint64_t v1 = m->ctr[1] + ticks * (a >> 1 & 1);

		m->cond |= a; /* a plain counter's condition holds on every tick */
		m->status |= (uint32_t)(v0 > mask) | (uint32_t)(v1 > mask) << 1; /* sticky (327357-001 §1.4.3.5) */
		m->ctr[0] = v0 & mask;
		m->ctr[1] = v1 & mask;
	}
	if (m->status != status)
		update_line(m);
}

void model_add(struct pmu_model *m, int i, uint64_t n)
{
	uint64_t v = m->ctr[i] + n, mask = model_mask();

	if (v > mask) {
		m->status |= GLOBAL_CTR(i); /* sticky (327357-001 §1.4.3.5) */
		update_line(m);
	}
	m->ctr[i] = v & mask;
}



/* model_enables_changed for any GLOBAL_CTRL: the fixed counters' enables (bit 32 + j) too. */
static void enables_all(struct pmu_model *m)
{
	uint8_t on = (uint8_t)(m->global_ctrl & PMU_ALL_COUNTERS);

	for (int j = 0; j < PMU_MAX_FIXED; j++)
		if (m->global_ctrl & GLOBAL_FIXED(j))
			on |= MODEL_FIXED(j);
	m->at_os = m->sel_os & on;
	m->at_usr = m->sel_usr & on;
	model_state_changed(m);
}

/* After a write of an EvtSel or of FIXED_CTR_CTRL: what each counter's selection implies. */
static void evtsel_changed(struct pmu_model *m)
{
	m->plain = m->sel_os = m->sel_usr = m->intr = 0;
	for (int i = 0; i < PMU_MAX_COUNTERS; i++) {
		uint32_t e = m->evtsel[i];
		if (!(e & EVTSEL_EDGE) && tick_condition(e))
			m->plain |= GLOBAL_CTR(i);
		if (e & EVTSEL_INT)
			m->intr |= GLOBAL_CTR(i);
		if (!(e & EVTSEL_EN) || !model_counts_event(e))
			continue;
		if (e & EVTSEL_OS)
			m->sel_os |= GLOBAL_CTR(i);
		if (e & EVTSEL_USR)
			m->sel_usr |= GLOBAL_CTR(i);
	}
	for (int j = 0; j < PMU_MAX_FIXED; j++) {
		if (m->fixed_ctrl & FIXED_CTRL_OS(j))
			m->sel_os |= MODEL_FIXED(j);
		if (m->fixed_ctrl & FIXED_CTRL_USR(j))
			m->sel_usr |= MODEL_FIXED(j);
		if (m->fixed_ctrl & FIXED_CTRL_PMI(j))
			m->intr |= GLOBAL_FIXED(j);
	}
	enables_all(m);
}

/*
 * FIXED_CTR_CTRL bits a write may set: OS, USR and PMI of each fixed
 * counter (Intel SDM Vol. 3B §18.2.2). AnyThread (version 3) is refused
 * (#GP): the model counts one thread, never its core's others, and the
 * driver never sets it; a KNL takes it.
 */
static uint64_t fixed_ctrl_valid(void)
{
	uint64_t ok = 0;

	for (int j = 0; j < model_desc->fixed; j++)
		ok |= FIXED_CTRL_OS(j) | FIXED_CTRL_USR(j) | FIXED_CTRL_PMI(j);
	return ok;
}

/* A fixed counter write's value (the general counters' rule, model_counter_value, at fixed_width). */
static int fixed_value(uint64_t v, uint64_t *out)
{
	uint64_t fmask = pmu_fixed_mask(model_desc);

	if (model_fast.sext32)
		v = (uint64_t)(int64_t)(int32_t)(uint32_t)v & fmask;
	else if (v & ~fmask)
		return -1;
	*out = v;
	return 0;
}

int model_write_reg_rest(struct pmu_model *m, unsigned r, uint64_t v)
{
	if (PMU_REG_IS_EVTSEL(r)) {
		if (v > 0xffffffffULL || (v & model_desc->evtsel_reserved))
			return -1;
		m->evtsel[r - PMU_REG_EVTSEL0] = v;
		evtsel_changed(m);
		update_line(m); /* EvtSel.INT gates the line */
		return 0;
	}
	if (PMU_REG_IS_FIXED(r))
		return r - PMU_REG_FIXED0 < model_desc->fixed ? fixed_value(v, &m->fixed[r - PMU_REG_FIXED0]) : -1;
	uint64_t valid = PMU_ALL_COUNTERS | pmu_all_fixed(model_desc); /* the global registers' bits */

	switch (r) {
	case PMU_REG_SPFLT_CTRL: /* only a PMU with SPFLT has the register (pmu_desc_reg) */
		if (v & ~(PMU_ALL_COUNTERS | SPFLT_USER_PREF))
			return -1;
		m->spflt = v;
		model_state_changed(m);
		return 0;
	case PMU_REG_GLOBAL_CTRL: /* model_reg_write's, with a fixed counter's bit */
		if (v & ~valid)
			return -1;
		m->global_ctrl = v;
		enables_all(m);
		return 0;
	case PMU_REG_GLOBAL_OVF_CTRL:
		if (v & ~valid)
			return -1;
		m->status &= ~v;
		m->line = (m->status & m->intr) != 0; /* it can only fall */
		return 0;
	case PMU_REG_FIXED_CTRL:
		if (!model_desc->fixed || (v & ~fixed_ctrl_valid()))
			return -1;
		m->fixed_ctrl = v;
		evtsel_changed(m);
		update_line(m); /* its PMI bits gate the line */
		return 0;
	default: /* GLOBAL_STATUS is read-only; anything else is not the PMU's */
		return -1;
	}
}

int model_read_reg_rest(const struct pmu_model *m, unsigned r, uint64_t *v)
{
	if (PMU_REG_IS_FIXED(r) && r - PMU_REG_FIXED0 < model_desc->fixed) {
		*v = m->fixed[r - PMU_REG_FIXED0];
		return 0;
	}
	if (r == PMU_REG_FIXED_CTRL && model_desc->fixed) {
		*v = m->fixed_ctrl;
		return 0;
	}
	return -1; /* GLOBAL_OVF_CTRL is write-only (KNC: 327357-001 Table 1-2), the rest not the PMU's */
}

int model_counted_write(struct pmu_model *m, uint64_t now, unsigned r, uint64_t v)
{
	model_advance_counting(m, now);
	return model_reg_write(m, r, v);
}

int model_counted_read(struct pmu_model *m, uint64_t now, unsigned r, uint64_t *v)
{
	model_advance_counting(m, now);
	return model_reg_read(m, r, v);
}

int model_rdpmc(struct pmu_model *m, uint64_t now, uint32_t ecx, uint64_t *v)
{
	if (ecx < model_desc->counters)
		return model_reg_rdmsr(m, now, PMU_REG_CTR(ecx), v);
	if ((ecx & RDPMC_FIXED) && (ecx & ~RDPMC_FIXED) < model_desc->fixed)
		return model_reg_rdmsr(m, now, PMU_REG_FIXED(ecx & ~RDPMC_FIXED), v);
	return -1;
}

void model_spflt(struct pmu_model *m, uint64_t now, uint64_t operand)
{
	model_advance(m, now);
	if (operand & 1)
		m->spflt |= SPFLT_USER_PREF;
	else
		m->spflt &= ~SPFLT_USER_PREF;
	model_state_changed(m);
}

void model_set_cpl(struct pmu_model *m, uint64_t now, uint8_t cpl)
{
	model_advance(m, now);
	m->cpl = cpl;
	model_select_active(m);
}

void model_user_stretch(struct pmu_model *m, uint64_t first_user, uint64_t first_kernel)
{
	m->cpl = 0;
	model_select_active(m);
	model_advance(m, first_user);
	m->cpl = 3;
	model_select_active(m);
	model_advance(m, first_kernel);
	m->cpl = 0;
	model_select_active(m);
}

void model_set_halted(struct pmu_model *m, uint64_t now, bool halted)
{
	model_advance(m, now);
	m->halted = halted;
	model_state_changed(m);
}
