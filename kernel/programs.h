/* The programs built into the kernel image (generated: $(BUILD)/gen/programs.S, user/user.mk). */
#ifndef KERNEL_PROGRAMS_H
#define KERNEL_PROGRAMS_H

#include <stdint.h>

struct user_program {
	const char *name;
	const uint8_t *start, *end; /* the ELF image */
	uint64_t qemu_sse;          /* 1: built with pmuos-cc --qemu-sse (SSE code, QEMU only; user/user.mk SSE_PROGRAMS) */
};

extern const struct user_program user_programs[];
extern const uint64_t user_program_count;

/*
 * The program called `name`: one built into the kernel, or a file the boot
 * loader brought (`make run PROGRAMS=...`, named by its file name without a
 * directory and without ".elf"). NULL if there is none.
 */
const struct user_program *program_find(const char *name);
/* Calls fn for every program, built-in ones first. */
void program_for_each(void (*fn)(const struct user_program *p, void *arg), void *arg);

#endif
