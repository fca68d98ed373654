/* The mailbox transport on the card; see kernel/mailbox.h. */
#include "kernel/mailbox.h"
#include "kernel/console.h"
#include "kernel/lib.h"
#include "kernel/paging.h"
#include "kernel/pci.h"
#include "kernel/percpu.h"
#include "kernel/smp.h"
#include "kernel/sync.h"
#include "kernel/task.h"
#include "kernel/power.h"
#include "shell/shell.h"
#include "kernel/pmm.h"
#include "kernel/timer.h"
#include "kernel/tsc.h"
#include "pmu/pmu.h"
#include "apic/apic.h"
#include "kernel/irq.h"

#define IVSHMEM_VENDOR 0x1af4
#define IVSHMEM_DEVICE 0x1110
#define IVSHMEM_BAR    2 /* the shared memory */
#define IDLE_POLL_US   100

static struct mbox_header *hdr;
static struct mbox_ring_ctl *req_ctl, *resp_ctl;
static struct mbox_request *req_ring;
static struct mbox_response *resp_ring;
static uint8_t *console_ring;
static struct mbox_sample_ring *sample_rings;
static struct mbox_output_ring *output_rings;

void mailbox_sample(const struct pmu_sample *s)
{
	if (!sample_rings)
		return;
	struct mbox_sample_ring *r = &sample_rings[s->cpu];
	uint32_t h = r->head;

	if (h - READ_ONCE(r->tail) >= MBOX_SAMPLE_SLOTS) {
		r->lost++;
		return;
	}
	r->slot[h % MBOX_SAMPLE_SLOTS] = *s;
	smp_mb();
	WRITE_ONCE(r->head, h + 1);
}

uint32_t mailbox_output_open(uint32_t task, uint32_t launch, uint32_t rank, uint32_t nranks)
{
	static uint32_t next;

	if (!output_rings)
		return MBOX_NO_RING;
	uint32_t i = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED) % MBOX_OUTPUT_RINGS;
	struct mbox_output_ring *r = &output_rings[i];
	r->task = 0; /* the host ignores the ring while it changes hands */
	smp_mb();
	r->launch = launch;
	r->rank = rank;
	r->nranks = nranks;
	r->head = 0;
	smp_mb();
	WRITE_ONCE(r->task, task);
	return i;
}

void mailbox_output(uint32_t ring, const char *s, size_t n)
{
	if (!output_rings || ring >= MBOX_OUTPUT_RINGS)
		return;
	struct mbox_output_ring *r = &output_rings[ring];
	uint64_t h = r->head;

	for (size_t i = 0; i < n; i++)
		r->data[(h + i) % MBOX_OUTPUT_SIZE] = s[i];
	smp_mb();
	WRITE_ONCE(r->head, h + n);
}

/* Console output goes to the host as well (`pmuctl console`, program output). */
static void console_to_host(const char *s, size_t n)
{
	uint64_t h = hdr->console_head;

	for (size_t i = 0; i < n; i++)
		console_ring[(h + i) % MBOX_CONSOLE_SIZE] = s[i];
	smp_mb();
	hdr->console_head = h + n;
}

/*
 * The mailbox service (heartbeat and request polling) runs on one CPU at a
 * time: CPU 0 while nothing runs, else a CPU running a task, in Ring 0. Under
 * QEMU -icount the TSC counts every vCPU's instructions, so work on an idle
 * CPU would show up in a measured thread's counts; on the measured CPU it is
 * kernel time, which USR counts leave out (DESIGN §5.2, §7).
 */
static volatile uint32_t service_cpu;
static struct spinlock serve_lock;
static bool poll_due[MAX_CPUS]; /* a task CPU's beat asked for a poll on the way back to Ring 3 */

static void beat(struct timer *t)
{
	if (service_cpu != this_cpu()->cpu)
		return; /* the service moved on */
	hdr->heartbeat++;
	hdr->cpus_online = smp_online_count();
	if (this_cpu()->cpu != 0)
		poll_due[this_cpu()->cpu] = true;
	/*
	 * No doorbell in QEMU: an idle card polls every 100 us (its shell loop
	 * serves on each wake-up); a CPU measuring a task, every 1 ms.
	 */
	uint64_t us = this_cpu()->cpu == 0 ? IDLE_POLL_US : MBOX_HEARTBEAT_US;
	/* From now, not from the last deadline: a late beat must not try to catch up. */
	timer_arm(t, rdtsc() + us * (tsc_hz / 1000000), beat, NULL);
}

/* Each CPU's own heartbeat timer (timers are per CPU). */
static struct timer *beat_timer(void)
{
	static struct timer timers[MAX_CPUS];
	return &timers[this_cpu()->cpu];
}

