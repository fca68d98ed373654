/*
 * stdarg.h for pmuos's soft-float ABI (scripts/knc-cc puts this directory
 * first on the include path; it wraps clang's own <stdarg.h>).
 *
 * Under LLVM's soft-float a double argument travels as a 64-bit integer: in
 * the next general register or stack slot, variadic calls included. But
 * clang 14's va_arg(ap, double) is lowered by its front end as the x86-64
 * psABI says for an SSE-class value: it reads the va_list's XMM save area
 * (fp_offset; psABI §3.5.7), which a soft-float function never fills. So
 * va_arg of a double (and of long double, which is double here) reads the
 * 64-bit integer the caller passed and takes its bits; every other type is
 * clang's va_arg. (A struct holding a double, passed through `...`, would
 * still take the SSE path: not supported.)
 */
#ifndef PMUOS_KNC_STDARG_H
#define PMUOS_KNC_STDARG_H

#include_next <stdarg.h>

#ifdef __cplusplus
#error "pmuos's soft-float stdarg.h is for C"
#endif

static inline __attribute__((always_inline)) double __pmuos_va_double(unsigned long long bits)
{
	double d;
	__builtin_memcpy(&d, &bits, sizeof d);
	return d;
}

#undef va_arg
/* *(type *)0 is not evaluated: _Generic only looks at its type. */
#define va_arg(ap, type) _Generic(*(type *)0, \
	double: __pmuos_va_double(__builtin_va_arg(ap, unsigned long long)), \
	long double: __pmuos_va_double(__builtin_va_arg(ap, unsigned long long)), \
	default: __builtin_va_arg(ap, type))

#endif
