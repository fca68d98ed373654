/*
 * A long task grows the host emulator's software TLB (docs/design.md §11):
 * QEMU's TCG sizes each vCPU's TLB for the pages it used between two of
 * its flushes, and only at a flush (256 entries to start with). A task
 * that walks more pages than that and never leaves Ring 3 (a 4 MiB
 * scattered walk: 1,024 pages) makes no flush, so it runs its whole length
 * with a TLB too small for it, most of its loads on QEMU's slow path. The
 * platform (a PC in QEMU) has a flush of QEMU's TLB that the guest does
 * not see; the kernel calls it a few times early in every task that runs
 * long, on the task's CPU, and each call lets QEMU double a full TLB. A
 * SPFLT region's open cancels the next flush and its close sets it
 * HOST_TLB_GAP_US later: inside a region no flush's interrupt adds kernel
 * accesses at host-timed points, and a region's counts and cycles are the
 * same in every run (docs/design.md §11); a region that opens early in a
 * task runs on QEMU's smaller TLB, slower in host time. A card registers nothing: then this does
 * nothing.
 */
#ifndef KERNEL_HOSTTLB_H
#define KERNEL_HOSTTLB_H

#include <stdbool.h>

/* The platform's flush of the host's TLB (any CPU, interrupts off). At boot, before any task; without it nothing is flushed. */
void host_tlb_register(void (*flush)(void));
/* The calling CPU's task starts: its flushes are armed (HOST_TLB_FIRST_US on, then every HOST_TLB_GAP_US). */
void host_tlb_task_start(void);
/* The calling CPU's task ended: no more flushes for it. */
void host_tlb_task_end(void);
/*
 * The calling CPU opened (true) or closed (false) a SPFLT region
 * (pmu_on_region, interrupts off): the next of its flushes left comes
 * HOST_TLB_GAP_US after this point of its instruction stream.
 */
void host_tlb_region(bool open);

#endif
