/*
 * The local APIC's ID layouts and the boot switch between them (apic/regs.h),
 * and the state every APIC access reads (the inline accessors of
 * apic/apic.h): the register page and the layout in use. Below lapic.c and
 * ipi.c, which both use them.
 */
#include "apic/apic.h"
#include "lib/lib.h"

volatile uint8_t *apic_mmio;
const struct apic_layout *apic_layout_in_use = &apic_layout_xapic;
/* The ID field of the ID register, for boot/trampoline.S (an AP finds its stack by its ID). */
uint32_t ap_apic_id_shift = 24, ap_apic_id_mask = 0xff;

void apic_use_layout(const struct apic_layout *l)
{
	apic_layout_in_use = l;
	ap_apic_id_shift = l->id_shift;
	ap_apic_id_mask = (1u << l->id_bits) - 1;
}

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
