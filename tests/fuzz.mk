# Fuzz targets (libFuzzer, clang from Debian): the card's mailbox request
# decoder, built for the host. `make test` (tests/run.py) runs each for 10^6
# inputs from a fixed seed (-runs=1000000 -seed=1), starting from its seed
# corpus: tests/fuzz/corpus/<target>/ (committed: hand-made seeds and every
# input that once found a bug), when it exists. libFuzzer counts the seeds
# among the 10^6 runs.
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
FUZZ_CFLAGS += -I. -Iinclude
# Kernel files built for the host with k_ names, as in the unit tests.
FUZZ_RENAME = $(HOST_RENAME)
FUZZ_SRC    = kernel/mailbox_proto.c kernel/cpuset.c kernel/fmt.c kernel/lib.c
FUZZ_BINS   = $(BUILD)/fuzz/fuzz_mailbox

$(BUILD)/fuzz/fuzz_mailbox: tests/fuzz/fuzz_mailbox.c $(FUZZ_SRC) include/pmuos/mailbox.h kernel/mailbox.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_RENAME) tests/fuzz/fuzz_mailbox.c $(FUZZ_SRC) -o $@

fuzz: $(FUZZ_BINS)
.PHONY: fuzz
