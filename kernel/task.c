/* Ring-3 tasks; see kernel/task.h. */
#include "kernel/task.h"
#include "kernel/trap.h"
#include "kernel/console.h"
#include "kernel/elf.h"
#include "lib/fmt.h"
#include "arch/fpu.h"
#include "kernel/gdt.h"
#include "kernel/hosttlb.h"
#include "kernel/idle.h"
#include "lib/lib.h"
#include "kernel/paging.h"
#include "kernel/percpu.h"
#include "kernel/pmm.h"
#include "kernel/smp.h"
#include "arch/sync.h"
#include "kernel/timer.h"
#include "arch/tsc.h"
#include "kernel/vm.h"
#include "arch/x86.h"
#include "apic/apic.h"
#include "kernel/cpu_hooks.h"
#include <pmuos/mailbox.h> /* MBOX_NO_RING */
#include <pmuos/syscall.h>

#define MAX_TASKS 512
/*
 * Flags SYSCALL clears on entry (IA32_FMASK, SDM Vol. 3A 5.8.8): IF (the
 * entry runs with interrupts off), TF (no single-step in the kernel), DF
 * (the C ABI), AC, and NT: the way back to Ring 3 is an IRETQ, and IRETQ
 * with NT set faults (#GP, SDM Vol. 2A IRET) after the exit's SWAPGS.
 * Interrupt and trap gates clear TF and NT themselves (SDM Vol. 3A 6.12.1.3).
 */
#define SYSCALL_FMASK (RFLAGS_IF | RFLAGS_TF | RFLAGS_DF | RFLAGS_NT | RFLAGS_AC)
#define KILL_WAIT_US 1000000

extern void syscall_entry(void);
extern void user_start(struct trap_frame *f) __attribute__((noreturn));
extern int ctx_save(uint64_t ctx[8]);
extern void ctx_restore(uint64_t ctx[8], int val) __attribute__((noreturn));

static uint32_t no_output_open(uint32_t task, uint32_t launch, uint32_t rank, uint32_t nranks)
{
	return MBOX_NO_RING;
}
static void no_output(uint32_t ring, const char *s, size_t n) {}
static void no_cpu(uint32_t cpu) {}
static void nothing(void) {}

static const struct task_host no_host = {
	.output_open = no_output_open,
	.output = no_output,
	.hand_over = no_cpu,
	.take_service = nothing,
	.return_service = nothing,
	.user_work = nothing,
	.alive = nothing,
	.ended = nothing,
};
static const struct task_host *host = &no_host;

void task_set_host(const struct task_host *h)
{
	host = h;
}

static struct task tasks[MAX_TASKS];
static struct spinlock tasks_lock;
static uint32_t next_id = 1;
static volatile uint32_t active_tasks; /* READY or RUNNING */
/*
 * Launched and not yet let go of by their CPUs (task.held): what the
 * platform is told (running_fn). Not active_tasks: after its task ends a CPU
 * still frees the task's memory, and 243 CPUs doing that at once under QEMU's
 * -icount, with no timer to bound each vCPU's turn, let one CPU miss a
 * cross-CPU call's 100 ms (pmuctl stat's STOP right after a full card's launch).
 */
static volatile uint32_t held_tasks;
static void (*running_fn)(bool running);

void task_on_running(void (*fn)(bool running))
{
	running_fn = fn;
}

uint32_t task_held(void)
{
	return READ_ONCE(held_tasks);
}

/*
 * After each change of held_tasks between 0 and not 0: tells running_fn
 * the state now, and again if it changed meanwhile, so the last word is
 * always the state now. No lock: the platform's call may end this vCPU's
 * turn under QEMU (platform/pc/pit.c), and a CPU spinning for a lock held
 * then could wait for as long as minutes of host time (issue 23's soak).
 */
static void running_changed(void)
{
	if (!running_fn)
		return;
	bool now;
	do {
		now = READ_ONCE(held_tasks) != 0;
		running_fn(now);
		smp_mb();
	} while (now != (READ_ONCE(held_tasks) != 0));
}

const char *task_state_name(uint32_t state)
{
	static const char *const names[] = { "free", "ready", "running", "exited", "killed", "faulted" };
	return state < ARRAY_SIZE(names) ? names[state] : "?";
}

