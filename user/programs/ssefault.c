/*
 * ssefault: fault (user/programs/fault.c) whose fpu-dirty and fpu-check
 * kinds also write and read every XMM register and MXCSR, to show that
 * QEMU's SSE state does not pass from task to task. QEMU-only (user/user.mk
 * SSE_PROGRAMS): a KNC core has no SSE.
 */
#define FAULT_SSE
#include "fault.c"