void mailbox_take_service(void)
{
	if (!hdr)
		return;
	uint64_t f = irq_save();
	service_cpu = this_cpu()->cpu;
	struct timer *t = beat_timer();
	if (!t->armed)
		timer_arm(t, rdtsc(), beat, NULL);
	irq_restore(f);
}

void mailbox_hand_over(uint32_t cpu)
{
	if (!hdr || service_cpu != this_cpu()->cpu)
		return;
	timer_cancel(beat_timer());
	service_cpu = cpu; /* it arms its timer when its task starts */
}

static void take_service(void *unused)
{
	mailbox_take_service();
}

void mailbox_return_service(void)
{
	if (!hdr || service_cpu != this_cpu()->cpu || this_cpu()->cpu == 0)
		return;
	timer_cancel(beat_timer());
	/* To a CPU still running a task, else back to CPU 0 (its shell loop takes it). */
	for (uint32_t c = 1; c < cpu_count; c++)
		if (cpu_table[c]->task && smp_call_try(c, take_service, NULL) == 0)
			return;
	service_cpu = 0;
	apic_send_fixed(cpu_table[0]->apic_id, VEC_WAKE);
}

void mailbox_init(void)
{
	struct pci_dev d;
	uint64_t base, size;

	if (!pci_find(IVSHMEM_VENDOR, IVSHMEM_DEVICE, &d) || !pci_mem_bar(&d, IVSHMEM_BAR, &base, &size)) {
		kprintf("mailbox: no ivshmem device; host tools cannot reach this card\n");
		return;
	}
	uint32_t req_off = 8192, resp_off = ALIGN_UP(req_off + MBOX_REQ_SLOTS * sizeof(struct mbox_request) + 4096, 4096);
	uint32_t console_off = ALIGN_UP(resp_off + MBOX_RESP_SLOTS * sizeof(struct mbox_response), 4096);
	uint32_t upload_off = console_off + MBOX_CONSOLE_SIZE;
	uint32_t output_off = upload_off + MBOX_UPLOAD_SIZE;
	uint32_t samples_off = output_off + MBOX_OUTPUT_RINGS * sizeof(struct mbox_output_ring);
	uint64_t need = samples_off + (uint64_t)cpu_count * sizeof(struct mbox_sample_ring);
	if (size < MBOX_MIN_SIZE || size < need || (size & (size - 1))) {
		kprintf("mailbox: ivshmem BAR of %lu bytes is not a power of two of at least %lu; not used\n",
			size, MAX(need, (uint64_t)MBOX_MIN_SIZE));
		return;
	}
	if (!paging_map_identity(base, size, false)) {
		kprintf("mailbox: out of memory mapping the ivshmem BAR\n");
		return;
	}
	hdr = (struct mbox_header *)base;
	memset(hdr, 0, need);
	hdr->magic = MBOX_MAGIC;
	hdr->version = MBOX_VERSION;
	hdr->state = MBOX_BOOTING;
	hdr->size = size;
	hdr->tsc_hz = tsc_hz;
	hdr->cpu_count = cpu_count;
	hdr->cpus_online = smp_online_count();
	hdr->capabilities = pmu_counts_exact() ? MBOX_CAP_EXACT : 0;
	strlcpy(hdr->backend, pmu_backend_name(), sizeof(hdr->backend));
	strlcpy(hdr->kernel_version, PMUOS_VERSION, sizeof(hdr->kernel_version));
	hdr->req_ctl_off = req_off - 64;
	hdr->req_off = req_off;
	hdr->resp_ctl_off = resp_off - 64;
	hdr->resp_off = resp_off;
	hdr->console_off = console_off;
	hdr->upload_off = upload_off;
	hdr->samples_off = samples_off;
	hdr->output_off = output_off;
	output_rings = (struct mbox_output_ring *)(base + output_off);
	sample_rings = (struct mbox_sample_ring *)(base + samples_off);
	console_ring = (uint8_t *)(base + console_off);
	req_ctl = (struct mbox_ring_ctl *)(base + hdr->req_ctl_off);
	resp_ctl = (struct mbox_ring_ctl *)(base + hdr->resp_ctl_off);
	req_ring = (struct mbox_request *)(base + req_off);
	resp_ring = (struct mbox_response *)(base + resp_off);
	console_tee(console_to_host);
	mailbox_take_service();
	kprintf("mailbox: %lu KiB of ivshmem at %#lx\n", size >> 10, base);
}

void mailbox_ready(void)
{
	if (hdr)
		hdr->state = MBOX_READY;
}

static void info(struct mbox_info *out)
{
	out->cpu_count = cpu_count;
	out->cpus_online = smp_online_count();
	out->tsc_hz = tsc_hz;
	out->capabilities = hdr->capabilities;
	strlcpy(out->backend, pmu_backend_name(), sizeof(out->backend));
	strlcpy(out->kernel_version, PMUOS_VERSION, sizeof(out->kernel_version));
}

