/* pmuctl --card's argument: where the mailbox is; see host/place.h. */
#include "host/place.h"

#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pmuos/mailbox.h>

#include "lib/lib.h"

/* Linux's PCI address as sysfs names it: domain:bus:device.function, hex. */
static bool is_bdf(const char *s)
{
	static const char form[] = "hhhh:hh:hh.h";

	if (strlen(s) != sizeof(form) - 1)
		return false;
	for (size_t i = 0; form[i]; i++)
		if (form[i] == 'h' ? !isxdigit((unsigned char)s[i]) : s[i] != form[i])
			return false;
	return true;
}

/* A name: letters, digits, '.', '_', '-' (as scripts/qemu.sh allows for CARD). */
static bool is_name(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("._-", *s))
			return false;
	return true;
}

int card_place_parse(const char *arg, struct card_place *p, char *err, size_t errlen)
{
	char what[128];
	const char *at;
	bool sim = strncmp(arg, "sim:", 4) == 0, pci = strncmp(arg, "pci:", 4) == 0;

	memset(p, 0, sizeof(*p));
	if (!sim && !pci) {
		p->whole = true;
		if (strchr(arg, '/'))
			snprintf(p->path, sizeof(p->path), "%s", arg);
		else if (strchr(arg, ':')) {
			snprintf(err, errlen, "--card %s: a card is NAME, PATH, sim:NAME[@BASE] or pci:BDF[@BASE]", arg);
			return -1;
		} else
			snprintf(p->path, sizeof(p->path), "/dev/shm/pmuos-%s", arg);
		return 0;
	}
	p->pci = pci;
	p->offset = MBOX_CARD_BASE;
	snprintf(what, sizeof(what), "%s", arg + 4);
	at = strchr(arg + 4, '@');
	if (at) {
		what[at - (arg + 4)] = 0;
		if (!parse_u64(at + 1, UINT64_MAX, &p->offset)) {
			snprintf(err, errlen, "--card %s: BASE '%s' is not a number (decimal or 0x hex)", arg, at + 1);
			return -1;
		}
		if (p->offset & 0xfff) {
			snprintf(err, errlen, "--card %s: BASE %#llx is not a multiple of 4 KiB", arg,
				 (unsigned long long)p->offset);
			return -1;
		}
	}
	if (pci && !is_bdf(what)) {
		snprintf(err, errlen, "--card %s: '%s' is not a PCI address DDDD:BB:DD.F (lspci -D shows it)", arg, what);
		return -1;
	}
	if (sim && !is_name(what)) {
		snprintf(err, errlen, "--card %s: a simulated card's name is letters, digits, '.', '_' or '-'", arg);
		return -1;
	}
	if (pci) {
		const char *sysfs = getenv("PMUOS_SYSFS");
		if (sysfs && strlen(sysfs) > sizeof(p->dev) - 40) {
			snprintf(err, errlen, "--card %s: PMUOS_SYSFS is longer than %zu characters", arg, sizeof(p->dev) - 40);
			return -1;
		}
		snprintf(p->dev, sizeof(p->dev), "%s/bus/pci/devices/%.12s", sysfs && *sysfs ? sysfs : "/sys",
			 what); /* a BDF: 12 characters */
		snprintf(p->path, sizeof(p->path), "%s/resource0", p->dev);
		snprintf(p->regs, sizeof(p->regs), "%s/resource4", p->dev);
	} else {
		snprintf(p->path, sizeof(p->path), "/dev/shm/pmuos-%s-ram", what);
		snprintf(p->regs, sizeof(p->regs), "/dev/shm/pmuos-%s-mmio", what);
	}
	return 0;
}

int card_driver_bound(const struct card_place *p, char *msg, size_t len)
{
	char link[256], target[256];

	if (!p->dev[0])
		return 0;
	snprintf(link, sizeof(link), "%s/driver", p->dev);
	ssize_t n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0)
		return 0;
	target[n] = 0;
	const char *drv = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;
	const char *bdf = strrchr(p->dev, '/') + 1;
	snprintf(msg, len, "driver '%s' is bound to %s: unbind it first (echo %s > /sys/bus/pci/drivers/%s/unbind)",
		 drv, bdf, bdf, drv);
	return 1;
}

/* The command register (PCI Local Bus 3.0 §6.2.2: offset 4, 16 bits, little-endian in sysfs's config), or -1. */
static int command_register(const char *dev)
{
	char path[256];
	uint8_t w[2];

	snprintf(path, sizeof(path), "%s/config", dev);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = pread(fd, w, sizeof(w), PCI_COMMAND);
	close(fd);
	return n == (ssize_t)sizeof(w) ? w[0] | w[1] << 8 : -1;
}

int card_decoding(const struct card_place *p, char *note, char *msg, size_t len)
{
	char path[256];

	note[0] = 0;
	if (!p->dev[0])
		return 0;
	int cmd = command_register(p->dev);
	if (cmd < 0 || cmd & PCI_COMMAND_MEMORY)
		return 0; /* unknown (no config to read): the BAR's own reads tell */
	snprintf(path, sizeof(path), "%s/enable", p->dev);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	bool wrote = fd >= 0 && write(fd, "1", 1) == 1;
	if (fd >= 0)
		close(fd);
	int now = command_register(p->dev);
	const char *bdf = strrchr(p->dev, '/') + 1;
	if (now >= 0 && now & PCI_COMMAND_MEMORY) {
		snprintf(note, len, "%s: memory decoding was off (PCI command register 0x%04x); turned on through %s "
			 "(command register now 0x%04x)", bdf, cmd, path, now);
		return 0;
	}
	snprintf(msg, len, "%s: memory decoding is off (PCI command register 0x%04x: Memory Space, bit 1, clear; "
		 "its BARs read all ones)%s; as root: echo 1 > %s, or setpci -s %s COMMAND=0x06",
		 bdf, cmd, wrote ? ", and writing 1 to its sysfs enable did not turn it on" : "", path, bdf);
	return 1;
}

int card_decoding_said(const struct card_place *p)
{
	char note[512], msg[512];
	int off = card_decoding(p, note, msg, sizeof(msg));

	if (off || note[0])
		fprintf(stderr, "pmuctl: %s\n", off ? msg : note);
	return off ? -1 : 0;
}
