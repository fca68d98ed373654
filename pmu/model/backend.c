/*
 * model backend: the kernel side of the software PMU (pmu/model/core.c).
 * Each op reads the thread's clock (pmu/model/share.h model_clock: the TSC, or
 * with the plugin the thread's own instructions) as `now`; afterwards
 * sync() delivers a PMI if the
 * line rose and arms the thread's overflow timer for the tick at which the
 * next counter wraps (docs/design.md §5.2).
 * A rise noticed on an entry from Ring 3 (a counter wrapped while the task
 * ran) is delivered at once on the task's frame, where the CPU would take
 * the PMI: one entry per sample instead of a second one for a self-IPI.
 * With the QEMU plugin's page (pmu/model/share.h) the counters also count the
 * plugin's events: each op first takes the plugin's counts, and every
 * register change is published to the plugin. A counter of a plugin event
 * that can overflow soon is polled by the overflow timer (share_poll_ticks:
 * closer and closer to its estimated wrap), since no deadline can be
 * computed for it: its PMI comes at the next kernel entry or poll after the
 * wrap (plus the Ring-3 slack below).
 */
#include "pmu/internal.h"
#include "pmu/model/share.h"
#include "pmu/arch/regs.h"
#include "kernel/console.h"
#include "apic/apic.h"
#include "lib/lib.h"
#include "kernel/percpu.h"
#include "kernel/task.h"
#include "kernel/trap.h"
#include "arch/tsc.h"
#include "arch/x86.h"

static void overflow_due(struct timer *t);

/*
 * The overflow timer for tick `at` of the model's clock. With the plugin's
 * clock (the thread's own instructions) the TSC deadline is the earliest
 * the thread can get there (model_clock_deadline): one that comes early
 * finds no overflow, and sync_timer arms it again for what is left.
 */
static void ovf_arm(struct pmu_cpu *pc, uint64_t at)
{
	pc->ovf_at = at;
	timer_arm(&pc->ovf_timer, model_clock_deadline(at), overflow_due, pc);
}

/*
 * Between to_user and the IRETQ the kernel still runs a few hundred
 * instructions that the model, until from_user, counts as Ring 3. A deadline
 * computed then is pushed back by this much, so a USR counter a few events
 * from overflow cannot fire before the task runs a single instruction (and
 * fire again, and again).
 * No fixed slack is enough, though: the one-shot timer tick of a deadline
 * that falls inside the next kernel entry, before from_user moves the timer,
 * stays pending with interrupts off and is taken at the IRETQ, before the
 * task's first instruction; to_user then arms the same short deadline again,
 * and the task never runs (long recordings hung so, `pmuctl record -c 1000`
 * at once). So the slack doubles after each Ring-3 stretch that ran no
 * instruction, up to USER_SLACK_SHIFT_MAX times, and is back to
 * USER_ENTRY_SLACK after one that did (internal.h model_slack_update).
 * (Doubling only when the overflow timer was due at the entry let the
 * cycle go on: at 100,000 samples/s with few other interrupts,
 * bench/drain.py's kernel instructions per sample went from 1,500 to
 * 8,400; so did a single-CPU record, 30x slower, with the test made
 * exact. A timer more than a slack early does not double it: with the
 * plugin's clock, the timers of threads that others held back come that
 * early, and doubling for them made `record -C 1-3`'s PMIs whole periods
 * late.) A PMI in Ring 3 comes up to the slack in force
 * events late, which can be more than a short period: the driver keeps its
 * totals exact then (pmu/pmi.c reload).
 */
#define OVF_HORIZON (1ULL << 32)  /* ticks of the model's clock: 4.3 s at 1 GHz */

/*
 * Ticks from `last` to the next wrap of the counters of `active` (what
 * counts now, or in Ring 3), a sampling plugin event's poll included, or
 * UINT64_MAX.
 */
static inline uint64_t ticks_left(const struct pmu_cpu *pc, uint8_t active)
{
	const struct pmu_model *m = &pc->model;
	uint64_t left = model_ticks_to_overflow(m, active);

	if (pc->plugin_sel && !m->halted)
		left = MIN(left, share_poll_ticks(pc->share, m));
	return left;
}

static inline uint64_t user_slack(const struct pmu_cpu *pc)
{
	return (uint64_t)USER_ENTRY_SLACK << pc->slack_shift;
}

