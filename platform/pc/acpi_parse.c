/*
 * ACPI table parsers (ACPI 6.x, 5.2.8 FADT, 5.2.12 MADT). Pure: they read
 * only the buffer given, checking every length, and are unit-tested on the host.
 */
#include "platform/pc/acpi.h"
#include "lib/lib.h"

#define SDT_HEADER 36
#define MADT_LAPIC_ADDR 36
#define MADT_ENTRIES 44

enum {
	MADT_LAPIC = 0,
	MADT_IOAPIC = 1,
	MADT_ISO = 2,
	MADT_LAPIC_OVERRIDE = 5,
};


bool acpi_checksum_ok(const void *p, size_t len)
{
	return bytes_sum_to_zero(p, len);
}

int acpi_parse_madt(const uint8_t *madt, size_t len, struct acpi_info *out)
{
	if (len < MADT_ENTRIES)
		return -1;
	out->lapic_addr = get_le32(madt + MADT_LAPIC_ADDR);
	for (size_t off = MADT_ENTRIES; off < len;) {
		const uint8_t *e = madt + off;

		if (len - off < 2 || e[1] < 2 || e[1] > len - off)
			return -1;
		switch (e[0]) {
		case MADT_LAPIC:
			if (e[1] < 8)
				return -1;
			/* Bit 0 enabled, bit 1 online-capable: only enabled ones run now. */
			if (out->ncpus < ACPI_MAX_CPUS) {
				struct acpi_cpu *c = &out->cpus[out->ncpus++];
				c->uid = e[2];
				c->apic_id = e[3];
				c->enabled = get_le32(e + 4) & 1;
			}
			break;
		case MADT_IOAPIC:
			if (e[1] < 12)
				return -1;
			if (!out->have_ioapic) { /* the first one serves the ISA IRQs */
				out->have_ioapic = true;
				out->ioapic_addr = get_le32(e + 4);
				out->ioapic_gsi_base = get_le32(e + 8);
			}
			break;
		case MADT_ISO:
			if (e[1] < 10)
				return -1;
			if (out->niso < ACPI_MAX_ISO) {
				struct acpi_iso *s = &out->iso[out->niso++];
				s->irq = e[3];
				s->gsi = get_le32(e + 4);
				s->flags = get_le16(e + 8);
			}
			break;
		case MADT_LAPIC_OVERRIDE:
			if (e[1] < 12)
				return -1;
			out->lapic_addr = get_le64(e + 4);
			break;
		default:
			break; /* x2APIC and other entries: not used with xAPIC */
		}
		off += e[1];
	}
	return 0;
}

#define FADT_DSDT       40
#define FADT_PM1A_CNT   64
#define FADT_RESET_REG  116 /* Generic Address Structure, 12 bytes */
#define FADT_RESET_VAL  128
#define FADT_FLAGS      112
#define FADT_X_DSDT     140
#define FADT_RESET_REG_SUP (1u << 10)
#define GAS_SYSTEM_IO   1

int acpi_parse_fadt(const uint8_t *fadt, size_t len, struct acpi_info *out)
{
	if (len < FADT_PM1A_CNT + 4)
		return -1;
	out->dsdt = get_le32(fadt + FADT_DSDT);
	out->pm1a_cnt = get_le32(fadt + FADT_PM1A_CNT);
	if (len >= FADT_RESET_VAL + 1 && (get_le32(fadt + FADT_FLAGS) & FADT_RESET_REG_SUP) &&
	    fadt[FADT_RESET_REG] == GAS_SYSTEM_IO) {
		out->have_reset = true;
		out->reset_port = (uint16_t)get_le64(fadt + FADT_RESET_REG + 4);
		out->reset_value = fadt[FADT_RESET_VAL];
	}
	if (len >= FADT_X_DSDT + 8 && get_le64(fadt + FADT_X_DSDT))
		out->dsdt = get_le64(fadt + FADT_X_DSDT);
	return 0;
}

/*
 * \_S5 is "NameOp [RootChar] '_S5_' PackageOp PkgLength NumElements <SLP_TYPa> ...":
 * 08 [5C] 5F 53 35 5F 12 ... The value is a ByteConst (0A nn), Zero (00) or One (01).
 */
int acpi_find_s5(const uint8_t *dsdt, size_t len)
{
	for (size_t i = SDT_HEADER; i + 4 <= len; i++) {
		if (memcmp(dsdt + i, "_S5_", 4) != 0)
			continue;
		size_t p = i + 4;
		size_t name = i > 0 && dsdt[i - 1] == 0x5c ? i - 1 : i; /* root prefix */
		if (name == 0 || dsdt[name - 1] != 0x08 || p >= len || dsdt[p] != 0x12)
			continue;
		p++;
		if (p >= len)
			return -1;
		p += ((dsdt[p] >> 6) & 3) + 1; /* PkgLength: lead byte + extra bytes */
		p++;                            /* NumElements */
		if (p >= len)
			return -1;
		if (dsdt[p] == 0x0a)
			return p + 1 < len ? dsdt[p + 1] : -1;
		if (dsdt[p] == 0x00 || dsdt[p] == 0x01)
			return dsdt[p];
		return -1;
	}
	return -1;
}
