/*
 * host/place.c on the host: what pmuctl's --card argument names (the
 * mailbox file, or card memory and registers with the mailbox's place),
 * each bad argument's message, and the check that no driver holds a pci:
 * card (on a directory laid out as sysfs lays out a device: a `driver`
 * link to .../drivers/NAME, Linux Documentation/ABI/testing/sysfs-bus-pci).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "host/place.h"

#define UNUSED __attribute__((unused))

static void test_forms(void **state UNUSED)
{
	struct card_place p;
	char err[320];

	assert_int_equal(card_place_parse("card0", &p, err, sizeof(err)), 0);
	assert_string_equal(p.path, "/dev/shm/pmuos-card0");
	assert_true(p.whole);
	assert_string_equal(p.regs, "");
	assert_int_equal(card_place_parse("/tmp/x/mbox", &p, err, sizeof(err)), 0);
	assert_string_equal(p.path, "/tmp/x/mbox");
	assert_int_equal(card_place_parse("sim:s1", &p, err, sizeof(err)), 0);
	assert_string_equal(p.path, "/dev/shm/pmuos-s1-ram");
	assert_string_equal(p.regs, "/dev/shm/pmuos-s1-mmio");
	assert_false(p.whole);
	assert_int_equal(p.offset, 0x10000000);
	assert_int_equal(card_place_parse("sim:s1@0x8000000", &p, err, sizeof(err)), 0);
	assert_int_equal(p.offset, 0x8000000);
	assert_int_equal(card_place_parse("pci:0000:03:00.0@4096", &p, err, sizeof(err)), 0);
	assert_string_equal(p.path, "/sys/bus/pci/devices/0000:03:00.0/resource0");
	assert_string_equal(p.regs, "/sys/bus/pci/devices/0000:03:00.0/resource4");
	assert_string_equal(p.dev, "/sys/bus/pci/devices/0000:03:00.0");
	assert_int_equal(p.offset, 4096);
}

static void bad(const char *arg, const char *want)
{
	struct card_place p;
	char err[320] = "";

	assert_int_equal(card_place_parse(arg, &p, err, sizeof(err)), -1);
	if (!strstr(err, want))
		fail_msg("--card %s: got '%s', want '%s'", arg, err, want);
}

static void test_bad(void **state UNUSED)
{
	bad("usb:1", "a card is NAME, PATH, sim:NAME[@BASE] or pci:BDF[@BASE]");
	bad("sim:", "a simulated card's name is letters");
	bad("sim:a/b", "a simulated card's name is letters");
	bad("sim:x@", "BASE '' is not a number");
	bad("sim:x@0x1001", "BASE 0x1001 is not a multiple of 4 KiB");
	bad("pci:3:00.0", "'3:00.0' is not a PCI address DDDD:BB:DD.F");
	bad("pci:0000:03:00.g", "not a PCI address");
	bad("pci:0000:03:00.0x", "not a PCI address");
	bad("pci:0000:03:00.0@zz", "BASE 'zz' is not a number");
}

static void test_driver_bound(void **state UNUSED)
{
	char dir[] = "/tmp/pmuos-place-XXXXXX", dev[48], link[160], msg[256] = "";
	struct card_place p;
	char err[320];

	assert_non_null(mkdtemp(dir));
	assert_int_equal(card_place_parse("pci:0000:03:00.0", &p, err, sizeof(err)), 0);
	snprintf(dev, sizeof(dev), "%s/0000:03:00.0", dir);
	snprintf(p.dev, sizeof(p.dev), "%s", dev);
	assert_int_equal(mkdir(dev, 0700), 0);
	assert_int_equal(card_driver_bound(&p, msg, sizeof(msg)), 0); /* no driver link */
	snprintf(link, sizeof(link), "%s/driver", dev);
	assert_int_equal(symlink("../../../bus/pci/drivers/mic", link), 0);
	assert_int_equal(card_driver_bound(&p, msg, sizeof(msg)), 1);
	assert_string_equal(msg, "driver 'mic' is bound to 0000:03:00.0: unbind it first "
				 "(echo 0000:03:00.0 > /sys/bus/pci/drivers/mic/unbind)");
	/* Not a pci: card: never bound. */
	assert_int_equal(card_place_parse("sim:x", &p, err, sizeof(err)), 0);
	assert_int_equal(card_driver_bound(&p, msg, sizeof(msg)), 0);
	unlink(link);
	rmdir(dev);
	rmdir(dir);
}

