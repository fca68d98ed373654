/*
 * threads: POSIX threads on the card (user/pthread.c, docs/design.md §6.1),
 * for tests/system/test_threads.py. One process of N threads (the main one
 * and N - 1 it creates, each on a CPU of the process's set; N defaults to
 * the set's size), in ROUNDS rounds:
 *   threads [N [ROUNDS]]  each thread sets a __thread variable, writes a
 *                         malloc'd string, meets the others at a barrier,
 *                         adds 1000 to a mutex-protected counter and tells
 *                         the main thread through a condition variable;
 *                         the main thread joins them and checks the sum.
 *   threads work N        each thread runs the same calibrated loop between
 *                         SPFLT 1 and SPFLT 0 (pmu_spflt), in a named region
 *                         "work": a counter gated by SPFLT counts it alone,
 *                         the same in every thread.
 *   threads fault N       thread 1 writes to address 0 after the barrier:
 *                         its fault ends the process.
 *   threads hostile       the threads' system calls with bad arguments: each
 *                         must fail with its errno, the kernel unharmed.
 *   threads cost          with counter 1 counting kernel instructions
 *                         (bench/threads.py): those of a futex wake that finds
 *                         no waiter, and those the creating CPU runs for a
 *                         pthread_create and its pthread_join.
 * Asked more threads than the set has CPUs, pthread_create fails (EAGAIN)
 * and the program says so and exits 1.
 */
#define _GNU_SOURCE /* sched_getcpu */
#include <errno.h>
#include <sched.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pmuos/pmu.h>
#include <pmuos/syscall.h>
#include <pmuos/thread.h>

#define ADDS 1000
#define WORK 20000

static int nthreads, rounds = 1, fault, work;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t all_done = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t start;
static long counter;
static int done;
static __thread int my_index = -1;
static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long calibrated(unsigned long x)
{
	for (int i = 0; i < WORK; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

static void *worker(void *arg)
{
	int i = (int)(long)arg;

	my_index = i;
	char *s = malloc(64);
	if (!s)
		return (void *)1L;
	snprintf(s, 64, "thread %d", i);
	pthread_barrier_wait(&start);
	if (work) {
		pmu_region_begin("work"); /* each thread's own region (user/regions.c) */
		pmu_spflt(1);
		sink = calibrated(sink);
		pmu_spflt(0);
		pmu_region_end("work");
	}
	if (fault && i == 1)
		*(volatile int *)0 = 1;
	for (int k = 0; k < ADDS; k++) {
		pthread_mutex_lock(&lock);
		counter++;
		pthread_mutex_unlock(&lock);
	}
	pthread_mutex_lock(&lock);
	if (++done == nthreads)
		pthread_cond_broadcast(&all_done);
	pthread_mutex_unlock(&lock);
	char want[64];
	snprintf(want, sizeof(want), "thread %d", i);
	long bad = my_index != i || strcmp(s, want) != 0; /* its TLS and its string intact */
	if (rounds == 1)
		printf("%s of %d on CPU %d: tls %d%s\n", s, nthreads, sched_getcpu(), my_index, bad ? " WRONG" : "");
	free(s);
	return (void *)bad;
}

static long sys(long n, long a, long b)
{
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(0) : "rcx", "r11", "memory");
	return r;
}

static int expect(const char *what, long got, long want)
{
	printf("hostile: %s: %ld%s\n", what, got, got == want ? "" : " WRONG");
	return got != want;
}

/* Bad arguments to the threads' system calls (include/pmuos/syscall.h): 0 if each gave its error. */
static int hostile(void)
{
	static uint32_t word = 7;
	struct pmuos_thread_start st = { .rip = (uintptr_t)hostile, .rsp = (uintptr_t)&word, .cpu = -1 };
	int bad = 0;

	bad += expect("create from NULL", sys(SYS_THREAD_CREATE, 0, 0), -PMUOS_EFAULT);
	bad += expect("create from a kernel address", sys(SYS_THREAD_CREATE, 0x100000, 0), -PMUOS_EFAULT);
	st.rip = 0xffff800000000000UL;
	bad += expect("create at a kernel RIP", sys(SYS_THREAD_CREATE, (long)&st, 0), -PMUOS_EINVAL);
	st.rip = 0x0000800000000000UL; /* past the user region, non-canonical on a 48-bit machine's edge */
	bad += expect("create at a RIP past the user region", sys(SYS_THREAD_CREATE, (long)&st, 0), -PMUOS_EINVAL);
	st.rip = (uintptr_t)hostile;
	st.fs_base = 0x8000000000000000UL;
	bad += expect("create with a non-canonical FS base", sys(SYS_THREAD_CREATE, (long)&st, 0), -PMUOS_EINVAL);
	st.fs_base = 0;
	st.reserved = 1;
	bad += expect("create with a reserved field set", sys(SYS_THREAD_CREATE, (long)&st, 0), -PMUOS_EINVAL);
	st.reserved = 0;
	st.cpu = 999;
	bad += expect("create on CPU 999", sys(SYS_THREAD_CREATE, (long)&st, 0), -PMUOS_EINVAL);
	st.cpu = -2;
	bad += expect("create on CPU -2", sys(SYS_THREAD_CREATE, (long)&st, 0), -PMUOS_EINVAL);
	st.cpu = sched_getcpu();
	bad += expect("create on its own CPU", sys(SYS_THREAD_CREATE, (long)&st, 0), -PMUOS_EBUSY);
	bad += expect("wait on an unaligned word", sys(SYS_FUTEX_WAIT, (long)&word + 1, 7), -PMUOS_EINVAL);
	bad += expect("wait on an unmapped word", sys(SYS_FUTEX_WAIT, 0x1000, 0), -PMUOS_EFAULT);
	bad += expect("wait on a kernel word", sys(SYS_FUTEX_WAIT, 0xffff800000001000L, 0), -PMUOS_EFAULT);
	bad += expect("wait for a value the word has not", sys(SYS_FUTEX_WAIT, (long)&word, 8), -PMUOS_EAGAIN);
	bad += expect("wake on an unmapped word", sys(SYS_FUTEX_WAKE, 0x1000, 1), 0);
	bad += expect("TLS at a kernel address", sys(SYS_SET_TLS, 0xffff800000000000L, 0), -PMUOS_EINVAL);
	printf("hostile: %s\n", bad ? "WRONG" : "ok");
	return bad != 0;
}

static void *nothing(void *arg)
{
	return arg;
}

#define REPS 1000
#define CREATES 100

/* Kernel instructions (counter 1, INSTRUCTIONS_EXECUTED:k) per wake and per create and join; less the RDPMCs' own. */
static int cost(void)
{
	static uint32_t word;
	uint64_t a = pmu_rdpmc(1), b = pmu_rdpmc(1), rdpmc = b - a;

	a = pmu_rdpmc(1);
	for (int i = 0; i < REPS; i++)
		sys(SYS_FUTEX_WAKE, (long)&word, 1);
	b = pmu_rdpmc(1);
	unsigned long long wake = (b - a - rdpmc) / REPS;
	a = pmu_rdpmc(1);
	for (int i = 0; i < CREATES; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, nothing, NULL) || pthread_join(t, NULL))
			return 1;
	}
	b = pmu_rdpmc(1);
	printf("threads: kernel instructions per futex wake %llu, per create and join %llu\n", wake,
	       (unsigned long long)((b - a - rdpmc) / CREATES));
	return 0;
}

