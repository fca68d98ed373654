/*
 * libFuzzer target for the serial shell's input side: the bytes go through
 * the line editor (shell/line.c); each completed line through shell_parse
 * (shell/parse.c: words, command lookup, argument count) with the card's
 * command table, and each argument through the pure parsers the commands
 * use: cpuset_parse (lib/cpuset.c), parse_u64 (lib/lib.c), and
 * pmu_event_parse (pmu/events.c), on comma-separated lists as `pmu mux`
 * takes them and on the value of NAME=N words as `pmu set ... period=N`.
 *
 * Checked for every input: no crash, hang or sanitizer report; what the
 * editor echoed is what it hands over (a model of the terminal), it never
 * erases past the prompt, and its line is printable ASCII of its length; the
 * words are the line's runs of other bytes than space and tab (a reference
 * splitter), and the result agrees with the table; parse_u64 agrees with a
 * reference; a CPU set holds only the card's CPUs and is parsed back the same
 * from its written-out form; an EvtSel has no EN, INT or reserved bit, counts
 * at some privilege level, and is parsed back the same from pmu_event_format's
 * string; every error message is a non-empty string inside its buffer.
 * Built with the kernel files' k_ names (tests/fuzz.mk): the parsers called
 * here are the kernel's.
 */
#include <stdlib.h>
#include <string.h>
#include "shell/line.h"
#include "shell/shell.h"
#include "lib/cpuset.h"
#include "lib/fmt.h"
#include "lib/lib.h"
#include "pmu/events.h"
#include "pmu/knc/regs.h"

#define check(cond) do { if (!(cond)) abort(); } while (0)
#define NCPUS 244 /* a KNC card's hardware threads */
#define ERRLEN 96 /* the shell commands' error buffers */
/* Bytes an input may have: lines of 255 characters and more (too long), a full history. Longer ones add no state and slow every run. */
#define MAX_INPUT 2048

/* The card's commands, as their SHELL_COMMAND lines give them (fn unused here). */
static const struct shell_cmd cmds[] = {
	{ "help", "[COMMAND]", "", 0, 1, NULL },         { "version", "", "", 0, 0, NULL },
	{ "cpus", "", "", 0, 0, NULL },                  { "mem", "", "", 0, 0, NULL },
	{ "uptime", "", "", 0, 0, NULL },                { "echo", "[WORD...]", "", 0, SHELL_MAX_ARGS, NULL },
	{ "sleep", "MS", "", 1, 1, NULL },               { "reboot", "", "", 0, 0, NULL },
	{ "poweroff", "", "", 0, 0, NULL },              { "debug", "fault CPU [KIND] | hang CPU", "", 1, 3, NULL },
	{ "cpu", "init CPU", "", 2, 2, NULL },           { "pmu", "SUBCOMMAND ...", "", 1, 5, NULL },
	{ "run", "PROGRAM [ARGS] [on CPUS]", "", 1, SHELL_MAX_ARGS, NULL },
	{ "tasks", "", "", 0, 0, NULL },                 { "kill", "ID", "", 1, 1, NULL },
};

/* ---------------------------------------------------------------- the editor and its echo */

/* The terminal after the prompt: what the echo has drawn, and the cursor. */
static struct {
	char line[MBOX_SHELL_LINE_CAP + 2]; /* 255 characters, then "^C" */
	size_t cursor;
	char done[MBOX_SHELL_LINE_CAP + 2]; /* the line as it stood when the echo ended it */
	size_t done_len;
} term;

static void echo(const char *s, size_t n, void *ctx)
{
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '\b') {
			check(term.cursor > 0); /* never into the prompt */
			term.cursor--;
		} else if (c == '\n') {
			memcpy(term.done, term.line, term.cursor);
			term.done_len = term.cursor;
			term.cursor = 0;
		} else {
			check(c >= 0x20 && c <= 0x7e && term.cursor < sizeof(term.line));
			term.line[term.cursor++] = c;
		}
	}
}

/* ---------------------------------------------------------------- references */

