/* pmuctl's progress line on stderr, for long operations, only when stderr is a terminal. */
#ifndef HOST_PROGRESS_H
#define HOST_PROGRESS_H

#include "host/clock.h" /* now_s(), which its callers time with */

/* Replaces the progress line with printf-style text, at most 4 times a second; nothing if stderr is not a terminal. */
void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Erases the progress line (if one is shown) before other output. */
void progress_clear(void);

#endif
