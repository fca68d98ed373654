/*
 * RDPMC, SPFLT and VPREFETCH for CPUs that lack them (QEMU raises #UD, or
 * #GP for RDPMC without CR4.PCE): the #UD/#GP handler recognises exactly
 * these encodings (327357-001 §1.4.2, docs/design.md §5.6), performs them on
 * the software model and skips the instruction. The handler runs at CPL 0,
 * so emulation time is OS time and never shows in USR counts. Anything else
 * is left to the fault path.
 *   RDPMC          0F 33                ECX = 0 or 1 -> EDX:EAX (40 bits)
 *   SPFLT r32      C5 FB AE /6 (mod 11)  USER_PREF = bit 0 of the register
 *   SPFLT r32/r64  C4 E1|C1 7B|FB AE /6  (VEX.B clear selects r8-r15)
 *   VPREFETCHh m8  C5 F8 18 /r, C4 [RXB]1 78 18 /r (Intel 327364-001: /1
 *                  VPREFETCH0, /2 VPREFETCH1, the others hints of their
 *                  own): a hint, so a no-op; with the QEMU plugin, /1 and
 *                  /2 of a mapped byte load it through pmu_vprefetch_load,
 *                  whose load the plugin takes for the prefetch
 *                  (pmushare.prefetch_load) and counts as the task's
 * A task's RDPMC or SPFLT takes the fast path from the vector stub
 * (exc_fast_register): fetch in place, decode, emulate, skip, with the
 * Ring-3 exit and re-entry accounted in the same pass; what it cannot take
 * (bytes across a page, RDPMC with another ECX, anything else) goes the
 * general way.
 */
#include "pmu/internal.h"
#include "kernel/trap.h"
#include "kernel/percpu.h"
#include "kernel/task.h"
#include "kernel/pmm.h"
#include "kernel/vm.h"
#include "arch/x86.h"
#include <stddef.h>

#define MAX_INSN 5
#define MAX_PREFETCH 10 /* C4 xx xx 18 ModRM SIB disp32 */

/*
 * The loads the plugin takes for a VPREFETCH0 ([0]) and a VPREFETCH1 ([1]):
 * each reads the byte at RDI (the kernel's alias of the task's byte). One
 * instruction each, at an address the plugin is told.
 */
__asm__(".pushsection .text\n"
	".global pmu_vprefetch0_load, pmu_vprefetch1_load\n"
	"pmu_vprefetch0_load: movzbl (%rdi), %eax\n ret\n"
	"pmu_vprefetch1_load: movzbl (%rdi), %eax\n ret\n"
	".popsection");
uint8_t pmu_vprefetch0_load(const uint8_t *p);
uint8_t pmu_vprefetch1_load(const uint8_t *p);

/*
 * Whether the CPU the model stands in for is a KNC core, whose ISA has
 * SPFLT and VPREFETCHh (Intel 327364-001); the other PMU it presents,
 * Knights Landing's, has neither (a task's SPFLT or VPREFETCH is #UD there).
 * KNC's is the PMU with a PERF_SPFLT_CONTROL. Set at pmu_emul_init.
 */
static bool knc_isa;

/* A decoded RDPMC or SPFLT. */
struct insn {
	bool rdpmc;
	uint8_t len;
	uint64_t spflt; /* SPFLT's operand */
};

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

/* General register r (ModRM/VEX numbering) of the interrupted context. */
static uint64_t gpr(const struct trap_frame *f, unsigned r)
{
	static const uint8_t at[16] = {
		offsetof(struct trap_frame, rax), offsetof(struct trap_frame, rcx),
		offsetof(struct trap_frame, rdx), offsetof(struct trap_frame, rbx),
		offsetof(struct trap_frame, rsp), offsetof(struct trap_frame, rbp),
		offsetof(struct trap_frame, rsi), offsetof(struct trap_frame, rdi),
		offsetof(struct trap_frame, r8), offsetof(struct trap_frame, r9),
		offsetof(struct trap_frame, r10), offsetof(struct trap_frame, r11),
		offsetof(struct trap_frame, r12), offsetof(struct trap_frame, r13),
		offsetof(struct trap_frame, r14), offsetof(struct trap_frame, r15),
	};
	return *(const uint64_t *)((const uint8_t *)f + at[r & 15]);
}

/* ModRM of SPFLT: mod = 11, reg = 110; returns rm (0-7) or -1. */
static int spflt_rm(uint8_t modrm)
{
	return (modrm & 0xf8) == 0xf0 ? modrm & 7 : -1;
}

/*
 * The n bytes b (of the instruction at f) as an RDPMC or SPFLT the model
 * can perform: false for anything else, and for an RDPMC whose ECX selects
 * no counter (#GP, as on KNC).
 */
