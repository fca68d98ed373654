/*
 * Where a card's mailbox is, from pmuctl's --card argument. One mailbox
 * layout (include/pmuos/mailbox.h), two transports:
 *   NAME or PATH       a file that is the mailbox, whole: QEMU's ivshmem
 *                      BAR, /dev/shm/pmuos-NAME (scripts/qemu.sh, MBOX=ivshmem)
 *   sim:NAME[@BASE]    card memory of a simulated card: its RAM file,
 *                      /dev/shm/pmuos-NAME-ram (scripts/qemu.sh MBOX=card)
 *   pci:BDF[@BASE]     card memory of a KNC card through its aperture, PCI
 *                      BAR0: /sys/bus/pci/devices/BDF/resource0, whose
 *                      offset x is card physical address x (Linux
 *                      drivers/misc/mic/host/mic_x100.h MIC_X100_APER_BAR 0)
 * In card memory the mailbox starts at BASE (bytes from the start of card
 * memory; default MBOX_CARD_BASE), where the card was told it is with
 * pmuos.mbox=BASE,SIZE; its header gives its size.
 */
#ifndef HOST_PLACE_H
#define HOST_PLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct card_place {
	char path[256];  /* the file to map: the mailbox, or card memory */
	char regs[256];  /* a card's registers, BAR4 (DBOX, SBOX): its resource4, or the simulated
			  * card's /dev/shm/pmuos-NAME-mmio; "" for an ivshmem mailbox */
	char dev[64];    /* pci: the device's sysfs directory (its driver link); "" otherwise */
	uint64_t offset; /* where in it the mailbox starts, bytes (4 KiB-aligned) */
	bool whole;      /* the whole file is the mailbox (offset 0) */
	bool pci;        /* a real card's sysfs resource file */
};

/*
 * Parses --card's argument into *p. Returns 0, or -1 with err (errlen
 * bytes) saying what is wrong with it: an unknown scheme, an empty name, a
 * name with '/', a BDF not of the form DDDD:BB:DD.F, a BASE that is not a
 * number or not 4 KiB-aligned.
 */
int card_place_parse(const char *arg, struct card_place *p, char *err, size_t errlen);
/*
 * Whether a driver is bound to a pci: card (its sysfs directory has a
 * `driver` link): it would fight pmuctl for the card. Returns 1 with msg
 * naming the driver and how to unbind it; 0 when none is (or not pci:).
 */
int card_driver_bound(const struct card_place *p, char *msg, size_t len);

#endif
