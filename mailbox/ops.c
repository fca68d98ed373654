/* What the mailbox's requests do on the card: the adapter to the PMU, tasks and shell (struct mbox_ops). */
#include "mailbox/internal.h"
#include "lib/lib.h"
#include "kernel/console.h"
#include "kernel/percpu.h"
#include "kernel/smp.h"
#include "kernel/task.h"
#include "kernel/power.h"
#include "kernel/pmm.h"
#include "shell/shell.h"
#include "arch/tsc.h"
#include "arch/sync.h"

static void info(struct mbox_info *out)
{
	out->cpu_count = cpu_count;
	out->cpus_online = smp_online_count();
	out->tsc_hz = tsc_hz;
	out->capabilities = mbox_capabilities();
	strlcpy(out->backend, pmu_backend_name(), sizeof(out->backend));
	strlcpy(out->kernel_version, PMUOS_VERSION, sizeof(out->kernel_version));
	memset(out->core, 0xff, sizeof(out->core));
	for (uint32_t i = 0; i < cpu_count && i < ARRAY_SIZE(out->core); i++)
		out->core[i] = (uint16_t)smp_core_of(i);
	const struct pmu_desc *d = pmu_description();
	strlcpy(out->pmu, d->name, sizeof(out->pmu));
	out->pmu_version = d->version;
	out->counters = d->counters;
	out->counter_bits = d->width;
	out->fixed = d->fixed;
	out->fixed_bits = d->fixed_width;
	out->pmu_flags = d->spflt_ctrl ? MBOX_PMU_SPFLT : 0;
}

static struct pmu_result control(const struct cpuset *set, uint16_t opcode)
{
	return opcode == MBOX_OP_PMU_START ? pmu_start(set) : opcode == MBOX_OP_PMU_STOP ? pmu_stop(set)
											 : pmu_clear(set);
}

/* The image is copied first: the host could change the upload area while it is checked. */
static int run(const uint8_t *image, uint32_t len, int argc, char **argv, const struct cpuset *set, bool threads)
{
	uint64_t pages = ALIGN_UP(len, PAGE_SIZE) / PAGE_SIZE;
	uint8_t *copy = page_alloc(pages);
	char err[96];

	if (!copy) {
		kprintf("mailbox: run: out of memory for a %u-byte image\n", len);
		return -1;
	}
	memcpy(copy, image, len);
	int id = task_launch(copy, len, argc, argv, set, threads, false, err, sizeof(err));
	if (id < 0)
		kprintf("mailbox: run %.32s: %s\n", argv[0], err);
	page_free(copy, pages);
	return id;
}

struct status_walk {
	struct mbox_task *out;
	int n, max;
};

static void status_one(const struct task *t, void *arg)
{
	struct status_walk *w = arg;

	if (w->n == w->max)
		return;
	/*
	 * A task that ended is still running for the host until its CPU has let
	 * go of it (`held`, read first: it clears after the state is set), as
	 * the shell's `run` waits (task_wait_launch): till then that CPU frees the
	 * task's memory with interrupts off, and a request that calls every CPU
	 * of the launch, pmuctl stat's STOP right after the end, found one of 243
	 * deaf past SMP_CALL_TIMEOUT_US ("CPU 240 did not answer", 1 run in 8).
	 */
	bool held = READ_ONCE(t->held);
	uint32_t state = READ_ONCE(t->state);
	if (held && state != TASK_READY)
		state = TASK_RUNNING;
	w->out[w->n++] = (struct mbox_task){
		.id = t->id, .cpu = t->cpu, .rank = t->rank, .thread = t->thread, .exit_status = t->exit_status, .output_ring = t->out_ring,
		.state = state == TASK_READY ? MBOX_TASK_READY : state == TASK_RUNNING ? MBOX_TASK_RUNNING :
			 state == TASK_EXITED ? MBOX_TASK_EXITED : state == TASK_KILLED ? MBOX_TASK_KILLED :
			 MBOX_TASK_FAULTED,
	};
}

static int status(uint32_t launch, struct mbox_task *out, int max)
{
	struct status_walk w = { out, 0, max };

	return task_for_launch(launch, status_one, &w) ? w.n : -1;
}

static void kill_one(const struct task *t, void *arg)
{
	task_kill(t->id);
}

static bool kill_launch(uint32_t launch)
{
	return task_for_launch(launch, kill_one, NULL) > 0;
}

static void reset(void)
{
	kprintf("mailbox: warm reset requested by the host\n");
	kprintf("mailbox: no warm reset: %s\n", power_reset());
}

static int cpu_init(uint32_t cpu)
{
	return smp_reinit_cpu(cpu);
}

/*
 * A shell line from the host runs on CPU 0 like a typed one, outside the
 * service lock (shell_submit): the answer says it was taken, and
 * header.shell_done gets its seq when it has finished, so a line that
 * sleeps or waits for a program blocks no other request (issue 9).
 */
static void shell_done(uint32_t seq)
{
	WRITE_ONCE(mbox_hdr->shell_done, seq);
}

static int shell(char *line, uint32_t seq)
{
	return shell_submit(line, shell_done, seq) ? 0 : -1;
}

const struct mbox_ops mbox_kernel_ops = {
	.info = info,
	.pmu_configure = pmu_configure,
	.pmu_control = control,
	.pmu_read = pmu_read,
	.counts_event = pmu_counts_event,
	.pmu_spflt = pmu_set_spflt,
	.pmu_callchain = pmu_set_callchain,
	.pmu_cpu_clock = pmu_set_cpu_clock,
	.pmu_mux = pmu_mux_configure,
	.run = run,
	.status = status,
	.kill = kill_launch,
	.reset = reset,
	.cpu_init = cpu_init,
	.shell = shell,
	.shell_intr = shell_interrupt,
	.upload_size = MBOX_UPLOAD_SIZE,
};
