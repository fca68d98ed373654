/*
 * The PMU driver: backend choice, per-CPU state, configuration and control
 * on CPU sets through IPIs (docs/design.md §5). The PMI path is pmu/pmi.c; the
 * PMU's description pmu/desc.h; the backends pmu/knc/backend.c and pmu/model/backend.c.
 */
#include "pmu/pmu.h"
#include "pmu/internal.h"
#include "pmu/events.h"
#include "pmu/model/share.h"
#include "kernel/boot.h"
#include "kernel/cpu_hooks.h"
#include "apic/apic.h"
#include "kernel/console.h"
#include "lib/fmt.h"
#include "arch/irq.h"
#include "lib/lib.h"
#include "kernel/percpu.h"
#include "kernel/pmm.h"
#include "kernel/smp.h"
#include "kernel/task.h"
#include "arch/sync.h"
#include "arch/tsc.h"
#include "pmu/calib.h"
#include "pmu/arch/regs.h"

static bool counts_exact;

const char *pmu_backend_name(void) { return pmu_ops->name; }
const struct pmu_desc *pmu_description(void) { return pmu_hw; }
bool pmu_counts_exact(void) { return counts_exact; }

bool pmu_counts_own_thread(void)
{
	return pmu_ops == &pmu_knc_ops || stamp_clock;
}

/* Tasks started on any CPU since boot (pmu_task_start): what pmu_cpu.starts_mark is taken from. */
static uint64_t task_starts;

static void pmu_task_start(void)
{
	struct pmu_cpu *pc = this_cpu()->pmu;

	__atomic_add_fetch(&task_starts, 1, __ATOMIC_RELAXED);
	if (pc)
		pc->own_starts++;
	cpu_clock_task_start();
	share_task_start(this_cpu()->apic_id);
}

static void pmu_task_assigned(uint32_t cpu, uint32_t launch)
{
	share_task_assigned(cpu_table[cpu]->apic_id, launch);
}

static void pmu_task_end(uint32_t cpu)
{
	share_task_end(cpu_table[cpu]->apic_id, cpu_table[cpu] == this_cpu());
}

/* Whether pc's counts since its clear include another thread's (its CPU's, interrupts off). */
static bool counts_shared(const struct pmu_cpu *pc)
{
	return !pmu_counts_own_thread() &&
	       (pc->others_at_clear || READ_ONCE(task_starts) - pc->own_starts != pc->starts_mark);
}
bool pmu_counts_event(uint32_t evtsel) { return pmu_ops->counts_event(evtsel); }
/* The plugin's events count only on the PMU whose codes they have, KNC's (pmu/model/share.c). */
bool pmu_plugin_present(void) { return pmu_ops == &pmu_model_ops && share_slot(0) && model_plugin_cycles; }

static const struct cpu_hooks pmu_cpu_hooks; /* below, with the functions it names */

/* CPUID leaf 0AH's architectural perfmon, as pmu_arch_desc: whether it is version 2 or later. */
static bool arch_perfmon(void)
{
	if (cpuid(0, 0).eax < 0xa)
		return false;
	struct cpuid_regs a = cpuid(0xa, 0);
	if (!pmu_arch_describe(&pmu_arch_desc, a.eax, a.edx))
		return false;
	if (cpuid_xeon_phi_x200(cpuid(1, 0))) { /* its own events beside the architectural ones: libpfm4's knl */
		pmu_arch_desc.name = "Intel architectural perfmon (Knights Landing)";
		pmu_arch_desc.pfm = "knl";
	}
	return true;
}

/*
 * The backend, and why: knc on a KNC card's core (arch/x86.h
 * cpuid_knc_card), arch where CPUID leaf 0AH reports architectural
 * perfmon version 2 or later (a Xeon Phi x200, any recent Intel core, a
 * virtual CPU with a PMU), model elsewhere (QEMU's TCG CPUs, whose leaf 0AH
 * is zeros, the strict KNC CPU among them: KNC's ISA and CPUID, none of its
 * PMU MSRs), unless the command line's pmuos.pmu=model|knc|arch says
 * otherwise; knc on another family than 0x0B, and arch without the leaf,
 * are refused (their RDMSRs would fault).
 */
