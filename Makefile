# pmuos — the one entry point: build, run, test, bench (docs/design.md §9).
#
#   make          build the kernel (ELF, Multiboot copy, bzImage + System.map), the UEFI ESP
#                 and the host-side test programs
#   make run      boot the card in QEMU with the shell on this terminal
#   make test     unit tests, system tests; ends with "N passed, N failed"
#   make bench    figures (never verdicts)
#   make clean    remove build/
#
# Variables for run: CPUS=N (default 4), BOOT=multiboot|uefi|linux, ACCEL=tcg|kvm,
# ICOUNT=1|0 (default 1: -icount shift=0), MEM=512M, PROGRAMS="a.elf b.elf"
# (your own programs, built with build/bin/pmuos-cc, for the shell's `run`),
# PLUGIN=1|0 (default 1: load build/pmuos-pmu.so, the events beyond
# instructions and cycles), MBOX=ivshmem|card (default ivshmem: where the
# mailbox is; card: in card memory, as on a Xeon Phi, scripts/qemu.sh),
# CPU=max|knl|knc (run: default max, QEMU's full CPU; knl: the same as a Xeon Phi
# x200, Knights Landing, whose architectural perfmon the model presents; knc: the strict CPU, KNC's
# scalar ISA and CPUID, the plugin reporting what QEMU runs that a KNC core
# lacks; test: default knc, but for the tests tests/system/conftest.py names).

BUILD   ?= build
VERSION := 0.1.0
CC      := gcc
LD      := ld
OBJCOPY := objcopy
# Debian's interpreter: pytest and pexpect come from Debian packages.
PYTHON  ?= /usr/bin/python3

CPUS   ?= 4
BOOT   ?= multiboot
ACCEL  ?= tcg
ICOUNT ?= 1
MEM    ?= 512M
PROGRAMS ?=
PLUGIN ?= 1
MBOX   ?= ivshmem
# CPU has no default here: scripts/qemu.sh's is max, the system tests' knc.
export CPUS BOOT ACCEL ICOUNT MEM BUILD PROGRAMS PLUGIN MBOX CPU

# ---------------------------------------------------------------- kernel flags
# Freestanding C11 with GNU extensions (inline asm, attributes).
KCFLAGS  = -std=gnu11 -O2 -g
KCFLAGS += -Wall -Wextra -Wno-unused-parameter
# No hosted C library: lib/lib.c provides memcpy and friends.
KCFLAGS += -ffreestanding -nostdlib
# Interrupts push onto the current stack; the 128-byte red zone would be clobbered.
KCFLAGS += -mno-red-zone
# KNC has no SSE/AVX (docs/design.md §3), and the kernel keeps off the x87 (no state to
# save on kernel entry): the compiler may use general registers only.
KCFLAGS += -mgeneral-regs-only
# Nor the multi-byte NOP (0F 1F) the assembler pads aligned code with (it came
# with the P6; KNC's core is P54C-derived): no alignment padding in code.
KCFLAGS += -falign-functions=1 -falign-jumps=1 -falign-loops=1 -falign-labels=1
# Linked at its physical load address in the low 2 GiB: no PIC, small code model.
KCFLAGS += -fno-pic -fno-pie -mcmodel=small
# No canary runtime, no unwind tables; keep frame pointers for fault backtraces.
KCFLAGS += -fno-stack-protector -fno-asynchronous-unwind-tables -fno-omit-frame-pointer
# The kernel reads low physical memory (BIOS data area) through small constant pointers.
KCFLAGS += --param=min-pagesize=0
# Every object from one tree: headers by path from the top (e.g. "apic/apic.h").
KCFLAGS += -I. -Iinclude -I$(BUILD)/gen -DPMUOS_VERSION='"$(VERSION)"'
# Ordinary link of a static, non-PIE image at the addresses in linker.ld.
KLDFLAGS = -nostdlib -static -no-pie -z max-page-size=0x1000 -z noexecstack -Wl,--build-id=none -T linker.ld