/*
 * sync_at: deliver() a PMI if the line rose (`user`: on the task's frame,
 * see above), then sync_timer(): the overflow timer no later than the next
 * wrap. An overflow
 * beyond the horizon (a counting counter, 2^40 events away) is checked at
 * the horizon instead.
 * `lazy` (privilege changes and halts, the hot paths): a timer due no later
 * than needed is left alone, whether nothing will overflow now or only a
 * counting counter will; one that comes early finds no overflow and re-arms.
 * So a privilege change costs no timer work while only counting counters
 * run, and kernel counts do not depend on the configuration (multiplexing's
 * slice timer included). A halted thread keeps no timer: its wake-up would
 * be counted by whichever thread runs (under -icount they share one clock).
 * Otherwise (MSR accesses, the timer itself) the timer is set to the exact
 * tick or cancelled, so the same access always costs the same instructions
 * (pmu_count_region, the exactness calibration).
 */
static inline void deliver(struct pmu_cpu *pc, struct trap_frame *user)
{
	struct pmu_model *m = &pc->model;

	pc->user_armed_by = 0; /* the model may change: to_user syncs (arm_for_user) */
	while (m->rose) { /* again if the handler left it risen: the CPU would take it at once too */
		m->rose = false; /* first: the PMI handler's own ops sync too */
		if (user) {
			int v = apic_lvt_pc_take();
			if (v < 0)
				break;
			pc->delivering = true; /* pmi_restart leaves the sync to the caller */
			irq_invoke(v, user);
			pc->delivering = false;
		} else {
			apic_lvt_pc_raise();
		}
	}
}

static void sync_timer(struct pmu_cpu *pc, bool lazy)
{
	struct pmu_model *m = &pc->model;
	uint64_t left = ticks_left(pc, m->active);

	if (left == UINT64_MAX) {
		if (pc->ovf_timer.armed && (!lazy || m->halted))
			timer_cancel(&pc->ovf_timer);
		return;
	}
	if (pc->user_entry)
		left += user_slack(pc);
	if (left >= OVF_HORIZON) {
		if (lazy && pc->ovf_timer.armed && pc->ovf_at <= m->last + OVF_HORIZON)
			return;
		left = OVF_HORIZON;
	}
	if (!pc->ovf_timer.armed || pc->ovf_at != m->last + left)
		ovf_arm(pc, m->last + left);
}

static void sync_at(struct pmu_cpu *pc, struct trap_frame *user, bool lazy)
{
	deliver(pc, user);
	sync_timer(pc, lazy);
}

/* After an MSR access or the timer: exact (see sync_at). */
static void sync(struct pmu_cpu *pc)
{
	sync_at(pc, NULL, false);
}

/* After a privilege change or a halt: lazy (see sync_at). Also emul.c's, after its fast path. */
void model_sync_lazy(struct pmu_cpu *pc)
{
	sync_at(pc, NULL, true);
}

/*
 * While no enabled EvtSel selects an event of the plugin's, the plugin
 * counts nothing whatever GLOBAL_CTRL and SPFLT say: only EvtSel writes
 * publish then (wrmsr_synced), and each publishes every register.
 */
void model_share_publish(struct pmu_cpu *pc)
{
	if (pc->share && pc->plugin_sel)
		share_publish(pc->share, &pc->model);
}

static void overflow_due(struct timer *t)
{
	struct pmu_cpu *pc = t->arg;

	model_share_take(pc);
	model_advance(&pc->model, model_clock());
	sync(pc);
}

/*
 * An access in full, by register (pmu/desc.h enum pmu_reg: counter or
 * EvtSel i, a global register): the plugin's counts taken first, its page published and the
 * model synced after.
 */
static int __attribute__((noinline)) rdmsr_synced(struct pmu_cpu *pc, unsigned reg, uint64_t *v)
{
	uint64_t f = irq_save();

	model_share_take(pc);
	int r = model_reg_rdmsr(&pc->model, model_clock(), reg, v);
	if (!pc->in_pmi)
		sync(pc);
	irq_restore(f);
	return r;
}

