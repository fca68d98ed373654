/* Source lines of a program's addresses (host/srcline.c: DWARF through libdw). */
#ifndef HOST_SRCLINE_H
#define HOST_SRCLINE_H

#include <stddef.h>
#include <stdint.h>

struct srclines;

/* The line tables of ELF file `path`; NULL (said on stderr) if it has none or cannot be read. */
struct srclines *srcline_open(const char *path);
/* "file.c:LINE" (the file's base name) of `addr` into buf, returned; "[unknown]" if no row holds it (or s is NULL). */
const char *srcline_at(struct srclines *s, uint64_t addr, char *buf, size_t len);
void srcline_close(struct srclines *s);

#endif
