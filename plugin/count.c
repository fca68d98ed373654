/* Counting rules for the plugin's events; see plugin/count.h. */
#include "plugin/count.h"
#include "pmu/knc/regs.h"

#include <string.h>

void count_init(struct count_state *s, struct pmushare_thread *sh, count_event_of_t event_of)
{
	memset(s, 0, sizeof(*s));
	s->sh = sh;
	s->event_of = event_of;
	s->seq = UINT32_MAX; /* odd: read the first stable publication */
}

/* Whether counter i is on for events at privilege `user` (327357-001 §1.4.1, §1.4.3.3-4). */
static bool counts_at(uint32_t e, uint32_t global_ctrl, uint64_t spflt, int i, bool user)
{
	if (!(e & EVTSEL_EN) || !(global_ctrl & GLOBAL_CTR(i)))
		return false;
	if (!(e & (user ? EVTSEL_USR : EVTSEL_OS)))
		return false;
	return !(spflt & SPFLT_EN(i)) || (spflt & SPFLT_USER_PREF);
}

static bool per_insn_mode(uint32_t e)
{
	return EVTSEL_CMASK(e) != 0 || (e & EVTSEL_EDGE);
}

/* Recomputes the masks from a stable publication; keeps the old ones while the card writes. */
static void refresh(struct count_state *s)
{
	const volatile struct pmushare_thread *sh = s->sh;
	uint32_t seq = sh->seq;

	if (seq == s->seq || (seq & 1))
		return;
	uint32_t evtsel[PMUSHARE_COUNTERS], global_ctrl = sh->global_ctrl;
	for (int i = 0; i < PMUSHARE_COUNTERS; i++)
		evtsel[i] = sh->evtsel[i];
	uint64_t spflt = sh->spflt;
	if (sh->seq != seq)
		return; /* rewritten meanwhile: the next block reads it again */
	s->seq = seq;
	memset(s->plain, 0, sizeof(s->plain));
	memset(s->per_insn, 0, sizeof(s->per_insn));
	memset(s->enabled, 0, sizeof(s->enabled));
	memset(s->counted, 0, sizeof(s->counted));
	s->programmed = 0;
	for (int i = 0; i < PMUSHARE_COUNTERS; i++) {
		uint32_t e = evtsel[i];
		int ev = s->event_of(EVTSEL_CODE(e));
		/* A change of a counter's event or mode restarts its edge detection. */
		if (e != s->evtsel[i])
			s->prev_cond &= ~(1u << i);
		s->evtsel[i] = e;
		if (ev < 0)
			continue;
		s->programmed |= 1ull << ev;
		for (int user = 0; user < 2; user++) {
			if (!counts_at(e, global_ctrl, spflt, i, user))
				continue;
			s->counted[user] |= 1ull << ev;
			if (per_insn_mode(e)) {
				s->per_insn[user][ev] |= 1u << i;
				s->enabled[user] |= 1u << i;
			} else {
				s->plain[user][ev] |= 1u << i;
			}
		}
	}
}

/* The CMASK/INV comparison for one instruction with k events (327357-001 §1.4.3.3). */
static bool condition(uint32_t e, uint64_t k)
{
	uint32_t cmask = EVTSEL_CMASK(e);

	if (cmask == 0)
		return k >= 1;
	return (k >= cmask) != !!(e & EVTSEL_INV);
}

void count_block_slow(struct count_state *s, bool user, uint32_t n)
{
	/* Close the previous block, instruction by instruction, for the counters that counted during it. */
	for (int i = 0; s->cur && i < PMUSHARE_COUNTERS; i++) {
		uint8_t bit = 1u << i;
		if (!(s->cur & bit))
			continue;
		uint32_t e = s->evtsel[i];
		for (uint32_t j = 0; j < s->n; j++) {
			bool c = condition(e, s->k[i][j]);
			s->sh->delta[i] += (e & EVTSEL_EDGE) ? (c && !(s->prev_cond & bit)) : c;
			s->prev_cond = c ? s->prev_cond | bit : s->prev_cond & ~bit;
			s->k[i][j] = 0;
		}
	}
	refresh(s);
	s->user = user;
	s->n = n;
	s->cur = s->enabled[user];
	s->mask = s->counted[user];
	/* A counter that does not count this block breaks the run its edge detection looks at. */
	s->prev_cond &= s->cur;
}

void count_event_at(struct count_state *s, bool user, int ev, uint64_t n)
{
	if (user == s->user) {
		count_event(s, ev, n, s->n - 1);
		return;
	}
	uint8_t plain = s->plain[user][ev];
	for (int i = 0; i < PMUSHARE_COUNTERS; i++)
		if (plain & (1u << i))
			s->sh->delta[i] += n;
}