void task_init(void)
{
	static const struct trap_user user = {
		.fault = task_fault, .return_to_user = task_return_to_user, .cpu_stopped = task_cpu_stopped,
	};

	trap_set_user(&user);
}

void task_cpu_init(void)
{
	wrmsr(MSR_EFER, rdmsr(MSR_EFER) | EFER_SCE);
	/* SYSCALL loads CS from STAR[47:32], SS = that + 8 (the GDT of kernel/gdt.h). */
	wrmsr(MSR_STAR, (uint64_t)SEL_KCODE << 32 | (uint64_t)(SEL_UCODE32 & ~3) << 48);
	wrmsr(MSR_LSTAR, (uint64_t)syscall_entry);
	wrmsr(MSR_FMASK, SYSCALL_FMASK);
}


/* Builds argc, argv[] and the strings below USER_STACK_TOP; returns the initial RSP. */
static uint64_t push_args(uint64_t as, int argc, char **argv)
{
	uint64_t sp = USER_STACK_TOP, ptrs[TASK_MAX_ARGS + 1];

	for (int i = argc - 1; i >= 0; i--) {
		size_t n = strlen(argv[i]) + 1;
		sp -= n;
		vm_copy_to(as, sp, argv[i], n);
		ptrs[i] = sp;
	}
	ptrs[argc] = 0;
	sp = ALIGN_DOWN(sp, 16);
	/* argc, argv[0..argc], envp NULL, auxv AT_NULL: an even number of words keeps RSP 16-aligned. */
	uint64_t words = 1 + argc + 1 + 1 + 2;
	sp -= (words + (words & 1)) * 8;
	uint64_t w = sp, zero = 0, n = argc;
	vm_copy_to(as, w, &n, 8);
	vm_copy_to(as, w + 8, ptrs, (argc + 1) * 8);
	for (uint64_t i = 2 + argc; i < words + (words & 1); i++)
		vm_copy_to(as, w + i * 8, &zero, 8);
	return sp;
}

void task_free_cpu(struct task *t)
{
	struct task *m = t->main;
	uint64_t f = spin_lock_irq(&m->plock);

	if (!t->cpu_freed) { /* once: a thread made since may hold the CPU now */
		t->cpu_freed = true;
		cpuset_del(&m->busy, t->cpu);
	}
	spin_unlock_irq(&m->plock, f);
}

/*
 * Ends the task's hold on its process: its CPU is free for another thread,
 * and the last thread frees the address space. Safe to repeat (`alive`
 * and proc_as are taken by exchange).
 */
static void task_release(struct task *t)
{
	struct task *m = t->main;

	t->as = 0;
	task_free_cpu(t);
	if (__atomic_exchange_n(&t->alive, false, __ATOMIC_ACQ_REL)) {
		uint64_t f = spin_lock_irq(&m->plock);
		m->live--;
		spin_unlock_irq(&m->plock, f);
	}
	if (READ_ONCE(m->live) == 0) {
		uint64_t as = __atomic_exchange_n(&m->proc_as, 0, __ATOMIC_ACQ_REL);
		if (as)
			vm_destroy(as);
	}
}

/* Appends t to its CPU's run queue and wakes the CPU. */
static void task_enqueue(struct task *t)
{
	struct percpu *p = cpu_table[t->cpu];
	uint64_t g = spin_lock_irq(&p->runq_lock);
	struct task **pp = &p->runq;

	while (*pp)
		pp = &(*pp)->next;
	t->next = NULL;
	*pp = t;
	spin_unlock_irq(&p->runq_lock, g);
	smp_wake_apic(p->apic_id);
}

/* "task 5 (matmul, rank 2)" or, for a thread of a threaded launch, "task 9 (omp, thread 3)". */
static void task_label(const struct task *t, char *buf, size_t len)
{
	snprintf(buf, len, "task %u (%s, %s %u)", t->id, t->name, t->main->threaded ? "thread" : "rank",
		 t->main->threaded ? t->thread : t->rank);
}

