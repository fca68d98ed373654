/*
 * x86-64 instruction classes for the plugin; see plugin/decode.h.
 *
 * Elements (VPU_ELEMENTS_ACTIVE): SSE/AVX have no masks, so every element
 * of an operation is active: a packed operation works on vector bytes /
 * element bytes elements (16 or 32 with VEX.L), a scalar one (SS/SD forms,
 * MOVD/MOVQ, COMIS, inserts and extracts) on 1. Element sizes: PS 4, PD 8;
 * integer operations by their opcode (B 1, W 2, D 4, Q 8); operations that
 * have no element size (moves, logic, shuffles of bytes) count 4-byte
 * elements, KNC's integer element. MOVLPS/MOVHPS and friends move 8 bytes:
 * 2 elements (PS) or 1 (PD).
 */
#include "plugin/decode.h"

#include <string.h>

enum { PFX_NONE, PFX_66, PFX_F3, PFX_F2 }; /* the mandatory prefix (VEX.pp) */

#define NOT_VEC 0
#define SCALAR  's'

/* Element bytes of 66 0F 60-7F and 66 0F D0-FF ('0': no such SSE instruction, 's': scalar). */
static const char int_60_7f[] = "12421242124488s4" "42481240000088s4";
static const char int_d0_ff[] = "824882s112141214" "1242228412241224" "0248821112481240";

static int table_elem(char c)
{
	return c == 's' ? SCALAR : c - '0';
}

/* Map 1 (0F xx) floating-point and integer SSE forms: element bytes, 's', or 0; *fixed: elements regardless of width. */
static int map1_elem(uint8_t op, int pfx, int *fixed)
{
	bool packed = pfx == PFX_NONE || pfx == PFX_66;
	int ps_pd = pfx == PFX_66 ? 8 : 4;

	switch (op) {
	case 0x10: case 0x11: case 0x51: case 0x52: case 0x53: case 0x58: case 0x59:
	case 0x5a: case 0x5c: case 0x5d: case 0x5e: case 0x5f: case 0xc2:
		return packed ? ps_pd : SCALAR;
	case 0x12: case 0x13: case 0x16: case 0x17:
		if (packed) {
			*fixed = pfx == PFX_66 ? 1 : 2; /* 8 bytes moved */
			return 4;
		}
		if (op == 0x12)
			return pfx == PFX_F3 ? 4 : 8; /* MOVSLDUP, MOVDDUP */
		return op == 0x16 && pfx == PFX_F3 ? 4 : NOT_VEC; /* MOVSHDUP */
	case 0x14: case 0x15: case 0x28: case 0x29: case 0x2b: case 0x50: case 0x54:
	case 0x55: case 0x56: case 0x57: case 0xc6:
		return packed ? ps_pd : NOT_VEC;
	case 0x2a: case 0x2c: case 0x2d:
		if (packed) {
			*fixed = 2; /* to or from an MMX register: 2 elements */
			return 4;
		}
		return SCALAR;
	case 0x2e: case 0x2f:
		return packed ? SCALAR : NOT_VEC;
	case 0x5b:
		return pfx == PFX_F2 ? NOT_VEC : 4;
	case 0xc4: case 0xc5:
		return pfx == PFX_66 ? SCALAR : NOT_VEC;
	}
	if ((op >= 0x60 && op <= 0x7f) || op >= 0xd0) {
		switch (pfx) {
		case PFX_66:
			return table_elem(op < 0x80 ? int_60_7f[op - 0x60] : int_d0_ff[op - 0xd0]);
		case PFX_F3:
			return op == 0x6f || op == 0x7f ? 4 : op == 0x70 ? 2 : op == 0xe6 ? 4 :
			       op == 0x7e || op == 0xd6 ? SCALAR : NOT_VEC;
		case PFX_F2:
			return op == 0x70 ? 2 : op == 0x7c || op == 0x7d || op == 0xd0 || op == 0xf0 ? 4 :
			       op == 0xe6 ? 8 : op == 0xd6 ? SCALAR : NOT_VEC;
		}
		return NOT_VEC; /* no prefix: MMX */
	}
	return NOT_VEC;
}

