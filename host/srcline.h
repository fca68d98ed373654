/* Source lines of a program's addresses (host/srcline.c: DWARF through libdw). */
#ifndef HOST_SRCLINE_H
#define HOST_SRCLINE_H

#include <stddef.h>
#include <stdint.h>

struct srclines;

/* The line tables of ELF file `path`; NULL (said on stderr unless quiet) if it has none or cannot be read. */
struct srclines *srcline_open(const char *path, int quiet);
/* "file.c:LINE" (the file's base name) of `addr` into buf, returned; "[unknown]" if no row holds it (or s is NULL). */
const char *srcline_at(struct srclines *s, uint64_t addr, char *buf, size_t len);
/*
 * The source file of `addr` (as its line table names it: a full path when
 * the compiler recorded the directory; valid until srcline_close) and its
 * line: 0, or -1 if no row holds it (or s is NULL).
 */
int srcline_lookup(struct srclines *s, uint64_t addr, const char **file, int *line);
/* The lowest and highest line of `file` whose code lies in [lo, hi) (one unit's): 0, or -1 if none does. */
int srcline_span(struct srclines *s, uint64_t lo, uint64_t hi, const char *file, int *first, int *last);
/* `file` of srcline_lookup(addr) as a path to open: in buf, joined to its unit's DW_AT_comp_dir, if relative. */
const char *srcline_path(struct srclines *s, uint64_t addr, const char *file, char *buf, size_t len);
/*
 * The functions inlined at `addr` into names[0..max), innermost first (valid
 * until srcline_close); how many: 0 if none, or no unit holds addr.
 */
int srcline_inlines(struct srclines *s, uint64_t addr, const char **names, int max);
void srcline_close(struct srclines *s);

#endif
