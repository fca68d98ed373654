/*
 * Ring-3 address spaces: each task has its own PML4. Slot 0 (the kernel's
 * identity map, supervisor-only) is shared; slot 1 (USER_BASE..USER_END,
 * include/pmuos/syscall.h) holds the task's pages, mapped with 4 KiB pages.
 */
#ifndef KERNEL_VM_H
#define KERNEL_VM_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>

#define VM_WRITE 1
#define VM_EXEC  2

/* A new address space (physical address of its PML4), or 0 when out of memory. */
uint64_t vm_create(void);
/* Frees every user page and page table of `as`, then the PML4. */
void vm_destroy(uint64_t as);
/*
 * Maps zeroed pages over [va, va+len) in the user region (page-aligned
 * outward); pages already mapped are kept. Returns false when out of memory
 * or outside the user region.
 */
bool vm_map(uint64_t as, uint64_t va, uint64_t len, int flags);
/* Kernel pointer to the byte at user address va, or NULL if unmapped. */
void *vm_translate(uint64_t as, uint64_t va);
/* Whether [va, va+len) is mapped user memory (writable if `write`). */
bool vm_user_range_ok(uint64_t as, uint64_t va, uint64_t len, bool write);
/* Copies len bytes to user address va (which must be mapped). */
bool vm_copy_to(uint64_t as, uint64_t va, const void *src, size_t len);

#endif
