/*
 * pmuos's additions to POSIX threads for card programs (user/pthread.c;
 * docs/design.md §6.1). A thread runs on one CPU of its process's set for
 * its whole life, one thread per CPU. newlib's pthread_attr_t has no CPU
 * affinity field (its pthread_attr_setaffinity_np is RTEMS's only), so a
 * thread's CPU is given with this equivalent.
 */
#ifndef PMUOS_THREAD_H
#define PMUOS_THREAD_H

#include <pthread.h>

/*
 * The CPU (a card CPU number of the process's set) a thread created with
 * `attr` runs on; -1 (the default): the lowest CPU of the set no thread of
 * the process holds. 0, or EINVAL for cpu < -1. pthread_create then fails
 * with EINVAL for a CPU outside the set and EBUSY for one a thread holds.
 */
int pthread_attr_setcpu_np(pthread_attr_t *attr, int cpu);
/* The CPU set with pthread_attr_setcpu_np into *cpu (-1: any); 0. */
int pthread_attr_getcpu_np(const pthread_attr_t *attr, int *cpu);
/* The calling thread's number in its process (0: the main thread; perf.data's tid is 1000 + it). */
int pmuos_thread_number(void);
/* How many CPUs the process's set has: the most threads it can have at once. */
int pmuos_thread_cpus(void);

#endif