/* Map 2 (0F 38 xx), a vector instruction: element bytes or 's'. W: VEX.W. */
static int map2_elem(uint8_t op, bool w)
{
	if (op >= 0x96 && op <= 0xbf) /* FMA: the odd x9, xB, xD, xF of 99-BF are the scalar forms */
		return op >= 0x99 && (op & 0x9) == 0x9 ? SCALAR : w ? 8 : 4;
	switch (op) {
	case 0x00: case 0x04: case 0x08: case 0x10: case 0x1c: case 0x38: case 0x3c: case 0x78:
	case 0xdb: case 0xdc: case 0xdd: case 0xde: case 0xdf:
		return 1;
	case 0x01: case 0x03: case 0x05: case 0x07: case 0x09: case 0x0b: case 0x1d: case 0x20:
	case 0x30: case 0x3a: case 0x3e: case 0x41: case 0x79:
		return 2;
	case 0x0d: case 0x0f: case 0x15: case 0x17: case 0x19: case 0x22: case 0x24: case 0x25:
	case 0x28: case 0x29: case 0x2d: case 0x2f: case 0x32: case 0x34: case 0x35: case 0x37:
	case 0x59: case 0x5a:
		return 8;
	case 0x45: case 0x46: case 0x47: case 0x8c: case 0x8e: case 0x90: case 0x91: case 0x92: case 0x93:
		return w ? 8 : 4;
	}
	return 4;
}

/* Map 3 (0F 3A xx), a vector instruction: element bytes or 's'. */
static int map3_elem(uint8_t op)
{
	switch (op) {
	case 0x0a: case 0x0b: case 0x14: case 0x15: case 0x16: case 0x17: case 0x20: case 0x21: case 0x22:
		return SCALAR;
	case 0x0f: case 0x42: case 0x4c: case 0x60: case 0x61: case 0x62: case 0x63: case 0xdf:
		return 1;
	case 0x0e:
		return 2;
	case 0x00: case 0x01: case 0x05: case 0x06: case 0x09: case 0x0d: case 0x18: case 0x19:
	case 0x38: case 0x39: case 0x41: case 0x44: case 0x46: case 0x4b:
		return 8;
	}
	return 4;
}

static void set_vector(struct x86_insn *out, int elem, int fixed, int bytes)
{
	out->vec_bytes = (uint8_t)bytes;
	out->elements = (uint8_t)(fixed ? fixed : elem == SCALAR ? 1 : bytes / elem);
}

/* A VEX-encoded instruction (never a branch). */
static void decode_vex(int map, uint8_t op, int pfx, bool l, bool w, struct x86_insn *out)
{
	int fixed = 0, elem = NOT_VEC;

	if (map == 1) {
		if (op == 0x77 || op == 0xae) /* VZEROUPPER/VZEROALL, VLDMXCSR/VSTMXCSR (and KNC's SPFLT) */
			return;
		elem = map1_elem(op, pfx, &fixed);
	} else if (map == 2) {
		if (op >= 0xf0) /* BMI1/BMI2: general registers */
			return;
		elem = map2_elem(op, w);
	} else if (map == 3) {
		if (op >= 0xf0) /* RORX */
			return;
		elem = map3_elem(op);
	}
	if (elem != NOT_VEC)
		set_vector(out, elem, fixed, l ? 32 : 16);
}

static int64_t rel(const uint8_t *b, size_t n)
{
	if (n == 1)
		return (int8_t)b[0];
	int32_t v;
	memcpy(&v, b, 4);
	return v;
}

/* A direct branch whose displacement is the last n bytes of the instruction. */
static void direct(struct x86_insn *out, enum br_kind k, const uint8_t *b, size_t len, size_t i, uint64_t pc,
		   size_t n)
{
	if (i + n > len)
		return; /* truncated: not a branch we can follow */
	out->branch = k;
	out->target = pc + len + (uint64_t)rel(b + len - n, n);
}

