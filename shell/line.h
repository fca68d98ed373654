/*
 * Line editor for the serial shell: printable ASCII, backspace/DEL, Ctrl-U
 * (erase line), Ctrl-C (cancel), up/down arrows (history). CR, LF and CRLF
 * all end a line, so a terminal and piped input behave the same. Every other
 * control byte, escape sequence or non-ASCII byte is ignored. Pure: it only
 * calls the echo callback, and is unit-tested on the host.
 */
#ifndef SHELL_LINE_H
#define SHELL_LINE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <pmuos/mailbox.h> /* MBOX_SHELL_LINE_CAP: bytes, NUL included */

#define LINE_HISTORY 16

enum line_result {
	LINE_MORE,   /* keep feeding */
	LINE_DONE,   /* e->buf holds a complete line (check e->overflow) */
	LINE_CANCEL, /* Ctrl-C: the line was discarded */
};

typedef void (*line_echo_fn)(const char *s, size_t n, void *ctx);

struct line_editor {
	char buf[MBOX_SHELL_LINE_CAP];
	size_t len;
	size_t overflow;  /* characters dropped because the line was full */
	uint8_t esc;      /* escape-sequence state */
	bool last_cr;     /* swallow the LF of a CRLF */
	bool done;        /* the previous byte ended a line: start afresh */
	char history[LINE_HISTORY][MBOX_SHELL_LINE_CAP];
	unsigned hist_count, hist_next, hist_view; /* hist_view: 0 = the line being typed */
	line_echo_fn echo;
	void *ctx;
};

void line_init(struct line_editor *e, line_echo_fn echo, void *ctx);
/* Feeds one input byte. After LINE_DONE or LINE_CANCEL the next byte starts a new line. */
enum line_result line_feed(struct line_editor *e, uint8_t c);

#endif
