/*
 * host/place.c on the host: what pmuctl's --card argument names (the
 * mailbox file, or card memory and registers with the mailbox's place),
 * each bad argument's message, and the check that no driver holds a pci:
 * card (on a directory laid out as sysfs lays out a device: a `driver`
 * link to .../drivers/NAME, Linux Documentation/ABI/testing/sysfs-bus-pci).
 */
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_driver_bound),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
