/* POST marks; see kernel/post.h. */
#include "kernel/post.h"
#include "kernel/console.h"
#include "arch/x86.h"
#include <stdbool.h>

static void (*post_write)(uint32_t code);

void post_register(void (*write)(uint32_t code)) { post_write = write; }

void post_mark(uint32_t code)
{
	bool stop = code == boot_post_stop;

	/* The words before the mark: a host that sees the mark has them (host/boot.c wait_ready). */
	if (stop)
		kprintf("\npmuos: stopped at POST mark '%c%c' (pmuos.stop=)\n", (char)code, (char)(code >> 8));
	if (post_write)
		post_write(code);
	if (!stop)
		return;
	for (;;) {
		cli();
		hlt();
	}
}