int task_launch(const uint8_t *img, size_t len, int argc, char **argv, const struct cpuset *set,
		bool threads, bool to_console, char *err, size_t errlen)
{
	struct elf_image im;
	struct task *made[MAX_CPUS];
	uint32_t n = 0, nranks = threads ? 1 : cpuset_count(set); /* threads: a process on the set's first CPU */

	if (argc < 1 || argc > TASK_MAX_ARGS) {
		snprintf(err, errlen, "a program takes 0 to %d arguments", TASK_MAX_ARGS - 1);
		return -1;
	}
	if (cpuset_has(set, 0)) {
		snprintf(err, errlen, "CPU 0 runs the shell; run programs on the APs (1-%u)", cpu_count - 1);
		return -1;
	}
	for (uint32_t c = 0; c < cpu_count; c++)
		if (cpuset_has(set, c) && cpu_table[c]->state != CPU_ONLINE) {
			snprintf(err, errlen, "CPU %u is not online", c);
			return -1;
		}
	if (!elf_check(img, len, &im, err, errlen))
		return -1;

	uint64_t f = spin_lock_irq(&tasks_lock);
	uint32_t first = next_id;
	for (uint32_t c = 0; c < cpu_count && n < nranks; c++) {
		if (!cpuset_has(set, c))
			continue;
		struct task *t = task_slot_pick(tasks, MAX_TASKS);
		if (!t) {
			snprintf(err, errlen, "too many tasks (at most %d at once)", MAX_TASKS);
			break;
		}
		memset(t, 0, sizeof(*t));
		t->state = TASK_READY; /* reserves the slot */
		t->held = true;
		t->id = next_id++;
		t->launch = first;
		t->cpu = c;
		t->rank = n;
		t->nranks = nranks;
		t->waiter_apic = this_cpu()->apic_id;
		t->out_ring = host->output_open(t->id, first, n, nranks);
		t->to_console = to_console;
		strlcpy(t->name, argv[0], sizeof(t->name));
		t->main = t;
		t->alive = true;
		t->live = t->nthreads = 1;
		t->threaded = threads;
		if (threads)
			t->cpus = *set;
		else
			cpuset_add(&t->cpus, c);
		cpuset_add(&t->busy, c);
		made[n++] = t;
	}
	spin_unlock_irq(&tasks_lock, f);

	/*
	 * One copy of the read-only segments for the whole launch (docs/design.md
	 * §6). Under QEMU a page that held code and is later written (reused as
	 * data) costs a jump-cache flush on every vCPU per block translated from
	 * it: with a copy per task, a second 243-task hello took 110-336 s, not
	 * 7.6 s. Each task holds a reference; the launch drops its own here.
	 */
	uint64_t limit = pmm_usable_bytes() / TASK_MEM_SHARE, text = 0;
	bool ok = n == nranks;
	if (ok && im.shared_text) {
		text = elf_load_text(img, &im, limit, err, errlen);
		ok = text != 0;
	}
	for (uint32_t i = 0; ok && i < n; i++) {
		struct task *t = made[i];
		t->as = t->proc_as = elf_load(img, &im, text, limit, err, errlen);
		ok = t->as != 0;
		t->brk = t->brk_base = ALIGN_UP(im.end, PAGE_SIZE);
		t->entry = im.entry;
		if (ok)
			t->initial_rsp = push_args(t->as, argc, argv);
		host->alive(); /* 243 loads take seconds of host time under QEMU: not a card that stopped */
	}
	if (text)
		vm_text_put(text);
	if (ok) {
		for (uint32_t i = 0; i < n; i++) {
			made[i]->active = true;
			cpu_hooks.task_assigned(made[i]->cpu, first);
		}
		__atomic_add_fetch(&active_tasks, n, __ATOMIC_ACQ_REL);
		if (__atomic_add_fetch(&held_tasks, n, __ATOMIC_ACQ_REL) == n)
			running_changed();
		host->hand_over(made[0]->cpu);
	}
	for (uint32_t i = 0; i < n; i++) {
		struct task *t = made[i];
		if (!ok) {
			task_release(t);
			t->state = TASK_FREE;
			t->held = false;
			continue;
		}
		task_enqueue(t);
	}
	return ok ? (int)first : -1;
}

