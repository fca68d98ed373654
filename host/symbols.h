/* A recorded program's function symbols (host/builtin/report.c), shared by report and annotate. */
#ifndef HOST_SYMBOLS_H
#define HOST_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "host/record.h"

struct sym {
	uint64_t start, end; /* [start, end): the function's bytes */
	char *name;
};

/*
 * The function symbols of ELF file `path` (libelf), sorted by address, their
 * number in *n. A file that cannot be opened gives none (and a warning); one
 * that is not an ELF file, or a malformed one, exits naming what is wrong.
 */
struct sym *load_symbols(const char *path, size_t *n);

/*
 * The program file to take symbols from: the recorded absolute path, under
 * `symfs` if given (as perf's --symfs; else DIR/its base name), in buf or
 * h->path. Exits naming both build IDs if the file is not the program
 * recorded (rebuilt since): its symbols would name the wrong functions.
 */
const char *program_file(const struct rec_header *h, const char *symfs, char *buf, size_t len);

#endif