/* Legacy prefixes and REX: the index of the opcode; the mandatory prefix, REX.W and REX.B. */
static size_t prefixes(const uint8_t *b, size_t len, int *pfx_out, bool *rex_w, bool *rex_b)
{
	size_t i = 0;
	int pfx = PFX_NONE;

	*rex_w = *rex_b = false;
	for (; i < len; i++) {
		uint8_t p = b[i];
		if (p == 0x66) {
			if (pfx == PFX_NONE)
				pfx = PFX_66;
		} else if (p == 0xf3) {
			pfx = PFX_F3;
		} else if (p == 0xf2) {
			pfx = PFX_F2;
		} else if (!(p == 0xf0 || p == 0x2e || p == 0x36 || p == 0x3e || p == 0x26 || p == 0x64 ||
			     p == 0x65 || p == 0x67)) {
			break;
		}
	}
	if (i < len && (b[i] & 0xf0) == 0x40) {
		*rex_w = b[i] & 8;
		*rex_b = b[i] & 1;
		i++;
	}
	*pfx_out = pfx;
	return i;
}

/*
 * What a KNC core lacks (Intel 327364-001, Appendix B: B.1 lists what the
 * core supports in 64-bit mode, B.2 what it does not: PAUSE, IN/OUT/INS/
 * OUTS, every MMX instruction; the P6's hint-NOP space 0F 18-1F, with the
 * long NOP 0F 1F /0 and PREFETCHh, and 3DNow!'s PREFETCHW are in neither,
 * the SSDG 328207-002 4.2.12: "the PREFETCH instruction is not supported")
 * and QEMU 7.2's TCG executes anyway with CPUID saying it is not there
 * (tried on scripts/qemu.sh's CPU=knc: docs/knc.md). What TCG traps there
 * (CMOV, FCMOV, FCOMI, SSE, fences, CLFLUSH, POPCNT, MOVBE, MONITOR, RDTSCP,
 * VEX) ends with #UD, and is not listed. i: the opcode's index.
 */
static const char *knc_missing(const uint8_t *b, size_t len, size_t i, int pfx, bool rex_b, bool *port_io)
{
	static const char *const prefetch[4] = { "prefetchnta", "prefetcht0", "prefetcht1", "prefetcht2" };
	uint8_t op = b[i];

	if ((op >= 0xe4 && op <= 0xe7) || op >= 0xec) {
		if (op >= 0xf0)
			return NULL;
		*port_io = true;
		return op & 2 ? "out" : "in";
	}
	if (op >= 0x6c && op <= 0x6f) {
		*port_io = true;
		return op & 2 ? "outs" : "ins";
	}
	if (op == 0x90 && pfx == PFX_F3 && !rex_b)
		return "pause";
	if (op != 0x0f || i + 1 >= len)
		return NULL;
	op = b[i + 1];
	uint8_t modrm = i + 2 < len ? b[i + 2] : 0, reg = (modrm >> 3) & 7;
	if (op == 0x0d)
		return "prefetchw";
	if (op == 0x18 && reg < 4 && (modrm >> 6) != 3)
		return prefetch[reg];
	if (op == 0x1e && pfx == PFX_F3 && (modrm == 0xfa || modrm == 0xfb))
		return modrm == 0xfa ? "endbr64" : "endbr32";
	if (op == 0x1f)
		return "nop r/m (0F 1F)";
	if (op >= 0x18 && op <= 0x1f)
		return "hint nop (0F 18-1E)";
	if (pfx != PFX_NONE)
		return NULL;
	if ((op >= 0x60 && op <= 0x7f && !(op >= 0x78 && op <= 0x7d)) || (op >= 0xd1 && op <= 0xfe) ||
	    op == 0xc4 || op == 0xc5)
		return op == 0x77 ? "emms" : "MMX";
	return NULL;
}

/* Everything but knc_missing: b[i] is the opcode. */
static void decode_op(const uint8_t *b, size_t len, size_t i, int pfx, bool rex_w, uint64_t pc,
		      struct x86_insn *out)
{
	if (i >= len)
		return;
	uint8_t op = b[i++];

