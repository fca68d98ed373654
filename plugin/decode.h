/*
 * What the plugin needs to know about an x86-64 instruction, from its bytes
 * (QEMU gives the bytes and the length of each translated instruction):
 * whether it is a branch and of which kind, the target of a direct branch,
 * whether it is an SSE/AVX instruction (the VPU's stand-in: KNC has no SSE
 * or AVX, its VPU instructions are 512-bit) and how many elements it works
 * on, and whether it changes address translation. Encodings from the Intel
 * SDM vol. 2 opcode maps (appendix A). 64-bit mode only: the few
 * instructions that run in 16- or 32-bit mode at boot may be misread, which
 * counts nothing wrong because no counter counts then. Also whether a KNC
 * core lacks it (Intel 327364-001, Appendix B). Pure code, unit-tested
 * (tests/unit/test_decode.c).
 */
#ifndef PLUGIN_DECODE_H
#define PLUGIN_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum br_kind {
	BR_NONE,
	BR_COND,     /* Jcc, JrCXZ, LOOP, LOOPE, LOOPNE: direct, taken or not */
	BR_JMP,      /* JMP rel: direct, always taken */
	BR_CALL,     /* CALL rel */
	BR_JMP_IND,  /* JMP r/m */
	BR_CALL_IND, /* CALL r/m */
	BR_RET,      /* RET, RET imm16 (near) */
	BR_OTHER,    /* INT n, INT3, INT1, SYSCALL, SYSENTER, IRET, SYSRET, SYSEXIT, far JMP/CALL/RET: not predicted */
};

struct x86_insn {
	enum br_kind branch;
	uint64_t target;   /* BR_COND, BR_JMP, BR_CALL: the destination */
	uint8_t vec_bytes; /* SSE/AVX: 16 (XMM) or 32 (YMM); 0 otherwise */
	uint8_t elements;  /* SSE/AVX: elements operated on (see decode.c) */
	bool flush_tlb;    /* MOV to CR0/CR3/CR4, INVLPG, INVPCID */
	/*
	 * An instruction a KNC core lacks that QEMU 7.2's TCG runs anyway on
	 * the strict CPU (scripts/qemu.sh CPU=knc): its mnemonic, or NULL. See
	 * decode.c knc_missing. port_io: it is IN, OUT, INS or OUTS.
	 */
	const char *knc_missing;
	bool port_io;
};

/*
 * Decodes the `len` bytes of the instruction at `pc` (len as QEMU measured
 * it, 1-15). Never reads past len; unknown or truncated encodings decode
 * as a plain instruction.
 */
void x86_decode(const uint8_t *b, size_t len, uint64_t pc, struct x86_insn *out);

#endif
