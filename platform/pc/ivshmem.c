/*
 * QEMU's ivshmem devices (QEMU docs/specs/ivshmem-spec.rst, "The ivshmem
 * PCI device's guest interface"): the memory the host shares (BAR 2), and
 * the doorbell of an ivshmem-doorbell device (BAR 0 registers, BAR 1 MSI-X).
 */
#include <stddef.h>
#include "platform/pc/pc.h"
#include "platform/pc/pci.h"
#include "platform/pc/msix.h"
#include "kernel/paging.h"

/* spec, "The ivshmem PCI device's guest interface": vendor 1af4, device 1110. */
#define IVSHMEM_VENDOR 0x1af4
#define IVSHMEM_DEVICE 0x1110
/* spec, "PCI BARs". */
#define IVSHMEM_REGS_BAR 0
#define IVSHMEM_MEM_BAR  2
/* spec, "PCI device registers": BAR 0 dwords. */
#define REG_IVPOSITION 2 /* this device's peer ID (0..65535) when it is configured for interrupts */
#define REG_DOORBELL   3 /* peer ID << 16 | vector: interrupts that peer */
#define DOORBELL_VECTOR 0 /* the one vector (scripts/qemu.sh: vectors=1) */

/* The n-th ivshmem device with a memory BAR, and that BAR. */
static bool nth_region(unsigned n, struct pci_dev *d, uint64_t *base, uint64_t *size)
{
	for (unsigned i = 0, found = 0; pci_find_nth(IVSHMEM_VENDOR, IVSHMEM_DEVICE, i, d); i++)
		if (pci_mem_bar(d, IVSHMEM_MEM_BAR, base, size) && found++ == n)
			return true;
	return false;
}

bool pc_shared_memory(unsigned n, uint64_t *base, uint64_t *size)
{
	struct pci_dev d;

	return nth_region(n, &d, base, size);
}

static volatile uint32_t *regs;
static struct msix msix;
static uint8_t bell_vector;

static void route(uint32_t apic_id)
{
	msix_route(&msix, DOORBELL_VECTOR, apic_id, bell_vector);
}

static void ring(uint32_t peer)
{
	regs[REG_DOORBELL] = (peer & 0xffff) << 16 | DOORBELL_VECTOR;
}

static struct host_doorbell bell = { .route = route, .ring = ring };

/*
 * Region 0's device has a doorbell when it has MSI-X: the spec says
 * "There is no good way for software to find out whether the device is
 * configured for interrupts" from its registers (IVPosition 0 means either),
 * but only ivshmem-doorbell has BAR 1's MSI-X ("PCI BARs").
 */
const struct host_doorbell *pc_doorbell(uint8_t vector)
{
	struct pci_dev d;
	uint64_t base, size, rbase, rsize;

	if (!nth_region(0, &d, &base, &size) || !pci_mem_bar(&d, IVSHMEM_REGS_BAR, &rbase, &rsize) || rsize < 16)
		return NULL;
	if (rbase + rsize > (4ULL << 30) && !paging_map_identity(rbase, rsize, true))
		return NULL;
	if (!msix_init(&d, &msix))
		return NULL;
	regs = (volatile uint32_t *)rbase;
	bell_vector = vector;
	bell.peer = regs[REG_IVPOSITION] & 0xffff;
	return &bell;
}
