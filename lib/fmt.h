/*
 * printf-style formatting for the kernel (no libc). Supports %d %i %u %x %X
 * %o %c %s %p %%, flags '-' '0' ' ' '+' '#', field width and precision (also '*'),
 * and the length modifiers hh h l ll z t j.
 */
#ifndef LIB_FMT_H
#define LIB_FMT_H

#include <stdarg.h>
#include <stddef.h>

typedef void (*fmt_out_fn)(char c, void *ctx);

/* Formats through out(); returns the number of characters produced. */
int fmt_vformat(fmt_out_fn out, void *ctx, const char *fmt, va_list ap);

/* C99 semantics: returns the length the full output would have had. */
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
