/*
 * Software model of one hardware thread's KNC core PMU (docs/design.md §5.2), for
 * CPUs without one (QEMU). It implements 327357-001 §1.4.3 exactly:
 *  - two 40-bit counters; a write sets all 40 bits, reads zero-extend;
 *  - counter i counts when EvtSel_i.EN AND GLOBAL_CTRL[i], filtered by USR/OS
 *    against the running privilege level, and, if SPFLT_CONTROL[i] is set,
 *    only while USER_PREF is 1;
 *  - sticky GLOBAL_STATUS, cleared only through GLOBAL_OVF_CTRL;
 *  - a 1-bit PMI line (OR of status bits whose EvtSel.INT is set) that
 *    signals the APIC only on a 0 -> 1 transition (327357-001 §1.4.3.9);
 *  - presenting architectural perfmon (KNL), its fixed counters too, each
 *    one per unhalted tick at IA32_FIXED_CTR_CTRL's levels (docs/design.md
 *    §5.2.1), and its own counter-write rule (model_counter_value).
 * Time is in ticks of the thread's clock (pmu/model/share.h model_clock: its own
 * instructions with the QEMU plugin, else the TSC). The model observes
 * INSTRUCTIONS_EXECUTED, every tick the thread is not halted (for the TSC,
 * under QEMU -icount shift=0), and without the plugin CPU_CLK_UNHALTED the
 * same (the plugin counts cycles by its timing model). Other events are accepted and
 * never tick (model_counts_event() says which); the QEMU plugin's counts of
 * the events it simulates come in through model_add() (pmu/model/share.h).
 * CMASK: a tick has one event, so CMASK 1 counts every tick, CMASK >= 2 none;
 * INV inverts that comparison; edge detect counts the ticks where the
 * comparison turns true, which in the model is the start of each stretch of
 * counting.
 * Pure code (no hardware access): the kernel glue is pmu/model/backend.c.
 */
#ifndef PMU_MODEL_CORE_H
#define PMU_MODEL_CORE_H

#include <stdint.h>
#include <stdbool.h>
#include "pmu/desc.h"
#include "pmu/evtsel.h"
#include "pmu/knc/regs.h" /* the PMU it presents by default */

/*
 * The PMU the model presents (pmu/desc.h): its MSRs, counter width, the
 * codes of the events it counts, SPFLT or not. KNC's (pmu_knc_desc) unless
 * the model backend's init chose another (Knights Landing's architectural
 * perfmon on a CPU that says it is one). The model's fast paths are written
 * for two counters.
 */
extern const struct pmu_desc *model_desc;
_Static_assert(PMU_MAX_COUNTERS == 2, "the model's fast paths are unrolled for two counters");
/* The fields of model_desc its fast paths read, a load each (model_present copies them). */
extern struct model_fast {
	uint64_t mask;          /* 2^width - 1 */
	/*
	 * A counter write's bits that take it off the plain path: ~mask for a
	 * full-width write (they #GP), bits 63:31 for a sign-extended one (they
	 * are not the value written). A write with none of them is stored as it is.
	 */
	uint64_t ctr_reserved;
	bool sext32;            /* ctr_write_sext32 */
} model_fast;
/* The model presents PMU `d` from now on (before any register is accessed). */
void model_present(const struct pmu_desc *d);

/* The counters' value mask, 2^width - 1. */
static inline uint64_t model_mask(void)
{
	return model_fast.mask;
}

/*
 * Fixed counter j's bit in the model's own masks (active, cond, sel_os,
 * sel_usr, at_os, at_usr), after the general-purpose counters'; in the
 * registers (status, intr, global_ctrl) it is GLOBAL_FIXED(j). A fixed
 * counter is never plain: it counts in advance_general (pmu/model/core.c),
 * so the fast paths of a PMU without any stay as they are.
 */
#define MODEL_FIXED(j) (1u << (PMU_MAX_COUNTERS + (j)))

