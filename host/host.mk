# pmuctl, the host tool (docs/design.md §8): a Linux C program on the card mailbox,
# libpfm4 for event names, elfutils' libelf for symbols and libdw for source
# lines, json-c for --json, libedit for the console's line editing. Included
# by the top-level Makefile.

HOST_CFLAGS  = -std=gnu11 -O2 -g -Wall -Wextra
# The command table's options give a range (lo, hi) only where they take a number (host/cli.h).
HOST_CFLAGS += -Wno-missing-field-initializers
# The mailbox wire format and PMU fields are the card's own headers.
HOST_CFLAGS += -I. -Iinclude
# `pmuctl --version` and the man page say the project's version.
HOST_CFLAGS += -DPMUOS_VERSION='"$(VERSION)"'
# lib/ (CPU sets and what they call) is shared with the card, with k_
# names on the host (HOST_RENAME, lib/host.mk); so is pmu/events.c, whose
# pmu_result_text gives a card's verdict the shell's words (its event
# table is generated from libpfm4, as the names pmuctl takes), with the
# rules it checks raw events by (pmu/rules.c; also where the card puts
# stat's events: which counter a region's RDPMC delta is), and the PMUs'
# descriptions the rules read (the card's: host/mbox.h card_pmu).
HOST_SHARED  = $(LIB_SRC) pmu/events.c pmu/rules.c pmu/knc/desc.c pmu/arch/desc.c
# The commands, one file each (host/builtin/), and what they share (host/: pmuctl.c the command line).
HOST_SRC     = $(wildcard host/*.c host/builtin/*.c)
# Host code that lives beside the card's: the bzImage checks, the KNC register decoders, the metric table.
HOST_BESIDE  = boot/linux/bzimage_check.c platform/knc/sbox.c pmu/metrics.c
HOST_OBJS    = $(patsubst %.c,$(BUILD)/%.o,$(HOST_SRC)) $(patsubst %.c,$(BUILD)/host/shared/%.o,$(HOST_SHARED)) \
	       $(patsubst %.c,$(BUILD)/host/beside/%.o,$(HOST_BESIDE))

# -MMD -MP: each object is rebuilt when a header it includes changes.
# pmuctl's own files keep the C library's names and call lib/'s (parse_u64 & co.) by their k_ names.
$(BUILD)/host/%.o: host/%.c
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) $(HOST_RENAME_LIB) -MMD -MP -c $< -o $@

$(BUILD)/host/shared/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) $(HOST_RENAME) -MMD -MP -c $< -o $@

$(BUILD)/host/shared/pmu/events.o: $(BUILD)/gen/knc_events.h $(BUILD)/gen/knl_events.h
$(BUILD)/host/shared/pmu/events.o: HOST_CFLAGS += -I$(BUILD)/gen

$(BUILD)/host/beside/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -MMD -MP -c $< -o $@

# libpfm4 linked statically into a non-PIE pmuctl: as a shared library its
# event tables carry ~41,000 relative relocations that the dynamic loader
# applies at every start (~700 KB of pages written, ~280 page faults, most of
# `pmuctl info`'s start-up), whether or not a command uses event names. Linked
# this way they are resolved at link time and a table page is touched only by
# a command that reads it (bench/startup.py measures it).
HOST_LDFLAGS = -no-pie
HOST_LIBS    = -Wl,-Bstatic -lpfm -Wl,-Bdynamic -ldw -lelf -ljson-c -ledit -lm

# host/host.mk too: a change of the link flags relinks.
$(BUILD)/pmuctl: $(HOST_OBJS) host/host.mk
	$(CC) $(HOST_LDFLAGS) $(HOST_OBJS) -o $@ $(HOST_LIBS)

-include $(HOST_OBJS:.o=.d)

# The man page and the bash completion come from pmuctl's command table (host/pmuctl.c).
$(BUILD)/pmuctl.1: $(BUILD)/pmuctl
	$< help --man > $@.tmp && mv $@.tmp $@
$(BUILD)/pmuctl.bash: $(BUILD)/pmuctl
	$< help --bash-completion > $@.tmp && mv $@.tmp $@

host: $(BUILD)/pmuctl $(BUILD)/pmuctl.1 $(BUILD)/pmuctl.bash

# make install [PREFIX=/usr/local] [DESTDIR=]: pmuctl, its man page and its bash completion.
PREFIX ?= /usr/local
install: host
	install -D -m 755 $(BUILD)/pmuctl $(DESTDIR)$(PREFIX)/bin/pmuctl
	install -D -m 644 $(BUILD)/pmuctl.1 $(DESTDIR)$(PREFIX)/share/man/man1/pmuctl.1
	install -D -m 644 $(BUILD)/pmuctl.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/pmuctl
.PHONY: host install
