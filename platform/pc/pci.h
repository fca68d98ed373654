/* PCI configuration space through I/O ports 0xCF8/0xCFC (configuration mechanism #1). */
#ifndef PLATFORM_PC_PCI_H
#define PLATFORM_PC_PCI_H

#include <stdint.h>
#include <stdbool.h>

struct pci_dev {
	uint8_t bus, dev, fn;
	uint16_t vendor, device;
};

/* Configuration dword at `off` (0..252, rounded down to 4) of d, and its write. */
uint32_t pci_cfg_read(const struct pci_dev *d, uint8_t off);
void pci_cfg_write(const struct pci_dev *d, uint8_t off, uint32_t v);
/*
 * Offset of d's capability with this ID in its capability list (PCI Local
 * Bus Specification 3.0, 6.7), or 0 if it has none.
 */
uint8_t pci_find_cap(const struct pci_dev *d, uint8_t id);
/* The n-th (from 0) function with this vendor and device ID on buses 0-255; false if there are n or fewer. */
bool pci_find_nth(uint16_t vendor, uint16_t device, unsigned n, struct pci_dev *out);
/*
 * Base address and size (bytes) of memory BAR `bar` (0-5; a 64-bit BAR takes
 * two slots) and turns on memory decoding. Returns false for an I/O or
 * unassigned BAR.
 */
bool pci_mem_bar(const struct pci_dev *d, int bar, uint64_t *base, uint64_t *size);

#endif
