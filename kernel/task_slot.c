/* Which task slot a launch may take; see kernel/task.h. Pure: host-tested. */
#include "kernel/task.h"

struct task *task_slot_pick(struct task *tab, size_t n)
{
	struct task *best = NULL;

	for (size_t i = 0; i < n; i++) {
		struct task *t = &tab[i];
		if (t->state == TASK_FREE)
			return t;
		if (t->state >= TASK_EXITED && !t->held && (!best || t->id < best->id))
			best = t;
	}
	return best;
}
