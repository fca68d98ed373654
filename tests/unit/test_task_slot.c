/*
 * Unit tests for kernel/task_slot.c: which slot a launch may take (issue 9,
 * defect 12: a slot whose CPU had not yet finished its task was handed out,
 * and that CPU then freed the new task's address space).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "kernel/task.h"

static struct task tab[4];

static void set(int i, uint32_t id, uint32_t state, bool held)
{
	tab[i] = (struct task){ .id = id, .state = state, .held = held };
}

static void test_free_slot_first(void **state)
{
	(void)state;
	set(0, 5, TASK_EXITED, false);
	set(1, 0, TASK_FREE, false);
	set(2, 3, TASK_EXITED, false);
	set(3, 9, TASK_RUNNING, true);
	assert_ptr_equal(task_slot_pick(tab, 4), &tab[1]);
}

static void test_oldest_ended_task_next(void **state)
{
	(void)state;
	set(0, 5, TASK_EXITED, false);
	set(1, 4, TASK_FAULTED, false);
	set(2, 7, TASK_KILLED, false);
	set(3, 9, TASK_RUNNING, true);
	assert_ptr_equal(task_slot_pick(tab, 4), &tab[1]);
}

static void test_ended_but_held_is_never_taken(void **state)
{
	(void)state;
	/* Slot 1 ended (the host may read its state) but its CPU still frees its pages. */
	set(0, 5, TASK_EXITED, false);
	set(1, 4, TASK_EXITED, true);
	set(2, 8, TASK_READY, true);
	set(3, 9, TASK_RUNNING, true);
	assert_ptr_equal(task_slot_pick(tab, 4), &tab[0]);
	set(0, 5, TASK_KILLED, true);
	assert_null(task_slot_pick(tab, 4));
}

static void test_waiting_and_running_are_never_taken(void **state)
{
	(void)state;
	set(0, 1, TASK_READY, true);
	set(1, 2, TASK_RUNNING, true);
	set(2, 3, TASK_READY, true);
	set(3, 4, TASK_RUNNING, true);
	assert_null(task_slot_pick(tab, 4));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_free_slot_first),
		cmocka_unit_test(test_oldest_ended_task_next),
		cmocka_unit_test(test_ended_but_held_is_never_taken),
		cmocka_unit_test(test_waiting_and_running_are_never_taken),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
