/*
 * `pmuctl report --svg FILE`: a flame graph of folded stacks, in the SVG
 * layout of Brendan Gregg's flamegraph.pl (the standard flame graph: one
 * box per frame, width its share of the samples, callers below their
 * callees, siblings in alphabetical order, warm colours from the name),
 * self-contained: hovering a box shows its name, samples and share; a click
 * zooms to it (labels cut again to the new widths), Reset Zoom or the
 * bottom box zooms out; Search (Ctrl-F) colours the frames matching a
 * regular expression and says the share of samples they hold. The view is
 * kept in the address (?x=&y=, ?s=) as flamegraph.pl keeps it. No file is
 * read at view time.
 */
#ifndef HOST_FLAME_H
#define HOST_FLAME_H

#include <stddef.h>
#include <stdint.h>

struct flame_stack {
	const char *stack; /* "root;caller;...;leaf" (report --folded's stacks) */
	uint64_t count;    /* samples, > 0 */
};

/*
 * Writes the flame graph of s[0..n) to `path` under `title`. Returns 0, or
 * -1 with a message on stderr naming the file (cannot write, or out of memory).
 */
int flame_svg(const char *path, const char *title, const struct flame_stack *s, size_t n);

#endif
