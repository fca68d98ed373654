/* sfp-machine.h: the machine description glibc's soft-fp (soft-fp/soft-fp.h)
 * asks for, for pmuos's Ring-3 soft-float helpers (__adddf3, __muldf3...,
 * user/user.mk builds them from Debian's glibc-source).
 *
 * 64-bit words, as the x86_64 half of libgcc's config/i386/sfp-machine.h
 * (the same choices glibc's sysdeps/riscv/sfp-machine.h makes for RV64):
 * a double's fraction fits one word, products and quotients use longlong.h's
 * mulq/divq. NaNs are built as SSE builds them, so a soft-float result
 * equals the SSE result bit for bit.
 *
 * What this file leaves out, on purpose: the x86 file reads MXCSR (SSE) or
 * the x87 control word for the rounding mode and raises exception flags
 * there. A KNC program has neither an MXCSR nor (in pmuos) an fenv to ask,
 * so rounding is always to nearest-even (soft-fp's default when
 * FP_ROUNDMODE is not defined) and no exception flags are kept (its default
 * when FP_EX_* are not defined), as newlib's generic fenv stubs report. */
#ifndef PMUOS_SFP_MACHINE_H
#define PMUOS_SFP_MACHINE_H

#define _FP_W_TYPE_SIZE		64
#define _FP_W_TYPE		unsigned long long
#define _FP_WS_TYPE		signed long long
#define _FP_I_TYPE		long long

typedef int TItype __attribute__ ((mode (TI)));
typedef unsigned int UTItype __attribute__ ((mode (TI)));
#define TI_BITS (__CHAR_BIT__ * (int) sizeof (TItype))

#define _FP_MUL_MEAT_S(R, X, Y)	_FP_MUL_MEAT_1_imm (_FP_WFRACBITS_S, R, X, Y)
#define _FP_MUL_MEAT_D(R, X, Y)	_FP_MUL_MEAT_1_wide (_FP_WFRACBITS_D, R, X, Y, umul_ppmm)
#define _FP_MUL_MEAT_DW_S(R, X, Y)	_FP_MUL_MEAT_DW_1_imm (_FP_WFRACBITS_S, R, X, Y)
#define _FP_MUL_MEAT_DW_D(R, X, Y)	_FP_MUL_MEAT_DW_1_wide (_FP_WFRACBITS_D, R, X, Y, umul_ppmm)
#define _FP_DIV_MEAT_S(R, X, Y)	_FP_DIV_MEAT_1_imm (S, R, X, Y, _FP_DIV_HELP_imm)
#define _FP_DIV_MEAT_D(R, X, Y)	_FP_DIV_MEAT_1_udiv_norm (D, R, X, Y)

/* SSE's NaN results (Intel SDM Vol. 1, 4.8.3.5 and Table 4-7): the default
 * NaN (0/0, inf-inf...) is the negative quiet NaN; a NaN operand comes back
 * quieted, sign and fraction kept; of two NaNs the first source operand (X)
 * wins. libgcc's i386 file picks the larger fraction instead, the x87's rule. */
#define _FP_NANFRAC_S		_FP_QNANBIT_S
#define _FP_NANFRAC_D		_FP_QNANBIT_D
#define _FP_NANSIGN_S		1
#define _FP_NANSIGN_D		1
#define _FP_KEEPNANFRACP	1
#define _FP_QNANNEGATEDP	0
#define _FP_CHOOSENAN(fs, wc, R, X, Y, OP)	\
  do {						\
    R##_s = X##_s;				\
    _FP_FRAC_COPY_##wc (R, X);			\
    R##_c = FP_CLS_NAN;				\
  } while (0)

/* SSE detects tininess after rounding (SDM Vol. 1, 4.9.1.5). */
#define _FP_TININESS_AFTER_ROUNDING 1

#define __LITTLE_ENDIAN	1234
#define __BIG_ENDIAN	4321
#define __BYTE_ORDER	__LITTLE_ENDIAN

/* The comparison helpers' second names (__nedf2 for __eqdf2...). */
#define strong_alias(name, aliasname) \
  extern __typeof (name) aliasname __attribute__ ((alias (#name)));

/* The comparison helpers' result: a word, as libgcc's __libgcc_cmp_return__
 * (word_mode) and compiler-rt's CMP_RESULT (long) are on x86_64; callers
 * test its sign or zero (clang tests the low 32 bits). clang has no
 * mode (__libgcc_cmp_return__). */
#define CMPtype long

#endif
