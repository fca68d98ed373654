# The QEMU TCG plugin build/pmuos-pmu.so (plugin/plugin.c): counts KNC
# events from the guest's execution for the card's PMU model. Included by the
# top Makefile (BUILD, CC come from there); scripts/qemu.sh loads it.

PLUGIN_SO   := $(BUILD)/pmuos-pmu.so
PLUGIN_SRC  := $(wildcard plugin/*.c)
PLUGIN_OBJ  := $(patsubst %.c,$(BUILD)/plugin/%.o,$(PLUGIN_SRC))

# Host C, optimised: the callbacks run for every guest instruction and access.
PLUGIN_CFLAGS  = -std=gnu11 -O2 -g -Wall -Wextra
# Link-time optimisation: the cache model's calls across files (memsys.c into
# sacache.c, exec.c into both) are inlined where they pay (make bench:
# about 2 % off a counting run of matmul).
PLUGIN_CFLAGS += -flto
# QEMU's callback types have parameters a callback may not need.
PLUGIN_CFLAGS += -Wno-unused-parameter
# Position-independent code for a shared object QEMU dlopen()s.
PLUGIN_CFLAGS += -fPIC
# Calls into QEMU's API (two per memory access) through the GOT, not a PLT stub's extra jump.
PLUGIN_CFLAGS += -fno-plt
# Only qemu_plugin_install and qemu_plugin_version are exported (QEMU_PLUGIN_EXPORT);
# everything else stays internal (qemu-plugin.h recommends it).
PLUGIN_CFLAGS += -fvisibility=hidden
# Headers by path from the top, and the event table generated from libpfm4.
PLUGIN_CFLAGS += -I. -Iinclude -I$(BUILD)/gen
# A shared object whose undefined qemu_plugin_* symbols QEMU's binary provides
# when it loads the plugin (Debian ships no library to link them from).
PLUGIN_LDFLAGS = -shared
# The link compiles the LTO objects: the same optimisation level.
PLUGIN_LDFLAGS += -O2 -flto
# pthread_self(), for the check that QEMU runs every vCPU in one thread;
# Capstone (Debian's libcapstone-dev), the timing model's instruction decoder (plugin/classify.c).
PLUGIN_LDLIBS  = -lpthread -lcapstone

$(BUILD)/plugin/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(PLUGIN_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/plugin/plugin/exec.o: $(BUILD)/gen/knc_events.h

$(PLUGIN_SO): $(PLUGIN_OBJ)
	$(CC) $(PLUGIN_LDFLAGS) $^ -o $@ $(PLUGIN_LDLIBS)

plugin: $(PLUGIN_SO)
.PHONY: plugin

-include $(PLUGIN_OBJ:.o=.d)
