/* Serial shell loop and command dispatch (the line's parsing is shell/parse.c); see shell/shell.h. */
#include <stdarg.h>
#include "shell/shell.h"
#include "shell/line.h"
#include "kernel/boot.h"
#include "kernel/console.h"
#include "kernel/idle.h"
#include "kernel/smp.h"
#include "arch/sync.h"
#include "kernel/task.h"
#include "lib/lib.h"
#include "kernel/percpu.h"
#include "arch/x86.h"

extern const struct shell_cmd __shell_cmds_start[], __shell_cmds_end[];

static struct line_editor editor;

int shell_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	kprintf("error: %s: ", cmd);
	va_start(ap, fmt);
	vkprintf(fmt, ap);
	va_end(ap);
	kprintf("\n");
	return 1;
}

bool shell_parse_cpu(const char *cmd, const char *s, uint32_t *cpu)
{
	uint64_t v;

	if (!parse_u64(s, UINT32_MAX, &v)) {
		shell_error(cmd, "'%.32s' is not a CPU number", s);
		return false;
	}
	if (v >= cpu_count) {
		shell_error(cmd, "no CPU %lu (CPUs are 0-%u)", v, cpu_count - 1);
		return false;
	}
	*cpu = v;
	return true;
}

int shell_exec(char *line)
{
	char *argv[SHELL_MAX_ARGS + 1];
	const struct shell_cmd *c;
	int argc;
	enum shell_parse_result r = shell_parse(line, __shell_cmds_start, __shell_cmds_end, argv, &argc, &c);

	switch (r) {
	case SHELL_RUN:
		return c->fn(argc, argv);
	case SHELL_EMPTY:
		return 0;
	case SHELL_TOO_MANY_WORDS:
		return shell_error(argv[0], "too many arguments (at most %d)", SHELL_MAX_ARGS);
	case SHELL_UNKNOWN:
		kprintf("error: unknown command '%.40s' (type 'help' for the list)\n", argv[0]);
		return -1;
	case SHELL_TOO_FEW_ARGS:
	case SHELL_TOO_MANY_ARGS:
		break;
	}
	return shell_error(c->name, "expected %s%s%s", c->usage[0] ? "arguments: " : "no arguments", c->usage,
			   r == SHELL_TOO_MANY_ARGS ? " (too many given)" : "");
}

static void echo_out(const char *s, size_t n, void *ctx)
{
	console_write(s, n);
}

/*
 * A line from the host (shell_submit), run by the shell loop like a typed
 * one: outside the mailbox service, so it may wait as long as it likes.
 */
static struct {
	char line[MBOX_SHELL_LINE_CAP];
	void (*done)(uint32_t tag);
	uint32_t tag;
	volatile bool queued;   /* from shell_submit until it has finished or was cancelled */
	volatile bool running;
	volatile bool intr;     /* Ctrl-C from the host for the running line */
} host;
static struct spinlock host_lock;

/*
 * While a task runs the mailbox is served on that task's CPU: CPU 0, which
 * runs the shell, may be halted (waiting for input, or in `run` for the
 * launch to end) and is woken to see what the host asked.
 */
static void wake_shell_cpu(void)
{
	if (this_cpu()->cpu != 0)
		smp_wake_apic(cpu_table[0]->apic_id);
}

bool shell_submit(const char *line, void (*done)(uint32_t tag), uint32_t tag)
{
	uint64_t f = spin_lock_irq(&host_lock);
	bool ok = !host.queued;

	if (ok) {
		strlcpy(host.line, line, sizeof(host.line));
		host.done = done;
		host.tag = tag;
		host.intr = false;
		host.queued = true;
	}
	spin_unlock_irq(&host_lock, f);
	if (ok)
		wake_shell_cpu();
	return ok;
}

/* Ends the host's line (finished or cancelled) and tells the submitter. */
static void host_line_end(void)
{
	uint64_t f = spin_lock_irq(&host_lock);
	void (*done)(uint32_t) = host.done;
	uint32_t tag = host.tag;

	host.queued = host.running = host.intr = false;
	spin_unlock_irq(&host_lock, f);
	done(tag);
}

void shell_interrupt(void)
{
	uint64_t f = spin_lock_irq(&host_lock);
	bool cancel = host.queued && !host.running;

	if (host.running)
		host.intr = true;
	spin_unlock_irq(&host_lock, f);
	if (cancel)
		host_line_end();
	else
		wake_shell_cpu(); /* halted in `run` until the launch ends: woken, it sees the Ctrl-C */
}

bool shell_interrupted(void)
{
	if (READ_ONCE(host.intr)) {
		host.intr = false;
		return true;
	}
	return console_take_ctrl_c();
}

static void run_host_line(void)
{
	char line[MBOX_SHELL_LINE_CAP];

	host.running = true;
	strlcpy(line, host.line, sizeof(line));
	kprintf("(host) %s\n", line);
	shell_exec(line);
	host_line_end();
}

static bool input_ready(void *unused)
{
	return console_has_input() || host.queued;
}

#define HOST_LINE (-1)

/* Next input byte, or HOST_LINE; halts between interrupts (serving the mailbox) while there is none. */
static int next_input(void)
{
	for (;;) {
		int c = console_getc();
		if (c >= 0)
			return c;
		if (host.queued)
			return HOST_LINE;
		idle_until(input_ready, NULL);
	}
}

void shell_run(void)
{
	line_init(&editor, echo_out, NULL);
	kprintf("Type 'help' for commands.\n");
	for (;;) {
		kprintf(SHELL_PROMPT);
		if (!prompt_tsc)
			prompt_tsc = rdtsc();
		enum line_result r = LINE_MORE;
		while (r == LINE_MORE) {
			int c = next_input();
			if (c != HOST_LINE) {
				r = line_feed(&editor, c);
				continue;
			}
			/* A host line on a line of its own, then the prompt and what was being typed, as readline redraws */
			if (editor.len)
				kprintf("\n");
			run_host_line();
			kprintf(SHELL_PROMPT "%.*s", (int)editor.len, editor.buf);
		}
		if (r != LINE_DONE)
			continue;
		if (editor.overflow)
			kprintf("error: line too long (%lu characters; at most %d), ignored\n",
				editor.len + editor.overflow, MBOX_SHELL_LINE_CAP - 1);
		else
			shell_exec(editor.buf);
	}
}

static int cmd_help(int argc, char **argv)
{
	const struct shell_cmd *only = NULL;

	if (argc == 2 && !(only = shell_find(__shell_cmds_start, __shell_cmds_end, argv[1])))
		return shell_error("help", "unknown command '%.40s'", argv[1]);
	/* Alphabetical, whatever the link order. */
	const char *last = "";
	for (;;) {
		const struct shell_cmd *next = NULL;
		for (const struct shell_cmd *c = __shell_cmds_start; c < __shell_cmds_end; c++)
			if (strcmp(c->name, last) > 0 && (!next || strcmp(c->name, next->name) < 0))
				next = c;
		if (!next)
			return 0;
		last = next->name;
		if (!only || only == next)
			kprintf("  %-8s %-24s %s\n", next->name, next->usage, next->help);
	}
}
SHELL_COMMAND(help, "help", "[COMMAND]", "list commands, or show one", 0, 1, cmd_help);