static const struct pmu_ops *pmu_choose(void)
{
	struct cpuid_regs l1 = cpuid(1, 0);
	uint32_t family = cpuid_family(l1.eax);
	bool card = cpuid_knc_card(l1), arch = !card && arch_perfmon();
	const char *v;
	size_t n;

	if (cmdline_find(boot_info.cmdline, "pmuos.pmu", &v, &n)) {
		if (n == 5 && !strncmp(v, "model", 5)) {
			kprintf("pmu: backend model: pmuos.pmu=model\n");
			return &pmu_model_ops;
		}
		if (n == 3 && !strncmp(v, "knc", 3) && family == CPUID_FAMILY_KNC) {
			kprintf("pmu: backend knc: pmuos.pmu=knc\n");
			return &pmu_knc_ops;
		}
		if (n == 4 && !strncmp(v, "arch", 4) && arch) {
			kprintf("pmu: backend arch: pmuos.pmu=arch\n");
			return &pmu_arch_ops;
		}
		if (n == 3 && !strncmp(v, "knc", 3))
			kprintf("pmu: pmuos.pmu=knc refused: CPUID family %#x is not a KNC core's 0xb "
				"(its PMU MSRs would fault)\n", family);
		else if (n == 4 && !strncmp(v, "arch", 4))
			kprintf("pmu: pmuos.pmu=arch refused: CPUID leaf 0xa reports no architectural perfmon of "
				"version 2 or later (its PMU MSRs would fault)\n");
		else
			kprintf("pmu: pmuos.pmu=%.*s: not model, knc or arch; ignored\n", (int)n, v);
	}
	if (card)
		kprintf("pmu: backend knc: CPUID family 0xb, a KNC card's core\n");
	else if (arch)
		kprintf("pmu: backend arch: CPUID leaf 0xa, architectural perfmon version %u\n", pmu_arch_desc.version);
	else if (family == CPUID_FAMILY_KNC)
		kprintf("pmu: backend model: CPUID family 0xb under a hypervisor (QEMU's strict KNC CPU: "
			"no KNC PMU MSRs)\n");
	else
		kprintf("pmu: backend model: CPUID family %#x, not a KNC core (0xb)\n", family);
	return card ? &pmu_knc_ops : arch ? &pmu_arch_ops : &pmu_model_ops;
}

void pmu_init(void)
{
	pmu_ops = pmu_choose();
	pmu_hw = pmu_ops->init();
	pmu_events_use(pmu_hw->pfm); /* the shell's and the tasks' event names: the PMU's own */
	pmu_emul_init(); /* the model's: RDPMC, SPFLT and VPREFETCH trap without a KNC PMU */
	pmi_init();
	cpu_hooks_set(&pmu_cpu_hooks);
}

/* CPU `cpu`'s block, zeroed but for its number; NULL when no page is left. */
static struct pmu_cpu *alloc_cpu(uint32_t cpu)
{
	struct pmu_cpu *pc = page_alloc(ALIGN_UP(sizeof(struct pmu_cpu), PAGE_SIZE) / PAGE_SIZE);

	if (pc)
		pc->cpu = cpu;
	return pc;
}

void pmu_cpu_prepare(uint32_t cpu)
{
	struct percpu *p = cpu_table[cpu];

	if (!p->pmu)
		p->pmu = alloc_cpu(cpu);
}

void pmu_cpu_online(bool rejoin)
{
	struct percpu *p = this_cpu();

	if (!p->pmu) { /* the BSP; an AP whose block the BSP could not allocate */
		p->pmu = alloc_cpu(p->cpu);
		rejoin = false;
	}
	apic_lvt_pc_set(VEC_PMI, false);
	pmu_ops->cpu_online(rejoin);
	if (!rejoin)
		pmu_fixed_setup();
}

void pmu_cpu_init_sent(uint32_t cpu)
{
	if (cpu < cpu_count && cpu_table[cpu]->pmu)
		cpu_table[cpu]->pmu->init_sent_tsc = model_clock_of(cpu_table[cpu]->apic_id);
}

void pmu_user_enter(void)
{
	if (this_cpu()->pmu)
		pmu_ops->to_user();
}

