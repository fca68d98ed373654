/*
 * Ring-3 program start (docs/design.md §6). The kernel enters _start with RSP at
 * argc, then argv[0..argc-1], NULL, an empty envp and auxv (kernel/task.c).
 */
	.text
	.globl _start
	.type _start, @function         /* a function symbol: call chains name it (pmuctl report) */
_start:
	xorl %ebp, %ebp                 /* outermost frame for backtraces */
	call __pmuos_preinit            /* the program's .preinit_array, before any runtime code (user/start.c) */
	call __pmuos_thread_init        /* the main thread's TLS and TCB (user/pthread.c) */
	call __pmuos_constructors       /* the program's constructors (user/start.c) */
	movq (%rsp), %rdi               /* argc */
	leaq 8(%rsp), %rsi              /* argv */
	call main
	movl %eax, %edi
	call exit                       /* atexit handlers, stdio flush, then _exit */
	hlt                             /* not reached; a #GP here would end the task */
	.size _start, . - _start
