/* pmuctl console: the card's shell, a line at a time, through the mailbox. */
#include <editline/readline.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/pmuctl.h"
#include "host/rings.h"

/* Characters of a line the card's shell takes (the capacity less its NUL). */
#define SHELL_LINE_MAX (MBOX_SHELL_LINE_CAP - 1)

/*
 * Reads one line of `in`, up to its '\n', into buf (max + 1 bytes, NUL-
 * terminated): the characters before the first '\r' or '\n', the rest of
 * the line dropped. Returns its length (more than max: only max kept), or
 * -1 at the end of the input; *nul is set if it holds a NUL byte.
 */
static long read_line(FILE *in, char *buf, size_t max, int *nul)
{
	size_t n = 0;
	int ch, cut = 0;

	*nul = 0;
	while ((ch = getc(in)) != EOF && ch != '\n') {
		cut |= ch == '\r';
		if (cut)
			continue;
		*nul |= ch == 0;
		if (n < max)
			buf[n] = ch;
		n++;
	}
	if (ch == EOF && n == 0 && !cut)
		return -1;
	buf[n < max ? n : max] = 0;
	return n;
}

/*
 * A line typed at a terminal, through libedit's readline(3): cursor keys
 * edit and recall the history (a raw escape sequence never reaches the
 * card). As read_line; -1 at the end of input (Ctrl-D).
 */
static long edit_line(char *buf, size_t max, int *nul)
{
	char prompt[96];

	snprintf(prompt, sizeof(prompt), "pmuos(%s)> ", card_name);
	char *l = readline(prompt);
	if (!l)
		return -1;
	size_t n = strlen(l);
	*nul = 0;
	snprintf(buf, max + 1, "%s", l);
	if (n)
		add_history(l);
	free(l);
	return n;
}

int cmd_console(struct card *c, int argc, char **argv)
{
	char line[SHELL_LINE_MAX + 1];
	int tty = isatty(0), refused = 0, nul;
	long n;

	if (argc > 1)
		return usage_arg("unexpected argument", argv[1]);
	for (;;) {
		if ((n = tty ? edit_line(line, SHELL_LINE_MAX, &nul) : read_line(stdin, line, SHELL_LINE_MAX, &nul)) < 0)
			return refused;
		if (n > SHELL_LINE_MAX || nul) {
			/* Nothing of it runs: a piece of a line could be another command. */
			if (nul)
				fprintf(stderr, "pmuctl: console: a line with a NUL byte is refused\n");
			else
				fprintf(stderr, "pmuctl: console: a line of %ld characters is refused: the card's shell "
					"takes lines of at most %d characters\n", n, SHELL_LINE_MAX);
			refused = 1;
			continue;
		}
		if (!line[0])
			continue;
		uint64_t from = c->hdr->console_head;
		int st = call(c, MBOX_OP_SHELL, NULL, line, n + 1, &resp);
		if (st == MBOX_E_AGAIN) {
			fprintf(stderr, "pmuctl: %s\n", card_strerror(c, st));
			continue;
		}
		if (st != MBOX_OK)
			die_status(c, "console", st);
		/*
		 * The card runs the line on CPU 0 and says when it has finished
		 * (header.shell_done); Ctrl-C meanwhile interrupts it there.
		 */
		uint32_t seq = resp.seq;
		struct sigaction sa = { .sa_handler = on_stop_signal }, old;
		sigaction(SIGINT, &sa, &old);
		while (__atomic_load_n(&c->hdr->shell_done, __ATOMIC_ACQUIRE) != seq) {
			console_drain(c, &from, stdout);
			if (stop_signal == SIGINT) {
				stop_signal = 0;
				if ((st = call(c, MBOX_OP_SHELL_INTR, NULL, NULL, 0, &resp)) != MBOX_OK)
					die_status(c, "console: Ctrl-C", st);
			}
			if ((st = card_alive(c)) != 0)
				die_status(c, "console", st);
			usleep(1000);
		}
		sigaction(SIGINT, &old, NULL);
		console_drain(c, &from, stdout);
	}
}
