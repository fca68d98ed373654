/*
 * System calls of pmuos Ring-3 tasks (docs/design.md §6): SYSCALL with the number in
 * RAX and arguments in RDI, RSI, RDX; the result comes back in RAX, a
 * negative value being -errno. Shared by the kernel and user/ (newlib glue).
 */
#ifndef PMUOS_SYSCALL_H
#define PMUOS_SYSCALL_H

#define SYS_WRITE   1 /* (fd 1 or 2, buf, len) -> bytes written */
#define SYS_EXIT    2 /* (status) -> does not return */
#define SYS_SBRK    3 /* (increment bytes) -> previous break, or -ENOMEM */
#define SYS_GETCPU  4 /* () -> logical CPU number */
#define SYS_RANK    5 /* () -> rank | nranks << 32 (SPMD launch) */
#define SYS_TSC_HZ  6 /* () -> TSC ticks per second */
#define SYS_PMU_COUNTS 7 /* (struct pmuos_counts *) -> its nev, or -EFAULT */
#define SYS_PMU_EVENT_NAMES 8 /* (struct pmuos_events *) -> its nev, or -EFAULT */
/* Threads of one process (docs/design.md §6.1; user/pthread.c is their library): */
#define SYS_THREAD_CREATE 9  /* (const struct pmuos_thread_start *) -> its thread number, or -EAGAIN, -EBUSY,
				-EINVAL, -EFAULT */
#define SYS_THREAD_EXIT   10 /* () -> does not return: the calling thread ends; its process with its last thread */
#define SYS_FUTEX_WAIT    11 /* (uint32_t *addr, expected) -> 0 when woken, -EAGAIN if *addr != expected,
				-EINTR if the process is ending, -EINVAL, -EFAULT */
#define SYS_FUTEX_WAKE    12 /* (uint32_t *addr, n) -> threads woken (at most n) */
#define SYS_SET_TLS       13 /* (FS base, a user address or 0) -> 0, or -EINVAL */
#define SYS_THREAD_SELF   14 /* () -> thread number | CPUs of the process's set << 32 */

#include <stdint.h>
#include <pmuos/mailbox.h>

/*
 * SYS_PMU_COUNTS: the calling CPU's multiplexed counts (docs/design.md §5.6),
 * for named regions while the events take turns on the counters. nev = 0:
 * they do not (none configured, or they fit on the counters; RDPMC reads
 * them). Times are TSC ticks since the counters were last cleared.
 */
#define PMUOS_COUNTS_MAX MBOX_MUX_MAX /* the longest list that takes turns */
struct pmuos_counts {
	uint32_t nev;                       /* entries: the events of the list, in its order */
	uint32_t reserved;
	uint64_t enabled;                   /* ticks the counters were started */
	uint64_t value[PMUOS_COUNTS_MAX];   /* events so far, the live counter's part included */
	uint64_t running[PMUOS_COUNTS_MAX]; /* ticks the event was on a counter */
};

/*
 * SYS_PMU_EVENT_NAMES: the names of the calling CPU's configured events, as
 * `pmu set` and pmuctl take them (pmu/events.c, pmu_event_format): counter
 * 0 and 1 (nev = 2; "" for a counter without an event), or while the events
 * take turns the list, in its order. And the PMU's fixed counters the
 * kernel runs beside them (nfixed, 0 on KNC; pmu/internal.h
 * pmu_fixed_setup), each read with RDPMC ECX = 2^30 + j, and their events'
 * names (Intel SDM Vol. 3B §18.2.2: INST_RETIRED.ANY:u ...). For named
 * regions' report lines.
 */
#define PMUOS_EVENT_NAME 48
#define PMUOS_FIXED_MAX 3
struct pmuos_events {
	uint32_t nev;
	uint32_t nfixed;
	char name[PMUOS_COUNTS_MAX][PMUOS_EVENT_NAME];
	char fixed[PMUOS_FIXED_MAX][PMUOS_EVENT_NAME];
};

/*
 * SYS_THREAD_CREATE: a thread of the calling process starts at `rip` with
 * RSP = `rsp`, RDI = `arg` and FS base `fs_base` (its TLS, variant II: the
 * TCB's address), on `cpu` (-1: the lowest CPU of the process's set that no
 * thread of it holds). One thread per CPU, run to its end: -EAGAIN when
 * every CPU of the set holds one (or the process is ending), -EBUSY when
 * `cpu` does, -EINVAL for a CPU outside the set or an address outside the
 * user region. At the thread's end the kernel writes 0 to the 32-bit word at
 * `clear_tid` (0: none) and wakes its futex waiters (pthread_join's wait).
 */
struct pmuos_thread_start {
	uint64_t rip, rsp, arg, fs_base;
	uint64_t clear_tid;
	int32_t cpu;
	uint32_t reserved; /* 0 */
};

/* User virtual memory (PML4 slot 1): programs are linked inside it. */
#define USER_BASE       0x0000008000000000ULL
#define USER_END        0x0000010000000000ULL
#define USER_TEXT       0x0000008000400000ULL /* pmuos-cc links programs here */
#define USER_STACK_TOP  0x000000fffffff000ULL
#define USER_STACK_SIZE (1ULL << 20)

#define PMUOS_EINVAL 22
#define PMUOS_EFAULT 14
#define PMUOS_ENOMEM 12
#define PMUOS_ENOSYS 38
#define PMUOS_EBADF  9
#define PMUOS_EAGAIN 11
#define PMUOS_EBUSY  16
#define PMUOS_EINTR  4

#endif
