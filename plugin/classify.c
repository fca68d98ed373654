/*
 * An x86-64 instruction as the timing model sees it (plugin/classify.h),
 * decoded by Capstone (Debian's libcapstone-dev): its registers and
 * operands, the instruction's class by its mnemonic.
 */
#include <capstone/capstone.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/classify.h"

static csh cs;
static bool cs_ready;

bool classify_init(void)
{
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return false;
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	cs_ready = true;
	return true;
}

void classify_free(void)
{
	if (cs_ready)
		cs_close(&cs);
	cs_ready = false;
}

/* The GPR number (RAX 0 ... R15 15) of a Capstone register, TM_FLAGS' bit 16 for the flags, or -1. */
static int gpr(unsigned reg)
{
	static const unsigned short regs[16][5] = {
		{ X86_REG_RAX, X86_REG_EAX, X86_REG_AX, X86_REG_AL, X86_REG_AH },
		{ X86_REG_RCX, X86_REG_ECX, X86_REG_CX, X86_REG_CL, X86_REG_CH },
		{ X86_REG_RDX, X86_REG_EDX, X86_REG_DX, X86_REG_DL, X86_REG_DH },
		{ X86_REG_RBX, X86_REG_EBX, X86_REG_BX, X86_REG_BL, X86_REG_BH },
		{ X86_REG_RSP, X86_REG_ESP, X86_REG_SP, X86_REG_SPL },
		{ X86_REG_RBP, X86_REG_EBP, X86_REG_BP, X86_REG_BPL },
		{ X86_REG_RSI, X86_REG_ESI, X86_REG_SI, X86_REG_SIL },
		{ X86_REG_RDI, X86_REG_EDI, X86_REG_DI, X86_REG_DIL },
		{ X86_REG_R8, X86_REG_R8D, X86_REG_R8W, X86_REG_R8B },
		{ X86_REG_R9, X86_REG_R9D, X86_REG_R9W, X86_REG_R9B },
		{ X86_REG_R10, X86_REG_R10D, X86_REG_R10W, X86_REG_R10B },
		{ X86_REG_R11, X86_REG_R11D, X86_REG_R11W, X86_REG_R11B },
		{ X86_REG_R12, X86_REG_R12D, X86_REG_R12W, X86_REG_R12B },
		{ X86_REG_R13, X86_REG_R13D, X86_REG_R13W, X86_REG_R13B },
		{ X86_REG_R14, X86_REG_R14D, X86_REG_R14W, X86_REG_R14B },
		{ X86_REG_R15, X86_REG_R15D, X86_REG_R15W, X86_REG_R15B },
	};
	if (reg == X86_REG_EFLAGS)
		return 16;
	for (int i = 0; i < 16; i++)
		for (int j = 0; j < 5; j++)
			if (regs[i][j] && regs[i][j] == reg)
				return i;
	return -1;
}

static uint32_t reg_bits(const uint16_t *regs, uint8_t n)
{
	uint32_t bits = 0;

	for (int i = 0; i < n; i++) {
		int r = gpr(regs[i]);
		if (r >= 0)
			bits |= 1u << r;
	}
	return bits;
}

static bool is(unsigned id, const unsigned short *ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}
#define IS(id, ...) is(id, (const unsigned short[]){ __VA_ARGS__ }, sizeof((const unsigned short[]){ __VA_ARGS__ }) / sizeof(unsigned short))

/*
 * The Pentium's classes (Agner Fog, "The microarchitecture of Intel, AMD
 * and VIA CPUs", the Pentium's pairing rules), which the model takes for
 * KNC's scalar pipes: the simple instructions pair in either pipe; ADC,
 * SBB and shifts and rotates by a constant only in U; near direct JMP,
 * CALL and Jcc only in V; everything else, and any 0F-map instruction but
 * Jcc, in neither.
 */
static enum tm_pipe pipe_of(const cs_insn *ci, bool count_in_cl)
{
	unsigned id = ci->id;

	if (IS(id, X86_INS_MOV, X86_INS_MOVABS, X86_INS_ADD, X86_INS_SUB, X86_INS_AND, X86_INS_OR, X86_INS_XOR,
	       X86_INS_CMP, X86_INS_TEST, X86_INS_INC, X86_INS_DEC, X86_INS_LEA, X86_INS_PUSH, X86_INS_POP,
	       X86_INS_NOP, X86_INS_MOVSXD))
		return TM_UV;
	if (IS(id, X86_INS_ADC, X86_INS_SBB) ||
	    (IS(id, X86_INS_SHL, X86_INS_SAL, X86_INS_SHR, X86_INS_SAR, X86_INS_ROL, X86_INS_ROR) && !count_in_cl))
		return TM_PU;
	if (cs_insn_group(cs, ci, X86_GRP_JUMP) || IS(id, X86_INS_CALL))
		return cs_insn_group(cs, ci, X86_GRP_BRANCH_RELATIVE) ? TM_PV : TM_NP;
	return TM_NP;
}

/*
 * Multi-cycle and microcoded instructions: the Pentium's clocks for 32-bit
 * operands (Agner Fog, "Instruction tables", Pentium), which no source we
 * found gives for KNC; a read-modify-write of memory takes 3, as there.
 */
