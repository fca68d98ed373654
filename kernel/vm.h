/*
 * Ring-3 address spaces: each task has its own PML4. Slot 0 (the kernel's
 * identity map, supervisor-only) is shared; slot 1 (USER_BASE..USER_END,
 * include/pmuos/syscall.h) holds the task's pages, mapped with 4 KiB pages.
 * Each address space counts the memory it holds (its PML4, page tables and
 * user pages) and holds no more than the limit it was created with.
 *
 * A shared text is an address space that only holds pages for others to map
 * read-only (vm_share): the one copy of a program's read-only segments that
 * every task of a launch maps (docs/design.md §6). It is freed when the last
 * of its holder (vm_text_put) and the address spaces mapping it lets go.
 */
#ifndef KERNEL_VM_H
#define KERNEL_VM_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>

#define VM_WRITE 1
#define VM_EXEC  2

/* vm_map's results. */
enum vm_status {
	VM_OK,
	VM_ERANGE, /* not inside the user region */
	VM_ENOMEM, /* the card has too few free pages */
	VM_ELIMIT, /* the address space would hold more than its limit */
};

/*
 * A new address space that may hold at most `limit` bytes (rounded down to
 * 4 KiB pages), its PML4 included. Returns the physical address of its PML4
 * (CR3), or 0 when out of memory.
 */
uint64_t vm_create(uint64_t limit);
/* Frees every user page of its own and page table of `as`, then the PML4; drops its shared text's reference. */
void vm_destroy(uint64_t as);
/* Bytes `as` holds (PML4, page tables, user pages), and its limit (bytes, a multiple of 4 KiB). */
uint64_t vm_size(uint64_t as);
uint64_t vm_limit(uint64_t as);
/*
 * Maps zeroed pages over every page [va, va+len) touches in the user region;
 * pages already mapped are kept, with the union of their rights and `flags`.
 * All or nothing: returns VM_OK, or VM_ERANGE, VM_ENOMEM or VM_ELIMIT with
 * the address space as it was (nothing of this call left mapped or taken).
 * len 0 maps nothing.
 */
int vm_map(uint64_t as, uint64_t va, uint64_t len, int flags);
/*
 * Bytes vm_map(as, va, len, ...) would add: pages not yet mapped and the
 * page tables they need; 0 outside the user region.
 */
uint64_t vm_map_cost(uint64_t as, uint64_t va, uint64_t len);
/*
 * Maps the pages shared text `text` maps over every page [va, va+len)
 * touches into `as`, read-only, with the text's rights: the pages stay the
 * text's (vm_destroy(as) leaves them) and `as` holds a reference to the text
 * until it is destroyed. They count against as's limit as its own pages do.
 * All or nothing: VM_OK, or VM_ERANGE (outside the user region, a page the
 * text does not map or maps writable, or `as` already maps another text),
 * VM_ENOMEM or VM_ELIMIT (page tables) with `as` as it was.
 */
int vm_share(uint64_t as, uint64_t text, uint64_t va, uint64_t len);
/*
 * A new shared text (vm_map fills it, read-only) holding at most `limit`
 * bytes, with one reference, its holder's; 0 when out of memory.
 */
uint64_t vm_text_create(uint64_t limit);
/* Drops a reference to shared text `text`; the last one frees it (vm_destroy). Any CPU. */
void vm_text_put(uint64_t text);
/* Kernel pointer to the byte at user address va, or NULL if unmapped. */
void *vm_translate(uint64_t as, uint64_t va);
/* Whether [va, va+len) is mapped user memory (writable if `write`). */
bool vm_user_range_ok(uint64_t as, uint64_t va, uint64_t len, bool write);
/* Copies len bytes to user address va (which must be mapped). */
bool vm_copy_to(uint64_t as, uint64_t va, const void *src, size_t len);
/* Copies len bytes from user address va (which must be mapped) to dst. */
bool vm_copy_from(uint64_t as, void *dst, uint64_t va, size_t len);

#endif
