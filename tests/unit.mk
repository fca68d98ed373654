# Host-side unit tests (cmocka) for the kernel's pure modules and pmuctl's.
# Included by the top Makefile, which defines BUILD and CC (the host gcc).
#
#   make unit                 build $(UNIT_BINS)
#   build/unit/test_fmt       run one; CMOCKA_MESSAGE_OUTPUT=TAP for TAP output
#
# Each binary links one kernel source, compiled for the host into
# $(BUILD)/unit/obj/<path>.o, with its test in tests/unit/test_<module>.c
# and lib/ (test_pmi also links the model, pmu/model/core.o, its PMU). test_stat_fmt links pmuctl's
# pure stat output, host/stat_fmt.o (a host program: libc as it is), and
# test_metrics its metric groups, host/metric_fmt.o.

UNIT_MODULES := fmt line timerq pmm acpi lib model events cpuset elf pmi mux task_slot stat_fmt metrics regions vm parse mailbox \
		bootparams bzimage sfi sbox sacache tlb bpred decode count memsys fpu cpuid bootmmap place boot apic \
		cardtext isacheck timing rings
UNIT_BINS    := $(patsubst %,$(BUILD)/unit/test_%,$(UNIT_MODULES))

# ------------------------------------------------------------ host flags
# Same C dialect as the kernel; -O1 keeps the sanitizers fast and -g the reports readable.
UNIT_CFLAGS  = -std=gnu11 -O1 -g
UNIT_CFLAGS += -Wall -Wextra
# Headers by path from the top (e.g. "lib/fmt.h"), as in the kernel build.
UNIT_CFLAGS += -I. -Iinclude
# Out-of-bounds access, use after free and undefined behaviour stop the test
# binary with a report and a non-zero status (no recovery: a UBSan finding is
# a failure, not a warning); frame pointers give full stack traces.
UNIT_CFLAGS += -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# The sanitizer runtimes and cmocka are linked into every test binary.
UNIT_LDFLAGS = -fsanitize=address,undefined
UNIT_LDLIBS  = -lcmocka

# Card-side files compiled for the host call lib/'s functions by k_ names
# (HOST_RENAME, lib/host.mk: memcpy & co. would otherwise be the C
# library's); every test binary links lib/ ($(UNIT_LIB)). Test files and the
# host programs' files (host/, plugin/, boot/linux/bzimage_check.c) keep the
# C library's names and call lib/'s own (cpuset_parse, parse_u64) by their
# k_ names.
UNIT_LIB = $(patsubst %.c,$(BUILD)/unit/obj/%.o,$(LIB_SRC))
$(foreach d,lib apic kernel pmu shell platform mailbox,$(BUILD)/unit/obj/$(d)/%.o): UNIT_DEFS = $(HOST_RENAME)
$(BUILD)/unit/obj/boot/linux/bootparams.o $(BUILD)/unit/obj/boot/mmap.o: UNIT_DEFS = $(HOST_RENAME)
$(BUILD)/unit/obj/tests/unit/%.o $(BUILD)/unit/obj/host/%.o: UNIT_DEFS = $(HOST_RENAME_LIB)
# The decoder's handlers and the test's doubles share one signature each (a
# table of them, struct mbox_ops): not every one uses every argument.
$(BUILD)/unit/obj/mailbox/mailbox_proto.o $(BUILD)/unit/obj/tests/unit/test_mailbox.o: UNIT_CFLAGS += -Wno-unused-parameter

# pmu/events.c includes the event table generated from libpfm4 (top Makefile):
# build it first and find it in $(BUILD)/gen.
$(BUILD)/unit/obj/pmu/events.o: $(BUILD)/gen/knc_events.h $(BUILD)/gen/knl_events.h
$(BUILD)/unit/obj/pmu/events.o: UNIT_CFLAGS += -I$(BUILD)/gen

# pmu/pmi.c uses this_cpu() (a %gs load) and rdtsc() (the instruction), both
# inline in kernel headers: tests/unit/shadow has versions of those headers
# that include the real ones and turn the two into functions test_pmi.c
# defines. -iquote is searched before -I. for "kernel/..." and "arch/..." includes.
$(BUILD)/unit/obj/pmu/pmi.o $(BUILD)/unit/obj/tests/unit/test_pmi.o: UNIT_CFLAGS += -iquote tests/unit/shadow
$(BUILD)/unit/obj/pmu/mux.o $(BUILD)/unit/obj/tests/unit/test_mux.o: UNIT_CFLAGS += -iquote tests/unit/shadow