static int __attribute__((noinline)) wrmsr_synced(struct pmu_cpu *pc, unsigned reg, uint64_t v)
{
	uint64_t f = irq_save();

	if (pc->share)
		share_take(pc->share, &pc->model); /* counts from before the write belong before it */
	int r = model_reg_wrmsr(&pc->model, model_clock(), reg, v);
	if (pc->share && PMU_REG_IS_EVTSEL(reg)) {
		pc->plugin_sel = 0;
		for (int c = 0; c < PMU_MAX_COUNTERS; c++)
			if ((pc->model.evtsel[c] & EVTSEL_EN) && share_counts(pc->model.evtsel[c]))
				pc->plugin_sel |= GLOBAL_CTR(c);
		share_publish(pc->share, &pc->model);
	} else if (reg == PMU_REG_GLOBAL_CTRL || reg == PMU_REG_SPFLT_CTRL) {
		model_share_publish(pc); /* what the plugin reads changed (pmu/model/share.h) */
	}
	if (!pc->in_pmi)
		sync(pc);
	irq_restore(f);
	return r;
}

/*
 * Inside the PMI handler (interrupts off, synced at pmi_restart) an access
 * with nothing of the plugin's to take or publish is the model's access
 * alone, at its own tick: the handler makes 9 per sampling PMI
 * (bench/pmi.py), all but the reload through the pmi_* ops below.
 */
static inline int pmi_read(struct pmu_cpu *pc, unsigned reg, uint64_t *v)
{
	if (!pc->plugin_sel)
		return model_reg_rdmsr(&pc->model, model_clock(), reg, v);
	return rdmsr_synced(pc, reg, v);
}

static inline int pmi_write(struct pmu_cpu *pc, unsigned reg, uint64_t v)
{
	if (!pc->plugin_sel)
		return model_reg_wrmsr(&pc->model, model_clock(), reg, v);
	return wrmsr_synced(pc, reg, v);
}

/*
 * Once pmi_stop has written 0 to GLOBAL_CTRL nothing counts: the model has
 * nothing to advance, so an access's tick does not matter and reads no TSC
 * (the next access that counts, pmi_restart's, advances over the gap).
 * `quiet` (pmi_quiet, looked at once per op: the accesses it allows change
 * neither) says so; otherwise the access in full.
 */
static inline bool pmi_quiet(const struct pmu_cpu *pc)
{
	return !pc->plugin_sel && !pc->model.active;
}

static inline int pmi_read_stopped(struct pmu_cpu *pc, bool quiet, unsigned reg, uint64_t *v)
{
	return quiet ? model_reg_read(&pc->model, reg, v) : pmi_read(pc, reg, v);
}

static inline int pmi_write_stopped(struct pmu_cpu *pc, bool quiet, unsigned reg, uint64_t v)
{
	return quiet ? model_reg_write(&pc->model, reg, v) : pmi_write(pc, reg, v);
}

/* The driver's accesses by MSR number, of the PMU the model presents (model_desc). */
static int model_op_rdmsr(uint32_t msr, uint64_t *v)
{
	struct pmu_cpu *pc = this_cpu()->pmu;
	unsigned reg = pmu_desc_reg(model_desc, msr);

	if (pc->in_pmi)
		return pmi_read(pc, reg, v);
	return rdmsr_synced(pc, reg, v);
}

static int model_op_wrmsr(uint32_t msr, uint64_t v)
{
	struct pmu_cpu *pc = this_cpu()->pmu;
	unsigned reg = pmu_desc_reg(model_desc, msr);

	if (pc->in_pmi && !(pc->share && PMU_REG_IS_EVTSEL(reg)))
		return pmi_write(pc, reg, v);
	return wrmsr_synced(pc, reg, v);
}

static uint64_t model_op_pmi_stop(uint64_t *status)
{
	struct pmu_cpu *pc = this_cpu()->pmu;
	uint64_t ctrl;

	bool quiet = pmi_quiet(pc);

	pc->in_pmi = true;
	/* Its value does not move with time: the write's advance covers the ticks up to it. */
	model_reg_read(&pc->model, PMU_REG_GLOBAL_CTRL, &ctrl);
	/*
	 * Quiet already (nothing counts at this privilege level, as at a
	 * Ring-3 sample's entry for USR counters): nothing to advance either;
	 * pmi_restart's write advances over the handler.
	 */
	pmi_write_stopped(pc, quiet, PMU_REG_GLOBAL_CTRL, 0);
	pmi_read_stopped(pc, quiet || pmi_quiet(pc), PMU_REG_GLOBAL_STATUS, status);
	return ctrl;
}