struct pmu_model {
	uint64_t ctr[PMU_MAX_COUNTERS]; /* `width` bits, as of `last` */
	uint32_t evtsel[PMU_MAX_COUNTERS];
	uint64_t fixed[PMU_MAX_FIXED];  /* fixed counters, `fixed_width` bits, as of `last` */
	uint64_t fixed_ctrl;  /* IA32_FIXED_CTR_CTRL */
	uint64_t spflt;
	uint64_t status;      /* GLOBAL_STATUS */
	uint64_t global_ctrl; /* GLOBAL_CTRL */
	bool line;            /* level of the PMI line */
	bool rose;            /* the line went 0 -> 1 since the glue last looked */
	uint8_t cond;         /* bit i: counter i's condition at `last` (edge detect) */
	uint8_t cpl;          /* privilege level of the code running now (0..3) */
	bool halted;
	/* Bit i: counter i counts now; at CPL 0 and CPL 1-3 in the current state. Kept by every change. */
	uint8_t active, active_at[2];
	/*
	 * Derived from the EvtSels, bit i for counter i: each tick is one event
	 * (no edge detect, CMASK/INV pass: the fast case); EN, an event the
	 * model observes and OS / USR set; INT set. at_os / at_usr: sel_os /
	 * sel_usr and GLOBAL_CTRL, so counts at CPL 0 / CPL 1-3 unless halted
	 * or held by SPFLT.
	 */
	uint8_t plain, sel_os, sel_usr, at_os, at_usr;
	uint64_t intr;        /* as status: GLOBAL_CTR(i), GLOBAL_FIXED(j) */
	uint64_t last;        /* tick up to which the counters are accounted */
	/*
	 * Counter i was last written with set_val[i] at tick set_at[i], and
	 * had counted prior_got[i] events in the prior_ran[i] ticks before:
	 * its rate (pmu/model/share.c polls by it).
	 */
	uint64_t set_at[PMU_MAX_COUNTERS], set_val[PMU_MAX_COUNTERS], prior_ran[PMU_MAX_COUNTERS], prior_got[PMU_MAX_COUNTERS];
};

/* Warm/cold reset: every register 0 (327357-001 §1.4.4). `now` starts the accounting. */
void model_reset(struct pmu_model *m, uint64_t now);
/* Whether the model observes the event an EvtSel value selects. */
bool model_counts_event(uint32_t evtsel);
/* Set when the QEMU plugin counts CPU_CLK_UNHALTED (pmu/model/share.c): the model then does not. */
extern bool model_plugin_cycles;
/* model_advance's part for ticks that count: last < now and a counter active. */
void model_advance_counting(struct pmu_model *m, uint64_t now);
/*
 * Accounts ticks up to `now` (>= last; earlier values are ignored). Inline:
 * most calls (the PMI handler's, with the counters stopped) count nothing.
 */
static inline void model_advance(struct pmu_model *m, uint64_t now)
{
	if (now <= m->last)
		return;
	if (!m->active) {
		m->last = now; /* and every edge condition is false (model_select_active) */
		return;
	}
	model_advance_counting(m, now);
}
/*
 * Adds n events that another observer counted (the QEMU plugin, under the
 * same enables and filters) to counter i (0 or 1): the 40-bit counter wraps
 * with overflow status and the PMI line, as ticks do.
 */
void model_add(struct pmu_model *m, int i, uint64_t n);
/*
 * Which counters count from now on (advance and ticks_to_overflow look only
 * at those); edge detection starts afresh for the others.
 */
static inline void model_select_active(struct pmu_model *m)
{
	m->active = m->active_at[m->cpl != 0];
	m->cond &= m->active;
}

/* After a change of SPFLT or the halt state: the counters that count at each privilege level. */
static inline void model_state_changed(struct pmu_model *m)
{
	uint8_t gate = m->halted ? 0 : 0xff;

	if (!(m->spflt & SPFLT_USER_PREF))
		gate &= ~(uint8_t)(m->spflt & PMU_ALL_COUNTERS); /* held by SPFLT (327357-001 §1.4.3.4): SPFLT_EN(i) is bit i */
	m->active_at[0] = m->at_os & gate;
	m->active_at[1] = m->at_usr & gate;
	model_select_active(m);
}

/*
 * After a write of GLOBAL_CTRL with none of the fixed counters' bits set:
 * the counters that count at CPL 0 and at CPL 1-3 (model_enables_all for
 * any value).
 */
static inline void model_enables_changed(struct pmu_model *m)
{
	m->at_os = m->sel_os & m->global_ctrl;
	m->at_usr = m->sel_usr & m->global_ctrl;
	model_state_changed(m);
}

/* Counter i (0 or 1) written with v (40 bits) at tick `last`: the count and the window of its rate. */
static inline void model_counter_set(struct pmu_model *m, int i, uint64_t v)
{
	uint64_t got = (m->ctr[i] - m->set_val[i]) & model_mask(), ran = m->last - m->set_at[i];

	if (got && ran) { /* the stretch that ends here, for a poll before the new one has a rate */
		m->prior_got[i] = got;
		m->prior_ran[i] = ran;
	}
	m->ctr[i] = m->set_val[i] = v;
	m->set_at[i] = m->last;
}

/*
 * The register access alone, no time passing (see model_wrmsr), by register
 * (pmu/desc.h enum pmu_reg: counter or EvtSel i, a global register, SPFLT):
 * 0, or -1 for #GP. Inline, the cases the PMI handler's accesses take (a
 * constant role folds each to a few instructions); model_write_reg_rest
 * (pmu/model/core.c) the others.
 */
