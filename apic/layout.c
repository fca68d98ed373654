/* The local APIC's ID layouts and the boot switch between them; see apic/regs.h. */
#include "apic/regs.h"
#include "lib/lib.h"

const struct apic_layout apic_layout_xapic = {
	.name = "xapic", .id_shift = 24, .id_bits = 8, .dest_shift = 24, .dest_bits = 8,
	.max_id = 0xfe, /* 0xFF: all processors (SDM Vol. 3A, 10.6.2.1) */
};

/*
 * 9 bits of ID: 0..511. What a 16-bit destination of 0xFFFF does is not
 * public; no KNC product has more than 244 threads (IDs up to 243).
 */
const struct apic_layout apic_layout_knc = {
	.name = "knc", .id_shift = 23, .id_bits = 9, .dest_shift = 16, .dest_bits = 16,
	.max_id = 0x1ff,
};

static const struct apic_layout *const layouts[] = { &apic_layout_xapic, &apic_layout_knc };

const struct apic_layout *apic_layout_choose(const char *cmdline, const char **bad, size_t *bad_len)
{
	const char *v;
	size_t n;

	*bad = NULL;
	*bad_len = 0;
	if (!cmdline_find(cmdline, "pmuos.apic", &v, &n))
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(layouts); i++)
		if (n == strlen(layouts[i]->name) && !strncmp(v, layouts[i]->name, n))
			return layouts[i];
	*bad = v;
	*bad_len = n;
	return NULL;
}

const struct apic_layout *apic_layout_matching(uint32_t reg, uint32_t initial_id)
{
	for (size_t i = 0; i < ARRAY_SIZE(layouts); i++)
		if ((apic_layout_id(layouts[i], reg) & 0xff) == initial_id)
			return layouts[i];
	return NULL;
}
