# Fuzz targets (libFuzzer, clang from Debian): the card's mailbox request
# decoder, built for the host. `make test` runs each for 10^6 inputs from a
# fixed seed; run one longer by hand, e.g. build/fuzz/fuzz_mailbox -max_total_time=600.

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
