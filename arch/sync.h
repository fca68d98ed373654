/*
 * Spin-waits, barriers and locks: the one place that decides how a CPU waits.
 * docs/design.md §3: a KNC core has no PAUSE and no MFENCE/LFENCE/SFENCE, so the full
 * barrier is a lock-prefixed add and a spin-wait is a plain re-read.
 */
#ifndef ARCH_SYNC_H
#define ARCH_SYNC_H

#include <stdint.h>
#include <stdbool.h>
#include "arch/x86.h"

#define barrier() __asm__ volatile("" ::: "memory")

/* Full memory barrier (loads and stores), KNC-safe. */
static inline void smp_mb(void)
{
	__asm__ volatile("lock addl $0, (%%rsp)" ::: "memory", "cc");
}

/* Body of a spin-wait loop. No PAUSE on KNC: just keep the compiler honest. */
static inline void cpu_relax(void) { barrier(); }

#define READ_ONCE(x)     (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))

struct spinlock {
	volatile uint32_t locked;
};
#define SPINLOCK_INIT { 0 }

static inline bool spin_trylock(struct spinlock *l)
{
	return __atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE) == 0;
}

static inline void spin_lock(struct spinlock *l)
{
	while (!spin_trylock(l))
		while (READ_ONCE(l->locked))
			cpu_relax();
}

static inline void spin_unlock(struct spinlock *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

/* Lock with interrupts off; returns the flags to give back to spin_unlock_irq. */
static inline uint64_t spin_lock_irq(struct spinlock *l)
{
	uint64_t f = irq_save();
	spin_lock(l);
	return f;
}

static inline void spin_unlock_irq(struct spinlock *l, uint64_t f)
{
	spin_unlock(l);
	irq_restore(f);
}

/*
 * For a lock held across a write that can end the holder's vCPU turn under
 * QEMU (a PIT or device write), which no CPU may wait for (docs/design.md
 * §10). The caller first leaves the change it wants where apply() finds it;
 * then, while pending() says a change is wanted, this CPU takes the lock
 * and applies it. A CPU that finds the lock taken goes on: the holder looks
 * at pending() again after letting go, so no change is lost. Interrupts
 * are off meanwhile.
 */
static inline void spin_settle(struct spinlock *l, bool (*pending)(void *), void (*apply)(void *), void *arg)
{
	uint64_t f = irq_save();

	smp_mb(); /* the change before the lock: if it is taken, its holder sees the change */
	while (pending(arg) && spin_trylock(l)) {
		apply(arg);
		spin_unlock(l);
		smp_mb(); /* let go before looking again */
	}
	irq_restore(f);
}

#endif
