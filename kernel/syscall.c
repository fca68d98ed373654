/*
 * The system calls of Ring-3 tasks (docs/design.md §6; numbers and errors in
 * include/pmuos/syscall.h), one function each, found in a table by number.
 * kernel/user.S's SYSCALL entry calls syscall_dispatch with interrupts off.
 */
#include "kernel/task.h"
#include "kernel/thread.h"
#include "kernel/percpu.h"
#include "kernel/cpu_hooks.h"
#include "kernel/pmm.h"
#include "kernel/vm.h"
#include "arch/tsc.h"
#include "arch/x86.h"
#include "lib/lib.h"
#include <pmuos/syscall.h>

/* Kernel instructions before the SYSCALL entry's clock read (kernel/user.S, kernel/stamp.h). */
#define SYSCALL_ENTRY_INSNS 26
#define WRITE_MAX 65536 /* bytes one write() takes */

/* A system call: its result, or -PMUOS_E*; the arguments are RDI, RSI, RDX of `f`. */
typedef int64_t (*syscall_fn)(struct percpu *p, struct task *t, const struct trap_frame *f);

static int64_t sys_write(struct percpu *p, struct task *t, const struct trap_frame *f)
{
	uint64_t fd = f->rdi, buf = f->rsi, len = f->rdx;

	if (fd != 1 && fd != 2)
		return -PMUOS_EBADF;
	len = MIN(len, WRITE_MAX); /* a short write, as for a pipe: newlib writes the rest */
	if (!vm_user_range_ok(t->as, buf, len, false))
		return -PMUOS_EFAULT;
	/* Lines go out whole, so SPMD instances do not interleave mid-line. */
	for (uint64_t i = 0; i < len; i++) {
		char c = *(const char *)vm_translate(t->as, buf + i);
		t->out[t->out_len++] = c;
		if (c == '\n' || t->out_len == TASK_OUT_LINE)
			task_flush_output(t);
	}
	return len;
}

/* exit(): from any thread, the whole process ends. */
static int64_t sys_exit(struct percpu *p, struct task *t, const struct trap_frame *f)
{
	task_exit_process((int)f->rdi);
}

/* The break is the process's: kept in its main thread's task, under its lock. */
static int64_t sys_sbrk(struct percpu *p, struct task *t, const struct trap_frame *f)
{
	struct task *m = t->main;
	int64_t incr = (int64_t)f->rdi;
	spin_lock(&m->brk_lock); /* interrupts on: vm_map may clear many pages */
	uint64_t old = m->brk, new = old + incr;
	int64_t r = old;

	if (new < m->brk_base || new > USER_STACK_TOP - USER_STACK_SIZE - PAGE_SIZE || (incr > 0 && new < old))
		r = -PMUOS_ENOMEM;
	else if (new > old && vm_map(t->as, old, new - old, VM_WRITE) != VM_OK) /* out of memory, or over the limit */
		r = -PMUOS_ENOMEM;
	else
		m->brk = new;
	spin_unlock(&m->brk_lock);
	return r;
}

static int64_t sys_getcpu(struct percpu *p, struct task *t, const struct trap_frame *f)
{
	return p->cpu;
}

static int64_t sys_rank(struct percpu *p, struct task *t, const struct trap_frame *f)
{
	return t->rank | (uint64_t)t->nranks << 32;
}

static int64_t sys_tsc_hz(struct percpu *p, struct task *t, const struct trap_frame *f)
{
	return tsc_hz;
}

/* A fixed-size record copied out; the user pointer checked writable first. */
static int64_t sys_pmu_counts(struct percpu *p, struct task *t, const struct trap_frame *f)
{
	struct pmuos_counts c = { 0 };

	if (!vm_user_range_ok(t->as, f->rdi, sizeof(c), true))
		return -PMUOS_EFAULT;
	cli(); /* the PMU's per-CPU state is its interrupts' too */
	cpu_hooks.counts(&c);
	sti();
	if (!vm_copy_to(t->as, f->rdi, &c, sizeof(c)))
		return -PMUOS_EFAULT;
	return c.nev;
}

/* The same for the events' names. */
static int64_t sys_pmu_events(struct percpu *p, struct task *t, const struct trap_frame *f)
{
	struct pmuos_events e = { 0 };

	if (!vm_user_range_ok(t->as, f->rdi, sizeof(e), true))
		return -PMUOS_EFAULT;
	cli();
	cpu_hooks.events(&e);
	sti();
	if (!vm_copy_to(t->as, f->rdi, &e, sizeof(e)))
		return -PMUOS_EFAULT;
	return e.nev;
}

static const syscall_fn syscalls[] = {
	[SYS_WRITE] = sys_write,   [SYS_EXIT] = sys_exit, [SYS_SBRK] = sys_sbrk,
	[SYS_GETCPU] = sys_getcpu, [SYS_RANK] = sys_rank, [SYS_TSC_HZ] = sys_tsc_hz,
	[SYS_PMU_COUNTS] = sys_pmu_counts, [SYS_PMU_EVENT_NAMES] = sys_pmu_events,
	[SYS_THREAD_CREATE] = sys_thread_create, [SYS_THREAD_EXIT] = sys_thread_exit,
	[SYS_FUTEX_WAIT] = sys_futex_wait, [SYS_FUTEX_WAKE] = sys_futex_wake,
	[SYS_SET_TLS] = sys_set_tls, [SYS_THREAD_SELF] = sys_thread_self,
};

void syscall_dispatch(struct trap_frame *f)
{
	struct percpu *p = this_cpu();
	struct task *t = p->task;

	cpu_hooks.user_exit(p->entry_tsc - SYSCALL_ENTRY_INSNS, p->exit_tsc);
	sti();
	syscall_fn fn = f->rax < ARRAY_SIZE(syscalls) ? syscalls[f->rax] : NULL;
	f->rax = fn ? fn(p, t, f) : -PMUOS_ENOSYS;
	cli();
	task_return_to_user(f);
}
