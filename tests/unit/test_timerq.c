/* kernel/timerq.c on the host: the per-CPU sorted software-timer queue. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <unistd.h>
#include <cmocka.h>

#include "kernel/timer.h"

/* The queue, head to tail, is exactly want[0..n). */
static void order_is(const struct timer_queue *q, struct timer *const *want, size_t n)
{
	const struct timer *t = q->head;

	for (size_t i = 0; i < n; i++, t = t->next) {
		assert_non_null(t);
		assert_ptr_equal(t, want[i]);
		assert_true(t->armed);
	}
	assert_null(t);
}

#define ORDER(q, ...) do { \
	struct timer *want_[] = { __VA_ARGS__ }; \
	order_is(q, want_, sizeof(want_) / sizeof(want_[0])); \
} while (0)

/* Insert keeps the queue sorted by deadline, earliest first, and marks timers armed. */
static void test_insert_sorted(void **state)
{
	(void)state;
	struct timer_queue q = { NULL };
	struct timer a = { .deadline = 30 }, b = { .deadline = 10 }, c = { .deadline = 20 },
		     d = { .deadline = 5 }, e = { .deadline = 40 };

	timerq_insert(&q, &a);
	ORDER(&q, &a);
	timerq_insert(&q, &b); /* new head */
	timerq_insert(&q, &c); /* middle */
	ORDER(&q, &b, &c, &a);
	timerq_insert(&q, &d);
	timerq_insert(&q, &e); /* new tail */
	ORDER(&q, &d, &b, &c, &a, &e);
}

/* Equal deadlines keep insertion order (FIFO), also among other deadlines. */
static void test_equal_deadlines_fifo(void **state)
{
	(void)state;
	struct timer_queue q = { NULL };
	struct timer a = { .deadline = 5 }, b = { .deadline = 5 }, c = { .deadline = 5 },
		     d = { .deadline = 3 }, e = { .deadline = 5 }, f = { .deadline = 7 }, g = { .deadline = 5 };

	timerq_insert(&q, &a);
	timerq_insert(&q, &b);
	timerq_insert(&q, &c);
	timerq_insert(&q, &d);
	timerq_insert(&q, &f);
	timerq_insert(&q, &e);
	timerq_insert(&q, &g);
	ORDER(&q, &d, &a, &b, &c, &e, &g, &f);
}

/* Extreme deadlines sort as unsigned 64-bit values. */
static void test_extreme_deadlines(void **state)
{
	(void)state;
	struct timer_queue q = { NULL };
	struct timer big = { .deadline = UINT64_MAX }, zero = { .deadline = 0 },
		     high = { .deadline = 1ULL << 63 };

	timerq_insert(&q, &big);
	timerq_insert(&q, &high);
	timerq_insert(&q, &zero);
	ORDER(&q, &zero, &high, &big);
}

/* Remove unlinks head, middle or tail, clears armed and next; false if not queued. */
static void test_remove(void **state)
{
	(void)state;
	struct timer_queue q = { NULL };
	struct timer a = { .deadline = 1 }, b = { .deadline = 2 }, c = { .deadline = 3 },
		     d = { .deadline = 4 }, stray = { .deadline = 2 };

	assert_false(timerq_remove(&q, &a)); /* empty queue */
	timerq_insert(&q, &a);
	timerq_insert(&q, &b);
	timerq_insert(&q, &c);
	timerq_insert(&q, &d);

	assert_true(timerq_remove(&q, &b));
	assert_false(b.armed);
	assert_null(b.next);
	ORDER(&q, &a, &c, &d);
	assert_true(timerq_remove(&q, &a));
	ORDER(&q, &c, &d);
	assert_true(timerq_remove(&q, &d));
	ORDER(&q, &c);
	assert_false(timerq_remove(&q, &stray)); /* never queued */
	assert_false(timerq_remove(&q, &b));     /* already removed */
	ORDER(&q, &c);
	assert_true(timerq_remove(&q, &c));
	assert_null(q.head);
}

