/* The mailbox transport on the card; see mailbox/mailbox.h. */
#include "mailbox/mailbox.h"
#include "kernel/console.h"
#include "lib/lib.h"
#include "kernel/paging.h"
#include "platform/platform.h"
#include "kernel/percpu.h"
#include "kernel/smp.h"
#include "arch/sync.h"
#include "kernel/task.h"
#include "kernel/power.h"
#include "shell/shell.h"
#include "kernel/pmm.h"
#include "kernel/timer.h"
#include "arch/tsc.h"
#include "pmu/pmu.h"
#include "apic/apic.h"
#include "arch/irq.h"
#include "kernel/idle.h"

#define IDLE_POLL_US   100

/*
 * The card's own view of the mailbox. The layout is decided here once and
 * never read back from shared memory, and the indices the card produces
 * (request tail, response head, sample, output and console heads) are kept
 * here and only published: whatever a host writes into the mailbox, the card
 * reads and writes only inside it (issue 9).
 */
static struct mbox_header *hdr;
static struct mbox_ring_ctl *req_ctl, *resp_ctl;
static struct mbox_request *req_ring;
static struct mbox_response *resp_ring;
static uint8_t *console_ring, *upload;
static struct mbox_sample_ring *sample_rings;
static struct mbox_output_ring *output_rings;
static uint32_t req_tail, resp_head;
static uint32_t sample_head[MAX_CPUS];
static uint64_t output_head[MBOX_OUTPUT_RINGS], console_head;

void mailbox_sample(const struct pmu_sample *s)
{
	if (!sample_rings)
		return;
	struct mbox_sample_ring *r = &sample_rings[s->cpu];
	uint32_t h = sample_head[s->cpu];

	if (h - READ_ONCE(r->tail) >= MBOX_SAMPLE_SLOTS) {
		r->lost++;
		return;
	}
	r->slot[h % MBOX_SAMPLE_SLOTS] = *s;
	smp_mb();
	sample_head[s->cpu] = h + 1;
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
	output_head[i] = 0;
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
	uint64_t h = output_head[ring];

	for (size_t i = 0; i < n; i++)
		r->data[(h + i) % MBOX_OUTPUT_SIZE] = s[i];
	smp_mb();
	output_head[ring] = h + n;
	WRITE_ONCE(r->head, h + n);
}

/* Console output goes to the host as well (`pmuctl console`, program output); under the console lock. */
static void console_to_host(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		console_ring[(console_head + i) % MBOX_CONSOLE_SIZE] = s[i];
	console_head += n;
	smp_mb();
	hdr->console_head = console_head;
}

/*
 * The mailbox service (heartbeat and request polling) runs on one CPU at a
 * time, in Ring 0: CPU 0 while no CPU runs a task, else a CPU that runs
 * one. Under QEMU -icount the TSC counts every vCPU's instructions, so work
 * on an idle CPU would show up in a measured thread's counts; on the
 * measured CPU it is kernel time, which USR counts leave out (DESIGN §5.2,
 * §7). The rules that keep exactly one CPU serving, and never a CPU that
 * cannot (issue 9):
 *  - a CPU that starts a task takes the service; when its last queued task
 *    ends it passes the service to another CPU running a task, else to CPU 0;
 *  - CPU 0 has the CPU of a launch it starts take it (so CPU 0 stops
 *    waking while the tasks are measured); a CPU running a task that
 *    serves a RUN keeps it;
 *  - CPU 0 takes it back when no task is active, and passes it on when it
 *    holds it while a task runs (after an INIT, below);
 *  - a request to INIT the serving CPU itself is not consumed there: the
 *    service goes to CPU 0, which serves it; a CPU about to be INITed or
 *    stopped by a kernel exception gives the service up first.
 */
static volatile uint32_t service_cpu;
static struct spinlock serve_lock;
static bool mailbox_idle_work(void);
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

static void take_service(void *unused)
{
	mailbox_take_service();
}

/* Gives the calling CPU's service to CPU 0, woken to take it. */
static void give_service_to_cpu0(void)
{
	uint64_t f = irq_save();
	timer_cancel(beat_timer());
	service_cpu = 0;
	irq_restore(f);
	smp_wake_apic(cpu_table[0]->apic_id);
}

/* A CPU other than the caller that runs a task and takes the service (by a cross-CPU call); 0 if none. */
static uint32_t pass_to_task_cpu(void)
{
	for (uint32_t c = 1; c < cpu_count; c++)
		if (cpu_table[c] != this_cpu() && READ_ONCE(cpu_table[c]->task) &&
		    smp_call_async(c, take_service, NULL) == 0)
			return c;
	return 0;
}

