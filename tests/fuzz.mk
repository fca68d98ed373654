# Fuzz targets (libFuzzer, clang from Debian): the card's mailbox request
# decoder, built for the host, and pmuctl's reading of a (hostile) card.
# `make test` runs each for 10^6 inputs from a fixed seed; run one longer by
# hand, e.g. build/fuzz/fuzz_mailbox -max_total_time=600. Seed inputs, where
# a target has them: tests/fuzz/corpus/<target>/ (libFuzzer adds the new
# inputs it finds to the first directory it is given: give it a scratch
# one first, e.g. build/fuzz/fuzz_pmuctl -runs=1000000 /tmp/new tests/fuzz/corpus/fuzz_pmuctl).

FUZZ_CC     = clang
# libFuzzer's driver, and sanitizers that turn a bad access into a crash.
FUZZ_CFLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS += -I. -Iinclude
# Kernel files built for the host with k_ names, as in the unit tests.
FUZZ_RENAME = $(HOST_RENAME)
FUZZ_SRC    = kernel/mailbox_proto.c kernel/cpuset.c kernel/fmt.c kernel/lib.c
FUZZ_BINS   = $(BUILD)/fuzz/fuzz_mailbox $(BUILD)/fuzz/fuzz_pmuctl
# pmuctl's mailbox client and ring readers: host code, libc as it is.
FUZZ_HOST_SRC = host/mbox.c host/rings.c host/progress.c
FUZZ_HOST_HDR = host/mbox.h host/rings.h host/progress.h include/pmuos/mailbox.h kernel/cpuset.h

$(BUILD)/fuzz/fuzz_mailbox: tests/fuzz/fuzz_mailbox.c $(FUZZ_SRC) include/pmuos/mailbox.h kernel/mailbox.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_RENAME) tests/fuzz/fuzz_mailbox.c $(FUZZ_SRC) -o $@

$(BUILD)/fuzz/fuzz_pmuctl: tests/fuzz/fuzz_pmuctl.c $(FUZZ_HOST_SRC) $(FUZZ_HOST_HDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) tests/fuzz/fuzz_pmuctl.c $(FUZZ_HOST_SRC) -o $@

fuzz: $(FUZZ_BINS)
.PHONY: fuzz