void pmu_user_exit(uint64_t first_kernel, uint64_t first_user)
{
	if (this_cpu()->pmu)
		pmu_ops->from_user(first_kernel, first_user);
}

void pmu_idle_enter(void)
{
	struct pmu_cpu *pc = this_cpu()->pmu;

	if (!pc)
		return;
	if (pc->running && pc->mux.nev) {
		uint64_t now = model_clock();
		pc->enabled_ticks += now - pc->start_tsc;
		mux_stopped(pc, now);
	}
	pmu_ops->idle_enter();
}

void pmu_idle_exit(void)
{
	struct pmu_cpu *pc = this_cpu()->pmu;

	if (!pc)
		return;
	pmu_ops->idle_exit();
	if (pc->running && pc->mux.nev) {
		pc->start_tsc = model_clock();
		mux_started(pc);
	}
}

static void pmu_rejoined(void)
{
	pmu_report_state("back after INIT; PMU state kept as found:");
}

static void pmu_task_counts(struct pmuos_counts *c);
static void pmu_task_events(struct pmuos_events *e);

/* What the core tells the PMU about each CPU (kernel/cpu_hooks.h). */
static const struct cpu_hooks pmu_cpu_hooks = {
	.prepare = pmu_cpu_prepare,
	.online = pmu_cpu_online,
	.rejoined = pmu_rejoined,
	.init_sent = pmu_cpu_init_sent,
	.task_assigned = pmu_task_assigned,
	.task_start = pmu_task_start,
	.task_end = pmu_task_end,
	.user_enter = pmu_user_enter,
	.user_exit = pmu_user_exit,
	.idle_enter = pmu_idle_enter,
	.idle_exit = pmu_idle_exit,
	.counts = pmu_task_counts,
	.events = pmu_task_events,
};

/* ---- per-CPU operations: run on the CPU itself, interrupts off ---- */

/* Stops the counters and accounts their time up to now. */
static void counters_halt(struct pmu_cpu *pc)
{
	pmu_ops->wrmsr(pmu_hw->global_ctrl, 0);
	if (!pc->running)
		return;
	uint64_t now = model_clock();
	pc->enabled_ticks += now - pc->start_tsc;
	pc->running = false;
	mux_stopped(pc, now);
}

static void cpu_configure(struct pmu_cpu *pc)
{
	if (pc->mux.nev) { /* the counters leave the multiplexed events, stopped */
		counters_halt(pc);
		mux_off(pc);
	}
	pmu_program_counter(pc, pc->cfg.ctr, pc->cfg.evtsel, pc->cfg.period);
	if (pc->running)
		pmu_ops->wrmsr(pmu_hw->global_ctrl, pmu_ctrl_image(pc));
}

static void cpu_mux_configure(struct pmu_cpu *pc)
{
	counters_halt(pc);
	mux_setup(pc);
}

static void cpu_start(struct pmu_cpu *pc)
{
	if (pc->running)
		return;
	pc->running = pc->enabled != 0;
	pmi_unthrottle(pc);
	pmu_counters_go(pc);
	if (pc->running)
		mux_started(pc);
}

static void cpu_stop(struct pmu_cpu *pc)
{
	counters_halt(pc);
}

static void cpu_clear(struct pmu_cpu *pc)
{
	uint64_t ctrl = pmu_rdmsr(pmu_hw->global_ctrl);

	pmu_ops->wrmsr(pmu_hw->global_ctrl, 0);
	for (int i = 0; i < pmu_hw->counters; i++) {
		pc->wraps[i] = pc->samples[i] = pc->late[i] = 0;
		pmu_ops->wrmsr(pmu_ctr_msr(pmu_hw, i), pmu_preload(pc, i));
	}
	pmu_ops->wrmsr(pmu_hw->global_ovf_ctrl, pmu_all_counters(pmu_hw));
	pmu_fixed_clear();
	pc->ring_written = 0;
	pc->pmis = pc->throttles = pc->stuck = 0;
	pc->enabled_ticks = 0;
	pc->starts_mark = READ_ONCE(task_starts) - pc->own_starts;
	pc->others_at_clear = task_held() > (this_cpu()->task ? 1u : 0u);
	mux_clear(pc);
	pc->start_tsc = model_clock();
	pmu_ops->wrmsr(pmu_hw->global_ctrl, ctrl);
}