/*
 * The target takes the service itself (a cross-CPU call) and so arms its
 * beat now: setting service_cpu for it to arm its timer when its task
 * starts left no beat at all while it still ran an earlier task (the host
 * saw a stale heartbeat for the length of that task). service_cpu moves at
 * once, before the call lands: CPU 0's idle work, run before the target
 * does, took the service back and armed a beat that then woke CPU 0 inside
 * the task's measured time (446 instructions in calib's 10^6 region). If
 * the call cannot be posted, CPU 0 serves on and its idle work passes the
 * service later.
 */
void mailbox_hand_over(uint32_t cpu)
{
	if (!hdr || service_cpu != 0 || this_cpu()->cpu != 0)
		return;
	uint64_t f = irq_save();
	service_cpu = cpu;
	if (smp_call_async(cpu, take_service, NULL) == 0)
		timer_cancel(beat_timer());
	else
		service_cpu = 0;
	irq_restore(f);
}

void mailbox_return_service(void)
{
	if (!hdr || service_cpu != this_cpu()->cpu || this_cpu()->cpu == 0)
		return;
	timer_cancel(beat_timer());
	uint32_t to = pass_to_task_cpu();
	if (to == 0)
		give_service_to_cpu0();
}

/* smp.c: `cpu` is about to be INITed or has stopped for good: it must not hold the service. */
static void cpu_leaving(uint32_t cpu)
{
	if (!hdr || service_cpu != cpu)
		return;
	if (this_cpu()->cpu == cpu) {
		service_cpu = 0; /* a CPU stopped by a kernel exception: no timer of its own runs again */
		smp_wake_apic(cpu_table[0]->apic_id);
	} else {
		mailbox_take_service(); /* the CPU sending the INIT serves meanwhile */
	}
}

/* What tasks tell the host through the mailbox (kernel/task.h). */
static const struct task_host task_host = {
	.output_open = mailbox_output_open,
	.output = mailbox_output,
	.hand_over = mailbox_hand_over,
	.take_service = mailbox_take_service,
	.return_service = mailbox_return_service,
	.poll_due = mailbox_poll_due,
};

void mailbox_init(void)
{
	uint64_t base, size;

	task_set_host(&task_host);
	pmu_set_sample_sink(mailbox_sample);
	if (!platform_shared_memory(0, &base, &size)) {
		kprintf("mailbox: no memory shared with the host; host tools cannot reach this card\n");
		return;
	}
	uint32_t req_off = 8192, resp_off = ALIGN_UP(req_off + MBOX_REQ_SLOTS * sizeof(struct mbox_request) + 4096, 4096);
	uint32_t console_off = ALIGN_UP(resp_off + MBOX_RESP_SLOTS * sizeof(struct mbox_response), 4096);
	uint32_t upload_off = console_off + MBOX_CONSOLE_SIZE;
	uint32_t output_off = upload_off + MBOX_UPLOAD_SIZE;
	uint32_t samples_off = output_off + MBOX_OUTPUT_RINGS * sizeof(struct mbox_output_ring);
	uint64_t need = samples_off + (uint64_t)cpu_count * sizeof(struct mbox_sample_ring);
	if (size < MBOX_MIN_SIZE || size < need || (size & (size - 1))) {
		kprintf("mailbox: shared memory of %lu bytes is not a power of two of at least %lu; not used\n",
			size, MAX(need, (uint64_t)MBOX_MIN_SIZE));
		return;
	}
	if (!paging_map_identity(base, size, false)) {
		kprintf("mailbox: out of memory mapping the shared memory\n");
		return;
	}
	hdr = (struct mbox_header *)base;
	uint32_t boots = hdr->magic == MBOX_MAGIC ? hdr->boot_count : 0; /* a warm reset keeps the memory */
	memset(hdr, 0, need);
	hdr->boot_count = boots + 1;
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
	upload = (uint8_t *)(base + upload_off);
	output_rings = (struct mbox_output_ring *)(base + output_off);
	sample_rings = (struct mbox_sample_ring *)(base + samples_off);
	console_ring = (uint8_t *)(base + console_off);
	req_ctl = (struct mbox_ring_ctl *)(base + req_off - 64);
	resp_ctl = (struct mbox_ring_ctl *)(base + resp_off - 64);
	req_ring = (struct mbox_request *)(base + req_off);
	resp_ring = (struct mbox_response *)(base + resp_off);
	console_tee(console_to_host);
	smp_on_leaving(cpu_leaving);
	idle_set_work(mailbox_idle_work);
	mailbox_take_service();
	kprintf("mailbox: %lu KiB of shared memory at %#lx\n", size >> 10, base);
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
	out->capabilities = pmu_counts_exact() ? MBOX_CAP_EXACT : 0;
	strlcpy(out->backend, pmu_backend_name(), sizeof(out->backend));
	strlcpy(out->kernel_version, PMUOS_VERSION, sizeof(out->kernel_version));
}

