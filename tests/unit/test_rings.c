/*
 * host/rings.c on the host, what it reads from STATUS answers: each CPU's
 * tid (launch_tids: a threaded launch's by thread number, an instance per
 * CPU's by CPU), a launch's exit status (a process's is its main
 * thread's), and the output rings, each followed once however many tasks
 * share it (a process's threads) and "[rank N]" only with several ranks;
 * the rings on a fake card's output area. card_alive (samples_drain's) is
 * a double: no test here drains samples.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "host/rings.h"

int card_alive(struct card *c)
{
	(void)c;
	return 0;
}

static struct mbox_response answer;

/* The STATUS answer of tasks t[0..n). */
static const struct mbox_response *status_of(const struct mbox_task *t, size_t n)
{
	answer.len = n * sizeof(*t);
	memcpy(answer.payload, t, answer.len);
	return &answer;
}

static void test_a_threaded_launch_is_named_by_thread(void **state)
{
	(void)state;
	/* main thread on CPU 1, threads 1 and 2 on CPUs 2 and 4, all rank 0 */
	const struct mbox_task t[] = {
		{ .id = 7, .cpu = 1, .thread = 0, .output_ring = 3, .state = MBOX_TASK_RUNNING },
		{ .id = 8, .cpu = 2, .thread = 1, .output_ring = 3, .state = MBOX_TASK_EXITED },
		{ .id = 9, .cpu = 4, .thread = 2, .output_ring = 3, .state = MBOX_TASK_RUNNING },
	};
	uint32_t tid[CPUSET_MAX];

	assert_int_equal(launch_tids(status_of(t, 3), 1, tid), 3);
	assert_int_equal(tid[1], PERF_PID); /* the main thread's tid is the pid */
	assert_int_equal(tid[2], PERF_PID + 1);
	assert_int_equal(tid[4], PERF_PID + 2);
	assert_int_equal(tid[0] | tid[3] | tid[5] | tid[255], 0);
}

static void test_an_instance_per_cpu_is_named_by_cpu(void **state)
{
	(void)state;
	const struct mbox_task t[] = {
		{ .id = 7, .cpu = 1, .rank = 0, .output_ring = 0 },
		{ .id = 8, .cpu = 3, .rank = 1, .output_ring = 1 },
	};
	uint32_t tid[CPUSET_MAX];

	assert_int_equal(launch_tids(status_of(t, 2), 0, tid), 2);
	assert_int_equal(tid[1], PERF_PID + 1);
	assert_int_equal(tid[3], PERF_PID + 3);
	/* asked for threads, the card ran ranks anyway: the instances' tids, not all PERF_PID */
	assert_int_equal(launch_tids(status_of(t, 2), 1, tid), 2);
	assert_int_equal(tid[1], PERF_PID + 1);
	assert_int_equal(tid[3], PERF_PID + 3);
	/* one instance: by CPU without --threads, by thread with it */
	assert_int_equal(launch_tids(status_of(t, 1), 0, tid), 1);
	assert_int_equal(tid[1], PERF_PID + 1);
	assert_int_equal(launch_tids(status_of(t, 1), 1, tid), 1);
	assert_int_equal(tid[1], PERF_PID);
}

static void test_a_hostile_answer_names_each_cpu_once(void **state)
{
	(void)state;
	const struct mbox_task t[] = {
		{ .id = 1, .cpu = 2, .thread = 5 },
		{ .id = 2, .cpu = 2, .thread = 6 },        /* CPU 2 again: the first task keeps it */
		{ .id = 3, .cpu = CPUSET_MAX, .thread = 1 }, /* past the map */
		{ .id = 4, .cpu = 3, .thread = (uint32_t)-PERF_PID }, /* a tid that wraps to 0: none */
	};
	uint32_t tid[CPUSET_MAX];

	assert_int_equal(launch_tids(status_of(t, 4), 1, tid), 1);
	assert_int_equal(tid[2], PERF_PID + 5);
	assert_int_equal(tid[3], 0);
}