# Layers, lowest first (docs/layout.md; tests/system/test_layers.py checks
# that no file includes a higher one). Both platforms are linked; init/main.c
# chooses (platform/platform.h).
KSRC := $(wildcard lib/*.c arch/*.S arch/*.c apic/*.c kernel/*.S kernel/*.c platform/*.c platform/pc/*.c platform/knc/*.c \
	  boot/*.S boot/*.c \
	  boot/linux/*.c pmu/*.S pmu/*.c pmu/*/*.c shell/*.c mailbox/*.c init/*.c)
# Host-side code that lives beside kernel sources: not kernel code.
KSRC := $(filter-out pmu/gen_events.c boot/linux/bzimage_check.c,$(KSRC)) $(BUILD)/gen/programs.S
KOBJ := $(patsubst %,$(BUILD)/k/%.o,$(KSRC))

all: kernel esp unit user host plugin
kernel: $(BUILD)/kernel.elf $(BUILD)/kernel.mb

# Nor CMOV, which GCC emits in 64-bit code whatever it is told: C goes
# through assembly, where scripts/nocmov.py turns each CMOV into a branch.
$(BUILD)/k/%.c.o: %.c scripts/nocmov.py
	@mkdir -p $(dir $@)
	$(CC) $(KCFLAGS) -MMD -MP -MT $@ -S $< -o $(@:.o=.s)
	$(PYTHON) scripts/nocmov.py < $(@:.o=.s) > $(@:.o=.nocmov.s)
	$(CC) $(KCFLAGS) -c $(@:.o=.nocmov.s) -o $@

$(BUILD)/k/%.S.o: %.S
	@mkdir -p $(dir $@)
	$(CC) $(KCFLAGS) -MMD -MP -c $< -o $@

# Only what a KNC core executes (scripts/knc-audit.py, docs/knc.md), or no kernel.
$(BUILD)/kernel.elf: $(KOBJ) linker.ld scripts/knc-audit.py
	$(CC) $(KCFLAGS) $(KLDFLAGS) $(KOBJ) -o $@ -lgcc
	$(PYTHON) scripts/knc-audit.py --kernel $@ || { rm -f $@; exit 1; }

# QEMU's Multiboot loader takes ELF32 only: the same image, relabelled, with
# the 32-bit Multiboot entry as its start address (the ELF64 keeps the 64-bit
# entry the UEFI loader jumps to).
$(BUILD)/kernel.mb: $(BUILD)/kernel.elf
	$(OBJCOPY) -O elf32-i386 --set-start 0x$$(nm $< | awk '$$3 == "multiboot_entry" { print $$1 }') $< $@

-include $(KOBJ:.o=.d)

# The event table comes from libpfm4 at build time (docs/design.md §5.3): a host
# program lists libpfm4's knc PMU as a C header.
$(BUILD)/gen/gen_events: pmu/gen_events.c pmu/plugin_events.h
	@mkdir -p $(dir $@)
	$(CC) -O1 -Wall -I. $< -o $@ -lpfm

$(BUILD)/gen/knc_events.h: $(BUILD)/gen/gen_events
	$< knc > $@.tmp && mv $@.tmp $@

# Knights Landing's table, for a card presenting it, and the codes of the
# KNL events the plugin counts (pmu/plugin_events.h KNL_PLUGIN_EVENTS).
$(BUILD)/gen/knl_events.h: $(BUILD)/gen/gen_events
	$< knl > $@.tmp && mv $@.tmp $@

$(BUILD)/gen/knl_plugin.h: $(BUILD)/gen/gen_events
	$< knl-plugin > $@.tmp && mv $@.tmp $@

$(BUILD)/k/pmu/model/share.c.o: $(BUILD)/gen/knl_plugin.h

$(BUILD)/k/pmu/events.c.o: $(BUILD)/gen/knc_events.h $(BUILD)/gen/knl_events.h

# ------------------------------------------------------------ sub-makefiles
include lib/host.mk
include boot/uefi/uefi.mk
include boot/linux/linux.mk
include user/user.mk
include host/host.mk
include plugin/plugin.mk
include tests/tests.mk
include bench/bench.mk

# ------------------------------------------------------------------ commands
deps:
	@scripts/install-deps.sh

# pmuctl too (host): the README's second terminal uses it while the card runs.
run: deps
	@$(MAKE) --no-print-directory kernel user host $(if $(filter uefi,$(BOOT)),esp) $(if $(filter 1,$(PLUGIN)),plugin)
	scripts/qemu.sh

clean:
	rm -rf $(BUILD)

.PHONY: all kernel deps run clean test bench unit esp
