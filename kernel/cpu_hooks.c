/* The hooks before a driver installs its own: nothing; see kernel/cpu_hooks.h. */
#include "kernel/cpu_hooks.h"

static void nothing(void) {}
static void nothing_bool(bool b) {}
static void nothing_cpu(uint32_t cpu) {}
static void nothing_exit(uint64_t first_kernel, uint64_t first_user) {}

struct cpu_hooks cpu_hooks = {
	.prepare = nothing_cpu,
	.online = nothing_bool,
	.rejoined = nothing,
	.init_sent = nothing_cpu,
	.user_enter = nothing,
	.user_exit = nothing_exit,
	.idle_enter = nothing,
	.idle_exit = nothing,
};

void cpu_hooks_set(const struct cpu_hooks *h)
{
	cpu_hooks = *h;
}