/* The CPU a new thread of process m takes (`want`, or -1: the lowest free one), or -PMUOS_E*. Under m->plock. */
static int thread_cpu(const struct task *m, int32_t want)
{
	if (m->dying)
		return -PMUOS_EAGAIN;
	if (want >= 0) {
		if (!cpuset_has(&m->cpus, want) || cpu_table[want]->state != CPU_ONLINE)
			return -PMUOS_EINVAL;
		return cpuset_has(&m->busy, want) ? -PMUOS_EBUSY : want;
	}
	if (want != -1)
		return -PMUOS_EINVAL;
	for (uint32_t c = 0; c < cpu_count; c++)
		if (cpuset_has(&m->cpus, c) && !cpuset_has(&m->busy, c) && cpu_table[c]->state == CPU_ONLINE)
			return c;
	return -PMUOS_EAGAIN;
}

int task_thread_create(struct task *t, uint64_t rip, uint64_t rsp, uint64_t arg, uint64_t fs_base,
		       uint64_t clear_tid, int32_t cpu)
{
	struct task *m = t->main, *n = NULL;
	/* plock over the slot's filling: a kill (which marks the process dying under it first) sees the thread */
	uint64_t f = spin_lock_irq(&m->plock);
	int r = thread_cpu(m, cpu);

	if (r >= 0) {
		spin_lock(&tasks_lock);
		n = task_slot_pick(tasks, MAX_TASKS);
		if (n) {
			memset(n, 0, sizeof(*n));
			n->state = TASK_READY;
			n->held = n->alive = n->active = true;
			n->id = next_id++;
		}
		spin_unlock(&tasks_lock);
		r = n ? r : -PMUOS_ENOMEM;
	}
	if (n) {
		n->launch = t->launch;
		n->cpu = r;
		n->rank = t->rank;
		n->nranks = t->nranks;
		n->waiter_apic = m->waiter_apic;
		n->out_ring = m->out_ring; /* one output, as a process's stdout */
		n->to_console = m->to_console;
		memcpy(n->name, m->name, sizeof(n->name));
		n->as = m->proc_as;
		n->entry = rip;
		n->initial_rsp = rsp;
		n->arg = arg;
		n->fs_base = fs_base;
		n->clear_tid = clear_tid;
		n->main = m;
		n->thread = m->nthreads++;
		m->live++;
		cpuset_add(&m->busy, r);
		__atomic_add_fetch(&active_tasks, 1, __ATOMIC_ACQ_REL);
		__atomic_add_fetch(&held_tasks, 1, __ATOMIC_ACQ_REL); /* not the first: the creator is held */
	}
	spin_unlock_irq(&m->plock, f);
	if (!n)
		return r;
	cpu_hooks.task_assigned(n->cpu, n->launch);
	task_enqueue(n);
	return n->thread;
}

void task_for_process(struct task *main, void (*fn)(struct task *t, void *arg), void *arg)
{
	for (int i = 0; i < MAX_TASKS; i++)
		if (tasks[i].main == main && READ_ONCE(tasks[i].alive))
			fn(&tasks[i], arg);
}

static void kill_one(struct task *t, void *self)
{
	if (t == self)
		return;
	t->kill_requested = true;
	smp_mb();
	smp_wake_apic(cpu_table[t->cpu]->apic_id); /* into the kernel, where it ends (also from a futex wait) */
}

/*
 * Marks process m dying (no new thread: marked under plock, which a
 * creation holds, so no thread made after it misses the request) and asks
 * every thread of it but `spare` (NULL: none) to end.
 */
static void kill_process(struct task *m, struct task *spare)
{
	uint64_t f = spin_lock_irq(&m->plock);

	m->dying = true;
	spin_unlock_irq(&m->plock, f);
	task_for_process(m, kill_one, spare);
}

void task_exit_process(int status)
{
	struct task *t = this_cpu()->task, *m = t->main;
	uint64_t f = spin_lock_irq(&m->plock);

	if (!m->exiting) {
		m->exiting = true;
		m->exit_code = status;
	}
	status = m->exit_code;
	spin_unlock_irq(&m->plock, f);
	kill_process(m, t);
	task_leave(TASK_EXITED, status);
}

/* A thread asked to end: EXITED with the process's status if a thread called exit(), else KILLED. */
static void __attribute__((noreturn)) leave_killed(struct task *t)
{
	bool exiting = READ_ONCE(t->main->exiting);

	task_leave(exiting ? TASK_EXITED : TASK_KILLED, exiting ? t->main->exit_code : 0);
}

/* Appends n bytes to t's output ring, which the threads of its process share. */
static void task_output(struct task *t, const char *s, size_t n)
{
	uint64_t f = spin_lock_irq(&t->main->plock);

	host->output(t->out_ring, s, n);
	spin_unlock_irq(&t->main->plock, f);
}