static int configure(const struct cpuset *set, int ctr, uint32_t evtsel, uint64_t period)
{
	char err[80];

	if (!evtsel)
		return pmu_unconfigure(set, ctr);
	return pmu_configure(set, ctr, evtsel, period, err, sizeof(err));
}

static int control(const struct cpuset *set, uint16_t opcode)
{
	return opcode == MBOX_OP_PMU_START ? pmu_start(set) : opcode == MBOX_OP_PMU_STOP ? pmu_stop(set)
											 : pmu_clear(set);
}

static int spflt(const struct cpuset *set, uint32_t mask)
{
	return pmu_set_spflt(set, mask);
}

static int mux(const struct cpuset *set, uint32_t nev, const uint32_t *evtsel, uint32_t slice_us)
{
	return pmu_mux_configure(set, nev, evtsel, slice_us * (tsc_hz / 1000000));
}

/* The image is copied first: the host could change the upload area while it is checked. */
static int run(const uint8_t *image, uint32_t len, int argc, char **argv, const struct cpuset *set)
{
	uint64_t pages = ALIGN_UP(len, PAGE_SIZE) / PAGE_SIZE;
	uint8_t *copy = page_alloc(pages);
	char err[96];

	if (!copy) {
		kprintf("mailbox: run: out of memory for a %u-byte image\n", len);
		return -1;
	}
	memcpy(copy, image, len);
	int id = task_launch(copy, len, argc, argv, set, err, sizeof(err));
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
	w->out[w->n++] = (struct mbox_task){
		.id = t->id, .cpu = t->cpu, .rank = t->rank, .exit_status = t->exit_status, .output_ring = t->out_ring,
		.state = t->state == TASK_READY ? MBOX_TASK_READY : t->state == TASK_RUNNING ? MBOX_TASK_RUNNING :
			 t->state == TASK_EXITED ? MBOX_TASK_EXITED : t->state == TASK_KILLED ? MBOX_TASK_KILLED :
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
	power_reset();
}

static int cpu_init(uint32_t cpu)
{
	return smp_reinit_cpu(cpu);
}

/* Shell lines run on CPU 0 in its shell loop, and only while no program runs. */
static int shell(char *line)
{
	if (this_cpu()->cpu != 0 || any_task_active())
		return -1;
	kprintf("(host) %s\n", line);
	shell_exec(line);
	return 0;
}

static const struct mbox_ops kernel_ops = {
	.info = info,
	.pmu_configure = configure,
	.pmu_control = control,
	.pmu_read = pmu_read,
	.counts_event = pmu_counts_event,
	.pmu_spflt = spflt,
	.pmu_mux = mux,
	.run = run,
	.status = status,
	.kill = kill_launch,
	.reset = reset,
	.cpu_init = cpu_init,
	.shell = shell,
	.upload_size = MBOX_UPLOAD_SIZE,
};

bool mailbox_poll(void)
{
	static struct mbox_request req;   /* the card's own copy */
	static struct mbox_ops ops;
	bool served = false;

	if (!hdr || !spin_trylock(&serve_lock))
		return false;
	ops = kernel_ops;
	ops.ncpus = cpu_count;
	ops.upload = (const uint8_t *)hdr + hdr->upload_off;
	/* One response slot per request: serve only while the host has room for the answer. */
	while (READ_ONCE(req_ctl->tail) != READ_ONCE(req_ctl->head) &&
	       READ_ONCE(resp_ctl->head) - READ_ONCE(resp_ctl->tail) < MBOX_RESP_SLOTS) {
		uint32_t t = req_ctl->tail;
		memcpy(&req, &req_ring[t % MBOX_REQ_SLOTS], sizeof(req));
		smp_mb();
		WRITE_ONCE(req_ctl->tail, t + 1);
		uint32_t h = resp_ctl->head;
		mbox_serve(&req, &resp_ring[h % MBOX_RESP_SLOTS], &ops);
		smp_mb();
		WRITE_ONCE(resp_ctl->head, h + 1);
		served = true;
		if (mbox_wants_reset(&req, &resp_ring[h % MBOX_RESP_SLOTS]))
			ops.reset(); /* the answer is out first */
	}
	spin_unlock(&serve_lock);
	return served;
}

void mailbox_poll_due(void)
{
	uint32_t me = this_cpu()->cpu;

	if (!poll_due[me])
		return;
	poll_due[me] = false;
	sti();
	mailbox_poll();
	cli();
}

bool mailbox_serving_here(void)
{
	return hdr && service_cpu == this_cpu()->cpu;
}
