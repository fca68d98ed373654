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
 * The sysfs directory is $PMUOS_SYSFS/bus/pci/devices/BDF, PMUOS_SYSFS
 * being /sys unless the environment names another root (a copy laid out
 * as sysfs: the tests, a chroot).
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
	char dev[200];   /* pci: the device's sysfs directory (its driver link); "" otherwise */
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

/* PCI Local Bus 3.0 §6.2.2: the command register and its Memory Space bit. */
#define PCI_COMMAND        0x04
#define PCI_COMMAND_MEMORY 0x2

/*
 * Whether a pci: card decodes its memory BARs (the command register's
 * Memory Space bit, from sysfs `config`). A card no driver has enabled
 * reads command 0x0000 and its BARs all ones (Lasimeri/Intel-Phi-3120A
 * docs/hardware.md: 0x0000 before, 0x0006 once vfio-pci enabled it). With
 * decoding off it writes 1 to the device's sysfs `enable` (Linux
 * Documentation/ABI/testing/sysfs-bus-pci: pci_enable_device, root only)
 * and reads the register again. Returns 0 when decoding is on (note: a
 * line saying it was turned on, or ""), or when the register cannot be
 * read (not pci:, no config); 1 with msg naming the register's value and
 * the commands that turn it on. note and msg are len bytes.
 */
int card_decoding(const struct card_place *p, char *note, char *msg, size_t len);
/* card_decoding, its note or message on stderr: 0 (decoding on), or -1 (off: pmuctl stops). */
int card_decoding_said(const struct card_place *p);

#endif