int model_write_reg_rest(struct pmu_model *m, unsigned r, uint64_t v);
int model_read_reg_rest(const struct pmu_model *m, unsigned r, uint64_t *v);

/*
 * A counter write's value into *out: all `width` bits, #GP (-1) beyond them
 * (KNC, 327357-001 §1.4.3.2); or bits 31:0 sign-extended (architectural
 * IA32_PMCx, Intel SDM Vol. 3B §18.2.1), which never faults.
 */
static inline int model_counter_value(uint64_t v, uint64_t *out)
{
	if (!(v & model_fast.ctr_reserved)) {
		*out = v;
		return 0;
	}
	if (!model_fast.sext32)
		return -1;
	*out = (uint64_t)(int64_t)(int32_t)(uint32_t)v & model_mask();
	return 0;
}

static inline int model_reg_write(struct pmu_model *m, unsigned r, uint64_t v)
{
	if (PMU_REG_IS_CTR(r)) {
		if (model_counter_value(v, &v))
			return -1;
		model_counter_set(m, (int)(r - PMU_REG_CTR0), v);
		return 0; /* a count: what counts and the line stay as they are */
	}
	switch (r) {
	case PMU_REG_GLOBAL_CTRL:
		if (v & ~(uint64_t)PMU_ALL_COUNTERS) /* fixed counters' bits, or reserved ones */
			return model_write_reg_rest(m, r, v);
		m->global_ctrl = v;
		model_enables_changed(m);
		return 0;
	case PMU_REG_GLOBAL_OVF_CTRL:
		if (v & ~(uint64_t)PMU_ALL_COUNTERS)
			return model_write_reg_rest(m, r, v);
		m->status &= ~v;
		m->line = (m->status & m->intr) != 0; /* it can only fall: no rise to note */
		return 0;
	default:
		return model_write_reg_rest(m, r, v);
	}
}

static inline int model_reg_read(const struct pmu_model *m, unsigned r, uint64_t *v)
{
	if (PMU_REG_IS_CTR(r)) {
		*v = m->ctr[r - PMU_REG_CTR0];
		return 0;
	}
	if (PMU_REG_IS_EVTSEL(r)) {
		*v = m->evtsel[r - PMU_REG_EVTSEL0];
		return 0;
	}
	switch (r) {
	case PMU_REG_SPFLT_CTRL:
		*v = m->spflt;
		return 0;
	case PMU_REG_GLOBAL_STATUS:
		*v = m->status;
		return 0;
	case PMU_REG_GLOBAL_CTRL:
		*v = m->global_ctrl;
		return 0;
	default:
		return model_read_reg_rest(m, r, v);
	}
}

/* The same by MSR number, of the PMU the model presents (model_desc). */
static inline int model_write_reg(struct pmu_model *m, uint32_t msr, uint64_t v)
{
	return model_reg_write(m, pmu_desc_reg(model_desc, msr), v);
}

static inline int model_read_reg(const struct pmu_model *m, uint32_t msr, uint64_t *v)
{
	return model_reg_read(m, pmu_desc_reg(model_desc, msr), v);
}

/*
 * WRMSR/RDMSR of a PMU MSR at tick `now`. Return 0, or -1 where the CPU
 * raises #GP: an MSR that is not the PMU's, a reserved bit set, a write to
 * the read-only GLOBAL_STATUS or a read of the write-only GLOBAL_OVF_CTRL.
 * The TSC (0x10) is not modelled: the real one serves.
 * Inline, in parts: the register access alone (no time passes), or
 * model_advance_counting then the access; model_advance is open-coded so
 * that every path ends in a tail call: an access with no counter active
 * (the PMI handler's, the counters stopped) is a few instructions and a
 * jump, without a frame.
 */
int model_counted_write(struct pmu_model *m, uint64_t now, unsigned r, uint64_t v);
int model_counted_read(struct pmu_model *m, uint64_t now, unsigned r, uint64_t *v);

/* By role (the PMI path's accesses, whose constant roles fold). */
static inline int model_reg_wrmsr(struct pmu_model *m, uint64_t now, unsigned r, uint64_t v)
{
	if (now > m->last) {
		if (m->active)
			return model_counted_write(m, now, r, v);
		m->last = now;
	}
	return model_reg_write(m, r, v);
}

static inline int model_reg_rdmsr(struct pmu_model *m, uint64_t now, unsigned r, uint64_t *v)
{
	if (now > m->last) {
		if (m->active)
			return model_counted_read(m, now, r, v);
		m->last = now;
	}
	return model_reg_read(m, r, v);
}

