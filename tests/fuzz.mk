# Fuzz targets (libFuzzer, clang from Debian), built for the host: the card's
# mailbox request decoder (fuzz_mailbox) and the program loader (fuzz_elf). `make test` (tests/run.py) runs each for 10^6
# inputs from a fixed seed (-runs=1000000 -seed=1), starting from its seed
# corpus: tests/fuzz/corpus/<target>/ (committed: hand-made seeds and every
# input that once found a bug) and $(BUILD)/fuzz-seeds/<target>/ (generated
# below), when they exist. libFuzzer counts the seeds among the 10^6 runs.
# Time bounds, so that no target can hang a run: one input may take 10 s
# (-timeout: a longer one is reported as a hang), a target 300 s in all
# (-max_total_time: stopping short of 10^6 inputs fails the test), and the
# process is killed at 360 s. New inputs and crash files go to
# $(BUILD)/fuzz-run/<target>/, never into the tree. By hand (libFuzzer adds
# what it finds to the first directory: give it an empty one):
#   build/fuzz/fuzz_mailbox -runs=1000000 -seed=1 NEW_DIR tests/fuzz/corpus/fuzz_mailbox
#   build/fuzz/fuzz_mailbox -max_total_time=600 NEW_DIR tests/fuzz/corpus/fuzz_mailbox

FUZZ_CC     = clang
# libFuzzer's driver, and sanitizers that turn a bad access into a crash.
FUZZ_CFLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
# Headers by path from the top, as in the kernel build.
FUZZ_CFLAGS += -I. -Iinclude
# Each target links its own file, the kernel files it covers and test
# doubles, compiled one by one into $(BUILD)/fuzz/obj/ (-MMD: header
# dependencies). Kernel files get k_ names for what clashes with the C
# library, as in the unit tests, and link fmt.c and lib.c for vsnprintf,
# memcpy & co.; test files keep the C library's (uninstrumented, fast) names.
FUZZ_OBJ    = $(BUILD)/fuzz/obj
FUZZ_LIB    = $(FUZZ_OBJ)/kernel/fmt.o $(FUZZ_OBJ)/kernel/lib.o
FUZZ_BINS   = $(BUILD)/fuzz/fuzz_mailbox $(BUILD)/fuzz/fuzz_elf
FUZZ_DEFS   = $(HOST_RENAME)
$(FUZZ_OBJ)/tests/%.o: FUZZ_DEFS =
# fuzz_mailbox.c calls the kernel's cpuset_count (k_cpuset_count on the host).
$(FUZZ_OBJ)/tests/fuzz/fuzz_mailbox.o: FUZZ_DEFS = $(HOST_RENAME)

$(BUILD)/fuzz/fuzz_mailbox: $(FUZZ_OBJ)/tests/fuzz/fuzz_mailbox.o $(FUZZ_OBJ)/kernel/mailbox_proto.o \
	$(FUZZ_OBJ)/kernel/cpuset.o
# The loader, on the page-allocator double of the unit tests.
$(BUILD)/fuzz/fuzz_elf: $(FUZZ_OBJ)/tests/fuzz/fuzz_elf.o $(FUZZ_OBJ)/tests/unit/page_double.o \
	$(FUZZ_OBJ)/kernel/elf_check.o $(FUZZ_OBJ)/kernel/elf.o $(FUZZ_OBJ)/kernel/vm.o

$(FUZZ_BINS): $(BUILD)/fuzz/%: $(FUZZ_LIB)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $^ -o $@

$(FUZZ_OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_DEFS) -MMD -MP -c $< -o $@

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
