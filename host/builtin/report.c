/* pmuctl report: the hottest functions of a recording, named from the program's ELF symbols (libelf). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/flame.h"
#include "host/pmuctl.h"
#include "host/record.h"
#include "host/srcline.h"
#include "host/symbols.h"
#include <pmuos/sample.h>

static int by_start(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* "pmuctl: report: PATH: WHY" and exit(1): the program file is not an ELF file pmuctl can read symbols from. */
static void __attribute__((noreturn, format(printf, 2, 3))) bad_elf(const char *path, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "pmuctl: report: %s: ", path);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* Adds symbol table `scn` (header `sh`) of `e`'s function symbols to *syms. Every field used is checked. */
static void add_symtab(const char *path, Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, struct sym **syms, size_t *n,
		       size_t *cap)
{
	size_t ndx = elf_ndxscn(scn), entsize = gelf_fsize(e, ELF_T_SYM, 1, EV_CURRENT);
	GElf_Shdr strsh;
	Elf_Scn *strscn = elf_getscn(e, sh->sh_link);

	if (sh->sh_entsize != entsize)
		bad_elf(path, "symbol table (section %zu) has %llu-byte entries, not %zu-byte ones", ndx,
			(unsigned long long)sh->sh_entsize, entsize);
	if (sh->sh_size % entsize)
		bad_elf(path, "symbol table (section %zu) of %llu bytes is not whole %zu-byte entries", ndx,
			(unsigned long long)sh->sh_size, entsize);
	if (!strscn || !gelf_getshdr(strscn, &strsh) || strsh.sh_type != SHT_STRTAB)
		bad_elf(path, "symbol table (section %zu) names its strings in section %u, not a string table", ndx,
			sh->sh_link);
	Elf_Data *d = elf_getdata(scn, NULL);
	if (!d)
		bad_elf(path, "symbol table (section %zu): %s", ndx, elf_errmsg(-1));
	for (size_t i = 0; i < sh->sh_size / entsize; i++) {
		GElf_Sym s;
		if (!gelf_getsym(d, i, &s))
			bad_elf(path, "symbol %zu of section %zu: %s", i, ndx, elf_errmsg(-1));
		if (GELF_ST_TYPE(s.st_info) != STT_FUNC || !s.st_size)
			continue;
		const char *name = elf_strptr(e, sh->sh_link, s.st_name);
		if (!name)
			bad_elf(path, "symbol %zu of section %zu: its name (offset %u) is not in string table %u", i, ndx,
				s.st_name, sh->sh_link);
		if (s.st_value + s.st_size < s.st_value)
			bad_elf(path, "function %s: %llu bytes at %#llx pass the end of the address space", name,
				(unsigned long long)s.st_size, (unsigned long long)s.st_value);
		if (*n == *cap) {
			*cap = *cap ? 2 * *cap : 256;
			if (!(*syms = realloc(*syms, *cap * sizeof(**syms))))
				bad_elf(path, "out of memory for %zu symbols", *cap);
		}
		char *copy = strdup(name);
		if (!copy)
			bad_elf(path, "out of memory for symbol names");
		(*syms)[(*n)++] = (struct sym){ s.st_value, s.st_value + s.st_size, copy };
	}
}

/* host/symbols.h */
struct sym *load_symbols(const char *path, size_t *n)
{
	struct sym *syms = NULL;
	size_t cap = 0;
	int fd = open(path, O_RDONLY);

