/* Text the card wrote, printed bounded and escaped; see host/cardtext.h. */
#include "host/cardtext.h"

size_t print_card_text(FILE *f, const char *s, size_t n)
{
	size_t out = 0;

	for (size_t i = 0; i < n && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		int r;

		if (c == '\\')
			r = fputs("\\\\", f) < 0 ? -1 : 2;
		else if (c >= 0x20 && c < 0x7f)
			r = fputc(c, f) < 0 ? -1 : 1;
		else
			r = fprintf(f, "\\x%02x", c);
		if (r < 0)
			break;
		out += (size_t)r;
	}
	return out;
}
