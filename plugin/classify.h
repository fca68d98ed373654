/*
 * An x86-64 instruction's timing class (plugin/timing.h struct tm_insn)
 * from its bytes, by Capstone's decoder: the registers it reads and
 * writes (explicit and implicit), its address registers, whether it
 * touches memory, its pipe and its cycles. Unit-tested
 * (tests/unit/test_timing.c).
 */
#ifndef PLUGIN_CLASSIFY_H
#define PLUGIN_CLASSIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "plugin/timing.h"

/* Opens the decoder; false if Capstone cannot (then every instruction is one cycle, unpaired). */
bool classify_init(void);
void classify_free(void);
/*
 * The class of the `len` bytes at `pc`; `vpu`: an SSE/AVX instruction
 * (plugin/decode.h vec_bytes), the VPU's stand-in. Returns false for an
 * encoding the decoder does not know (out: one cycle, pairing with nothing).
 */
bool classify(const uint8_t *bytes, size_t len, uint64_t pc, bool vpu, struct tm_insn *out);

#endif
