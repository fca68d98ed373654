/*
 * IDT, the C side of every vector (trap_dispatch), and the kernel fault
 * report: a fault prints vector, error code, RIP, CR2, CPU and registers and
 * stops only the CPU that faulted (docs/design.md §3).
 */
#include "kernel/trap.h"
#include "kernel/percpu.h"
#include "kernel/console.h"
#include "kernel/gdt.h"
#include "kernel/idle.h"
#include "kernel/cpu_hooks.h"
#include "kernel/task.h" /* struct task: the fast path reads kill_requested */
#include "lib/lib.h"
#include "arch/x86.h"
#include "apic/apic.h"

struct idt_gate {
	uint16_t off_lo, sel;
	uint8_t ist, type;
	uint16_t off_mid;
	uint32_t off_hi, zero;
} __attribute__((packed));

extern const uint64_t isr_stub_table[256];
extern const char user_iretq[];
extern char __kernel_start[], __kernel_end[];

static struct idt_gate idt[256];
static void unhandled_pmi(struct trap_frame *f);
/* VEC_PMI's never NULL: trap_pmi calls it without a test. */
static irq_handler irq_handlers[256] = { [VEC_PMI] = unhandled_pmi };
static exc_handler exc_handlers[32];
static bool no_fast_path(struct trap_frame *f, uint64_t first_kernel, uint64_t first_user)
{
	return false;
}
static exc_fast_handler exc_fast = no_fast_path;
static volatile uint64_t unhandled_irqs;

static const char *const exc_names[32] = {
	"#DE divide error", "#DB debug", "NMI", "#BP breakpoint", "#OF overflow",
	"#BR bound range", "#UD invalid opcode", "#NM device not available",
	"#DF double fault", "coprocessor segment overrun", "#TS invalid TSS",
	"#NP segment not present", "#SS stack fault", "#GP general protection",
	"#PF page fault", "reserved (15)", "#MF x87 error", "#AC alignment check",
	"#MC machine check", "#XM SIMD exception", "#VE virtualization exception",
	"#CP control protection", "reserved (22)", "reserved (23)", "reserved (24)",
	"reserved (25)", "reserved (26)", "reserved (27)", "#HV hypervisor injection",
	"#VC VMM communication", "#SX security exception", "reserved (31)",
};

static void idt_build(void)
{
	for (int v = 0; v < 256; v++) {
		uint64_t a = isr_stub_table[v];
		struct idt_gate *g = &idt[v];

		g->off_lo = a & 0xffff;
		g->off_mid = (a >> 16) & 0xffff;
		g->off_hi = a >> 32;
		g->sel = SEL_KCODE;
		g->type = 0x8e; /* present, DPL 0, 64-bit interrupt gate */
	}
	idt[EXC_NMI].ist = IST_NMI;
	idt[EXC_DF].ist = IST_DF;
	idt[EXC_MC].ist = IST_MC;
}

void idt_load(void)
{
	static volatile int built;

	if (!built) { /* the BSP builds it before any AP starts */
		idt_build();
		built = 1;
	}
	struct { uint16_t limit; uint64_t base; } __attribute__((packed)) idtr = {
		sizeof(idt) - 1, (uint64_t)idt,
	};
	__asm__ volatile("lidt %0" :: "m"(idtr));
}

void irq_register(uint8_t vector, irq_handler h)
{
	irq_handlers[vector] = h;
}

static void unhandled_pmi(struct trap_frame *f)
{
	unhandled_irqs++;
}

void irq_invoke(uint8_t vector, struct trap_frame *f)
{
	if (irq_handlers[vector])
		irq_handlers[vector](f);
	else
		unhandled_irqs++;
}

void exc_register(uint8_t vector, exc_handler h)
{
	if (vector < 32)
		exc_handlers[vector] = h;
}

void exc_fast_register(exc_fast_handler h)
{
	exc_fast = h;
}

static bool kernel_text(uint64_t a)
{
	return a >= (uint64_t)__kernel_start && a < (uint64_t)__kernel_end;
}

/* Frame-pointer walk: bounded, upward-only, stops at the first non-kernel return address. */
static void backtrace(uint64_t rbp)
{
	kprintf("    backtrace:");
	for (int i = 0; i < 12 && rbp && !(rbp & 7) && rbp < (4ULL << 30); i++) {
		uint64_t ret = ((uint64_t *)rbp)[1];
		if (!kernel_text(ret))
			break;
		kprintf(" %#lx", ret);
		uint64_t next = ((uint64_t *)rbp)[0];
		if (next <= rbp)
			break;
		rbp = next;
	}
	kprintf("\n");
}

/* Until the tasks register theirs: no task can be in Ring 3, and a CPU stopped has none to end. */
static void no_task_stopped(void) {}
static struct trap_user user_ops = { .cpu_stopped = no_task_stopped };

void trap_set_user(const struct trap_user *u)
{
	user_ops = *u;
}

/* The calling CPU's end, once its report is out: no more interrupts, its tasks ended. */
static void __attribute__((noreturn)) stop_here(const char *why)
{
	struct percpu *p = this_cpu();

	kprintf("*** CPU %u stopped; the other CPUs go on.\n", p->cpu);
	p->stop_why = why;
	p->state = CPU_FAULTED;
	cpu_leaving_notify(p->cpu);
	user_ops.cpu_stopped();
	for (;;) {
		cli();
		hlt();
	}
}

