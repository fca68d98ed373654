/* printf-style formatting; see lib/fmt.h. Pure code, unit-tested on the host. */
#include <stdint.h>
#include <stdbool.h>
#include "lib/fmt.h"

struct spec {
	bool left, zero, plus, space, alt;
	int width, prec; /* prec < 0: none given */
};

static int emit(fmt_out_fn out, void *ctx, char c, int n)
{
	for (int i = 0; i < n; i++)
		out(c, ctx);
	return n > 0 ? n : 0;
}

/* Emits digits[0..len) with sign/prefix, padded as the spec says. */
static int emit_field(fmt_out_fn out, void *ctx, const struct spec *s,
		      const char *prefix, const char *body, int len, bool numeric)
{
	int plen = 0, zeros = 0, n = 0;

	while (prefix[plen])
		plen++;
	if (numeric && s->prec > len)
		zeros = s->prec - len;
	int total = plen + zeros + len;
	int pad = s->width > total ? s->width - total : 0;

	if (numeric && s->zero && !s->left && s->prec < 0) {
		zeros += pad;
		pad = 0;
	}
	if (!s->left)
		n += emit(out, ctx, ' ', pad);
	for (int i = 0; i < plen; i++, n++)
		out(prefix[i], ctx);
	n += emit(out, ctx, '0', zeros);
	for (int i = 0; i < len; i++, n++)
		out(body[i], ctx);
	if (s->left)
		n += emit(out, ctx, ' ', pad);
	return n;
}

static int emit_number(fmt_out_fn out, void *ctx, const struct spec *s,
		       uint64_t v, bool neg, bool is_signed, unsigned base, bool upper)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	const char *prefix = "";
	char buf[24], rev[24];
	int len = 0;

	for (uint64_t x = v; x; x /= base)
		rev[len++] = digits[x % base];
	if (len == 0 && s->prec != 0)
		rev[len++] = '0';
	for (int i = 0; i < len; i++)
		buf[i] = rev[len - 1 - i];

	if (neg)
		prefix = "-";
	else if (is_signed && s->plus)
		prefix = "+";
	else if (is_signed && s->space)
		prefix = " ";
	else if (s->alt && base == 16 && v)
		prefix = upper ? "0X" : "0x";
	else if (s->alt && base == 8 && (len == 0 || buf[0] != '0') && s->prec <= len)
		prefix = "0"; /* C99: '#' makes the first octal digit a zero */
	return emit_field(out, ctx, s, prefix, buf, len, true);
}

int fmt_vformat(fmt_out_fn out, void *ctx, const char *fmt, va_list ap)
{
	int n = 0;

	for (; *fmt; fmt++) {
		if (*fmt != '%') {
			out(*fmt, ctx);
			n++;
			continue;
		}
		struct spec s = { .prec = -1 };

		for (;; fmt++) {
			char f = fmt[1];
			if (f == '-') s.left = true;
			else if (f == '0') s.zero = true;
			else if (f == '+') s.plus = true;
			else if (f == ' ') s.space = true;
			else if (f == '#') s.alt = true;
			else break;
		}
		fmt++;
		if (*fmt == '*') {
			s.width = va_arg(ap, int);
			if (s.width < 0) {
				s.left = true;
				s.width = -s.width;
			}
			fmt++;
		} else {
			while (*fmt >= '0' && *fmt <= '9')
				s.width = s.width * 10 + (*fmt++ - '0');
		}
		if (*fmt == '.') {
			fmt++;
			s.prec = 0;
			if (*fmt == '*') {
				s.prec = va_arg(ap, int);
				fmt++;
			} else {
				while (*fmt >= '0' && *fmt <= '9')
					s.prec = s.prec * 10 + (*fmt++ - '0');
			}
		}

		int size = 0; /* -2 hh, -1 h, 0 int, 1 long, 2 long long/size_t */
		for (;; fmt++) {
			if (*fmt == 'h') size--;
			else if (*fmt == 'l') size++;
			else if (*fmt == 'z' || *fmt == 't' || *fmt == 'j') size = 2;
			else break;
		}

		uint64_t u;
		int64_t d;
		switch (*fmt) {
		case 'd':
		case 'i':
			d = size >= 1 ? va_arg(ap, long long) : va_arg(ap, int);
			if (size == -1) d = (short)d;
			if (size == -2) d = (signed char)d;
			n += emit_number(out, ctx, &s, d < 0 ? -(uint64_t)d : (uint64_t)d, d < 0, true, 10, false);
			break;
		case 'u':
		case 'x':
		case 'X':
		case 'o':
			u = size >= 1 ? va_arg(ap, unsigned long long) : va_arg(ap, unsigned int);
			if (size == -1) u = (unsigned short)u;
			if (size == -2) u = (unsigned char)u;
			n += emit_number(out, ctx, &s, u, false, false,
					 *fmt == 'u' ? 10 : *fmt == 'o' ? 8 : 16, *fmt == 'X');
			break;
		case 'p':
			u = (uintptr_t)va_arg(ap, void *);
			s.alt = true;
			n += emit_number(out, ctx, &s, u, false, false, 16, false);
			break;
		case 'c': {
			char c = (char)va_arg(ap, int);
			n += emit_field(out, ctx, &s, "", &c, 1, false);
			break;
		}
		case 's': {
			const char *str = va_arg(ap, const char *);
			int len = 0;

			if (!str)
				str = "(null)";
			while ((s.prec < 0 || len < s.prec) && str[len])
				len++;
			n += emit_field(out, ctx, &s, "", str, len, false);
			break;
		}
		case '%':
			out('%', ctx);
			n++;
			break;
		case '\0':
			return n; /* lone '%' at the end: stop */
		default:
			/* Unknown conversion: show it literally rather than guess. */
			out('%', ctx);
			out(*fmt, ctx);
			n += 2;
			break;
		}
	}
	return n;
}

struct sbuf {
	char *buf;
	size_t size, len;
};

static void sbuf_put(char c, void *ctx)
{
	struct sbuf *b = ctx;

	if (b->len + 1 < b->size)
		b->buf[b->len] = c;
	b->len++;
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct sbuf b = { buf, size, 0 };
	int n = fmt_vformat(sbuf_put, &b, fmt, ap);

	if (size)
		buf[b.len < size ? b.len : size - 1] = 0;
	return n;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}
