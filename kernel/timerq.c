/* Sorted software-timer queue; see kernel/timer.h. Pure, unit-tested on the host. */
#include <stddef.h>
#include "kernel/timer.h"

void timerq_insert(struct timer_queue *q, struct timer *t)
{
	struct timer **pp = &q->head;

	/* Equal deadlines keep insertion order: "<=" walks past them. */
	while (*pp && (*pp)->deadline <= t->deadline)
		pp = &(*pp)->next;
	t->next = *pp;
	*pp = t;
	t->armed = true;
}

bool timerq_remove(struct timer_queue *q, struct timer *t)
{
	for (struct timer **pp = &q->head; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			t->next = NULL;
			t->armed = false;
			return true;
		}
	}
	return false;
}

struct timer *timerq_pop_expired(struct timer_queue *q, uint64_t now)
{
	struct timer *t = q->head;

	if (!t || t->deadline > now)
		return NULL;
	q->head = t->next;
	t->next = NULL;
	t->armed = false;
	return t;
}
