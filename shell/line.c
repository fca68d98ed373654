/* Serial-shell line editor; see shell/line.h. */
#include "shell/line.h"
#include "lib/lib.h"

enum { ESC_NONE, ESC_START, ESC_CSI, ESC_SS3 };

void line_init(struct line_editor *e, line_echo_fn echo, void *ctx)
{
	memset(e, 0, sizeof(*e));
	e->echo = echo;
	e->ctx = ctx;
}

static void echo(struct line_editor *e, const char *s, size_t n)
{
	e->echo(s, n, e->ctx);
}

static void erase_chars(struct line_editor *e, size_t n)
{
	while (n--)
		echo(e, "\b \b", 3);
}

static void reset(struct line_editor *e)
{
	e->len = 0;
	e->overflow = 0;
	e->buf[0] = 0;
	e->hist_view = 0;
}

/* Shows history entry `view` (1 = newest) in place of the current line. */
static void show_history(struct line_editor *e, unsigned view)
{
	if (view > e->hist_count)
		return;
	erase_chars(e, e->len);
	e->hist_view = view;
	if (view == 0) {
		e->len = 0;
	} else {
		const char *h = e->history[(e->hist_next + LINE_HISTORY - view) % LINE_HISTORY];
		e->len = strlen(h);
		memcpy(e->buf, h, e->len);
	}
	e->overflow = 0;
	echo(e, e->buf, e->len);
}

static void remember(struct line_editor *e)
{
	if (e->len == 0)
		return;
	memcpy(e->history[e->hist_next], e->buf, e->len + 1);
	e->hist_next = (e->hist_next + 1) % LINE_HISTORY;
	if (e->hist_count < LINE_HISTORY)
		e->hist_count++;
}

enum line_result line_feed(struct line_editor *e, uint8_t c)
{
	bool after_cr = e->last_cr;

	if (e->done) {
		reset(e);
		e->done = false;
	}
	e->last_cr = false;
	if (e->esc == ESC_START) {
		/* CSI (ESC [ ... final) and SS3 (ESC O x) are swallowed whole. */
		e->esc = c == '[' ? ESC_CSI : c == 'O' ? ESC_SS3 : ESC_NONE;
		return LINE_MORE;
	}
	if (e->esc == ESC_SS3) {
		e->esc = ESC_NONE;
		return LINE_MORE;
	}
	if (e->esc == ESC_CSI) {
		if (c >= 0x40 && c <= 0x7e) { /* final byte */
			e->esc = ESC_NONE;
			if (c == 'A')
				show_history(e, e->hist_view + 1);
			else if (c == 'B' && e->hist_view > 0)
				show_history(e, e->hist_view - 1);
		}
		return LINE_MORE;
	}

	switch (c) {
	case '\n':
		if (after_cr)
			return LINE_MORE;
		/* fall through */
	case '\r':
		e->last_cr = c == '\r';
		echo(e, "\n", 1);
		e->buf[e->len] = 0;
		if (!e->overflow)
			remember(e);
		e->hist_view = 0;
		e->done = true;
		return LINE_DONE;
	case 0x08: /* BS */
	case 0x7f: /* DEL */
		if (e->overflow) {
			e->overflow--;
		} else if (e->len) {
			e->len--;
			erase_chars(e, 1);
		}
		return LINE_MORE;
	case 0x15: /* Ctrl-U */
		erase_chars(e, e->len);
		reset(e);
		return LINE_MORE;
	case 0x03: /* Ctrl-C */
		echo(e, "^C\n", 3);
		reset(e);
		return LINE_CANCEL;
	case 0x1b:
		e->esc = ESC_START;
		return LINE_MORE;
	default:
		break;
	}
	if (c < 0x20 || c > 0x7e)
		return LINE_MORE;
	if (e->len + 1 < MBOX_SHELL_LINE_CAP && !e->overflow) {
		e->buf[e->len++] = c;
		echo(e, (const char *)&c, 1);
	} else {
		e->overflow++;
	}
	return LINE_MORE;
}
