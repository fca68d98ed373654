/* Task shell commands: run, tasks, kill (docs/design.md §6). */
#include "shell/shell.h"
#include "kernel/console.h"
#include "lib/cpuset.h"
#include "lib/lib.h"
#include "kernel/percpu.h"
#include "kernel/programs.h"
#include "arch/fpu.h"
#include "kernel/task.h"

static void list_program(const struct user_program *p, void *arg)
{
	kprintf(" %s", p->name);
}


/* A line per task of the launch; for a threaded launch one for its process, which its main thread's task holds. */
static void report(const struct task *t, void *arg)
{
	if (t->launch != *(const uint32_t *)arg || (t->main->threaded && t != t->main))
		return;
	if (t->threaded)
		kprintf("task %u (%s, %u threads, CPU %u first): ", t->id, t->name, t->nthreads, t->cpu);
	else
		kprintf("task %u (%s, rank %u, CPU %u): ", t->id, t->name, t->rank, t->cpu);
	if (t->state == TASK_EXITED)
		kprintf("exit status %d\n", t->exit_status);
	else if (t->state == TASK_FAULTED)
		kprintf("ended by exception vector %d\n", t->exit_status);
	else
		kprintf("%s\n", task_state_name(t->state));
}

static int cmd_run(int argc, char **argv)
{
	struct cpuset set;
	char err[96];
	const char *cpus = "1";
	bool threads = argc >= 3 && strcmp(argv[1], "--threads") == 0;

	if (threads) {
		argc--;
		argv++;
	}
	if (argc >= 4 && strcmp(argv[argc - 2], "on") == 0) {
		cpus = argv[argc - 1];
		argc -= 2;
	}
	const struct user_program *p = program_find(argv[1]);
	if (!p) {
		kprintf("error: run: no program '%.32s'; there are:", argv[1]);
		program_for_each(list_program, NULL);
		kprintf("\n");
		return 1;
	}
	if (p->qemu_sse && !fpu_has_sse())
		return shell_error("run", "%s is a QEMU-only program (SSE code, pmuos-cc --qemu-sse): this CPU has "
				   "no SSE and would end it with #UD", p->name);
	if (cpu_count < 2)
		return shell_error("run", "programs run on APs, and this card has only CPU 0");
	if (!cpuset_parse(cpus, cpu_count, &set, err, sizeof(err)))
		return shell_error("run", "%s", err);
	int id = task_launch(p->start, p->end - p->start, argc - 1, argv + 1, &set, threads, true, err, sizeof(err));
	if (id < 0)
		return shell_error("run", "%s", err);
	if (!task_wait_launch(id, shell_interrupted))
		kprintf("^C: launch %d killed\n", id);
	uint32_t launch = id;
	task_for_each(report, &launch);
	return 0;
}
SHELL_COMMAND(run, "run", "[--threads] PROGRAM [ARGS] [on CPUS]",
	      "run a built-in program, one instance per CPU (default CPU 1), or with --threads one process whose "
	      "threads may use the CPUs; Ctrl-C ends it",
	      1, SHELL_MAX_ARGS, cmd_run);

static void list(const struct task *t, void *arg)
{
	kprintf("%5u  %-12s %4u  %4u  %-8s", t->id, t->name, t->cpu, t->rank, task_state_name(t->state));
	if (t->state == TASK_EXITED)
		kprintf(" %d", t->exit_status);
	if (t->state == TASK_FAULTED)
		kprintf(" vector %d", t->exit_status);
	kprintf("\n");
}

static int cmd_tasks(int argc, char **argv)
{
	kprintf("   ID  PROGRAM       CPU  RANK  STATE\n");
	task_for_each(list, NULL);
	return 0;
}
SHELL_COMMAND(tasks, "tasks", "", "list running and recently ended tasks", 0, 0, cmd_tasks);

static int cmd_kill(int argc, char **argv)
{
	uint64_t id;

	if (!parse_u64(argv[1], UINT32_MAX, &id))
		return shell_error("kill", "'%.16s' is not a task ID", argv[1]);
	if (!task_kill(id))
		return shell_error("kill", "no running or waiting task %lu", id);
	return 0;
}
SHELL_COMMAND(kill, "kill", "ID", "end a task", 1, 1, cmd_kill);
