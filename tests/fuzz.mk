# Fuzz targets (libFuzzer, clang from Debian), built for the host: the card's
# mailbox request decoder (fuzz_mailbox), the program loader (fuzz_elf), the
# shell's line editor and parsers (fuzz_shell), and pmuctl's reading of a
# hostile card (fuzz_pmuctl). `make test` (tests/run.py) runs each for 10^6
# inputs from fixed seeds: the slow targets as two processes of 5x10^5 inputs
# (-runs=500000, -seed=1 and -seed=2; run.py FUZZ_SPLIT), the others as one
# (-runs=1000000 -seed=1), one process per core at the lowest priority
# (nice 19) beside the unit and system tests, which take a core whenever they
# want one; each process starts from its target's seed
# corpus: tests/fuzz/corpus/<target>/ (committed: hand-made seeds and every
# input that once found a bug) and $(BUILD)/fuzz-seeds/<target>/ (generated
# below), when they exist. libFuzzer counts the seeds among the runs.
# Time bounds, so that no process can hang a run: one input may take 60 s
# (-timeout: a longer one is reported as a hang), a process 1,200 s in all
# (-max_total_time: stopping short of its inputs fails the test), and it
# is killed a minute later; both are wall time, and a process at nice 19
# waits while the system tests take both cores (run.py). The slowest process (a half of fuzz_pmuctl) takes about
# a minute of a core: the bound is a guard against hangs, not a benchmark.
# New inputs and crash files go to $(BUILD)/fuzz-run/<target>-<seed>/, never
# into the tree. By hand (libFuzzer adds
# what it finds to the first directory: give it an empty one):
#   build/fuzz/fuzz_mailbox -runs=1000000 -seed=1 NEW_DIR tests/fuzz/corpus/fuzz_mailbox
#   build/fuzz/fuzz_mailbox -max_total_time=600 NEW_DIR tests/fuzz/corpus/fuzz_mailbox

FUZZ_CC     = clang
# Sanitizers that turn a bad access into a crash, in every object.
FUZZ_CFLAGS = -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all
# Headers by path from the top, as in the kernel build.
FUZZ_CFLAGS += -I. -Iinclude
# libFuzzer: its driver (main) at link time, and in the kernel objects the
# coverage and comparison tracing it steers by. A target's own checks and
# doubles are left out: they are not under test, and tracing their loops
# would cost most of each run.
FUZZ_COV    = -fsanitize=fuzzer
# Each target links its own file, the kernel files it covers and test
# doubles, compiled one by one into $(BUILD)/fuzz/obj/ (-MMD: header
# dependencies). Kernel files get k_ names for what clashes with the C
# library, as in the unit tests (HOST_RENAME, lib/host.mk), and link fmt.c
# and lib.c for vsnprintf, memcpy & co.; test files keep the C library's
# names, and call the kernel's cpuset_* and parse_u64 by their k_ names.
FUZZ_OBJ    = $(BUILD)/fuzz/obj
FUZZ_LIB    = $(FUZZ_OBJ)/lib/fmt.o $(FUZZ_OBJ)/lib/lib.o
FUZZ_BINS   = $(BUILD)/fuzz/fuzz_mailbox $(BUILD)/fuzz/fuzz_elf $(BUILD)/fuzz/fuzz_shell \
	      $(BUILD)/fuzz/fuzz_pmuctl
FUZZ_DEFS   = $(HOST_RENAME)
$(FUZZ_OBJ)/tests/%.o: FUZZ_DEFS = $(HOST_RENAME_LIB)
$(FUZZ_OBJ)/tests/%.o: FUZZ_COV =
# The formatter the targets' code writes its error messages with (fmt.c) is
# not under test either: it keeps its edge coverage but not the comparison
# tracing, which only ever sees its format strings' characters and its
# buffer's lengths, never what an input chose (with it, formatting
# error messages took a quarter of fuzz_shell's run).
# The address spaces (vm.c) are under test in fuzz_elf, and keep their edge
# coverage, but not the comparison tracing either: their comparisons are of
# page-table entries (the double's host addresses) and of page counters in
# walks over every page mapped (the 1 MiB stack among them), and the
# addresses and lengths an input gives are compared first in elf_check.c,
# which keeps it; the input's page budget and limit (10 bits each) meet
# vm.c's counts in a few tests whose both sides mutation alone reaches. With
# it, vm.c's tracing took half of fuzz_elf's run (perf: 48% of the samples).
# Nor the event table's name lookup (pmu/events.c, fuzz_shell; fuzz_pmuctl
# only prints its names): it compares a name character by character with
# every event's, and libFuzzer keeps 1-byte comparisons only for its value
# profile (-use_value_profile, which run.py does not ask for), its 4- and
# 8-byte ones as byte strings to splice into the input, which a text holds
# only by chance; its tracing took a third of fuzz_shell's run (perf: 31%).
$(FUZZ_OBJ)/lib/fmt.o $(FUZZ_OBJ)/kernel/vm.o $(FUZZ_OBJ)/pmu/events.o: FUZZ_COV = -fsanitize=fuzzer -fno-sanitize-coverage=trace-cmp
$(FUZZ_OBJ)/lib/fmt.o $(FUZZ_OBJ)/kernel/vm.o $(FUZZ_OBJ)/pmu/events.o: tests/fuzz.mk
# pmu/events.c includes the event table generated from libpfm4 (top Makefile).
$(FUZZ_OBJ)/pmu/events.o: $(BUILD)/gen/knc_events.h $(BUILD)/gen/knl_events.h
$(FUZZ_OBJ)/pmu/events.o: FUZZ_CFLAGS += -I$(BUILD)/gen

