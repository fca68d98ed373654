/*
 * Functions whose events the plugin's tests measure: compiled once into
 * build/user/measured.o (by pmuos-cc, card code, no library calls, every
 * function aligned to a cache line) and linked both into the pmuos program
 * `memtest` (user/programs/memtest.c) and into its Linux twin, which
 * valgrind measures, so both run the same object code. ms_vec, SSE2, is
 * apart in build/user/measured_vec.o (QEMU only): linked into `vectest`
 * (memtest with `vec`) and the twin. Buffers hold 8-byte words; byte counts
 * and strides are multiples of 8.
 */
#ifndef USER_MEASURED_H
#define USER_MEASURED_H

#include <stddef.h>
#include <stdint.h>

/* Writes words 0..bytes/8-1 of buf (seed + index). Returns the last value. */
uint64_t ms_fill(uint64_t *buf, size_t bytes, uint64_t seed);
/* `passes` times, reads the word at every `stride` bytes of buf[0..bytes). Returns their sum. */
uint64_t ms_walk(const uint64_t *buf, size_t bytes, size_t stride, unsigned passes);
/* `passes` times, writes the word at every `stride` bytes of buf[0..bytes). Returns 0. */
uint64_t ms_store(uint64_t *buf, size_t bytes, size_t stride, unsigned passes);
/* Reads `count` words at pseudo-random offsets of buf[0..bytes) (bytes a power of two). Returns their sum. */
uint64_t ms_random(const uint64_t *buf, size_t bytes, size_t count, uint64_t seed);
/* Integer loads and stores: for i < n, a[n + i] = a[i] * 3 + a[i + 1] + sum. Returns the sum. */
uint64_t ms_ops(uint64_t *a, size_t n);
/*
 * c = a * b over n x n matrices of 64-bit integers, row by row: matmul's
 * loops (user/programs/matmul.c) on integers, since card code's doubles are
 * soft-float library calls. Returns c[0].
 */
uint64_t ms_matmul(const uint64_t *a, const uint64_t *b, uint64_t *c, size_t n);
/* n read-modify-write instructions (ADD to memory), each followed by a load of the same word. */
uint64_t ms_rmw(uint64_t *a, size_t n);
/*
 * n iterations (n even, > 0) of: TEST; JZ over a NOP when the counter is even;
 * DEC; JNZ back: 2n branches, the JZ alternating taken / not taken. Returns n.
 */
uint64_t ms_branches(uint64_t n);
/* 16384 NOPs and a RET, from a 4 KiB boundary: 4 pages, 257 lines of code. Returns 0. */
uint64_t ms_nops(void);
/*
 * n times (n > 0) a[i] += b[i] on pairs of doubles with SSE2: MOVAPD load,
 * ADDPD from memory, MOVAPD store. QEMU only (user/measured_vec.c).
 */
uint64_t ms_vec(double *a, const double *b, uint64_t n);

#endif
