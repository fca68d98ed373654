/*
 * Ring-3 tasks (docs/design.md §6): static ELF64 programs, one address space
 * per process, each task run to completion on the CPU it was given
 * (per-CPU run queues). A launch starts one instance per CPU of a CPU set
 * (SPMD): instance i of n learns its CPU and its rank i through system
 * calls. Or, with `threads`, one process whose threads may use the set's
 * CPUs (§6.1): a task per thread, each on a CPU no other thread of it holds,
 * sharing the address space; the main thread's task holds the process's
 * state.
 */
#ifndef KERNEL_TASK_H
#define KERNEL_TASK_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include "lib/cpuset.h"
#include "arch/irq.h"
#include "arch/sync.h"
#include <pmuos/mailbox.h>

/* argv strings of a task, its name included: as many as the mailbox's RUN carries */
#define TASK_MAX_ARGS MBOX_RUN_ARGS
#define TASK_NAME 32
#define TASK_OUT_LINE 256
/*
 * A task may hold at most 1/TASK_MEM_SHARE of the card's usable RAM
 * (pmm_usable_bytes()): its pages, their page tables and its PML4 (kernel/vm.h),
 * counted for the program's segments, its stack and what sbrk adds. sbrk
 * answers ENOMEM past it; a program whose segments and stack need more is
 * refused at launch with both sizes. A quarter keeps one runaway task from
 * taking the memory the kernel and the other tasks need, and still lets the
 * three APs of a 4-CPU card with 512 MiB (make run's default) each run a task
 * of ~127 MiB at once; on a KNC card with 8 GiB a task may have 2 GiB.
 */
#define TASK_MEM_SHARE 4

enum task_state { TASK_FREE, TASK_READY, TASK_RUNNING, TASK_EXITED, TASK_KILLED, TASK_FAULTED };

struct task {
	uint32_t id;
	uint32_t cpu, rank, nranks;
	uint32_t launch;             /* id of the first task of its launch */
	volatile uint32_t state;     /* enum task_state */
	int exit_status;             /* exit(status), or the exception vector when faulted */
	char name[TASK_NAME];
	uint64_t as;                 /* address space (kernel/vm.h) */
	uint64_t entry, initial_rsp; /* where Ring 3 starts */
	uint64_t brk;                /* end of the heap, user address */
	uint64_t brk_base;           /* end of the program's segments */
	volatile bool kill_requested;
	volatile bool active;        /* counted among the active tasks (launched, not yet finished) */
	volatile bool held;          /* its CPU has not let go of it yet: the slot is not reusable */
	char out[TASK_OUT_LINE];     /* output line being assembled */
	size_t out_len;
	uint32_t out_ring;           /* its output ring in the mailbox (MBOX_NO_RING: none) */
	bool to_console;             /* its lines go to the console too (task_launch) */
	uint32_t waiter_apic;        /* gets a VEC_WAKE when the task ends */
	struct task *next;           /* run queue link */

	/* As a thread of a process: */
	struct task *main;           /* its process's main thread (itself for that one), which holds the process */
	uint32_t thread;             /* its number in its process, 0: the main thread */
	volatile bool alive;         /* counted in main->live: not yet finished */
	bool cpu_freed;              /* its CPU no longer in main->busy (task_free_cpu) */
	uint64_t arg;                /* RDI at its first entry */
	uint64_t fs_base;            /* FS base (TLS), set at each start on its CPU */
	uint64_t clear_tid;          /* user address of a 32-bit word zeroed and woken at its end; 0: none */
	volatile uint64_t futex;     /* user address it waits on (SYS_FUTEX_WAIT); 0: not waiting */

