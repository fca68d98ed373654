"""The UEFI boot path: OVMF runs BOOTX64.EFI (GNU-EFI), which loads the
kernel ELF and hands over the same boot info as the Multiboot path."""
import re

from conftest import cpu_rows


def check_uefi_card(card, cpus):
    rows = cpu_rows(card.cmd("cpus"))
    assert sorted(rows) == list(range(cpus))
    assert all(r[3] == "online" for r in rows.values())
    v = card.cmd("version")
    assert "boot: UEFI via pmuos-uefi (GNU-EFI)" in v
    m = card.cmd("mem")
    # The map came from UEFI: many more entries than the BIOS's E820 map.
    assert int(re.search(r"memory map \((\d+) entries\)", m)[1]) > 8
    assert int(re.search(r"usable (\d+) KiB", m)[1]) > 400 * 1024
    assert card.poweroff(timeout=60) == 0


def test_uefi_boot_8_cpus(card_factory):
    # Without -icount OVMF itself starts in seconds.
    check_uefi_card(card_factory(cpus=8, boot="uefi", timeout=180, env={"ICOUNT": "0"}), 8)


def test_uefi_boot_2_cpus_with_icount(card_factory):
    # `make run BOOT=uefi` runs under -icount: OVMF's own start-up spins
    # through timeouts on the ACPI PM timer, each a wait in virtual time,
    # which under shift=0 (1 ns per instruction) is a second per 10^9
    # instructions: over a minute of TCG for one CPU, 95 s for two. With
    # shift=7 (128 ns per instruction) OVMF's waits take 128 times fewer
    # instructions, 12 s in all, and the kernel's paths that -icount changes
    # are the same: the TSC calibrated against the PIT in virtual time, IPIs
    # to halted CPUs (SMP start) seen at virtual-clock timer events. Exact
    # counts (shift=0) do not depend on how the kernel was loaded; 8 CPUs
    # boot through UEFI in the test above.
    check_uefi_card(card_factory(cpus=2, boot="uefi", timeout=600, env={"ICOUNT_SHIFT": "7"}), 2)