	if (op == 0xc4 || op == 0xc5) { /* VEX */
		size_t need = op == 0xc4 ? 3 : 2;
		if (i + need > len)
			return;
		int map = op == 0xc4 ? b[i] & 0x1f : 1;
		uint8_t last = b[i + need - 2]; /* W vvvv L pp, or R vvvv L pp for C5 */
		bool w = op == 0xc4 && (last & 0x80);
		decode_vex(map, b[i + need - 1], last & 3, last & 4, w, out);
		return;
	}
	if (op != 0x0f) {
		uint8_t modrm = i < len ? b[i] : 0, reg = (modrm >> 3) & 7;
		if (op >= 0x70 && op <= 0x7f)
			direct(out, BR_COND, b, len, i, pc, 1);
		else if (op >= 0xe0 && op <= 0xe3)
			direct(out, BR_COND, b, len, i, pc, 1);
		else if (op == 0xeb)
			direct(out, BR_JMP, b, len, i, pc, 1);
		else if (op == 0xe9)
			direct(out, BR_JMP, b, len, i, pc, 4);
		else if (op == 0xe8)
			direct(out, BR_CALL, b, len, i, pc, 4);
		else if (op == 0xc3 || op == 0xc2)
			out->branch = BR_RET;
		else if (op == 0xca || op == 0xcb || op == 0xcc || op == 0xcd || op == 0xce || op == 0xcf ||
			 op == 0xf1 || op == 0xea || op == 0x9a)
			out->branch = BR_OTHER;
		else if (op == 0xff && i < len && (reg == 2 || reg == 4))
			out->branch = reg == 2 ? BR_CALL_IND : BR_JMP_IND;
		else if (op == 0xff && i < len && (reg == 3 || reg == 5))
			out->branch = BR_OTHER; /* far */
		return;
	}
	if (i >= len)
		return;
	op = b[i++];
	if (op == 0x38 || op == 0x3a) {
		if (i >= len)
			return;
		uint8_t op3 = b[i];
		if (op == 0x38 && op3 == 0x82 && pfx == PFX_66) {
			out->flush_tlb = true; /* INVPCID */
			return;
		}
		if (pfx != PFX_66 || op3 >= 0xf0 || (op == 0x38 && op3 >= 0x80 && op3 <= 0x82))
			return; /* MMX forms, MOVBE/CRC32/ADCX, INVEPT/INVVPID */
		set_vector(out, op == 0x38 ? map2_elem(op3, rex_w) : map3_elem(op3), 0, 16);
		return;
	}
	uint8_t modrm = i < len ? b[i] : 0, reg = (modrm >> 3) & 7;
	if (op >= 0x80 && op <= 0x8f) {
		direct(out, BR_COND, b, len, i, pc, 4);
	} else if (op == 0x05 || op == 0x07 || op == 0x34 || op == 0x35) {
		out->branch = BR_OTHER; /* SYSCALL, SYSRET, SYSENTER, SYSEXIT */
	} else if (op == 0x22 && i < len) {
		out->flush_tlb = reg == 0 || reg == 3 || reg == 4; /* MOV to CR0, CR3, CR4 */
	} else if (op == 0x01 && i < len) {
		out->flush_tlb = (modrm >> 6) != 3 && reg == 7; /* INVLPG m */
	} else {
		int fixed = 0, elem = map1_elem(op, pfx, &fixed);
		if (elem != NOT_VEC)
			set_vector(out, elem, fixed, 16);
	}
}

void x86_decode(const uint8_t *b, size_t len, uint64_t pc, struct x86_insn *out)
{
	int pfx;
	bool rex_w, rex_b;
	size_t i = prefixes(b, len, &pfx, &rex_w, &rex_b);

	memset(out, 0, sizeof(*out));
	decode_op(b, len, i, pfx, rex_w, pc, out);
	if (i < len)
		out->knc_missing = knc_missing(b, len, i, pfx, rex_b, &out->port_io);
}