# fuzz_mailbox's PMU doubles check through the PMU's own rules (pmu/rules.c).
$(BUILD)/fuzz/fuzz_mailbox: $(FUZZ_OBJ)/tests/fuzz/fuzz_mailbox.o $(FUZZ_OBJ)/mailbox/mailbox_proto.o \
	$(FUZZ_OBJ)/lib/cpuset.o $(FUZZ_OBJ)/pmu/rules.o $(FUZZ_OBJ)/pmu/knc/desc.o
# The loader, on the page-allocator double of the unit tests.
$(BUILD)/fuzz/fuzz_elf: $(FUZZ_OBJ)/tests/fuzz/fuzz_elf.o $(FUZZ_OBJ)/tests/unit/page_double.o \
	$(FUZZ_OBJ)/kernel/elf_check.o $(FUZZ_OBJ)/kernel/elf.o $(FUZZ_OBJ)/kernel/vm.o
# The shell's input side: line editor, line parser, the commands' argument parsers.
$(BUILD)/fuzz/fuzz_shell: $(FUZZ_OBJ)/tests/fuzz/fuzz_shell.o $(FUZZ_OBJ)/shell/line.o $(FUZZ_OBJ)/shell/parse.o \
	$(FUZZ_OBJ)/lib/cpuset.o $(FUZZ_OBJ)/pmu/events.o $(FUZZ_OBJ)/pmu/rules.o $(FUZZ_OBJ)/pmu/knc/desc.o
# pmuctl's mailbox client and ring readers: host code, the C library's names; and the
# card's verdict texts it prints (pmu/events.c and the rules it uses, k_ names).
$(BUILD)/fuzz/fuzz_pmuctl: $(FUZZ_OBJ)/tests/fuzz/fuzz_pmuctl.o $(FUZZ_OBJ)/host/mbox.o $(FUZZ_OBJ)/host/wire.o $(FUZZ_OBJ)/host/ivshmem_peer.o $(FUZZ_OBJ)/host/rings.o \
	$(FUZZ_OBJ)/host/progress.o $(FUZZ_OBJ)/host/clock.o $(FUZZ_OBJ)/pmu/events.o $(FUZZ_OBJ)/pmu/rules.o $(FUZZ_OBJ)/pmu/knc/desc.o \
	$(FUZZ_OBJ)/pmu/arch/desc.o
$(FUZZ_OBJ)/host/%.o $(FUZZ_OBJ)/tests/fuzz/fuzz_pmuctl.o: FUZZ_DEFS =

$(FUZZ_BINS): $(BUILD)/fuzz/%: $(FUZZ_LIB)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $^ -o $@

$(FUZZ_OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_COV) $(FUZZ_DEFS) -MMD -MP -c $< -o $@

-include $(shell find $(FUZZ_OBJ) -name '*.d' 2>/dev/null)

# fuzz_elf's seeds are written by tests/fuzz/elf_seeds.py at build time
# rather than committed: small images in pmuos-cc's layout and the shapes the
# loader must handle, a few hundred bytes each. Images of the newlib programs
# (58 KB stripped) would have the fuzzer spend its mutations on code bytes the
# loader only copies.
FUZZ_SEEDS = $(BUILD)/fuzz-seeds/fuzz_elf.stamp
$(BUILD)/fuzz-seeds/fuzz_elf.stamp: tests/fuzz/elf_seeds.py include/pmuos/syscall.h
	rm -rf $(BUILD)/fuzz-seeds/fuzz_elf
	$(PYTHON) $< $(BUILD)/fuzz-seeds/fuzz_elf
	touch $@

fuzz: $(FUZZ_BINS) $(FUZZ_SEEDS)
.PHONY: fuzz
