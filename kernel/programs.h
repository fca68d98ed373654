/* The programs built into the kernel image (generated: $(BUILD)/gen/programs.S, user/user.mk). */
#ifndef KERNEL_PROGRAMS_H
#define KERNEL_PROGRAMS_H

#include <stdint.h>

struct user_program {
	const char *name;
	const uint8_t *start, *end; /* the ELF image */
};

extern const struct user_program user_programs[];
extern const uint64_t user_program_count;

#endif