static void test_a_process_exits_with_its_main_threads_status(void **state)
{
	(void)state;
	struct mbox_task t[] = {
		{ .id = 7, .cpu = 1, .thread = 0, .state = MBOX_TASK_EXITED, .exit_status = 3 },
		{ .id = 8, .cpu = 2, .thread = 1, .state = MBOX_TASK_EXITED, .exit_status = 9 },
	};

	assert_int_equal(launch_status(status_of(t, 2)), 3);
	t[0].exit_status = 0; /* a thread's own status is not the process's */
	assert_int_equal(launch_status(status_of(t, 2)), 0);
	t[1].state = MBOX_TASK_FAULTED; /* a fault still shows */
	assert_int_equal(launch_status(status_of(t, 2)), 128 + 11);
	t[1].state = MBOX_TASK_RUNNING;
	assert_int_equal(launch_status(status_of(t, 2)), -1);
	/* instances: any one's status */
	struct mbox_task spmd[] = {
		{ .id = 1, .rank = 0, .state = MBOX_TASK_EXITED, .exit_status = 0 },
		{ .id = 2, .rank = 1, .state = MBOX_TASK_EXITED, .exit_status = 4 },
	};
	assert_int_equal(launch_status(status_of(spmd, 2)), 4);
}

static struct mbox_output_ring *rings;

/* Ring r written by task `task`: `text`. */
static void ring_write(uint32_t r, uint32_t task, const char *text)
{
	rings[r].task = task;
	memcpy(rings[r].data, text, strlen(text));
	rings[r].head = strlen(text);
}

/* What outputs_drain prints of answer `r`, with the lines left unfinished (last). */
static char *drained(struct outputs *o, const struct mbox_response *r)
{
	struct card c = { .outputs = rings };
	char *text;
	size_t len;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	outputs_drain(&c, o, r, 1, f);
	fclose(f);
	return text;
}

static int setup_rings(void **state)
{
	(void)state;
	rings = calloc(MBOX_OUTPUT_RINGS, sizeof(*rings));
	return rings ? 0 : -1;
}

static int teardown_rings(void **state)
{
	(void)state;
	free(rings);
	return 0;
}

static void test_threads_share_one_ring_read_once_without_a_prefix(void **state)
{
	(void)state;
	static struct outputs o;
	const struct mbox_task t[] = { /* the RUN answer: the main thread alone */
		{ .id = 7, .cpu = 1, .thread = 0, .output_ring = 3 },
		{ .id = 8, .cpu = 2, .thread = 1, .output_ring = 3 },
		{ .id = 9, .cpu = 3, .thread = 2, .output_ring = 3 },
	};

	memset(&o, 0, sizeof(o));
	ring_write(3, 7, "main\n");
	char *out = drained(&o, status_of(t, 1));
	assert_string_equal(out, "main\n");
	free(out);
	ring_write(3, 7, "main\nthread 1\nthread 2\nend");
	out = drained(&o, status_of(t, 3)); /* the threads as STATUS lists them */
	assert_string_equal(out, "thread 1\nthread 2\nend");
	free(out);
	assert_int_equal(o.n, 1);
}

static void test_instances_each_have_a_ring_and_a_prefix(void **state)
{
	(void)state;
	static struct outputs o;
	const struct mbox_task t[] = {
		{ .id = 1, .cpu = 1, .rank = 0, .output_ring = 0 },
		{ .id = 2, .cpu = 2, .rank = 1, .output_ring = 1 },
	};

	memset(&o, 0, sizeof(o));
	ring_write(0, 1, "a\n");
	ring_write(1, 2, "b\n");
	char *out = drained(&o, status_of(t, 2));
	assert_string_equal(out, "[rank 0] a\n[rank 1] b\n");
	free(out);
	assert_int_equal(o.n, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_threaded_launch_is_named_by_thread),
		cmocka_unit_test(test_an_instance_per_cpu_is_named_by_cpu),
		cmocka_unit_test(test_a_hostile_answer_names_each_cpu_once),
		cmocka_unit_test(test_a_process_exits_with_its_main_threads_status),
		cmocka_unit_test_setup_teardown(test_threads_share_one_ring_read_once_without_a_prefix, setup_rings,
						teardown_rings),
		cmocka_unit_test_setup_teardown(test_instances_each_have_a_ring_and_a_prefix, setup_rings, teardown_rings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