static void cpu_spflt(struct pmu_cpu *pc)
{
	/* USER_PREF starts at 0: gated counters wait for the program's SPFLT 1. */
	if (pmu_hw->spflt_ctrl) /* pmu_check_spflt refuses a mask for a PMU without SPFLT */
		pmu_ops->wrmsr(pmu_hw->spflt_ctrl, pc->cfg.spflt & pmu_all_counters(pmu_hw));
}

/* pc's counts into *r, on the CPU itself with interrupts off. */
static void read_into(struct pmu_cpu *pc, struct pmu_reading *r)
{
	uint64_t live = pc->running ? model_clock() - pc->start_tsc : 0;

	memset(r, 0, sizeof(*r));
	r->enabled_ticks = pc->enabled_ticks + live;
	r->running = pc->running;
	r->shared = counts_shared(pc);
	r->pmis = pc->pmis;
	r->throttles = pc->throttles;
	r->stuck = pc->stuck;
	r->overwritten = pc->ring_written > PMU_SAMPLE_RING ? pc->ring_written - PMU_SAMPLE_RING : 0;
	if (pc->mux.nev) {
		mux_read(pc, r, live);
		return;
	}
	r->nev = pmu_hw->counters;
	for (int i = 0; i < pmu_hw->counters; i++) {
		r->evtsel[i] = pc->evtsel[i];
		r->period[i] = pc->period[i];
		r->samples[i] = pc->samples[i];
		r->value[i] = pmu_counter_events(pc, i);
		r->running_ticks[i] = r->enabled_ticks;
	}
}

static void cpu_read(struct pmu_cpu *pc)
{
	read_into(pc, &pc->reading);
}

/*
 * SYS_PMU_COUNTS (kernel/cpu_hooks.h): a reading of its own, not pc->reading,
 * which a host's pmu_read may be copying out.
 */
static void pmu_task_counts(struct pmuos_counts *c)
{
	struct pmu_cpu *pc = pmu_this();
	struct pmu_reading r;

	c->nev = 0;
	if (!pc || !pc->mux.nev || !pmu_mux_rotates(pmu_hw, pc->mux.nev, pc->mux.evtsel, pc->mux.paired))
		return;
	read_into(pc, &r);
	c->nev = MIN(r.nev, PMUOS_COUNTS_MAX);
	c->enabled = r.enabled_ticks;
	for (uint32_t e = 0; e < c->nev; e++) {
		c->value[e] = r.value[e];
		c->running[e] = r.running_ticks[e];
	}
}

/* SYS_PMU_EVENT_NAMES (kernel/cpu_hooks.h): the configured events' names, the list's while they take turns. */
static void pmu_task_events(struct pmuos_events *e)
{
	struct pmu_cpu *pc = pmu_this();
	const uint32_t *evtsel = pc && pc->mux.nev ? pc->mux.evtsel : pc ? pc->evtsel : NULL;

	e->nev = !pc ? 0 : pc->mux.nev ? MIN(pc->mux.nev, PMUOS_COUNTS_MAX) : pmu_hw->counters;
	for (uint32_t i = 0; i < e->nev; i++)
		if (evtsel[i])
			pmu_event_format(evtsel[i], e->name[i], sizeof(e->name[i]));
	_Static_assert(PMU_MAX_FIXED <= PMUOS_FIXED_MAX, "a task is told every fixed counter");
	e->nfixed = pc ? pmu_hw->fixed : 0;
	for (uint32_t j = 0; j < e->nfixed; j++)
		snprintf(e->fixed[j], sizeof(e->fixed[j]), "%s:u", pmu_hw->fixed_event[j]); /* Ring 3: pmu_fixed_setup */
}

static void cpu_regs(struct pmu_cpu *pc)
{
	struct pmu_regs *r = &pc->regs;

	r->tsc = rdtsc();
	for (int i = 0; i < pmu_hw->counters; i++) {
		r->ctr[i] = pmu_rdmsr(pmu_ctr_msr(pmu_hw, i));
		r->evtsel[i] = pmu_rdmsr(pmu_evtsel_msr(pmu_hw, i));
	}
	r->spflt = pmu_hw->spflt_ctrl ? pmu_rdmsr(pmu_hw->spflt_ctrl) : 0;
	r->status = pmu_rdmsr(pmu_hw->global_status);
	r->global_ctrl = pmu_rdmsr(pmu_hw->global_ctrl);
	r->lvt_pc = apic_lvt_pc_read();
}