static struct pmu_result control(const struct cpuset *set, uint16_t opcode)
{
	return opcode == MBOX_OP_PMU_START ? pmu_start(set) : opcode == MBOX_OP_PMU_STOP ? pmu_stop(set)
											 : pmu_clear(set);
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

/*
 * A shell line from the host runs on CPU 0 like a typed one, outside the
 * service lock (shell_submit): the answer says it was taken, and
 * header.shell_done gets its seq when it has finished, so a line that
 * sleeps or waits for a program blocks no other request (issue 9).
 */
static void shell_done(uint32_t seq)
{
	WRITE_ONCE(hdr->shell_done, seq);
}

static int shell(char *line, uint32_t seq)
{
	return shell_submit(line, shell_done, seq) ? 0 : -1;
}

static const struct mbox_ops kernel_ops = {
	.info = info,
	.pmu_configure = pmu_configure,
	.pmu_control = control,
	.pmu_read = pmu_read,
	.counts_event = pmu_counts_event,
	.pmu_spflt = pmu_set_spflt,
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

/*
 * Whether `req` must be served by CPU 0: an INIT of the serving AP itself
 * (it cannot INIT itself and come back). An INIT of CPU 0 is refused by the
 * decoder wherever it is served.
 */
static bool serve_elsewhere(const struct mbox_request *req)
{
	uint32_t cpu;

	if (req->opcode != MBOX_OP_CPU_INIT || req->len != sizeof(cpu))
		return false;
	memcpy(&cpu, req->payload, sizeof(cpu));
	return cpu != 0 && cpu == this_cpu()->cpu;
}

bool mailbox_poll(void)
{
	static struct mbox_request req;   /* the card's own copy */
	static struct mbox_ops ops;
	bool served = false;

	if (!hdr || !spin_trylock(&serve_lock))
		return false;
	ops = kernel_ops;
	ops.ncpus = cpu_count;
	ops.tsc_hz = tsc_hz;
	ops.upload = upload;
	/* At most a ring's worth per poll: a host cannot keep the card here. */
	for (int n = 0; n < MBOX_REQ_SLOTS; n++) {
		uint32_t head = READ_ONCE(req_ctl->head);
		if (head == req_tail)
			break;
		if (head - req_tail > MBOX_REQ_SLOTS) {
			/* Not a ring state; skipped unanswered, response n still answering request n. */
			kprintf("mailbox: request ring head %u is %u slots past the card's %u; skipped\n", head,
				head - req_tail, req_tail);
			resp_head += head - req_tail;
			req_tail = head;
			WRITE_ONCE(req_ctl->tail, req_tail);
			WRITE_ONCE(resp_ctl->head, resp_head);
			break;
		}
		/* One response slot per request: serve only while the host has room for the answer. */
		if (resp_head - READ_ONCE(resp_ctl->tail) >= MBOX_RESP_SLOTS)
			break;
		memcpy(&req, &req_ring[req_tail % MBOX_REQ_SLOTS], sizeof(req));
		smp_mb();
		if (serve_elsewhere(&req)) {
			give_service_to_cpu0();
			break;
		}
		WRITE_ONCE(req_ctl->tail, ++req_tail);
		struct mbox_response *resp = &resp_ring[resp_head % MBOX_RESP_SLOTS];
		mbox_serve(&req, resp, &ops);
		bool reset = mbox_wants_reset(&req, resp);
		smp_mb();
		WRITE_ONCE(resp_ctl->head, ++resp_head);
		served = true;
		if (reset)
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
	smp_yield_to_woken();
	cli();
}

bool mailbox_serving_here(void)
{
	return hdr && service_cpu == this_cpu()->cpu;
}

/*
 * Idle work (kernel/idle.h) of every waiting CPU. CPU 0 takes the service
 * back when no task is active and passes it on when it holds it while a
 * task runs; whichever CPU holds it serves.
 */
static bool mailbox_idle_work(void)
{
	if (!hdr)
		return false;
	if (this_cpu()->cpu == 0 && (service_cpu == 0 || !any_task_active())) {
		mailbox_take_service(); /* arms CPU 0's heartbeat if it was given the service */
		if (any_task_active() && pass_to_task_cpu())
			timer_cancel(beat_timer());
	}
	return mailbox_serving_here() && mailbox_poll();
}