# ------------------------------------------------------------ binaries
# test_<module>: its test file plus the source it covers (test_fmt,
# test_lib and test_cpuset: lib/ alone).
$(BUILD)/unit/test_line:   $(BUILD)/unit/obj/shell/line.o
$(BUILD)/unit/test_parse:  $(BUILD)/unit/obj/shell/parse.o
$(BUILD)/unit/test_timerq: $(BUILD)/unit/obj/kernel/timerq.o
$(BUILD)/unit/test_pmm:    $(BUILD)/unit/obj/kernel/pmm.o
$(BUILD)/unit/test_acpi:   $(BUILD)/unit/obj/platform/pc/acpi_parse.o
$(BUILD)/unit/test_model:  $(BUILD)/unit/obj/pmu/model/core.o $(BUILD)/unit/obj/pmu/knc/desc.o $(BUILD)/unit/obj/pmu/arch/desc.o
# test_events: the event strings and the PMU's rules and texts they use (pmu/rules*.c).
$(BUILD)/unit/test_events: $(BUILD)/unit/obj/pmu/events.o $(BUILD)/unit/obj/pmu/rules.o $(BUILD)/unit/obj/pmu/knc/desc.o \
			   $(BUILD)/unit/obj/pmu/arch/desc.o
$(BUILD)/unit/test_elf:    $(BUILD)/unit/obj/kernel/elf_check.o
# test_vm: address spaces on the page-allocator double (tests/unit/page_double.c, shared with fuzz_elf).
$(BUILD)/unit/test_vm:     $(BUILD)/unit/obj/kernel/vm.o $(BUILD)/unit/obj/tests/unit/page_double.o
# test_pmi: the PMI handler on the software model; its test file has the
# doubles for the kernel (pmu_ops, pmu_this, this_cpu, rdtsc, kprintf, APIC, IRQ, timers).
$(BUILD)/unit/test_pmi:    $(BUILD)/unit/obj/pmu/pmi.o $(BUILD)/unit/obj/pmu/cpu_settings.o $(BUILD)/unit/obj/pmu/model/core.o $(BUILD)/unit/obj/pmu/knc/desc.o
# test_mux: multiplexing over two fake counters; its doubles stand in for pmu.c and the timers.
$(BUILD)/unit/test_mux:    $(BUILD)/unit/obj/pmu/mux.o $(BUILD)/unit/obj/pmu/rules.o $(BUILD)/unit/obj/pmu/knc/desc.o
# test_mailbox: the request decoder, the status of each opcode; its PMU doubles check through
# the PMU's own rules (pmu/rules.c) as the driver does.
$(BUILD)/unit/test_mailbox: $(BUILD)/unit/obj/mailbox/mailbox_proto.o $(BUILD)/unit/obj/pmu/rules.o $(BUILD)/unit/obj/pmu/knc/desc.o
$(BUILD)/unit/test_task_slot: $(BUILD)/unit/obj/kernel/task_slot.o
# test_stat_fmt: pmuctl stat's scaling and its table, -x and --json output.
$(BUILD)/unit/test_stat_fmt: $(BUILD)/unit/obj/host/stat_fmt.o
# test_metrics: pmuctl stat -M's groups, values and output (it prints times through stat_fmt.o).
$(BUILD)/unit/test_metrics: $(BUILD)/unit/obj/host/metric_fmt.o $(BUILD)/unit/obj/host/stat_fmt.o $(BUILD)/unit/obj/pmu/metrics.o
# test_regions: pmuctl stat's region lines (host/regions.c) and their tables.
$(BUILD)/unit/test_regions: $(BUILD)/unit/obj/host/regions.o $(BUILD)/unit/obj/host/metric_fmt.o $(BUILD)/unit/obj/host/stat_fmt.o $(BUILD)/unit/obj/pmu/metrics.o
# --json through json-c (host/stat_fmt.c, host/regions.c).
$(BUILD)/unit/test_stat_fmt $(BUILD)/unit/test_metrics $(BUILD)/unit/test_regions: UNIT_LDLIBS += -ljson-c
$(BUILD)/unit/test_bootparams: $(BUILD)/unit/obj/boot/linux/bootparams.o
$(BUILD)/unit/test_bzimage: $(BUILD)/unit/obj/boot/linux/bzimage_check.o
$(BUILD)/unit/test_sfi:    $(BUILD)/unit/obj/platform/sfi.o
$(BUILD)/unit/test_sbox:   $(BUILD)/unit/obj/platform/knc/sbox.o
$(BUILD)/unit/test_fpu:    $(BUILD)/unit/obj/arch/fpu.o
$(BUILD)/unit/test_cpuid:  $(BUILD)/unit/obj/arch/cpuid.o
$(BUILD)/unit/test_bootmmap: $(BUILD)/unit/obj/boot/mmap.o
# test_apic: the local APIC ID layouts and the pmuos.apic= switch.
$(BUILD)/unit/test_apic: $(BUILD)/unit/obj/apic/layout.o
# test_place: pmuctl's --card argument and its driver check (host/place.c).
$(BUILD)/unit/test_place:  $(BUILD)/unit/obj/host/place.o
# test_boot: pmuctl boot and reset (host/boot.c) against a fake card in /dev/shm, on a fake clock;
# it boots the built image.
$(BUILD)/unit/test_boot:   $(BUILD)/unit/obj/host/boot.o $(BUILD)/unit/obj/host/bootimage.o $(BUILD)/unit/obj/host/place.o \
	$(BUILD)/unit/obj/platform/knc/sbox.o $(BUILD)/unit/obj/boot/linux/bzimage_check.o $(BUILD)/unit/obj/host/cardtext.o