	/* The process's state, in its main thread's task (under plock): */
	struct spinlock plock;       /* taken by no interrupt handler */
	struct spinlock brk_lock;    /* brk's (sbrk), with interrupts on */
	struct cpuset cpus;          /* the CPUs its threads may use */
	struct cpuset busy;          /* those a thread of it holds */
	uint32_t live;               /* threads not yet finished */
	uint32_t nthreads;           /* threads made, the main one included */
	uint32_t waiters;            /* threads in a futex wait */
	bool threaded;               /* launched with `threads` */
	bool dying;                  /* killed or ending: no new thread */
	bool exiting;                /* exit() from a thread: the others end EXITED with exit_code */
	int exit_code;
	uint64_t proc_as;            /* the address space, freed with its last thread */
};

/*
 * Launches `n` instances of the program image on the CPUs of `set` (CPU 0,
 * which runs the shell, is refused). argv[0] is the name. Each task's output
 * lines go to its output ring, and with to_console to the console too (a
 * launch from the shell, read there; a host's launch reads the rings: 243
 * tasks' lines through one console lock and a UART kept every other CPU
 * spinning on the lock, the mailbox unserved for minutes, issue 36).
 * Returns the id of the first task (the launch id), or -1 with the reason
 * in err.
 */
int task_launch(const uint8_t *img, size_t len, int argc, char **argv, const struct cpuset *set,
		bool threads, bool to_console, char *err, size_t errlen);
/*
 * A new thread of t's process (struct pmuos_thread_start, checked by the
 * caller: user addresses): its thread number, or -PMUOS_EAGAIN (every CPU
 * of the set holds a thread, or the process is ending), -PMUOS_EBUSY (`cpu`
 * holds one), -PMUOS_EINVAL (`cpu` outside the set or not online),
 * -PMUOS_ENOMEM (no task slot).
 */
int task_thread_create(struct task *t, uint64_t rip, uint64_t rsp, uint64_t arg, uint64_t fs_base,
		       uint64_t clear_tid, int32_t cpu);
/*
 * The calling CPU's thread calls exit(status): every thread of its process
 * ends, EXITED with that status (the first exit's, if two race).
 */
void task_exit_process(int status) __attribute__((noreturn));
/*
 * Thread t's CPU is free for another thread of its process (once; under its
 * plock): at its end, and before a thread's exit wakes its joiner, which may
 * create the next thread at once (it runs on that CPU when t has finished).
 */
void task_free_cpu(struct task *t);
/* Calls fn for each thread of the process whose main thread is `main`, not yet finished. */
void task_for_process(struct task *main, void (*fn)(struct task *t, void *arg), void *arg);

/*
 * Halts until every task of launch `id` has ended. If interrupted() says so
 * (Ctrl-C), kills them, waits up to 1 s for them to end and returns false.
 */
bool task_wait_launch(int id, bool (*interrupted)(void));
/* Whether any task is waiting to run or running. */
bool any_task_active(void);
/* Whether a task of CPU `cpu` is waiting to run or running there (a scan of the task table). */
bool task_active_on(uint32_t cpu);
/* Asks task `id`'s process (every thread of it) to end; false if there is no such running task. */
bool task_kill(uint32_t id);
/*
 * Calls fn for every task of launch `launch` (ids from the launch id on), in
 * id order (rank order, or a process's threads as they were made, its main
 * thread first); returns how many. One pass over the task table and an
 * insertion sort of what is nearly sorted: the mailbox asks this of a
 * measured CPU every few milliseconds.
 */
int task_for_launch(uint32_t launch, void (*fn)(const struct task *t, void *arg), void *arg);
/* Calls fn for every task slot in use, oldest first (O(slots^2): for the shell). */
void task_for_each(void (*fn)(const struct task *t, void *arg), void *arg);
const char *task_state_name(uint32_t state);

/*
 * The slot a launch may take from tab[0..n): a free one, else the oldest
 * ended task whose CPU has let go of it (not held), else NULL. Pure
 * (kernel/task_slot.c, host-tested): a slot whose CPU is still finishing
 * its task must not be handed out, or that CPU frees the new task's pages.
 */
struct task *task_slot_pick(struct task *tab, size_t n);

