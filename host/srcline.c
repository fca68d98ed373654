/*
 * Source lines of a program's addresses (pmuctl report --sort srcline), from
 * its DWARF line tables through elfutils' libdw: the compilation unit whose
 * ranges hold an address (dwarf_haspc: clang writes no .debug_aranges for
 * dwarf_addrdie to use), then its line-table row (dwarf_getsrc_die); the
 * functions inlined there from the unit's scopes (dwarf_getscopes:
 * DW_TAG_inlined_subroutine, named through DW_AT_abstract_origin). See
 * host/srcline.h.
 */
#define _GNU_SOURCE
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/srcline.h"

struct srclines {
	int fd;
	Dwarf *dw;
};

struct srclines *srcline_open(const char *path, int quiet)
{
	struct srclines *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->fd = open(path, O_RDONLY);
	if (s->fd < 0 || !(s->dw = dwarf_begin(s->fd, DWARF_C_READ))) {
		if (!quiet)
				fprintf(stderr, "pmuctl: report: %s has no DWARF line tables (build it with -g): lines show "
				"as [unknown]\n", path);
		if (s->fd >= 0)
			close(s->fd);
		free(s);
		return NULL;
	}
	return s;
}

/* The compilation unit whose code holds addr into *cu; false if none does. */
static bool unit_of(Dwarf *dw, uint64_t addr, Dwarf_Die *cu)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		if (dwarf_offdie(dw, off + hsize, cu) && dwarf_haspc(cu, addr) > 0)
			return true;
		off = next;
	}
	return false;
}

int srcline_lookup(struct srclines *s, uint64_t addr, const char **file, int *line)
{
	Dwarf_Die cu;
	Dwarf_Line *l;

	if (!s || !unit_of(s->dw, addr, &cu) || !(l = dwarf_getsrc_die(&cu, addr)) ||
	    !(*file = dwarf_linesrc(l, NULL, NULL)) || dwarf_lineno(l, line) != 0)
		return -1;
	return 0;
}

const char *srcline_at(struct srclines *s, uint64_t addr, char *buf, size_t len)
{
	const char *file;
	int n;

	if (srcline_lookup(s, addr, &file, &n) != 0)
		return "[unknown]";
	snprintf(buf, len, "%s:%d", strrchr(file, '/') ? strrchr(file, '/') + 1 : file, n);
	return buf;
}

int srcline_span(struct srclines *s, uint64_t lo, uint64_t hi, const char *file, int *first, int *last)
{
	Dwarf_Die cu;
	Dwarf_Lines *lines;
	size_t n;

	*first = *last = 0;
	if (!s || !unit_of(s->dw, lo, &cu) || dwarf_getsrclines(&cu, &lines, &n) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr a;
		const char *f;
		int line;
		if (!l || dwarf_lineaddr(l, &a) != 0 || a < lo || a >= hi || !(f = dwarf_linesrc(l, NULL, NULL)) ||
		    strcmp(f, file) || dwarf_lineno(l, &line) != 0 || line <= 0)
			continue;
		if (!*first || line < *first)
			*first = line;
		if (line > *last)
			*last = line;
	}
	return *first ? 0 : -1;
}

int srcline_inlines(struct srclines *s, uint64_t addr, const char **names, int max)
{
	Dwarf_Die cu, *scopes = NULL;
	int n, k = 0;

	if (!s || !unit_of(s->dw, addr, &cu) || (n = dwarf_getscopes(&cu, addr, &scopes)) <= 0)
		return 0;
	for (int i = 0; i < n && k < max; i++) {
		Dwarf_Attribute at;
		const char *name;
		if (dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine &&
		    (name = dwarf_formstring(dwarf_attr_integrate(&scopes[i], DW_AT_name, &at))))
			names[k++] = name;
	}
	free(scopes);
	return k;
}

const char *srcline_path(struct srclines *s, uint64_t addr, const char *file, char *buf, size_t len)
{
	Dwarf_Die cu;
	Dwarf_Attribute at;
	const char *dir;

	if (file[0] == '/' || !unit_of(s->dw, addr, &cu) || !(dir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &at))))
		return file;
	snprintf(buf, len, "%s/%s", dir, file);
	return buf;
}

void srcline_close(struct srclines *s)
{
	if (!s)
		return;
	dwarf_end(s->dw);
	close(s->fd);
	free(s);
}
