/* Branch target buffer; see plugin/bpred.h. */
#include "plugin/bpred.h"

#define BTB_ENTRIES 256
#define BTB_WAYS    4

bool bpred_init(struct bpred *b)
{
	return sa_init(&b->btb, BTB_ENTRIES, BTB_WAYS, true);
}

void bpred_free(struct bpred *b)
{
	sa_free(&b->btb);
}

void bpred_clear(struct bpred *b)
{
	b->epoch++;
	sa_clear(&b->btb);
}

bool bpred_resolve_slow(struct bpred *b, uint64_t pc, bool taken, uint64_t target)
{
	uint64_t predicted_target;
	uint8_t *ctr = sa_lookup(&b->btb, pc, &predicted_target);

	if (!ctr) {
		if (taken) {
			sa_insert(&b->btb, pc, 2, target);
			b->epoch++;
			b->allocs++;
		}
		return false;
	}
	b->epoch++; /* the lookup may have reordered the set; the counter or the target may change */
	bool predicted_taken = *ctr >= 2;
	bool wrong = predicted_taken != taken || (taken && predicted_target != target);
	if (taken) {
		if (*ctr < 3)
			++*ctr;
		*sa_data(&b->btb, ctr) = target;
	} else if (*ctr > 0) {
		--*ctr;
	}
	return wrong;
}