static int digit(char c, unsigned base)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (base == 16 && c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (base == 16 && c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* What parse_u64 promises: decimal or 0x-hex digits only, at most max. */
static bool ref_u64(const char *s, uint64_t max, uint64_t *out)
{
	unsigned base = 10;
	unsigned __int128 v = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return false;
	for (; *s; s++) {
		int d = digit(*s, base);
		if (d < 0)
			return false;
		v = v * base + d;
		if (v > max)
			return false;
	}
	*out = v;
	return true;
}

static void check_err(const char *err)
{
	check(err[0] && memchr(err, 0, ERRLEN));
}

static void check_u64(const char *s)
{
	static const uint64_t maxima[] = { 255, 3600000, UINT32_MAX, UINT64_MAX };

	for (size_t i = 0; i < ARRAY_SIZE(maxima); i++) {
		uint64_t v = 0xdead, r = 0xbeef;
		bool ok = parse_u64(s, maxima[i], &v);
		check(ok == ref_u64(s, maxima[i], &r));
		check(!ok || v == r);
	}
}

static void check_cpuset(const char *s)
{
	struct cpuset set, again;
	char err[ERRLEN], list[CPUSET_MAX * 4 + 1], *p = list;

	memset(err, 0, sizeof(err));
	if (!cpuset_parse(s, NCPUS, &set, err, sizeof(err))) {
		check_err(err);
		return;
	}
	check(cpuset_count(&set) >= 1);
	for (uint32_t c = 0; c < CPUSET_MAX; c++) {
		check(c < NCPUS || !cpuset_has(&set, c));
		if (!cpuset_has(&set, c))
			continue;
		if (p > list)
			*p++ = ',';
		if (c >= 100)
			*p++ = '0' + c / 100;
		if (c >= 10)
			*p++ = '0' + c / 10 % 10;
		*p++ = '0' + c % 10;
	}
	*p = 0;
	check(cpuset_parse(list, NCPUS, &again, err, sizeof(err)));
	check(memcmp(&set, &again, sizeof(set)) == 0);
}

static void check_event(const char *s)
{
	uint32_t v, again;
	char err[ERRLEN], name[64];

	memset(err, 0, sizeof(err));
	if (!pmu_event_parse(s, &v, err, sizeof(err))) {
		check_err(err);
		return;
	}
	check(!(v & (EVTSEL_EN | EVTSEL_INT | EVTSEL_RESERVED)) && (v & (EVTSEL_USR | EVTSEL_OS)));
	pmu_event_format(v, name, sizeof(name));
	check(strlen(name) < sizeof(name) - 1); /* not cut short */
	check(pmu_event_parse(name, &again, err, sizeof(err)) && again == v);
}

/* Every parser on an argument, as the commands use them. */
static void check_argument(const char *arg)
{
	char piece[MBOX_SHELL_LINE_CAP];

	check_u64(arg);
	check_cpuset(arg);
	const char *eq = strchr(arg, '=');
	if (eq)
		check_u64(eq + 1);
	/* An event list: "EVENT,EVENT,...", each piece an event string. */
	for (const char *p = arg;;) {
		size_t n = strcspn(p, ",");
		memcpy(piece, p, n);
		piece[n] = 0;
		check_event(piece);
		if (!p[n])
			break;
		p += n + 1;
	}
}

/* ---------------------------------------------------------------- a line */

static bool is_space(char c) { return c == ' ' || c == '\t'; }

static void check_line(const char *buf)
{
	char *line = strdup(buf), *argv[SHELL_MAX_ARGS + 1];
	const struct shell_cmd *c = NULL;
	int argc = -1;
	size_t len = strlen(buf);

	check(line);
	enum shell_parse_result r = shell_parse(line, cmds, cmds + ARRAY_SIZE(cmds), argv, &argc, &c);

	/* The reference: the words are the runs of non-space bytes, in order. */
	int words = 0;
	for (size_t i = 0; i < len; i++) {
		if (is_space(buf[i]) || (i > 0 && !is_space(buf[i - 1])))
			continue;
		size_t n = 0;
		while (i + n < len && !is_space(buf[i + n]))
			n++;
		if (words < SHELL_MAX_ARGS + 1 && r != SHELL_EMPTY) {
			check(argv[words] == line + i && strlen(argv[words]) == n);
			check(memcmp(argv[words], buf + i, n) == 0);
		}
		words++;
	}
	if (words == 0) {
		check(r == SHELL_EMPTY && argc == 0);
	} else if (words > SHELL_MAX_ARGS + 1) {
		check(r == SHELL_TOO_MANY_WORDS && argc == SHELL_MAX_ARGS + 1);
	} else {
		check(argc == words);
		const struct shell_cmd *want = NULL;
		for (size_t i = 0; i < ARRAY_SIZE(cmds) && !want; i++)
			if (strcmp(cmds[i].name, argv[0]) == 0)
				want = &cmds[i];
		if (!want) {
			check(r == SHELL_UNKNOWN);
		} else {
			check(c == want);
			check(r == (argc - 1 < want->min_args ? SHELL_TOO_FEW_ARGS :
				    argc - 1 > want->max_args ? SHELL_TOO_MANY_ARGS : SHELL_RUN));
		}
		for (int i = 1; i < argc; i++)
			check_argument(argv[i]);
	}
	free(line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct line_editor e;

	if (size > MAX_INPUT)
		return 0;
	line_init(&e, echo, NULL);
	memset(&term, 0, sizeof(term));
	for (size_t i = 0; i < size; i++) {
		enum line_result r = line_feed(&e, data[i]);
		check(e.len < MBOX_SHELL_LINE_CAP && e.hist_count <= LINE_HISTORY);
		if (r != LINE_DONE)
			continue;
		check(e.buf[e.len] == 0 && strlen(e.buf) == e.len);
		for (size_t j = 0; j < e.len; j++)
			check(e.buf[j] >= 0x20 && e.buf[j] <= 0x7e);
		/* What the terminal shows is what the shell runs. */
		check(term.done_len == e.len && memcmp(term.done, e.buf, e.len) == 0);
		if (!e.overflow) /* the shell refuses an overlong line whole */
			check_line(e.buf);
	}
	return 0;
}
