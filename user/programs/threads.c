/*
 * threads: POSIX threads on the card (user/pthread.c, docs/design.md §6.3),
 * for tests/system/test_threads.py. One process of N threads (the main one
 * and N - 1 it creates, each on a CPU of the process's set; N defaults to
 * the set's size), in ROUNDS rounds:
 *   threads [N [ROUNDS]]  each thread sets a __thread variable, writes a
 *                         malloc'd string, meets the others at a barrier,
 *                         adds 1000 to a mutex-protected counter and tells
 *                         the main thread through a condition variable;
 *                         the main thread joins them and checks the sum.
 *   threads work N        each thread runs the same calibrated loop between
 *                         SPFLT 1 and SPFLT 0 (pmu_spflt): a counter gated by
 *                         SPFLT counts it alone, the same in every thread.
 *   threads fault N       thread 1 writes to address 0 after the barrier:
 *                         its fault ends the process.
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
		pmu_spflt(1);
		sink = calibrated(sink);
		pmu_spflt(0);
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

int main(int argc, char **argv)
{
	int a = 1;

	if (argc > a && strcmp(argv[a], "work") == 0)
		work = ++a;
	else if (argc > a && strcmp(argv[a], "fault") == 0)
		fault = ++a;
	nthreads = argc > a ? atoi(argv[a]) : pmuos_thread_cpus();
	if (argc > a + 1)
		rounds = atoi(argv[a + 1]);
	if (nthreads < 1 || nthreads > 1023 || rounds < 1) {
		fprintf(stderr, "usage: threads [work|fault] [N (1-1023) [ROUNDS]]\n");
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
