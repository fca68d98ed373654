/*
 * A program's constructors and destructors (the ELF .preinit_array,
 * .init_array and .fini_array, gathered by user/user.ld): newlib, built
 * without HAVE_INITFINI_ARRAY for this target, runs none, and libgomp's
 * set-up is one. crt0 calls __pmuos_constructors after the main thread's
 * TLS is set up and before main; the destructors run at exit, last first,
 * as the System V ABI (gABI, "Initialization and Termination Functions")
 * orders them. The .preinit_array runs first of all, before the TLS set-up.
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

/* crt0's first call: before any of the runtime's code (no TLS, no malloc yet), as a preinit function expects. */
void __pmuos_preinit(void)
{
	for (fn *f = __preinit_array_start; f < __preinit_array_end; f++)
		(*f)();
}

void __pmuos_constructors(void)
{
	for (fn *f = __init_array_start; f < __init_array_end; f++)
		(*f)();
	atexit(destructors);
}
