/*
 * smc: code that rewrites itself, as a JIT does. Each round writes a new
 * immediate into the first instruction of a 400-instruction block, runs the
 * block and checks what it returns, so every round runs code never seen
 * before (QEMU translates it again; its plugin makes a new block record).
 * The block lives in a writable and executable section: the program asks for
 * that with -Wl,-z,execstack (user/user.mk; the kernel refuses W+X pages
 * otherwise, kernel/elf.h).
 *   run smc [ROUNDS]   (default 1000)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define ADDS 398 /* the block: mov $imm, %eax; ADDS x add $1, %eax; ret */

/* A page of its own, so that the program's other data does not share it. */
__asm__(".section .smc,\"awx\",@progbits\n"
	".balign 4096\n"
	"smc_block:\n"
	"	movl $0, %eax\n" /* B8 imm32: the immediate is at smc_block + 1 */
	"	.rept 398\n"
	"	addl $1, %eax\n"
	"	.endr\n"
	"	ret\n"
	".balign 4096\n"
	".previous\n");
extern uint8_t smc_block[];

int main(int argc, char **argv)
{
	unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000;
	volatile uint32_t *imm = (volatile uint32_t *)(smc_block + 1);
	uint32_t (*block)(void) = (uint32_t (*)(void))(uintptr_t)smc_block;

	for (unsigned long i = 0; i < rounds; i++) {
		*imm = (uint32_t)i;
		uint32_t r = block();
		if (r != (uint32_t)(i + ADDS)) {
			printf("smc: round %lu: the block returned %u, not %lu: the old code ran\n", i, r, i + ADDS);
			return 1;
		}
	}
	printf("smc: %lu rounds, each a new block of %d instructions\n", rounds, ADDS + 2);
	return 0;
}