/* ---- running an operation on a CPU set ---- */

#define DEFINE_TARGET(op) \
	static void target_##op(void *unused) { op(pmu_this()); }
DEFINE_TARGET(cpu_configure)
DEFINE_TARGET(cpu_mux_configure)
DEFINE_TARGET(cpu_start)
DEFINE_TARGET(cpu_stop)
DEFINE_TARGET(cpu_clear)
DEFINE_TARGET(cpu_read)
DEFINE_TARGET(cpu_spflt)
DEFINE_TARGET(cpu_regs)

static struct spinlock op_lock;

/*
 * The set's verdict before anything is done: PMU_ERR_CPUSET (empty, or a
 * CPU the card does not have), PMU_ERR_OFFLINE naming the first CPU that is
 * not online, or what `ready` says of a CPU (it may allocate what the
 * operation needs there). The CPUs wanted are the set's. Under op_lock: no
 * operation changes a CPU's configuration meanwhile.
 */
static struct pmu_result set_verdict(const struct cpuset *set,
				     enum pmu_err (*ready)(struct pmu_cpu *, const void *), const void *arg)
{
	struct pmu_result r = { .err = PMU_OK };

	for (uint32_t c = 0; c < CPUSET_MAX; c++) {
		if (!cpuset_has(set, c))
			continue;
		r.wanted++;
		if (r.err)
			continue;
		r.cpu = c;
		if (c >= cpu_count)
			r.err = PMU_ERR_CPUSET;
		else if (cpu_table[c]->state != CPU_ONLINE || !cpu_table[c]->pmu)
			r.err = PMU_ERR_OFFLINE;
		else if (ready)
			r.err = ready(cpu_table[c]->pmu, arg);
	}
	if (!r.wanted)
		r.err = PMU_ERR_CPUSET;
	if (!r.err)
		r.cpu = 0;
	return r;
}

#define OP_WAIT_US 20 /* between two tries of op_lock */

/*
 * Runs op on every CPU of `set` once the set passed set_verdict(ready); a CPU
 * whose call slot has been busy past SMP_CALL_TIMEOUT_US (a hung CPU) is
 * skipped at once and named as PMU_ERR_BUSY; one busy with a younger call is
 * waited for (smp_call_try). `prepare` fills a CPU's argument fields before
 * the IPI: a call still in the slot then is never an operation's (each
 * waited for its own past that time, under op_lock). Every IPI goes out
 * before the caller waits, halted, so a start or stop reaches all CPUs
 * within the time it takes to send them; the caller's own CPU acts last.
 */
static struct pmu_result run_on_set(const struct cpuset *set, void (*op)(struct pmu_cpu *),
				    void (*target)(void *), void (*prepare)(struct pmu_cpu *, const void *),
				    enum pmu_err (*ready)(struct pmu_cpu *, const void *), const void *arg)
{
	uint32_t me = this_cpu()->cpu, n = 0;
	bool self = false;
	static uint32_t sent[MAX_CPUS];

	/*
	 * Waited for halted: the holder's IPIs end its vCPU's turn under QEMU,
	 * and a lower-numbered CPU spinning here could keep it from running
	 * (docs/design.md §10). The shell's CPU 0 waits so; the mailbox's CPU,
	 * maybe with interrupts off, spins, but only behind lower CPUs.
	 */
	while (!spin_trylock(&op_lock))
		smp_halt_us(OP_WAIT_US);
	struct pmu_result r = set_verdict(set, ready, arg);
	if (r.err) {
		spin_unlock(&op_lock);
		return r;
	}
	for (uint32_t c = 0; c < cpu_count; c++) {
		struct percpu *p = cpu_table[c];
		if (!cpuset_has(set, c))
			continue;
		if (p->state != CPU_ONLINE) {
			if (!r.err)
				r = (struct pmu_result){ .err = PMU_ERR_BUSY, .cpu = c, .wanted = r.wanted };
			continue;
		}
		if (prepare)
			prepare(p->pmu, arg);
		if (c == me)
			self = true;
		else if (smp_call_try(c, target, NULL) == 0)
			sent[n++] = c;
		else if (!r.err)
			r = (struct pmu_result){ .err = PMU_ERR_BUSY, .cpu = c, .wanted = r.wanted };
	}
	if (self) {
		uint64_t f = irq_save();
		op(pmu_this());
		irq_restore(f);
		r.done++;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (smp_call_wait(sent[i]) == 0)
			r.done++;
		else if (!r.err)
			r = (struct pmu_result){ .err = PMU_ERR_BUSY, .cpu = sent[i], .done = r.done, .wanted = r.wanted };
	}
	spin_unlock(&op_lock);
	return r;
}

