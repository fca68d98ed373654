/* pmuctl's progress line; see host/progress.h. */
#define _GNU_SOURCE
#include "host/progress.h"
#include "host/clock.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

static int progress_shown;

void progress(const char *fmt, ...)
{
	static double last;
	static int tty = -1;
	va_list ap;

	if (tty < 0)
		tty = isatty(2);
	if (!tty || now_s() - last < 0.25)
		return;
	last = now_s();
	fprintf(stderr, "\r\033[K");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fflush(stderr);
	progress_shown = 1;
}

void progress_clear(void)
{
	if (progress_shown)
		fprintf(stderr, "\r\033[K");
	progress_shown = 0;
}