	*n = 0;
	if (fd < 0) {
		fprintf(stderr, "pmuctl: no symbols from %s: %s\n", path, strerror(errno));
		return NULL;
	}
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	GElf_Ehdr eh;
	size_t nscn;
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh))
		bad_elf(path, "not an ELF file%s%s", e ? "" : ": ", e ? "" : elf_errmsg(-1));
	/* libelf reads a section header table that is not in the file as none. */
	if (elf_getshdrnum(e, &nscn) != 0 || (eh.e_shoff && !nscn))
		bad_elf(path, "its section headers (at %#llx) are not in the file", (unsigned long long)eh.e_shoff);
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			bad_elf(path, "section %zu: %s", elf_ndxscn(scn), elf_errmsg(-1));
		if (sh.sh_type == SHT_SYMTAB)
			add_symtab(path, e, scn, &sh, &syms, n, &cap);
	}
	if (elf_errno())
		bad_elf(path, "its sections: %s", elf_errmsg(-1));
	if (!cap)
		fprintf(stderr, "pmuctl: %s has no function symbols: samples show as [unknown]\n", path);
	elf_end(e);
	close(fd);
	if (*n)
		qsort(syms, *n, sizeof(*syms), by_start);
	return syms;
}

/*
 * The card kernel's functions from its System.map (`nm -n` of kernel.elf:
 * "ADDRESS TYPE NAME" lines, by address): text symbols, each up to the
 * next. NULL (and none) if the file cannot be read: kernel samples are then
 * just [kernel].
 */
static struct sym *load_system_map(const char *path, size_t *n)
{
	FILE *f = fopen(path, "r");
	struct sym *syms = NULL;
	size_t cap = 0;
	char line[512], type, name[256];
	unsigned long long a;

	*n = 0;
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3 || !strchr("tTwW", type))
			continue;
		if (*n == cap && !(syms = realloc(syms, (cap = cap ? 2 * cap : 1024) * sizeof(*syms))))
			bad_elf(path, "out of memory for %zu symbols", cap);
		if (*n)
			syms[*n - 1].end = a > syms[*n - 1].start ? a : syms[*n - 1].start + 1;
		char *copy = strdup(name);
		if (!copy)
			bad_elf(path, "out of memory for symbol names");
		syms[(*n)++] = (struct sym){ a, a + 1, copy };
	}
	fclose(f);
	return syms;
}

/* The function holding address `a` (syms sorted by address), or "[unknown]". */
static const char *symbol_at(const struct sym *syms, size_t n, uint64_t a)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (a < syms[mid].start)
			hi = mid;
		else if (a >= syms[mid].end)
			lo = mid + 1;
		else
			return syms[mid].name;
	}
	return "[unknown]";
}

/*
 * "prog;outermost;...;caller;function" of a sample: its chain from the
 * outermost frame in, each return address named by the call before it
 * (address - 1, as perf does), then the sampled function. Just the
 * function without --folded's stacks.
 */
/* --sort's keys, perf's names: what a sample is listed by. */
enum sort_key { KEY_SYM, KEY_SRCLINE, KEY_DSO, KEY_COMM, SORT_KEYS };

struct symbols {
	struct sym *prog, *kernel;
	size_t nprog, nkernel;
	struct srclines *dwarf; /* the program's DWARF, if it has any */
	int keys[SORT_KEYS];    /* --sort's keys in order (enum sort_key); sym alone by default */
	int nkeys;
	int lines;              /* srcline among them: the sampled line */
	int by_sym;             /* sym among them */
	int inlines;            /* --folded: the functions inlined at each frame, as frames "NAME_[i]" */
};

#define INLINE_DEPTH 8 /* inlined frames shown at one address, the innermost ones */

static const char *const key_names[SORT_KEYS] = { "sym", "srcline", "dso", "comm" };
static const char *const key_titles[SORT_KEYS] = { "Symbol", "Source:Line", "Shared Object", "Command" };

/* --sort KEY[,KEY...] into sy's keys; 0, or -1 said which key is not one. */
static int parse_sort(const char *list, struct symbols *sy)
{
	char *copy = strdup(list), *save = NULL;

	sy->nkeys = 0;
	for (char *k = copy ? strtok_r(copy, ",", &save) : NULL; k; k = strtok_r(NULL, ",", &save)) {
		int i = 0;
		while (i < SORT_KEYS && strcmp(k, key_names[i]))
			i++;
		if (i == SORT_KEYS || sy->nkeys == SORT_KEYS) {
			fprintf(stderr, "pmuctl: report: --sort %s: '%s' is not a key; keys are sym, srcline, dso and comm, "
				"comma-separated (at most 4)\n", list, k);
			free(copy);
			return -1;
		}
		sy->lines |= i == KEY_SRCLINE;
		sy->by_sym |= i == KEY_SYM;
		sy->keys[sy->nkeys++] = i;
	}
	free(copy);
	if (!sy->nkeys) {
		fprintf(stderr, "pmuctl: report: --sort '%s': no key; keys are sym, srcline, dso and comm\n", list);
		return -1;
	}
	return 0;
}