static inline __attribute__((always_inline)) bool decode(struct trap_frame *f, const uint8_t *b, int n, struct insn *in,
							  bool knc)
{
	int rm;

	if (n >= 2 && b[0] == 0x0f && b[1] == 0x33) {
		uint32_t ecx = (uint32_t)f->rcx;
		*in = (struct insn){ .rdpmc = true, .len = 2 };
		/* the model's counters (pmu/desc.h); a fixed one's where the PMU has them (KNC's has none) */
		return ecx < PMU_MAX_COUNTERS || (!knc && (ecx & RDPMC_FIXED) && (ecx & ~RDPMC_FIXED) < model_desc->fixed);
	}
	if (n >= 4 && b[0] == 0xc5 && b[1] == 0xfb && b[2] == 0xae && (rm = spflt_rm(b[3])) >= 0) {
		*in = (struct insn){ .len = 4, .spflt = gpr(f, rm) };
		return knc;
	}
	if (n >= 5 && b[0] == 0xc4 && (b[1] == 0xe1 || b[1] == 0xc1) && (b[2] & 0x7f) == 0x7b &&
	    b[3] == 0xae && (rm = spflt_rm(b[4])) >= 0) {
		*in = (struct insn){ .len = 5, .spflt = gpr(f, rm + (b[1] == 0xc1 ? 8 : 0)) };
		return knc;
	}
	return false;
}

/*
 * The n bytes b of a task's instruction at f as a VPREFETCHh with a memory
 * operand: its length, hint (the ModRM reg field) and address. 64-bit
 * addressing: base and index from ModRM/SIB with VEX's inverted B and X, a
 * disp8 or disp32, RIP-relative for mod 00 rm 101.
 */
static bool decode_prefetch(const struct trap_frame *f, const uint8_t *b, int n, int *len, int *hint, uint64_t *ea)
{
	int i, rex_b = 0, rex_x = 0;

	if (n >= 4 && b[0] == 0xc5 && (b[1] & 0x7f) == 0x78 && b[2] == 0x18) {
		i = 3;
	} else if (n >= 5 && b[0] == 0xc4 && (b[1] & 0x1f) == 1 && (b[2] & 0x7f) == 0x78 && b[3] == 0x18) {
		rex_b = b[1] & 0x20 ? 0 : 8;
		rex_x = b[1] & 0x40 ? 0 : 8;
		i = 4;
	} else {
		return false;
	}
	uint8_t modrm = b[i++], mod = modrm >> 6, rm = modrm & 7;
	if (mod == 3)
		return false;
	uint64_t a = 0;
	if (rm == 4) { /* SIB */
		if (i >= n)
			return false;
		uint8_t sib = b[i++], base = sib & 7, index = (sib >> 3 & 7) | rex_x;
		if (index != 4)
			a += gpr(f, index) << (sib >> 6);
		if (base == 5 && mod == 0)
			rm = 8; /* disp32, no base */
		else
			a += gpr(f, base | rex_b);
	} else if (!(rm == 5 && mod == 0)) {
		a += gpr(f, rm | rex_b);
	}
	int disp = mod == 1 ? 1 : mod == 2 || (mod == 0 && (rm == 5 || rm == 8)) ? 4 : 0;
	if (i + disp > n)
		return false;
	int32_t d = disp == 1 ? (int8_t)b[i] : disp == 4 ? (int32_t)(b[i] | b[i + 1] << 8 | b[i + 2] << 16 | (uint32_t)b[i + 3] << 24) : 0;
	*len = i + disp;
	*hint = modrm >> 3 & 7;
	*ea = a + (int64_t)d + (rm == 5 && mod == 0 ? f->rip + *len : 0);
	return true;
}

/* A task's VPREFETCH0/1 of a byte its address space maps: the load the plugin takes (see above). */
static void prefetch(uint64_t ea, int hint)
{
	struct task *t = this_cpu()->task;
	const uint8_t *p = t && (hint == 1 || hint == 2) ? vm_translate(t->as, ea) : NULL;

	if (!p)
		return; /* another hint, or a byte not mapped: a prefetch never faults */
	if (hint == 1)
		pmu_vprefetch0_load(p);
	else
		pmu_vprefetch1_load(p);
}

