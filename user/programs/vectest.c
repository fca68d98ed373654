/*
 * vectest: memtest (user/programs/memtest.c) with its `vec` mode, which runs
 * ms_vec, SSE2 (user/measured_vec.c), in an SPFLT region: the VPU stand-in
 * the plugin's VPU events count. QEMU-only (user/user.mk SSE_PROGRAMS): a
 * KNC core has no SSE.
 */
#define MEMTEST_VEC
#include "memtest.c"
