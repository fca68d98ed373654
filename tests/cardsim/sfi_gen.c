/*
 * sfi_gen: SFI tables for a simulated KNC card with N hardware threads, as
 * a card's bootstrap provides them (platform/sfi.h; SFI 0.8.2). QEMU has no
 * SFI: the simulated card loads this file into guest RAM.
 *
 *   sfi_gen --cpus N --addr ADDR [--ioapic ADDR] [--ram BYTES] [--bsp ID] -o FILE
 *
 * FILE is meant to be loaded at physical ADDR (16-byte aligned, and SYST,
 * first in the file, must not cross a 4 KiB boundary): SYST listing CPUS,
 * APIC and MMAP, which follow it. CPUS lists APIC IDs 0..N-1 in order, as
 * QEMU numbers its CPUs (the card's CPUS table also starts at 0 while its
 * BSP is the last core's thread 0: --bsp moves that ID first, to test
 * callers that assume nothing). APIC: one I/O APIC (default 0xFEC00000,
 * QEMU's; a card's is 0x8007DA800, SBOX + 0xA800). MMAP: conventional
 * memory [0, 640 KiB) and [1 MiB, RAM), RAM defaulting to 512 MiB.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform/sfi.h"

#define LOW_RAM_END 0xa0000
#define HIGH_RAM    0x100000

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

/* A table header at p for a table of len bytes; its checksum once the payload is in. */
static void header(uint8_t *p, const char *sig, uint32_t len)
{
	memcpy(p, sig, 4);
	put32(p + 4, len);
	p[8] = 1;                           /* revision */
	memcpy(p + 10, "PMUOS ", 6);         /* OEM ID */
	memcpy(p + 16, "CARDSIM ", 8);       /* OEM table ID */
}

static void checksum(uint8_t *p, uint32_t len)
{
	uint8_t sum = 0;

	p[9] = 0;
	for (uint32_t i = 0; i < len; i++)
		sum += p[i];
	p[9] = (uint8_t)-sum;
}

static void __attribute__((noreturn)) usage(const char *why)
{
	fprintf(stderr, "sfi_gen: %s\nusage: sfi_gen --cpus N --addr ADDR [--ioapic ADDR] [--ram BYTES] [--bsp ID] -o FILE\n",
		why);
	exit(2);
}

static uint64_t number(const char *opt, const char *s, uint64_t max)
{
	char *end;

	errno = 0;
	unsigned long long v = s ? strtoull(s, &end, 0) : 0;
	if (!s || !*s || *end || errno || v > max) {
		fprintf(stderr, "sfi_gen: %s wants a number up to %#" PRIx64 ", got '%s'\n", opt, max, s ? s : "");
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	uint64_t cpus = 0, addr = 0, ioapic = 0xfec00000, ram = 512ull << 20, bsp = 0;
	const char *out = NULL;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--cpus"))
			cpus = number(a, v, SFI_MAX_CPUS);
		else if (!strcmp(a, "--addr"))
			addr = number(a, v, UINT32_MAX);
		else if (!strcmp(a, "--ioapic"))
			ioapic = number(a, v, UINT64_MAX);
		else if (!strcmp(a, "--ram"))
			ram = number(a, v, UINT64_MAX);
		else if (!strcmp(a, "--bsp"))
			bsp = number(a, v, SFI_MAX_CPUS - 1);
		else if (!strcmp(a, "-o"))
			out = v;
		else
			usage("unknown argument");
		i++;
	}
	if (!cpus || !addr || !out)
		usage("--cpus, --addr and -o are needed");
	if (addr % SFI_SEARCH_STEP)
		usage("--addr must be 16-byte aligned (the SYST search steps by 16)");
	if (bsp >= cpus)
		usage("--bsp must be one of the CPUs");
	if (ram <= HIGH_RAM)
		usage("--ram must be over 1 MiB");

	uint32_t syst_len = SFI_HEADER + 3 * SFI_SYST_ENTRY;
	uint32_t cpus_len = SFI_HEADER + (uint32_t)cpus * SFI_CPUS_ENTRY;
	uint32_t apic_len = SFI_HEADER + SFI_APIC_ENTRY;
	uint32_t mmap_len = SFI_HEADER + 2 * SFI_MMAP_ENTRY;
	uint32_t total = syst_len + cpus_len + apic_len + mmap_len;
	if (addr % SFI_SYST_PAGE + syst_len > SFI_SYST_PAGE)
		usage("SYST at --addr would cross a 4 KiB boundary");

	uint8_t *f = calloc(1, total);
	if (!f)
		usage("out of memory");
	uint8_t *syst = f, *cpu = syst + syst_len, *apic = cpu + cpus_len, *mmap = apic + apic_len;

	header(syst, "SYST", syst_len);
	put64(syst + SFI_HEADER, addr + (uint64_t)(cpu - f));
	put64(syst + SFI_HEADER + 8, addr + (uint64_t)(apic - f));
	put64(syst + SFI_HEADER + 16, addr + (uint64_t)(mmap - f));

	header(cpu, "CPUS", cpus_len);
	put32(cpu + SFI_HEADER, (uint32_t)bsp);
	for (uint32_t i = 0, slot = 1; i < cpus; i++)
		if (i != bsp)
			put32(cpu + SFI_HEADER + slot++ * SFI_CPUS_ENTRY, i);

	header(apic, "APIC", apic_len);
	put64(apic + SFI_HEADER, ioapic);

	header(mmap, "MMAP", mmap_len);
	static const uint64_t base[2] = { 0, HIGH_RAM };
	uint64_t end[2] = { LOW_RAM_END, ram };
	for (int i = 0; i < 2; i++) {
		uint8_t *e = mmap + SFI_HEADER + i * SFI_MMAP_ENTRY;
		put32(e, SFI_UEFI_CONVENTIONAL);
		put64(e + 4, base[i]);                          /* phys_start */
		put64(e + 12, 0);                               /* virt_start */
		put64(e + 20, (end[i] - base[i]) / SFI_PAGE);   /* pages */
		put64(e + 28, 0x8);                             /* attribute: EFI_MEMORY_WB */
	}

	checksum(cpu, cpus_len);
	checksum(apic, apic_len);
	checksum(mmap, mmap_len);
	checksum(syst, syst_len);

	FILE *o = fopen(out, "wb");
	if (!o || fwrite(f, 1, total, o) != total || fclose(o) != 0) {
		fprintf(stderr, "sfi_gen: cannot write %s: %s\n", out, strerror(errno));
		return 1;
	}
	free(f);
	return 0;
}
