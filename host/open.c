/*
 * card_open: finds a card's mailbox where --card says (host/place.h) and
 * maps it; see host/mbox.h.
 */
#define _GNU_SOURCE
#include "host/mbox.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/place.h"

/* The file shrank under the mapping (truncated, or the card's file replaced): a named error, not a crash. */
static char sigbus_msg[384];
static void on_sigbus(int sig)
{
	(void)sig;
	if (write(2, sigbus_msg, strlen(sigbus_msg)) < 0)
		_exit(1);
	_exit(1);
}

/* Why a card's file cannot be opened, and what to do. */
static void no_card(const struct card_place *p, const char *name)
{
	int e = errno;

	if (p->pci && (e == EACCES || e == EPERM))
		fprintf(stderr, "pmuctl: cannot open %s: %s (give this user the card's aperture: run as root, or "
			"chown it to your user; docs/knc.md)\n", p->path, strerror(e));
	else if (p->pci)
		fprintf(stderr, "pmuctl: cannot open %s: %s (no such PCI device, or not a card: lspci -D -d 8086:)\n",
			p->path, strerror(e));
	else if (!p->whole)
		fprintf(stderr, "pmuctl: no card memory at %s: %s (is the card running with its mailbox in card memory? "
			"make run MBOX=card CARD=%s)\n", p->path, strerror(e), name + 4);
	else {
		char ram[320];
		snprintf(ram, sizeof(ram), "%s-ram", p->path);
		if (access(ram, F_OK) == 0) /* a card started with MBOX=card: its mailbox is in its memory */
			fprintf(stderr, "pmuctl: card %s keeps its mailbox in card memory (%s, MBOX=card): give "
				"--card sim:%s\n", name, ram, name);
		else
			fprintf(stderr, "pmuctl: no card at %s: %s (is the card running? make run CARD=%s)\n",
				p->path, strerror(e), name);
	}
}

/*
 * The size of the mailbox at p->offset in card memory: its header's, when it
 * is a power of two from MBOX_MIN_SIZE that fits in the file's `avail`
 * bytes; else 0, said why (name: --card's, for the command that boots it). (card_check then checks the whole header.)
 * The header is read through a mapping, never read(2): a PCI memory BAR's
 * sysfs resource file has only mmap, read and write fail with EIO (Linux
 * drivers/pci/pci-sysfs.c pci_create_attr gives a memory BAR no .read;
 * fs/sysfs/file.c sysfs_kf_bin_read then returns -EIO).
 */
static size_t mailbox_size(struct card *c, const struct card_place *p, const char *name, uint64_t avail)
{
	uint64_t page = p->offset & ~(uint64_t)(sysconf(_SC_PAGESIZE) - 1), skip = p->offset - page;
	uint8_t *map = mmap(NULL, skip + sizeof(struct mbox_header), PROT_READ, MAP_SHARED, c->fd, (off_t)page);
	struct mbox_header h;

	if (map == MAP_FAILED) {
		fprintf(stderr, "pmuctl: %s: cannot map a mailbox header at %#llx: %s\n", p->path,
			(unsigned long long)p->offset, strerror(errno));
		return 0;
	}
	memcpy(&h, map + skip, sizeof(h));
	munmap(map, skip + sizeof(h));
	if (h.magic != MBOX_MAGIC) {
		fprintf(stderr, "pmuctl: %s: no pmuos mailbox at %#llx of card memory: the card has not booted pmuos "
			"(pmuctl --card %s boot), is still booting, or its pmuos.mbox= names another place "
			"(--card ...@BASE)\n", p->path, (unsigned long long)p->offset, name);
		return 0;
	}
	if (h.size < MBOX_MIN_SIZE || (h.size & (h.size - 1)) || h.size > avail) {
		fprintf(stderr, "pmuctl: %s: the mailbox at %#llx says it is %llu bytes: not a power of two from 1 MiB "
			"within the %llu bytes of card memory after it\n", p->path, (unsigned long long)p->offset,
			(unsigned long long)h.size, (unsigned long long)avail);
		return 0;
	}
	return h.size;
}

int card_open(struct card *c, const char *name)
{
	static struct card_place place;
	char err[320];
	struct stat st;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	if (card_place_parse(name, &place, err, sizeof(err)) != 0) {
		fprintf(stderr, "pmuctl: %s\n", err);
		return -1;
	}
	if (card_decoding_said(&place) != 0)
		return -1;
	const char *path = place.path;
	c->path = path;
	c->fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW); /* a card's file, never a link put in its place */
	if (c->fd < 0) {
		no_card(&place, name);
		return -1;
	}
	if (fstat(c->fd, &st) != 0 || (uint64_t)st.st_size < place.offset + sizeof(struct mbox_header)) {
		if (place.whole)
			fprintf(stderr, "pmuctl: %s is too small to be a card mailbox\n", path);
		else
			fprintf(stderr, "pmuctl: %s: card memory ends before %#llx, where the mailbox should be\n", path,
				(unsigned long long)place.offset);
		card_close(c);
		return -1;
	}
	c->size = place.whole ? (size_t)st.st_size : mailbox_size(c, &place, name, st.st_size - place.offset);
	if (!c->size) {
		card_close(c);
		return -1;
	}
	c->base = mmap(NULL, c->size, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, (off_t)place.offset);
	if (c->base == MAP_FAILED) {
		c->base = NULL;
		fprintf(stderr, "pmuctl: cannot map %s: %s\n", path, strerror(errno));
		card_close(c);
		return -1;
	}
	snprintf(sigbus_msg, sizeof(sigbus_msg),
		 "pmuctl: %s shrank under pmuctl (SIGBUS): the card's mailbox file was truncated or replaced\n", path);
	struct sigaction sa = { .sa_handler = on_sigbus };
	sigaction(SIGBUS, &sa, NULL);
	if (place.whole)
		card_doorbell(c); /* an ivshmem mailbox's (scripts/qemu.sh); card memory is polled */
	if (card_check(c) != 0) {
		card_close(c);
		return -1;
	}
	return 0;
}
