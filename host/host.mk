# pmuctl, the host tool (DESIGN §8): a Linux C program on the card mailbox,
# libpfm4 for event names, elfutils' libelf for symbols. Included by the
# top-level Makefile.

HOST_CFLAGS  = -std=gnu11 -O2 -g -Wall -Wextra
# The mailbox wire format and PMU fields are the card's own headers.
HOST_CFLAGS += -I. -Iinclude
# kernel/cpuset.c (CPU sets) is shared with the card; its libc-named helpers
# get k_ names on the host, as in the unit tests.
HOST_RENAME  = -Dvsnprintf=k_vsnprintf -Dsnprintf=k_snprintf -Dmemcpy=k_memcpy -Dmemmove=k_memmove \
	       -Dmemset=k_memset -Dmemcmp=k_memcmp -Dstrlen=k_strlen -Dstrnlen=k_strnlen \
	       -Dstrcmp=k_strcmp -Dstrncmp=k_strncmp -Dstrlcpy=k_strlcpy -Dcpuset_parse=k_cpuset_parse \
	       -Dcpuset_count=k_cpuset_count -Dparse_u64=k_parse_u64
HOST_SHARED  = kernel/cpuset.c kernel/fmt.c kernel/lib.c
# One file per group of commands (pmuctl.c: the command line and what they share).
HOST_SRC     = $(wildcard host/*.c)
HOST_OBJS    = $(patsubst %.c,$(BUILD)/%.o,$(HOST_SRC)) $(patsubst %.c,$(BUILD)/host/shared/%.o,$(HOST_SHARED))

# -MMD -MP: each object is rebuilt when a header it includes changes.
$(BUILD)/host/%.o: host/%.c
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/host/shared/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) $(HOST_RENAME) -MMD -MP -c $< -o $@

$(BUILD)/pmuctl: $(HOST_OBJS)
	$(CC) $^ -o $@ -lpfm -lelf

-include $(HOST_OBJS:.o=.d)

host: $(BUILD)/pmuctl
.PHONY: host
