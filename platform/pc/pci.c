/* PCI configuration access; see platform/pc/pci.h. */
#include "platform/pc/pci.h"
#include "arch/x86.h"

#define CONFIG_ADDRESS 0xcf8
#define CONFIG_DATA    0xcfc
#define PCI_COMMAND    0x04
#define PCI_COMMAND_MEMORY (1u << 1)
#define PCI_HEADER_TYPE 0x0e
#define PCI_BAR0       0x10
#define PCI_STATUS_CAPS (1u << 20) /* Status register bit 4 (config dword 0x04, upper half) */
#define PCI_CAP_PTR    0x34

uint32_t pci_cfg_read(const struct pci_dev *d, uint8_t off)
{
	outl(CONFIG_ADDRESS, 1u << 31 | (uint32_t)d->bus << 16 | (uint32_t)d->dev << 11 |
				     (uint32_t)d->fn << 8 | (off & 0xfc));
	return inl(CONFIG_DATA);
}

void pci_cfg_write(const struct pci_dev *d, uint8_t off, uint32_t v)
{
	outl(CONFIG_ADDRESS, 1u << 31 | (uint32_t)d->bus << 16 | (uint32_t)d->dev << 11 |
				     (uint32_t)d->fn << 8 | (off & 0xfc));
	outl(CONFIG_DATA, v);
}

bool pci_find_nth(uint16_t vendor, uint16_t device, unsigned n, struct pci_dev *out)
{
	for (unsigned bus = 0; bus < 256; bus++) {
		for (unsigned dev = 0; dev < 32; dev++) {
			for (unsigned fn = 0; fn < 8; fn++) {
				struct pci_dev d = { bus, dev, fn, 0, 0 };
				uint32_t id = pci_cfg_read(&d, 0);
				if ((id & 0xffff) == 0xffff) {
					if (fn == 0)
						break; /* no device here */
					continue;
				}
				if ((id & 0xffff) == vendor && id >> 16 == device && n-- == 0) {
					d.vendor = vendor;
					d.device = device;
					*out = d;
					return true;
				}
				if (fn == 0 && !(pci_cfg_read(&d, PCI_HEADER_TYPE) & 0x800000))
					break; /* single-function device */
			}
		}
	}
	return false;
}

bool pci_mem_bar(const struct pci_dev *d, int bar, uint64_t *base, uint64_t *size)
{
	uint8_t off = PCI_BAR0 + 4 * bar;
	uint32_t lo = pci_cfg_read(d, off);
	bool is64 = (lo & 6) == 4;

	if (lo & 1)
		return false; /* I/O space */
	uint32_t hi = is64 ? pci_cfg_read(d, off + 4) : 0;
	uint32_t cmd = pci_cfg_read(d, PCI_COMMAND);

	/* Size: write all ones with decoding off, read back the writable bits. */
	pci_cfg_write(d, PCI_COMMAND, cmd & ~PCI_COMMAND_MEMORY);
	pci_cfg_write(d, off, 0xffffffff);
	uint64_t mask = pci_cfg_read(d, off) & ~0xfu;
	pci_cfg_write(d, off, lo);
	if (is64) {
		pci_cfg_write(d, off + 4, 0xffffffff);
		mask |= (uint64_t)pci_cfg_read(d, off + 4) << 32;
		pci_cfg_write(d, off + 4, hi);
	} else {
		mask |= 0xffffffff00000000ULL;
	}
	pci_cfg_write(d, PCI_COMMAND, cmd | PCI_COMMAND_MEMORY);
	*base = ((uint64_t)hi << 32 | lo) & ~0xfULL;
	*size = ~mask + 1;
	return *base != 0 && mask != 0;
}

uint8_t pci_find_cap(const struct pci_dev *d, uint8_t id)
{
	if (!(pci_cfg_read(d, PCI_COMMAND) & PCI_STATUS_CAPS))
		return 0;
	/* At most 48 capabilities fit in 192 bytes: a looping list ends here too. */
	uint8_t off = pci_cfg_read(d, PCI_CAP_PTR) & 0xfc;
	for (int n = 0; off >= 0x40 && n < 48; n++) {
		uint32_t cap = pci_cfg_read(d, off);
		if ((cap & 0xff) == id)
			return off;
		off = (cap >> 8) & 0xfc;
	}
	return 0;
}