/*
 * The function holding address a of a sample at privilege cpl; kernel ones as
 * flame graphs' "NAME_[k]"; with sy->inlines, user ones followed by the
 * functions inlined there, outermost first, as ";NAME_[i]" (flamegraph.pl's
 * mark of an inlined frame).
 */
static const char *frame_name(const struct symbols *sy, int cpl, uint64_t a, char *buf, size_t len)
{
	const char *inl[INLINE_DEPTH];
	int n;

	if (cpl && (!sy->inlines || !(n = srcline_inlines(sy->dwarf, a, inl, INLINE_DEPTH))))
		return symbol_at(sy->prog, sy->nprog, a);
	if (cpl) {
		size_t at = snprintf(buf, len, "%s", symbol_at(sy->prog, sy->nprog, a));
		while (n-- > 0 && at < len)
			at += snprintf(buf + at, len - at, ";%s_[i]", inl[n]);
		return buf;
	}
	if (!sy->kernel)
		return "[kernel]";
	snprintf(buf, len, "%s_[k]", symbol_at(sy->kernel, sy->nkernel, a));
	return buf;
}

/*
 * r's stack as report lists it, into out, a folded one rooted at `root` (the
 * program, or --per-thread's COMM-TID); 1 if its line was asked for and the
 * DWARF has none, else 0.
 */
static int stack_of(const struct symbols *sy, const struct rec_sample *r, const char *prog, const char *root,
		    int folded, char *out, size_t len)
{
	char name[300], line[300], leaf[1200];
	size_t at = 0, n = 0;
	int no_line = 0;

	leaf[0] = 0;
	for (int k = 0; k < sy->nkeys && n < sizeof(leaf); k++) {
		const char *v = NULL;
		switch (sy->keys[k]) {
		case KEY_SRCLINE:
			if (r->s.cpl) {
				v = srcline_at(sy->dwarf, r->s.rip, line, sizeof(line));
				no_line = v != line;
				break;
			}
			if (sy->by_sym) /* a kernel sample has no line (no kernel DWARF): its function, once */
				continue;
			/* fall through */
		case KEY_SYM: v = frame_name(sy, r->s.cpl, r->s.rip, name, sizeof(name)); break;
		case KEY_DSO: v = r->s.cpl ? prog : "[kernel.kallsyms]"; break; /* perf's name for the kernel */
		default: v = prog; break; /* KEY_COMM: every sample is the program's task */
		}
		n += snprintf(leaf + n, sizeof(leaf) - n, "%s%s", k ? " " : "", v);
	}
	out[0] = 0;
	if (folded) {
		char caller[300];
		at += snprintf(out + at, len - at, "%s;", root);
		for (int i = r->s.nframes - 1; i >= 0 && at < len; i--)
			at += snprintf(out + at, len - at, "%s;",
				       frame_name(sy, r->s.cpl, r->chain[i] - 1, caller, sizeof(caller)));
	}
	if (at < len)
		snprintf(out + at, len - at, "%s", leaf);
	return no_line;
}

struct hit {
	char *name;
	uint64_t count;
	uint64_t counted[PMU_SAMPLE_COUNTERS]; /* a cpu-clock recording: the counted events' counts at its samples */
};