/* By MSR number, of the PMU the model presents (model_desc). */
static inline int model_wrmsr(struct pmu_model *m, uint64_t now, uint32_t msr, uint64_t v)
{
	return model_reg_wrmsr(m, now, pmu_desc_reg(model_desc, msr), v);
}

static inline int model_rdmsr(struct pmu_model *m, uint64_t now, uint32_t msr, uint64_t *v)
{
	return model_reg_rdmsr(m, now, pmu_desc_reg(model_desc, msr), v);
}
/*
 * RDPMC: ECX i < counters reads counter i, RDPMC_FIXED | j fixed counter j
 * (j < fixed; Intel SDM Vol. 2B, RDPMC), zero-extended; -1 (#GP) for another ECX.
 */
int model_rdpmc(struct pmu_model *m, uint64_t now, uint32_t ecx, uint64_t *v);
/* SPFLT: USER_PREF = bit 0 of the operand (327357-001 §1.4.2). */
void model_spflt(struct pmu_model *m, uint64_t now, uint64_t operand);
/* Privilege transitions and HLT, at tick `now`. */
void model_set_cpl(struct pmu_model *m, uint64_t now, uint8_t cpl);
/*
 * A stretch of Ring 3 seen after the fact, at its end: the thread ran
 * kernel code from `last` to `first_user`, its task from `first_user` to
 * `first_kernel` (TSC ticks, each >= the one before to count), and is in
 * the kernel (CPL 0) now. The same as model_set_cpl at `last` (0),
 * `first_user` (3) and `first_kernel` (0), in one call: the Ring-3 exit path.
 */
void model_user_stretch(struct pmu_model *m, uint64_t first_user, uint64_t first_kernel);
/*
 * An emulated RDPMC (ecx 0 or 1: the counter into *v) or SPFLT (ecx -1:
 * USER_PREF = bit 0 of operand) at tick `now` that ended a Ring-3 stretch,
 * and the provisional return to CPL 3 at `now`, in one step: the same as
 * model_user_stretch, the instruction at `now` and model_set_cpl(now, 3),
 * where order cannot matter: every counter that counts is plain and none
 * wraps. Returns false, having changed nothing, otherwise (and when the
 * ticks are out of order): then the step-by-step calls serve. Inline: the
 * emulation's fast path (pmu/model/emul.c) is all one function.
 */
static inline bool model_user_insn(struct pmu_model *m, uint64_t first_user, uint64_t first_kernel, uint64_t now,
				   int ecx, uint64_t operand, uint64_t *v)
{
	uint8_t k = m->active_at[0], u = m->active_at[1];

	if (first_user < m->last || first_kernel < first_user || now <= first_kernel || ((k | u) & ~m->plain))
		return false;
	uint64_t kt = (first_user - m->last) + (now - first_kernel), ut = first_kernel - first_user;
	uint64_t v0 = m->ctr[0], v1 = m->ctr[1];

	if (k & 1)
		v0 += kt;
	if (u & 1)
		v0 += ut;
	if (k & 2)
		v1 += kt;
	if (u & 2)
		v1 += ut;

	if ((v0 | v1) > model_mask())
		return false; /* a wrap: its place in the sequence decides where the PMI lands */
	m->ctr[0] = v0;
	m->ctr[1] = v1;
	m->last = now;
	m->active = m->cond = k; /* as model_set_cpl leaves them after a kernel tick */
	if (ecx >= 0) {
		*v = ecx ? v1 : v0;
	} else {
		m->spflt = (m->spflt & ~SPFLT_USER_PREF) | (operand & 1 ? SPFLT_USER_PREF : 0);
		m->cpl = 0;
		model_state_changed(m);
	}
	m->cpl = 3;
	model_select_active(m);
	return true;
}
void model_set_halted(struct pmu_model *m, uint64_t now, bool halted);
/*
 * Ticks from `last` until the next overflow while the counters of `active`
 * count (m->active: the thread keeps running at its current privilege
 * level; m->active_at[1]: it runs in Ring 3), or UINT64_MAX if none of them
 * will overflow. Inline: the overflow timer is set from it on every sample.
 */
static inline uint64_t model_ticks_to_overflow(const struct pmu_model *m, uint8_t active)
{
	uint8_t a = active & m->plain; /* an edge counter counts stretches, and is never near */
	uint64_t l0 = a & 1 ? model_mask() + 1 - m->ctr[0] : UINT64_MAX; /* PMU_MAX_COUNTERS is 2 */
	uint64_t l1 = a & 2 ? model_mask() + 1 - m->ctr[1] : UINT64_MAX;

	return l0 < l1 ? l0 : l1;
}

#endif