/* Removing one of several equal-deadline timers leaves the others in order. */
static void test_remove_among_equals(void **state)
{
	(void)state;
	struct timer_queue q = { NULL };
	struct timer a = { .deadline = 9 }, b = { .deadline = 9 }, c = { .deadline = 9 };

	timerq_insert(&q, &a);
	timerq_insert(&q, &b);
	timerq_insert(&q, &c);
	assert_true(timerq_remove(&q, &b));
	ORDER(&q, &a, &c);
	timerq_insert(&q, &b); /* re-inserted: now after c */
	ORDER(&q, &a, &c, &b);
}

/* pop_expired returns timers with deadline <= now, earliest first, one per call. */
static void test_pop_expired(void **state)
{
	(void)state;
	struct timer_queue q = { NULL };
	struct timer a = { .deadline = 10 }, b = { .deadline = 20 }, c = { .deadline = 30 };

	assert_null(timerq_pop_expired(&q, UINT64_MAX)); /* empty queue */
	timerq_insert(&q, &c);
	timerq_insert(&q, &a);
	timerq_insert(&q, &b);

	assert_null(timerq_pop_expired(&q, 9));
	ORDER(&q, &a, &b, &c);
	assert_ptr_equal(timerq_pop_expired(&q, 15), &a);
	assert_false(a.armed);
	assert_null(a.next);
	assert_null(timerq_pop_expired(&q, 15));
	assert_ptr_equal(timerq_pop_expired(&q, 20), &b); /* deadline == now has expired */
	ORDER(&q, &c);
	assert_ptr_equal(timerq_pop_expired(&q, UINT64_MAX), &c);
	assert_null(q.head);
	assert_null(timerq_pop_expired(&q, UINT64_MAX));
}

/* Expired timers with equal deadlines come out in insertion order. */
static void test_pop_equal_fifo(void **state)
{
	(void)state;
	struct timer_queue q = { NULL };
	struct timer t[5];

	for (int i = 0; i < 5; i++) {
		t[i] = (struct timer){ .deadline = 100 };
		timerq_insert(&q, &t[i]);
	}
	for (int i = 0; i < 5; i++)
		assert_ptr_equal(timerq_pop_expired(&q, 100), &t[i]);
	assert_null(timerq_pop_expired(&q, 100));
}

/* A popped timer can be re-armed (periodic timers): it goes back in sorted position. */
static void test_rearm_after_pop(void **state)
{
	(void)state;
	struct timer_queue q = { NULL };
	struct timer a = { .deadline = 10 }, b = { .deadline = 25 };

	timerq_insert(&q, &a);
	timerq_insert(&q, &b);
	struct timer *t = timerq_pop_expired(&q, 10);
	assert_ptr_equal(t, &a);
	t->deadline = 20;
	timerq_insert(&q, t);
	ORDER(&q, &a, &b);
	t = timerq_pop_expired(&q, 20);
	t->deadline = 25; /* equal to b: after it */
	timerq_insert(&q, t);
	ORDER(&q, &b, &a);
}

/* Many timers inserted out of order come out sorted (and FIFO among equals). */
static void test_many_sorted(void **state)
{
	(void)state;
	struct timer_queue q = { NULL };
	struct timer t[64];

	for (int i = 0; i < 64; i++) {
		t[i] = (struct timer){ .deadline = (uint64_t)((i * 37) % 16) };
		timerq_insert(&q, &t[i]);
	}
	uint64_t last = 0;
	int last_index = -1, n = 0;
	for (struct timer *p; (p = timerq_pop_expired(&q, UINT64_MAX)); n++) {
		int index = (int)(p - t);
		assert_true(p->deadline >= last);
		if (p->deadline == last)
			assert_true(index > last_index);
		last = p->deadline;
		last_index = index;
	}
	assert_int_equal(n, 64);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_insert_sorted),
		cmocka_unit_test(test_equal_deadlines_fifo),
		cmocka_unit_test(test_extreme_deadlines),
		cmocka_unit_test(test_remove),
		cmocka_unit_test(test_remove_among_equals),
		cmocka_unit_test(test_pop_expired),
		cmocka_unit_test(test_pop_equal_fifo),
		cmocka_unit_test(test_rearm_after_pop),
		cmocka_unit_test(test_many_sorted),
	};

	alarm(60); /* a hang is a failure too */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