/*
 * A cpu-clock recording's counted events (record -e cpu-clock,EV[,EV]):
 * their names from the -e list, and each sample's counts, the counters'
 * rise since the CPU's sample before (from 0 at the start, 40 bits
 * wrapping), which perf report gives each event's report by
 * (PERF_SAMPLE_READ): the events' shares per row, beside the samples'.
 */
struct counted {
	int n;
	char name[PMU_SAMPLE_COUNTERS][64];
	uint64_t last[CPUSET_MAX][PMU_SAMPLE_COUNTERS], total[PMU_SAMPLE_COUNTERS];
};

static void counted_names(const struct rec_header *h, struct counted *c)
{
	char list[sizeof(h->event) + 1];

	c->n = 0;
	if (!rec_timed(h))
		return;
	snprintf(list, sizeof(list), "%s", h->event + 9);
	for (char *save, *e = strtok_r(list, ",", &save); e && c->n < PMU_SAMPLE_COUNTERS; e = strtok_r(NULL, ",", &save))
		snprintf(c->name[c->n++], sizeof(c->name[0]), "%s", e);
}

/* Counted event k's column: its name, or "100.00%", whichever is wider. */
static int counted_width(const struct counted *c, int k)
{
	int n = (int)strlen(c->name[k]);
	return n > 7 ? n : 7;
}

/* Sample r's counts of the counted events into out[], from the CPU's last ones. */
static void counted_of(struct counted *c, const struct rec_sample *r, uint64_t out[PMU_SAMPLE_COUNTERS])
{
	for (int k = 0; k < c->n; k++) {
		uint64_t *last = r->s.cpu < CPUSET_MAX ? &c->last[r->s.cpu][k] : NULL;
		out[k] = last ? (r->s.ctr[k] - *last) & ((1ULL << PMU_SAMPLE_CTR_BITS) - 1) : 0;
		if (last)
			*last = r->s.ctr[k];
		c->total[k] += out[k];
	}
}

static int by_count(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;
	return x->count < y->count ? 1 : x->count > y->count ? -1 : strcmp(x->name, y->name);
}

static void hex(const uint8_t *id, uint32_t len, char *out)
{
	for (uint32_t i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * len] = 0;
}

/* host/symbols.h */
const char *program_file(const struct rec_header *h, const char *symfs, char *buf, size_t len)
{
	const char *path = h->path, *base = strrchr(h->path, '/') ? strrchr(h->path, '/') + 1 : h->path;

	if (symfs) {
		snprintf(buf, len, "%s%s", symfs, h->path);
		if (access(buf, R_OK) != 0)
			snprintf(buf, len, "%s/%s", symfs, base);
		path = buf;
	}
	uint8_t id[REC_BUILD_ID_MAX];
	uint32_t n = rec_build_id(path, id);
	if (h->build_id_len && access(path, R_OK) == 0 && (n != h->build_id_len || memcmp(id, h->build_id, n))) {
		char want[2 * REC_BUILD_ID_MAX + 1], have[2 * REC_BUILD_ID_MAX + 1];
		hex(h->build_id, h->build_id_len, want);
		hex(id, n, have);
		fprintf(stderr, "pmuctl: report: %s is not the program recorded: its build ID is %s, the "
			"recording's %s (rebuilt since?); --symfs DIR names a directory that holds the one recorded\n",
			path, n ? have : "(none)", want);
		exit(1);
	}
	return path;
}

/* build/System.map, beside build/pmuctl: the kernel built with this pmuctl. */
static const char *default_system_map(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - sizeof("System.map"));
	char *slash;

	if (n <= 0 || !(slash = memrchr(buf, '/', n)))
		return "System.map";
	strcpy(slash + 1, "System.map");
	return buf;
}