static void __attribute__((noreturn, noinline, cold)) fault_report(struct trap_frame *f)
{
	struct percpu *p = this_cpu();
	uint64_t cr2 = read_cr2();

	kprintf("\n*** KERNEL EXCEPTION on CPU %u (APIC %u): %s, vector %lu, error code %#lx\n",
		p->cpu, p->apic_id, exc_names[f->vector], f->vector, f->error);
	kprintf("    RIP %016lx  CS %04lx  RFLAGS %08lx  CR2 %016lx\n", f->rip, f->cs, f->rflags, cr2);
	kprintf("    RAX %016lx  RBX %016lx  RCX %016lx  RDX %016lx\n", f->rax, f->rbx, f->rcx, f->rdx);
	kprintf("    RSI %016lx  RDI %016lx  RBP %016lx  RSP %016lx\n", f->rsi, f->rdi, f->rbp, f->rsp);
	kprintf("    R8  %016lx  R9  %016lx  R10 %016lx  R11 %016lx\n", f->r8, f->r9, f->r10, f->r11);
	kprintf("    R12 %016lx  R13 %016lx  R14 %016lx  R15 %016lx\n", f->r12, f->r13, f->r14, f->r15);
	backtrace(f->rbp);
	stop_here(exc_names[f->vector]);
}

void kernel_stop(const char *why)
{
	struct percpu *p = this_cpu();

	cli();
	kprintf("\n*** KERNEL STOP on CPU %u (APIC %u): %s\n", p->cpu, p->apic_id, why);
	backtrace((uint64_t)__builtin_frame_address(0));
	stop_here(why);
}

/*
 * Ticks before the entry stamp that belong to the kernel: the stub's
 * instructions (kernel/isr.S: 9, or 8 where the CPU pushed an error code:
 * its HAS_ERROR vectors),
 * and for #UD and #GP the trapping instruction itself, which QEMU's icount
 * (and the plugin's clock) charges before raising the exception: an RDPMC
 * or SPFLT that the kernel emulates is kernel time (docs/design.md §5.6).
 */
static uint64_t entry_insns(uint64_t v)
{
	static const uint8_t insns[32] = {
		9, 9, 9, 9, 9, 9, 10 /* #UD */, 9, 8, 9, 8, 8, 8, 9 /* #GP */, 8, 9,
		9, 8, 9, 9, 9, 8, 9, 9, 9, 9, 9, 9, 9, 8, 8, 9,
	};
	return v < 32 ? insns[v] : 9;
}

/*
 * The IRETQ back to Ring 3 faulted (kernel/isr.S has put the kernel's GS
 * back): the task's return state is bad. It ends with a report that shows
 * the user frame IRETQ was given (on the stack right above this fault's);
 * nothing of it ran in Ring 3.
 */
static void __attribute__((noreturn, noinline, cold)) user_return_faulted(struct trap_frame *f)
{
	const uint64_t *iret = (const uint64_t *)f->rsp; /* RIP, CS, RFLAGS, RSP, SS */
	struct trap_frame uf = *f;
	struct percpu *p = this_cpu();

	cpu_hooks.user_exit(p->exit_tsc, p->exit_tsc);
	uf.rip = iret[0];
	uf.cs = iret[1];
	uf.rflags = iret[2];
	uf.rsp = iret[3];
	uf.ss = iret[4];
	user_ops.fault(&uf);
}

/*
 * kernel/isr.S, for #UD and #GP from Ring 3 (see exc_fast_register):
 * true if the fast path completed the entry and the task may resume.
 */
bool trap_fast(struct trap_frame *f)
{
	struct percpu *p = this_cpu();

	return !p->user_work && !p->task->kill_requested &&
	       exc_fast(f, p->entry_tsc - entry_insns(f->vector), p->exit_tsc);
}

/* An entry from Ring 3: the hooks learn where Ring 3 ran (entry_insns). */
static inline void user_entered(uint64_t v)
{
	struct percpu *p = this_cpu();

	cpu_hooks.user_exit(p->entry_tsc - entry_insns(v), p->exit_tsc);
}

void trap_dispatch(struct trap_frame *f)
{
	uint64_t v = f->vector;
	bool user = f->cs & 3;

	if (!user && f->rip == (uint64_t)user_iretq && this_cpu()->task)
		user_return_faulted(f);

	if (user)
		user_entered(v);
	if (v < 32) {
		if (exc_handlers[v] && exc_handlers[v](f)) {
			if (user)
				user_ops.return_to_user(f);
			return;
		}
		if (user && this_cpu()->task)
			user_ops.fault(f);
		fault_report(f);
	}
	idle_woken();
	irq_invoke(v, f);
	if (v != VEC_SPURIOUS)
		apic_eoi();
	if (user)
		user_ops.return_to_user(f);
}

/*
 * kernel/isr.S, for VEC_PMI: trap_dispatch's path for an interrupt without
 * its look-ups and fault paths, a sample's cost (docs/design.md §5.4). No
 * user_iretq check: that IRETQ runs with interrupts off.
 */
void trap_pmi(struct trap_frame *f)
{
	bool user = f->cs & 3;

	if (user)
		user_entered(VEC_PMI);
	idle_woken();
	irq_handlers[VEC_PMI](f);
	apic_eoi();
	if (user)
		user_ops.return_to_user(f);
}