/*
 * Ends the task the calling CPU ran when an INIT cut it off (it is killed,
 * with a report); ap_main calls it when the CPU rejoins.
 */
void task_cpu_rejoined(void);
/* The calling CPU stops for good (kernel exception): ends its task and queued tasks, with a report. */
void task_cpu_stopped(void);
/* `cpu` did not come back after INIT: ends its task and queued tasks (called by the CPU that sent it). */
void task_cpu_lost(uint32_t cpu);

/* BSP, before the APs start: tells the trap dispatcher (kernel/trap.h) what to do about Ring 3. */
void task_init(void);
/* Per-CPU set-up for Ring 3: SYSCALL MSRs. */
void task_cpu_init(void);
/* The AP idle loop's step: runs the next queued task, if any, to its end. Interrupts off. */
bool task_run_next(void);

/* trap.c (through task_init's hooks): an exception in Ring 3 that nothing handled ends the task with a report. */
void task_fault(struct trap_frame *f) __attribute__((noreturn));
/* trap.c (through the hooks), syscall.c: the CPU is about to return to Ring 3 (a kill request ends the task here). */
void task_return_to_user(struct trap_frame *f);
/* The host's work due on the calling CPU (percpu user_work, cleared here; struct task_host), interrupts off. */
void task_user_work(void);
/* syscall.c: the calling CPU's task ends (exit): back to task_run_next on this CPU's own stack. */
void task_leave(uint32_t state, int status) __attribute__((noreturn));
/* syscall.c: sends the task's output line so far to the console and the host. */
void task_flush_output(struct task *t);
/* kernel/user.S's SYSCALL entry, interrupts off: serves the call in f->rax (syscall.c) and returns to Ring 3. */
void syscall_dispatch(struct trap_frame *f);
/*
 * The Ring-3 context of the calling CPU's task: every entry from Ring 3 (and
 * a task's first entry into it) keeps it at the top of the task stack
 * (kernel/isr.S, kernel/user.S). Meaningful from an entry from Ring 3 until
 * the return.
 */
struct trap_frame *task_user_frame(void);

/*
 * The front end that serves the host (the mailbox, mailbox/mailbox.c): it
 * gets each task's output and moves its service to the CPUs that run tasks.
 * It installs itself at init (task_set_host, every member set); until then
 * a task has no output ring and nothing moves.
 */
struct task_host {
	/* A ring for task `task`'s output (rank of nranks in launch); MBOX_NO_RING if none. */
	uint32_t (*output_open)(uint32_t task, uint32_t launch, uint32_t rank, uint32_t nranks);
	/* Appends n bytes of output to ring `ring` (MBOX_NO_RING: dropped). */
	void (*output)(uint32_t ring, const char *s, size_t n);
	/* A launch whose first task runs on `cpu` was made. */
	void (*hand_over)(uint32_t cpu);
	/* The calling CPU starts a task / has no task left to run. */
	void (*take_service)(void);
	void (*return_service)(void);
	/*
	 * On a return to Ring 3 after something set this CPU's `user_work`
	 * (cleared before the call), interrupts off on entry and return.
	 */
	void (*user_work)(void);
	/* The CPU serving a launch has built one more task's address space: it shows the host it lives. */
	void (*alive)(void);
	/* A task has ended and its CPU let go of it: what STATUS answers about it is final. */
	void (*ended)(void);
};
void task_set_host(const struct task_host *h);

/*
 * Registers fn(running): called when tasks start to run on a card that ran
 * none (true) and when the last one's CPU has let go of it (false: its
 * memory freed, task.held clear), on the CPU that made the
 * change, without a lock, called again until the state it gave is the
 * state now (a launch and an end on two CPUs at once leave the last call
 * right; a call may repeat the state). One; init/main.c gives it
 * the platform's (platform/platform.h tasks_running).
 */
void task_on_running(void (*fn)(bool running));
/* Tasks launched and not yet let go of by their CPUs (0..MAX_TASKS): those that may run now. */
uint32_t task_held(void);

#endif