static void model_op_pmi_counters(uint64_t ctr[PMU_MAX_COUNTERS])
{
	struct pmu_cpu *pc = this_cpu()->pmu;
	bool quiet = pmi_quiet(pc);

	pmi_read_stopped(pc, quiet, PMU_REG_CTR(0), &ctr[0]);
	pmi_read_stopped(pc, quiet, PMU_REG_CTR(1), &ctr[1]);
}

static uint64_t model_op_pmi_ack(uint64_t status, uint32_t reload, const uint64_t ctr[PMU_MAX_COUNTERS])
{
	struct pmu_cpu *pc = this_cpu()->pmu;
	bool quiet = pmi_quiet(pc);

	if (reload & 1)
		pmi_write_stopped(pc, quiet, PMU_REG_CTR(0), ctr[0]);
	if (reload & 2)
		pmi_write_stopped(pc, quiet, PMU_REG_CTR(1), ctr[1]);
	pmi_write_stopped(pc, quiet, PMU_REG_GLOBAL_OVF_CTRL, status);
	pmi_read_stopped(pc, quiet, PMU_REG_GLOBAL_STATUS, &status);
	return status;
}

/*
 * The handler's last access, then the sync it deferred: lazy, for the
 * timer a counting counter keeps (the handler's accesses are not in a
 * measured region, whose costs must not vary: see sync_at).
 */
static void model_op_pmi_restart(uint64_t ctrl)
{
	struct pmu_cpu *pc = this_cpu()->pmu;

	pmi_write(pc, PMU_REG_GLOBAL_CTRL, ctrl);
	pc->in_pmi = false;
	if (!pc->delivering) /* sync_at delivered this PMI, and goes on syncing after it */
		sync_at(pc, NULL, true);
}

static bool model_op_counts_event(uint32_t evtsel)
{
	return model_counts_event(evtsel) || share_counts(evtsel);
}

static void model_op_idle_enter(void)
{
	struct pmu_cpu *pc = pmu_this();

	model_set_halted(&pc->model, model_clock(), true);
	model_sync_lazy(pc);
}

static void model_op_idle_exit(void)
{
	struct pmu_cpu *pc = pmu_this();

	model_set_halted(&pc->model, model_clock(), false);
	model_sync_lazy(pc);
}

static void model_op_to_user(void)
{
	struct pmu_cpu *pc = pmu_this();

	/* Provisional: from_user moves the change to the exact tick. */
	model_set_cpl(&pc->model, model_clock(), 3);
	pc->user_entry = true;
	if (pc->model.last <= pc->user_armed_by && !pc->model.rose) {
		pc->user_armed_by = 0; /* armed for this return (arm_for_user) */
		return;
	}
	model_sync_lazy(pc);
}

/*
 * An overflow timer due by the entry from Ring 3 (its interrupt brought the
 * thread here, as it does for every Ring-3 sample) has nothing left to do:
 * the model is synced to the entry (and the PMI taken), and sync_at, lazy,
 * left it armed only because nothing needs it sooner in the kernel. It is
 * moved at once to the next wrap in Ring 3, where to_user would set it,
 * so that the timer interrupt, which programs the queue's head, finds the
 * hardware set for it already (kernel/timer.c hw_program): one timer write
 * and one look for the next wrap per sample. Set now, not at the IRETQ, it
 * carries half a slack more for the kernel's way there; to_user takes it
 * as it is while nothing synced the model since (user_armed_by) and it is
 * still at least half a slack after the wrap, else it syncs. Without a
 * wrap ahead in Ring 3 the timer is only dropped, with no write; to_user
 * (or idle_enter) arms what is needed.
 */
static void arm_for_user(struct pmu_cpu *pc)
{
	uint64_t left = ticks_left(pc, pc->model.active_at[1]);
	uint64_t slack = user_slack(pc);

	if (left >= OVF_HORIZON) {
		timer_drop_due(&pc->ovf_timer, pc->ovf_timer.deadline);
		return;
	}
	ovf_arm(pc, pc->model.last + left + slack + slack / 2);
	pc->user_armed_by = pc->model.last + slack;
}

