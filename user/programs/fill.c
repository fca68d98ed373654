/*
 * fill: takes MIB MiB with malloc (the kernel zeroes each page as it maps
 * it), writes a word in every 64-byte line (its own value per line) and
 * reads them back: a few of these hold most of a card's memory.
 *   run fill [MIB] [on CPUS]   (default 64)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	long mib = argc > 1 ? atol(argv[1]) : 64;
	size_t bytes = (size_t)mib << 20;

	if (mib <= 0) {
		fprintf(stderr, "fill: usage: fill [MIB], MIB positive\n");
		return 2;
	}
	uint8_t *p = malloc(bytes);
	if (!p) {
		printf("fill: no %ld MiB to take (malloc failed)\n", mib);
		return 1;
	}
	for (size_t i = 0; i < bytes; i += 64)
		*(uint64_t *)(p + i) = i ^ 0xa5a5a5a5a5a5a5a5ULL;
	for (size_t i = 0; i < bytes; i += 64)
		if (*(uint64_t *)(p + i) != (i ^ 0xa5a5a5a5a5a5a5a5ULL)) {
			printf("fill: byte %zu of %ld MiB did not keep what was written\n", i, mib);
			return 1;
		}
	printf("fill: %ld MiB written and read back\n", mib);
	return 0;
}
