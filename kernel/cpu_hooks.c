/* The hooks before a driver installs its own: nothing; and the CPU-leaving list. See kernel/cpu_hooks.h. */
#include "kernel/cpu_hooks.h"
#include "lib/lib.h"

static void nothing(void) {}
static void nothing_bool(bool b) {}
static void nothing_cpu(uint32_t cpu) {}
static void nothing_exit(uint64_t first_kernel, uint64_t first_user) {}
static void nothing_assigned(uint32_t cpu, uint32_t launch) {}
static void no_counts(struct pmuos_counts *c) { c->nev = 0; }
static void no_events(struct pmuos_events *e) { e->nev = 0; }

struct cpu_hooks cpu_hooks = {
	.prepare = nothing_cpu,
	.online = nothing_bool,
	.rejoined = nothing,
	.init_sent = nothing_cpu,
	.task_assigned = nothing_assigned,
	.task_start = nothing,
	.task_end = nothing_cpu,
	.user_enter = nothing,
	.user_exit = nothing_exit,
	.idle_enter = nothing,
	.idle_exit = nothing,
	.counts = no_counts,
	.events = no_events,
};

void cpu_hooks_set(const struct cpu_hooks *h)
{
	cpu_hooks = *h;
}

static void (*leaving_fns[4])(uint32_t cpu);

void cpu_on_leaving(void (*fn)(uint32_t cpu))
{
	for (size_t i = 0; i < ARRAY_SIZE(leaving_fns); i++)
		if (!leaving_fns[i]) {
			leaving_fns[i] = fn;
			return;
		}
}

void cpu_leaving_notify(uint32_t cpu)
{
	for (size_t i = 0; i < ARRAY_SIZE(leaving_fns) && leaving_fns[i]; i++)
		leaving_fns[i](cpu);
}
