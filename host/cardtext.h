/* Text the card wrote (its version string, its status characters), printed safely on the host. */
#ifndef HOST_CARDTEXT_H
#define HOST_CARDTEXT_H

#include <stddef.h>
#include <stdio.h>

/*
 * Prints the card's text s to f: at most n bytes, fewer if a NUL comes
 * first (a card's fixed-size field need not end in one). Printable ASCII
 * (0x20-0x7E) goes out as it is but for the backslash, written "\\"; every
 * other byte (control characters such as ESC, DEL, bytes from 0x80) as
 * "\xHH", so what a card writes cannot move the terminal's cursor, change
 * its colours or pass for pmuctl's own words. Returns the bytes printed.
 */
size_t print_card_text(FILE *f, const char *s, size_t n);

#endif