static void model_op_from_user(uint64_t first_kernel, uint64_t first_user)
{
	struct pmu_cpu *pc = pmu_this();

	model_slack_update(pc, first_kernel, first_user);
	model_share_take(pc);
	/* Nothing advanced the model since to_user: the ticks up to first_user were the kernel's. */
	model_user_stretch(&pc->model, first_user, first_kernel);
	deliver(pc, task_user_frame());
	bool due = pc->ovf_timer.armed && pc->ovf_at <= first_kernel;

	if (!pc->model.active && !pc->plugin_sel && due) {
		arm_for_user(pc); /* a Ring-3 sample's entry: nothing counts in the kernel, so no other deadline */
		return;
	}
	sync_timer(pc, true);
	if (pc->ovf_timer.armed && pc->ovf_at <= first_kernel)
		arm_for_user(pc);
	else if (due && pc->model.active_at[0] == pc->model.active_at[1] && !pc->plugin_sel)
		/*
		 * The same counters count in both rings (cycles, as pmuctl record
		 * samples by default): the deadline just set is the wrap's tick
		 * in either ring, no slack needed, as the wrap is real wherever it
		 * falls; to_user keeps it.
		 */
		pc->user_armed_by = UINT64_MAX;
}

void model_emulate_steps(struct pmu_cpu *pc, struct trap_frame *user, uint64_t first_kernel, uint64_t first_user,
			 int ecx, uint64_t operand, uint64_t *v)
{
	struct pmu_model *m = &pc->model;

	model_slack_update(pc, first_kernel, first_user);
	model_share_take(pc);
	model_user_stretch(m, first_user, first_kernel);
	sync_at(pc, user, true);
	uint64_t now = model_clock();
	model_share_take(pc);
	if (ecx >= 0) {
		model_rdpmc(m, now, ecx, v);
	} else {
		model_spflt(m, now, operand);
		model_share_publish(pc);
	}
	model_set_cpl(m, now, 3);
	pc->user_entry = true;
	model_sync_lazy(pc);
}


static void model_op_cpu_online(bool rejoin)
{
	struct pmu_cpu *pc = pmu_this();
	uint64_t now = model_clock();

	pc->share = share_slot(this_cpu()->apic_id);
	if (!rejoin) {
		model_reset(&pc->model, now);
		pc->plugin_sel = 0; /* every EvtSel 0: EN clear */
		if (pc->share) {
			share_drop(pc->share); /* warm reset: every counter 0 (327357-001 §1.4.4) */
			share_publish(pc->share, &pc->model);
		}
	} else if (pc->init_sent_tsc) {
		/* Running until the INIT arrived, not executing from then to now. */
		model_set_halted(&pc->model, pc->init_sent_tsc, true);
		model_set_halted(&pc->model, now, false);
		pc->init_sent_tsc = 0;
	}
	sync(pc);
}

/*
 * The PMU the model presents: a Xeon Phi x200's (Knights Landing's
 * architectural perfmon, from the CPUID leaf 0AH such a core reports:
 * pmu/arch/regs.h) on a CPU that says it is one (`make run CPU=knl`), KNC's
 * everywhere else. Then the plugin's page (pmu_init sets up the emulation
 * of what the CPU lacks after it: the page names the prefetches' loads).
 */
static const struct pmu_desc *model_op_init(void)
{
	if (cpuid_xeon_phi_x200(cpuid(1, 0)) && pmu_arch_describe(&pmu_arch_desc, KNL_CPUID_0A_EAX, KNL_CPUID_0A_EDX)) {
		pmu_arch_desc.name = "Intel architectural perfmon (Knights Landing's, modelled)";
		pmu_arch_desc.pfm = "knl";
		model_present(&pmu_arch_desc);
	}
	kprintf("pmu: the model presents the %s: %u counters of %u bits%s\n", model_desc->name, model_desc->counters,
		model_desc->width, model_desc->version ? ", architectural perfmon" : "");
	share_init();
	return model_desc;
}

const struct pmu_ops pmu_model_ops = {
	.name = "model",
	.init = model_op_init,
	.rdmsr = model_op_rdmsr,
	.wrmsr = model_op_wrmsr,
	.counts_event = model_op_counts_event,
	.cpu_online = model_op_cpu_online,
	.to_user = model_op_to_user,
	.from_user = model_op_from_user,
	.pmi_stop = model_op_pmi_stop,
	.pmi_counters = model_op_pmi_counters,
	.pmi_ack = model_op_pmi_ack,
	.pmi_restart = model_op_pmi_restart,
	.idle_enter = model_op_idle_enter,
	.idle_exit = model_op_idle_exit,
};
