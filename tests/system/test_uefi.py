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
    # The default configuration of `make run BOOT=uefi`: OVMF's own start-up
    # spins through timeouts on the ACPI PM timer, and under -icount every
    # read of it ends a translation block, so one CPU takes over a minute.
    # Each more CPU spinning in OVMF takes its turn of the one TCG thread
    # (8 CPUs: over 3 minutes); two show the SMP start under icount, and 8
    # CPUs boot through UEFI in the test above.
    check_uefi_card(card_factory(cpus=2, boot="uefi", timeout=600), 2)
