/*
 * The system calls of threads (docs/design.md §6.1; numbers and errors in
 * include/pmuos/syscall.h): creation and end through kernel/task.c, TLS,
 * and futex wait/wake, on which user/pthread.c builds its mutexes,
 * condition variables, barriers and join. A waiting thread halts its CPU
 * (one thread per CPU, no other to run) until a wake's IPI.
 */
#include "kernel/thread.h"
#include "kernel/idle.h"
#include "kernel/percpu.h"
#include "kernel/vm.h"
#include "arch/regs.h"
#include "arch/sync.h"
#include "arch/x86.h"
#include "lib/lib.h"
#include <pmuos/syscall.h>

/* A user address a thread may start at, or have as its FS base. */
static bool user_addr(uint64_t va)
{
	return va >= USER_BASE && va < USER_END;
}

int64_t sys_thread_create(struct percpu *p, struct task *t, const struct trap_frame *f)
{
	struct pmuos_thread_start st;

	if (!vm_user_range_ok(t->as, f->rdi, sizeof(st), false) || !vm_copy_from(t->as, &st, f->rdi, sizeof(st)))
		return -PMUOS_EFAULT;
	/* an IRETQ to a non-canonical RIP, or a WRMSR of one, faults in the kernel: checked here */
	if (!user_addr(st.rip) || !user_addr(st.rsp) || (st.fs_base && !user_addr(st.fs_base)) ||
	    (st.clear_tid && (st.clear_tid & 3)) || st.reserved)
		return -PMUOS_EINVAL;
	return task_thread_create(t, st.rip, st.rsp, st.arg, st.fs_base, st.clear_tid, st.cpu);
}

int64_t sys_thread_exit(struct percpu *p, struct task *t, const struct trap_frame *f)
{
	uint32_t zero = 0;

	task_free_cpu(t);
	/* pthread_join's word: cleared, then its waiters woken, while the address space is still this thread's too */
	if (t->clear_tid && vm_user_range_ok(t->as, t->clear_tid, 4, true)) {
		vm_copy_to(t->as, t->clear_tid, &zero, 4);
		thread_futex_wake(t, t->clear_tid, UINT32_MAX);
	}
	task_leave(TASK_EXITED, 0);
}

int64_t sys_set_tls(struct percpu *p, struct task *t, const struct trap_frame *f)
{
	if (f->rdi && !user_addr(f->rdi))
		return -PMUOS_EINVAL;
	t->fs_base = f->rdi;
	wrmsr(MSR_FS_BASE, t->fs_base);
	return 0;
}

int64_t sys_thread_self(struct percpu *p, struct task *t, const struct trap_frame *f)
{
	return t->thread | (uint64_t)cpuset_count(&t->main->cpus) << 32;
}

/* The kernel's view of a futex word: 4-aligned, mapped; NULL if not. */
static volatile uint32_t *futex_word(struct task *t, uint64_t addr)
{
	if ((addr & 3) || !vm_user_range_ok(t->as, addr, 4, false))
		return NULL;
	return vm_translate(t->as, addr);
}

int64_t sys_futex_wait(struct percpu *p, struct task *t, const struct trap_frame *f)
{
	struct task *m = t->main;
	volatile uint32_t *w = futex_word(t, f->rdi);

	if (!w)
		return f->rdi & 3 ? -PMUOS_EINVAL : -PMUOS_EFAULT;
	/* checked and registered under plock, which a wake takes: a wake after the check finds this thread */
	uint64_t fl = spin_lock_irq(&m->plock);
	bool same = *w == (uint32_t)f->rsi;
	if (same) {
		t->futex = f->rdi;
		m->waiters++;
	}
	spin_unlock_irq(&m->plock, fl);
	if (!same)
		return -PMUOS_EAGAIN;
	bool worked = false;
	for (;;) {
		cli(); /* checked with interrupts off: a wake's IPI between the check and the HLT ends the HLT */
		if (!READ_ONCE(t->futex) || READ_ONCE(t->kill_requested))
			break;
		if (p->user_work && !worked) { /* the host's work this CPU does, as on a return to Ring 3: once a wake-up */
			worked = true;
			task_user_work();
			continue;
		}
		worked = false;
		idle_wait();
	}
	sti();
	if (!READ_ONCE(t->futex))
		return 0;
	fl = spin_lock_irq(&m->plock);
	bool woken = !t->futex; /* a wake may have come meanwhile */
	if (!woken) {
		t->futex = 0;
		m->waiters--;
	}
	spin_unlock_irq(&m->plock, fl);
	return woken ? 0 : -PMUOS_EINTR;
}

struct futex_wake {
	uint64_t addr;
	uint32_t left, woken;
};

static void wake_one(struct task *t, void *arg)
{
	struct futex_wake *w = arg;

	if (!w->left || READ_ONCE(t->futex) != w->addr)
		return;
	t->futex = 0;
	t->main->waiters--;
	w->left--;
	w->woken++;
	smp_wake_apic(cpu_table[t->cpu]->apic_id);
}

uint32_t thread_futex_wake(struct task *t, uint64_t addr, uint32_t n)
{
	struct futex_wake w = { addr, n, 0 };
	uint64_t fl = spin_lock_irq(&t->main->plock);

	if (t->main->waiters) /* a scan of the task table only when some thread of the process waits */
		task_for_process(t->main, wake_one, &w);
	spin_unlock_irq(&t->main->plock, fl);
	return w.woken;
}

int64_t sys_futex_wake(struct percpu *p, struct task *t, const struct trap_frame *f)
{
	if (f->rdi & 3)
		return -PMUOS_EINVAL;
	return thread_futex_wake(t, f->rdi, f->rsi > UINT32_MAX ? UINT32_MAX : (uint32_t)f->rsi);
}