void task_flush_output(struct task *t)
{
	if (!t->out_len)
		return;
	task_output(t, t->out, t->out_len);
	if (t->to_console && t->nranks > 1)
		kprintf("[rank %u] %.*s", t->rank, (int)t->out_len, t->out);
	else if (t->to_console)
		kprintf("%.*s", (int)t->out_len, t->out);
	t->out_len = 0;
}

/* Ends the running task: back to task_run_next on this CPU's own stack. */
void task_leave(uint32_t state, int status)
{
	struct percpu *p = this_cpu();

	task_flush_output(p->task); /* before the state: the host reads the output once it sees the end */
	cli();
	p->task->state = state;
	p->task->exit_status = status;
	ctx_restore(p->sched_ctx, 1);
}

/* The task's slot may be reused (it is no longer held); the last one tells running_fn. */
static void task_let_go(struct task *t)
{
	if (__atomic_exchange_n(&t->held, false, __ATOMIC_ACQ_REL) &&
	    __atomic_sub_fetch(&held_tasks, 1, __ATOMIC_ACQ_REL) == 0)
		running_changed();
}

/*
 * The rest of a task's end, on the CPU it ran on (or, for a CPU that will
 * never run again, on the CPU that found it so). Each step is safe to
 * repeat, since an INIT can cut it short and the CPU does it again when it
 * rejoins; the slot may be reused only after the last step (task_slot_pick).
 */
static void task_finish(struct percpu *p, struct task *t)
{
	if (__atomic_exchange_n(&t->active, false, __ATOMIC_ACQ_REL))
		__atomic_sub_fetch(&active_tasks, 1, __ATOMIC_ACQ_REL);
	if (p == this_cpu() && !READ_ONCE(p->runq))
		host->return_service(); /* after the count: CPU 0 takes it once no task is active */
	task_release(t);
	cpu_hooks.task_end(t->cpu);
	WRITE_ONCE(p->task, NULL);
	smp_mb();
	/* A main thread's task stands for its process: held until the last thread of it has finished. */
	bool over = READ_ONCE(t->main->live) == 0;
	if (t != t->main || over)
		task_let_go(t);
	if (t != t->main && over)
		task_let_go(t->main);
	host->ended(); /* after `held`: till then the task runs for the host (mailbox/ops.c status_one) */
	smp_wake_apic(t->waiter_apic);
}

bool task_run_next(void)
{
	struct percpu *p = this_cpu();
	uint64_t f = spin_lock_irq(&p->runq_lock);
	struct task *t = p->runq;

	if (t)
		p->runq = t->next;
	spin_unlock_irq(&p->runq_lock, f);
	if (!t)
		return false;

	p->task = t;
	if (t->kill_requested) {
		t->state = READ_ONCE(t->main->exiting) ? TASK_EXITED : TASK_KILLED;
		t->exit_status = t->state == TASK_EXITED ? t->main->exit_code : 0;
	} else {
		t->state = TASK_RUNNING;
		host->take_service();
		write_cr3(t->as);
		wrmsr(MSR_FS_BASE, t->fs_base); /* its TLS; 0 (none yet) for a process's main thread */
		host_tlb_task_start();
		if (ctx_save(p->sched_ctx) == 0) {
			struct trap_frame *fr = task_user_frame();
			memset(fr, 0, sizeof(*fr));
			fr->rip = t->entry;
			fr->cs = SEL_UCODE;
			fr->rflags = RFLAGS_IF;
			fr->rsp = t->initial_rsp;
			fr->rdi = t->arg;
			fr->ss = SEL_UDATA;
			fpu_reset_user(); /* nothing of the previous task's x87/SSE state */
			cpu_hooks.task_start();
			cpu_hooks.user_enter();
			user_start(fr);
		}
		host_tlb_task_end();
		write_cr3(kernel_cr3);
	}
	task_finish(p, t);
	return true;
}

/*
 * Ends task t of CPU p, which will not run it any further (INIT, or a kernel
 * exception stopped the CPU): the state and a report first, so the host
 * learns why, then the rest.
 */
