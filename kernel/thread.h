/*
 * Threads' system calls (kernel/thread.c; include/pmuos/syscall.h gives
 * their arguments and errors), for syscall.c's table. Each takes the calling
 * CPU, its task and the SYSCALL's frame (arguments in RDI, RSI).
 */
#ifndef KERNEL_THREAD_H
#define KERNEL_THREAD_H

#include <stdint.h>
#include "kernel/percpu.h"
#include "kernel/task.h"

int64_t sys_thread_create(struct percpu *p, struct task *t, const struct trap_frame *f);
int64_t sys_thread_exit(struct percpu *p, struct task *t, const struct trap_frame *f) __attribute__((noreturn));
int64_t sys_futex_wait(struct percpu *p, struct task *t, const struct trap_frame *f);
int64_t sys_futex_wake(struct percpu *p, struct task *t, const struct trap_frame *f);
int64_t sys_set_tls(struct percpu *p, struct task *t, const struct trap_frame *f);
int64_t sys_thread_self(struct percpu *p, struct task *t, const struct trap_frame *f);
/* Wakes at most n threads of t's process waiting on user address addr; how many it woke. */
uint32_t thread_futex_wake(struct task *t, uint64_t addr, uint32_t n);

#endif