$(BUILD)/unit/obj/tests/unit/test_boot.o: UNIT_DEFS = $(HOST_RENAME_LIB) -DBZIMAGE='"$(abspath $(BUILD))/pmuos.bzImage"'
$(BUILD)/unit/test_boot: | $(BUILD)/pmuos.bzImage
# test_rings: what pmuctl reads from STATUS answers and output rings (host/rings.c), on a fake output area.
$(BUILD)/unit/test_rings:  $(BUILD)/unit/obj/host/rings.o $(BUILD)/unit/obj/host/progress.o $(BUILD)/unit/obj/host/clock.o
# test_cardtext: how pmuctl prints the card's own text (host/cardtext.c).
$(BUILD)/unit/test_cardtext: $(BUILD)/unit/obj/host/cardtext.o

# test_bzimage also reads the built image, System.map and the kernel's flat
# image (absolute paths: the binary runs from anywhere); they must exist first.
$(BUILD)/unit/obj/tests/unit/test_bzimage.o: UNIT_DEFS = -DBZIMAGE='"$(abspath $(BUILD))/pmuos.bzImage"' \
	-DSYSTEM_MAP='"$(abspath $(BUILD))/System.map"' -DKERNEL_BIN='"$(abspath $(LINUX_OBJ))/kernel.bin"' \
	-DPMUOS_VERSION='"$(VERSION)"'
$(BUILD)/unit/test_bzimage: | $(BUILD)/pmuos.bzImage $(BUILD)/System.map

# test_sfi runs the simulated card's SFI generator on what it parses.
$(BUILD)/unit/obj/tests/unit/test_sfi.o: UNIT_DEFS = -DSFI_GEN='"$(abspath $(BUILD))/cardsim/sfi_gen"'
$(BUILD)/unit/test_sfi: | $(BUILD)/cardsim/sfi_gen

# The QEMU plugin's simulation (plugin/): the set-associative array and what is built on it.
$(BUILD)/unit/test_sacache: $(BUILD)/unit/obj/plugin/sacache.o
$(BUILD)/unit/test_tlb:     $(BUILD)/unit/obj/plugin/tlb.o $(BUILD)/unit/obj/plugin/sacache.o
$(BUILD)/unit/test_bpred:   $(BUILD)/unit/obj/plugin/bpred.o $(BUILD)/unit/obj/plugin/sacache.o
$(BUILD)/unit/test_decode:  $(BUILD)/unit/obj/plugin/decode.o
$(BUILD)/unit/test_count:   $(BUILD)/unit/obj/plugin/count.o
$(BUILD)/unit/test_memsys:  $(BUILD)/unit/obj/plugin/memsys.o $(BUILD)/unit/obj/plugin/sacache.o
$(BUILD)/unit/test_isacheck: $(BUILD)/unit/obj/plugin/isacheck.o
# test_timing decodes real instruction bytes with Capstone, as the plugin does.
$(BUILD)/unit/test_timing:  $(BUILD)/unit/obj/plugin/timing.o $(BUILD)/unit/obj/plugin/classify.o
$(BUILD)/unit/test_timing: private UNIT_LDLIBS += -lcapstone

# test_events checks the generated table against libpfm4 itself.
$(BUILD)/unit/test_events: private UNIT_LDLIBS += -lpfm

$(UNIT_BINS): $(BUILD)/unit/test_%: $(BUILD)/unit/obj/tests/unit/test_%.o $(UNIT_LIB)
	$(CC) $(UNIT_LDFLAGS) $^ -o $@ $(UNIT_LDLIBS)

$(BUILD)/unit/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) $(UNIT_DEFS) -MMD -MP -c $< -o $@

unit: $(UNIT_BINS)
.PHONY: unit

-include $(shell find $(BUILD)/unit/obj -name '*.d' 2>/dev/null)
