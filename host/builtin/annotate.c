/*
 * pmuctl annotate FUNC: the source lines of one function of a recording
 * with their share of its samples, as perf annotate --stdio shows them
 * beside the source. The function's bytes from its ELF symbol (host/symbols.h),
 * each sample's line and the function's line span from the program's DWARF
 * line table (host/srcline.c, libdw); the text from the source file the
 * line table names. Lines of other files (code inlined from a header) are
 * listed after, by file:line. Then the function's instructions as binutils'
 * objdump -d prints them (the host's disassembler: KNC's scalar instructions
 * are x86-64's), each with its share of the samples at its address, as perf
 * annotate shows them beside the source; with or without DWARF.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host/pmuctl.h"
#include "host/record.h"
#include "host/srcline.h"
#include "host/symbols.h"

struct line_hits {
	const char *file; /* srcline's: valid while the line tables are open */
	int line;
	uint64_t count;
};

/* Counts one sample at file:line in *hits (grown as needed); -1 if out of memory. */
static int count_line(struct line_hits **hits, size_t *n, const char *file, int line)
{
	for (size_t i = 0; i < *n; i++)
		if ((*hits)[i].line == line && !strcmp((*hits)[i].file, file))
			return (int)++(*hits)[i].count;
	struct line_hits *more = realloc(*hits, (*n + 1) * sizeof(**hits));
	if (!more)
		return -1;
	*hits = more;
	more[(*n)++] = (struct line_hits){ file, line, 1 };
	return 1;
}

static uint64_t hits_at(const struct line_hits *hits, size_t n, const char *file, int line)
{
	for (size_t i = 0; i < n; i++)
		if (hits[i].line == line && !strcmp(hits[i].file, file))
			return hits[i].count;
	return 0;
}

/* Lines first..last of `file` with their shares of `total`; the text if the file can be read. */
static void print_source(const char *file, const char *path, int first, int last, const struct line_hits *hits,
			 size_t n, uint64_t total)
{
	FILE *f = fopen(path, "r");
	char text[1024];
	int line = 0;

	if (!f)
		fprintf(stderr, "pmuctl: annotate: %s cannot be read: lines without their text\n", path);
	printf("# %s\n", path);
	while (++line <= last) {
		int have = f && fgets(text, sizeof(text), f);
		if (have && !strchr(text, '\n')) { /* a longer line: the rest is not shown */
			int ch;
			while ((ch = fgetc(f)) != EOF && ch != '\n')
				;
		} else if (have) {
			*strchr(text, '\n') = 0;
		}
		if (line < first)
			continue;
		uint64_t c = hits_at(hits, n, file, line);
		if (c)
			printf("%8.2f%%  %5d  %s\n", 100.0 * c / total, line, have ? text : "");
		else
			printf("%9s  %5d  %s\n", "", line, have ? text : "");
	}
	if (f)
		fclose(f);
}

struct addr_hits {
	uint64_t addr, count;
};

/* Counts one sample at address a in *hits (grown as needed); -1 if out of memory. */
static int count_addr(struct addr_hits **hits, size_t *n, uint64_t a)
{
	for (size_t i = 0; i < *n; i++)
		if ((*hits)[i].addr == a)
			return (int)++(*hits)[i].count;
	struct addr_hits *more = realloc(*hits, (*n + 1) * sizeof(**hits));
	if (!more)
		return -1;
	*hits = more;
	more[(*n)++] = (struct addr_hits){ a, 1 };
	return 1;
}

/*
 * fn's instructions from `objdump -d --no-show-raw-insn` of prog, each line
 * "ADDR:<tab>INSTRUCTION" with its share of total; says on stderr when
 * objdump showed none (not installed, or not this file's format).
 */
static void print_disassembly(const char *prog, const struct sym *fn, const struct addr_hits *hits, size_t n,
			      uint64_t total)
{
	char start[40], stop[40], text[512];
	int fd[2], status = 0, shown = 0;
	pid_t pid = -1;

	snprintf(start, sizeof(start), "--start-address=%#llx", (unsigned long long)fn->start);
	snprintf(stop, sizeof(stop), "--stop-address=%#llx", (unsigned long long)fn->end);
	fflush(stdout);
	if (pipe(fd) == 0 && (pid = fork()) == 0) {
		dup2(fd[1], STDOUT_FILENO);
		close(fd[0]);
		close(fd[1]);
		execlp("objdump", "objdump", "-d", "--no-show-raw-insn", start, stop, "--", prog, (char *)NULL);
		_exit(127);
	}
	FILE *p = pid > 0 ? fdopen(fd[0], "r") : NULL;
	if (pid > 0)
		close(fd[1]);
	printf("# Percent  Disassembly (objdump -d)\n");
	while (p && fgets(text, sizeof(text), p)) {
		char *end;
		text[strcspn(text, "\n")] = 0;
		uint64_t a = strtoull(text, &end, 16); /* "  ADDR:\tINSN"; headers and labels are not */
		if (end == text || end[0] != ':' || end[1] != '\t')
			continue;
		uint64_t c = 0;
		for (size_t i = 0; i < n; i++)
			c += hits[i].addr == a ? hits[i].count : 0;
		if (c)
			printf("%8.2f%%  %llx:%s\n", 100.0 * c / total, (unsigned long long)a, end + 1);
		else
			printf("%9s  %llx:%s\n", "", (unsigned long long)a, end + 1);
		shown++;
	}
	if (p)
		fclose(p);
	if (pid > 0)
		waitpid(pid, &status, 0);
	if (!shown)
		fprintf(stderr, "pmuctl: annotate: objdump -d showed no instructions of %s (%s): no disassembly\n",
			fn->name, pid < 0 ? "it could not be started" : WIFEXITED(status) && WEXITSTATUS(status) == 127 ?
			"not installed: Debian's binutils" : "its exit status or output");
}