static void prepare_config(struct pmu_cpu *pc, const void *arg)
{
	memcpy(&pc->cfg, arg, sizeof(pc->cfg));
}

/* Sampling needs a ring on each CPU: allocated before going there. */
static enum pmu_err need_ring(struct pmu_cpu *pc, const void *arg)
{
	return ((const struct pmu_cfg *)arg)->period ? pmu_need_ring(pc) : PMU_OK;
}

struct pmu_result pmu_configure(const struct cpuset *set, uint64_t ctr, uint32_t evtsel, uint64_t period)
{
	struct pmu_result r = pmu_check_config(pmu_hw, ctr, evtsel, period);
	struct pmu_cfg cfg = { .ctr = ctr, .evtsel = evtsel, .period = period };

	if (r.err)
		return r;
	return run_on_set(set, cpu_configure, target_cpu_configure, prepare_config, need_ring, &cfg);
}

static void prepare_mux(struct pmu_cpu *pc, const void *arg)
{
	memcpy(&pc->mux_cfg, arg, sizeof(pc->mux_cfg));
}

struct pmu_result pmu_mux_configure(const struct cpuset *set, uint32_t nev, const uint32_t *evtsel,
				    uint32_t paired, uint64_t slice_ticks)
{
	struct pmu_result r = pmu_check_mux(pmu_hw, nev, evtsel, paired, slice_ticks, tsc_hz);
	struct pmu_mux_cfg cfg = { .nev = nev, .paired = paired, .slice_ticks = slice_ticks };

	if (r.err)
		return r;
	memcpy(cfg.evtsel, evtsel, nev * sizeof(*evtsel));
	return run_on_set(set, cpu_mux_configure, target_cpu_mux_configure, prepare_mux, NULL, &cfg);
}

/* Gating a counter whose events take turns would stop the events off it for good. */
static enum pmu_err spflt_fits(struct pmu_cpu *pc, const void *arg)
{
	bool gates = ((const struct pmu_cfg *)arg)->spflt != 0;

	return gates && pmu_mux_rotates(pmu_hw, pc->mux.nev, pc->mux.evtsel, pc->mux.paired) ? PMU_ERR_SPFLT_MUX : PMU_OK;
}

struct pmu_result pmu_set_spflt(const struct cpuset *set, uint64_t mask)
{
	struct pmu_result r = pmu_check_spflt(pmu_hw, mask);
	struct pmu_cfg cfg = { .spflt = mask };

	if (r.err)
		return r;
	return run_on_set(set, cpu_spflt, target_cpu_spflt, prepare_config, spflt_fits, &cfg);
}

struct pmu_result pmu_start(const struct cpuset *set)
{
	return run_on_set(set, cpu_start, target_cpu_start, NULL, NULL, NULL);
}

struct pmu_result pmu_stop(const struct cpuset *set)
{
	return run_on_set(set, cpu_stop, target_cpu_stop, NULL, NULL, NULL);
}

struct pmu_result pmu_clear(const struct cpuset *set)
{
	return run_on_set(set, cpu_clear, target_cpu_clear, NULL, NULL, NULL);
}

static enum pmu_err run_on_one(uint32_t cpu, void (*op)(struct pmu_cpu *), void (*target)(void *))
{
	struct cpuset one = { 0 };

	if (cpu >= CPUSET_MAX)
		return PMU_ERR_CPUSET;
	cpuset_add(&one, cpu);
	return run_on_set(&one, op, target, NULL, NULL, NULL).err;
}