int main(int argc, char **argv)
{
	int a = 1;

	if (argc > 1 && strcmp(argv[1], "hostile") == 0)
		return hostile();
	if (argc > 1 && strcmp(argv[1], "cost") == 0)
		return cost();
	if (argc > a && strcmp(argv[a], "work") == 0)
		work = ++a;
	else if (argc > a && strcmp(argv[a], "fault") == 0)
		fault = ++a;
	nthreads = argc > a ? atoi(argv[a]) : pmuos_thread_cpus();
	if (argc > a + 1)
		rounds = atoi(argv[a + 1]);
	if (nthreads < 1 || nthreads > 1023 || rounds < 1) {
		fprintf(stderr, "usage: threads [work|fault] [N (1-1023) [ROUNDS]] | hostile | cost\n");
		return 2;
	}
	pthread_t *t = calloc(nthreads, sizeof(*t));
	long bad = 0;
	for (int r = 0; r < rounds; r++) {
		done = 0;
		pthread_barrier_init(&start, NULL, nthreads);
		for (int i = 1; i < nthreads; i++) {
			int e = pthread_create(&t[i], NULL, worker, (void *)(long)i);
			if (e) {
				printf("threads: thread %d of %d: pthread_create: %s%s\n", i, nthreads, strerror(e),
				       e == EAGAIN ? " (EAGAIN: a thread per CPU, and every CPU of the process holds one)" : "");
				exit(1);
			}
		}
		bad += (long)worker(0);
		pthread_mutex_lock(&lock);
		while (done < nthreads)
			pthread_cond_wait(&all_done, &lock);
		pthread_mutex_unlock(&lock);
		for (int i = 1; i < nthreads; i++) {
			void *ret;
			pthread_join(t[i], &ret);
			bad += (long)ret;
		}
	}
	long want = (long)nthreads * ADDS * rounds;
	printf("threads: %d threads, %d rounds: counter %ld (expected %ld)%s\n", nthreads, rounds, counter, want,
	       counter == want && !bad ? "" : " WRONG");
	return counter == want && !bad ? 0 : 1;
}