/* The general path (exc_register): after user_exit, from either privilege level. */
static int emulate(struct trap_frame *f)
{
	struct pmu_cpu *pc = pmu_this();
	uint8_t b[MAX_PREFETCH];
	struct insn in;
	uint64_t v, ea;
	/* a task's bytes through its page tables; the kernel's as before, no further than an RDPMC or SPFLT */
	int n = pc ? fetch(f, b, (f->cs & 3) ? MAX_PREFETCH : MAX_INSN) : 0, len, hint;

	if (n && (f->cs & 3) && knc_isa && decode_prefetch(f, b, n, &len, &hint, &ea)) {
		prefetch(ea, hint);
		f->rip += len;
		return 1;
	}
	if (!pc || !decode(f, b, n, &in, knc_isa))
		return 0;
	if (in.rdpmc) {
		model_share_take(pc);
		model_rdpmc(&pc->model, model_clock(), (uint32_t)f->rcx, &v);
		f->rax = (uint32_t)v;
		f->rdx = v >> 32;
	} else {
		bool was = pmu_spflt_open(pc->model.spflt);
		model_spflt(&pc->model, model_clock(), in.spflt);
		model_share_publish(pc);
		pmu_region_note(was, pmu_spflt_open(pc->model.spflt));
	}
	f->rip += in.len;
	return 1;
}

/*
 * The fast path (exc_fast_register), from Ring 3 only, in one function
 * (bench/tasks.py counts it). The bytes are read in place: the task's page
 * tables are the live ones and the instruction's page was just fetched
 * from, so only bytes in that page are safe to read.
 */
/* What model_user_insn does not take, or with the plugin counting: step by step. */
static bool __attribute__((noinline)) emulate_steps(struct pmu_cpu *pc, struct trap_frame *f, uint64_t first_kernel,
						      uint64_t first_user, const struct insn *in)
{
	uint64_t v = 0;
	bool was = pmu_spflt_open(pc->model.spflt);

	model_emulate_steps(pc, f, first_kernel, first_user, in->rdpmc ? (int)(uint32_t)f->rcx : -1, in->spflt, &v);
	if (in->rdpmc) {
		f->rax = (uint32_t)v;
		f->rdx = v >> 32;
	}
	f->rip += in->len;
	pmu_region_note(was, pmu_spflt_open(pc->model.spflt));
	return true;
}

/* The rest of to_user, when it has something to do (model_sync_needed). */
static bool __attribute__((noinline)) sync_then_return(struct pmu_cpu *pc)
{
	model_sync_lazy(pc);
	return true;
}

/* `knc` a constant in each of the two fast paths below, so KNC's tests no flag per SPFLT. */
static inline __attribute__((always_inline)) bool emulate_fast(struct trap_frame *f, uint64_t first_kernel,
								uint64_t first_user, bool knc)
{
	struct pmu_cpu *pc = this_cpu()->pmu;
	struct insn in;
	uint64_t v = 0;

	if (!pc || (f->rip & (PAGE_SIZE - 1)) > PAGE_SIZE - MAX_INSN ||
	    !decode(f, (const uint8_t *)f->rip, MAX_INSN, &in, knc))
		return false;
	/* the plugin's counts to take and its page to tell; a fixed counter's RDPMC */
	if (pc->plugin_sel || (!knc && in.rdpmc && (uint32_t)f->rcx >= PMU_MAX_COUNTERS))
		return emulate_steps(pc, f, first_kernel, first_user, &in);
	bool was = pmu_spflt_open(pc->model.spflt);
	if (!model_user_insn(&pc->model, first_user, first_kernel, model_clock(), in.rdpmc ? (int)(f->rcx & 1) : -1,
			     in.spflt, &v))
		return emulate_steps(pc, f, first_kernel, first_user, &in);
	model_slack_update(pc, first_kernel, first_user);
	if (in.rdpmc) {
		f->rax = (uint32_t)v;
		f->rdx = v >> 32;
	} else {
		pmu_region_note(was, pmu_spflt_open(pc->model.spflt));
	}
	f->rip += in.len;
	pc->user_entry = true; /* to_user's, after model_user_insn's return to CPL 3 */
	if (model_sync_needed(pc))
		return sync_then_return(pc);
	return true;
}

static bool emulate_fast_knc(struct trap_frame *f, uint64_t first_kernel, uint64_t first_user)
{
	return emulate_fast(f, first_kernel, first_user, true);
}

static bool emulate_fast_other(struct trap_frame *f, uint64_t first_kernel, uint64_t first_user)
{
	return emulate_fast(f, first_kernel, first_user, false);
}

void pmu_emul_init(void)
{
	if (pmu_ops != &pmu_model_ops)
		return; /* a CPU with a PMU executes RDPMC and SPFLT itself */
	knc_isa = model_desc->spflt_ctrl != 0;
	share_prefetch_loads((uintptr_t)pmu_vprefetch0_load, (uintptr_t)pmu_vprefetch1_load);
	exc_register(EXC_UD, emulate);
	exc_register(EXC_GP, emulate);
	exc_fast_register(knc_isa ? emulate_fast_knc : emulate_fast_other);
}
