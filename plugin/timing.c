/* The timing model's schedule; see plugin/timing.h. */
#include <stddef.h>
#include <string.h>

#include "plugin/timing.h"

#define TM_RSP (1u << 4)

bool tm_can_pair(const struct tm_insn *a, const struct tm_insn *b)
{
	if (a->pipe == TM_NP || a->pipe == TM_PV || b->pipe == TM_NP || b->pipe == TM_PU)
		return false;
	if (a->exec != 1 || b->exec != 1 || a->micro || b->micro)
		return false;
	uint32_t raw = a->wr, waw = a->wr & ~TM_FLAGS;
	if (b->branch)
		raw &= ~TM_FLAGS; /* a Jcc in the V pipe tests the flags its U partner sets */
	if (a->agen & b->agen & TM_RSP) { /* PUSH/POP pairs: the stack pointer is adjusted for each */
		raw &= ~TM_RSP;
		waw &= ~TM_RSP;
	}
	return !((b->rd | b->agen) & raw) && !(b->wr & waw);
}

/* The latest of ready[r] + extra over the registers in `regs`, at least `t`. */
static int64_t wait_for(const int64_t *ready, uint32_t regs, int64_t extra, int64_t t)
{
	while (regs) {
		int r = __builtin_ctz(regs);
		regs &= regs - 1;
		if (ready[r] + extra > t)
			t = ready[r] + extra;
	}
	return t;
}

static void set_ready(int64_t *ready, uint32_t regs, int64_t at)
{
	while (regs) {
		int r = __builtin_ctz(regs);
		regs &= regs - 1;
		ready[r] = at;
	}
}

void tm_run(const struct tm_insn *in, uint32_t n, unsigned gap, const struct tm_carry *entry, struct tm_counts *out,
	    struct tm_carry *exit)
{
	int64_t ready[17], next = 0, last_t = 0;
	bool open = false;
	const struct tm_insn *last = NULL;

	*out = (struct tm_counts){ 0 };
	for (int r = 0; r < 17; r++)
		ready[r] = -TM_AGI; /* a fresh start: every register long ready, for an address too */
	if (entry) {
		last_t = -(int64_t)entry->last_back;
		for (int r = 0; r < 17; r++)
			ready[r] = last_t - TM_AGI + entry->ready[r];
		open = entry->open;
		last = &entry->last;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct tm_insn *x = &in[i];
		/* what the partner writes that x reads is exempt (can_pair: flags for a Jcc, RSP for stack pairs) */
		if (open && tm_can_pair(last, x) && wait_for(ready, x->rd & ~last->wr, 0, last_t) == last_t &&
		    wait_for(ready, x->agen & ~last->wr, TM_AGI, last_t) == last_t) {
			set_ready(ready, x->wr, last_t + x->lat); /* joins the group in the V pipe */
			out->vpipe++;
			out->both_mem += last->mem && x->mem;
			open = false;
			continue;
		}
		int64_t data = wait_for(ready, x->rd, 0, next), addr = wait_for(ready, x->agen, TM_AGI, next);
		int64_t t = data > addr ? data : addr;
		out->agi += addr > data;
		set_ready(ready, x->wr, t + x->lat);
		next = t + (x->exec > gap ? x->exec : gap);
		out->groups++;
		out->exec += x->exec;
		if (x->micro)
			out->micro += x->exec;
		open = (x->pipe == TM_UV || x->pipe == TM_PU) && x->exec == 1 && !x->micro;
		last = x;
		last_t = t;
	}
	out->cycles = (uint32_t)next;
	if (!exit)
		return;
	for (int r = 0; r < 17; r++)
		exit->ready[r] = ready[r] > last_t - TM_AGI ? (uint16_t)(ready[r] - (last_t - TM_AGI)) : 0;
	exit->open = open;
	exit->last_back = (uint16_t)(next - last_t);
	if (last)
		exit->last = *last;
}

static bool insn_same(const struct tm_insn *a, const struct tm_insn *b)
{
	return a->pipe == b->pipe && a->lat == b->lat && a->exec == b->exec && a->micro == b->micro &&
	       a->mem == b->mem && a->branch == b->branch && a->rd == b->rd && a->wr == b->wr && a->agen == b->agen;
}

/*
 * tm_run reads an entry's last instruction only while its group is open;
 * closed, the exit's last is the run's own (its first instruction starts a
 * group), so it cannot differ either.
 */
bool tm_carry_same(const struct tm_carry *a, const struct tm_carry *b)
{
	return !memcmp(a->ready, b->ready, sizeof(a->ready)) && a->last_back == b->last_back && a->open == b->open &&
	       (!a->open || insn_same(&a->last, &b->last));
}

void tm_schedule(const struct tm_insn *in, uint32_t n, struct tm_block *out, struct tm_carry *exit)
{
	for (unsigned g = 0; g < TM_THREADS - 1; g++)
		tm_run(in, n, TM_ISSUE_GAP + g, NULL, &out->at[g], exit ? &exit[g] : NULL);
}