static void task_end_lost(struct percpu *p, struct task *t, uint32_t state, const char *why)
{
	char msg[160], who[64];

	if (t->state == TASK_READY || t->state == TASK_RUNNING) {
		task_flush_output(t);
		task_label(t, who, sizeof(who));
		snprintf(msg, sizeof(msg), "%s on CPU %u: %s; task ended\n", who, p->cpu, why);
		kprintf("%s", msg);
		task_output(t, msg, strnlen(msg, sizeof(msg)));
		t->exit_status = state == TASK_FAULTED ? -1 : 0;
		t->state = state;
	}
	task_finish(p, t);
}

/*
 * Ends every task queued on CPU p (it will never run them). A CPU stopped by
 * a kernel exception may have held the queue's lock: then the queue is left
 * as it is rather than waited for.
 */
static void task_end_queue(struct percpu *p, const char *why)
{
	for (;;) {
		uint64_t f = irq_save();
		if (!spin_trylock(&p->runq_lock)) {
			irq_restore(f);
			return;
		}
		struct task *t = p->runq;
		if (t)
			p->runq = t->next;
		spin_unlock_irq(&p->runq_lock, f);
		if (!t)
			return;
		task_end_lost(p, t, TASK_KILLED, why);
	}
}

void task_cpu_rejoined(void)
{
	struct percpu *p = this_cpu();
	struct task *t = READ_ONCE(p->task);

	if (t)
		task_end_lost(p, t, TASK_KILLED, "ended by INIT of its CPU");
}

void task_cpu_stopped(void)
{
	struct percpu *p = this_cpu();
	struct task *t = READ_ONCE(p->task);

	write_cr3(kernel_cr3);
	if (t)
		task_end_lost(p, t, TASK_FAULTED, "its CPU stopped on a kernel exception");
	task_end_queue(p, "its CPU stopped on a kernel exception");
}

void task_cpu_lost(uint32_t cpu)
{
	struct percpu *p = cpu_table[cpu];
	struct task *t = READ_ONCE(p->task);

	if (t)
		task_end_lost(p, t, TASK_KILLED, "ended: its CPU did not come back after INIT");
	task_end_queue(p, "its CPU did not come back after INIT");
}

struct trap_frame *task_user_frame(void)
{
	return (struct trap_frame *)(this_cpu()->tstack_top - sizeof(struct trap_frame));
}

void task_user_work(void)
{
	this_cpu()->user_work = false;
	host->user_work();
}

void task_return_to_user(struct trap_frame *f)
{
	struct percpu *p = this_cpu();

	if (p->user_work) /* a flag here, not a call on every return: bench/tasks.py */
		task_user_work();
	if (p->task->kill_requested)
		leave_killed(p->task);
	cpu_hooks.user_enter();
}

/* ---- faults ---- */

static const char *pf_cause(uint64_t err)
{
	if (err & (1 << 4))
		return "instruction fetch from a non-executable page";
	if (!(err & 1))
		return "access to an unmapped address";
	if (err & 2)
		return "write to a read-only or kernel page";
	return "read of a kernel page";
}

void task_fault(struct trap_frame *f)
{
	struct percpu *p = this_cpu();
	struct task *t = p->task;
	static const char *const names[32] = {
		[0] = "#DE divide error", [1] = "#DB debug", [3] = "#BP breakpoint", [4] = "#OF overflow",
		[5] = "#BR bound range", [6] = "#UD invalid opcode", [7] = "#NM device not available",
		[12] = "#SS stack fault", [13] = "#GP general protection", [14] = "#PF page fault",
		[16] = "#MF x87 error", [17] = "#AC alignment check", [19] = "#XM SIMD exception",
	};
	const char *name = f->vector < 32 && names[f->vector] ? names[f->vector] : "exception";

	char msg[256], who[64];
	task_label(t, who, sizeof(who));
	size_t n = snprintf(msg, sizeof(msg), "%s on CPU %u: %s (vector %lu) at RIP %#lx, error code %#lx", who,
			    p->cpu, name, f->vector, f->rip, f->error);
	n = MIN(n, sizeof(msg) - 1); /* snprintf returns the untruncated length */
	if (f->vector == EXC_PF)
		n += snprintf(msg + n, sizeof(msg) - n, ", address %#lx: %s", read_cr2(), pf_cause(f->error));
	n = MIN(n, sizeof(msg) - 1);
	if (f->vector == EXC_GP)
		n += snprintf(msg + n, sizeof(msg) - n, ": a privileged instruction or a bad address");
	n = MIN(n, sizeof(msg) - 1);
	snprintf(msg + n, sizeof(msg) - n, t->main->live > 1 ? "; its process ended\n" : "; task ended\n");
	task_flush_output(t);
	kprintf("%s", msg);
	task_output(t, msg, strnlen(msg, sizeof(msg))); /* the host sees why */
	kill_process(t->main, t); /* a thread's fault ends its process */
	task_leave(TASK_FAULTED, (int)f->vector);
}