enum pmu_err pmu_read(uint32_t cpu, struct pmu_reading *r)
{
	enum pmu_err e = run_on_one(cpu, cpu_read, target_cpu_read);

	if (e == PMU_OK)
		*r = cpu_table[cpu]->pmu->reading;
	return e;
}

enum pmu_err pmu_read_regs(uint32_t cpu, struct pmu_regs *r)
{
	enum pmu_err e = run_on_one(cpu, cpu_regs, target_cpu_regs);

	if (e == PMU_OK)
		*r = cpu_table[cpu]->pmu->regs;
	return e;
}

size_t pmu_samples(uint32_t cpu, struct pmu_sample *out, size_t max, uint64_t *overwritten)
{
	struct pmu_cpu *pc = cpu < cpu_count ? cpu_table[cpu]->pmu : NULL;

	*overwritten = 0;
	if (!pc || !pc->ring)
		return 0;
	/* A copy taken while the CPU may add samples: read the count, then entries. */
	uint64_t written = READ_ONCE(pc->ring_written);
	size_t n = MIN(MIN(written, (uint64_t)PMU_SAMPLE_RING), (uint64_t)max);

	for (size_t i = 0; i < n; i++)
		out[i] = pc->ring[(written - n + i) % PMU_SAMPLE_RING];
	*overwritten = written > PMU_SAMPLE_RING ? written - PMU_SAMPLE_RING : 0;
	return n;
}

/* ---- exactness ---- */

uint64_t pmu_count_region(void (*region)(void))
{
	uint64_t f = irq_save();
	const struct pmu_desc *d = pmu_hw;
	uint64_t save_ctrl = pmu_rdmsr(d->global_ctrl), save_sel = pmu_rdmsr(pmu_evtsel_msr(d, 0));
	uint64_t save_ctr = pmu_rdmsr(pmu_ctr_msr(d, 0)), v;

	pmu_ops->wrmsr(d->global_ctrl, 0);
	pmu_ops->wrmsr(pmu_evtsel_msr(d, 0), d->ev_instructions | EVTSEL_OS | EVTSEL_EN);
	pmu_ops->wrmsr(pmu_ctr_msr(d, 0), 0);
	pmu_ops->wrmsr(d->global_ctrl, GLOBAL_CTR(0));
	region();
	pmu_ops->wrmsr(d->global_ctrl, 0);
	v = pmu_rdmsr(pmu_ctr_msr(d, 0));
	pmu_ops->wrmsr(pmu_ctr_msr(d, 0), save_ctr);
	pmu_ops->wrmsr(pmu_evtsel_msr(d, 0), save_sel);
	pmu_ops->wrmsr(d->global_ctrl, save_ctrl);
	irq_restore(f);
	return v;
}

void pmu_calibrate(void)
{
	uint64_t e1 = pmu_count_region(pmu_calib_empty);
	uint64_t h = pmu_count_region(pmu_calib_100);
	uint64_t e2 = pmu_count_region(pmu_calib_empty);

	/* Exact when the same code always counts the same, and 100 more instructions count 100 more. */
	counts_exact = e1 == e2 && h - e1 == 100;
	kprintf("pmu: backend %s, %s\n", pmu_ops->name,
		pmu_ops == &pmu_knc_ops ? "hardware counters" :
		counts_exact && stamp_clock ? "counts are exact (each thread's own instructions, from the QEMU plugin)" :
		counts_exact ? "counts are exact (one TSC tick per instruction)" :
		"counts are not exact (the TSC does not tick once per instruction: run QEMU with -icount shift=0)");
}

void pmu_report_state(const char *what)
{
	struct pmu_cpu *pc = pmu_this();
	struct pmu_regs r;

	cpu_regs(pc);
	r = pc->regs;
	kprintf("pmu: CPU %u %s EvtSel0=%#lx Cnt0=%lu EvtSel1=%#lx Cnt1=%lu GLOBAL_CTRL=%#lx "
		"GLOBAL_STATUS=%#lx SPFLT=%#lx\n", this_cpu()->cpu, what, r.evtsel[0], r.ctr[0],
		r.evtsel[1], r.ctr[1], r.global_ctrl, r.status, r.spflt);
}
