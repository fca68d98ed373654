/*
 * RDPMC and SPFLT for CPUs that lack them (QEMU raises #UD, or #GP for RDPMC
 * without CR4.PCE): the #UD/#GP handler recognises exactly these encodings
 * (000 §1.4.2, DESIGN §5.6), performs them on the software model and skips
 * the instruction. The handler runs at CPL 0, so emulation time is OS time
 * and never shows in USR counts. Anything else is left to the fault path.
 *   RDPMC          0F 33                ECX = 0 or 1 -> EDX:EAX (40 bits)
 *   SPFLT r32      C5 FB AE /6 (mod 11)  USER_PREF = bit 0 of the register
 *   SPFLT r32/r64  C4 E1|C1 7B|FB AE /6  (VEX.B clear selects r8-r15)
 */
#include "pmu/internal.h"
#include "pmu/regs.h"
#include "kernel/trap.h"
#include "kernel/percpu.h"
#include "kernel/task.h"
#include "kernel/pmm.h"
#include "kernel/vm.h"
#include "arch/x86.h"

#define MAX_INSN 5

/*
 * Copies up to n instruction bytes at f->rip; returns how many could be
 * read. A task's bytes are translated once per page, not once per byte
 * (each translation walks the page tables: bench/tasks.py).
 */
static int fetch(const struct trap_frame *f, uint8_t *buf, int n)
{
	struct task *t = this_cpu()->task;
	const uint8_t *b = NULL;

	for (int i = 0; i < n; i++) {
		uint64_t va = f->rip + i;
		if (!(f->cs & 3))
			b = (const uint8_t *)va;
		else if (!b || !(va & (PAGE_SIZE - 1)))
			b = t ? vm_translate(t->as, va) : NULL;
		else
			b++; /* the next byte of the same page */
		if (!b)
			return i;
		buf[i] = *b;
	}
	return n;
}

static uint64_t *gpr(struct trap_frame *f, unsigned r)
{
	uint64_t *const regs[16] = {
		&f->rax, &f->rcx, &f->rdx, &f->rbx, &f->rsp, &f->rbp, &f->rsi, &f->rdi,
		&f->r8, &f->r9, &f->r10, &f->r11, &f->r12, &f->r13, &f->r14, &f->r15,
	};
	return regs[r & 15];
}

/* ModRM of SPFLT: mod = 11, reg = 110; returns rm (0-7) or -1. */
static int spflt_rm(uint8_t modrm)
{
	return (modrm & 0xf8) == 0xf0 ? modrm & 7 : -1;
}

static int emulate(struct trap_frame *f)
{
	struct pmu_cpu *pc = pmu_this();
	uint8_t b[MAX_INSN];
	int n = fetch(f, b, MAX_INSN), rm;
	uint64_t v;

	if (!pc)
		return 0;
	if (n >= 2 && b[0] == 0x0f && b[1] == 0x33) {
		model_share_take(pc);
		if (model_rdpmc(&pc->model, rdtsc(), (uint32_t)f->rcx, &v) != 0)
			return 0; /* ECX other than 0 or 1: #GP, as on KNC */
		f->rax = (uint32_t)v;
		f->rdx = v >> 32;
		f->rip += 2;
		return 1;
	}
	if (n >= 4 && b[0] == 0xc5 && b[1] == 0xfb && b[2] == 0xae && (rm = spflt_rm(b[3])) >= 0) {
		model_spflt(&pc->model, rdtsc(), *gpr(f, rm));
		model_share_publish(pc);
		f->rip += 4;
		return 1;
	}
	if (n >= 5 && b[0] == 0xc4 && (b[1] == 0xe1 || b[1] == 0xc1) && (b[2] & 0x7f) == 0x7b &&
	    b[3] == 0xae && (rm = spflt_rm(b[4])) >= 0) {
		model_spflt(&pc->model, rdtsc(), *gpr(f, rm + (b[1] == 0xc1 ? 8 : 0)));
		model_share_publish(pc);
		f->rip += 5;
		return 1;
	}
	return 0;
}

void pmu_emul_init(void)
{
	exc_register(EXC_UD, emulate);
	exc_register(EXC_GP, emulate);
}