/* A sysfs-like device directory with a 64-byte config whose command register (offset 4) is cmd. */
static void fake_device(const char *dev, uint16_t cmd, bool enable_file)
{
	char path[256];
	uint8_t config[64] = { 0x86, 0x80, 0x5d, 0x22 }; /* 8086:225d, a 3120A (PHI3120 docs/hardware.md) */

	config[4] = cmd & 0xff;
	config[5] = cmd >> 8;
	assert_true(mkdir(dev, 0700) == 0 || errno == EEXIST);
	snprintf(path, sizeof(path), "%s/config", dev);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(config, 1, sizeof(config), f), sizeof(config));
	fclose(f);
	snprintf(path, sizeof(path), "%s/enable", dev);
	unlink(path);
	if (enable_file)
		close(open(path, O_CREAT | O_WRONLY, 0600));
}

/*
 * Command 0x0006 (memory and bus master, as vfio-pci left a 3120A) decodes;
 * 0x0000 (no driver ever enabled it) does not, and a sysfs `enable` that
 * takes the 1 without effect (a file here) still leaves it off: the message
 * names the value and both commands. Without a config, nothing is known.
 */
static void test_decoding(void **state UNUSED)
{
	char dir[] = "/tmp/pmuos-place-XXXXXX", dev[64], note[512], msg[512], err[320], path[512];
	struct card_place p;

	assert_non_null(mkdtemp(dir));
	assert_int_equal(card_place_parse("pci:0000:03:00.0", &p, err, sizeof(err)), 0);
	snprintf(dev, sizeof(dev), "%s/0000:03:00.0", dir);
	snprintf(p.dev, sizeof(p.dev), "%s", dev);
	assert_int_equal(card_decoding(&p, note, msg, sizeof(msg)), 0); /* no directory: unknown */
	fake_device(dev, 0x0006, true);
	assert_int_equal(card_decoding(&p, note, msg, sizeof(msg)), 0);
	assert_string_equal(note, "");
	fake_device(dev, 0x0000, true);
	assert_int_equal(card_decoding(&p, note, msg, sizeof(msg)), 1);
	snprintf(path, sizeof(path), "0000:03:00.0: memory decoding is off (PCI command register 0x0000: Memory Space, "
		 "bit 1, clear; its BARs read all ones), and writing 1 to its sysfs enable did not turn it on; as root: "
		 "echo 1 > %s/enable, or setpci -s 0000:03:00.0 COMMAND=0x06", dev);
	assert_string_equal(msg, path);
	snprintf(path, sizeof(path), "%s/enable", dev);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(fgetc(f), '1'); /* what it wrote there */
	fclose(f);
	fake_device(dev, 0x0004, false); /* bus master alone; no enable attribute (not root, or an old kernel) */
	assert_int_equal(card_decoding(&p, note, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "(PCI command register 0x0004: Memory Space, bit 1, clear; its BARs read all ones); as root"));
	unlink(path);
	snprintf(path, sizeof(path), "%s/config", dev);
	unlink(path);
	rmdir(dev);
	rmdir(dir);
	/* Not a pci: card: nothing to check. */
	assert_int_equal(card_place_parse("sim:x", &p, err, sizeof(err)), 0);
	assert_int_equal(card_decoding(&p, note, msg, sizeof(msg)), 0);
}

/* PMUOS_SYSFS moves the device directory; one too long is refused by name. */
static void test_sysfs_root(void **state UNUSED)
{
	struct card_place p;
	char err[320], longer[300];

	setenv("PMUOS_SYSFS", "/tmp/fake", 1);
	assert_int_equal(card_place_parse("pci:0000:03:00.0", &p, err, sizeof(err)), 0);
	assert_string_equal(p.dev, "/tmp/fake/bus/pci/devices/0000:03:00.0");
	assert_string_equal(p.path, "/tmp/fake/bus/pci/devices/0000:03:00.0/resource0");
	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = 0;
	setenv("PMUOS_SYSFS", longer, 1);
	assert_int_equal(card_place_parse("pci:0000:03:00.0", &p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "PMUOS_SYSFS is longer than"));
	unsetenv("PMUOS_SYSFS");
	assert_int_equal(card_place_parse("pci:0000:03:00.0", &p, err, sizeof(err)), 0);
	assert_string_equal(p.dev, "/sys/bus/pci/devices/0000:03:00.0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_driver_bound),
		cmocka_unit_test(test_decoding),
		cmocka_unit_test(test_sysfs_root),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
