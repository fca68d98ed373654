# lib/ on the host. The freestanding libraries (fmt.c, lib.c, cpuset.c) are
# built for the card and also for the host: pmuctl (host/host.mk), the unit
# tests (tests/unit.mk) and the fuzz targets (tests/fuzz.mk) link them.
# This is the one list of the names they get there. Included by the top-level
# Makefile before those fragments.

LIB_SRC = lib/fmt.c lib/lib.c lib/cpuset.c

# lib/'s functions named like the C library's: a card-side file compiled for
# the host gets k_ names for them, so that it calls (and lib/ defines) the
# card's versions, not the host C library's.
HOST_RENAME_LIBC = -Dvsnprintf=k_vsnprintf -Dsnprintf=k_snprintf \
		   -Dmemcpy=k_memcpy -Dmemmove=k_memmove -Dmemset=k_memset -Dmemcmp=k_memcmp \
		   -Dstrlen=k_strlen -Dstrnlen=k_strnlen -Dstrcmp=k_strcmp -Dstrncmp=k_strncmp \
		   -Dstrlcpy=k_strlcpy
# lib/'s own names, k_ too: host code (pmuctl, tests) that calls them gets
# these alone (it keeps the C library's memcpy & co.) and links to the same
# k_ symbols.
HOST_RENAME_LIB  = -Dcpuset_parse=k_cpuset_parse -Dcpuset_count=k_cpuset_count -Dparse_u64=k_parse_u64 -Dcmdline_find=k_cmdline_find
# Every card-side file compiled for the host.
HOST_RENAME      = $(HOST_RENAME_LIBC) $(HOST_RENAME_LIB)
