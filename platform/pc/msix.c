/* MSI-X; see platform/pc/msix.h. */
#include "platform/pc/msix.h"
#include "kernel/paging.h"
#include "arch/sync.h"

#define PCI_COMMAND        0x04
#define PCI_COMMAND_MEMORY (1u << 1)
#define PCI_COMMAND_MASTER (1u << 2) /* without it the device's message writes go nowhere */
#define PCI_CAP_MSIX       0x11

/* PCI 3.0 6.8.2.3-4: Message Control (the capability's upper half) and Table Offset/BIR. */
#define MSIX_CTRL_SIZE(c)  (((c) >> 16 & 0x7ff) + 1)
#define MSIX_CTRL_MASKALL  (1u << 30)
#define MSIX_CTRL_ENABLE   (1u << 31)
#define MSIX_TABLE_BIR(t)  ((t) & 7)
#define MSIX_TABLE_OFF(t)  ((t) & ~7u)

/* PCI 3.0 6.8.2.6-9: an entry's dwords. */
#define ENTRY_ADDR_LO 0
#define ENTRY_ADDR_HI 1
#define ENTRY_DATA    2
#define ENTRY_CTRL    3
#define ENTRY_MASKED  1u

/*
 * Intel SDM Vol. 3A, "Message Address Register Format": 0xFEE in bits
 * 31:20, the destination APIC ID in 19:12, RH = DM = 0 (physical). "Message
 * Data Register Format": the vector in bits 7:0, delivery mode 000 (fixed),
 * trigger mode 0 (edge).
 */
#define MSI_ADDR(apic) (0xfee00000u | (uint32_t)(apic) << 12)

bool msix_init(const struct pci_dev *d, struct msix *m)
{
	uint8_t cap = pci_find_cap(d, PCI_CAP_MSIX);
	uint64_t base, size;

	if (!cap)
		return false;
	uint32_t ctrl = pci_cfg_read(d, cap), where = pci_cfg_read(d, cap + 4);
	uint32_t n = MSIX_CTRL_SIZE(ctrl);
	if (MSIX_TABLE_BIR(where) > 5 || !pci_mem_bar(d, MSIX_TABLE_BIR(where), &base, &size) ||
	    MSIX_TABLE_OFF(where) + 16ULL * n > size)
		return false;
	/* Device memory above 4 GiB is not in the kernel's map yet (paging_init maps the low 4 GiB). */
	if (base + size > (4ULL << 30) && !paging_map_identity(base, size, true))
		return false;
	m->table = (volatile uint32_t *)(base + MSIX_TABLE_OFF(where));
	m->entries = n;
	/* Function mask while the entries are set, then each entry masked on its own. */
	pci_cfg_write(d, cap, ctrl | MSIX_CTRL_MASKALL | MSIX_CTRL_ENABLE);
	for (uint32_t i = 0; i < n; i++)
		m->table[4 * i + ENTRY_CTRL] = ENTRY_MASKED;
	pci_cfg_write(d, cap, (ctrl | MSIX_CTRL_ENABLE) & ~MSIX_CTRL_MASKALL);
	pci_cfg_write(d, PCI_COMMAND, (pci_cfg_read(d, PCI_COMMAND) & 0xffff) | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	return true;
}

void msix_route(const struct msix *m, uint32_t entry, uint32_t apic_id, uint8_t vector)
{
	volatile uint32_t *e = &m->table[4 * entry];

	/* PCI 3.0 6.8.3.5: masked while it changes; a message meanwhile stays pending and is sent at the unmask. */
	e[ENTRY_CTRL] = ENTRY_MASKED;
	e[ENTRY_ADDR_LO] = MSI_ADDR(apic_id);
	e[ENTRY_ADDR_HI] = 0;
	e[ENTRY_DATA] = vector;
	smp_mb();
	e[ENTRY_CTRL] = 0;
}
