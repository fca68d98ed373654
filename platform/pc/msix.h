/*
 * MSI-X of a PCI function (PCI Local Bus Specification 3.0, 6.8.2): its
 * table entries send a message to one local APIC (Intel SDM Vol. 3A,
 * "Message Signalled Interrupts").
 */
#ifndef PLATFORM_PC_MSIX_H
#define PLATFORM_PC_MSIX_H

#include <stdbool.h>
#include <stdint.h>
#include "platform/pc/pci.h"

struct msix {
	volatile uint32_t *table; /* 16 bytes per entry */
	uint32_t entries;         /* 1..2048 */
};

/*
 * Finds d's MSI-X capability, maps its table, masks every entry and turns
 * MSI-X and bus mastering (the device's message writes) on. False if d has
 * no MSI-X, or its table is not in a memory BAR.
 */
bool msix_init(const struct pci_dev *d, struct msix *m);
/*
 * Entry `entry` (< m->entries) sends `vector` (32..255), fixed delivery,
 * edge, to the local APIC with ID `apic_id` (0..254), and is unmasked. One
 * caller at a time per entry.
 */
void msix_route(const struct msix *m, uint32_t entry, uint32_t apic_id, uint8_t vector);

#endif
