/*
 * Source lines of a program's addresses (pmuctl report --sort srcline), from
 * its DWARF line tables through elfutils' libdw: the compilation unit whose
 * ranges hold an address (dwarf_haspc: clang writes no .debug_aranges for
 * dwarf_addrdie to use), then its line-table row (dwarf_getsrc_die). See
 * host/srcline.h.
 */
#define _GNU_SOURCE
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

struct srclines *srcline_open(const char *path)
{
	struct srclines *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->fd = open(path, O_RDONLY);
	if (s->fd < 0 || !(s->dw = dwarf_begin(s->fd, DWARF_C_READ))) {
		fprintf(stderr, "pmuctl: report: %s has no DWARF line tables (build it with -g): lines show as "
			"[unknown]\n", path);
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

const char *srcline_at(struct srclines *s, uint64_t addr, char *buf, size_t len)
{
	Dwarf_Die cu;
	Dwarf_Line *line;
	const char *file;
	int n;

	if (!s || !unit_of(s->dw, addr, &cu) || !(line = dwarf_getsrc_die(&cu, addr)) ||
	    !(file = dwarf_linesrc(line, NULL, NULL)) || dwarf_lineno(line, &n) != 0)
		return "[unknown]";
	snprintf(buf, len, "%s:%d", strrchr(file, '/') ? strrchr(file, '/') + 1 : file, n);
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