/* ---- control from the shell ---- */

bool task_kill(uint32_t id)
{
	for (int i = 0; i < MAX_TASKS; i++) {
		struct task *t = &tasks[i];
		if (t->id != id || (t->state != TASK_READY && t->state != TASK_RUNNING))
			continue;
		kill_process(t->main, NULL);
		return true;
	}
	return false;
}

/* Every task of the launch ended and its CPU let go of it (its memory is back). */
static bool launch_done(int id)
{
	for (int i = 0; i < MAX_TASKS; i++)
		if (tasks[i].launch == (uint32_t)id && READ_ONCE(tasks[i].held))
			return false;
	return true;
}

bool any_task_active(void)
{
	return READ_ONCE(active_tasks) != 0;
}

bool task_active_on(uint32_t cpu)
{
	for (int i = 0; i < MAX_TASKS; i++)
		if (READ_ONCE(tasks[i].active) && tasks[i].cpu == cpu)
			return true;
	return false;
}

struct launch_wait {
	int id;
	bool (*interrupted)(void);
	bool intr;
	volatile bool timed_out;
};

static bool launch_over(void *arg)
{
	struct launch_wait *w = arg;

	if (launch_done(w->id) || w->timed_out)
		return true;
	if (w->interrupted && w->interrupted()) /* consumed here: remember it */
		w->intr = true;
	return w->intr;
}

static void kill_timeout(struct timer *t)
{
	((struct launch_wait *)t->arg)->timed_out = true;
}

bool task_wait_launch(int id, bool (*interrupted)(void))
{
	/* Halted until a task ends (VEC_WAKE) or input arrives: no periodic wake-up disturbs the counts. */
	struct launch_wait w = { .id = id, .interrupted = interrupted };

	idle_until(launch_over, &w);
	if (!w.intr)
		return true;
	for (int i = 0; i < MAX_TASKS; i++)
		if (tasks[i].launch == (uint32_t)id)
			task_kill(tasks[i].id);
	struct timer t = { 0 };
	w.interrupted = NULL;
	w.intr = false;
	timer_arm(&t, tsc_deadline_us(KILL_WAIT_US), kill_timeout, &w);
	idle_until(launch_over, &w);
	timer_cancel(&t);
	if (!launch_done(id))
		kprintf("launch %d: some tasks did not end within 1 s of the kill\n", id);
	return false;
}

int task_for_launch(uint32_t launch, void (*fn)(const struct task *t, void *arg), void *arg)
{
	uint16_t by_id[MAX_TASKS]; /* slot numbers in id order: ranks, or a process's threads as made */
	int n = 0;

	_Static_assert(MAX_TASKS <= UINT16_MAX, "slot numbers are 16-bit");
	for (int i = 0; i < MAX_TASKS; i++) {
		if (tasks[i].state == TASK_FREE || tasks[i].launch != launch)
			continue;
		int k = n++; /* insertion: the table holds a launch's tasks mostly in id order already */
		while (k > 0 && tasks[by_id[k - 1]].id > tasks[i].id) {
			by_id[k] = by_id[k - 1];
			k--;
		}
		by_id[k] = i;
	}
	for (int k = 0; k < n; k++)
		fn(&tasks[by_id[k]], arg);
	return n;
}

void task_for_each(void (*fn)(const struct task *t, void *arg), void *arg)
{
	uint32_t last = 0;

	for (;;) {
		const struct task *next = NULL;
		for (int i = 0; i < MAX_TASKS; i++)
			if (tasks[i].state != TASK_FREE && tasks[i].id > last && (!next || tasks[i].id < next->id))
				next = &tasks[i];
		if (!next)
			return;
		fn(next, arg);
		last = next->id;
	}
}
