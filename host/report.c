/* pmuctl report: the hottest functions of a recording, named from the program's ELF symbols (libelf). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <getopt.h>
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

/* The program's function symbols (elfutils libelf), sorted by address. */
static struct sym *load_symbols(const char *path, size_t *n)
{
	struct sym *syms = NULL;
	size_t cap = 0;
	int fd = open(path, O_RDONLY);

	*n = 0;
	elf_version(EV_CURRENT);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	for (Elf_Scn *scn = NULL; e && (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			if (!gelf_getsym(d, i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC || !s.st_size)
				continue;
			if (*n == cap)
				syms = realloc(syms, (cap = cap ? 2 * cap : 256) * sizeof(*syms));
			syms[(*n)++] = (struct sym){ s.st_value, s.st_value + s.st_size,
						     strdup(elf_strptr(e, sh.sh_link, s.st_name)) };
		}
	}
	if (!e)
		fprintf(stderr, "pmuctl: no symbols from %s: %s\n", path, fd < 0 ? strerror(errno) : elf_errmsg(-1));
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
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

int cmd_report(int argc, char **argv)
{
	static const struct option longs[] = { { "folded", no_argument, NULL, 'f' }, { 0 } };
	const char *file = "pmuos.data";
	int folded = 0, o;

	optind = 1;
	while ((o = getopt_long(argc, argv, "i:", longs, NULL)) != -1) {
		if (o == 'i')
			file = optarg;
		else if (o == 'f')
			folded = 1;
		else
			return usage();
	}
	FILE *f = fopen(file, "rb");
	struct rec_header h;
	if (!f || fread(&h, sizeof(h), 1, f) != 1 || memcmp(h.magic, REC_MAGIC, 8) || h.version != 1) {
		fprintf(stderr, "pmuctl: %s is not a pmuctl recording\n", file);
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
			hits = realloc(hits, ++nhits * sizeof(*hits));
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