static void cost_of(const cs_insn *ci, bool rmw, struct tm_insn *t)
{
	unsigned id = ci->id;

	t->exec = 1;
	t->lat = 1;
	if (IS(id, X86_INS_MUL, X86_INS_IMUL)) {
		t->exec = 10;
		t->lat = 10;
	} else if (IS(id, X86_INS_DIV)) {
		t->exec = t->lat = 41;
		t->micro = true;
	} else if (IS(id, X86_INS_IDIV)) {
		t->exec = t->lat = 46;
		t->micro = true;
	} else if (IS(id, X86_INS_CPUID, X86_INS_RDMSR, X86_INS_WRMSR, X86_INS_IRETQ, X86_INS_IRET, X86_INS_SYSCALL,
		      X86_INS_SYSRET, X86_INS_INT, X86_INS_INT3, X86_INS_LGDT, X86_INS_LIDT, X86_INS_LTR,
		      X86_INS_INVLPG, X86_INS_CLI, X86_INS_STI, X86_INS_PUSHFQ, X86_INS_POPFQ, X86_INS_XCHG,
		      X86_INS_CMPXCHG, X86_INS_XADD, X86_INS_RDTSC, X86_INS_HLT, X86_INS_MOVSB, X86_INS_MOVSW,
		      X86_INS_MOVSD, X86_INS_MOVSQ, X86_INS_STOSB, X86_INS_STOSW, X86_INS_STOSD, X86_INS_STOSQ,
		      X86_INS_LODSB, X86_INS_LODSQ, X86_INS_CMPSB, X86_INS_SCASB)) {
		/* each such instruction (a REP string's each iteration, which QEMU runs as one) as 4 microcode cycles: assumed */
		t->exec = t->lat = 4;
		t->micro = true;
	} else if (IS(id, X86_INS_FDIV, X86_INS_FDIVP, X86_INS_FDIVR, X86_INS_FDIVRP, X86_INS_FIDIV)) {
		t->exec = t->lat = 39;
	} else if (IS(id, X86_INS_FSQRT)) {
		t->exec = t->lat = 70;
	} else if (ci->detail->groups_count && cs_insn_group(cs, ci, X86_GRP_FPU)) {
		t->lat = 3; /* the Pentium's FADD/FMUL: pipelined, 3 cycles to the result */
	} else if (rmw) {
		t->exec = 3;
	}
}

bool classify(const uint8_t *bytes, size_t len, uint64_t pc, bool vpu, struct tm_insn *out)
{
	cs_insn *ci = NULL;

	*out = (struct tm_insn){ .pipe = TM_NP, .lat = 1, .exec = 1 };
	if (!cs_ready || cs_disasm(cs, bytes, len, pc, 1, &ci) != 1) {
		if (ci)
			cs_free(ci, 1);
		return false; /* an encoding Capstone does not know: one cycle, pairing with nothing */
	}
	const cs_x86 *x = &ci->detail->x86;
	uint16_t rd[64], wr[64];
	uint8_t nrd = 0, nwr = 0;
	if (cs_regs_access(cs, ci, rd, &nrd, wr, &nwr) == CS_ERR_OK) {
		out->rd = reg_bits(rd, nrd);
		out->wr = reg_bits(wr, nwr);
	}
	bool mem_read = false, mem_write = false, count_in_cl = false;
	for (int i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];
		if (op->type == X86_OP_MEM && ci->id != X86_INS_LEA && ci->id != X86_INS_NOP) {
			mem_read |= op->access & CS_AC_READ;
			mem_write |= op->access & CS_AC_WRITE;
		}
		if (op->type == X86_OP_MEM) {
			int b = gpr(op->mem.base), ix = gpr(op->mem.index);
			out->agen |= (b >= 0 ? 1u << b : 0) | (ix >= 0 ? 1u << ix : 0);
		}
		if (op->type == X86_OP_REG && op->reg == X86_REG_CL && i > 0)
			count_in_cl = true;
	}
	if (IS(ci->id, X86_INS_PUSH, X86_INS_POP, X86_INS_CALL, X86_INS_RET)) {
		out->agen |= 1u << 4; /* RSP addresses the stack */
		mem_read |= ci->id == X86_INS_POP || ci->id == X86_INS_RET;
		mem_write |= ci->id == X86_INS_PUSH || ci->id == X86_INS_CALL;
	}
	out->mem = mem_read || mem_write;
	out->branch = cs_insn_group(cs, ci, X86_GRP_JUMP) || cs_insn_group(cs, ci, X86_GRP_CALL) ||
		      cs_insn_group(cs, ci, X86_GRP_RET);
	out->pipe = x->prefix[0] == X86_PREFIX_LOCK || x->prefix[0] == X86_PREFIX_REP ||
				    x->prefix[0] == X86_PREFIX_REPNE
			    ? TM_NP
			    : pipe_of(ci, count_in_cl);
	cost_of(ci, mem_read && mem_write, out);
	if (vpu) {
		/* the VPU's stand-ins: issue in the U pipe, which the VPU hangs off (Vector Microarchitecture) */
		out->pipe = TM_PU;
		out->lat = TM_VPU_LAT;
		out->exec = 1;
		out->micro = false;
	}
	cs_free(ci, 1);
	return true;
}