/* --svg FILE: the folded stacks as a flame graph (host/flame.c). */
static int report_svg(const char *path, const struct rec_header *h, const struct hit *hits, size_t n)
{
	struct flame_stack *s = calloc(n ? n : 1, sizeof(*s));
	char title[sizeof(h->path) + sizeof(h->event) + 64];

	if (!s) {
		fprintf(stderr, "pmuctl: report: out of memory for %zu stacks\n", n);
		return 1;
	}
	for (size_t i = 0; i < n; i++)
		s[i] = (struct flame_stack){ hits[i].name, hits[i].count };
	snprintf(title, sizeof(title), "%s: %s every %llu %s", h->path, h->event, (unsigned long long)h->period,
		 rec_period_unit(h));
	int rc = flame_svg(path, title, s, n);
	free(s);
	return rc || !n;
}

enum { OPT_FOLDED = 256, OPT_TO_PERF, OPT_SYMFS, OPT_KALLSYMS, OPT_SORT, OPT_SVG, OPT_STDIO, OPT_PER_THREAD };

/* report's options, as its table stores them. */
static struct {
	const char *file, *to_perf, *svg, *symfs, *kallsyms, *sort;
	int folded, nr_samples, stdio, per_thread;
} opt = { .file = "pmuos.data", .sort = "sym" };

const struct cli_opt report_opts[] = {
	{ "input", 'i', "FILE", "the recording (default pmuos.data)", .str = &opt.file },
	{ "stdio", OPT_STDIO, NULL, "perf's text output: pmuctl report's only one", .flag = &opt.stdio },
	{ "show-nr-samples", 'n', NULL, "a column of sample counts beside the percentages", .flag = &opt.nr_samples },
	{ "folded", OPT_FOLDED, NULL, "program;outermost;...;function count stacks, for flame-graph tools",
	  .flag = &opt.folded },
	{ "to-perf", OPT_TO_PERF, "PERF.DATA", "write the recording as perf.data (perf report -i, perf script -i, hotspot)",
	  .str = &opt.to_perf },
	{ "symfs", OPT_SYMFS, "DIR", "look for the recorded program under DIR, as perf's --symfs", .str = &opt.symfs },
	{ "kallsyms", OPT_KALLSYMS, "MAP", "kernel symbols from MAP (default: the System.map beside pmuctl)",
	  .str = &opt.kallsyms },
	{ "sort", OPT_SORT, "KEYS", "KEY[,KEY...] of sym, srcline (file.c:LINE from the program's DWARF), dso "
				    "(the program or [kernel.kallsyms]) and comm (default sym)", .str = &opt.sort },
	{ "svg", OPT_SVG, "FILE", "write a flame graph of the stacks to FILE (SVG, flamegraph.pl's layout, click to zoom)",
	  .str = &opt.svg },
	{ "per-thread", OPT_PER_THREAD, NULL, "with --folded or --svg: each stack rooted at its thread, COMM-TID (perf.data's "
	  "tids), a flame graph's tower per thread", .flag = &opt.per_thread },
	{ 0 },
};

