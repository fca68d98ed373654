/*
 * Host unit tests (tests/unit.mk, -iquote tests/unit/shadow): the kernel's
 * kernel/percpu.h with this_cpu() turned into an ordinary function the test
 * defines, instead of the %gs load. struct percpu is the real one.
 */
#ifndef UNIT_SHADOW_KERNEL_PERCPU_H
#define UNIT_SHADOW_KERNEL_PERCPU_H

#define this_cpu kernel_this_cpu_gs /* the real inline, renamed and unused */
#include_next "kernel/percpu.h"
#undef this_cpu

struct percpu *this_cpu(void);

#endif
