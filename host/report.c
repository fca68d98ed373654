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

#include "host/pmuctl.h"
#include "host/record.h"
#include <pmuos/sample.h>

struct sym {
	uint64_t start, end;
	char *name;
};

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

/*
 * The program's function symbols (elfutils libelf), sorted by address. A
 * file that cannot be opened gives none (and a warning); one that is not
 * an ELF file, or a malformed one, is an error naming what is wrong.
 */
static struct sym *load_symbols(const char *path, size_t *n)
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

static const char *symbolize(const struct sym *syms, size_t n, const struct pmu_sample *s)
{
	if (s->cpl == 0)
		return "[kernel]";
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s->rip < syms[mid].start)
			hi = mid;
		else if (s->rip >= syms[mid].end)
			lo = mid + 1;
		else
			return syms[mid].name;
	}
	return "[unknown]";
}

struct hit {
	const char *name;
	uint64_t count;
};

static int by_count(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;
	return x->count < y->count ? 1 : x->count > y->count ? -1 : strcmp(x->name, y->name);
}

enum { OPT_FOLDED = 256 };

const struct cli_opt report_opts[] = {
	{ "input", 'i', "FILE", "the recording (default pmuos.data)" },
	{ "folded", OPT_FOLDED, NULL, "program;function count lines, for flame-graph tools" },
	{ 0 },
};

int cmd_report(struct card *c, int argc, char **argv)
{
	const char *file = "pmuos.data";
	int folded = 0, o;

	(void)c;
	while ((o = cli_next(argc, argv)) != -1) {
		if (o == 'i')
			file = optarg;
		else
			folded = 1;
	}
	if (optind < argc)
		return usage();
	FILE *f = fopen(file, "rb");
	struct rec_header h;
	if (!f) {
		fprintf(stderr, "pmuctl: report: cannot open %s: %s%s\n", file, strerror(errno),
			errno == ENOENT ? " (pmuctl record writes it; -i FILE names another)" : "");
		return 1;
	}
	if (fread(&h, sizeof(h), 1, f) != 1 || memcmp(h.magic, REC_MAGIC, 8) || h.version != 1) {
		fprintf(stderr, "pmuctl: %s is not a pmuctl recording\n", file);
		fclose(f);
		return 1;
	}
	h.program[sizeof(h.program) - 1] = h.event[sizeof(h.event) - 1] = 0;
	size_t nsyms;
	struct sym *syms = load_symbols(h.program, &nsyms);
	struct hit *hits = NULL;
	size_t nhits = 0;
	uint64_t total = 0;
	struct pmu_sample s;
	while (fread(&s, sizeof(s), 1, f) == 1) {
		const char *name = symbolize(syms, nsyms, &s);
		size_t i = 0;
		while (i < nhits && strcmp(hits[i].name, name))
			i++;
		if (i == nhits) {
			if (!(hits = realloc(hits, ++nhits * sizeof(*hits)))) {
				fprintf(stderr, "pmuctl: report: out of memory for %zu symbols\n", nhits);
				return 1;
			}
			hits[i] = (struct hit){ name, 0 };
		}
		hits[i].count++;
		total++;
	}
	fclose(f);
	qsort(hits, nhits, sizeof(*hits), by_count);
	const char *prog = strrchr(h.program, '/') ? strrchr(h.program, '/') + 1 : h.program;
	if (!folded)
		printf("# %llu samples of %s every %llu events, %llu lost; program %s\n# Overhead  Symbol\n",
		       (unsigned long long)total, h.event, (unsigned long long)h.period,
		       (unsigned long long)h.lost, h.program);
	for (size_t i = 0; i < nhits; i++) {
		if (folded) /* one frame per sample: flame-graph tools take "stack count" lines */
			printf("%s;%s %llu\n", prog, hits[i].name, (unsigned long long)hits[i].count);
		else
			printf("%9.2f%%  %s\n", 100.0 * hits[i].count / total, hits[i].name);
	}
	return total ? 0 : 1;
}