int cmd_report(struct card *c, int argc, char **argv)
{
	char path[8192], map[4096];

	(void)c;
	while (cli_next(argc, argv) != -1) /* the table stores every option */
		;
	const char *file = opt.file, *to_perf = opt.to_perf, *svg = opt.svg, *symfs = opt.symfs;
	const char *kallsyms = opt.kallsyms, *sort = opt.sort;
	int folded = opt.folded || svg, nr_samples = opt.nr_samples; /* --svg draws the folded stacks */
	if (optind < argc)
		return usage_arg("unexpected argument", argv[optind]);
	if (opt.per_thread && !folded)
		return usage_arg("--per-thread roots the folded stacks at their threads: give --folded or --svg", NULL);
	if (to_perf)
		return perf_convert(file, to_perf, kallsyms ? kallsyms : default_system_map(map, sizeof(map)));
	struct symbols sy = { 0 };
	if (parse_sort(sort, &sy) != 0)
		return 2;
	int lines = sy.lines;
	struct rec_header h;
	FILE *f = rec_open(file, &h);
	if (!f)
		return 1;
	sy.prog = load_symbols(program_file(&h, symfs, path, sizeof(path)), &sy.nprog);
	sy.inlines = folded;
	if (lines || folded) /* a program without DWARF: no lines (said), no inlined frames (not said) */
		sy.dwarf = srcline_open(program_file(&h, symfs, path, sizeof(path)), !lines);
	sy.kernel = load_system_map(kallsyms ? kallsyms : default_system_map(map, sizeof(map)), &sy.nkernel);
	if (kallsyms && !sy.kernel)
		fprintf(stderr, "pmuctl: report: no kernel symbols from %s: %s\n", kallsyms, strerror(errno));
	struct hit *hits = NULL;
	size_t nhits = 0;
	uint64_t total = 0, no_line = 0;
	struct rec_sample r;
	const char *prog = strrchr(h.program, '/') ? strrchr(h.program, '/') + 1 : h.program;
	char stack[(PMU_CALLCHAIN_MAX + 2) * 64];
	int st;
	static struct counted cn;
	counted_names(&h, &cn);
	while ((st = rec_next(f, file, &r)) == 1) {
		uint64_t counts[PMU_SAMPLE_COUNTERS];
		counted_of(&cn, &r, counts);
		char root[300];
		uint32_t tid = rec_tid(&h, r.s.cpu);
		if (opt.per_thread) /* tid 0: perf's idle task */
			snprintf(root, sizeof(root), "%s-%u", tid ? prog : "swapper", tid);
		no_line += stack_of(&sy, &r, prog, opt.per_thread ? root : prog, folded, stack, sizeof(stack));
		size_t i = 0;
		while (i < nhits && strcmp(hits[i].name, stack))
			i++;
		if (i == nhits) {
			if (!(hits = realloc(hits, ++nhits * sizeof(*hits))) || !(hits[i].name = strdup(stack))) {
				fprintf(stderr, "pmuctl: report: out of memory for %zu stacks\n", nhits);
				return 1;
			}
			hits[i].count = 0;
			memset(hits[i].counted, 0, sizeof(hits[i].counted));
		}
		hits[i].count++;
		for (int k = 0; k < cn.n; k++)
			hits[i].counted[k] += counts[k];
		total++;
	}
	fclose(f);
	/* Without DWARF at all srcline_open said so; with newlib's only (it is built -g), this says it. */
	if (sy.dwarf && no_line)
		fprintf(stderr, "pmuctl: report: %llu of %llu samples have no source line ([unknown]): was the "
			"program's own code built without -g? (pmuos-cc -g)\n", (unsigned long long)no_line,
			(unsigned long long)total);
	srcline_close(sy.dwarf);
	if (st < 0)
		return 1;
	qsort(hits, nhits, sizeof(*hits), by_count);
	if (svg)
		return report_svg(svg, &h, hits, nhits);
	if (!folded) {
		printf("# %llu samples of %s every %llu %s, %llu lost; program %s\n# Overhead%s",
		       (unsigned long long)total, h.event, (unsigned long long)h.period, rec_period_unit(&h),
		       (unsigned long long)h.lost, h.path, nr_samples ? "  Samples" : "");
		for (int k = 0; k < cn.n; k++) /* perf report --group's columns: each counted event's share */
			printf("  %*s", counted_width(&cn, k), cn.name[k]);
		printf(" ");
		for (int k = 0; k < sy.nkeys; k++)
			printf(" %s", key_titles[sy.keys[k]]);
		printf("\n");
	}
	for (size_t i = 0; i < nhits; i++) {
		if (folded) /* flame-graph tools take "stack count" lines */
			printf("%s %llu\n", hits[i].name, (unsigned long long)hits[i].count);
		else {
			printf("%9.2f%%  ", 100.0 * hits[i].count / total);
			if (nr_samples)
				printf("%7llu  ", (unsigned long long)hits[i].count);
			for (int k = 0; k < cn.n; k++)
				printf("%*.2f%%  ", counted_width(&cn, k) - 1,
				       cn.total[k] ? 100.0 * hits[i].counted[k] / cn.total[k] : 0.0);
			printf("%s\n", hits[i].name);
		}
	}
	return total ? 0 : 1;
}
