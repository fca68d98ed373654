/*
 * A program's constructors and destructors (the ELF .preinit_array,
 * .init_array and .fini_array, gathered by user/user.ld): newlib, built
 * without HAVE_INITFINI_ARRAY for this target, runs none, and libgomp's
 * set-up is one. crt0 calls __pmuos_constructors after the main thread's
 * TLS is set up and before main; the destructors run at exit, last first,
 * as the System V ABI (gABI, "Initialization and Termination Functions")
 * orders them.
 */
#include <stdlib.h>

typedef void (*fn)(void);
extern fn __preinit_array_start[], __preinit_array_end[], __init_array_start[], __init_array_end[],
	__fini_array_start[], __fini_array_end[];

static void destructors(void)
{
	for (fn *f = __fini_array_end; f > __fini_array_start;)
		(*--f)();
}

void __pmuos_constructors(void)
{
	for (fn *f = __preinit_array_start; f < __preinit_array_end; f++)
		(*f)();
	for (fn *f = __init_array_start; f < __init_array_end; f++)
		(*f)();
	atexit(destructors);
}