enum { OPT_SYMFS = 256 };

/* annotate's options, as its table stores them. */
static struct {
	const char *file, *symfs;
} opt = { .file = "pmuos.data" };

const struct cli_opt annotate_opts[] = {
	{ "input", 'i', "FILE", "the recording (default pmuos.data)", .str = &opt.file },
	{ "symfs", OPT_SYMFS, "DIR", "look for the recorded program under DIR, as perf's --symfs", .str = &opt.symfs },
	{ 0 },
};

int cmd_annotate(struct card *c, int argc, char **argv)
{
	char path[8192];

	(void)c;
	while (cli_next(argc, argv) != -1) /* the table stores every option */
		;
	const char *file = opt.file, *symfs = opt.symfs;
	if (optind == argc)
		return usage_arg("no function to annotate", NULL);
	if (optind < argc - 1)
		return usage_arg("one function at a time; unexpected argument", argv[optind + 1]);
	const char *func = argv[optind];
	struct rec_header h;
	FILE *f = rec_open(file, &h);
	if (!f)
		return 1;
	char prog[8192];
	snprintf(prog, sizeof(prog), "%s", program_file(&h, symfs, path, sizeof(path))); /* path is reused below */
	size_t nsyms, i;
	struct sym *syms = load_symbols(prog, &nsyms);
	for (i = 0; i < nsyms && strcmp(syms[i].name, func); i++)
		;
	if (i == nsyms) {
		fprintf(stderr, "pmuctl: annotate: %s has no function %s\n", prog, func);
		fclose(f);
		return 1;
	}
	struct sym fn = syms[i];
	struct srclines *lines = srcline_open(prog, 0);
	struct line_hits *hits = NULL;
	struct addr_hits *at = NULL;
	size_t nhits = 0, nat = 0;
	uint64_t total = 0, in_fn = 0, unknown = 0;
	struct rec_sample r;
	int st;
	while ((st = rec_next(f, file, &r)) == 1) {
		total++;
		if (!r.s.cpl || r.s.rip < fn.start || r.s.rip >= fn.end)
			continue;
		const char *src;
		int line;
		in_fn++;
		if (count_addr(&at, &nat, r.s.rip) < 0) {
			fprintf(stderr, "pmuctl: annotate: out of memory for %zu addresses\n", nat);
			return 1;
		}
		if (srcline_lookup(lines, r.s.rip, &src, &line) != 0)
			unknown++;
		else if (count_line(&hits, &nhits, src, line) < 0) {
			fprintf(stderr, "pmuctl: annotate: out of memory for %zu lines\n", nhits);
			return 1;
		}
	}
	fclose(f);
	if (st < 0)
		return 1;
	printf("# %s: %llu of %llu samples (%.2f%%) of %s every %llu events; program %s\n", func,
	       (unsigned long long)in_fn, (unsigned long long)total, total ? 100.0 * in_fn / total : 0.0, h.event,
	       (unsigned long long)h.period, h.path);
	printf("# Percent   Line  Source\n");
	const char *src = NULL;
	int line, first, last;
	if (srcline_lookup(lines, fn.start, &src, &line) == 0 && srcline_span(lines, fn.start, fn.end, src, &first,
									       &last) == 0)
		print_source(src, srcline_path(lines, fn.start, src, path, sizeof(path)), first, last, hits, nhits,
			     in_fn ? in_fn : 1);
	for (size_t k = 0; k < nhits; k++) /* lines of other files: inlined code */
		if (!src || strcmp(hits[k].file, src))
			printf("%8.2f%%  %s:%d\n", 100.0 * hits[k].count / in_fn, hits[k].file, hits[k].line);
	if (unknown)
		printf("%8.2f%%  [unknown]\n", 100.0 * unknown / in_fn);
	if (unknown && lines) /* without DWARF at all srcline_open said so */
		fprintf(stderr, "pmuctl: annotate: %llu of %llu samples in %s have no source line: was it built "
			"without -g? (pmuos-cc -g)\n", (unsigned long long)unknown, (unsigned long long)in_fn, func);
	print_disassembly(prog, &fn, at, nat, in_fn ? in_fn : 1);
	free(hits);
	free(at);
	srcline_close(lines);
	return in_fn ? 0 : 1;
}
