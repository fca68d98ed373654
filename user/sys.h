/* SYSCALL with up to three arguments (include/pmuos/syscall.h): for the runtime's own files. */
#ifndef USER_SYS_H
#define USER_SYS_H

static inline long sys3(long n, long a, long b, long c)
{
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return r;
}

#endif
