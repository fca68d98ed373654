/*
 * System calls of pmuos Ring-3 tasks (docs/design.md §6): SYSCALL with the number in
 * RAX and arguments in RDI, RSI, RDX; the result comes back in RAX, a
 * negative value being -errno. Shared by the kernel and user/ (newlib glue).
 */
#ifndef PMUOS_SYSCALL_H
#define PMUOS_SYSCALL_H

#define SYS_WRITE   1 /* (fd 1 or 2, buf, len) -> bytes written */
#define SYS_EXIT    2 /* (status) -> does not return */
#define SYS_SBRK    3 /* (increment bytes) -> previous break, or -ENOMEM */
#define SYS_GETCPU  4 /* () -> logical CPU number */
#define SYS_RANK    5 /* () -> rank | nranks << 32 (SPMD launch) */
#define SYS_TSC_HZ  6 /* () -> TSC ticks per second */

/* User virtual memory (PML4 slot 1): programs are linked inside it. */
#define USER_BASE       0x0000008000000000ULL
#define USER_END        0x0000010000000000ULL
#define USER_TEXT       0x0000008000400000ULL /* pmuos-cc links programs here */
#define USER_STACK_TOP  0x000000fffffff000ULL
#define USER_STACK_SIZE (1ULL << 20)

#define PMUOS_EINVAL 22
#define PMUOS_EFAULT 14
#define PMUOS_ENOMEM 12
#define PMUOS_ENOSYS 38
#define PMUOS_EBADF  9

#endif
